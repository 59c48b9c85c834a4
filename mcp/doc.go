// Package mcp is the project's Model Context Protocol implementation: the
// client that connects the servers of the settings files (and, later, the
// server behind `agent mcp serve`).
//
// The client and the server speak the revisions 2024-11-05, 2025-03-26,
// 2025-06-18, 2025-11-25 and the stateless 2026-07-28 (decisions.md §2),
// negotiating the newest the peer supports: the client probes with
// server/discover (2026-07-28 "Versioning and Compatibility") and falls
// back to the initialize handshake for servers of the earlier,
// session-based revisions. Features a revision lacks are not used with a
// peer that negotiated it: no MCP-Protocol-Version header before
// 2025-06-18, no tool annotations or progress messages before 2025-03-26,
// no titles before 2025-06-18; JSON-RPC batches are accepted only from a
// peer of 2025-03-26, the one revision that has them (and requires a
// receiver to accept them), and refused otherwise. Two transports carry the
// messages: stdio (a child process, never a shell) and Streamable HTTP
// (JSON and SSE responses, sessions, the GET stream, resumption with
// Last-Event-ID after the server's retry time).
//
// Wire messages and framing come from mcp/jsonrpc. Imports: mcp/jsonrpc,
// internal/sse and the standard library (architecture.md: mcp → mcp/jsonrpc,
// mcp/oauth, config, internal). The caller injects the *http.Client, so the
// address policy and the OAuth transport wrap it without this package
// knowing.
package mcp
