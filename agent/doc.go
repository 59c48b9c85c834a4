// Package agent is the session runtime that every front end shares:
// sessions that run one turn at a time (model → tool calls → results →
// model) with a queue and abort, permission checks, transcripts, MCP
// tools and background sessions. The tools themselves (the Tool interface
// and the built-in Read, Write, Edit, Glob, Grep, Bash and WebFetch) are
// in package agent/tools, which this package imports and which never
// imports it.
// What the model is told before the conversation (the system prompt with
// its environment block, the instruction files, the git snapshot) is built
// by package agent/prompt; a workspace session keeps it in its
// [Instructions] (framing.go), which /memory and /context report on.
//
// # Which entry point
//
// Front ends and embedders start a session with [Start]: it reads the
// workspace's settings with trust gating, resolves the provider and model,
// puts the built-in tools under the permission rules, opens the transcript
// and connects the MCP servers, and returns a [WorkspaceSession]. Print
// mode, background sessions, mcp serve and the terminal UI all start
// through it, and an embedder passes its approval store and stdio
// authorities in [StartOptions] (docs/reference/mcp.md, "What connects and
// when", rule 3; docs/design.md, "Every front end starts its session
// through `agent.Start`"), and an [Elicitor] when someone can answer the
// questions MCP servers ask (docs/reference/mcp.md, "Elicitation").
//
// [New], [Query] and [NewRuntime] are the Agent API, for programs that
// bring their own configuration: sessions over provider objects the caller
// constructs, with exactly the tools, permissions and transcript passed in
// [Options]. Nothing is read from settings files and no MCP server is
// connected. [NewSession] is the engine under both. What the runtime does
// is described in docs/reference/runtime.md.
//
// Imports: the standard library, agent/config, agent/providers/...,
// agent/mcp/..., agent/internal/* and its own sub-packages such as
// agent/agent/tools (README.md, "A walk through the code"; docs/design.md,
// "The built-in tools live in `agent/tools`, below the runtime").
package agent
