package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// Policy is what the helper receives on its policy pipe: the command and
// every limit of one spawn, resolved by the parent (Box.policy). It is the
// helper's only input; the helper's own environment holds nothing but the
// mark that selects the helper mode.
type Policy struct {
	// The command: Path is looked up in Env's PATH when it has no slash.
	Path string   `json:"path"`
	Args []string `json:"args"` // Args[0] is the program's name
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`

	Mode    Mode    `json:"mode"`
	Network NetMode `json:"network"`
	// ABI is the Landlock ABI to use: the kernel's, or lower under the
	// test cap; 0 applies no Landlock.
	ABI int `json:"abi"`
	// Seccomp installs the filter (docs/sandbox.md, "How").
	Seccomp bool `json:"seccomp"`
	// Namespaces: the helper was started in new user and mount namespaces
	// (and a network namespace unless Network is NetHost) and sets them up.
	Namespaces bool `json:"namespaces"`

	// Read are readable hierarchies ("/"), less Deny.
	Read []string `json:"read"`
	// Deny are real paths nobody reads, less what AllowRead re-opens.
	Deny []string `json:"deny"`
	// AllowRead are readable hierarchies granted on their own.
	AllowRead []string `json:"allowRead,omitempty"`
	// Write are writable hierarchies (the workspace, the private folders,
	// allowWrite).
	Write []string `json:"write"`
	// Devices are device files granted read, write and ioctl.
	Devices []string `json:"devices"`
	// Protected exist and are bound read-only over themselves in the
	// namespace tier.
	Protected []string `json:"protected,omitempty"`
	// Hide are hidden in the namespace tier (an empty tmpfs over a
	// folder, /dev/null over a file): denied paths inside writable
	// hierarchies and the agent's control-socket folders.
	Hide []string `json:"hide,omitempty"`
	// TmpDir is bound over /tmp in the namespace tier.
	TmpDir string `json:"tmpDir,omitempty"`
	// UnixConnect allows connect(2) on unix sockets (the unix-socket
	// keys); without it connect is refused and unix datagram sockets
	// cannot be made.
	UnixConnect bool `json:"unixConnect,omitempty"`
	// AgentPid and AgentPgid are the process the command must not signal
	// (before Landlock can scope signals).
	AgentPid  int `json:"agentPid"`
	AgentPgid int `json:"agentPgid"`
	// Probe applies everything, then reports success on the status pipe
	// instead of running a command (agent sandbox check).
	Probe bool `json:"probe,omitempty"`
}

// helperEnv marks the helper mode; the helper's environment holds nothing
// else (the command's environment is in the policy).
const helperEnv = "AGENT_SANDBOX_HELPER"

// maxPolicy bounds what the helper reads from its policy pipe.
const maxPolicy = 16 << 20

func (p *Policy) encode() ([]byte, error) { return json.Marshal(p) }

func decodePolicy(b []byte) (*Policy, error) {
	if len(b) > maxPolicy {
		return nil, errors.New("policy too large")
	}
	var p Policy
	if err := json.Unmarshal(b, &p); err != nil {
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

// Hash identifies the limits of a policy, not its command or environment:
// two spawns with the same hash were confined alike (the records of
// docs/sandbox.md, "What is recorded").
func (p *Policy) Hash() string {
	q := *p
	q.Path, q.Args, q.Env, q.Dir, q.AgentPid, q.AgentPgid = "", nil, nil, "", 0, 0
	b, _ := json.Marshal(&q) // plain fields: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
