// Package mcp is the project's Model Context Protocol implementation: the
// client that connects the servers of the settings files, and the server
// behind `agent mcp serve` (docs/reference/mcp.md).
//
// The client side: the connection manager (manager.go) decides which
// servers connect and when, keeps their approval states and fingerprints
// (approval.go), names their tools for the model (naming.go), keeps the
// connected servers' resources, templates and prompts (manager_content.go),
// runs header helpers (helper.go) and produces the status lines of `agent
// mcp list` and /mcp (status.go); client*.go and transport*.go speak the
// protocol, client_server.go answers what a server asks (roots,
// elicitation through a callback, sampling refused) and refreshes the lists
// a server announces changed, coalesced. The server side (server*.go)
// offers one session's tools and agent_submit over stdio, over loopback
// HTTP with a bearer token, or as an OAuth resource server, through the
// small ServeTarget interface the caller implements; its SSE answers in a
// session are resumable (server_resume.go).
//
// The client and the server speak the revisions 2024-11-05, 2025-03-26,
// 2025-06-18, 2025-11-25 and the stateless 2026-07-28
// (docs/reference/mcp.md, "Protocol revisions"), negotiating the newest the
// peer supports: the client probes with server/discover (2026-07-28
// "Versioning and Compatibility") and falls back to the initialize
// handshake for servers of the earlier, session-based revisions. Features a
// revision lacks are not used with a peer that negotiated it: no
// MCP-Protocol-Version header before 2025-06-18, no tool annotations or
// progress messages before 2025-03-26, no titles before 2025-06-18;
// JSON-RPC batches are accepted only from a peer of 2025-03-26, the one
// revision that has them (and requires a receiver to accept them), and
// refused otherwise. Two transports carry the messages: stdio (a child
// process, never a shell) and Streamable HTTP (JSON and SSE responses,
// sessions, the GET stream, resumption with Last-Event-ID after the
// server's retry time).
//
// Wire messages and framing come from mcp/jsonrpc, sign-in and stored
// credentials from mcp/oauth, token verification for remote serving from
// internal/jose. Imports: the standard library, mcp/jsonrpc, mcp/oauth,
// config and internal/* (README.md, "A walk through the code"). The caller
// supplies the HTTP transports (the address policy's, and the one that
// attaches a signed-in server's token), so tests and embedders can replace
// them.
package mcp
