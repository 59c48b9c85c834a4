// Package confine is the sandbox helper (docs/sandbox.md, "How"): the part
// of the agent's binary that a confined command passes through. Started as
// /proc/self/exe with EnvVar=1, the policy on descriptor 3 and a status
// pipe on descriptor 4, it confines its own thread (namespaces it was
// given, capabilities dropped, no_new_privs, Landlock masked to the
// kernel's ABI, the seccomp filter written here as BPF, every descriptor
// above 2 close-on-exec) and execs the command. A failure before the exec
// is written on the status pipe.
//
// The helper runs when this package initialises (helper_linux.go), so the
// package imports as little as it can: the standard library's syscall
// package for raw system calls, never golang.org/x/sys, and no other
// package of the agent. The parent side (the policy's making, the spawn,
// the guard, the records) is package sandbox, which imports this one.
package confine
