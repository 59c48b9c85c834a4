package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"agent/agent"
	"agent/tui/keymap"
	"agent/tui/keys"
	"agent/tui/screen"
)

// Terminal is what the UI needs from the tty (tui/term.TTY; an in-memory
// fake in tests). Read is called from one goroutine, the others from the
// UI loop. A Read with an expired deadline returns an error satisfying
// errors.Is(err, os.ErrDeadlineExceeded); any other Read error ends the UI.
type Terminal interface {
	Read(p []byte) (int, error)
	SetReadDeadline(t time.Time) error
	Write(p []byte) (int, error)
	Size() (w, h int, err error)
}

// Session is the part of a session the UI drives. It must be safe for
// concurrent use; Subscribe's observer is called from the session's
// goroutine and must not block (the UI queues and wakes its loop).
type Session interface {
	Submit(prompt string) (turnID string, err error)
	Abort() bool
	CancelQueued(turnID string) bool
	Subscribe(fn func(agent.Event)) (unsubscribe func())
}

// FromAgent adapts *agent.Session to Session.
func FromAgent(s *agent.Session) Session { return agentSession{s} }

type agentSession struct{ s *agent.Session }

func (a agentSession) Submit(p string) (string, error) {
	t, err := a.s.Submit(agent.UserPrompt(p)) // "!" commands, @path mentions
	if err != nil {
		return "", err
	}
	return t.ID, nil
}
func (a agentSession) Abort() bool                           { return a.s.Abort() }
func (a agentSession) CancelQueued(id string) bool           { return a.s.CancelQueued(id) }
func (a agentSession) Subscribe(fn func(agent.Event)) func() { return a.s.Subscribe(fn) }

// Status is what the status line shows besides the context use.
type Status struct {
	Provider, Model, Mode string
	// Sandbox is the sandbox's mode, or "unavailable" when the kernel
	// cannot confine (docs/sandbox.md, "Degrading"); "" shows nothing.
	Sandbox string
	// SessionID is the session's id (history search's session scope).
	SessionID string
}

// Options configure an App. Terminal is required; the zero value of the
// rest is the default.
type Options struct {
	Terminal Terminal
	// Resize delivers a notice after the window size changed; nil: never.
	Resize <-chan struct{}
	// EnableKitty pushes kitty keyboard flags once the terminal answered
	// the query (tui/term.TTY.EnableKitty); nil: the query is not sent.
	EnableKitty func(flags int) error
	// Keymap is the bindings at start (nil: the defaults); KeymapUpdates
	// delivers changes of the overrides file while the UI runs
	// (tui/keymap.Watcher.Updates, docs/reference/keybindings.md, "Location
	// and loading").
	Keymap        *keys.Keymap
	KeymapUpdates <-chan keymap.Update
	// Notices are shown once at the top of the transcript (startup
	// diagnostics, problems of the keybindings file); unsanitised.
	Notices []string
	// NoColor drops colours (NO_COLOR).
	NoColor bool
	// EscTimeout is how long a lone ESC waits for the rest of a sequence;
	// 0 means 25 ms.
	EscTimeout time.Duration
	// Commands runs the slash commands the UI does not run itself (/mcp
	// …, /keybindings); nil: only the built-in ones.
	Commands CommandRunner
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time
	// Hooks are what the list screens drive (/resume, /model, …); each
	// nil field leaves its command unavailable.
	Hooks Hooks
	// UI is the theme and toggles at start (LoadUISettings).
	UI UISettings
	// Editor runs the editor of Ctrl+G with the terminal to itself
	// (stdio on the terminal, its modes restored, then raw again); nil
	// runs it without a terminal (editor.go).
	Editor func(ctx context.Context, cmd *exec.Cmd) error
}

// CommandRunner runs a slash command line given its words ("/mcp",
// "approve", "x") and returns the text to show. It runs on its own
// goroutine, never on the UI loop.
type CommandRunner func(ctx context.Context, words []string) (string, error)

// Exit codes Run returns (docs/reference/cli.md, "Exit codes").
const (
	ExitOK          = 0
	ExitInterrupted = 130
)

// ErrExit is returned by Confirm when the user asked to exit (Ctrl-C
// twice) while a question was open.
var ErrExit = errors.New("the user asked to exit")

// App is the terminal application. Make one with New, ask questions with
// Confirm before the session exists, then Run it; Close ends its input
// goroutine.
type App struct {
	opts Options
	now  func() time.Time
	st   *state

	frame    *screen.Frame
	renderer *screen.Renderer

	inputs  chan []keys.Event
	inErr   chan error
	wake    chan struct{}
	reqs    chan func()
	stopped atomic.Bool
	// running is set while Run's loop runs: a question (Confirm, AskText)
	// asked then goes to that loop instead of running a loop of its own.
	running atomic.Bool
	readerW sync.WaitGroup
	startIn sync.Once
	closeIn sync.Once

	mu      sync.Mutex
	pending []agent.Event
	held    []agent.Event // the main session's, while a background one is shown
	holding bool
	notices []string

	cmdCtx    context.Context
	cmdCancel context.CancelFunc
	cmdWG     sync.WaitGroup

	// Input reading pauses while the editor has the terminal (editor.go).
	inPaused atomic.Bool
	inParked chan struct{}
	inResume chan struct{}
}

// New returns an App over the terminal. It writes nothing until Confirm
// or Run.
func New(opts Options) *App {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.EscTimeout <= 0 {
		opts.EscTimeout = 25 * time.Millisecond
	}
	a := &App{
		opts: opts, now: opts.Now,
		frame:    screen.NewFrame(0, 0),
		renderer: screen.NewRenderer(screen.RendererOptions{NoColor: opts.NoColor}),
		inputs:   make(chan []keys.Event),
		inErr:    make(chan error, 1),
		wake:     make(chan struct{}, 1),
		reqs:     make(chan func(), 16),
		inParked: make(chan struct{}, 1),
		inResume: make(chan struct{}, 1),
	}
	a.cmdCtx, a.cmdCancel = context.WithCancel(context.Background())
	a.st = newState(opts.Keymap, a.now)
	a.st.hooks = opts.Hooks
	a.st.commands = opts.Commands
	a.st.applyUI(opts.UI)
	a.st.spawn = a.spawn
	a.st.editPrompt = a.editPrompt
	for _, n := range opts.Notices {
		a.st.notice(n)
	}
	return a
}

// post hands a function to the UI loop; it reports false when the app
// has stopped.
func (a *App) post(fn func()) bool {
	if a.stopped.Load() {
		return false
	}
	select {
	case a.reqs <- fn:
		return true
	case <-a.cmdCtx.Done():
		return false
	}
}

// spawn runs fn on a command goroutine and posts the function it returns
// to the loop.
func (a *App) spawn(fn func(ctx context.Context) func()) {
	if a.stopped.Load() {
		return
	}
	a.cmdWG.Add(1)
	go func() {
		defer a.cmdWG.Done()
		if apply := fn(a.cmdCtx); apply != nil {
			a.post(func() { apply(); a.st.dirty = true })
		}
	}()
}

// Close stops the input goroutine (waking a blocked read with a past
// deadline) and the command goroutines, and waits for them. Idempotent.
func (a *App) Close() error {
	a.closeIn.Do(func() {
		a.stopped.Store(true)
		a.cmdCancel()
		a.opts.Terminal.SetReadDeadline(time.Unix(1, 0))
		a.readerW.Wait()
		a.cmdWG.Wait()
	})
	return nil
}

// readInput is the input goroutine: it reads the terminal, waiting at most
// EscTimeout when the decoder holds a possible sequence start, and sends
// the decoded events to the loop. It ends when the app stops or a read
// fails.
func (a *App) readInput() {
	defer a.readerW.Done()
	var dec keys.Decoder
	buf := make([]byte, 4096)
	var evs []keys.Event
	for {
		if dec.Pending() {
			a.opts.Terminal.SetReadDeadline(a.now().Add(a.opts.EscTimeout))
		} else {
			a.opts.Terminal.SetReadDeadline(time.Time{})
		}
		// Close sets a past deadline after setting stopped: checking here,
		// after our own deadline change, cannot miss it.
		if a.stopped.Load() {
			return
		}
		if a.inputPaused() {
			continue
		}
		n, err := a.opts.Terminal.Read(buf)
		evs = evs[:0]
		if n > 0 {
			evs = dec.Feed(evs, buf[:n])
		}
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				a.inErr <- fmt.Errorf("reading the terminal: %w", err)
				return
			}
			if a.stopped.Load() {
				return
			}
			evs = dec.Flush(evs)
		}
		if len(evs) == 0 {
			continue
		}
		batch := append([]keys.Event(nil), evs...)
		select {
		case a.inputs <- batch:
		case <-a.cmdCtx.Done():
			return
		}
	}
}

// observe is the session observer: it queues the event and wakes the
// loop without blocking the session (consecutive text deltas merge, so
// the queue stays short however slow the terminal is).
// observeMain receives the main session's events: shown, or held while a
// background session is shown (at most maxHeld; beyond that the oldest
// text deltas are the ones that merge).
func (a *App) observeMain(ev agent.Event) {
	a.mu.Lock()
	if !a.holding {
		a.mu.Unlock()
		a.observe(ev)
		return
	}
	if n := len(a.held); n > 0 && (ev.Kind == agent.EventText || ev.Kind == agent.EventReasoning) {
		if last := &a.held[n-1]; last.Kind == ev.Kind && last.Turn == ev.Turn {
			last.Text += ev.Text
			a.mu.Unlock()
			return
		}
	}
	if len(a.held) < maxHeld {
		a.held = append(a.held, ev)
	}
	a.mu.Unlock()
}

// maxHeld bounds the main session's events kept while attached elsewhere.
const maxHeld = 10000

func (a *App) observe(ev agent.Event) {
	a.mu.Lock()
	if n := len(a.pending); n > 0 && (ev.Kind == agent.EventText || ev.Kind == agent.EventReasoning) {
		if last := &a.pending[n-1]; last.Kind == ev.Kind && last.Turn == ev.Turn {
			last.Text += ev.Text
			a.mu.Unlock()
			a.poke()
			return
		}
	}
	if n := len(a.pending); n > 0 && ev.Kind == agent.EventToolOutput {
		// A command's view replaces the one still waiting: what is kept
		// is the visible tail, however fast the command prints.
		if last := &a.pending[n-1]; last.Kind == ev.Kind && last.Tool != nil && ev.Tool != nil && last.Tool.CallID == ev.Tool.CallID {
			*last = ev
			a.mu.Unlock()
			a.poke()
			return
		}
	}
	a.pending = append(a.pending, ev)
	a.mu.Unlock()
	a.poke()
}

// Notice shows a line of outside text (sanitised when drawn) in the
// transcript; safe from any goroutine (agent.StartOptions.Notice).
func (a *App) Notice(line string) {
	a.mu.Lock()
	if len(a.notices) < 1000 {
		a.notices = append(a.notices, line)
	}
	a.mu.Unlock()
	a.poke()
}

func (a *App) poke() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// AskPermission implements agent.Prompter: the question goes to the UI
// loop as a permission-prompt screen and the call waits for the answer or
// for ctx (an aborted turn), which withdraws the question.
func (a *App) AskPermission(ctx context.Context, req agent.PermissionRequest) (agent.Answer, error) {
	reply := make(chan agent.Answer, 1)
	p := &permPrompt{req: req, reply: reply, ctx: ctx}
	if !a.post(func() { a.st.askPermission(p) }) {
		return agent.DenyOnce, ErrExit
	}
	select {
	case ans := <-reply:
		return ans, nil
	case <-ctx.Done():
		a.post(func() { a.st.withdrawPermission(p) })
		return agent.DenyOnce, ctx.Err()
	case <-a.cmdCtx.Done():
		return agent.DenyOnce, ErrExit
	}
}

// start begins reading input and sizes the frame; the kitty query goes
// out once.
func (a *App) start() {
	a.startIn.Do(func() {
		a.readerW.Add(1)
		go a.readInput()
		if a.opts.EnableKitty != nil {
			a.opts.Terminal.Write([]byte("\x1b[?u\x1b[c"))
		}
		a.resized()
	})
}

func (a *App) resized() {
	w, h, err := a.opts.Terminal.Size()
	if err != nil || w <= 0 || h <= 0 {
		w, h = 80, 24
	}
	if w != a.frame.W || h != a.frame.H {
		a.frame.Resize(w, h)
		a.st.dirty = true
	}
}

// Confirm asks a yes/no question on a confirm-prompt screen before the
// session runs (the workspace trust question, docs/reference/cli.md, "The
// interactive session"). Ctrl-C twice returns ErrExit.
func (a *App) Confirm(ctx context.Context, title, question string) (bool, error) {
	if a.running.Load() {
		return a.confirmPosted(ctx, title, question)
	}
	a.start()
	done := make(chan bool, 1)
	a.st.confirm = &confirmPrompt{title: title, question: question, reply: func(yes bool) { done <- yes }}
	a.st.dirty = true
	var answer bool
	err := a.loop(ctx, func() bool {
		select {
		case answer = <-done:
			return true
		default:
			return false
		}
	})
	if err == nil && a.st.exit >= 0 {
		return false, ErrExit
	}
	return answer, err
}

// AskText asks for one value on a text-prompt screen (masked shows
// bullets, for secrets); ok is false when the user cancelled.
func (a *App) AskText(ctx context.Context, title string, masked bool) (value string, ok bool, err error) {
	if a.running.Load() {
		return a.askTextPosted(ctx, title, masked)
	}
	a.start()
	type result struct {
		v  string
		ok bool
	}
	done := make(chan result, 1)
	a.st.textPrompt = &textPrompt{title: title, masked: masked, reply: func(v string, ok bool) { done <- result{v, ok} }}
	a.st.dirty = true
	var r result
	err = a.loop(ctx, func() bool {
		select {
		case r = <-done:
			return true
		default:
			return false
		}
	})
	if err == nil && a.st.exit >= 0 {
		return "", false, ErrExit
	}
	return r.v, r.ok, err
}

// Choose asks for one of items on a menu-select screen before the session
// runs (the first-run setup); ok is false when the user went back.
func (a *App) Choose(ctx context.Context, title string, items []string) (index int, ok bool, err error) {
	a.start()
	type result struct {
		i  int
		ok bool
	}
	done := make(chan result, 1)
	l := &listScreen{ctx: keys.MenuSelect, title: title}
	for _, it := range items {
		l.items = append(l.items, listItem{label: it})
	}
	l.do = func(s *state, l *listScreen, act keys.Action) {
		if act == keys.ActSelect && len(l.items) > 0 {
			s.popScreen(l)
			done <- result{l.sel, true}
		}
	}
	l.closed = func(*state, *listScreen) { done <- result{-1, false} }
	a.st.push(l)
	var r result
	err = a.loop(ctx, func() bool {
		select {
		case r = <-done:
			return true
		default:
			return false
		}
	})
	if err == nil && a.st.exit >= 0 {
		return -1, false, ErrExit
	}
	if err != nil {
		a.st.popScreen(l)
	}
	return r.i, r.ok, err
}

// Run drives the session until the user exits: it returns ExitOK for /exit,
// ExitInterrupted for Ctrl-C twice within 2 s (docs/reference/cli.md, "The
// interactive session"), and ctx's error when ctx ends (a signal).
func (a *App) Run(ctx context.Context, s Session, status Status, prompt string) (int, error) {
	a.start()
	a.drainSession() // notices that came before the loop ran
	a.st.session = s
	a.st.status = status
	a.st.runCommand = a.runCommand
	if a.st.hooks.Todos != nil {
		a.st.daily.todos = a.st.hooks.Todos() // a resumed session's list
	}
	// The main session stays subscribed while a background session is
	// shown: its events wait in held (bounded) and are applied on the
	// way back, so nothing it did meanwhile is lost.
	mainSess := s
	mainUnsub := s.Subscribe(a.observeMain)
	defer func() { mainUnsub() }()
	a.st.replaceMain = func(ns Session) {
		mainUnsub()
		a.mu.Lock()
		a.pending, a.held, a.holding = nil, nil, false
		a.mu.Unlock()
		mainSess = ns
		mainUnsub = ns.Subscribe(a.observeMain)
	}
	var unsub func()
	defer func() {
		if unsub != nil {
			unsub()
		}
	}()
	a.st.holdMain = func() {
		a.mu.Lock()
		a.holding = true
		a.mu.Unlock()
	}
	a.st.releaseMain = func() {
		a.mu.Lock()
		a.holding = false
		a.pending = append(a.held, a.pending...)
		a.held = nil
		a.mu.Unlock()
		a.poke()
	}
	a.st.resubscribe = func(ns Session) {
		if unsub != nil {
			unsub()
			unsub = nil
		}
		a.mu.Lock()
		a.pending = nil // the previous attached session's events
		a.mu.Unlock()
		if ns == mainSess {
			return // the main session's subscription never ended
		}
		unsub = ns.Subscribe(a.observe)
	}
	if prompt != "" {
		a.st.submit(prompt)
	}
	// Prompts entered while the session was still starting (typed right
	// after a setup question) go now, in order.
	early := a.st.early
	a.st.early = nil
	for _, p := range early {
		a.st.submit(p)
	}
	a.running.Store(true)
	defer a.running.Store(false)
	err := a.loop(ctx, func() bool { return a.st.exit >= 0 })
	if err != nil {
		return ExitInterrupted, err
	}
	return a.st.exit, nil
}

// confirmPosted is Confirm while Run's loop runs (a sign-in's question
// from a command goroutine): the question goes to the loop, and ctx ending
// withdraws it. Ctrl-C answers no.
func (a *App) confirmPosted(ctx context.Context, title, question string) (bool, error) {
	done := make(chan bool, 1)
	p := &confirmPrompt{title: title, question: question}
	p.reply = func(yes bool) { done <- yes }
	p.cancel = func() { a.st.confirm = nil; done <- false }
	if !a.post(func() { a.st.confirm = p; a.st.matcher.Cancel(); a.st.dirty = true }) {
		return false, ErrExit
	}
	select {
	case yes := <-done:
		return yes, nil
	case <-ctx.Done():
		a.post(func() {
			if a.st.confirm == p {
				a.st.confirm = nil
				a.st.dirty = true
			}
		})
		return false, ctx.Err()
	case <-a.cmdCtx.Done():
		return false, ErrExit
	}
}

// askTextPosted is AskText while Run's loop runs.
func (a *App) askTextPosted(ctx context.Context, title string, masked bool) (string, bool, error) {
	type result struct {
		v  string
		ok bool
	}
	done := make(chan result, 1)
	p := &textPrompt{title: title, masked: masked, reply: func(v string, ok bool) { done <- result{v, ok} }}
	if !a.post(func() { a.st.textPrompt = p; a.st.matcher.Cancel(); a.st.dirty = true }) {
		return "", false, ErrExit
	}
	select {
	case r := <-done:
		return r.v, r.ok, nil
	case <-ctx.Done():
		a.post(func() {
			if a.st.textPrompt == p {
				a.st.textPrompt = nil
				a.st.dirty = true
			}
		})
		return "", false, ctx.Err()
	case <-a.cmdCtx.Done():
		return "", false, ErrExit
	}
}

// runCommand runs a slash command on its own goroutine and posts the
// result back to the loop.
func (a *App) runCommand(words []string) {
	if a.opts.Commands == nil {
		a.st.notice("unknown command " + words[0] + " (see /help)")
		return
	}
	a.cmdWG.Add(1)
	go func() {
		defer a.cmdWG.Done()
		out, err := a.opts.Commands(a.cmdCtx, words)
		a.post(func() { a.st.commandResult(words, out, err) })
	}()
}

// loop is the event loop: it handles one event, then everything else
// already waiting, then draws once (a coalesced burst; README.md, "A walk
// through the code").
func (a *App) loop(ctx context.Context, done func() bool) error {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		a.checkState()
		if done() || a.st.exit >= 0 {
			a.draw()
			return nil
		}
		a.draw()
		var tc <-chan time.Time
		if d, ok := a.st.nextDeadline(); ok {
			wait := max(d.Sub(a.now()), 0)
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			tc = timer.C
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-a.inErr:
			return err
		case evs := <-a.inputs:
			a.handleInput(evs)
		case <-a.wake:
			a.drainSession()
		case fn := <-a.reqs:
			fn()
		case u, ok := <-a.opts.KeymapUpdates:
			if !ok {
				a.opts.KeymapUpdates = nil
			} else {
				a.st.keymapUpdate(u)
			}
		case <-a.opts.Resize:
			a.resized()
		case <-tc:
			a.st.tick(a.now())
		}
		if timer != nil && tc != nil {
			timer.Stop()
		}
		a.coalesce(ctx)
	}
}

// coalesce handles everything already waiting, without blocking.
func (a *App) coalesce(ctx context.Context) {
	for range 256 {
		select {
		case evs := <-a.inputs:
			a.handleInput(evs)
		case <-a.wake:
			a.drainSession()
		case fn := <-a.reqs:
			fn()
		case <-a.opts.Resize:
			a.resized()
		default:
			return
		}
		if a.st.exit >= 0 || ctx.Err() != nil {
			return
		}
	}
}

func (a *App) checkState() {
	if a.st.perm != nil && a.st.perm.ctx.Err() != nil {
		a.st.withdrawPermission(a.st.perm)
	}
	a.st.withdrawElicits()
	a.st.resumeElicit()
}

func (a *App) handleInput(evs []keys.Event) {
	for _, ev := range evs {
		switch ev.Kind {
		case keys.EventKittyFlags:
			if a.opts.EnableKitty != nil && !a.st.kitty {
				a.st.kitty = true
				a.opts.EnableKitty(1) // disambiguate escape codes
			}
		case keys.EventKey:
			a.st.key(ev)
		case keys.EventPaste:
			a.st.paste(ev.Text)
		}
	}
}

func (a *App) drainSession() {
	a.mu.Lock()
	evs, notices := a.pending, a.notices
	a.pending, a.notices = nil, nil
	a.mu.Unlock()
	for _, n := range notices {
		a.st.notice(n)
	}
	for _, ev := range evs {
		a.st.event(ev)
	}
}

// draw renders the state when it changed and writes the frame in one
// Write.
func (a *App) draw() {
	if !a.st.dirty {
		return
	}
	a.st.dirty = false
	a.st.view(a.frame)
	if b := a.renderer.Render(a.frame); b != nil {
		a.opts.Terminal.Write(b)
	}
}
