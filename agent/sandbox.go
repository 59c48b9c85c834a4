package agent

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync/atomic"

	"agent/agent/tools"
	"agent/config"
	"agent/internal/quote"
	"agent/internal/sandbox"
	"agent/mcp"
)

// The session's sandbox (docs/sandbox.md): the box of internal/sandbox
// built from the settings, the Bash tool's profile, the degrade rules, the
// escalation records, and what the front ends show.

// SandboxState is what front ends show of a session's sandbox: the mode in
// the status line, and a banner when the sandbox is enabled but the
// kernel cannot confine (docs/sandbox.md, "Degrading").
type SandboxState struct {
	Mode    string // "workspace-write", "read-only", "danger-full-access" or "off"
	Network string
	Tier    string // the layers in effect, "none" when unconfined
	// Banner is the degrade line ("" when commands are confined or the
	// sandbox is off by choice); print mode writes it on stderr, the
	// terminal UI shows it as a notice and in its status line.
	Banner string
}

// ErrSandboxMode is an unknown --sandbox value.
var ErrSandboxMode = fmt.Errorf("the sandbox mode must be %s", sandbox.ModeNames)

// SandboxSettings applies the --sandbox flag (one run, so it counts as the
// user's choice) to the settings' sandbox keys.
func SandboxSettings(s config.SandboxSettings, flag string) (config.SandboxSettings, error) {
	if flag == "" {
		return s, nil
	}
	m, ok := sandbox.ParseMode(flag)
	if !ok {
		return s, fmt.Errorf("%w, not %q", ErrSandboxMode, quote.V(flag))
	}
	s.Mode, s.Disabled = m, false
	return s, nil
}

// BashProfile is the profile of the Bash tool's commands from the sandbox
// keys (docs/reference/settings.md, "sandbox").
func BashProfile(s config.SandboxSettings) sandbox.Profile {
	p := sandbox.Profile{
		Mode: s.Mode, Network: s.Network, AllowRead: s.AllowRead, DenyRead: s.DenyRead,
		Protected:   append(append([]string(nil), s.Protected...), s.DenyWrite...),
		UnixSockets: s.UnixSockets, AllUnixSockets: s.AllUnixSockets,
	}
	if s.Disabled {
		p.Mode = sandbox.FullAccess
	}
	if p.Mode == sandbox.WorkspaceWrite {
		p.Write, p.WriteInside = s.AllowWrite, s.ProjectWrite
	}
	if s.LocalBinding && p.Network == sandbox.NetNone {
		p.Network = sandbox.NetLoopback // binding locally needs a network of its own
	}
	return p
}

// overlay applies an MCP server's or a header helper's own profile.
func overlay(base sandbox.Profile, p *config.SandboxProfile) sandbox.Profile {
	if p == nil {
		return base
	}
	if p.Mode != nil {
		base.Mode = *p.Mode
	}
	if p.Network != nil {
		base.Network = *p.Network
	}
	base.Write = append(append([]string(nil), base.Write...), p.AllowWrite...)
	base.AllowRead = append(append([]string(nil), base.AllowRead...), p.AllowRead...)
	return base
}

// serverProfile: a stdio MCP server runs in the session's mode without
// network, unless its definition's sandbox says otherwise (part of its
// approval fingerprint).
func serverProfile(s config.SandboxSettings, d *config.ServerDef) sandbox.Profile {
	base := BashProfile(s)
	base.Network = sandbox.NetNone
	return overlay(base, d.Sandbox)
}

// helperProfile: a header helper reads but writes nothing of the
// workspace and has no network, unless its mcpHeaderHelpers entry says
// otherwise.
func helperProfile(s config.SandboxSettings, h *config.HeaderHelper) sandbox.Profile {
	base := BashProfile(s)
	if base.Mode != sandbox.FullAccess {
		base.Mode = sandbox.ReadOnly
	}
	base.Network, base.Write = sandbox.NetNone, nil
	return overlay(base, h.Sandbox)
}

// sessionSandbox is a started session's sandbox.
type sessionSandbox struct {
	box      *sandbox.Box // nil when the sandbox is off
	settings config.SandboxSettings
	state    SandboxState
	// transcript receives the records once it exists.
	transcript atomic.Pointer[Transcript]
}

// sandboxStart is what newSessionSandbox needs.
type sandboxStart struct {
	home, ws, id string
	settings     config.SandboxSettings
	notice       func(string)
}

// openSandbox makes a workspace session's sandbox from its settings and
// the --sandbox flag, and says the degrade banner (docs/sandbox.md,
// "Degrading") among the startup notices.
func openSandbox(opts StartOptions, s *config.Settings, ws, home string) (*sessionSandbox, error) {
	sbs, err := SandboxSettings(s.Sandbox, opts.SandboxMode)
	if err != nil {
		return nil, err
	}
	sbs.DenyRead = append(sbs.DenyRead[:len(sbs.DenyRead):len(sbs.DenyRead)], opts.SandboxDenyRead...)
	notice := opts.Notice
	if notice == nil {
		notice = func(string) {}
	}
	ss, err := newSessionSandbox(sandboxStart{home: home, ws: ws, id: NewID(), settings: sbs, notice: notice})
	if err != nil {
		return nil, err
	}
	if ss.state.Banner != "" {
		notice(ss.state.Banner)
	}
	return ss, nil
}

// record writes a sandbox record to the transcript (docs/reference/runtime.md,
// "Transcripts"; docs/sandbox.md, "What is recorded").
func (ss *sessionSandbox) record(r sandbox.Record) {
	if t := ss.transcript.Load(); t != nil {
		t.write(sandboxRecord{Type: "sandbox", Record: r})
	}
}

// prompter wraps the session's prompter so that escalation answers are
// recorded; nil stays nil (nobody can answer).
func (ss *sessionSandbox) prompter(p Prompter) Prompter {
	if p == nil || ss.box == nil {
		return p
	}
	return escalationPrompter{Prompter: p, ss: ss}
}

// newSessionSandbox makes the session's box, unless the sandbox is off,
// and works out the degrade rules.
func newSessionSandbox(o sandboxStart) (*sessionSandbox, error) {
	s := o.settings
	ss := &sessionSandbox{settings: s, state: SandboxState{Mode: s.ModeName(), Network: BashProfile(s).Network.String(), Tier: "none"}}
	if s.Disabled || s.Mode == sandbox.FullAccess {
		ss.state.Network = "host"
		return ss, nil
	}
	box, err := sandbox.New(sandbox.Options{
		Home: o.home, Workspace: o.ws, ID: o.id, Protected: BashProfile(s).Protected,
		RunDirs: []string{RunDir(o.home, os.LookupEnv)},
		Record:  ss.record, Notice: o.notice,
	})
	if err != nil {
		return nil, fmt.Errorf("the sandbox: %w", err)
	}
	ss.box = box
	sup := box.Support()
	ss.state.Tier = sup.Tier()
	if !sup.Filesystem() {
		ss.state.Tier = "none"
		if s.FailIfUnavailable {
			ss.state.Banner = "sandbox unavailable: this kernel gives no file-system confinement (no Landlock), and failIfUnavailable is set: Bash commands are refused ('agent sandbox check' says more)"
		} else {
			ss.state.Banner = "sandbox unavailable: this kernel gives no file-system confinement (no Landlock), so commands run unconfined and every command goes through the permission rules ('agent sandbox check' says more)"
		}
	}
	return ss, nil
}

// bash is the Bash tool's sandbox; nil when the sandbox is off.
func (ss *sessionSandbox) bash() *tools.BashSandbox {
	if ss.box == nil {
		return nil
	}
	return &tools.BashSandbox{
		Box: ss.box, Profile: BashProfile(ss.settings), Excluded: ss.settings.Excluded,
		Escalation: ss.settings.AllowUnsandboxed, FailIfUnavailable: ss.settings.FailIfUnavailable,
	}
}

// env is the Bash tool's environment: the process's, scrubbed, with the
// private folders; nil (the process's own) when the sandbox is off.
func (ss *sessionSandbox) env() []string {
	if ss.box == nil {
		return nil
	}
	keys := make([]string, 0, len(config.APIKeyEnv))
	for _, k := range config.APIKeyEnv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return ss.box.Env(os.Environ(), keys)
}

// autoAllow says whether autoAllowBashIfSandboxed applies: not when the
// kernel gives no file-system confinement (docs/sandbox.md, "Degrading").
func (ss *sessionSandbox) autoAllow() bool {
	return ss.box != nil && ss.settings.AutoAllowBash && ss.box.Support().Filesystem()
}

// mcpSandbox confines stdio servers and header helpers; nil when off.
func (ss *sessionSandbox) mcpSandbox() *mcp.Sandbox {
	if ss.box == nil {
		return nil
	}
	s := ss.settings
	return &mcp.Sandbox{
		Box:           ss.box,
		ServerProfile: func(d *config.ServerDef) sandbox.Profile { return serverProfile(s, d) },
		HelperProfile: func(h *config.HeaderHelper) sandbox.Profile { return helperProfile(s, h) },
	}
}

func (ss *sessionSandbox) close() {
	if ss != nil && ss.box != nil {
		ss.box.Close()
	}
}

// onEscalation records the permission check's decisions about calls that
// ask to leave the sandbox: denials by rule or mode, and, where nobody can
// answer, the denial that follows.
func (ss *sessionSandbox) onEscalation(headless bool) func(tools.Target, Verdict) {
	return func(t tools.Target, v Verdict) {
		if ss.box == nil {
			return
		}
		switch {
		case v.Decision == Deny:
			ss.box.RecordEscalation("Bash", t.Value, t.Escalation, "denied: "+v.Reason)
		case v.Decision == Ask && headless:
			ss.box.RecordEscalation("Bash", t.Value, t.Escalation, "denied: nobody can answer")
		}
	}
}

// escalationPrompter records the user's answers to escalations and passes
// every question on.
type escalationPrompter struct {
	Prompter
	ss *sessionSandbox
}

func (p escalationPrompter) AskPermission(ctx context.Context, req PermissionRequest) (Answer, error) {
	ans, err := p.Prompter.AskPermission(ctx, req)
	if req.Target.Escalation != "" && p.ss.box != nil {
		decision := "allowed by the user, once"
		switch {
		case err != nil:
			decision = "denied: not answered"
		case ans == DenyOnce:
			decision = "denied by the user"
		}
		p.ss.box.RecordEscalation("Bash", req.Target.Value, req.Target.Escalation, decision)
	}
	return ans, err
}

// sandboxRecord is the transcript's record of a sandbox event
// (docs/reference/runtime.md, "Transcripts").
type sandboxRecord struct {
	Type string `json:"type"` // "sandbox"
	sandbox.Record
}

// Sandbox is what front ends show of the session's sandbox.
func (c *WorkspaceSession) Sandbox() SandboxState {
	if c.sandbox == nil {
		return SandboxState{Mode: "off", Tier: "none"}
	}
	return c.sandbox.state
}
