package confine

import (
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// Policy is what the helper receives on its policy pipe: the command and
// every limit of one spawn, resolved by the parent (sandbox.Box). It is the
// helper's only input; the helper's own environment holds nothing but the
// mark that selects the helper mode.
type Policy struct {
	// The command: Path is looked up in Env's PATH when it has no slash.
	Path string
	Args []string // Args[0] is the program's name
	Env  []string
	Dir  string

	Mode    Mode
	Network NetMode
	// ABI is the Landlock ABI to use: the kernel's, or lower under the
	// test cap; 0 applies no Landlock.
	ABI int
	// Seccomp installs the filter (docs/sandbox.md, "How").
	Seccomp bool
	// Namespaces: the helper was started in a new mount namespace (and a
	// network namespace where NetNamespace says so, and a user namespace
	// where UserNS says so) and sets them up.
	Namespaces bool

	// Read are readable hierarchies ("/"), less Deny.
	Read []string
	// Deny are real paths nobody reads, less what AllowRead re-opens.
	Deny []string
	// AllowRead are readable hierarchies granted on their own.
	AllowRead []string
	// Write are writable hierarchies (the workspace, the private folders,
	// allowWrite).
	Write []string
	// Devices are device files granted read, write and ioctl.
	Devices []string
	// Protected exist and are bound read-only over themselves in the
	// namespace tier.
	Protected []string
	// TmpDir is bound over /tmp in the namespace tier.
	TmpDir string
	// UnixConnect allows connect(2) on unix sockets (the unix-socket
	// keys); without it connect is refused and unix datagram sockets
	// cannot be made.
	UnixConnect bool
	// AgentPid and AgentPgid are the process the command must not signal
	// (before Landlock can scope signals).
	AgentPid  int
	AgentPgid int
	// UserNS: the helper was started in a new user namespace too (unless
	// the agent may make the others without one: root). It maps UID and
	// GID, the agent's, onto themselves there (writing its own maps
	// spares the agent a wait for the child before its exec).
	UserNS   bool
	UID, GID int
	// Probe applies everything, then reports success on the status pipe
	// instead of running a command (agent sandbox check).
	Probe bool
}

// EnvVar marks the helper mode: EnvVar=1. The helper's environment holds
// nothing else that matters (the command's environment is in the policy).
const EnvVar = "AGENT_SANDBOX_HELPER"

// The helper's pipes, as the parent's ExtraFiles place them.
const (
	PolicyFD = 3
	StatusFD = 4
)

// Status is the one message a helper writes on its status pipe: a failure
// before the exec (or, for a probe, its success). An exec that happens
// closes the pipe with nothing written.
type Status struct {
	Stage string
	Errno int
	Msg   string
	OK    bool
}

func (s *Status) fields() []field {
	return []field{{name: "stage", str: &s.Stage}, {name: "errno", num: &s.Errno}, {name: "msg", str: &s.Msg}, {name: "ok", flag: &s.OK}}
}

// Encode is the status as the pipe carries it.
func (s *Status) Encode() []byte {
	b, _ := encode(s.fields()) // a NUL in a message is replaced below
	return b
}

// DecodeStatus reads a status as Encode wrote it.
func DecodeStatus(b []byte) (Status, error) {
	var s Status
	err := decode(b, s.fields())
	return s, err
}

// netNamespace reports whether the spawn gets a network namespace of its
// own: for the loopback mode (its own loopback interface), and to cut the
// network where there is no seccomp filter to refuse sockets. With the
// filter in place every socket but a unix one is refused already (UDP,
// MPTCP and raw included), and a network namespace would add nothing but
// its cost (docs/design.md, "The network namespace only where it adds
// something").
func (p *Policy) NetNamespace() bool {
	return p.Network == NetLoopback || p.Network == NetNone && !p.Seccomp
}

// maxPolicy bounds what the helper reads from its policy pipe.
const maxPolicy = 16 << 20

// readPolicy reads a policy to its end, or to one byte past maxPolicy
// (which DecodePolicy refuses). One buffer holds a usual policy (a few
// KiB, written at once): io.ReadAll, growing from 512 bytes, took five
// reads and five allocations on the helper's path (docs/performance.md,
// "Sandbox").
func readPolicy(r io.Reader) ([]byte, error) {
	buf := make([]byte, 0, 16<<10)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), maxPolicy+1)])
		buf = buf[:len(buf)+n]
		switch {
		case err == io.EOF || len(buf) > maxPolicy:
			return buf, nil
		case err != nil:
			return nil, err
		}
	}
}

func (p *Policy) fields() []field {
	return []field{
		{name: "path", str: &p.Path}, {name: "arg", strs: &p.Args}, {name: "env", strs: &p.Env},
		{name: "dir", str: &p.Dir}, {name: "mode", num: (*int)(&p.Mode)}, {name: "network", num: (*int)(&p.Network)},
		{name: "abi", num: &p.ABI}, {name: "seccomp", flag: &p.Seccomp}, {name: "namespaces", flag: &p.Namespaces},
		{name: "read", strs: &p.Read}, {name: "deny", strs: &p.Deny}, {name: "allowRead", strs: &p.AllowRead},
		{name: "write", strs: &p.Write}, {name: "device", strs: &p.Devices}, {name: "protected", strs: &p.Protected},
		{name: "tmpDir", str: &p.TmpDir}, {name: "unixConnect", flag: &p.UnixConnect},
		{name: "agentPid", num: &p.AgentPid}, {name: "agentPgid", num: &p.AgentPgid}, {name: "probe", flag: &p.Probe},
		{name: "userns", flag: &p.UserNS}, {name: "uid", num: &p.UID}, {name: "gid", num: &p.GID},
	}
}

// Encode is the policy as the pipe carries it (codec.go).
func (p *Policy) Encode() ([]byte, error) { return encode(p.fields()) }

// DecodePolicy reads a policy as Encode wrote it, and checks that it can
// be confined.
func DecodePolicy(b []byte) (*Policy, error) {
	if len(b) > maxPolicy {
		return nil, errors.New("policy too large")
	}
	var p Policy
	if err := decode(b, p.fields()); err != nil {
		return nil, fmt.Errorf("reading the policy: %w", err)
	}
	if !p.Probe && (len(p.Args) == 0 || p.Path == "") {
		return nil, errors.New("the policy names no command")
	}
	if p.Mode < ReadOnly || p.Mode > WorkspaceWrite {
		return nil, fmt.Errorf("the policy's mode %d cannot be confined", int(p.Mode))
	}
	return &p, nil
}

// Within reports whether p is dir or below it (both clean and absolute).
func Within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// WithinAny reports whether p lies within one of dirs.
func WithinAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if Within(p, d) {
			return true
		}
	}
	return false
}

// cleanAll keeps the absolute paths, cleaned and sorted.
func cleanAll(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if path.IsAbs(p) {
			out = append(out, path.Clean(p))
		}
	}
	sort.Strings(out)
	return out
}
