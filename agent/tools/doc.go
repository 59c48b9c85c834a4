// Package tools defines what a tool is to the session runtime (the [Tool]
// interface, its [Spec], the permission [Target] of a call, the [Result]
// and the [Risk] classes of docs/reference/runtime.md, "Permission modes
// and rules") and provides the built-in tools: Read, Write, Edit, Glob,
// Grep, Bash and WebFetch ([Builtin]), with their limits, path resolution,
// atomic writes and diffs.
//
// The runtime (package agent) offers these tools to the model, checks each
// call's target against the permission rules and runs the call; its MCP
// tools implement the same interface. The permission rules resolve their
// path patterns with [RealPath], as the file tools resolve what they touch,
// so that a rule and a target meet on real paths.
//
// Imports: the standard library and agent/internal/* only. The tools are
// told what they need (the workspace, the network policy, the limits) by
// [Options]; they read no settings and never import agent, which imports
// them (docs/design.md, "The built-in tools live in `agent/tools`, below
// the runtime"). What each tool does and its limits:
// docs/reference/runtime.md, "Built-in tools".
package tools
