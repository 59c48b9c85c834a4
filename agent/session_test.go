package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"agent/agent/tools"
	"agent/config"
	"agent/internal/fakemodel"
	"agent/providers"
	"agent/providers/chatcompat"
)

// echoTool is a test tool: it returns its "text" argument.
type echoTool struct {
	name string
	risk tools.Risk
	runs int
	mu   sync.Mutex
}

func (e *echoTool) Spec() tools.Spec {
	return tools.Spec{Name: e.name, Description: "echo", Risk: e.risk,
		Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)}
}
func (e *echoTool) Target(args json.RawMessage) (tools.Target, error) {
	return tools.Target{Kind: tools.TargetCommand, Value: string(args)}, nil
}
func (e *echoTool) Run(ctx context.Context, args json.RawMessage) tools.Result {
	e.mu.Lock()
	e.runs++
	e.mu.Unlock()
	var a struct{ Text string }
	json.Unmarshal(args, &a)
	return tools.Result{Content: "echo: " + a.Text}
}

// rulePerms is a small Permissions fake: inspect allowed, others by list.
type rulePerms struct {
	mu      sync.Mutex
	allowed map[string]bool
	denied  map[string]bool
	session []config.Rule
}

func (p *rulePerms) Check(spec tools.Spec, t tools.Target) Verdict {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.denied[spec.Name]:
		return Verdict{Decision: Deny, Reason: "denied by rule " + spec.Name, Suggest: spec.Name}
	case spec.Risk == tools.RiskInspect || p.allowed[spec.Name]:
		return Verdict{Decision: Allow}
	}
	for _, r := range p.session {
		if r.Tool == spec.Name {
			return Verdict{Decision: Allow}
		}
	}
	return Verdict{Decision: Ask, Suggest: spec.Name, Reason: "execute needs approval"}
}
func (p *rulePerms) AllowForSession(r config.Rule) {
	p.mu.Lock()
	p.session = append(p.session, r)
	p.mu.Unlock()
}
func (p *rulePerms) DeniedTool(name string) bool { return p.denied[name] }

type answerer struct {
	ans   Answer
	asked []PermissionRequest
}

func (a *answerer) AskPermission(ctx context.Context, r PermissionRequest) (Answer, error) {
	a.asked = append(a.asked, r)
	return a.ans, nil
}

type harness struct {
	srv    *fakemodel.Server
	sess   *Session
	mu     sync.Mutex
	events []Event
}

func newHarness(t *testing.T, opts SessionOptions, replies ...fakemodel.Reply) *harness {
	t.Helper()
	h := &harness{srv: fakemodel.New(replies...)}
	t.Cleanup(h.srv.Close)
	p, err := chatcompat.NewLocalProvider(chatcompat.LocalOptions{BaseURL: h.srv.URL(), DefaultModel: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	opts.Provider = p
	s, err := NewSession(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.Subscribe(func(e Event) {
		h.mu.Lock()
		h.events = append(h.events, e)
		h.mu.Unlock()
	})
	h.sess = s
	return h
}

func (h *harness) kinds() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var k []string
	for _, e := range h.events {
		if e.Kind == EventText || e.Kind == EventUsage || e.Kind == EventReasoning || e.Kind == EventContext {
			continue
		}
		k = append(k, string(e.Kind))
	}
	return strings.Join(k, " ")
}

func run(t *testing.T, s *Session, prompt string) TurnResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := s.Run(ctx, prompt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// requestOf decodes the n-th request body.
func requestOf(t *testing.T, h *harness, n int) map[string]any {
	t.Helper()
	reqs := h.srv.Requests()
	if n >= len(reqs) {
		t.Fatalf("only %d requests", len(reqs))
	}
	var m map[string]any
	json.Unmarshal(reqs[n], &m)
	return m
}

func TestTurnText(t *testing.T) {
	h := newHarness(t, SessionOptions{SystemPrompt: "be brief"}, fakemodel.Reply{Text: "Hello there, friend.", Reasoning: "think", InputTokens: 12, OutputTokens: 4})
	res := run(t, h.sess, "hi")
	if res.Status != StatusComplete || res.Text != "Hello there, friend." || res.StopReason != "stop" || res.Usage.InputTokens != 12 {
		t.Fatalf("%+v", res)
	}
	if k := h.kinds(); k != "turn_start complete" {
		t.Fatalf("events %q", k)
	}
	msgs := requestOf(t, h, 0)["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" {
		t.Fatalf("messages %v", msgs)
	}
	if hist := h.sess.History(); len(hist) != 2 || hist[1].Role != providers.RoleAssistant {
		t.Fatalf("history %+v", hist)
	}
}

// recorder is a provider that records the requests it passes on.
type recorder struct {
	providers.Provider
	mu   sync.Mutex
	reqs []providers.Request
}

func (r *recorder) Chat(ctx context.Context, req *providers.Request) (*providers.Stream, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, *req)
	r.mu.Unlock()
	return r.Provider.Chat(ctx, req)
}

// Every request of a session carries the session's cache key, and only
// its own (docs/providers.md, "Prompt caching").
func TestRequestCacheKey(t *testing.T) {
	echo := &echoTool{name: "Echo", risk: tools.RiskInspect}
	reply := []fakemodel.Reply{{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Echo", Args: `{"text":"a"}`}}}, {Text: "done"}}
	var keys []string
	for range 2 {
		h := newHarness(t, SessionOptions{Tools: []tools.Tool{echo}, Permissions: &rulePerms{}}, reply...)
		id, model := h.sess.Model()
		h.sess.mu.Lock()
		rec := &recorder{Provider: h.sess.provider}
		h.sess.mu.Unlock()
		h.sess.SetModel(id, rec, model)
		run(t, h.sess, "go")
		rec.mu.Lock()
		if len(rec.reqs) != 2 || rec.reqs[0].Cache.Key != h.sess.ID() || rec.reqs[1].Cache.Key != h.sess.ID() {
			t.Fatalf("requests %+v, session %s", rec.reqs, h.sess.ID())
		}
		rec.mu.Unlock()
		keys = append(keys, h.sess.ID())
	}
	if keys[0] == keys[1] {
		t.Errorf("two sessions share the key %s", keys[0])
	}
}

func TestToolLoop(t *testing.T) {
	echo := &echoTool{name: "Echo", risk: tools.RiskInspect}
	h := newHarness(t, SessionOptions{Tools: []tools.Tool{echo}, Permissions: &rulePerms{}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Echo", Args: `{"text":"a"}`}, {ID: "c2", Name: "Echo", Args: `{"text":"b"}`}}},
		fakemodel.Reply{Text: "done"})
	res := run(t, h.sess, "go")
	if res.Status != StatusComplete || res.Text != "done" || echo.runs != 2 {
		t.Fatalf("%+v runs %d", res, echo.runs)
	}
	if k := h.kinds(); k != "turn_start tool_start tool_end tool_start tool_end complete" {
		t.Fatalf("events %q", k)
	}
	// The second request carries both results, answering both calls.
	body := string(h.srv.Requests()[1])
	for _, want := range []string{`"tool_call_id":"c1"`, `echo: a`, `"tool_call_id":"c2"`, `echo: b`} {
		if !strings.Contains(body, want) {
			t.Errorf("second request lacks %s:\n%s", want, body)
		}
	}
	tools := requestOf(t, h, 0)["tools"].([]any)
	if len(tools) != 1 {
		t.Fatalf("tools %v", tools)
	}
}

func TestBadAndUnknownToolCalls(t *testing.T) {
	echo := &echoTool{name: "Echo", risk: tools.RiskInspect}
	h := newHarness(t, SessionOptions{Tools: []tools.Tool{echo}, Permissions: &rulePerms{}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
			{ID: "c1", Name: "Nope", Args: `{}`},
			{ID: "c2", Name: "Echo", Args: `{"text":`},
		}},
		fakemodel.Reply{Text: "recovered"})
	res := run(t, h.sess, "go")
	if res.Status != StatusComplete || echo.runs != 0 {
		t.Fatalf("%+v runs %d", res, echo.runs)
	}
	body := string(h.srv.Requests()[1])
	if !strings.Contains(body, `There is no tool named \"Nope\"`) || !strings.Contains(body, "Invalid arguments for Echo") {
		t.Fatalf("second request: %s", body)
	}
}

func TestPermissionDeniedHeadless(t *testing.T) {
	danger := &echoTool{name: "Danger", risk: tools.RiskExecute}
	h := newHarness(t, SessionOptions{Tools: []tools.Tool{danger}, Permissions: &rulePerms{}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Danger", Args: `{"text":"x"}`}}},
		fakemodel.Reply{Text: "ok, I will not"})
	res := run(t, h.sess, "go")
	if res.Status != StatusComplete || danger.runs != 0 {
		t.Fatalf("%+v", res)
	}
	body := string(h.srv.Requests()[1])
	if !strings.Contains(body, "Danger") || !strings.Contains(body, "denied") {
		t.Fatalf("denied result: %s", body)
	}
	var denied bool
	for _, e := range h.events {
		if e.Kind == EventToolEnd && e.Tool.Denied {
			denied = true
		}
	}
	if !denied {
		t.Fatal("tool_end not marked denied")
	}
}

func TestPermissionPrompt(t *testing.T) {
	for _, c := range []struct {
		name    string
		ans     Answer
		runs    int
		session bool
		persist bool
	}{
		{"allow once asks again", AllowOnce, 2, false, false},
		{"allow for the session asks once", AllowSession, 2, true, false},
		{"allow for the project asks once and persists", AllowProject, 2, true, true},
		{"deny once runs nothing", DenyOnce, 0, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			danger := &echoTool{name: "Danger", risk: tools.RiskExecute}
			perms := &rulePerms{}
			a := &answerer{ans: c.ans}
			var persisted []config.Rule
			h := newHarness(t, SessionOptions{Tools: []tools.Tool{danger}, Permissions: perms, Prompter: a,
				PersistRule: func(r config.Rule) error { persisted = append(persisted, r); return nil }},
				fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Danger", Args: `{"text":"x"}`}}},
				fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c2", Name: "Danger", Args: `{"text":"y"}`}}},
				fakemodel.Reply{Text: "end"})
			run(t, h.sess, "go")
			wantAsks := 2
			if c.session {
				wantAsks = 1 // the session rule answers the second call
			}
			if danger.runs != c.runs || len(a.asked) != wantAsks || (len(persisted) > 0) != c.persist {
				t.Errorf("answer %v: runs %d asks %d persisted %v", c.ans, danger.runs, len(a.asked), persisted)
			}
			if a.asked[0].Suggest != "Danger" || a.asked[0].Tool != "Danger" {
				t.Errorf("request %+v", a.asked[0])
			}
		})
	}
}

func TestDenyRuleRemovesTool(t *testing.T) {
	danger := &echoTool{name: "Danger", risk: tools.RiskExecute}
	echo := &echoTool{name: "Echo", risk: tools.RiskInspect}
	h := newHarness(t, SessionOptions{Tools: []tools.Tool{danger, echo}, Permissions: &rulePerms{denied: map[string]bool{"Danger": true}}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Danger", Args: `{"text":"x"}`}}},
		fakemodel.Reply{Text: "end"})
	run(t, h.sess, "go")
	tools := requestOf(t, h, 0)["tools"].([]any)
	if len(tools) != 1 || !strings.Contains(string(h.srv.Requests()[0]), `"Echo"`) {
		t.Fatalf("tools offered: %v", tools)
	}
	if danger.runs != 0 || !strings.Contains(string(h.srv.Requests()[1]), `There is no tool named \"Danger\"`) {
		t.Fatal("a denied tool ran or was not reported unknown")
	}
}

func TestAbortKeepsPartial(t *testing.T) {
	h := newHarness(t, SessionOptions{}, fakemodel.Reply{Text: "Partial answer that never ends", Hang: true})
	turn, err := h.sess.Submit(TurnRequest{Prompt: "long"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		h.mu.Lock()
		got := false
		for _, e := range h.events {
			if e.Kind == EventText && e.Text != "" {
				got = true
			}
		}
		h.mu.Unlock()
		if got {
			break
		}
		select {
		case <-deadline:
			t.Fatal("no text streamed")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if !h.sess.Abort() {
		t.Fatal("Abort found no running turn")
	}
	res, _ := turn.Wait(context.Background())
	if res.Status != StatusInterrupted || res.Text != "Part" {
		t.Fatalf("%+v", res)
	}
	hist := h.sess.History()
	if len(hist) != 2 || hist[1].Content[0].(providers.Text).Text != "Part" {
		t.Fatalf("partial answer not kept: %+v", hist)
	}
	// The session goes on.
	if res := run(t, h.sess, "again"); res.Status != StatusComplete {
		t.Fatalf("%+v", res)
	}
}

func TestQueue(t *testing.T) {
	h := newHarness(t, SessionOptions{}, fakemodel.Reply{Text: "slow", Hang: true})
	first, _ := h.sess.Submit(TurnRequest{Prompt: "first"})
	<-h.srv.Started()
	var queued []*Turn
	for i := 0; i < MaxQueue; i++ {
		tr, err := h.sess.Submit(TurnRequest{Prompt: "q"})
		if err != nil {
			t.Fatalf("submit %d: %v", i, err)
		}
		queued = append(queued, tr)
	}
	if _, err := h.sess.Submit(TurnRequest{Prompt: "one too many"}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("33rd prompt: %v", err)
	}
	if !h.sess.CancelQueued(queued[0].ID) || h.sess.CancelQueued(queued[0].ID) {
		t.Fatal("cancel queued")
	}
	if r, _ := queued[0].Wait(context.Background()); r.Status != StatusCancelled {
		t.Fatal(r)
	}
	h.sess.Abort()
	first.Wait(context.Background())
	for _, q := range queued[1:] {
		if r, _ := q.Wait(context.Background()); r.Status != StatusComplete {
			t.Fatalf("queued turn: %+v", r)
		}
	}
	if n := len(h.srv.Requests()); n != MaxQueue {
		t.Fatalf("%d requests, want %d", n, MaxQueue)
	}
}

func TestFailedTurnRollsBack(t *testing.T) {
	h := newHarness(t, SessionOptions{}, fakemodel.Reply{Status: 400, Body: `{"error":{"message":"bad request","type":"invalid_request_error"}}`})
	res := run(t, h.sess, "hi")
	if res.Status != StatusError || !errors.Is(res.Err, providers.ErrInvalidRequest) {
		t.Fatalf("%+v", res)
	}
	if len(h.sess.History()) != 0 {
		t.Fatal("a failed turn stayed in the conversation")
	}
	if !strings.HasSuffix(h.kinds(), "error") {
		t.Fatal(h.kinds())
	}
}

func TestEventTurnHasNoTools(t *testing.T) {
	echo := &echoTool{name: "Echo", risk: tools.RiskInspect}
	h := newHarness(t, SessionOptions{Tools: []tools.Tool{echo}, Permissions: &rulePerms{}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Echo", Args: `{"text":"x"}`}}}, fakemodel.Reply{Text: "noted"})
	tr, _ := h.sess.Submit(TurnRequest{Prompt: "deploy done", From: "external:ci", ClaimedName: "Build Bot", NoTools: true})
	res, _ := tr.Wait(context.Background())
	req := requestOf(t, h, 0)
	if _, ok := req["tools"]; ok || (req["tool_choice"] != nil && req["tool_choice"] != "none") {
		t.Fatalf("event turn request: %v", req)
	}
	if echo.runs != 0 || res.Status != StatusComplete {
		t.Fatal("an event turn ran a tool")
	}
	if !strings.Contains(string(h.srv.Requests()[0]), `[message from external:ci, claimed name \"Build Bot\" (unverified)]`) {
		t.Fatalf("framing: %s", h.srv.Requests()[0])
	}
}

func TestStepLimit(t *testing.T) {
	echo := &echoTool{name: "Echo", risk: tools.RiskInspect}
	var replies []fakemodel.Reply
	for i := 0; i < 5; i++ {
		replies = append(replies, fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c", Name: "Echo", Args: `{"text":"x"}`}}})
	}
	h := newHarness(t, SessionOptions{Tools: []tools.Tool{echo}, Permissions: &rulePerms{}, MaxSteps: 3}, replies...)
	res := run(t, h.sess, "loop")
	if res.Status != StatusError || !errors.Is(res.Err, ErrStepLimit) || len(h.srv.Requests()) != 3 {
		t.Fatalf("%+v after %d requests", res, len(h.srv.Requests()))
	}
}

func TestTranscriptResume(t *testing.T) {
	home := t.TempDir()
	tr, err := CreateTranscript(home, Header{ID: "s1", Workspace: "/w", Provider: "local", Model: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	echo := &echoTool{name: "Echo", risk: tools.RiskInspect}
	h := newHarness(t, SessionOptions{ID: "s1", Tools: []tools.Tool{echo}, Permissions: &rulePerms{}, Transcript: tr},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Echo", Args: `{"text":"a"}`}}},
		fakemodel.Reply{Text: "first answer"},
		fakemodel.Reply{Status: 500, Body: "{}"}, fakemodel.Reply{Status: 500, Body: "{}"}, fakemodel.Reply{Status: 500, Body: "{}"})
	run(t, h.sess, "one")
	run(t, h.sess, "fails")
	h.sess.Close()
	l, err := LoadTranscript(home, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.History) != 4 || l.Header.Model != "fake" {
		t.Fatalf("history %d: %+v", len(l.History), l.History)
	}
	if tc := l.History[1].Content[0].(providers.ToolCall); tc.ID != "c1" || string(tc.Arguments) != `{"text":"a"}` {
		t.Fatalf("%+v", tc)
	}
	// Resuming continues the conversation.
	h2 := newHarness(t, SessionOptions{History: l.History}, fakemodel.Reply{Text: "resumed"})
	run(t, h2.sess, "two")
	if n := len(requestOf(t, h2, 0)["messages"].([]any)); n != 5 {
		t.Fatalf("resumed request has %d messages", n)
	}
	list, _ := ListTranscripts(home)
	if len(list) != 1 || list[0].ID != "s1" {
		t.Fatal(list)
	}
	if _, err := CreateTranscript(home, Header{ID: "s1"}); err == nil {
		t.Fatal("a transcript was overwritten")
	}
	if _, err := LoadTranscript(home, "../x"); err == nil {
		t.Fatal("path escape")
	}
}

func TestClose(t *testing.T) {
	h := newHarness(t, SessionOptions{}, fakemodel.Reply{Text: "x", Hang: true})
	tr, _ := h.sess.Submit(TurnRequest{Prompt: "a"})
	q, _ := h.sess.Submit(TurnRequest{Prompt: "b"})
	<-h.srv.Started()
	h.sess.Close()
	h.sess.Close()
	if r, _ := tr.Wait(context.Background()); r.Status != StatusInterrupted {
		t.Fatal(r)
	}
	if r, _ := q.Wait(context.Background()); r.Status != StatusCancelled {
		t.Fatal(r)
	}
	if _, err := h.sess.Submit(TurnRequest{Prompt: "c"}); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
}
