// Package agent is the session runtime that every front end shares: the
// Agent API of seed-providers.md §2.1, sessions that run one turn at a time
// (model → tool calls → results → model) with a queue and abort, built-in
// tools, permission checks, transcripts, background sessions and StartCLI,
// the embedding entry point (seed-mcp-events.md §1.1 rule 3).
//
// Imports: the standard library, agent/config, agent/providers/...,
// agent/mcp/... and agent/internal/* (architecture.md).
package agent
