package config

import (
	"strconv"

	"agent/internal/strictjson"
)

// The hooks key (docs/reference/settings.md, "hooks"): Claude Code's
// format, read unchanged from every settings file:
//
//	{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "…", "timeout": 30}]}]},
//	 "disableAllHooks": false}
//
// Each handler keeps the file it came from, so that a project's handler can
// be approved on its own and a repository cannot run code behind the
// user's back (docs/reference/runtime.md, "Hooks").

// HookEvents are the events a handler may name.
var HookEvents = []string{
	"SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PermissionRequest",
	"PostToolUse", "PostToolUseFailure", "Stop", "SubagentStart", "SubagentStop",
	"PreCompact", "PostCompact", "Notification",
}

// MaxHookTimeout bounds a handler's timeout: a day.
const MaxHookTimeout = 86400

// HookHandler is one handler of the hooks key.
type HookHandler struct {
	File    string
	Scope   Scope
	Event   string
	Matcher string // "" matches everything
	Type    string // "command" runs; any other type is listed as unsupported
	Command string
	// Args, when set, run Command directly with these arguments (the exec
	// form), without a shell.
	Args          []string
	HasArgs       bool
	Timeout       int // seconds; 0: the event's default
	StatusMessage string
	// FailClosed makes a failure of the handler (an exit code other than 0
	// and 2, a timeout, a missing program, bad JSON) block where the event
	// can block.
	FailClosed bool
	// Unsupported says why the handler never runs ("" when it can).
	Unsupported string
}

// hookLaterField reports the handler fields Claude Code knows that are
// not supported here (reported as such).
func hookLaterField(k string) bool {
	switch k {
	case "async", "once", "if", "shell", "model", "prompt", "url", "headers", "asyncRewake":
		return true
	}
	return false
}

func (l *loader) hooks(f File, p strictjson.Path, v *strictjson.Value) {
	if v.Kind != strictjson.Object {
		l.diag(f.Path, p, "expected an object of events, found %s; ignored", v.Kind)
		return
	}
	for _, ev := range v.Members {
		ep := p.Key(ev.Key)
		if !knownEvent(ev.Key) {
			l.diag(f.Path, ep, "unknown hook event; ignored")
			continue
		}
		if ev.Value.Kind != strictjson.Array {
			l.diag(f.Path, ep, "expected an array of {\"matcher\", \"hooks\"} groups, found %s; ignored", ev.Value.Kind)
			continue
		}
		for gi, g := range ev.Value.Items {
			l.hookGroup(f, ep.Index(gi), ev.Key, g)
		}
	}
}

func knownEvent(name string) bool {
	for _, e := range HookEvents {
		if e == name {
			return true
		}
	}
	return false
}

func (l *loader) hookGroup(f File, p strictjson.Path, event string, g *strictjson.Value) {
	if g.Kind != strictjson.Object {
		l.diag(f.Path, p, "expected an object {\"matcher\", \"hooks\"}, found %s; ignored", g.Kind)
		return
	}
	matcher := ""
	var handlers *strictjson.Value
	for _, m := range g.Members {
		switch m.Key {
		case "matcher":
			if m.Value.Kind != strictjson.String {
				l.diag(f.Path, p.Key("matcher"), "expected a string, found %s; the group is ignored", m.Value.Kind)
				return
			}
			matcher = m.Value.Str
		case "hooks":
			handlers = m.Value
		default:
			l.diag(f.Path, p.Key(m.Key), "unknown key; ignored (known: matcher, hooks)")
		}
	}
	if handlers == nil || handlers.Kind != strictjson.Array {
		l.diag(f.Path, p.Key("hooks"), "expected an array of handlers; the group is ignored")
		return
	}
	for hi, h := range handlers.Items {
		if hh, ok := l.hookHandler(f, p.Key("hooks").Index(hi), h); ok {
			hh.Event, hh.Matcher = event, matcher
			l.s.Hooks = append(l.s.Hooks, hh)
		}
	}
}

func (l *loader) hookHandler(f File, p strictjson.Path, h *strictjson.Value) (HookHandler, bool) {
	hh := HookHandler{File: f.Path, Scope: f.Scope}
	if h.Kind != strictjson.Object {
		l.diag(f.Path, p, "expected a handler object, found %s; ignored", h.Kind)
		return hh, false
	}
	str := func(m *strictjson.Member) (string, bool) {
		if m.Value.Kind != strictjson.String {
			l.diag(f.Path, p.Key(m.Key), "expected a string, found %s; the handler is ignored", m.Value.Kind)
			return "", false
		}
		return m.Value.Str, true
	}
	for i := range h.Members {
		m := &h.Members[i]
		var ok bool
		switch m.Key {
		case "type":
			hh.Type, ok = str(m)
		case "command":
			hh.Command, ok = str(m)
		case "statusMessage":
			hh.StatusMessage, ok = str(m)
		case "args":
			ok = m.Value.Kind == strictjson.Array
			for _, a := range m.Value.Items {
				if a.Kind != strictjson.String {
					ok = false
					break
				}
				hh.Args = append(hh.Args, a.Str)
			}
			if !ok {
				l.diag(f.Path, p.Key("args"), "expected an array of strings; the handler is ignored")
			}
			hh.HasArgs = true
		case "timeout":
			n, err := strconv.ParseFloat(m.Value.Str, 64)
			ok = m.Value.Kind == strictjson.Number && err == nil && n > 0 && n <= MaxHookTimeout
			if !ok {
				l.diag(f.Path, p.Key("timeout"), "must be a number of seconds from 1 to %d; the handler is ignored", MaxHookTimeout)
			}
			hh.Timeout = max(int(n), 1)
		case "failClosed":
			ok = m.Value.Kind == strictjson.Bool
			if !ok {
				l.diag(f.Path, p.Key("failClosed"), "expected true or false; the handler is ignored")
			}
			hh.FailClosed = m.Value.Bool
		default:
			ok = true
			if hookLaterField(m.Key) {
				l.diag(f.Path, p.Key(m.Key), "not supported here; ignored")
			} else {
				l.diag(f.Path, p.Key(m.Key), "unknown key; ignored")
			}
		}
		if !ok {
			return hh, false
		}
	}
	switch {
	case hh.Type == "":
		l.diag(f.Path, p, "a handler needs a type (\"command\"); ignored")
		return hh, false
	case hh.Type != "command":
		hh.Unsupported = "type " + strconv.Quote(hh.Type) + " is not supported (only command)"
		l.diag(f.Path, p.Key("type"), "%s; the handler is listed and never runs", hh.Unsupported)
	case hh.Command == "":
		l.diag(f.Path, p.Key("command"), "a command handler needs a non-empty command; ignored")
		return hh, false
	}
	return hh, true
}

func (l *loader) disableAllHooks(f File, p strictjson.Path, v *strictjson.Value) {
	if v.Kind != strictjson.Bool {
		l.diag(f.Path, p, "expected true or false, found %s; ignored", v.Kind)
		return
	}
	if v.Bool {
		l.s.HooksDisabled = append(l.s.HooksDisabled, f.Scope)
	}
}
