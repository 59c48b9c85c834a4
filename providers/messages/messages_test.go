package messages

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"agent/providers"
	pt "agent/providers/providertest"
)

func hello() *providers.Request {
	return &providers.Request{Model: "model-4-5", Messages: []providers.Message{{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "hi"}}}}}
}

func newWith(t testing.TB, opts Options) *Provider {
	t.Helper()
	if opts.APIKey == "" && opts.Client == nil {
		opts.APIKey = "test-key"
	}
	if opts.BaseURL == "" {
		opts.BaseURL = "https://api.example.com"
	}
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Every recorded stream decodes to its golden events, whole and split at
// every byte, from memory and over HTTP.
func TestFixtures(t *testing.T) {
	pt.RunFixtures(t, pt.Fixtures{
		Request: hello,
		Memory:  func(t testing.TB, ex providers.Executor) providers.Provider { return newWith(t, Options{Executor: ex}) },
		HTTP: func(t testing.TB, url string, c *http.Client) providers.Provider {
			return newWith(t, Options{BaseURL: url, Client: c})
		},
		Retried: func(w string) bool { return strings.Contains(w, "error") && !strings.Contains(w, "text") },
	})
}

func TestMissingKeyAndHeaders(t *testing.T) {
	_, err := New(Options{BaseURL: "https://api.example.com"})
	var mk *providers.MissingKeyError
	if !errors.Is(err, providers.ErrMissingKey) || !errors.As(err, &mk) || mk.EnvVar != "MESSAGES_API_KEY" || !strings.Contains(err.Error(), "MESSAGES_API_KEY") {
		t.Fatalf("missing key: %v", err)
	}
	if p, err := New(Options{APIKey: "k"}); err != nil || p.URL() != "https://api.anthropic.com/v1/messages" {
		t.Errorf("default base URL: %v", err)
	}
	if _, err := New(Options{APIKey: "k", BaseURL: "ftp://x"}); err == nil {
		t.Error("ftp base URL accepted")
	}
	p := newWith(t, Options{Client: &http.Client{}, BaseURL: "https://gw.example/root/"})
	if p.URL() != "https://gw.example/root/v1/messages" {
		t.Errorf("URL %s", p.URL())
	}
	data, _ := os.ReadFile("testdata/text.sse")
	ex := pt.NewReplay(pt.Stream(data))
	pt.Run(t, newWith(t, Options{APIKey: "sk-m", Executor: ex, Header: http.Header{"X-Extra": {"1"}}}), hello())
	h := ex.Header(0)
	if h.Get("X-Api-Key") != "sk-m" || h.Get("Anthropic-Version") != APIVersion || h.Get("X-Extra") != "1" || h.Get("Authorization") != "" {
		t.Errorf("headers %v", h)
	}
	ex = pt.NewReplay(pt.Stream(data))
	pt.Run(t, newWith(t, Options{Client: &http.Client{}, Executor: ex}), hello())
	if ex.Header(0).Get("X-Api-Key") != "" {
		t.Error("a key header without a key")
	}
}

// A streamed answer with thinking and tool calls, collected and sent back,
// carries its thinking blocks with their signatures, as the API requires
// with tool use.
func TestThinkingRoundTrip(t *testing.T) {
	data, _ := os.ReadFile("testdata/thinking_tools.sse")
	ex := pt.NewReplay(pt.Stream(data))
	p := newWith(t, Options{Executor: ex})
	req := hello()
	req.Model = "model-4-6"
	req.Effort = providers.EffortHigh
	req.Tools = []providers.Tool{{Name: "Glob"}, {Name: "get_weather"}}
	s, err := p.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var c providers.Collector
	evs, err := pt.Drain(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		c.Add(ev)
	}
	answer := c.Message()
	if len(answer.Content) != 5 {
		t.Fatalf("collected %#v", answer)
	}
	if r := answer.Content[0].(providers.Reasoning); r.Text != "I need the file list and the weather." || !strings.HasPrefix(r.Signature, "EqQB") {
		t.Errorf("thinking %#v", r)
	}
	if u := c.Usage(); u.InputTokens != 450 || u.CacheWriteTokens != 50 || u.OutputTokens != 89 {
		t.Errorf("usage %+v", u)
	}
	next := *req
	next.Messages = append(append([]providers.Message{}, req.Messages...), answer,
		providers.Message{Role: providers.RoleTool, Content: []providers.Part{
			providers.ToolResult{CallID: "toolu_01A", Content: []providers.Part{providers.Text{Text: "a.go"}}},
			providers.ToolResult{CallID: "toolu_01B", Content: []providers.Part{providers.Text{Text: "no network"}}, IsError: true},
		}})
	body, _, err := p.Body(&next)
	if err != nil {
		t.Fatal(err)
	}
	pt.Golden(t, "testdata/request_thinking_round_trip.json", pt.IndentJSON(t, body))
}

// The request bodies, checked against golden files.
func TestRequestBodies(t *testing.T) {
	temp := 0.5
	schema := json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false}`)
	tools := []providers.Tool{{Name: "Read", Description: "Read a file", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}, {Name: "Bash"}}
	conversation := []providers.Message{
		{Role: providers.RoleSystem, Content: []providers.Part{providers.Text{Text: "Be brief."}}},
		{Role: providers.RoleSystem, Content: []providers.Part{providers.Text{Text: "Answer in English."}}},
		{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "Look"}, providers.Image{MediaType: "image/jpeg", Data: []byte{0xff, 0xd8, 0xff}}, providers.Image{URL: "https://example.com/a.png"}}},
		{Role: providers.RoleAssistant, Content: []providers.Part{
			providers.Reasoning{Text: "from another provider, unsigned"},
			providers.Text{Text: ""},
			providers.ToolCall{ID: "toolu_1", Name: "Read", Arguments: json.RawMessage(`{"path":"a.go"}`)},
			providers.ToolCall{ID: "toolu_2", Name: "Bash", Arguments: json.RawMessage(`not json`)},
		}},
		{Role: providers.RoleTool, Content: []providers.Part{providers.ToolResult{CallID: "toolu_1", Content: []providers.Part{providers.Text{Text: "package a"}, providers.Image{MediaType: "image/png", Data: []byte("png")}}}}},
		{Role: providers.RoleTool, Content: []providers.Part{providers.ToolResult{CallID: "toolu_2", IsError: true}}},
		{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "And now?"}}},
	}
	cases := []struct {
		name string
		req  providers.Request
	}{
		{"plain_defaults", providers.Request{Model: "model-3-5-family", Messages: conversation[2:3]}},
		{"tools_auto_temperature", providers.Request{Model: "family-4-5", Messages: conversation, Tools: tools, Temperature: &temp, MaxTokens: 1000}},
		// The API refuses thinking with a forced tool choice: the budget
		// model goes without; the adaptive one keeps its effort.
		{"tool_any_no_thinking", providers.Request{Model: "family-4-5-20250929", Messages: conversation[:3], Tools: tools, ToolChoice: providers.ToolChoice{Mode: providers.ToolRequired}, Effort: providers.EffortMedium}},
		{"tool_named_effort_schema", providers.Request{Model: "family-4-6", Messages: conversation[:3], Tools: tools, ToolChoice: providers.ToolChoice{Mode: providers.ToolNamed, Name: "Read"}, Effort: providers.EffortLow,
			ResponseFormat: providers.ResponseFormat{Type: providers.FormatJSONSchema, Schema: schema}}},
		// Thinking wins over the temperature, which the API refuses with it.
		{"budget_thinking_temperature", providers.Request{Model: "family-4-5-20250929", Messages: conversation[:3], Tools: tools, Temperature: &temp, Effort: providers.EffortMedium}},
		{"adaptive_thinking", providers.Request{Model: "family-4-7", Messages: conversation[:3], Tools: tools, Effort: providers.EffortXHigh}},
		// The tool loop goes on from an assistant message without thinking
		// (another provider's): thinking now would be refused.
		{"unsigned_tool_loop_no_thinking", providers.Request{Model: "family-4-6", Messages: conversation, Tools: tools, Effort: providers.EffortHigh}},
		// A turn without tools over a conversation that used them (an
		// external event's turn): the history's tools are named, none may
		// be called.
		{"history_tools_turn_without_tools", providers.Request{Model: "family-4-5", Messages: conversation, ToolChoice: providers.ToolChoice{Mode: providers.ToolNone}}},
		{"tool_none_small_budget", providers.Request{Model: "gateway/family", Messages: conversation[:3], Tools: tools, ToolChoice: providers.ToolChoice{Mode: providers.ToolNone}, Effort: providers.EffortMax, MaxTokens: 4000}},
		// The static system text and the rest apart, the stable prefix
		// (the first user message) marked; and no marks at all.
		{"cache_static_system_prefix", providers.Request{Model: "family-4-5", Messages: conversation, Tools: tools, Cache: providers.Cache{StaticSystem: 1, Prefix: 3}}},
		{"cache_off", providers.Request{Model: "family-4-5", Messages: conversation, Tools: tools, Cache: providers.Cache{Off: true, Key: "ignored"}}},
	}
	data, _ := os.ReadFile("testdata/text.sse")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex := pt.NewReplay(pt.Stream(data))
			if got := pt.Run(t, newWith(t, Options{Executor: ex}), &c.req); strings.Contains(got, "error") {
				t.Fatal(got)
			}
			pt.Golden(t, "testdata/request_"+c.name+".json", pt.IndentJSON(t, ex.Body(0)))
		})
	}
	ex := pt.NewReplay(pt.Stream(data))
	p := newWith(t, Options{Executor: ex})
	for _, req := range []*providers.Request{
		{Model: "m", Messages: hello().Messages, ResponseFormat: providers.ResponseFormat{Type: providers.FormatJSONObject}},
		{Messages: hello().Messages},
		{Model: "m", Messages: conversation[:2]},
	} {
		if _, err := p.Chat(context.Background(), req); !errors.Is(err, providers.ErrInvalidRequest) {
			t.Errorf("%+v: %v", req, err)
		}
	}
	if ex.Requests() != 0 {
		t.Errorf("%d requests sent for invalid arguments", ex.Requests())
	}
}

// The overloaded status (529) and the in-stream overloaded error are
// transient: retried while nothing has reached the caller.
func TestOverloadedAndErrors(t *testing.T) {
	ok, _ := os.ReadFile("testdata/text.sse")
	over, _ := os.ReadFile("testdata/overloaded.sse")
	synctest.Test(t, func(t *testing.T) {
		want := pt.Run(t, newWith(t, Options{Executor: pt.NewReplay(pt.Stream(ok))}), hello())
		overloaded := `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`
		cases := []pt.ErrorCase{
			pt.Case("529 then success", []pt.Response{pt.Status(529, overloaded), pt.Stream(ok)}, nil, "", 2),
			pt.Case("in-stream overloaded then success", []pt.Response{pt.Stream(over), pt.Stream(ok)}, nil, "", 2),
			pt.Case("529 three times", []pt.Response{pt.Status(529, overloaded, "Request-Id", "req_1")}, providers.ErrUpstream, "overloaded_error", 3),
			pt.Case("in-stream overloaded three times", []pt.Response{pt.Stream(over)}, providers.ErrUpstream, "overloaded_error", 3),
			pt.Case("429", []pt.Response{pt.Status(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`, "Retry-After", "1"), pt.Stream(ok)}, nil, "", 2),
			pt.Case("prompt too long", []pt.Response{pt.Status(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`)}, providers.ErrContextTooLong, "invalid_request_error", 1),
			pt.Case("401", []pt.Response{pt.Status(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)}, providers.ErrAuthentication, "authentication_error", 1),
			pt.Case("413", []pt.Response{pt.Status(413, `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`)}, providers.ErrContextTooLong, "request_too_large", 1),
			pt.Case("500 then 503 then success", []pt.Response{pt.Status(500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`), pt.Status(503, `upstream connect error`), pt.Stream(ok)}, nil, "", 3),
			pt.Case("400 not retried", []pt.Response{pt.Status(400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate"}}`), pt.Stream(ok)}, providers.ErrInvalidRequest, "invalid_request_error", 1),
			pt.Case("429 with a long Retry-After", []pt.Response{pt.Status(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`, "Retry-After", "90"), pt.Stream(ok)}, providers.ErrRateLimited, "rate_limit_error", 1),
			pt.Case("402 billing", []pt.Response{pt.Status(402, `{"type":"error","error":{"type":"billing_error","message":"credit balance too low"}}`)}, providers.ErrAuthentication, "billing_error", 1),
			pt.Case("in-stream rate limit then success", []pt.Response{pt.Stream([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow\"}}\n\n")), pt.Stream(ok)}, nil, "", 2),
			pt.Case("in-stream invalid request", []pt.Response{pt.Stream([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad\"}}\n\n"))}, providers.ErrInvalidRequest, "invalid_request_error", 1),
			pt.Case("connection error then success", []pt.Response{{Err: errors.New("connection reset by peer")}, pt.Stream(ok)}, nil, "", 2),
		}
		pt.RunErrorCases(t, "messages", func(ex providers.Executor) providers.Provider { return newWith(t, Options{Executor: ex}) }, hello, want, cases)
		// The wait the server asked for is honoured exactly.
		start := time.Now()
		ex := pt.NewReplay(pt.Status(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`, "Retry-After", "3"), pt.Stream(ok))
		if got := pt.Run(t, newWith(t, Options{Executor: ex}), hello()); got != want || time.Since(start) != 3*time.Second {
			t.Errorf("Retry-After 3: after %v\n%s", time.Since(start), got)
		}
		// An error after text has streamed is reported, never retried.
		after, _ := os.ReadFile("testdata/error_after_text.sse")
		ex = pt.NewReplay(pt.Stream(after), pt.Stream(ok))
		if got := pt.Run(t, newWith(t, Options{Executor: ex}), hello()); ex.Requests() != 1 || !strings.Contains(got, "text 0 \"Partial\"\nerror messages: upstream error (api_error)") {
			t.Errorf("error after text, %d requests:\n%s", ex.Requests(), got)
		}
	})
}

func TestModelVersion(t *testing.T) {
	for _, c := range []struct {
		name         string
		in           string
		major, minor int
		ok           bool
	}{
		{"major and minor", "family-4-6", 4, 6, true},
		{"a tier name before the version, a date after", "family-opus-4-5-20251101", 4, 5, true},
		{"the version before the tier name", "family-3-7-sonnet-20250219", 3, 7, true},
		{"a major version alone, a date after", "family-sonnet-4-20250514", 4, 0, true},
		{"a major version alone", "family-5", 5, 0, true},
		{"a gateway prefix and a dotted version", "gateway/family-4.6", 4, 6, true},
		{"no version", "family", 0, 0, false},
		{"a date is not a version", "family-20250101", 0, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			major, minor, ok := modelVersion(c.in)
			if major != c.major || minor != c.minor || ok != c.ok {
				t.Errorf("%s: %d %d %v", c.in, major, minor, ok)
			}
		})
	}
}

func TestCapabilities(t *testing.T) {
	c := newWith(t, Options{DefaultModel: "family-4-5"}).Capabilities("")
	if !c.Tools || !c.Images || !c.Reasoning || !c.Effort || c.JSONObject || !c.JSONSchema {
		t.Errorf("%+v", c)
	}
	if c := newWith(t, Options{}).Capabilities("family-3-5"); c.Reasoning || c.Effort || !c.Tools {
		t.Errorf("3.5: %+v", c)
	}
}

// TestForeignReasoningLeftOut: after a switch of provider, reasoning that
// another API produced is not sent back (this API would refuse it); its
// own signed and redacted thinking is.
func TestForeignReasoningLeftOut(t *testing.T) {
	msgs := []providers.Message{
		{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "q"}}},
		{Role: providers.RoleAssistant, Content: []providers.Part{
			providers.Reasoning{Redacted: `{"type":"reasoning","id":"rs_1","encrypted_content":"x"}`},
			providers.Reasoning{Text: "thought", Signature: "genai:abc"},
			providers.Reasoning{Text: "mine", Signature: "c2lnbmF0dXJl"},
			providers.Reasoning{Redacted: "b3BhcXVl"},
			providers.Text{Text: "answer"},
		}},
		{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "next"}}},
	}
	b, _ := json.Marshal(wireMessages(msgs).messages)
	got := string(b)
	if strings.Contains(got, "rs_1") || strings.Contains(got, "genai:") {
		t.Fatalf("foreign reasoning sent: %s", got)
	}
	if !strings.Contains(got, `"signature":"c2lnbmF0dXJl"`) || !strings.Contains(got, `"data":"b3BhcXVl"`) {
		t.Fatalf("own reasoning missing: %s", got)
	}
}

// Cancelling the context mid-stream ends it promptly with a cancelled
// error, over a real connection, leaving no goroutine behind.
func TestCancelMidStream(t *testing.T) {
	data, _ := os.ReadFile("testdata/thinking_tools.sse")
	pt.CancelMidStream(t, func(t testing.TB, url string, c *http.Client) providers.Provider {
		return newWith(t, Options{BaseURL: url, Client: c})
	}, hello, data, bytes.Index(data, []byte(`"Checking both."`))+200, func(ev providers.Event) bool {
		return ev.Type == providers.EventTextDelta && ev.Text == "Checking both."
	})
}

// A line over the 16 MiB bound is a clear error, not a hang or a crash.
func TestLineTooLong(t *testing.T) {
	head := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\""
	pt.LineTooLong(t, func(t testing.TB, ex providers.Executor) providers.Provider { return newWith(t, Options{Executor: ex}) }, hello,
		head, "\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
}

// Effort levels map to what each model generation takes.
func TestEffortLevels(t *testing.T) {
	p := newWith(t, Options{})
	for _, c := range []struct {
		name   string
		model  string
		effort providers.Effort
		want   string
	}{
		{"4.6 takes max for xhigh", "family-4-6", providers.EffortXHigh, `"thinking":{"type":"adaptive"},"output_config":{"effort":"max"}`},
		{"xhigh passes on after 4.6", "family-4-7", providers.EffortXHigh, `"thinking":{"type":"adaptive"},"output_config":{"effort":"xhigh"}`},
		{"a later major version is adaptive", "family-5", providers.EffortLow, `"thinking":{"type":"adaptive"},"output_config":{"effort":"low"}`},
		{"before 4.6 a budget of at most half of max_tokens", "family-4-5", providers.EffortMax, `"thinking":{"type":"enabled","budget_tokens":16000}`},
		{"a budget for low effort", "family-3-7", providers.EffortLow, `"thinking":{"type":"enabled","budget_tokens":2048}`},
		{"a budget capped by the default max_tokens", "family-3-7", providers.EffortHigh, `"thinking":{"type":"enabled","budget_tokens":2048}`},
		{"no thinking before 3.7", "family-3-5", providers.EffortHigh, `"max_tokens":4096,"stream":true,"messages"`},
		{"a name without a version takes a budget", "gateway/family", providers.EffortMedium, `"thinking":{"type":"enabled","budget_tokens":2048}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := hello()
			req.Model, req.Effort = c.model, c.effort
			if c.model == "family-4-5" {
				req.MaxTokens = 32000
			}
			body, _, err := p.Body(req)
			if err != nil || !strings.Contains(string(body), c.want) {
				t.Errorf("%s %s: %s %v", c.model, c.effort, body, err)
			}
		})
	}
}

// The executor, logger, payload logger and timeout (docs/providers.md,
// "Options shared by every chat provider") reach the shared plumbing; ping
// events count as data for the idle watchdog.
func TestPlumbingOptions(t *testing.T) {
	data, _ := os.ReadFile("testdata/text.sse")
	pt.CheckPlumbing(t, "messages", "sk-secret", func(t testing.TB, o pt.Plumbing) providers.Provider {
		return newWith(t, Options{APIKey: "sk-secret", Executor: o.Executor, Logger: o.Logger, PayloadLogger: o.PayloadLogger, Timeout: o.Timeout})
	}, hello, data, bytes.Index(data, []byte(`"Hello"`))+100)
}

// With the default deadlines, a long silence filled with the API's ping
// events is never cut: ten minutes of thinking, a ping every 50 s.
func TestPingsKeepALongStreamAlive(t *testing.T) {
	data, _ := os.ReadFile("testdata/text.sse")
	start := bytes.Index(data, []byte("event: content_block_start"))
	ping := []byte("event: ping\ndata: {\"type\": \"ping\"}\n\n")
	body := append([]byte(nil), data[:start]...)
	for range 12 {
		body = append(body, ping...)
	}
	body = append(body, data[start:]...)
	synctest.Test(t, func(t *testing.T) {
		want := pt.Run(t, newWith(t, Options{Executor: pt.NewReplay(pt.Stream(data))}), hello())
		ex := pt.NewReplay(pt.Response{Body: body, Chunk: len(ping), Delay: 50 * time.Second})
		began := time.Now()
		if got := pt.Run(t, newWith(t, Options{Executor: ex}), hello()); got != want || ex.Requests() != 1 || time.Since(began) < 10*time.Minute {
			t.Fatalf("after %v and %d requests:\n%s", time.Since(began), ex.Requests(), got)
		}
	})
}
