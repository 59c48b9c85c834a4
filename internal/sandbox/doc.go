// Package sandbox confines the commands the model runs (the Bash tool,
// stdio MCP servers, header helpers) with the kernel's own means: Landlock
// for the file system and TCP, a seccomp filter for sockets, ptrace,
// io_uring and signals, no new privileges, no capabilities, and mount and
// network namespaces as an extra layer where the kernel allows them (owned
// by a user namespace of their own unless the agent is root holding
// CAP_SYS_ADMIN). docs/sandbox.md states every rule this package implements.
//
// The confinement happens in a helper: the agent starts its own executable
// (/proc/self/exe) in a hidden mode with the policy on one pipe and a status
// pipe beside it. The helper, on one locked OS thread, sets up the
// namespaces it was given, drops its capabilities, sets no_new_privs,
// restricts itself with Landlock (masked to the ABI the kernel reports) and
// seccomp, marks every descriptor above 2 close-on-exec, and execs the
// command. A failure before the exec is written on the status pipe and the
// command never runs; the caller reports it as a sandbox setup failure and
// never runs the command unconfined on its own (package confine; Box.Start).
// agent sandbox run starts its helper earlier still, while the agent
// initialises (package early); Box.Start takes it through Request.Early
// when its namespaces fit the policy (AdoptEarly; docs/design.md, "agent
// sandbox run starts its helper at init").
//
// Around the spawn, a Box keeps what one session shares: the private
// TMPDIR (removed at Close; fresh ones are made ahead as spares), the
// private build caches, the environment scrubbing, the guard of
// the protected paths (checked after every command, restored and
// quarantined where the kernel could not refuse a change) and the records.
//
// Imports: the standard library (the syscall package only, for raw system
// calls and hand-written BPF; never golang.org/x/sys) and agent/internal/*.
// Only main, agent, agent/tools, mcp and config import this package
// (CONTRIBUTING.md, "Import direction").
package sandbox
