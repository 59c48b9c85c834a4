package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"agent/agent"
	"agent/internal/elicit"
	"agent/tui/keymap"
	"agent/tui/keys"
	"agent/tui/screen"
)

// exitWindow is how soon a second Ctrl-C must follow the first to exit
// (docs/reference/cli.md, "The interactive session").
const exitWindow = 2 * time.Second

// spinnerEvery is the animation step of the thinking indicator.
const spinnerEvery = 120 * time.Millisecond

// entryKind says what a transcript entry shows.
type entryKind uint8

const (
	entUser entryKind = iota
	entAssistant
	entReasoning
	entTool
	entNotice
	entError
	entOutput // a slash command's output
)

// entry is one item of the transcript. Its laid-out lines are cached per
// width; only an entry that changed is laid out again (the streaming one).
type entry struct {
	kind        entryKind
	turn        string
	text        string
	interrupted bool
	tool        *toolEntry

	cacheW  int
	cacheOK bool
	// The laid-out stable part of a streaming answer (see markdown).
	stable    []screen.Line
	stableLen int
	stableW   int
	cache     []screen.Line
	finished  bool
}

type toolEntry struct {
	callID, name, args string
	done, isError      bool
	denied             bool
	content, display   string
	// While it runs: when it started and its output's last lines.
	started      time.Time
	live         string
	shownElapsed time.Duration // the elapsed time last laid out, whole seconds
	progress     string        // what the running call last reported
	// sub is what a subagent this call runs is doing: its tool calls as
	// they run, then its figures line.
	sub *subView
}

// subView is a running subagent inside its Agent call's block.
type subView struct {
	agent   string   // its type and task
	calls   []string // its tool calls, newest last
	summary string   // the figures line, when it ended
}

func (e *entry) changed() { e.cacheOK = false }

// permPrompt is an open permission question (four answers:
// docs/reference/runtime.md, "Permission prompts"; Escape does nothing on
// this screen: docs/reference/keybindings.md, "Defaults").
type permPrompt struct {
	req   agent.PermissionRequest
	reply chan agent.Answer
	ctx   context.Context
	sel   int
	// The preview's lines at bodyW and how far they are scrolled
	// (permview.go).
	scroll int
	body   []screen.Line
	bodyW  int
}

type permChoice struct {
	label  string
	answer agent.Answer
}

var permChoices = []permChoice{
	{"Allow once", agent.AllowOnce},
	{"Allow for this session", agent.AllowSession},
	{"Allow for this project", agent.AllowProject},
	{"Deny", agent.DenyOnce},
}

// escalationChoices are the answers to a command that asks to leave the
// sandbox: once, or not at all (docs/sandbox.md, "Escalation": never
// remembered).
var escalationChoices = []permChoice{
	{"Allow once, for this command only", agent.AllowOnce},
	{"Deny", agent.DenyOnce},
}

// escalation reports whether the question asks to leave the sandbox.
func (p *permPrompt) escalation() bool { return p.req.Target.Escalation != "" }

func (p *permPrompt) choices() []permChoice {
	if p.escalation() {
		return escalationChoices
	}
	return permChoices
}

// confirmPrompt is a yes/no question.
type confirmPrompt struct {
	title, question string
	yes             bool // the selected choice; No is the default
	reply           func(yes bool)
	// cancel, when set, is what Ctrl-C does on this screen (an MCP
	// server's question is cancelled, elicit.go).
	cancel func()
}

// textPrompt asks for one value; masked hides it. detail is text shown
// under the title (an MCP server's question and the field's description).
type textPrompt struct {
	title  string
	detail string
	masked bool
	buf    []rune
	reply  func(v string, ok bool)
}

type queuedTurn struct{ id, prompt string }

// state is everything the UI shows; only the loop touches it.
type state struct {
	// early holds prompts submitted before the session started.
	early   []string
	now     func() time.Time
	km      *keys.Keymap
	matcher *keys.Matcher
	dirty   bool
	exit    int // -1 while running
	kitty   bool

	session    Session
	status     Status
	runCommand func(words []string)

	entries  []*entry
	scroll   int // rows scrolled up from the bottom
	comp     composer
	busy     bool
	turn     string
	queued   []queuedTurn
	recovery string // the prompt of the failed turn, "" when none
	ctxTok   int    // context use: tokens of the latest request and what came since
	ctxWin   int    // the model's context window; 0: unknown
	ctxGuess bool   // the window is inferred from a refusal
	// compacting is the notice of the compaction that runs, if one does.
	compacting *entry
	// hookStatus is a running hook's statusMessage.
	hookStatus string
	spin       int
	spinAt     time.Time

	ac *autocomplete

	perm       *permPrompt
	confirm    *confirmPrompt
	textPrompt *textPrompt
	// elicits are MCP servers' questions, the one asked first
	// (elicit.go).
	elicits []*elicitRun

	// The list screens, the focused one last (list.go).
	screens []*listScreen
	hooks   Hooks
	// commands runs the slash commands the UI does not run itself.
	commands CommandRunner
	// spawn runs work off the loop and applies its result on it;
	// holdMain keeps the main session's events aside while a background
	// session is shown; releaseMain applies them on the way back.
	holdMain, releaseMain func()
	// replaceMain makes another session the main one (/resume).
	replaceMain func(Session)
	// resubscribe moves the observer to a switched-to session.
	spawn       func(fn func(ctx context.Context) func())
	resubscribe func(Session)
	histLoaded  []HistoryPrompt
	histLoading bool

	th uiTheme
	ui UISettings
	// daily is the todo list, @path completion and the editor (daily.go).
	daily dailyUI
	// editPrompt runs the editor of Ctrl+G on the text (App.editPrompt);
	// nil where there is no terminal to hand over.
	editPrompt func(command, text string)
	// main is the main session while a background one is attached.
	main *attached

	lastCtrlC time.Time
	hint      string // a transient footer message (Ctrl-C again …)
	hintUntil time.Time
}

func newState(km *keys.Keymap, now func() time.Time) *state {
	if km == nil {
		km = keys.Defaults()
	}
	s := &state{now: now, km: km, matcher: keys.NewMatcher(km), exit: -1, dirty: true}
	s.applyUI(UISettings{})
	return s
}

// notice adds a line of outside text (sanitised when laid out).
func (s *state) notice(text string) {
	s.entries = append(s.entries, &entry{kind: entNotice, text: text, finished: true})
	s.dirty = true
}

// contexts returns the keybinding contexts in focus, the focused one first
// (docs/reference/keybindings.md, "Which context handles a key"): a prompt
// screen takes every key; otherwise the autocomplete menu, then (with an
// empty composer) the queued prompt and recovery, the composer, thinking
// while a turn runs, and app.
func (s *state) contexts() []keys.Context {
	switch {
	case s.perm != nil:
		return []keys.Context{keys.PermissionPrompt}
	case s.confirm != nil:
		return []keys.Context{keys.ConfirmPrompt}
	case s.textPrompt != nil:
		return []keys.Context{keys.TextPrompt}
	case len(s.screens) > 0:
		return []keys.Context{s.top().ctx}
	}
	cs := make([]keys.Context, 0, 6)
	if s.ac != nil && s.ac.open() {
		cs = append(cs, keys.AutocompleteMenu)
	}
	if len(s.comp.buf) == 0 {
		if len(s.queued) > 0 {
			cs = append(cs, keys.QueuedPrompt)
		}
		if s.recovery != "" && !s.busy {
			cs = append(cs, keys.Recovery)
		}
	}
	if s.comp.multiline() {
		cs = append(cs, keys.TextInput)
	} else {
		cs = append(cs, keys.ChatInput)
	}
	if s.busy {
		cs = append(cs, keys.Thinking)
	}
	return append(cs, keys.App)
}

var ctrlC = keys.Stroke{Key: 'c', Mod: keys.ModCtrl}

// key handles one key press: Ctrl-C first (it cannot be bound,
// docs/reference/keybindings.md, "Which context handles a key"), then the
// keymap of the contexts in focus, then typing.
func (s *state) key(ev keys.Event) {
	s.dirty = true
	if s.daily.editing {
		return // keys read before the editor took the terminal
	}
	now := s.now()
	if ev.Stroke == ctrlC {
		s.interrupt(now)
		return
	}
	m := s.matcher.Press(now, ev.Stroke, s.contexts()...)
	switch m.Outcome {
	case keys.Matched:
		s.action(m.Context, m.Action)
		return
	case keys.Started, keys.Cancelled:
		return
	}
	s.unbound(ev)
}

// interrupt is Ctrl-C: once aborts the running turn (or clears the
// composer), twice within 2 s exits (docs/reference/cli.md, "The
// interactive session").
func (s *state) interrupt(now time.Time) {
	if !s.lastCtrlC.IsZero() && now.Sub(s.lastCtrlC) < exitWindow {
		s.exit = ExitInterrupted
		return
	}
	s.lastCtrlC = now
	s.matcher.Cancel()
	switch {
	case s.perm != nil:
		s.answerPermission(agent.DenyOnce)
		if s.session != nil {
			s.session.Abort()
		}
	case len(s.elicits) > 0 && s.elicits[0].onScreen(s):
		// A server's question is dismissed; the turn that waits for it
		// goes on (the server decides what a cancelled question means).
		s.finishElicit(s.elicits[0], elicit.Result{Action: elicit.Cancel})
	case s.confirm != nil && s.confirm.cancel != nil:
		s.confirm.cancel()
	case s.busy && s.session != nil:
		s.session.Abort()
	case s.textPrompt != nil:
		tp := s.textPrompt
		s.textPrompt = nil
		tp.reply("", false)
	case len(s.screens) > 0:
		l := s.top()
		s.pop()
		if l.closed != nil {
			l.closed(s, l)
		}
	case len(s.comp.buf) > 0:
		s.comp.reset()
		s.ac = nil
	}
	s.setHint("Press Ctrl-C again to exit", now.Add(exitWindow))
}

func (s *state) setHint(h string, until time.Time) {
	s.hint, s.hintUntil = h, until
}

// unbound handles a key no binding claimed: typing in a text context,
// and the fixed navigation keys of the transcript.
func (s *state) unbound(ev keys.Event) {
	switch {
	case s.textPrompt != nil:
		if ev.Rune != 0 {
			s.textPrompt.buf = append(s.textPrompt.buf, ev.Rune)
		}
		return
	case s.perm != nil && s.permScroll(ev):
		return
	case s.perm != nil || s.confirm != nil:
		return
	case len(s.screens) > 0:
		s.top().typed(ev)
		return
	}
	if ev.Rune != 0 {
		s.comp.insert(string(ev.Rune))
		s.composerChanged()
		return
	}
	switch ev.Stroke {
	case keys.Stroke{Key: keys.KeyHome}:
		s.comp.home()
	case keys.Stroke{Key: keys.KeyEnd}:
		s.comp.end()
	case keys.Stroke{Key: keys.KeyPageUp}:
		s.scroll += 10
	case keys.Stroke{Key: keys.KeyPageDown}:
		s.scroll = max(s.scroll-10, 0)
	case keys.Stroke{Key: keys.KeyEnter, Mod: keys.ModAlt}, keys.Stroke{Key: keys.KeyEnter, Mod: keys.ModShift}:
		s.comp.insert("\n") // a line break in the prompt
		s.composerChanged()
	case editorKey:
		s.openEditor()
	}
}

// paste inserts bracketed-paste text, never as keys.
func (s *state) paste(text string) {
	s.dirty = true
	switch {
	case s.textPrompt != nil:
		s.textPrompt.buf = append(s.textPrompt.buf, []rune(strings.ReplaceAll(text, "\n", ""))...)
	case s.perm != nil || s.confirm != nil:
	case len(s.screens) > 0:
		if l := s.top(); l.search {
			l.query = append(l.query, []rune(strings.ReplaceAll(text, "\n", " "))...)
			if len(l.query) > 256 {
				l.query = l.query[:256]
			}
			l.filter()
		}
	default:
		s.comp.insert(text)
		s.composerChanged()
	}
}

func (s *state) composerChanged() {
	prev := s.ac
	s.ac = s.autocompleteFor(s.comp.text(), s.comp.cur, s.ac)
	if s.ac == nil {
		s.ac = s.fileMenu(prev) // @path completion of workspace files (mention.go)
	}
}

// action runs a bound action of a context.
func (s *state) action(c keys.Context, a keys.Action) {
	if l := s.top(); l != nil && c == l.ctx && s.perm == nil && s.confirm == nil && s.textPrompt == nil {
		s.listAction(l, a)
		return
	}
	switch c {
	case keys.PermissionPrompt:
		s.permAction(a)
	case keys.ConfirmPrompt:
		s.confirmAction(a)
	case keys.TextPrompt:
		s.textAction(a)
	case keys.AutocompleteMenu:
		s.autocompleteAction(a)
	case keys.QueuedPrompt:
		if a == keys.ActCancel && len(s.queued) > 0 {
			s.session.CancelQueued(s.queued[len(s.queued)-1].id)
		}
	case keys.Recovery:
		if a == keys.ActRetry && s.recovery != "" {
			p := s.recovery
			s.recovery = ""
			s.submit(p)
		}
	case keys.Thinking:
		if a == keys.ActAbort && s.session != nil {
			s.session.Abort()
		}
	case keys.ChatInput:
		s.chatAction(a)
	case keys.TextInput:
		s.textInputAction(a)
	case keys.App:
		if a == keys.ActOpenWorkspaceSwitcher {
			s.openSwitcher()
		}
	}
}

func (s *state) chatAction(a keys.Action) {
	c := &s.comp
	switch a {
	case keys.ActSubmit:
		text := c.text()
		if strings.TrimSpace(text) == "" {
			return
		}
		c.remember(text)
		c.reset()
		s.ac = nil
		s.scroll = 0
		if strings.HasPrefix(text, "/") {
			s.command(text)
			return
		}
		s.recovery = ""
		s.submit(text)
		return
	case keys.ActHistoryPrevious:
		c.previous()
	case keys.ActHistoryNext:
		c.next()
	case keys.ActHistorySearch:
		s.openHistorySearch()
		return
	case keys.ActCursorLeft:
		c.left()
	case keys.ActCursorRight:
		c.right()
	case keys.ActDeleteBackward:
		c.deleteBackward()
	case keys.ActDeleteWord:
		c.deleteWord()
	case keys.ActDeleteLine:
		c.deleteLine()
	}
	s.composerChanged()
}

// textInputAction edits a multi-line entry (the text-input actions of
// docs/reference/keybindings.md, "Defaults"): the arrows move the cursor in
// the text; submit sends it.
func (s *state) textInputAction(a keys.Action) {
	c := &s.comp
	switch a {
	case keys.ActSubmit, keys.ActCursorLeft, keys.ActCursorRight, keys.ActDeleteBackward, keys.ActDeleteWord, keys.ActDeleteLine:
		s.chatAction(a)
		return
	case keys.ActCursorUp:
		if !c.up() {
			c.previous() // past the first line: the history, as in chat-input
		}
	case keys.ActCursorDown:
		if !c.down() {
			c.next()
		}
	}
	s.composerChanged()
}

// submit sends a prompt to the session; it appears in the transcript when
// its turn starts (until then under the composer, as queued).
func (s *state) submit(prompt string) {
	if s.session == nil {
		// The session is still starting: keep the prompt for it.
		if len(s.early) < 32 {
			s.early = append(s.early, prompt)
		}
		return
	}
	if _, err := s.session.Submit(prompt); err != nil {
		s.entries = append(s.entries, &entry{kind: entError, text: "The prompt was not sent: " + err.Error(), finished: true})
	}
	s.dirty = true
}

func (s *state) permAction(a keys.Action) {
	p := s.perm
	cs := p.choices()
	switch a {
	case keys.ActPrevious:
		p.sel = (p.sel + len(cs) - 1) % len(cs)
	case keys.ActNext:
		p.sel = (p.sel + 1) % len(cs)
	case keys.ActConfirm:
		s.answerPermission(cs[p.sel].answer)
	case keys.ActAllowOnce:
		s.answerPermission(agent.AllowOnce)
	case keys.ActAllowSession:
		if !p.escalation() {
			s.answerPermission(agent.AllowSession)
		}
	case keys.ActAllowProject:
		if !p.escalation() {
			s.answerPermission(agent.AllowProject)
		}
	case keys.ActDeny:
		s.answerPermission(agent.DenyOnce)
	}
}

func (s *state) askPermission(p *permPrompt) {
	if s.perm != nil {
		// One question at a time: the session asks in order, so a second
		// one can only come from a concurrent caller; it is denied.
		p.reply <- agent.DenyOnce
		return
	}
	s.perm = p
	s.matcher.Cancel()
	s.dirty = true
}

func (s *state) answerPermission(ans agent.Answer) {
	if s.perm == nil {
		return
	}
	s.perm.reply <- ans
	s.perm = nil
	s.dirty = true
}

func (s *state) withdrawPermission(p *permPrompt) {
	if s.perm == p {
		s.perm = nil
		s.dirty = true
	}
}

func (s *state) confirmAction(a keys.Action) {
	c := s.confirm
	switch a {
	case keys.ActPrevious, keys.ActNext:
		c.yes = !c.yes
		return
	case keys.ActConfirm:
	case keys.ActChooseYes:
		c.yes = true
	case keys.ActChooseNo:
		c.yes = false
	default:
		return
	}
	s.confirm = nil
	c.reply(c.yes)
}

func (s *state) textAction(a keys.Action) {
	t := s.textPrompt
	switch a {
	case keys.ActSubmit:
		s.textPrompt = nil
		t.reply(string(t.buf), true)
	case keys.ActCancel:
		s.textPrompt = nil
		t.reply("", false)
	case keys.ActDeleteBackward:
		if len(t.buf) > 0 {
			t.buf = t.buf[:len(t.buf)-1]
		}
	}
}

// keymapUpdate applies a change of the overrides file: valid bindings apply
// at once; problems show once as notices (docs/reference/keybindings.md,
// "Location and loading").
func (s *state) keymapUpdate(u keymap.Update) {
	if u.Keymap != nil && u.Keymap != s.km {
		s.km = u.Keymap
		s.matcher.SetKeymap(u.Keymap)
	}
	for _, n := range u.Notices {
		s.notice(n)
	}
	s.dirty = true
}

// event applies one session event to the transcript.
func (s *state) event(ev agent.Event) {
	s.dirty = true
	switch ev.Kind {
	case agent.EventQueued:
		s.queued = append(s.queued, queuedTurn{ev.Turn, fromLabel(ev.From) + ev.Text})
	case agent.EventCancelled:
		s.dropQueued(ev.Turn)
	case agent.EventTurnStart:
		s.dropQueued(ev.Turn)
		s.busy, s.turn = true, ev.Turn
		s.spinAt = s.now()
		if ev.From != "" {
			// Not the user's prompt: shown as a replayed one is, with its
			// sender and the claimed name marked as a claim.
			s.entries = append(s.entries, &entry{kind: entNotice, turn: ev.Turn, text: fromLabel(ev.From) + ev.Text, finished: true})
			break
		}
		s.entries = append(s.entries, &entry{kind: entUser, turn: ev.Turn, text: ev.Text, finished: true})
	case agent.EventText, agent.EventReasoning:
		kind := entAssistant
		if ev.Kind == agent.EventReasoning {
			kind = entReasoning
		}
		if n := len(s.entries); n > 0 && s.entries[n-1].kind == kind && s.entries[n-1].turn == ev.Turn && !s.entries[n-1].finished {
			e := s.entries[n-1]
			e.text += ev.Text
			e.changed()
			return
		}
		s.finishStreaming()
		s.entries = append(s.entries, &entry{kind: kind, turn: ev.Turn, text: ev.Text})
	case agent.EventAgentStart, agent.EventAgentEnd:
		s.subagent(ev)
	case agent.EventToolStart:
		if ev.Agent != nil {
			s.subagent(ev)
			break
		}
		s.finishStreaming()
		t := ev.Tool
		s.entries = append(s.entries, &entry{kind: entTool, turn: ev.Turn, tool: &toolEntry{callID: t.CallID, name: t.Name, args: argSummary(t.Args), started: s.now()}})
	case agent.EventToolEnd:
		if ev.Agent != nil {
			break // a subagent's call: its start is shown, its end is not
		}
		for i := len(s.entries) - 1; i >= 0; i-- {
			e := s.entries[i]
			if e.kind == entTool && e.tool.callID == ev.Tool.CallID {
				e.tool.done, e.tool.denied = true, ev.Tool.Denied
				if r := ev.Tool.Result; r != nil {
					e.tool.isError, e.tool.content, e.tool.display = r.IsError, r.Content, r.Display
				}
				e.finished = true
				e.changed()
				break
			}
		}
	case agent.EventToolProgress:
		for i := len(s.entries) - 1; i >= 0; i-- {
			e := s.entries[i]
			if e.kind == entTool && e.tool.callID == ev.Tool.CallID {
				if !e.tool.done {
					e.tool.progress = ev.Tool.Progress
					e.changed()
				}
				break
			}
		}
	case agent.EventUsage:
		if ev.Usage != nil && s.ctxWin == 0 {
			// InputTokens counts the whole prompt, its cached part
			// included (docs/providers.md, "Prompt caching").
			s.ctxTok = ev.Usage.InputTokens + ev.Usage.OutputTokens
		}
	case agent.EventContext:
		if ev.Context != nil {
			s.ctxTok, s.ctxWin, s.ctxGuess = ev.Context.Tokens, ev.Context.Window, ev.Context.Inferred
		}
	case agent.EventCompactStart:
		// Progress while compacting, then the one line after
		// (docs/reference/runtime.md, "Context management").
		s.finishStreaming()
		s.compacting = &entry{kind: entNotice, turn: ev.Turn, text: "Compacting the conversation…"}
		s.entries = append(s.entries, s.compacting)
	case agent.EventCompact:
		e := s.compacting
		if e == nil {
			e = &entry{kind: entNotice, turn: ev.Turn}
			s.entries = append(s.entries, e)
		}
		s.compacting = nil
		e.text, e.finished = ev.Compact.Line(), true
		if ev.Compact.Err != nil {
			e.kind = entError
		}
		e.changed()
	case agent.EventNotice:
		s.notice(ev.Text)
	case agent.EventHookStatus:
		// A running hook's statusMessage shows in the spinner
		// (docs/reference/runtime.md, "Hooks").
		s.hookStatus = ev.Text
	case agent.EventHookFailure:
		s.notice("hook failed: " + ev.Text)
	case agent.EventComplete:
		s.endTurn()
	case agent.EventInterrupted:
		// Abort keeps the partial reply, marked interrupted
		// (docs/reference/keybindings.md, "Contexts": thinking).
		marked := false
		for i := len(s.entries) - 1; i >= 0 && s.entries[i].turn == ev.Turn; i-- {
			if e := s.entries[i]; e.kind == entAssistant {
				e.interrupted, marked = true, true
				e.changed()
				break
			}
		}
		if !marked {
			s.entries = append(s.entries, &entry{kind: entNotice, turn: ev.Turn, text: "Interrupted.", finished: true})
		}
		s.endTurn()
	case agent.EventError:
		if errors.Is(ev.Err, agent.ErrCompactFailed) {
			s.endTurn() // /compact's failure: said by the compaction's line
			break
		}
		msg := "The turn failed."
		if ev.Err != nil {
			msg = "The turn failed: " + ev.Err.Error()
		}
		s.entries = append(s.entries, &entry{kind: entError, turn: ev.Turn, text: msg, finished: true})
		for i := len(s.entries) - 1; i >= 0; i-- {
			if e := s.entries[i]; e.kind == entUser && e.turn == ev.Turn {
				s.recovery = e.text
				break
			}
		}
		s.endTurn()
	case agent.EventBackground:
		s.notice(ev.Text)
	case agent.EventTodos:
		s.daily.todos = ev.Todos
	case agent.EventToolOutput:
		s.toolOutput(ev)
	}
}

// subagent shows a subagent's progress inside the block of the Agent call
// that runs it (docs/reference/runtime.md, "Subagents, commands and
// skills").
func (s *state) subagent(ev agent.Event) {
	for i := len(s.entries) - 1; i >= 0; i-- {
		e := s.entries[i]
		if e.kind != entTool || e.tool.callID != ev.Agent.CallID {
			continue
		}
		if e.tool.sub == nil {
			e.tool.sub = &subView{agent: ev.Agent.Type + ": " + ev.Agent.Description}
		}
		switch ev.Kind {
		case agent.EventToolStart:
			e.tool.sub.calls = append(e.tool.sub.calls, ev.Tool.Name+"("+argSummary(ev.Tool.Args)+")")
			if n := len(e.tool.sub.calls); n > maxSubCalls {
				e.tool.sub.calls = e.tool.sub.calls[n-maxSubCalls:]
			}
		case agent.EventAgentEnd:
			e.tool.sub.summary = ev.Text
		}
		e.changed()
		return
	}
}

// maxSubCalls is how many of a running subagent's calls its block shows.
const maxSubCalls = 5

func (s *state) finishStreaming() {
	if n := len(s.entries); n > 0 && !s.entries[n-1].finished {
		s.entries[n-1].finished = true
		s.entries[n-1].changed()
	}
}

func (s *state) endTurn() {
	s.finishStreaming()
	s.busy, s.turn = false, ""
}

func (s *state) dropQueued(id string) {
	for i, q := range s.queued {
		if q.id == id {
			s.queued = append(s.queued[:i], s.queued[i+1:]...)
			return
		}
	}
}

// argSummary shows a tool call's arguments on one line: the values of a
// JSON object, or the raw text (sanitised when drawn).
func argSummary(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return string(raw)
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, k := range names {
		v := m[k]
		switch v := v.(type) {
		case string:
			parts = append(parts, fmt.Sprintf("%s: %s", k, v))
		default:
			b, _ := json.Marshal(v)
			parts = append(parts, fmt.Sprintf("%s: %s", k, b))
		}
	}
	return strings.Join(parts, ", ")
}

// nextDeadline is when the loop must wake without an event: the spinner
// while a turn runs, a pending chord's timeout, the end of the Ctrl-C
// hint. Idle, there is none: no CPU is used.
func (s *state) nextDeadline() (time.Time, bool) {
	var d time.Time
	set := func(t time.Time) {
		if d.IsZero() || t.Before(d) {
			d = t
		}
	}
	if s.busy && !s.ui.ReducedMotion {
		set(s.spinAt.Add(spinnerEvery))
	}
	if t, ok := s.matcher.Deadline(); ok {
		set(t)
	}
	if s.hint != "" {
		set(s.hintUntil)
	}
	return d, !d.IsZero()
}

func (s *state) tick(now time.Time) {
	if s.busy && !now.Before(s.spinAt.Add(spinnerEvery)) {
		s.spin++
		s.spinAt = now
		s.dirty = true
	}
	if s.matcher.Expire(now) {
		s.dirty = true
	}
	if s.hint != "" && !now.Before(s.hintUntil) {
		s.hint = ""
		s.dirty = true
	}
	s.refreshRunning(now)
}

// command runs a slash command typed in the composer.
func (s *state) command(line string) {
	words := strings.Fields(line)
	switch words[0] {
	case "/exit", "/quit":
		s.exit = ExitOK
	case "/help":
		var b strings.Builder
		b.WriteString("Commands:\n")
		for _, c := range append(slashCommands[:len(slashCommands):len(slashCommands)], s.extraCommands()...) {
			fmt.Fprintf(&b, "  %-22s %s\n", c.text, c.help)
		}
		s.output(b.String())
	case "/clear":
		s.clearConversation()
	case "/resume":
		s.openResume()
	case "/model":
		s.openModel()
	case "/permissions":
		s.openPermissions()
	case "/background":
		s.openBackground()
	case "/settings":
		s.openTransports()
	case "/theme":
		s.openTheme()
	case "/rewind":
		s.openRewind()
	case "/mcp":
		if len(words) == 2 && words[1] == "approve" && s.hooks.PendingMCP != nil {
			s.openMCPApprove()
			return
		}
		if s.runCommand != nil {
			s.runCommand(words)
		}
	default:
		if !knownCommand(words[0], s.extraCommands()) {
			s.notice(fmt.Sprintf("Unknown command %s (see /help).", words[0]))
			return
		}
		if s.runCommand != nil {
			s.runCommand(words)
		}
	}
	s.dirty = true
}

func (s *state) output(text string) {
	s.entries = append(s.entries, &entry{kind: entOutput, text: strings.TrimRight(text, "\n"), finished: true})
	s.dirty = true
}

func (s *state) commandResult(words []string, out string, err error) {
	switch {
	case errors.Is(err, agent.ErrUsage):
		s.notice("Usage: " + strings.TrimPrefix(err.Error(), agent.ErrUsage.Error()+": "))
	case err != nil:
		s.entries = append(s.entries, &entry{kind: entError, text: strings.Join(words, " ") + ": " + err.Error(), finished: true})
	case out != "":
		s.output(out)
	}
	s.dirty = true
}
