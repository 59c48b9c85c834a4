package agent

// Context management (docs/reference/runtime.md, "Context management"):
// the accounting of what a request takes, compaction before a request
// that would cross the threshold (the cheap pass, then the summary), the
// reactive path when a provider refuses a request as too long, /compact
// and /clear. The arithmetic and the history rewriting are in
// agent/compact; this file makes the model call and keeps the session's
// state.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"agent/agent/compact"
	"agent/providers"
)

// ContextOptions configure a session's context management. The zero value
// compacts automatically once the window is known.
type ContextOptions struct {
	// Limits are the model's window and longest answer; a zero window is
	// unknown (reactive compaction only). SetLimits changes them.
	Limits compact.Limits
	// NoAutoCompact turns proactive compaction off (autoCompact: false,
	// --no-auto-compact); the reactive path still compacts once.
	NoAutoCompact bool
	// AutoCompactAt lowers the threshold to this fraction of the window
	// (0.5 to 0.95); 0 leaves it.
	AutoCompactAt float64
	// Reload reads the instruction files again after a summary, so that
	// the context message carries them as they are on disk.
	Reload func()
	// SummaryInstructions are the instruction files' "Compact
	// Instructions" sections, for the summary request.
	SummaryInstructions func() string
	// Todos is the open todo list, kept across a compaction.
	Todos func() string
}

// Compaction triggers, as the transcript records them.
const (
	TriggerAuto     = "auto"
	TriggerManual   = "manual"
	TriggerReactive = "reactive"
	TriggerClear    = "clear"
)

// ErrContextFull ends a turn whose request the provider refused as too long
// even after compacting and dropping the oldest turns.
var ErrContextFull = errors.New("the conversation does not fit the model's context window, even after compacting it and dropping the oldest turns: run /compact to summarise it (add what to keep), or /clear to start a new conversation")

// ErrCompactFailed ends a /compact turn whose compaction failed; the
// EventCompact before it says why.
var ErrCompactFailed = errors.New("compaction failed")

// errNothingToCompact: the conversation has nothing a compaction could
// make smaller.
var errNothingToCompact = errors.New("there is nothing to compact: the conversation is one turn whose tool results are the newest")

// maxCompactFailures is how many failed or useless compactions in a row
// turn automatic compaction off for the session.
const maxCompactFailures = 3

// ContextUse is how full the context is: the estimated tokens of the next
// request against the window (0: unknown) and the threshold.
type ContextUse struct {
	Tokens    int
	Window    int
	Threshold int
	// Reserve is what the threshold leaves free of the window.
	Reserve int
	// AutoOff reports that automatic compaction is off.
	AutoOff bool
	// Inferred: the window is what a refusal by the provider suggested,
	// not what the settings, the table or a local server said.
	Inferred bool
}

// Percent is Tokens as a share of the window, 0 when it is unknown.
func (u ContextUse) Percent() int {
	if u.Window <= 0 {
		return 0
	}
	return min(u.Tokens*100/u.Window, 999)
}

// CompactInfo reports a compaction (EventCompactStart, EventCompact).
type CompactInfo struct {
	Trigger                   string
	TokensBefore, TokensAfter int
	Duration                  time.Duration
	// Cleared: the cheap pass was enough (old tool results cleared, no
	// summary).
	Cleared bool
	// Err says why a compaction failed; the history is as it was.
	Err error
	// Usage is what the summary's model call reported.
	Usage providers.Usage
}

// ctxState is a session's context accounting; guarded by Session.mu.
type ctxState struct {
	limits compact.Limits
	// known tokens of the conversation's first mark messages, as the
	// latest usage reported them (mark < 0: nothing known since the
	// history or the framing last changed).
	known, mark int
	last        int // the estimate of the latest request
	fails       int
	autoOff     bool
	// inferred: the window was learned from a refusal, not told.
	inferred bool
}

// SetLimits sets the model's window and longest answer (a switch of model;
// a local server's own answer arriving after the start).
func (s *Session) SetLimits(l compact.Limits) {
	s.mu.Lock()
	s.cm.limits, s.cm.inferred = l, false
	s.mu.Unlock()
	s.emitContext()
}

// Limits are the current model's window and longest answer.
func (s *Session) Limits() compact.Limits {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cm.limits
}

// ContextUse is how full the context is, as of the latest request and
// what was added since.
func (s *Session) ContextUse() ContextUse {
	s.mu.Lock()
	l, autoOff, inferred := s.cm.limits, s.cm.autoOff || s.opts.Context.NoAutoCompact, s.cm.inferred
	frame := s.frame
	conv := s.history
	s.mu.Unlock()
	var tl []providers.Tool
	for _, sp := range s.ToolSpecs() {
		tl = append(tl, providers.Tool{Name: sp.Name, Description: sp.Description, Schema: sp.Schema})
	}
	return ContextUse{
		Tokens: s.estimate(frame, tl, conv), Window: l.Window,
		Threshold: compact.Threshold(l, s.opts.Context.AutoCompactAt), Reserve: compact.Reserve(l), AutoOff: autoOff,
		Inferred: inferred,
	}
}

// estimate is the tokens of a request of frame, tools and conv: the usage
// last reported plus an estimate of what came since, or an estimate of the
// whole when nothing is known.
func (s *Session) estimate(frame []providers.Message, tl []providers.Tool, conv []providers.Message) int {
	s.mu.Lock()
	known, mark := s.cm.known, s.cm.mark
	s.mu.Unlock()
	if mark >= 0 && mark <= len(conv) {
		return known + compact.Estimate(conv[mark:])
	}
	return compact.Estimate(frame) + compact.EstimateTools(tl) + compact.Estimate(conv)
}

// requestTokens estimates a request built by request().
func (s *Session) requestTokens(req *providers.Request, framing int) int {
	framing = min(framing, len(req.Messages))
	return s.estimate(req.Messages[:framing], req.Tools, req.Messages[framing:])
}

// noteUsage records what a model call reported: the request's input and
// the answer make the first mark messages of the conversation.
func (s *Session) noteUsage(u providers.Usage, mark int) {
	if u.InputTokens <= 0 {
		return // a provider that reports no usage: estimates go on
	}
	s.mu.Lock()
	s.cm.known, s.cm.mark = u.InputTokens+u.OutputTokens, mark
	s.mu.Unlock()
	s.emitContext()
}

// forgetUsage drops what the latest usage said: the history or the
// framing changed under it.
func (s *Session) forgetUsage() {
	s.mu.Lock()
	s.cm.mark = -1
	s.mu.Unlock()
}

func (s *Session) emitContext() {
	u := s.ContextUse()
	s.emit(Event{Kind: EventContext, Context: &u})
}

// shouldCompact reports whether a request of this estimate is compacted
// first.
func (s *Session) shouldCompact(tokens int) bool {
	s.mu.Lock()
	l, off := s.cm.limits, s.cm.autoOff
	s.mu.Unlock()
	if off || s.opts.Context.NoAutoCompact {
		return false
	}
	th := compact.Threshold(l, s.opts.Context.AutoCompactAt)
	return th > 0 && tokens > th
}

// compaction is one run of compactHistory.
type compaction struct {
	trigger      string
	instructions string // the words given /compact
	// before is the estimate of the request that started it.
	before int
	// summarise skips the stop after a cheap pass that was enough
	// (/compact asks for a summary).
	summarise bool
	// window is what the plan assumes: the model's, else an estimate from
	// the request that overflowed or went through.
	window int
}

// compactHistory compacts the conversation. prefix is the history before
// the current turn, current the turn's messages so far (nil between
// turns). In order, each stage only when the one before did not bring the
// request under the threshold:
//
//  1. the cheap pass over the history: old tool results cleared, the
//     newest 40,000 tokens of tool output and the current turn kept (it
//     ends here unless a summary was asked for);
//  2. the summary of the oldest turns, the newest complete turns that fit
//     30% of the window kept whole (split only before a user prompt);
//  3. a current turn that alone crosses the threshold has its own older
//     tool results cleared (its newest 40,000 tokens of output and its last
//     results kept), so a long tool loop never hits the wall.
//
// On success it replaces s.history, reloads the instruction files after a
// summary, writes the boundary record and returns the new length of the
// history and the current turn's messages; on failure the history is as
// it was.
func (s *Session) compactHistory(ctx context.Context, t *Turn, c compaction, current []providers.Message) (int, []providers.Message, CompactInfo) {
	start := time.Now()
	info := CompactInfo{Trigger: c.trigger, TokensBefore: c.before}
	s.mu.Lock()
	prefix := append([]providers.Message(nil), s.history...)
	frame := s.frame
	limits := s.cm.limits
	s.mu.Unlock()
	fixed := compact.Estimate(frame) + compact.EstimateTools(s.offered(t))
	size := func(h, cur []providers.Message) int { return fixed + compact.Estimate(h) + compact.Estimate(cur) }
	if c.before <= 0 {
		c.before = size(prefix, current)
		info.TokensBefore = c.before
	}
	if c.window <= 0 {
		c.window = limits.Window
	}
	if c.window <= 0 {
		c.window = max(c.before, 16384)
	}
	th := compact.Threshold(compact.Limits{Window: c.window, MaxOutput: limits.MaxOutput}, s.opts.Context.AutoCompactAt)
	current0 := current
	started := false // EventCompactStart was sent
	fail := func(err error) (int, []providers.Message, CompactInfo) {
		n, info := s.compactFailed(t, info, start, err)
		return n, current0, info
	}

	// 1. The cheap pass. A small window keeps a quarter of itself of tool
	// output rather than the 40,000 tokens a large one keeps.
	keep := min(compact.KeepToolTokens, c.window/4)
	all := append(append(make([]providers.Message, 0, len(prefix)+len(current)), prefix...), current...)
	cleared, freed, clearedIDs := compact.ClearOldResults(all, len(prefix), keep)
	rebuilt := cleared[:len(prefix):len(prefix)]
	info.Cleared = freed > 0
	done := !c.summarise && size(rebuilt, current) <= th
	// 2. The summary.
	summarised := false
	if !done {
		split := compact.SplitPoint(rebuilt, int(compact.KeepShare*float64(c.window)))
		if split == 0 && c.summarise {
			split = len(prefix) // /compact of a short conversation: all of it
		}
		if split > 0 {
			s.emit(Event{Kind: EventCompactStart, Turn: t.ID, Compact: &CompactInfo{Trigger: c.trigger, TokensBefore: c.before}})
			started = true
			s.compactHooks(ctx, t, "PreCompact", c, "")
			summary, u, err := s.summarise(ctx, prefix[:split], c, limits)
			info.Usage = u
			if err != nil {
				return fail(err)
			}
			path := ""
			if s.opts.Transcript != nil {
				path = s.opts.Transcript.Path()
			}
			todos := ""
			if s.opts.Context.Todos != nil {
				todos = s.opts.Context.Todos()
			}
			msg := compact.SummaryMessage(summary, path)
			// PostCompact sees the summary; SessionStart (source compact)
			// may add context, which rides with it.
			s.compactHooks(ctx, t, "PostCompact", c, summary)
			for _, extra := range s.compactedStartHooks(ctx, t) {
				msg.Content = append(msg.Content, providers.Text{Text: extra})
			}
			rebuilt = compact.Rebuild(msg, rebuilt[split:], todos)
			summarised, info.Cleared = true, false
		}
	}
	// 3. The current turn's own older results.
	if size(rebuilt, current) > th && len(current) > 2 {
		all := append(append(make([]providers.Message, 0, len(rebuilt)+len(current)), rebuilt...), current...)
		cl, f, ids := compact.ClearOldResults(all, len(all)-1, keep)
		if f > 0 {
			clearedIDs = append(clearedIDs, ids...)
			rebuilt, current = cl[:len(rebuilt):len(rebuilt)], cl[len(rebuilt):]
			info.Cleared = info.Cleared || !summarised
		}
	}
	after := size(rebuilt, current)
	// The guard judges the conversation, not the framing around it that
	// no compaction changes.
	convBefore := compact.Estimate(prefix) + compact.Estimate(current0)
	convAfter := compact.Estimate(rebuilt) + compact.Estimate(current)
	switch {
	case !summarised && convAfter == convBefore:
		// Nothing to do (the conversation is one turn whose tool results
		// are the newest): no model call was made, nothing is reported
		// and nothing counts against automatic compaction.
		info.Err = errNothingToCompact
		return len(prefix), current0, info
	case convAfter > convBefore-convBefore/20:
		return fail(fmt.Errorf("the result (about %s tokens) is not at least 5%% smaller than the conversation (about %s tokens); it was discarded", compactTokens(convAfter), compactTokens(convBefore)))
	}
	s.mu.Lock()
	s.history = rebuilt
	s.cm.fails = 0
	turns := s.turnSeq
	s.mu.Unlock()
	s.forgetUsage()
	if summarised && s.opts.Context.Reload != nil {
		s.opts.Context.Reload() // the context message as the files are now
	}
	info.TokensAfter, info.Duration = after, time.Since(start)
	if !started {
		s.emit(Event{Kind: EventCompactStart, Turn: t.ID, Compact: &CompactInfo{Trigger: c.trigger, TokensBefore: c.before}})
	}
	if summarised {
		s.writeBoundary(Boundary{Trigger: c.trigger, TokensBefore: c.before, TokensAfter: after, Duration: info.Duration,
			History: rebuilt, Pending: current, PendingTurn: t.ID, Turns: turns, Usage: info.Usage})
	} else {
		// Only results cleared: the record names them, and resuming clears
		// the same, so that a cheap pass costs the transcript a line, not
		// the whole history.
		s.writeCleared(Cleared{Trigger: c.trigger, TokensBefore: c.before, TokensAfter: after, Duration: info.Duration, IDs: clearedIDs})
	}
	s.emit(Event{Kind: EventCompact, Turn: t.ID, Compact: &info})
	s.emitContext()
	return len(rebuilt), current, info
}

// compactFailed reports a failed or useless compaction and turns automatic
// compaction off after three in a row (said once).
func (s *Session) compactFailed(t *Turn, info CompactInfo, start time.Time, err error) (int, CompactInfo) {
	info.Err, info.Duration = err, time.Since(start)
	s.mu.Lock()
	s.cm.fails++
	off := s.cm.fails >= maxCompactFailures && !s.cm.autoOff
	if off {
		s.cm.autoOff = true
	}
	n := len(s.history)
	s.mu.Unlock()
	s.emit(Event{Kind: EventCompact, Turn: t.ID, Compact: &info})
	if off {
		s.emit(Event{Kind: EventNotice, Turn: t.ID, Text: "Automatic compaction is off for this session: three compactions in a row failed or did not make the conversation smaller. /compact still works."})
	}
	return n, info
}

// offered are the tool definitions a turn's requests carry.
func (s *Session) offered(t *Turn) []providers.Tool {
	_, req := s.request(t, nil)
	return req.Tools
}

// summaryMaxTokens bounds the summary's answer.
const summaryMaxTokens = 16000

// summarise asks the model for the summary of old, with no tools. A
// request refused as too long is built again with half the budget (three
// tries), so that the summary fits whatever the window turns out to be.
func (s *Session) summarise(ctx context.Context, old []providers.Message, c compaction, l compact.Limits) (string, providers.Usage, error) {
	maxOut := summaryMaxTokens
	if l.MaxOutput > 0 {
		maxOut = min(maxOut, l.MaxOutput)
	}
	maxOut = min(maxOut, max(c.window/4, 1024))
	budget := c.window - maxOut - 1000
	files := ""
	if s.opts.Context.SummaryInstructions != nil {
		files = s.opts.Context.SummaryInstructions()
	}
	s.mu.Lock()
	p, model := s.provider, s.model
	s.mu.Unlock()
	var total providers.Usage
	for try := 0; ; try++ {
		sum := compact.SummaryRequest(old, compact.SummaryOptions{Budget: max(budget, 1000), Instructions: c.instructions, FileInstructions: files})
		req := &providers.Request{Model: model, MaxTokens: maxOut, Messages: []providers.Message{
			{Role: providers.RoleSystem, Content: []providers.Part{providers.Text{Text: sum.System}}},
			{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: sum.Prompt}}},
		}, Cache: providers.Cache{Key: s.id}}
		text, u, err := collectText(ctx, p, req)
		addUsage(&total, u)
		switch {
		case errors.Is(err, providers.ErrContextTooLong) && try < 2:
			budget /= 2
			continue
		case err != nil:
			return "", total, fmt.Errorf("the summary request failed: %w", err)
		case strings.TrimSpace(text) == "":
			return "", total, errors.New("the model answered the summary request with nothing")
		}
		return text, total, nil
	}
}

// collectText makes one model call and returns its text, without showing
// it: a summary is not an answer.
func collectText(ctx context.Context, p providers.Provider, req *providers.Request) (string, providers.Usage, error) {
	st, err := p.Chat(ctx, req)
	if err != nil {
		return "", providers.Usage{}, err
	}
	defer st.Close()
	col := &providers.Collector{}
	for {
		ev, err := st.Next()
		if err == io.EOF {
			return col.Text(), col.Usage(), nil
		}
		if err != nil {
			return "", col.Usage(), err
		}
		col.Add(ev)
	}
}

func addUsage(sum *providers.Usage, u providers.Usage) {
	sum.InputTokens += u.InputTokens
	sum.OutputTokens += u.OutputTokens
	sum.CacheReadTokens += u.CacheReadTokens
	sum.CacheWriteTokens += u.CacheWriteTokens
	sum.ReasoningTokens += u.ReasoningTokens
}

// reactiveStep answers a request the provider refused as too long: the
// first time it compacts (even with automatic compaction off, saying
// so), the second time it drops the oldest turns. It returns the new
// length of the history, the turn's messages, and whether anything
// changed.
func (s *Session) reactiveStep(ctx context.Context, t *Turn, step, tokens int, turnMsgs []providers.Message, usage *providers.Usage) (int, []providers.Message, bool) {
	s.mu.Lock()
	off := s.cm.autoOff || s.opts.Context.NoAutoCompact
	window := s.cm.limits.Window
	s.mu.Unlock()
	if step == 0 {
		if off {
			s.emit(Event{Kind: EventNotice, Turn: t.ID, Text: "The provider refused the request as too long: compacting once, although automatic compaction is off."})
		}
		if window <= 0 || window > tokens {
			// The window the provider enforces is smaller than the one
			// assumed: plan with what the refused request suggests (the
			// estimate is a third above the real count), and keep it, so
			// that the following requests are compacted before they are
			// refused.
			window = tokens * 3 / 4
			s.mu.Lock()
			s.cm.limits.Window, s.cm.inferred = window, true
			if s.cm.limits.MaxOutput >= window {
				s.cm.limits.MaxOutput = 0
			}
			s.mu.Unlock()
		}
		n, cur, info := s.compactHistory(ctx, t, compaction{trigger: TriggerReactive, before: tokens, window: window}, turnMsgs)
		addUsage(usage, info.Usage)
		return n, cur, info.Err == nil
	}
	current, ok := s.trimOldest(t, turnMsgs, tokens, tokens/2)
	s.mu.Lock()
	n := len(s.history)
	s.mu.Unlock()
	return n, current, ok
}

// trimOldest is the reactive path's second step: the oldest turns of the
// history are dropped (a summary at its start stays) and the current
// turn's older tool results cleared, until the request is at most target
// tokens. It reports whether anything changed.
func (s *Session) trimOldest(t *Turn, current []providers.Message, before, target int) ([]providers.Message, bool) {
	s.mu.Lock()
	prefix := append([]providers.Message(nil), s.history...)
	frame := s.frame
	s.mu.Unlock()
	fixed := compact.Estimate(frame) + compact.EstimateTools(s.offered(t))
	keepFirst := 0
	if len(prefix) > 0 && isSummary(prefix[0]) {
		keepFirst = 1
	}
	size := fixed + compact.Estimate(prefix) + compact.Estimate(current)
	changed := false
	for size > target {
		// The next turn start after the first kept message.
		next := -1
		for i := keepFirst + 1; i < len(prefix); i++ {
			if prefix[i].Role == providers.RoleUser {
				next = i
				break
			}
		}
		if next < 0 {
			if len(prefix) > keepFirst {
				prefix, changed = prefix[:keepFirst], true
			}
			break
		}
		prefix, changed = append(prefix[:keepFirst:keepFirst], prefix[next:]...), true
		size = fixed + compact.Estimate(prefix) + compact.Estimate(current)
	}
	if size > target && len(current) > 1 {
		// The current turn itself: clear all but its newest results.
		all := append(append([]providers.Message(nil), prefix...), current...)
		cleared, freed, _ := compact.ClearOldResults(all, len(all)-1, 0)
		if freed > 0 {
			prefix, current, changed = cleared[:len(prefix)], cleared[len(prefix):], true
		}
	}
	if !changed {
		return current, false
	}
	s.mu.Lock()
	s.history = prefix
	turns := s.turnSeq
	s.mu.Unlock()
	s.forgetUsage()
	after := fixed + compact.Estimate(prefix) + compact.Estimate(current)
	s.writeBoundary(Boundary{Trigger: TriggerReactive, TokensBefore: before, TokensAfter: after, History: prefix, Pending: current, PendingTurn: t.ID, Turns: turns})
	s.emit(Event{Kind: EventNotice, Turn: t.ID, Text: fmt.Sprintf("The provider refused the request as too long again: dropped the oldest turns (about %s → %s tokens).", compactTokens(before), compactTokens(after))})
	return current, true
}

func isSummary(m providers.Message) bool {
	if m.Role != providers.RoleUser || len(m.Content) == 0 {
		return false
	}
	t, ok := m.Content[0].(providers.Text)
	return ok && strings.HasPrefix(t.Text, compact.SummaryLead)
}

// writeCleared appends the record of a cheap pass; a failed write is
// logged.
func (s *Session) writeCleared(c Cleared) {
	if s.opts.Transcript == nil {
		return
	}
	if err := s.opts.Transcript.WriteCleared(c); err != nil {
		s.log.Warn("transcript", "err", err)
	}
}

// writeBoundary appends a boundary record; a failed write is logged (the
// session goes on, as with every transcript write).
func (s *Session) writeBoundary(b Boundary) {
	if s.opts.Transcript == nil {
		return
	}
	b.daily = s.dailySnapshot()
	if err := s.opts.Transcript.WriteBoundary(b); err != nil {
		s.log.Warn("transcript", "err", err)
	}
}

// compactTokens is a token count as the UI shows it: 182k, 950.
func compactTokens(n int) string {
	if n >= 10000 {
		return fmt.Sprintf("%dk", (n+500)/1000)
	}
	if n >= 1000 {
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprint(n)
}

// Line is the one line shown after a compaction.
func (c CompactInfo) Line() string {
	if c.Err != nil {
		return "Compaction failed: " + c.Err.Error()
	}
	what := ""
	if c.Cleared {
		what = " (old tool results cleared)"
	}
	return fmt.Sprintf("Context compacted: %s → %s tokens%s", compactTokens(c.TokensBefore), compactTokens(c.TokensAfter), what)
}

// runCompactTurn is /compact [instructions]: a summary now, whatever the
// threshold; its result's Text is the line the UI shows.
func (s *Session) runCompactTurn(t *Turn) TurnResult {
	res := TurnResult{Turn: t.ID}
	s.emit(Event{Kind: EventTurnStart, Turn: t.ID, Text: t.Req.display()})
	end := func(status Status, err error) TurnResult {
		res.Status, res.Err = status, err
		s.recordEnd(t, res)
		kind := map[Status]EventKind{StatusComplete: EventComplete, StatusInterrupted: EventInterrupted, StatusError: EventError}[status]
		s.emit(Event{Kind: kind, Turn: t.ID, Result: &res, Err: err})
		return res
	}
	s.mu.Lock()
	empty := len(s.history) == 0
	s.mu.Unlock()
	if empty {
		return end(StatusError, errors.New("there is no conversation to compact yet"))
	}
	_, req, framing := s.stepRequest(t, s.historyLen(), nil)
	_, _, info := s.compactHistory(t.ctx, t, compaction{trigger: TriggerManual, instructions: t.Req.Prompt, summarise: true, before: s.requestTokens(req, framing)}, nil)
	res.Usage = info.Usage
	switch {
	case aborted(t.ctx):
		res.StopReason = "interrupted"
		return end(StatusInterrupted, nil)
	case errors.Is(info.Err, errNothingToCompact):
		return end(StatusError, info.Err)
	case info.Err != nil:
		return end(StatusError, fmt.Errorf("%w: %w", ErrCompactFailed, info.Err))
	}
	res.Text = info.Line()
	return end(StatusComplete, nil)
}

func (s *Session) historyLen() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.history)
}

// CompactRequest is the turn of /compact [instructions].
func CompactRequest(instructions string) TurnRequest {
	display := "/compact"
	if instructions != "" {
		display += " " + instructions
	}
	return TurnRequest{Compact: true, Prompt: instructions, Display: display}
}

// compactHooks runs PreCompact or PostCompact (trigger manual or auto);
// their answers decide nothing, their failures are shown.
func (s *Session) compactHooks(ctx context.Context, t *Turn, event string, c compaction, summary string) {
	if !s.opts.Hooks.Has(event) {
		return
	}
	in := s.hookInput(event)
	in.Trigger, in.CompactSummary = "auto", summary
	if c.trigger == TriggerManual {
		in.Trigger = "manual"
		in.CustomInstructions = &c.instructions
	}
	s.runHooks(ctx, t.ID, in)
}

// compactedStartHooks runs SessionStart with the source compact and
// returns what the handlers add.
func (s *Session) compactedStartHooks(ctx context.Context, t *Turn) []string {
	if !s.opts.Hooks.Has("SessionStart") {
		return nil
	}
	in := s.hookInput("SessionStart")
	in.Source = "compact"
	return s.runHooks(ctx, t.ID, in).Context
}
