package sandbox

import (
	"path/filepath"
	"strings"
)

// Profile is what one kind of spawn may do: the Bash tool's commands, one
// stdio MCP server, one header helper (docs/sandbox.md, "Profiles"). Paths
// are absolute; the Box adds the workspace, the private folders and the
// defaults of docs/sandbox.md, "What is denied by default".
type Profile struct {
	Mode    Mode
	Network NetMode
	// Write are writable folders or files besides the workspace
	// (filesystem.allowWrite; the one path an escalation grants). They
	// apply in ReadOnly too: the caller puts only what the mode allows.
	Write []string
	// WriteInside are writable only where their real path, resolved at
	// each spawn, lies inside the workspace (a project's allowWrite: a link
	// made after the settings were read must not lead out of it).
	WriteInside []string
	// AllowRead re-opens denied paths (filesystem.allowRead, user
	// settings only).
	AllowRead []string
	// DenyRead are denied besides the defaults (filesystem.denyRead).
	DenyRead []string
	// Protected are protected besides the defaults (protectedPaths,
	// filesystem.denyWrite inside the workspace).
	Protected []string
	// UnixSockets and AllUnixSockets allow connecting to unix sockets
	// (network.allowUnixSockets, network.allowAllUnixSockets).
	UnixSockets    []string
	AllUnixSockets bool
}

// Confines reports whether the profile asks the kernel for anything.
func (p Profile) Confines() bool { return p.Mode != FullAccess }

// DefaultDenyRead are the paths under the home folder that no confined
// command reads (docs/sandbox.md, "What is denied by default").
var DefaultDenyRead = []string{
	".agent", ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube",
	".docker/config.json", ".netrc", ".git-credentials", ".config/gh", ".pgpass",
	".password-store",
}

// DefaultProtected are the paths under the workspace that a confined
// command may not change (docs/sandbox.md, "Protected paths"): sandbox.md
// §2's list, and .agents, whose skills/ the agent also loads as
// instructions (agent-core.md, "Skills"). The git
// folder's hooks and configuration are found where git keeps them (a
// worktree's common folder), see gitPaths.
var DefaultProtected = []string{".agent", ".agents", ".compat", ".mcp.json", ".vscode", ".idea", ".envrc", ".gitmodules"}

// DeviceFiles are the /dev/null class of devices every mode may read and
// write.
var DeviceFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// ExpandPath makes a settings path absolute: "~" and "~/..." in home, an
// absolute path as it is, anything else relative to base (the workspace).
// The result is cleaned; symbolic links are not resolved here.
func ExpandPath(p, home, base string) string {
	switch {
	case p == "~":
		return filepath.Clean(home)
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(home, p[2:])
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}
