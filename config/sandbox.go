package config

import (
	"os"
	"path/filepath"
	"strings"

	"agent/internal/quote"
	"agent/internal/sandbox"
	"agent/internal/securefile"
	"agent/internal/strictjson"
)

// The sandbox keys (docs/reference/settings.md, "sandbox"). The keys of
// the compatible ecosystem are read unchanged (enabled, failIfUnavailable,
// autoAllowBashIfSandboxed, allowUnsandboxedCommands, excludedCommands,
// filesystem.*, network.allow*), beside our own (mode, network.mode,
// protectedPaths). A key that loosens the sandbox is honoured only from
// user settings; in a project or local file it is ignored with a
// diagnostic: a project may only tighten.

// SandboxSettings are the sandbox keys after precedence and the
// tightening rule. The zero value is not the default: use
// DefaultSandbox.
type SandboxSettings struct {
	// Mode is the effective mode: FullAccess when the sandbox is off.
	Mode sandbox.Mode
	// Disabled: enabled is false (the mode then reads "off").
	Disabled          bool
	Network           sandbox.NetMode
	FailIfUnavailable bool
	AutoAllowBash     bool // autoAllowBashIfSandboxed; default true
	AllowUnsandboxed  bool // allowUnsandboxedCommands; default true
	// Excluded are commands that run unconfined (user settings only).
	Excluded []string
	// Absolute paths (a "~/" or workspace-relative path expanded).
	AllowWrite, DenyWrite, AllowRead, DenyRead []string
	// ProjectWrite are the project files' allowWrite paths: writable only
	// where their real path lies inside the workspace, which the sandbox
	// checks again at every spawn (a link made later must not lead out).
	ProjectWrite   []string
	UnixSockets    []string // network.allowUnixSockets (user only)
	AllUnixSockets bool     // network.allowAllUnixSockets (user only)
	LocalBinding   bool     // network.allowLocalBinding (user only)
	Protected      []string // protectedPaths
}

// DefaultSandbox is the sandbox without settings: workspace-write with no
// network (docs/sandbox.md, "Modes").
func DefaultSandbox() SandboxSettings {
	return SandboxSettings{Mode: sandbox.WorkspaceWrite, Network: sandbox.NetNone, AutoAllowBash: true, AllowUnsandboxed: true}
}

// ModeName is the mode as the environment block and the status show it:
// "off" when disabled.
func (s SandboxSettings) ModeName() string {
	if s.Disabled {
		return "off"
	}
	return s.Mode.String()
}

// SandboxProfile is an MCP server's or a header helper's own sandbox
// (docs/reference/settings.md, "sandbox"): nil fields take the session's.
type SandboxProfile struct {
	Mode       *sandbox.Mode    `json:"mode,omitempty"`
	Network    *sandbox.NetMode `json:"network,omitempty"`
	AllowWrite []string         `json:"allowWrite,omitempty"`
	AllowRead  []string         `json:"allowRead,omitempty"`
}

const loosenMsg = "ignored: only user settings may loosen the sandbox (move it to ~/.agent/settings.json)"

// sandboxKeys applies one file's sandbox object.
func (l *loader) sandboxKeys(f File, p strictjson.Path, v *strictjson.Value) {
	s := &l.s.Sandbox
	user := f.Scope == User
	l.sandboxObject(f, p, v, "enabled, mode, failIfUnavailable, autoAllowBashIfSandboxed, allowUnsandboxedCommands, excludedCommands, filesystem, network, protectedPaths", func(kp strictjson.Path, m strictjson.Member) bool {
		switch m.Key {
		case "enabled":
			b, ok := l.sandboxBool(f, kp, m.Value)
			switch {
			case !ok:
			case !b && !user && !s.Disabled:
				l.diag(f.Path, kp, "%s", loosenMsg)
			case !b:
				s.Disabled, s.Mode = true, sandbox.FullAccess
			case s.Disabled:
				s.Disabled, s.Mode = false, sandbox.WorkspaceWrite
			}
		case "mode":
			mode, ok := l.sandboxEnum(f, kp, m.Value, sandbox.ModeNames, func(x string) (int, bool) { md, ok := sandbox.ParseMode(x); return int(md), ok })
			switch {
			case !ok:
			case !user && sandbox.Mode(mode) > s.Mode:
				l.diag(f.Path, kp, "%s", loosenMsg)
			default:
				s.Mode, s.Disabled = sandbox.Mode(mode), false
			}
		case "failIfUnavailable":
			l.tighten(f, kp, m.Value, &s.FailIfUnavailable, false)
		case "autoAllowBashIfSandboxed":
			l.tighten(f, kp, m.Value, &s.AutoAllowBash, true)
		case "allowUnsandboxedCommands":
			l.tighten(f, kp, m.Value, &s.AllowUnsandboxed, true)
		case "excludedCommands":
			s.Excluded = append(s.Excluded, l.userOnly(f, kp, l.sandboxStrings(f, kp, m.Value, "a command"))...)
		case "filesystem":
			l.sandboxFilesystem(f, kp, m.Value)
		case "network":
			l.sandboxNetwork(f, kp, m.Value)
		case "protectedPaths":
			s.Protected = append(s.Protected, l.sandboxPaths(f, kp, m.Value, false)...)
		default:
			return false
		}
		return true
	})
}

func (l *loader) sandboxFilesystem(f File, p strictjson.Path, v *strictjson.Value) {
	s := &l.s.Sandbox
	user := f.Scope == User
	l.sandboxObject(f, p, v, "allowWrite, denyWrite, allowRead, denyRead", func(kp strictjson.Path, m strictjson.Member) bool {
		switch m.Key {
		case "allowWrite":
			for i, path := range l.sandboxPaths(f, kp, m.Value, true) {
				switch {
				case user:
					s.AllowWrite = append(s.AllowWrite, path)
				case !realWithin(path, l.opts.Workspace):
					l.diag(f.Path, kp.Index(i), "a path outside the workspace (as its links lead) is %s", loosenMsg)
				default:
					s.ProjectWrite = append(s.ProjectWrite, path)
				}
			}
		case "denyWrite":
			s.DenyWrite = append(s.DenyWrite, l.sandboxPaths(f, kp, m.Value, false)...)
		case "allowRead":
			s.AllowRead = append(s.AllowRead, l.userOnly(f, kp, l.sandboxPaths(f, kp, m.Value, true))...)
		case "denyRead":
			s.DenyRead = append(s.DenyRead, l.sandboxPaths(f, kp, m.Value, false)...)
		default:
			return false
		}
		return true
	})
}

func (l *loader) sandboxNetwork(f File, p strictjson.Path, v *strictjson.Value) {
	s := &l.s.Sandbox
	user := f.Scope == User
	l.sandboxObject(f, p, v, "mode, allowUnixSockets, allowAllUnixSockets, allowLocalBinding", func(kp strictjson.Path, m strictjson.Member) bool {
		switch m.Key {
		case "mode":
			n, ok := l.sandboxEnum(f, kp, m.Value, sandbox.NetModeNames, func(x string) (int, bool) { nm, ok := sandbox.ParseNetMode(x); return int(nm), ok })
			switch {
			case !ok:
			case !user && sandbox.NetMode(n) > s.Network:
				l.diag(f.Path, kp, "%s", loosenMsg)
			default:
				s.Network = sandbox.NetMode(n)
			}
		case "allowUnixSockets":
			s.UnixSockets = append(s.UnixSockets, l.userOnly(f, kp, l.sandboxPaths(f, kp, m.Value, false))...)
		case "allowAllUnixSockets":
			l.tighten(f, kp, m.Value, &s.AllUnixSockets, true)
		case "allowLocalBinding":
			l.tighten(f, kp, m.Value, &s.LocalBinding, true)
		default:
			return false
		}
		return true
	})
}

// tighten sets a boolean key under the tightening rule: loose is the value
// that loosens the sandbox, which only the user's settings may set (a
// project's is said and ignored, unless it repeats what is set already).
func (l *loader) tighten(f File, kp strictjson.Path, v *strictjson.Value, dst *bool, loose bool) {
	b, ok := l.sandboxBool(f, kp, v)
	switch {
	case !ok:
	case f.Scope != User && b == loose && *dst != loose:
		l.diag(f.Path, kp, "%s", loosenMsg)
	default:
		*dst = b
	}
}

// sandboxObject calls each for the members of an object value; each
// reports false for a key it does not know, which is said and ignored. A
// value that is not an object is said and ignored whole.
func (l *loader) sandboxObject(f File, p strictjson.Path, v *strictjson.Value, keys string, each func(kp strictjson.Path, m strictjson.Member) bool) {
	if v.Kind != strictjson.Object {
		l.diag(f.Path, p, "expected an object {%s}, found %s; ignored", keys, v.Kind)
		return
	}
	for _, m := range v.Members {
		kp := p.Key(m.Key)
		if !each(kp, m) {
			l.diag(f.Path, kp, "unknown key (known: %s); ignored", keys)
		}
	}
}

// userOnly passes a list that loosens the sandbox from a user file; from
// a project or local file a non-empty one is ignored with a diagnostic.
func (l *loader) userOnly(f File, p strictjson.Path, vals []string) []string {
	if len(vals) > 0 && f.Scope != User {
		l.diag(f.Path, p, "%s", loosenMsg)
		return nil
	}
	return vals
}

func (l *loader) sandboxBool(f File, p strictjson.Path, v *strictjson.Value) (bool, bool) {
	if v.Kind != strictjson.Bool {
		l.diag(f.Path, p, "expected true or false, found %s; ignored", v.Kind)
		return false, false
	}
	return v.Bool, true
}

func (l *loader) sandboxEnum(f File, p strictjson.Path, v *strictjson.Value, names string, parse func(string) (int, bool)) (int, bool) {
	if v.Kind != strictjson.String {
		l.diag(f.Path, p, "expected one of %s, found %s; ignored", names, v.Kind)
		return 0, false
	}
	n, ok := parse(v.Str)
	if !ok {
		l.diag(f.Path, p, "%q is not one of %s; ignored", quote.V(v.Str), names)
	}
	return n, ok
}

// sandboxStrings reads an array of non-empty strings; bad items are
// reported and skipped.
func (l *loader) sandboxStrings(f File, p strictjson.Path, v *strictjson.Value, what string) []string {
	if v.Kind != strictjson.Array {
		l.diag(f.Path, p, "expected an array of strings, found %s; ignored", v.Kind)
		return nil
	}
	var out []string
	for i, it := range v.Items {
		switch {
		case it.Kind != strictjson.String:
			l.diag(f.Path, p.Index(i), "expected %s (a string), found %s; ignored", what, it.Kind)
		case strings.TrimSpace(it.Str) == "" || strings.IndexByte(it.Str, 0) >= 0:
			l.diag(f.Path, p.Index(i), "expected %s, found an empty string or a NUL; ignored", what)
		default:
			out = append(out, it.Str)
		}
	}
	return out
}

// sandboxPaths reads an array of paths: absolute, "~/…", or relative to
// the workspace. With mustExist, a path that does not exist is said and
// skipped (it would grant nothing).
func (l *loader) sandboxPaths(f File, p strictjson.Path, v *strictjson.Value, mustExist bool) []string {
	raw := l.sandboxStrings(f, p, v, "a path")
	var out []string
	for i, r := range raw {
		path := sandbox.ExpandPath(r, l.opts.Home, l.opts.Workspace)
		if mustExist {
			if _, err := os.Stat(path); err != nil {
				l.diag(f.Path, p.Index(i), "%q does not exist; skipped", quote.V(path))
				continue
			}
		}
		out = append(out, path)
	}
	return out
}

// parseSandboxProfile reads an MCP server's or a header helper's sandbox
// object: {"mode", "network", "allowWrite", "allowRead"}.
func parseSandboxProfile(v *strictjson.Value, p strictjson.Path, home, workspace string) (*SandboxProfile, []pathMsg) {
	if v.Kind != strictjson.Object {
		return nil, []pathMsg{{p, "expected an object {mode, network, allowWrite, allowRead}, found " + v.Kind.String()}}
	}
	prof := &SandboxProfile{}
	var probs []pathMsg
	for _, m := range v.Members {
		kp := p.Key(m.Key)
		switch m.Key {
		case "mode", "network":
			if m.Value.Kind != strictjson.String {
				probs = append(probs, pathMsg{kp, "expected a string, found " + m.Value.Kind.String()})
				continue
			}
			if m.Key == "mode" {
				md, ok := sandbox.ParseMode(m.Value.Str)
				if !ok {
					probs = append(probs, pathMsg{kp, "must be " + sandbox.ModeNames})
					continue
				}
				prof.Mode = &md
			} else {
				nm, ok := sandbox.ParseNetMode(m.Value.Str)
				if !ok {
					probs = append(probs, pathMsg{kp, "must be " + sandbox.NetModeNames})
					continue
				}
				prof.Network = &nm
			}
		case "allowWrite", "allowRead":
			if m.Value.Kind != strictjson.Array {
				probs = append(probs, pathMsg{kp, "expected an array of paths, found " + m.Value.Kind.String()})
				continue
			}
			for i, it := range m.Value.Items {
				if it.Kind != strictjson.String || strings.TrimSpace(it.Str) == "" || strings.IndexByte(it.Str, 0) >= 0 {
					probs = append(probs, pathMsg{kp.Index(i), "expected a non-empty path"})
					continue
				}
				path := sandbox.ExpandPath(it.Str, home, workspace)
				if m.Key == "allowWrite" {
					prof.AllowWrite = append(prof.AllowWrite, path)
				} else {
					prof.AllowRead = append(prof.AllowRead, path)
				}
			}
		default:
			probs = append(probs, pathMsg{kp, "unknown key in sandbox (allowed: mode, network, allowWrite, allowRead)"})
		}
	}
	return prof, probs
}

// realWithin reports whether p leads inside dir (a real path) as its links
// resolve; a path that cannot be resolved does not.
func realWithin(p, dir string) bool {
	real, err := securefile.RealPath("", filepath.Clean(p))
	return err == nil && within(real, dir)
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || dir != "" && strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
