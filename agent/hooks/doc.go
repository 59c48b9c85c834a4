// Package hooks runs the user's hooks (docs/reference/runtime.md, "Hooks"):
// commands the settings name for points of a session (a tool call, a
// prompt, the end of a turn, a compaction), in Claude Code's format, so a
// copied .claude/settings.json works unchanged from .compat/settings.json.
//
//   - [Set] holds the handlers of every settings file with their state: a
//     user's handler runs; a project's or local one runs only in a trusted
//     workspace and once approved, by a hash of its definition and of the
//     scripts under the workspace its command names ([Approvals], kept in
//     ~/.agent/hook-approvals.json), so that a cloned repository never
//     runs code behind the user's back.
//   - [Set.Run] runs the handlers an event matches, in parallel, each in
//     its own process group without a terminal, with the event's JSON on
//     stdin, a timeout that kills the whole group, and bounded output; it
//     reads their exit codes and JSON answers into one [Result].
//
// The runtime (package agent) decides what a Result does at each point.
//
// Imports: the standard library, agent/config and agent/internal/*.
package hooks
