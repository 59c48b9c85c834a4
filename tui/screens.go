package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"agent/agent"
	"agent/agent/tools"
	"agent/config"
	"agent/tui/keys"
)

// The option types of the screens. The UI may not import the providers, mcp
// or serve packages (docs/design.md, "The terminal UI reaches the rest
// through hooks"): cmd_interactive.go fills these hooks with plain data and
// small functions.

// SessionSummary is one stored session for /resume's list-picker.
type SessionSummary struct {
	ID       string
	Title    string // the first prompt (outside text)
	Modified time.Time
}

// Switched is the result of a session switch: the new session, its status
// line and the stored conversation to rebuild the transcript from.
type Switched struct {
	Session  Session
	Status   Status
	Messages []ReplayMessage
}

// ReplayMessage is one piece of a stored conversation to show again: a
// user prompt (From names an external sender), the assistant's text, or a
// tool call. cmd_interactive.go converts agent.LoadTranscript's Messages.
type ReplayMessage struct {
	Turn     string
	User     bool
	From     string
	Text     string
	Tool     string
	ToolArgs json.RawMessage
}

// ProviderModels is one provider of /model's menu: the built-in
// definitions' id, a label and its known models (the default first).
type ProviderModels struct {
	ID, Label string
	Models    []string
}

// TransportState is one serving transport of /settings.
type TransportState struct {
	Name   string // "http"
	Detail string // the address, the token file, or why it cannot run
	On     bool
}

// Transports turns the session's serving transports on and off (the
// transport-settings context; docs/reference/mcp.md, "The /settings
// transport").
type Transports interface {
	Transports() []TransportState
	SetTransport(name string, on bool) error
}

// Hooks are the session-level operations the screens drive; nil fields
// leave their command unavailable (it says so).
type Hooks struct {
	// Sessions lists the stored sessions of this workspace, newest first.
	Sessions func(ctx context.Context) ([]SessionSummary, error)
	// SwitchSession replaces the running session by a resumed one.
	SwitchSession func(ctx context.Context, id string) (Switched, error)
	// NewConversation replaces the running session by a new one in the
	// same workspace (/clear); the old one stays for /resume.
	NewConversation func(ctx context.Context) (Switched, error)
	// Providers is /model's catalog; SetModel switches the model.
	Providers []ProviderModels
	SetModel  func(ctx context.Context, provider, model string) (Status, error)
	// SetMode switches the permission mode; it returns the new status.
	SetMode func(mode string) (Status, error)
	// PendingMCP lists the MCP servers waiting for approval (/mcp approve
	// with no server opens a multi-select of them).
	PendingMCP func(ctx context.Context) ([]string, error)
	// Tasks lists the session's background tasks, newest first.
	Tasks func() []agent.TaskInfo
	// Transports serves /settings.
	Transports Transports
	// History loads prompts of stored sessions, newest first (Ctrl+R's
	// project and all scopes); called once, off the UI loop.
	History func(ctx context.Context) ([]HistoryPrompt, error)
	// Workspace is this session's workspace (history's project scope).
	Workspace string
	// Background lists the live background sessions (workspace
	// switcher); Attach shows one (Ctrl+B, a).
	Background func(ctx context.Context) ([]agent.BackgroundInfo, error)
	Attach     func(ctx context.Context, id string) (Session, Status, error)
	// SaveUI persists the theme picker's choice (~/.agent/tui.json).
	SaveUI func(UISettings) error
	// Todos is the session's todo list (a resumed session's shows at
	// once); Checkpoints and Rewind serve /rewind (rewind.go).
	Todos       func() []tools.Todo
	Checkpoints func() []agent.Checkpoint
	Rewind      func(ctx context.Context, req RewindRequest) (RewindResult, error)
	// Commands lists the session's custom commands and skills for the
	// slash menu and /help; the command runner runs them.
	Commands func() []agent.SlashCommand
	// OpenURL opens an address in the browser, after the user agreed (an
	// MCP server's URL elicitation); nil: the address is shown to open by
	// hand.
	OpenURL func(ctx context.Context, url string) error
	// MCPPrompts lists the MCP prompts offered as slash commands;
	// MCPMentions the @server:uri of the connected servers' resources
	// and templates, for the composer's completion. Both are called on
	// the UI loop and must answer from memory.
	MCPPrompts  func() []agent.PromptCommand
	MCPMentions func() []Mention
}

// Mention is one completion of an @ in the composer: the text it inserts
// and what it is.
type Mention struct {
	Text, Help string
}

// async runs fn off the UI loop and applies its result on the loop.
func (s *state) async(fn func(ctx context.Context) func()) {
	if s.spawn == nil {
		return
	}
	s.spawn(fn)
}

func (s *state) unavailable(cmd string) {
	s.notice(cmd + " is not available in this session.")
}

// ---- /resume: list-picker ----

func (s *state) openResume() {
	if s.hooks.Sessions == nil || s.hooks.SwitchSession == nil {
		s.unavailable("/resume")
		return
	}
	l := &listScreen{ctx: keys.ListPicker, title: "Resume a session", note: loadingNote, empty: "No stored session of this workspace."}
	l.do = func(s *state, l *listScreen, a keys.Action) {
		it, ok := l.current()
		if a != keys.ActSelect || !ok {
			return
		}
		l.note = "switching…"
		s.async(func(ctx context.Context) func() {
			sw, err := s.hooks.SwitchSession(ctx, it.id)
			return func() {
				if err != nil {
					l.note = "Could not resume: " + err.Error()
					return
				}
				s.popScreen(l)
				s.switchTo(sw)
			}
		})
	}
	s.push(l)
	s.async(func(ctx context.Context) func() {
		list, err := s.hooks.Sessions(ctx)
		return func() {
			l.note = ""
			if err != nil {
				l.note = "Could not list the sessions: " + err.Error()
			}
			for _, x := range list {
				title := x.Title
				if title == "" {
					title = "(no prompt)"
				}
				l.items = append(l.items, listItem{id: x.ID, label: title, detail: x.Modified.Format("2006-01-02 15:04") + "  " + x.ID})
			}
		}
	})
}

// switchTo replaces the session and rebuilds the transcript from the
// stored conversation (user prompts and the assistant's text; tool calls
// show by name).
func (s *state) switchTo(sw Switched) {
	if s.main != nil {
		s.backToMain() // detach first: the resumed session becomes the main one
	}
	if s.replaceMain != nil {
		s.replaceMain(sw.Session)
	} else if s.resubscribe != nil {
		s.resubscribe(sw.Session)
	}
	s.session, s.status = sw.Session, sw.Status
	s.entries, s.scroll, s.queued, s.busy, s.turn, s.recovery = nil, 0, nil, false, "", ""
	s.ctxTok, s.ctxWin, s.compacting = 0, 0, nil
	s.closeAll()
	for _, m := range sw.Messages {
		s.replay(m)
	}
	s.daily.todos = nil
	if s.hooks.Todos != nil {
		s.daily.todos = s.hooks.Todos()
	}
	s.notice("Resumed the session " + sw.Status.SessionID + ".")
}

// clearConversation is /clear: a new conversation in a new session; the
// old one stays in the transcript store for /resume. Without the hook it
// clears the screen only.
func (s *state) clearConversation() {
	s.entries, s.scroll = nil, 0
	if s.hooks.NewConversation == nil {
		return
	}
	old := s.status.SessionID
	s.async(func(ctx context.Context) func() {
		sw, err := s.hooks.NewConversation(ctx)
		return func() {
			if err != nil {
				s.entries = append(s.entries, &entry{kind: entError, text: "/clear: " + err.Error(), finished: true})
				return
			}
			s.switchTo(sw)
			s.entries = nil
			s.notice("A new conversation. The previous one is the session " + old + " (/resume).")
		}
	})
}

func (s *state) replay(m ReplayMessage) {
	switch {
	case m.Tool != "":
		s.entries = append(s.entries, &entry{kind: entTool, turn: m.Turn, finished: true,
			tool: &toolEntry{name: m.Tool, args: argSummary(m.ToolArgs), done: true}})
	case m.Text == "":
	case m.User && m.From != "":
		s.entries = append(s.entries, &entry{kind: entNotice, turn: m.Turn, text: fromLabel(m.From) + m.Text, finished: true})
	case m.User:
		s.entries = append(s.entries, &entry{kind: entUser, turn: m.Turn, text: m.Text, finished: true})
	default:
		s.entries = append(s.entries, &entry{kind: entAssistant, turn: m.Turn, text: m.Text, finished: true})
	}
}

// ---- /model and /permissions: menu-select ----

func (s *state) openModel() {
	if len(s.hooks.Providers) == 0 || s.hooks.SetModel == nil {
		s.unavailable("/model")
		return
	}
	l := &listScreen{ctx: keys.MenuSelect, title: "Model: choose a provider"}
	for _, p := range s.hooks.Providers {
		d := p.Label
		if p.ID == s.status.Provider {
			d += " (current)"
		}
		l.items = append(l.items, listItem{id: p.ID, label: p.ID, detail: d})
		if p.ID == s.status.Provider {
			l.sel = len(l.items) - 1
		}
	}
	l.do = func(s *state, l *listScreen, a keys.Action) {
		it, ok := l.current()
		if a == keys.ActSelect && ok {
			s.openModels(l, it.id)
		}
	}
	s.push(l)
}

const otherModel = "\x00other"

func (s *state) openModels(parent *listScreen, provider string) {
	var models []string
	for _, p := range s.hooks.Providers {
		if p.ID == provider {
			models = p.Models
		}
	}
	l := &listScreen{ctx: keys.MenuSelect, title: "Model: " + provider}
	for _, m := range models {
		d := ""
		if provider == s.status.Provider && m == s.status.Model {
			d = "(current)"
		}
		l.items = append(l.items, listItem{id: m, label: m, detail: d})
	}
	l.items = append(l.items, listItem{id: otherModel, label: "Other…", detail: "type a model slug"})
	choose := func(model string) {
		l.note = "switching…"
		s.async(func(ctx context.Context) func() {
			st, err := s.hooks.SetModel(ctx, provider, model)
			return func() {
				if err != nil {
					l.note = err.Error()
					return
				}
				s.popScreen(l)
				s.popScreen(parent)
				s.status = st
				s.notice("The model is now " + provider + " · " + st.Model + ".")
			}
		})
	}
	l.do = func(s *state, l *listScreen, a keys.Action) {
		it, ok := l.current()
		if a != keys.ActSelect || !ok {
			return
		}
		if it.id != otherModel {
			choose(it.id)
			return
		}
		s.textPrompt = &textPrompt{title: "Model slug for " + provider, reply: func(v string, ok bool) {
			if v = strings.TrimSpace(v); ok && v != "" {
				choose(v)
			}
		}}
	}
	s.push(l)
}

var permissionModes = []struct{ mode, help string }{
	{config.ModeDefault, "ask before edits and commands"},
	{config.ModeAcceptEdits, "edits without asking; commands ask"},
	{config.ModePlan, "read-only: plan, change nothing"},
	{config.ModeBypass, "never ask (dangerous)"},
}

func (s *state) openPermissions() {
	if s.hooks.SetMode == nil {
		s.unavailable("/permissions")
		return
	}
	l := &listScreen{ctx: keys.MenuSelect, title: "Permission mode"}
	for _, m := range permissionModes {
		d := m.help
		if m.mode == s.status.Mode {
			d += " (current)"
			l.sel = len(l.items)
		}
		l.items = append(l.items, listItem{id: m.mode, label: m.mode, detail: d})
	}
	l.do = func(s *state, l *listScreen, a keys.Action) {
		it, ok := l.current()
		if a != keys.ActSelect || !ok {
			return
		}
		st, err := s.hooks.SetMode(it.id)
		if err != nil {
			l.note = err.Error()
			return
		}
		s.popScreen(l)
		s.status = st
		s.notice("The permission mode is now " + it.id + ".")
	}
	s.push(l)
}

// ---- /mcp approve: multi-select ----

func (s *state) openMCPApprove() {
	if s.hooks.PendingMCP == nil {
		s.unavailable("/mcp approve without a server")
		return
	}
	l := &listScreen{ctx: keys.MultiSelect, title: "Approve MCP servers", note: loadingNote, empty: "No server is waiting for approval."}
	l.do = func(s *state, l *listScreen, a keys.Action) {
		switch a {
		case keys.ActToggle:
			if l.sel < len(l.items) {
				l.items[l.sel].on = !l.items[l.sel].on
			}
		case keys.ActConfirm:
			var names []string
			for _, it := range l.items {
				if it.on {
					names = append(names, it.id)
				}
			}
			s.popScreen(l)
			if len(names) == 0 {
				s.notice("No server was chosen.")
				return
			}
			if s.commands == nil {
				s.unavailable("/mcp approve")
				return
			}
			// One after the other, in the list's order, through the same
			// command as /mcp approve SERVER.
			s.async(func(ctx context.Context) func() {
				type res struct {
					words []string
					out   string
					err   error
				}
				var rs []res
				for _, n := range names {
					w := []string{"/mcp", "approve", n}
					out, err := s.commands(ctx, w)
					rs = append(rs, res{w, out, err})
				}
				return func() {
					for _, r := range rs {
						s.commandResult(r.words, r.out, r.err)
					}
				}
			})
		}
	}
	s.push(l)
	s.async(func(ctx context.Context) func() {
		names, err := s.hooks.PendingMCP(ctx)
		return func() {
			l.note = ""
			if err != nil {
				l.note = err.Error()
			}
			for _, n := range names {
				l.items = append(l.items, listItem{id: n, label: n})
			}
		}
	})
}

// ---- /background: background-list and background-detail ----

func (s *state) openBackground() {
	if s.hooks.Tasks == nil {
		s.unavailable("/background")
		return
	}
	l := &listScreen{ctx: keys.BackgroundList, title: "Background tasks", empty: "No background task in this session (MCP calls move here after mcp.autoBackgroundMs)."}
	l.items = taskItems(s.hooks.Tasks(), s.now())
	l.do = func(s *state, l *listScreen, a keys.Action) {
		it, ok := l.current()
		if a != keys.ActOpen || !ok {
			return
		}
		id, _ := strconv.Atoi(it.id)
		for _, t := range s.hooks.Tasks() {
			if t.ID == id {
				s.push(&listScreen{ctx: keys.BackgroundDetail, title: taskTitle(t, s.now()), body: taskBody(t)})
			}
		}
	}
	s.push(l)
}

func taskTitle(t agent.TaskInfo, now time.Time) string {
	return fmt.Sprintf("Task %d · %s · %s", t.ID, t.Tool, taskState(t, now))
}

func taskState(t agent.TaskInfo, now time.Time) string {
	if t.State == agent.TaskRunning {
		return "running for " + now.Sub(t.Started).Round(time.Second).String()
	}
	return string(t.State) + " after " + t.Ended.Sub(t.Started).Round(time.Second).String()
}

func taskBody(t agent.TaskInfo) string {
	if t.State == agent.TaskRunning {
		return "Started " + t.Started.Format("15:04:05") + "; the result shows here when the call ends."
	}
	if t.Result == "" {
		return "(no output)"
	}
	return t.Result
}

func taskItems(ts []agent.TaskInfo, now time.Time) []listItem {
	var out []listItem
	for _, t := range ts {
		out = append(out, listItem{id: strconv.Itoa(t.ID), label: fmt.Sprintf("%d  %s", t.ID, t.Tool),
			detail: t.Started.Format("15:04:05") + "  " + taskState(t, now), err: t.State == agent.TaskFailed})
	}
	return out
}

// ---- /settings: transport-settings ----

func (s *state) openTransports() {
	tr := s.hooks.Transports
	if tr == nil {
		s.unavailable("/settings")
		return
	}
	l := &listScreen{ctx: keys.TransportSettings, title: "Serving transports (agent mcp serve)", empty: "This session has no serving transport."}
	refresh := func() {
		l.items = l.items[:0]
		for _, t := range tr.Transports() {
			l.items = append(l.items, listItem{id: t.Name, label: t.Name, detail: t.Detail, on: t.On})
		}
		l.sel = min(l.sel, max(len(l.items)-1, 0))
	}
	refresh()
	l.do = func(s *state, l *listScreen, a keys.Action) {
		it, ok := l.current()
		if a != keys.ActToggle || !ok {
			return
		}
		l.note = ""
		if err := tr.SetTransport(it.id, !it.on); err != nil {
			l.note = err.Error()
		}
		refresh()
	}
	s.push(l)
}

// ---- /theme: theme-picker ----

func (s *state) openTheme() {
	before := s.ui
	l := &listScreen{ctx: keys.ThemePicker, title: "Theme"}
	for i, t := range themes {
		l.items = append(l.items, listItem{id: t.name, label: t.name})
		if t.name == s.th.name {
			l.sel = i
		}
	}
	toggles := func() {
		on := func(b bool) string {
			if b {
				return "on"
			}
			return "off"
		}
		l.note = "syntax highlighting " + on(!s.ui.NoSyntax) + " · motion " + on(!s.ui.ReducedMotion)
	}
	toggles()
	preview := func(s *state, l *listScreen) {
		u := s.ui
		u.Theme = l.items[l.sel].id
		s.applyUI(u)
	}
	l.moved = preview
	l.closed = func(s *state, l *listScreen) { s.applyUI(before) }
	l.do = func(s *state, l *listScreen, a keys.Action) {
		u := s.ui
		switch a {
		case keys.ActToggleSyntax:
			u.NoSyntax = !u.NoSyntax
		case keys.ActToggleMotion:
			u.ReducedMotion = !u.ReducedMotion
		case keys.ActSelect:
			s.popScreen(l)
			if s.hooks.SaveUI != nil {
				if err := s.hooks.SaveUI(s.ui); err != nil {
					s.notice("The theme applies to this session only: " + err.Error())
					return
				}
			}
			s.notice("Theme " + s.ui.Theme + " saved.")
			return
		default:
			return
		}
		s.applyUI(u)
		toggles()
	}
	s.push(l)
}

// ---- Ctrl+B: workspace-switcher ----

// attached is the main session kept aside while a background session is
// attached, so that switching back restores it as it was.
type attached struct {
	session  Session
	status   Status
	entries  []*entry
	busy     bool
	turn     string
	queued   []queuedTurn
	recovery string
}

const mainID = "\x00main"

// subagentID prefixes a running subagent's item in the switcher.
const subagentID = "\x00agent:"

func (s *state) openSwitcher() {
	if s.hooks.Background == nil {
		s.unavailable("The workspace switcher")
		return
	}
	l := &listScreen{ctx: keys.WorkspaceSwitcher, title: "Sessions", note: loadingNote}
	cur := "main"
	if s.main != nil {
		cur = s.status.SessionID
	}
	mainLabel := "main session"
	if s.main == nil {
		mainLabel += " (current)"
	}
	l.items = []listItem{{id: mainID, label: mainLabel}}
	// The subagents running in this session, whose progress shows in
	// their Agent call's block (docs/reference/runtime.md, "Subagents,
	// commands and skills").
	for _, e := range s.entries {
		if e.kind == entTool && e.tool.sub != nil && !e.tool.done {
			l.items = append(l.items, listItem{id: subagentID + e.tool.callID, label: "  agent " + e.tool.sub.agent,
				detail: fmt.Sprintf("a subagent of this session · %d tool calls so far", len(e.tool.sub.calls))})
		}
	}
	l.do = func(s *state, l *listScreen, a keys.Action) {
		it, ok := l.current()
		if !ok || (a != keys.ActSelect && a != keys.ActAttach) {
			return
		}
		if strings.HasPrefix(it.id, subagentID) {
			s.popScreen(l) // its block is in the transcript
			return
		}
		if it.id == mainID {
			s.popScreen(l)
			s.backToMain()
			return
		}
		if it.id == cur {
			s.popScreen(l)
			return
		}
		if s.hooks.Attach == nil {
			l.note = "Attaching to a background session is not available in this build."
			return
		}
		l.note = "attaching…"
		s.async(func(ctx context.Context) func() {
			sess, st, err := s.hooks.Attach(ctx, it.id)
			return func() {
				if err != nil {
					l.note = "Could not attach: " + err.Error()
					return
				}
				s.popScreen(l)
				s.attach(sess, st)
			}
		})
	}
	s.push(l)
	s.async(func(ctx context.Context) func() {
		list, err := s.hooks.Background(ctx)
		return func() {
			l.note = ""
			if err != nil {
				l.note = err.Error()
			}
			for _, b := range list {
				label := b.ID
				if b.Name != "" {
					label = b.Name + " (" + b.ID + ")"
				}
				state := "idle"
				if b.Busy {
					state = "busy"
				}
				if b.Queued > 0 {
					state += fmt.Sprintf(", %d queued", b.Queued)
				}
				if b.ID == cur {
					state += " (current)"
				}
				l.items = append(l.items, listItem{id: b.ID, label: label, detail: b.Workspace + " · " + state})
			}
		}
	})
}

// attach shows a background session in place of the current one; the
// main session keeps running and comes back with backToMain.
func (s *state) attach(sess Session, st Status) {
	if s.main == nil {
		s.main = &attached{session: s.session, status: s.status, entries: s.entries,
			busy: s.busy, turn: s.turn, queued: s.queued, recovery: s.recovery}
		if s.holdMain != nil {
			s.holdMain() // its events wait for the way back, not lost
		}
	} else if d, ok := s.session.(interface{ Close() error }); ok {
		d.Close() // detach from the previous background session
	}
	if s.resubscribe != nil {
		s.resubscribe(sess)
	}
	s.session, s.status = sess, st
	s.entries, s.scroll, s.queued, s.busy, s.turn, s.recovery = nil, 0, nil, false, "", ""
	s.daily.todos = nil // the attached session's come with its events
	s.notice("Attached to the background session " + st.SessionID + ". Ctrl+B switches back.")
}

func (s *state) backToMain() {
	m := s.main
	if m == nil {
		return
	}
	if d, ok := s.session.(interface{ Close() error }); ok {
		d.Close()
	}
	s.main = nil
	if s.resubscribe != nil {
		s.resubscribe(m.session)
	}
	s.session, s.status, s.entries = m.session, m.status, m.entries
	s.scroll, s.queued, s.busy, s.turn, s.recovery = 0, m.queued, m.busy, m.turn, m.recovery
	s.daily.todos = nil
	if s.hooks.Todos != nil {
		s.daily.todos = s.hooks.Todos()
	}
	if s.releaseMain != nil {
		s.releaseMain() // what the main session did meanwhile
	}
	s.notice("Back in the main session.")
}

// fromLabel is the mark of a prompt that is not the user's: "[external:ci] ".
func fromLabel(from string) string {
	if from == "" {
		return ""
	}
	return "[" + from + "] "
}
