package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"agent/agent/compact"
	"agent/agent/tools"
	"agent/providers"
	"agent/providers/chatcompat"
)

// chatMsg is a message of a chat-completions request, as the scripted
// model reads it.
type chatMsg struct {
	Role       string `json:"role"`
	Content    any    `json:"content"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID string `json:"id"`
	} `json:"tool_calls"`
}

type chatReq struct {
	Messages []chatMsg        `json:"messages"`
	Tools    []map[string]any `json:"tools"`
	bytes    int
}

func (r chatReq) summary() bool {
	if len(r.Tools) > 0 || len(r.Messages) == 0 {
		return false
	}
	s, _ := r.Messages[0].Content.(string)
	return strings.HasPrefix(s, "You write the working summary")
}

func (r chatReq) text(i int) string {
	s, _ := r.Messages[i].Content.(string)
	return s
}

// pairing checks the rule of docs/reference/runtime.md, "Context
// management", on a request as sent.
func (r chatReq) pairing() error {
	for i := 0; i < len(r.Messages); i++ {
		m := r.Messages[i]
		if m.Role == "tool" {
			return fmt.Errorf("message %d: a tool result that answers no call just before it", i)
		}
		for k, c := range m.ToolCalls {
			j := i + 1 + k
			if j >= len(r.Messages) || r.Messages[j].Role != "tool" || r.Messages[j].ToolCallID != c.ID {
				return fmt.Errorf("message %d: call %s has no result right after it", i, c.ID)
			}
		}
		i += len(m.ToolCalls)
	}
	return nil
}

// windowModel is a scripted chat-completions server in memory that
// enforces a context window: a request over window tokens (its body's
// bytes / 4) is refused as too long, as a real server does. It answers a
// summary request with a summary, and otherwise calls the Big tool calls
// times per turn, then answers. Every request is checked for pairing.
type windowModel struct {
	mu        sync.Mutex
	window    int  // 0: no limit
	calls     int  // tool calls per turn
	noUsage   bool // report no usage
	refuseAll bool // refuse every non-summary request as too long
	summary   func(req chatReq) string
	answer    string        // the text answer ("done after N calls" when empty)
	hang      chan struct{} // summary requests wait on it (or the client going away)
	reqs      []chatReq
	bad       []string
}

func (m *windowModel) Do(hr *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(hr.Body)
	hr.Body.Close()
	var req chatReq
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	req.bytes = len(body)
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	n := len(m.reqs)
	if err := req.pairing(); err != nil {
		m.bad = append(m.bad, fmt.Sprintf("request %d: %v", n, err))
	}
	window, refuse := m.window, m.refuseAll && !req.summary()
	m.mu.Unlock()
	if refuse || window > 0 && len(body)/4 > window {
		return &http.Response{StatusCode: 400, Header: http.Header{"Content-Type": {"application/json"}}, Request: hr,
			Body: io.NopCloser(strings.NewReader(`{"error":{"message":"This model's maximum context length is exceeded","code":"context_length_exceeded"}}`))}, nil
	}
	if req.summary() && m.hang != nil {
		select {
		case <-m.hang:
		case <-hr.Context().Done():
			return nil, hr.Context().Err()
		}
	}
	var sse string
	switch {
	case req.summary():
		text := "SUMMARY: the user asked for files to be read; they were."
		if m.summary != nil {
			text = m.summary(req)
		}
		sse = sseText(text)
	default:
		// Calls since the newest user message.
		since := 0
		for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != "user"; i-- {
			if req.Messages[i].Role == "tool" {
				since++
			}
		}
		if since < m.calls {
			sse = sseCall(fmt.Sprintf("call-%d", n))
		} else if m.answer != "" {
			sse = sseText(m.answer)
		} else {
			sse = sseText(fmt.Sprintf("done after %d calls", since))
		}
	}
	if !m.noUsage {
		sse += fmt.Sprintf("data: {\"id\":\"1\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":9}}\n\n", len(body)/4)
	}
	sse += "data: [DONE]\n\n"
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader(sse)), Request: hr}, nil
}

func sseText(text string) string {
	b, _ := json.Marshal(text)
	return fmt.Sprintf("data: {\"id\":\"1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%s}}]}\n\n", b) +
		"data: {\"id\":\"1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
}

func sseCall(id string) string {
	return fmt.Sprintf("data: {\"id\":\"1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":%q,\"type\":\"function\",\"function\":{\"name\":\"Big\",\"arguments\":\"{}\"}}]}}]}\n\n", id) +
		"data: {\"id\":\"1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
}

func (m *windowModel) requests() []chatReq {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]chatReq(nil), m.reqs...)
}

func (m *windowModel) checkPairing(t *testing.T) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range m.bad {
		t.Error(b)
	}
}

// bigTool answers with size bytes of output.
type bigTool struct{ size int }

func (b bigTool) Spec() tools.Spec {
	return tools.Spec{Name: "Big", Description: "big output", Risk: tools.RiskInspect, Schema: json.RawMessage(`{"type":"object"}`)}
}
func (bigTool) Target(json.RawMessage) (tools.Target, error) { return tools.Target{}, nil }
func (b bigTool) Run(context.Context, json.RawMessage) tools.Result {
	return tools.Result{Content: strings.Repeat("output line of the big tool\n", b.size/28)}
}

type ctxHarness struct {
	model  *windowModel
	sess   *Session
	mu     sync.Mutex
	events []Event
}

func newCtxHarness(t *testing.T, m *windowModel, size int, opts SessionOptions) *ctxHarness {
	t.Helper()
	p, err := chatcompat.NewLocalProvider(chatcompat.LocalOptions{DefaultModel: "m", Executor: m})
	if err != nil {
		t.Fatal(err)
	}
	opts.Provider = p
	opts.Tools = []tools.Tool{bigTool{size}}
	opts.Permissions = &rulePerms{}
	if opts.SystemPrompt == "" {
		opts.SystemPrompt = "be brief"
	}
	s, err := NewSession(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h := &ctxHarness{model: m, sess: s}
	s.Subscribe(func(e Event) {
		h.mu.Lock()
		h.events = append(h.events, e)
		h.mu.Unlock()
	})
	return h
}

func (h *ctxHarness) compactions() (ok, failed []CompactInfo) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.events {
		if e.Kind == EventCompact {
			if e.Compact.Err != nil {
				failed = append(failed, *e.Compact)
			} else {
				ok = append(ok, *e.Compact)
			}
		}
	}
	return ok, failed
}

func (h *ctxHarness) notices() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, e := range h.events {
		if e.Kind == EventNotice {
			out = append(out, e.Text)
		}
	}
	return out
}

func runOK(t *testing.T, s *Session, prompt string) TurnResult {
	t.Helper()
	res := run(t, s, prompt)
	if res.Status != StatusComplete {
		t.Fatalf("turn %s: %s %v", prompt, res.Status, res.Err)
	}
	return res
}

// A session that crosses the threshold in the middle of a tool loop is
// compacted between two steps and completes; every request is paired and
// fits the window the server enforces.
func TestCompactionInTheMiddleOfAToolLoop(t *testing.T) {
	m := &windowModel{window: 30000, calls: 3}
	h := newCtxHarness(t, m, 16000, SessionOptions{Context: ContextOptions{Limits: compact.Limits{Window: 30000, MaxOutput: 4000}}})
	runOK(t, h.sess, "read one")
	runOK(t, h.sess, "read two")
	res := runOK(t, h.sess, "read three")
	if res.Text != "done after 3 calls" {
		t.Errorf("answer %q", res.Text)
	}
	ok, failed := h.compactions()
	if len(ok) == 0 || len(failed) > 0 {
		t.Fatalf("compactions %+v, failed %+v", ok, failed)
	}
	midTurn := false
	for _, c := range ok {
		if c.TokensAfter >= c.TokensBefore {
			t.Errorf("a compaction did not shrink: %+v", c)
		}
	}
	for _, e := range h.events {
		if e.Kind == EventCompact && e.Turn == h.events[len(h.events)-1].Turn {
			midTurn = true
		}
	}
	if !midTurn {
		t.Error("no compaction in the last turn's tool loop")
	}
	m.checkPairing(t)
	for i, r := range m.requests() {
		if r.bytes/4 > m.window {
			t.Errorf("request %d (%d tokens) was over the window", i, r.bytes/4)
		}
	}
}

// The reactive path: with the window unknown, the server's refusal
// compacts once and the turn goes on.
func TestReactiveCompaction(t *testing.T) {
	cases := []struct {
		name      string
		noAuto    bool
		wantNotes int
	}{
		{"window unknown", false, 0},
		{"automatic compaction off says so", true, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &windowModel{calls: 1}
			h := newCtxHarness(t, m, 20000, SessionOptions{Context: ContextOptions{NoAutoCompact: c.noAuto}})
			for i := range 4 {
				runOK(t, h.sess, fmt.Sprint("turn ", i))
			}
			m.mu.Lock()
			m.window = 12000 // the server's real window turns out smaller
			m.mu.Unlock()
			runOK(t, h.sess, "one more")
			ok, _ := h.compactions()
			if len(ok) != 1 || ok[0].Trigger != TriggerReactive {
				t.Fatalf("compactions %+v", ok)
			}
			if n := len(h.notices()); n != c.wantNotes {
				t.Errorf("notices %q", h.notices())
			}
			m.checkPairing(t)
		})
	}
}

// A provider that refuses every request as too long: compact, retry, drop
// the oldest turns, retry, then a clear error naming /compact and /clear.
func TestReactivePathEndsInAClearError(t *testing.T) {
	m := &windowModel{calls: 1}
	h := newCtxHarness(t, m, 8000, SessionOptions{})
	for i := range 3 {
		runOK(t, h.sess, fmt.Sprint("turn ", i))
	}
	m.mu.Lock()
	m.refuseAll = true
	before := len(m.reqs)
	m.mu.Unlock()
	res, err := h.sess.Run(context.Background(), "too much")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusError || !errors.Is(res.Err, ErrContextFull) || !errors.Is(res.Err, providers.ErrContextTooLong) {
		t.Fatalf("%+v", res)
	}
	for _, want := range []string{"/compact", "/clear"} {
		if !strings.Contains(res.Err.Error(), want) {
			t.Errorf("the error does not name %s: %v", want, res.Err)
		}
	}
	// After the refused request: the retry after compacting, the retry
	// after dropping the oldest turns, then the error.
	retries := 0
	for _, r := range m.requests()[before+1:] {
		if !r.summary() {
			retries++
		}
	}
	if retries != 2 {
		t.Errorf("%d retries after the first refusal", retries)
	}
	m.checkPairing(t)
}

// A summary that does not shrink the conversation by 5% is discarded;
// three in a row turn automatic compaction off, said once.
func TestUselessSummaryIsDiscarded(t *testing.T) {
	// Answers without tool output: the cheap pass cannot help, only a
	// summary can.
	m := &windowModel{answer: strings.Repeat("a long answer. ", 300), summary: func(req chatReq) string { return strings.Repeat("long summary ", 20000) }}
	h := newCtxHarness(t, m, 100, SessionOptions{Context: ContextOptions{Limits: compact.Limits{Window: 16000, MaxOutput: 2000}}})
	const turns = 16
	for i := range turns {
		runOK(t, h.sess, fmt.Sprint("turn ", i))
	}
	ok, failed := h.compactions()
	if len(failed) != maxCompactFailures {
		t.Fatalf("failed compactions %d (ok %d): %+v", len(failed), len(ok), failed)
	}
	if !strings.Contains(failed[0].Err.Error(), "5%") {
		t.Errorf("error %v", failed[0].Err)
	}
	notes := h.notices()
	if len(notes) != 1 || !strings.Contains(notes[0], "Automatic compaction is off") {
		t.Errorf("notices %q", notes)
	}
	if !h.sess.ContextUse().AutoOff {
		t.Error("automatic compaction is still on")
	}
	// The history was left as it was: every turn is there.
	if hist := h.sess.History(); len(hist) != turns*2 {
		t.Errorf("history of %d messages", len(hist))
	}
}

// An empty summary fails the compaction and leaves the history.
func TestEmptySummaryFails(t *testing.T) {
	m := &windowModel{calls: 0, summary: func(chatReq) string { return "  " }}
	h := newCtxHarness(t, m, 100, SessionOptions{})
	runOK(t, h.sess, "hello")
	res, _ := h.sess.Run(context.Background(), "")
	_ = res
	turn, err := h.sess.Submit(CompactRequest(""))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := turn.Wait(context.Background())
	if r.Status != StatusError || !strings.Contains(r.Err.Error(), "nothing") {
		t.Fatalf("%+v", r)
	}
	if len(h.sess.History()) != 4 {
		t.Errorf("history %d", len(h.sess.History()))
	}
}

// /compact [instructions]: a summary now, with the user's words in the
// summary request; the history is the summary.
func TestCompactCommand(t *testing.T) {
	m := &windowModel{calls: 1}
	h := newCtxHarness(t, m, 3000, SessionOptions{})
	runOK(t, h.sess, "first")
	runOK(t, h.sess, "second")
	turn, err := h.sess.Submit(CompactRequest("keep the parser notes"))
	if err != nil {
		t.Fatal(err)
	}
	res, _ := turn.Wait(context.Background())
	if res.Status != StatusComplete || !strings.HasPrefix(res.Text, "Context compacted: ") {
		t.Fatalf("%+v", res)
	}
	reqs := m.requests()
	last := reqs[len(reqs)-1]
	if !last.summary() || !strings.Contains(last.text(1), "keep the parser notes") || !strings.Contains(last.text(1), "second") {
		t.Fatalf("the summary request: %+v", last)
	}
	hist := h.sess.History()
	if len(hist) != 1 || !isSummary(hist[0]) {
		t.Fatalf("history %s", historyText(hist))
	}
	// The next turn sends the summary and goes on.
	runOK(t, h.sess, "third")
	m.checkPairing(t)
}

// /compact with nothing to compact is an error and changes nothing.
func TestCompactCommandWithoutConversation(t *testing.T) {
	h := newCtxHarness(t, &windowModel{}, 10, SessionOptions{})
	turn, _ := h.sess.Submit(CompactRequest(""))
	res, _ := turn.Wait(context.Background())
	if res.Status != StatusError || !strings.Contains(res.Err.Error(), "no conversation") {
		t.Fatalf("%+v", res)
	}
	if _, failed := h.compactions(); len(failed) != 0 {
		t.Error("an empty /compact counted as a failed compaction")
	}
}

// Ctrl-C during a compaction leaves the history as it was.
func TestCompactionInterrupted(t *testing.T) {
	m := &windowModel{calls: 1, hang: make(chan struct{})}
	h := newCtxHarness(t, m, 3000, SessionOptions{})
	runOK(t, h.sess, "first")
	before := historyText(h.sess.History())
	turn, _ := h.sess.Submit(CompactRequest(""))
	deadline := time.Now().Add(10 * time.Second)
	for {
		reqs := m.requests()
		if len(reqs) > 0 && reqs[len(reqs)-1].summary() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no summary request")
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.sess.Abort()
	res, _ := turn.Wait(context.Background())
	if res.Status != StatusInterrupted {
		t.Fatalf("%+v", res)
	}
	if after := historyText(h.sess.History()); after != before {
		t.Errorf("history changed:\n%s\n%s", before, after)
	}
}

// Ten compactions in one long session: every request is paired and fits,
// and the session never stops.
func TestTenCompactionsInOneSession(t *testing.T) {
	m := &windowModel{window: 20000, calls: 2}
	h := newCtxHarness(t, m, 14000, SessionOptions{Context: ContextOptions{Limits: compact.Limits{Window: 20000, MaxOutput: 2000}}})
	for i := range 40 {
		runOK(t, h.sess, fmt.Sprint("turn ", i))
	}
	ok, failed := h.compactions()
	if len(ok) < 10 {
		t.Errorf("%d compactions, %d failed", len(ok), len(failed))
	}
	m.checkPairing(t)
	for i, r := range m.requests() {
		if r.bytes/4 > m.window {
			t.Errorf("request %d over the window", i)
		}
	}
}

// A provider that reports no usage: the estimates alone drive compaction.
func TestCompactionWithoutUsage(t *testing.T) {
	m := &windowModel{window: 20000, calls: 2, noUsage: true}
	h := newCtxHarness(t, m, 14000, SessionOptions{Context: ContextOptions{Limits: compact.Limits{Window: 20000, MaxOutput: 2000}}})
	for i := range 10 {
		runOK(t, h.sess, fmt.Sprint("turn ", i))
	}
	if ok, _ := h.compactions(); len(ok) == 0 {
		t.Error("no compaction")
	}
	if u := h.sess.ContextUse(); u.Tokens <= 0 || u.Window != 20000 {
		t.Errorf("context use %+v", u)
	}
	m.checkPairing(t)
}

// The accounting: the usage reported counts what was sent; what came
// since is estimated; the status figures follow.
func TestContextUse(t *testing.T) {
	m := &windowModel{calls: 1}
	h := newCtxHarness(t, m, 4000, SessionOptions{Context: ContextOptions{Limits: compact.Limits{Window: 100000, MaxOutput: 8000}}})
	u0 := h.sess.ContextUse()
	if u0.Tokens <= 0 || u0.Window != 100000 || u0.Threshold != 100000-8000-13000 {
		t.Fatalf("before any turn %+v", u0)
	}
	runOK(t, h.sess, "go")
	reqs := m.requests()
	last := reqs[len(reqs)-1].bytes/4 + 9
	u := h.sess.ContextUse()
	if u.Tokens != last {
		t.Errorf("after the turn %d tokens, want the reported %d", u.Tokens, last)
	}
	if u.Percent() != last*100/100000 {
		t.Errorf("percent %d", u.Percent())
	}
}

// Resuming after compactions rebuilds the compacted history exactly, the
// running turn's messages and the cleared results included: from the
// boundary of a summary, and through the records of cheap passes.
func TestResumeAfterCompaction(t *testing.T) {
	cases := []struct {
		name     string
		answer   string // long answers need a summary; tool output a cheap pass
		size     int
		boundary bool
	}{
		{"cheap passes only", "", 16000, false},
		{"summaries", strings.Repeat("a long answer. ", 400), 3000, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			tr, err := CreateTranscript(home, Header{ID: "s1", Workspace: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			m := &windowModel{window: 30000, calls: 3, answer: c.answer}
			h := newCtxHarness(t, m, c.size, SessionOptions{ID: "s1", Transcript: tr, Context: ContextOptions{Limits: compact.Limits{Window: 30000, MaxOutput: 4000}}})
			for i := range 8 {
				runOK(t, h.sess, fmt.Sprint("turn ", i))
			}
			if ok, _ := h.compactions(); len(ok) == 0 {
				t.Fatal("no compaction")
			}
			want := fullText(h.sess.History())
			h.sess.Close()
			l, err := LoadTranscript(home, "s1")
			if err != nil {
				t.Fatal(err)
			}
			if (l.Boundary != nil) != c.boundary {
				t.Errorf("boundary %+v", l.Boundary)
			}
			if got := fullText(l.History); got != want {
				t.Errorf("resumed history\n%s\nwant\n%s", got, want)
			}
			if err := compact.Paired(l.History); err != nil {
				t.Errorf("the resumed history is not paired: %v", err)
			}
			if l.Turns != 8 {
				t.Errorf("turns %d", l.Turns)
			}
		})
	}
}

// fullText renders a history with its tool calls and results.
func fullText(h []providers.Message) string {
	var b strings.Builder
	for _, m := range h {
		b.WriteString(string(m.Role) + ":")
		for _, p := range m.Content {
			switch p := p.(type) {
			case providers.Text:
				b.WriteString(" " + p.Text)
			case providers.ToolCall:
				b.WriteString(" call " + p.ID)
			case providers.ToolResult:
				text, _ := p.TextAndImages()
				b.WriteString(" result " + p.CallID + " " + text)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
