package sandbox

import "agent/internal/sandbox/confine"

// The vocabulary of the modes is the helper's (package confine); these
// names let the rest of the agent speak it through this package.

// Mode is what a confined command may write (docs/sandbox.md, "Modes").
type Mode = confine.Mode

// NetMode is what a confined command may reach on the network.
type NetMode = confine.NetMode

// Policy is what one spawn's helper receives.
type Policy = confine.Policy

// The modes and network modes.
const (
	ReadOnly       = confine.ReadOnly
	WorkspaceWrite = confine.WorkspaceWrite
	FullAccess     = confine.FullAccess
	NetNone        = confine.NetNone
	NetLoopback    = confine.NetLoopback
	NetHost        = confine.NetHost
	ModeNames      = confine.ModeNames
	NetModeNames   = confine.NetModeNames
)

// ParseMode reads a mode's name as settings and flags give it.
func ParseMode(s string) (Mode, bool) { return confine.ParseMode(s) }

// ParseNetMode reads a network mode's name.
func ParseNetMode(s string) (NetMode, bool) { return confine.ParseNetMode(s) }

// within and withinAny are the helper's path containment.
var (
	within    = confine.Within
	withinAny = confine.WithinAny
)
