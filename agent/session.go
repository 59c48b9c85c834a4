package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"agent/agent/compact"
	"agent/agent/hooks"
	"agent/agent/tools"
	"agent/config"
	"agent/internal/jsonschema"
	"agent/internal/quote"
	"agent/providers"
)

// Limits of a session (docs/reference/runtime.md, "Turns and the queue").
const (
	MaxQueue        = 32 // prompts waiting behind the running turn
	DefaultMaxSteps = 50 // model calls in one turn
)

// Errors callers branch on.
var (
	ErrQueueFull  = errors.New("the prompt queue is full (32 prompts wait already)")
	ErrClosed     = errors.New("the session is closed")
	ErrAborted    = errors.New("aborted")
	ErrStepLimit  = errors.New("the turn reached its step limit")
	ErrNoProvider = errors.New("no provider")
)

// Prompter asks the user a permission question. A session without one is
// headless: every call that needs an answer is denied with a message that
// names the rule that would allow it (docs/reference/runtime.md,
// "Permission prompts"). AskPermission blocks until the user answers or ctx
// ends; it may be called from the session's turn goroutine only, one
// question at a time.
type Prompter interface {
	AskPermission(ctx context.Context, req PermissionRequest) (Answer, error)
}

// SessionOptions configure a session. Provider is required.
type SessionOptions struct {
	ID           string // empty: a new id
	Provider     providers.Provider
	ProviderID   string // for transcripts and status
	Model        string // passed verbatim; empty: the provider's default
	SystemPrompt string // one system message; Framing, when set, replaces it
	// Framing is what every request sends before the conversation: the
	// system messages and the context message (SetFraming changes it).
	Framing Framing
	// Attach returns what a file tool's result gets for the path it
	// reached: the instruction files of folders below the workspace not
	// attached before; nil attaches nothing.
	Attach      func(path string) string
	MaxTokens   int
	MaxSteps    int // 0: DefaultMaxSteps
	Tools       []tools.Tool
	Permissions Permissions // nil: every call that is not inspection is denied
	Prompter    Prompter    // nil: headless
	Workspace   string
	// PersistRule records an "allow for this project" answer; nil writes
	// it with AllowForProject to the workspace's .agent/settings.local.json.
	PersistRule func(config.Rule) error
	Transcript  *Transcript         // nil: not recorded
	History     []providers.Message // a resumed conversation
	TurnsBefore int                 // turns of a resumed transcript: new turn ids follow them
	Logger      *slog.Logger        // nil: silent
	// Context configures compaction (docs/reference/runtime.md, "Context
	// management").
	Context ContextOptions
	// Hooks are the user's hooks (docs/reference/runtime.md, "Hooks");
	// nil runs none.
	Hooks *hooks.Set
	// Subagent, when set, makes this session a subagent's child session:
	// its Stop hooks are SubagentStop.
	Subagent *AgentInfo
	// StartSource is told to the SessionStart hooks, which run before the
	// first turn: startup, resume, clear ("" runs none).
	StartSource string
	// Guard, when set, names why a call must be asked about whatever the
	// mode and the rules say ("" for most calls): Write and Edit of a
	// settings file or an approved hook's script.
	Guard func(spec tools.Spec, t tools.Target) string
	// TodoWrite offers the TodoWrite tool and keeps its list
	// (docs/reference/runtime.md, "The todo list").
	TodoWrite bool
	// Resumed is the transcript a resumed session continues: its todo
	// list, checkpoints and usage carry on (History is its conversation).
	Resumed *Loaded
	// Parent is the session a subagent works for: the subagent's Write
	// and Edit calls join the parent's running checkpoint, and its usage
	// the parent's /cost (docs/reference/runtime.md, "Checkpoints and
	// /rewind", "Usage and cost").
	Parent *Session
	// Expand returns what a user's prompt gets attached when its turn
	// starts (the MCP resources it mentions, mcpresources.go); nil
	// attaches nothing.
	Expand func(ctx context.Context, prompt string) []providers.Part
}

// Framing is what a session sends before its conversation on every
// request (docs/reference/runtime.md, "System prompt and instruction
// files"): the system messages, the first StaticSystem of them the same in
// every session (the static prompt, which providers cache across
// sessions), then the context message with the instruction files and the
// git snapshot. It stays the same from request to request, so that a
// provider's prompt cache serves it; it changes only when the instruction
// files are reloaded or an MCP server's instructions arrive.
type Framing struct {
	System       []string
	StaticSystem int
	Context      string // the first user-role message; "" for none
}

// messages are the framing's messages, and how many of them there are.
func (f Framing) messages() []providers.Message {
	var out []providers.Message
	for _, text := range f.System {
		if text != "" {
			out = append(out, providers.Message{Role: providers.RoleSystem, Content: []providers.Part{providers.Text{Text: text}}})
		}
	}
	if f.Context != "" {
		out = append(out, providers.Message{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: f.Context}}})
	}
	return out
}

// SetFraming replaces the framing for the requests that follow.
func (s *Session) SetFraming(f Framing) {
	msgs := f.messages()
	s.mu.Lock()
	s.framing, s.frame = f, msgs
	s.cm.mark = -1 // the usage last reported counted the old framing
	s.mu.Unlock()
}

// CurrentFraming is the framing the next request sends.
func (s *Session) CurrentFraming() Framing {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.framing
}

// TurnRequest is one prompt for a session.
type TurnRequest struct {
	Prompt string
	// From is empty for the user; "external:<grantId>" for an external
	// event (docs/reference/events.md, "The event's turn"): such a turn
	// gets no tools.
	From        string
	ClaimedName string // shown only as a claim, never trusted
	NoTools     bool
	// Tools, when not nil, are the only tools offered and run in this
	// turn (the others answer as unknown); a call still goes through the
	// permission check. /init offers the read-only tools and Write and
	// Edit (docs/reference/runtime.md, "System prompt and instruction
	// files").
	Tools []string
	// Display is what the UI shows for the prompt, when not the prompt
	// itself (a command's long prompt shows as the command).
	Display string
	// Compact makes the turn a compaction (/compact) instead of a model
	// turn; Prompt holds the user's words on what to keep
	// (docs/reference/runtime.md, "Context management").
	Compact bool
	// Shell makes the turn a shell command the user typed after "!":
	// Prompt is the command, run by the Bash tool under the permission
	// rules, its output added to the conversation without a model call
	// (docs/reference/runtime.md, "Shell commands and mentions").
	Shell bool
	// Mentions attaches the files the prompt names as @path (the
	// terminal UI's composer).
	Mentions bool
	// Allow are rules pre-approved for this turn only (a custom command's
	// or skill's allowed-tools): a call they match runs where the check
	// would ask. A deny rule and plan mode still win.
	Allow []config.Rule
	// Model, when set, is this turn's model (a command's model key); the
	// session's stays for the turns after.
	Model string
}

// offers reports whether the turn offers the tool named name.
func (req TurnRequest) offers(name string) bool {
	if req.NoTools {
		return false
	}
	if req.Tools == nil {
		return true
	}
	for _, t := range req.Tools {
		if t == name {
			return true
		}
	}
	return false
}

// display is the prompt as the UI shows it.
func (req TurnRequest) display() string {
	if req.Display != "" {
		return req.Display
	}
	return req.shown()
}

// Turn is a submitted prompt. Wait blocks until it ends.
type Turn struct {
	ID   string
	Req  TurnRequest
	done chan struct{}
	res  TurnResult

	ctx    context.Context
	cancel context.CancelCauseFunc
	// hookStop: a hook answered "continue": false; the turn ends after
	// the current step. Atomic: subagent calls of one answer run
	// together, each may set it.
	hookStop atomic.Bool
	// denied: the turn's latest tool call did not run (a "!" command's
	// output joins the conversation only when it ran). Atomic for the
	// same reason.
	denied atomic.Bool
}

// Wait returns the turn's result when it ends, or ctx's error.
func (t *Turn) Wait(ctx context.Context) (TurnResult, error) {
	select {
	case <-t.done:
		return t.res, nil
	case <-ctx.Done():
		return TurnResult{}, ctx.Err()
	}
}

// Done is closed when the turn has ended.
func (t *Turn) Done() <-chan struct{} { return t.done }

// Session runs one turn at a time; prompts that arrive meanwhile queue
// (at most 32). All methods are safe for concurrent use; observers are
// called from the session's goroutine, in order, and must not block.
type Session struct {
	opts SessionOptions
	id   string
	log  *slog.Logger

	mu        sync.Mutex
	framing   Framing
	frame     []providers.Message // framing.messages(), built once per change
	history   []providers.Message
	queue     []*Turn
	running   *Turn
	observers map[int]func(Event)
	nextObs   int
	turnSeq   int
	callSeq   int
	closed    bool
	lastUsage providers.Usage
	cm        ctxState
	model     string
	provider  providers.Provider
	provID    string

	schemas map[string]compiledSchema
	// extra are tool groups added while the session runs (an MCP server's
	// tools, by server name); all is the built-in tools followed by the
	// groups in name order, rebuilt on a change and read without copying.
	extra map[string][]tools.Tool
	all   []tools.Tool
	// staged are tool groups that change when the running turn ends
	// (toolsets.go).
	staged map[string][]tools.Tool
	// notes are background-task results for the model, sent with the
	// next turn's prompt.
	notes []string

	td   todoState   // the todo list (todo.go)
	cp   checkpoints // the checkpoints of /rewind (checkpoint.go)
	cost costLedger  // usage per turn for /cost (cost.go)

	wake chan struct{}
	done chan struct{}
	stop context.CancelFunc
	ctx  context.Context
}

// NewID returns a new sortable session id.
func NewID() string {
	var b [4]byte
	rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// NewSession starts a session's turn loop. Close ends it.
func NewSession(opts SessionOptions) (*Session, error) {
	if opts.Provider == nil {
		return nil, ErrNoProvider
	}
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = DefaultMaxSteps
	}
	if opts.ID == "" {
		opts.ID = NewID()
	}
	if opts.Framing.System == nil && opts.Framing.Context == "" && opts.SystemPrompt != "" {
		opts.Framing = Framing{System: []string{opts.SystemPrompt}}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Session{
		opts: opts, id: opts.ID, log: log,
		history:   append([]providers.Message(nil), opts.History...),
		observers: map[int]func(Event){},
		model:     opts.Model, provider: opts.Provider, provID: opts.ProviderID,
		wake: make(chan struct{}, 1), done: make(chan struct{}),
		ctx: ctx, stop: stop,
		turnSeq: opts.TurnsBefore,
		framing: opts.Framing, frame: opts.Framing.messages(),
		cm: ctxState{limits: opts.Context.Limits, mark: -1},
	}
	s.initDaily()
	go s.loop()
	return s, nil
}

// ID is the session id.
func (s *Session) ID() string { return s.id }

// Subscribe registers an observer of the event stream and returns the
// function that removes it.
func (s *Session) Subscribe(fn func(Event)) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextObs
	s.nextObs++
	s.observers[id] = fn
	return func() {
		s.mu.Lock()
		delete(s.observers, id)
		s.mu.Unlock()
	}
}

func (s *Session) emit(ev Event) {
	ev.Session = s.id
	s.mu.Lock()
	obs := make([]func(Event), 0, len(s.observers))
	for i := 0; i < s.nextObs; i++ {
		if fn, ok := s.observers[i]; ok {
			obs = append(obs, fn)
		}
	}
	s.mu.Unlock()
	for _, fn := range obs {
		fn(ev)
	}
}

// SetModel switches provider and model for the following turns; nothing
// else changes (docs/reference/runtime.md, "Turns and the queue").
func (s *Session) SetModel(id string, p providers.Provider, model string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.provID, s.provider, s.model = id, p, model
}

// Model returns the current provider id and model.
func (s *Session) Model() (string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.provID, s.model
}

// LastUsage is the usage of the latest model call (context use).
func (s *Session) LastUsage() providers.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastUsage
}

// History returns a copy of the conversation.
func (s *Session) History() []providers.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]providers.Message(nil), s.history...)
}

// Submit queues a prompt. It fails with ErrQueueFull when 32 prompts wait
// already, and ErrClosed after Close.
func (s *Session) Submit(req TurnRequest) (*Turn, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	if len(s.queue) >= MaxQueue {
		s.mu.Unlock()
		return nil, ErrQueueFull
	}
	s.turnSeq++
	t := &Turn{ID: s.id + "/" + strconv.Itoa(s.turnSeq), Req: req, done: make(chan struct{})}
	t.ctx, t.cancel = context.WithCancelCause(s.ctx)
	s.queue = append(s.queue, t)
	waiting := s.running != nil || len(s.queue) > 1
	s.mu.Unlock()
	if waiting {
		s.emit(Event{Kind: EventQueued, Turn: t.ID, Text: req.display(), From: req.From})
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return t, nil
}

// Run submits a prompt and waits for its result.
func (s *Session) Run(ctx context.Context, prompt string) (TurnResult, error) {
	t, err := s.Submit(TurnRequest{Prompt: prompt})
	if err != nil {
		return TurnResult{}, err
	}
	res, err := t.Wait(ctx)
	if err != nil {
		// Withdraw it if it still waits; abort it if it runs.
		if !s.CancelQueued(t.ID) {
			t.cancel(ErrAborted)
		}
		<-t.done
		return t.res, err
	}
	return res, nil
}

// RunWatched is Run, and also passes watch the events of this turn only,
// in order, from the session's goroutine (watch must not block): a front
// end that reports a turn's progress (agent mcp serve's agent_submit).
func (s *Session) RunWatched(ctx context.Context, prompt string, watch func(Event)) (TurnResult, error) {
	var mu sync.Mutex
	var id string
	var early []Event
	unsub := s.Subscribe(func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case id == "":
			if len(early) < 64 {
				early = append(early, ev)
			}
		case ev.Turn == id:
			watch(ev)
		}
	})
	defer unsub()
	t, err := s.Submit(TurnRequest{Prompt: prompt})
	if err != nil {
		return TurnResult{}, err
	}
	mu.Lock()
	id = t.ID
	for _, ev := range early {
		if ev.Turn == id {
			watch(ev)
		}
	}
	early = nil
	mu.Unlock()
	res, err := t.Wait(ctx)
	if err != nil {
		if !s.CancelQueued(t.ID) {
			t.cancel(ErrAborted)
		}
		<-t.done
		return t.res, err
	}
	return res, nil
}

// Queued returns the prompts waiting, oldest first.
func (s *Session) Queued() []*Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Turn(nil), s.queue...)
}

// CancelQueued withdraws a waiting prompt. It reports whether it was
// still waiting.
func (s *Session) CancelQueued(id string) bool {
	s.mu.Lock()
	var t *Turn
	for i, q := range s.queue {
		if q.ID == id {
			t = q
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	if t == nil {
		return false
	}
	t.res = TurnResult{Turn: t.ID, Status: StatusCancelled}
	close(t.done)
	s.emit(Event{Kind: EventCancelled, Turn: t.ID})
	return true
}

// Abort ends the running turn, keeping its partial answer marked
// interrupted. It reports whether a turn was running.
func (s *Session) Abort() bool {
	s.mu.Lock()
	t := s.running
	s.mu.Unlock()
	if t == nil {
		return false
	}
	t.cancel(ErrAborted)
	return true
}

// Busy reports whether a turn runs.
func (s *Session) Busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running != nil
}

// Close aborts the running turn, cancels the queued ones and ends the
// loop. It is idempotent and returns when the loop has ended.
func (s *Session) Close() error { return s.closeWithReason("other") }

// closeWithReason is Close, telling the SessionEnd hooks why the session
// ends.
func (s *Session) closeWithReason(reason string) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.done
		return nil
	}
	s.closed = true
	queued := s.queue
	s.queue = nil
	s.mu.Unlock()
	for _, t := range queued {
		t.res = TurnResult{Turn: t.ID, Status: StatusCancelled}
		close(t.done)
	}
	s.stop()
	<-s.done
	s.sessionEndHooks(reason)
	if s.opts.Transcript != nil {
		return s.opts.Transcript.Close()
	}
	return nil
}

func (s *Session) loop() {
	defer close(s.done)
	if s.opts.StartSource != "" {
		s.sessionStartHooks(s.opts.StartSource)
	}
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		if len(s.queue) == 0 {
			s.mu.Unlock()
			select {
			case <-s.wake:
				continue
			case <-s.ctx.Done():
				return
			}
		}
		t := s.queue[0]
		s.queue = s.queue[1:]
		s.running = t
		s.mu.Unlock()

		t.res = s.runTurn(t)
		t.cancel(nil)

		s.mu.Lock()
		s.running = nil
		s.applyStagedLocked()
		s.mu.Unlock()
		close(t.done)
	}
}

// request builds the model request from the conversation.
func (s *Session) request(t *Turn, parts ...[]providers.Message) (providers.Provider, *providers.Request) {
	s.mu.Lock()
	p, model, fr, frame := s.provider, s.model, s.framing, s.frame
	s.mu.Unlock()
	if t.Req.Model != "" {
		model = t.Req.Model
	}
	// The session's id keys the provider's prompt cache: the same for
	// every request of the session; the framing, built once, is the stable
	// prefix (docs/providers.md, "Prompt caching").
	static := min(fr.StaticSystem, len(frame))
	req := &providers.Request{Model: model, MaxTokens: s.opts.MaxTokens,
		Cache: providers.Cache{Key: s.id, StaticSystem: static, Prefix: len(frame)}}
	// The pairing check (docs/reference/runtime.md, "Context management"):
	// every tool call answered by exactly one result right after it, so
	// that no request is refused for a broken history.
	// The framing and the conversation's parts in one allocation.
	n := len(frame)
	for _, p := range parts {
		n += len(p)
	}
	all := append(make([]providers.Message, 0, n), frame...)
	for _, p := range parts {
		all = append(all, p...)
	}
	if paired, fixes := compact.Pair(all[len(frame):]); fixes > 0 {
		s.log.Warn("the conversation's tool calls and results were paired again", "fixes", fixes)
		all = append(all[:len(frame):len(frame)], paired...)
	}
	req.Messages = all
	if t.Req.NoTools {
		// An event turn has no tools and cannot act
		// (docs/reference/events.md, "The event's turn").
		req.ToolChoice = providers.ToolChoice{Mode: providers.ToolNone}
		return p, req
	}
	for _, tool := range s.toolList() {
		spec := tool.Spec()
		if !t.Req.offers(spec.Name) {
			continue
		}
		if s.opts.Permissions != nil && s.opts.Permissions.DeniedTool(spec.Name) {
			continue // a deny rule naming a tool removes it (docs/reference/runtime.md, "Permission modes and rules")
		}
		req.Tools = append(req.Tools, providers.Tool{Name: spec.Name, Description: spec.Description, Schema: spec.Schema})
	}
	return p, req
}

// userMessage is the conversation entry for a prompt. An external event's
// text is framed so the model sees who sent it and that the name is only
// a claim.
func userMessage(req TurnRequest) providers.Message {
	return providers.Message{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: req.shown()}}}
}

// shown is the prompt as the model and the transcript see it: the user's
// as typed; an external event's framed with its sender and the claimed
// name marked as a claim.
func (req TurnRequest) shown() string {
	if req.From == "" {
		return req.Prompt
	}
	text := fmt.Sprintf("[message from %s", req.From)
	if req.ClaimedName != "" {
		text += fmt.Sprintf(", claimed name %q (unverified)", quote.V(req.ClaimedName))
	}
	return text + "]\n" + req.Prompt
}

// runTurn runs one turn: model → tool calls → results → model, until the
// model answers without tool calls, the step limit, an error or an abort.
// Before each model call the request is compacted when it would cross the
// threshold, and a request refused as too long takes the reactive path
// (docs/reference/runtime.md, "Context management").
func (s *Session) runTurn(t *Turn) TurnResult {
	if t.Req.Compact {
		return s.runCompactTurn(t)
	}
	if t.Req.Shell {
		return s.runShellTurn(t)
	}
	ctx := t.ctx
	res := TurnResult{Turn: t.ID}
	s.emit(Event{Kind: EventTurnStart, Turn: t.ID, Text: t.Req.display(), From: t.Req.From})

	s.mu.Lock()
	base := len(s.history)
	notes := s.notes
	s.notes = nil
	s.mu.Unlock()
	um := userMessage(t.Req)
	if t.Req.Mentions {
		s.attachMentions(t, &um)
	}
	if s.opts.Expand != nil && t.Req.From == "" {
		um.Content = append(um.Content, s.opts.Expand(ctx, t.Req.Prompt)...)
	}
	if len(notes) > 0 {
		// Results of background tasks that finished since the last turn
		// reach the model ahead of the prompt.
		parts := make([]providers.Part, 0, len(notes)+len(um.Content))
		for _, n := range notes {
			parts = append(parts, providers.Text{Text: n})
		}
		um.Content = append(parts, um.Content...)
	}
	if err := s.promptHooks(t, &um); err != nil {
		// Blocked: the prompt never reaches the model or the conversation.
		s.mu.Lock()
		s.notes = append(notes, s.notes...)
		s.mu.Unlock()
		res.Status, res.Err = StatusError, err
		s.recordEnd(t, res)
		s.emit(Event{Kind: EventError, Turn: t.ID, Result: &res, Err: err})
		return res
	}
	turnMsgs := []providers.Message{um}
	s.record(t, turnMsgs[0], t.Req)
	s.openCheckpoint(t)
	var stops stopState

	finish := func(status Status, err error) TurnResult {
		res.Status, res.Err = status, err
		s.mu.Lock()
		if status == StatusError {
			// A failed turn leaves the conversation as it was, so that
			// retrying it (the recovery screen) sends it again cleanly.
			s.history = s.history[:base]
			s.notes = append(notes, s.notes...)
			if s.cm.mark > base {
				s.cm.mark = -1
			}
		} else {
			s.history = append(s.history[:base], turnMsgs...)
		}
		s.mu.Unlock()
		s.recordEnd(t, res)
		kind := map[Status]EventKind{StatusComplete: EventComplete, StatusInterrupted: EventInterrupted, StatusError: EventError}[status]
		s.emit(Event{Kind: kind, Turn: t.ID, Result: &res, Err: err})
		return res
	}

	reactive := 0 // the reactive path's steps taken in this turn
	for step := 0; ; step++ {
		if step >= s.opts.MaxSteps {
			res.StopReason = "step_limit"
			return finish(StatusError, fmt.Errorf("%w (%d model calls)", ErrStepLimit, s.opts.MaxSteps))
		}
		p, req, framing := s.stepRequest(t, base, turnMsgs)
		tokens := s.requestTokens(req, framing)
		if s.shouldCompact(tokens) {
			n, cur, info := s.compactHistory(ctx, t, compaction{trigger: TriggerAuto, before: tokens}, turnMsgs)
			addUsage(&res.Usage, info.Usage)
			if aborted(ctx) {
				res.StopReason = "interrupted"
				return finish(StatusInterrupted, nil)
			}
			if info.Err == nil {
				base, turnMsgs = n, cur
				p, req, framing = s.stepRequest(t, base, turnMsgs)
				tokens = s.requestTokens(req, framing)
			}
		}
		s.mu.Lock()
		s.cm.last = tokens
		s.mu.Unlock()
		col, err := s.stream(ctx, t, p, req)
		u := col.Usage()
		addUsage(&res.Usage, u)
		if err != nil {
			if aborted(ctx) {
				// Keep the partial answer, without tool calls that will
				// never get results (docs/reference/runtime.md, "Turns and
				// the queue": an abort keeps the partial answer, marked
				// interrupted).
				msg := withoutToolCalls(col.Message())
				if len(msg.Content) > 0 {
					turnMsgs = append(turnMsgs, msg)
					s.record(t, msg, TurnRequest{})
				}
				res.Text = col.Text()
				res.StopReason = "interrupted"
				return finish(StatusInterrupted, nil)
			}
			if errors.Is(err, providers.ErrContextTooLong) && len(col.Message().Content) == 0 {
				if reactive >= 2 {
					res.Text = col.Text()
					return finish(StatusError, fmt.Errorf("%w (%w)", ErrContextFull, err))
				}
				var ok bool
				base, turnMsgs, ok = s.reactiveStep(ctx, t, reactive, tokens, turnMsgs, &res.Usage)
				reactive++
				if aborted(ctx) {
					res.StopReason = "interrupted"
					return finish(StatusInterrupted, nil)
				}
				if !ok {
					// Nothing could be made smaller: the next step fails.
					reactive = max(reactive, 2)
				}
				step-- // the refused call does not count as a step
				continue
			}
			res.Text = col.Text()
			return finish(StatusError, err)
		}
		reactive = 0 // the request went through: a later refusal starts over
		msg := sendable(col.Message())
		turnMsgs = append(turnMsgs, msg)
		s.recordUsage(t, msg, TurnRequest{}, u)
		s.noteUsage(u, base+len(turnMsgs))
		reason, raw := col.Finish()
		res.StopReason = string(reason)
		if reason == providers.FinishOther && raw != "" {
			res.StopReason = raw
		}
		calls := col.ToolCalls() // the original arguments, to report what was wrong
		res.Text = col.Text()
		if len(calls) == 0 {
			if next, more := s.stopHooks(t, res.Text, &stops); more && !t.hookStop.Load() {
				// A Stop hook keeps the turn going (docs/reference/runtime.md,
				// "Hooks").
				turnMsgs = append(turnMsgs, next)
				s.record(t, next, TurnRequest{})
				continue
			}
			return finish(StatusComplete, nil)
		}
		stops.inARow = 0 // the model acted: the Stop hooks' count in a row starts over
		results := s.runTools(withTurn(ctx, t.ID), t, calls)
		toolMsg := providers.Message{Role: providers.RoleTool}
		for _, r := range results {
			toolMsg.Content = append(toolMsg.Content, r)
		}
		turnMsgs = append(turnMsgs, toolMsg)
		s.record(t, toolMsg, TurnRequest{})
		if aborted(ctx) {
			res.StopReason = "interrupted"
			return finish(StatusInterrupted, nil)
		}
		if t.hookStop.Load() {
			res.StopReason = "hook"
			return finish(StatusComplete, nil)
		}
	}
}

// stepRequest builds a step's request from the history before the turn
// and the turn's messages so far, and says how many of its messages are
// the framing.
func (s *Session) stepRequest(t *Turn, base int, turnMsgs []providers.Message) (providers.Provider, *providers.Request, int) {
	s.mu.Lock()
	// The history's first base messages are never changed in place (a
	// compaction replaces the slice; the turn's end appends after them).
	prefix := s.history[:base:base]
	framing := len(s.frame)
	s.mu.Unlock()
	p, req := s.request(t, prefix, turnMsgs)
	return p, req, framing
}

func aborted(ctx context.Context) bool {
	return ctx.Err() != nil
}

// sendable replaces tool-call arguments that are not a JSON object with
// "{}" in the conversation: the call itself gets an error result, and the
// malformed text must not make the next request invalid.
func sendable(m providers.Message) providers.Message {
	for i, p := range m.Content {
		if c, ok := p.(providers.ToolCall); ok {
			var obj map[string]json.RawMessage
			if json.Unmarshal(c.Arguments, &obj) != nil {
				c.Arguments = json.RawMessage("{}")
				m.Content[i] = c
			}
		}
	}
	return m
}

func withoutToolCalls(m providers.Message) providers.Message {
	out := providers.Message{Role: m.Role}
	for _, p := range m.Content {
		if _, ok := p.(providers.ToolCall); !ok {
			out.Content = append(out.Content, p)
		}
	}
	return out
}

// stream makes one model call and forwards its deltas as events.
func (s *Session) stream(ctx context.Context, t *Turn, p providers.Provider, req *providers.Request) (*providers.Collector, error) {
	col := &providers.Collector{}
	st, err := p.Chat(ctx, req)
	if err != nil {
		return col, err
	}
	defer st.Close()
	for {
		ev, err := st.Next()
		if err == io.EOF {
			return col, nil
		}
		if err != nil {
			return col, err
		}
		col.Add(ev)
		switch ev.Type {
		case providers.EventTextDelta, providers.EventRefusalDelta:
			s.emit(Event{Kind: EventText, Turn: t.ID, Text: ev.Text})
		case providers.EventReasoningDelta:
			if ev.Text != "" {
				s.emit(Event{Kind: EventReasoning, Turn: t.ID, Text: ev.Text})
			}
		case providers.EventUsage:
			u := ev.Usage
			s.mu.Lock()
			s.lastUsage = u
			s.mu.Unlock()
			s.emit(Event{Kind: EventUsage, Turn: t.ID, Usage: &u})
		}
	}
}

// runTools runs the calls of one answer in order and returns one result
// per call. After an abort the remaining calls get an "interrupted" result
// so that the conversation stays well-formed.
func (s *Session) runTools(ctx context.Context, t *Turn, calls []providers.ToolCall) []providers.ToolResult {
	out := make([]providers.ToolResult, len(calls))
	interrupted := func(c providers.ToolCall) providers.ToolResult {
		return providers.ToolResult{CallID: c.ID, IsError: true, Content: []providers.Part{providers.Text{Text: "The user interrupted the turn before this call ran."}}}
	}
	run := func(i int) {
		if aborted(ctx) {
			out[i] = interrupted(calls[i])
			return
		}
		r := s.runTool(ctx, t, calls[i])
		out[i] = providers.ToolResult{CallID: calls[i].ID, IsError: r.IsError, Content: []providers.Part{providers.Text{Text: r.Content}}}
	}
	for i := 0; i < len(calls); {
		// Subagents asked for together run together (at most four at a
		// time, the Agent tool's own limit); every other call runs alone,
		// in order (docs/reference/runtime.md, "Subagents, commands and
		// skills").
		j := i
		for j < len(calls) && calls[j].Name == AgentToolName {
			j++
		}
		if j-i < 2 {
			run(i)
			i++
			continue
		}
		var wg sync.WaitGroup
		for k := i; k < j; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				run(k)
			}()
		}
		wg.Wait()
		i = j
	}
	return out
}

func (s *Session) findTool(name string) tools.Tool {
	for _, tool := range s.toolList() {
		if tool.Spec().Name == name {
			return tool
		}
	}
	return nil
}

// runTool validates, checks and runs one call. Whatever the model sent, the
// answer is a result for the model, never a crash.
func (s *Session) runTool(ctx context.Context, t *Turn, c providers.ToolCall) tools.Result {
	return s.callTool(ctx, t, c, !t.Req.offers(c.Name))
}

// callTool is runTool for a turn, or for a direct call when t is nil.
func (s *Session) callTool(ctx context.Context, t *Turn, c providers.ToolCall, noTools bool) tools.Result {
	turnID := ""
	if t != nil {
		turnID = t.ID
	}
	ev := &ToolEvent{CallID: c.ID, Name: c.Name, Args: c.Arguments}
	end := func(r tools.Result, denied bool) tools.Result {
		ev.Result, ev.Denied = &r, denied
		if t != nil {
			t.denied.Store(denied)
		}
		s.emit(Event{Kind: EventToolEnd, Turn: turnID, Tool: ev})
		return r
	}
	s.emit(Event{Kind: EventToolStart, Turn: turnID, Tool: ev})
	tool := s.findTool(c.Name)
	if tool == nil || noTools || (s.opts.Permissions != nil && s.opts.Permissions.DeniedTool(c.Name)) {
		return end(tools.Result{IsError: true, Content: fmt.Sprintf("There is no tool named %q. Use one of the tools offered.", quote.V(c.Name))}, false)
	}
	spec := tool.Spec()
	if err := s.validateArgs(spec, c.Arguments); err != nil {
		return end(tools.Result{IsError: true, Content: fmt.Sprintf("Invalid arguments for %s: %v", spec.Name, err)}, false)
	}
	// PreToolUse runs before the permission check; its allow never beats a
	// deny rule or plan mode, and arguments it replaces are judged again
	// (docs/reference/runtime.md, "Hooks").
	th := s.preToolHooks(ctx, turnID, &c)
	if t != nil && th.stop {
		t.hookStop.Store(true)
	}
	if th.block {
		return end(tools.Result{IsError: true, Content: hookDenied(spec.Name, th.reason)}, true)
	}
	target, err := s.reargue(spec, tool, c.Arguments)
	if err != nil {
		return end(tools.Result{IsError: true, Content: fmt.Sprintf("%s: %v", spec.Name, err)}, false)
	}
	ev.Args = c.Arguments
	v := Verdict{Decision: Deny, Reason: "no permission checker", Suggest: spec.Name}
	if spec.Risk == tools.RiskInspect {
		v = Verdict{Decision: Allow}
	}
	if s.opts.Permissions != nil {
		v = s.opts.Permissions.Check(spec, target)
	}
	switch {
	case v.Decision == Deny:
	case th.permission == "allow" && v.Decision == Ask:
		v = Verdict{Decision: Allow}
	case v.Decision == Ask && t != nil && s.turnAllows(t, spec, target):
		v = Verdict{Decision: Allow, Reason: "allowed for this command's turn"}
	}
	if th.permission == "ask" && v.Decision == Allow {
		// A hook's ask wins over every allowance, a command's too.
		v = Verdict{Decision: Ask, Suggest: v.Suggest, Reason: "a hook asks for the user's approval"}
	}
	if v.Decision != Deny && s.opts.Guard != nil {
		if why := s.opts.Guard(spec, target); why != "" {
			v = Verdict{Decision: Ask, Reason: why, Suggest: spec.Name + "(" + target.Value + ")", Guarded: true}
		}
	}
	if v.Decision == Ask {
		if decision, why := s.permissionHooks(ctx, turnID, &c); decision != "" {
			// A PermissionRequest hook answers in the user's place; new
			// arguments are judged by the rules again.
			ev.Args = c.Arguments
			if target, err = s.reargue(spec, tool, c.Arguments); err != nil {
				return end(tools.Result{IsError: true, Content: fmt.Sprintf("%s: %v", spec.Name, err)}, false)
			}
			v = Verdict{Decision: Allow}
			if s.opts.Permissions != nil && s.opts.Permissions.Check(spec, target).Decision == Deny {
				v = s.opts.Permissions.Check(spec, target)
			}
			if decision == "deny" {
				return end(tools.Result{IsError: true, Content: hookDenied(spec.Name, why)}, true)
			}
		}
	}
	if v.Decision == Ask && t != nil && t.Req.Shell {
		// The user typed this command ("!"): their asking is the answer;
		// a deny rule and plan mode still refuse it.
		v = Verdict{Decision: Allow}
	}
	if v.Decision == Ask {
		if t == nil {
			// A direct call comes from outside the session (mcp serve):
			// nobody here can answer for it (docs/reference/mcp.md, "Served
			// tools and agent_submit").
			v.Decision, v.Reason = Deny, "nobody can answer a permission prompt here"
		} else {
			v = s.ask(ctx, t, spec, c, target, v)
		}
	}
	if v.Decision != Allow {
		return end(tools.Result{IsError: true, Content: DeniedMessage(spec.Name, v)}, true)
	}
	pctx, progressDone := s.progressContext(context.WithValue(ctx, callKey{}, c.ID), turnID, ev)
	r := s.execute(pctx, t, tool, target, c)
	progressDone()
	if s.opts.Attach != nil && target.Kind == tools.TargetPath && !r.IsError {
		// The instruction files of the folders the call reached, once each
		// (docs/reference/runtime.md, "System prompt and instruction files").
		if text := s.opts.Attach(target.Value); text != "" {
			r.Content += "\n\n" + text
		}
	}
	if s.postToolHooks(ctx, turnID, c, target, &r) && t != nil {
		t.hookStop.Store(true)
	}
	return end(r, false)
}

// turnAllows reports whether the turn's own rules allow a call.
func (s *Session) turnAllows(t *Turn, spec tools.Spec, target tools.Target) bool {
	ta, ok := s.opts.Permissions.(interface {
		TurnAllows([]config.Rule, tools.Spec, tools.Target) bool
	})
	return ok && len(t.Req.Allow) > 0 && ta.TurnAllows(t.Req.Allow, spec, target)
}

// ReportBackground tells the user (an EventBackground) and, with the next
// turn, the model what a background task produced: a handed-off MCP call
// (docs/reference/runtime.md, "MCP tools and background tasks").
func (s *Session) ReportBackground(text string) {
	s.mu.Lock()
	s.notes = append(s.notes, text)
	s.mu.Unlock()
	s.emit(Event{Kind: EventBackground, Text: text})
}

// toolList is the current tool list; callers must not modify it.
func (s *Session) toolList() []tools.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.all == nil {
		return s.opts.Tools
	}
	return s.all
}

// SetTools replaces the tools of a group (an MCP server's name); nil or
// empty removes the group. The next model call offers the new list; a
// turn that already runs keeps the calls it made.
func (s *Session) SetTools(group string, ts []tools.Tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setToolsLocked(group, ts)
}

func (s *Session) setToolsLocked(group string, ts []tools.Tool) {
	if s.extra == nil {
		s.extra = map[string][]tools.Tool{}
	}
	if len(ts) == 0 {
		delete(s.extra, group)
	} else {
		s.extra[group] = append([]tools.Tool(nil), ts...)
	}
	names := make([]string, 0, len(s.extra))
	for g := range s.extra {
		names = append(names, g)
	}
	sort.Strings(names)
	all := append([]tools.Tool(nil), s.opts.Tools...)
	for _, g := range names {
		all = append(all, s.extra[g]...)
	}
	s.all = all
}

// ToolSpecs are the tools the session offers: a tool that a deny rule names
// is left out (docs/reference/runtime.md, "Permission modes and rules").
func (s *Session) ToolSpecs() []tools.Spec {
	var out []tools.Spec
	for _, tool := range s.toolList() {
		spec := tool.Spec()
		if s.opts.Permissions != nil && s.opts.Permissions.DeniedTool(spec.Name) {
			continue
		}
		out = append(out, spec)
	}
	return out
}

// CallTool runs one tool outside any turn, for a front end that exposes
// the session's tools (agent mcp serve): the arguments are validated and
// the permission check applies, with nobody to answer a prompt, so a call
// that would ask is denied with the rule that would allow it. It runs
// concurrently with turns.
func (s *Session) CallTool(ctx context.Context, name string, args json.RawMessage) tools.Result {
	s.mu.Lock()
	closed := s.closed
	s.callSeq++
	id := fmt.Sprintf("direct-%d", s.callSeq)
	s.mu.Unlock()
	if closed {
		return tools.Result{IsError: true, Content: ErrClosed.Error()}
	}
	return s.callTool(ctx, nil, providers.ToolCall{ID: id, Name: name, Arguments: args}, false)
}

// ask puts a permission question to the user, or denies where nobody can
// answer (docs/reference/runtime.md, "Permission prompts").
func (s *Session) ask(ctx context.Context, t *Turn, spec tools.Spec, c providers.ToolCall, target tools.Target, v Verdict) Verdict {
	if s.opts.Prompter == nil {
		v.Decision = Deny
		if v.Guarded {
			v.Reason = "nobody can answer a permission prompt here, and " + v.Reason
		} else {
			v.Reason = "nobody can answer a permission prompt here"
		}
		return v
	}
	req := PermissionRequest{Tool: spec.Name, Args: c.Arguments, Target: target, Suggest: v.Suggest, Reason: v.Reason,
		Preview: s.preview(c), Rules: s.answerRules(spec, target, v)}
	s.emit(Event{Kind: EventPermission, Turn: t.ID, Permission: &req})
	s.notify("permission_prompt", "agent needs your permission to use "+spec.Name)
	ans, err := s.opts.Prompter.AskPermission(ctx, req)
	if errors.Is(err, ErrNobodyAttached) {
		v.Decision, v.Reason = Deny, "nobody is attached to this background session to answer a permission prompt"
		return v
	}
	if err != nil {
		v.Decision, v.Reason = Deny, "the permission prompt was not answered"
		return v
	}
	switch ans {
	case AllowOnce:
		v.Decision = Allow
	case AllowSession, AllowProject:
		// The rules as the prompt showed them: generalised as a user
		// would write them (docs/reference/runtime.md, "Permission
		// prompts").
		for _, text := range req.Rules {
			rule, err := config.ParseRule(text)
			if err != nil {
				continue // the answer stands for this call
			}
			if s.opts.Permissions != nil {
				s.opts.Permissions.AllowForSession(rule)
			}
			if ans == AllowProject {
				persist := s.opts.PersistRule
				if persist == nil {
					persist = func(r config.Rule) error { return AllowForProject(s.opts.Workspace, r) }
				}
				if err := persist(rule); err != nil {
					s.emit(Event{Kind: EventBackground, Turn: t.ID, Text: fmt.Sprintf("could not save the rule %s: %v (allowed for this session only)", rule, err)})
				}
			}
		}
		v.Decision = Allow
	default:
		v.Decision, v.Reason = Deny, "denied by the user"
	}
	return v
}

// validateArgs checks a call's arguments against its tool's JSON Schema
// (compiled once per schema). A schema that does not compile refuses every
// call of that tool rather than letting unchecked arguments through.
func (s *Session) validateArgs(spec tools.Spec, args json.RawMessage) error {
	s.mu.Lock()
	if s.schemas == nil {
		s.schemas = map[string]compiledSchema{}
	}
	c, ok := s.schemas[string(spec.Schema)]
	if !ok {
		c.schema, c.err = jsonschema.Compile(spec.Schema, jsonschema.Options{})
		s.schemas[string(spec.Schema)] = c
	}
	s.mu.Unlock()
	if c.err != nil {
		return fmt.Errorf("the tool's schema is unusable: %w", c.err)
	}
	return c.schema.Validate(args)
}

type compiledSchema struct {
	schema *jsonschema.Schema
	err    error
}
