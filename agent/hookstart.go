package agent

// The hooks of a workspace session (docs/reference/runtime.md, "Hooks"):
// the Set built from the settings, the notices about pending handlers,
// SessionStart before the first turn, SessionEnd at the close, and the
// guard that makes Write and Edit ask before changing a settings file or
// an approved hook's script.

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"agent/agent/hooks"
	"agent/agent/tools"
	"agent/config"
)

// sessionEndTimeout bounds the SessionEnd hooks: a session's end waits
// for them at most this long.
const sessionEndTimeout = 30 * time.Second

// startHooks builds the session's hooks and says which project handlers
// wait for approval: where nobody can approve (headless), one line per
// handler, which does not run; in the terminal, one line pointing to
// /hooks.
func startHooks(s *config.Settings, ws, home string, opts StartOptions) *hooks.Set {
	set := hooks.New(s, hooks.Options{Workspace: ws, Home: home})
	pending := set.Pending()
	if opts.Notice == nil || len(pending) == 0 {
		return set
	}
	if opts.Headless {
		for _, h := range pending {
			opts.Notice(fmt.Sprintf("hook %s (%s in %s) is not approved: it does not run here (approve it with 'agent hooks approve' or /hooks)", h.ID, h.Event, h.File))
		}
		return set
	}
	opts.Notice(fmt.Sprintf("%d project hooks wait for your approval and do not run until then: /hooks shows them", len(pending)))
	return set
}

// guard makes Write and Edit ask before changing a settings file or the
// script of an approved project hook, whatever the mode, unless an allow
// rule names that very path.
func (c *WorkspaceSession) guard(spec tools.Spec, t tools.Target) string {
	if (spec.Name != "Write" && spec.Name != "Edit") || t.Kind != tools.TargetPath {
		return ""
	}
	why := ""
	home := c.Home
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	for _, f := range config.SettingsFiles(home, c.Workspace) {
		if f.Path == t.Value {
			why = "it changes a settings file, which can run commands (hooks) and set permissions"
		}
	}
	for _, p := range c.Hooks.Protected() {
		if p == t.Value {
			why = "it changes the script of an approved hook"
		}
	}
	if why == "" || c.Permissions.AllowsExactly(spec.Name, t.Value) {
		return ""
	}
	return why
}

// sessionStartHooks runs SessionStart before the session's first turn;
// what the handlers add reaches the model with the first prompt.
func (s *Session) sessionStartHooks(source string) {
	if !s.opts.Hooks.Has("SessionStart") {
		return
	}
	in := s.hookInput("SessionStart")
	in.Source = source
	_, in.Model = s.Model()
	r := s.runHooks(s.ctx, "", in)
	if len(r.Context) > 0 {
		s.mu.Lock()
		s.notes = append(s.notes, r.Context...)
		s.mu.Unlock()
	}
}

// sessionEndHooks runs SessionEnd (reason: clear, logout,
// prompt_input_exit or other); they cannot keep the session open, and are
// waited for at most 30 s.
func (s *Session) sessionEndHooks(reason string) {
	if !s.opts.Hooks.Has("SessionEnd") {
		return
	}
	in := s.hookInput("SessionEnd")
	in.Reason = reason
	ctx, cancel := context.WithTimeout(context.Background(), sessionEndTimeout)
	defer cancel()
	s.runHooks(ctx, "", in)
}
