package confine

import "fmt"

// Mode is what a confined command may write (docs/sandbox.md, "Modes").
type Mode int

// The modes, from the strictest. The zero value is ReadOnly, so that a
// Profile nobody filled in confines the most.
const (
	// ReadOnly: read everything but the denied paths; write only the
	// private temporary folder and the /dev/null class of devices.
	ReadOnly Mode = iota
	// WorkspaceWrite: as ReadOnly, plus the workspace and the allowWrite
	// paths.
	WorkspaceWrite
	// FullAccess (danger-full-access): no confinement by the kernel; the
	// permission rules alone decide.
	FullAccess
)

var modeNames = [...]string{ReadOnly: "read-only", WorkspaceWrite: "workspace-write", FullAccess: "danger-full-access"}

func (m Mode) String() string {
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// ParseMode reads a mode's name as settings and flags give it.
func ParseMode(s string) (Mode, bool) {
	for i, n := range modeNames {
		if n == s {
			return Mode(i), true
		}
	}
	return 0, false
}

// ModeNames lists the modes for messages.
const ModeNames = "read-only, workspace-write or danger-full-access"

// NetMode is what a confined command may reach on the network.
type NetMode int

// The network modes, from the strictest.
const (
	// NetNone: no sockets but unix ones (and those only as the unix-socket
	// keys allow).
	NetNone NetMode = iota
	// NetLoopback: a network namespace of its own with only the loopback
	// interface, up; needs namespaces (otherwise NetNone applies).
	NetLoopback
	// NetHost: the host's network, unfiltered.
	NetHost
)

var netNames = [...]string{NetNone: "none", NetLoopback: "loopback", NetHost: "host"}

func (n NetMode) String() string {
	if n >= 0 && int(n) < len(netNames) {
		return netNames[n]
	}
	return fmt.Sprintf("network(%d)", int(n))
}

// ParseNetMode reads a network mode's name.
func ParseNetMode(s string) (NetMode, bool) {
	for i, n := range netNames {
		if n == s {
			return NetMode(i), true
		}
	}
	return 0, false
}

// NetModeNames lists the network modes for messages.
const NetModeNames = "none, loopback or host"
