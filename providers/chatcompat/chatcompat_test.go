package chatcompat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"agent/providers"
	pt "agent/providers/providertest"
)

func hello() *providers.Request {
	return &providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "hi"}}}}}
}

func localWith(t testing.TB, opts LocalOptions) *LocalProvider {
	t.Helper()
	if opts.DefaultModel == "" {
		opts.DefaultModel = "m-1"
	}
	p, err := NewLocalProvider(opts)
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
		Memory: func(t testing.TB, ex providers.Executor) providers.Provider {
			return localWith(t, LocalOptions{Executor: ex})
		},
		HTTP: func(t testing.TB, url string, c *http.Client) providers.Provider {
			return localWith(t, LocalOptions{BaseURL: url + "/v1", Client: c})
		},
		Retried: func(w string) bool {
			return strings.Contains(w, "error") && !strings.Contains(w, "\ntext") && !strings.HasPrefix(w, "text")
		},
	})
}

// The Collector rebuilds the assistant message with reasoning and
// parallel tool calls.
func TestCollector(t *testing.T) {
	data, _ := os.ReadFile("testdata/tools_parallel.sse")
	s, err := localWith(t, LocalOptions{Executor: pt.NewReplay(pt.Stream(data))}).Chat(context.Background(), hello())
	if err != nil {
		t.Fatal(err)
	}
	var c providers.Collector
	for {
		ev, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		c.Add(ev)
	}
	calls := c.ToolCalls()
	if len(calls) != 2 || calls[0].ID != "call_a1" || string(calls[0].Arguments) != `{"path": "a.go"}` ||
		calls[1].Name != "Grep" || string(calls[1].Arguments) != `{"pattern": "func \\w+"}` {
		t.Fatalf("calls = %+v", calls)
	}
	if f, raw := c.Finish(); f != providers.FinishToolCalls || raw != "tool_calls" {
		t.Fatalf("finish = %v %q", f, raw)
	}
	if u := c.Usage(); u.InputTokens != 120 || u.OutputTokens != 40 {
		t.Fatalf("usage = %+v", u)
	}
}

func TestMissingKey(t *testing.T) {
	_, err := NewReasoningProvider(ReasoningOptions{})
	if !errors.Is(err, providers.ErrMissingKey) || !strings.Contains(err.Error(), "REASONING_API_KEY") {
		t.Fatalf("reasoning: %v", err)
	}
	_, err = NewRegionalProvider(RegionalOptions{APIKey: " "})
	if !errors.Is(err, providers.ErrMissingKey) || !strings.Contains(err.Error(), "REGIONAL_API_KEY") {
		t.Fatalf("regional: %v", err)
	}
	var mk *providers.MissingKeyError
	if !errors.As(err, &mk) || mk.EnvVar != "REGIONAL_API_KEY" {
		t.Fatalf("regional: %#v", err)
	}
	if _, err := NewReasoningProvider(ReasoningOptions{Client: &http.Client{}}); err != nil {
		t.Fatalf("a client waives the key: %v", err)
	}
	if _, err := NewRegionalProvider(RegionalOptions{Client: &http.Client{}}); err != nil {
		t.Fatalf("a client waives the key: %v", err)
	}
	if _, err := NewLocalProvider(LocalOptions{}); err != nil {
		t.Fatalf("local needs no key: %v", err)
	}
}

func TestDefaultsAndHeaders(t *testing.T) {
	rp, _ := NewReasoningProvider(ReasoningOptions{APIKey: "k"})
	if rp.URL() != "https://api.deepseek.com/chat/completions" {
		t.Errorf("reasoning URL %s", rp.URL())
	}
	for region, want := range map[string]string{
		"":           "https://dashscope-intl.aliyuncs.com/compatible-mode/v1/chat/completions",
		"usVirginia": "https://dashscope-us.aliyuncs.com/compatible-mode/v1/chat/completions",
		"beijing":    "https://dashscope.aliyuncs.com/compatible-mode/v1/chat/completions",
		"hongKong":   "https://cn-hongkong.dashscope.aliyuncs.com/compatible-mode/v1/chat/completions",
	} {
		p, err := NewRegionalProvider(RegionalOptions{APIKey: "k", Region: region})
		if err != nil || p.URL() != want {
			t.Errorf("region %q: %v %v", region, p, err)
		}
	}
	if _, err := NewRegionalProvider(RegionalOptions{APIKey: "k", Region: "mars"}); err == nil {
		t.Error("unknown region accepted")
	}
	p, _ := NewRegionalProvider(RegionalOptions{APIKey: "k", Region: "beijing", BaseURL: "https://gw.example/v1/", ResponsesBaseURL: "https://gw.example/r/v1"})
	if p.URL() != "https://gw.example/v1/chat/completions" || p.ResponsesBaseURL() != "https://gw.example/r/v1" {
		t.Errorf("base URL override: %s %s", p.URL(), p.ResponsesBaseURL())
	}
	lp := localWith(t, LocalOptions{})
	if lp.URL() != "http://127.0.0.1:1234/v1/chat/completions" {
		t.Errorf("local URL %s", lp.URL())
	}
	if _, err := NewLocalProvider(LocalOptions{BaseURL: "ftp://x"}); err == nil {
		t.Error("ftp base URL accepted")
	}

	// Keys travel as bearer tokens; local sends its placeholder.
	data, _ := os.ReadFile("testdata/text.sse")
	ex := pt.NewReplay(pt.Stream(data))
	pt.Run(t, localWith(t, LocalOptions{Executor: ex}), hello())
	if h := ex.Header(0); h.Get("Authorization") != "Bearer lm-studio" || h.Get("Accept") != "text/event-stream" || h.Get("Content-Type") != "application/json" {
		t.Errorf("local headers %v", h)
	}
	ex = pt.NewReplay(pt.Stream(data))
	rp, _ = NewReasoningProvider(ReasoningOptions{APIKey: "sk-test", Executor: ex})
	pt.Run(t, rp, hello())
	if h := ex.Header(0); h.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("reasoning headers %v", h)
	}
	ex = pt.NewReplay(pt.Stream(data))
	rp, _ = NewReasoningProvider(ReasoningOptions{Client: &http.Client{}, Executor: ex})
	pt.Run(t, rp, hello())
	if h := ex.Header(0); h.Get("Authorization") != "" {
		t.Errorf("a client without a key must bring its own credentials: %v", h)
	}
}

// The request bodies, checked against golden files.
func TestRequestBodies(t *testing.T) {
	temp := 0.2
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
	tools := []providers.Tool{{Name: "Read", Description: "Read a file", Schema: schema}, {Name: "Bash"}}
	png := []byte{0x89, 'P', 'N', 'G'}
	conversation := []providers.Message{
		{Role: providers.RoleSystem, Content: []providers.Part{providers.Text{Text: "Be brief."}}},
		{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "What is 2+2?"}}},
		{Role: providers.RoleAssistant, Content: []providers.Part{providers.Reasoning{Text: "Simple sum."}, providers.Text{Text: "4"}}},
		{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "Read a.go"}, providers.Image{MediaType: "image/png", Data: png}}},
		{Role: providers.RoleAssistant, Content: []providers.Part{
			providers.Reasoning{Text: "Need the file."},
			providers.ToolCall{ID: "call_1", Name: "Read", Arguments: json.RawMessage(`{"path":"a.go"}`)},
			providers.ToolCall{ID: "call_2", Name: "Bash", Arguments: nil},
		}},
		{Role: providers.RoleTool, Content: []providers.Part{
			providers.ToolResult{CallID: "call_1", Content: []providers.Part{providers.Text{Text: "package a"}, providers.Image{URL: "https://example.com/i.png"}}},
			providers.ToolResult{CallID: "call_2", Content: []providers.Part{providers.Text{Text: "denied"}}, IsError: true},
		}},
		{Role: providers.RoleAssistant, Content: []providers.Part{providers.Reasoning{Text: "Got it."}, providers.Text{Text: "It is package a."}}},
	}
	cases := []struct {
		name string
		p    func(ex providers.Executor) providers.Provider
		req  providers.Request
	}{
		{"local_plain", func(ex providers.Executor) providers.Provider {
			return localWith(t, LocalOptions{Executor: ex})
		}, providers.Request{Messages: conversation[:2], MaxTokens: 100, Temperature: &temp}},
		{"local_tools_required_json_schema", func(ex providers.Executor) providers.Provider {
			return localWith(t, LocalOptions{Executor: ex})
		}, providers.Request{Model: "other", Messages: conversation, Tools: tools, ToolChoice: providers.ToolChoice{Mode: providers.ToolRequired},
			ResponseFormat: providers.ResponseFormat{Type: providers.FormatJSONSchema, Name: "answer", Schema: schema, Strict: true}}},
		{"local_tool_named", func(ex providers.Executor) providers.Provider {
			return localWith(t, LocalOptions{Executor: ex})
		}, providers.Request{Messages: conversation[:2], Tools: tools, ToolChoice: providers.ToolChoice{Mode: providers.ToolNamed, Name: "Bash"}, Effort: providers.EffortLow}},
		{"local_tool_none_json_object", func(ex providers.Executor) providers.Provider {
			return localWith(t, LocalOptions{Executor: ex})
		}, providers.Request{Messages: conversation[:2], Tools: tools, ToolChoice: providers.ToolChoice{Mode: providers.ToolNone},
			ResponseFormat: providers.ResponseFormat{Type: providers.FormatJSONObject}}},
		{"reasoning_tool_turn", func(ex providers.Executor) providers.Provider {
			p, _ := NewReasoningProvider(ReasoningOptions{APIKey: "k", Executor: ex, Thinking: ThinkingEnabled, ReasoningEffort: providers.EffortHigh})
			return p
		}, providers.Request{Messages: dropImages(conversation), Tools: tools}},
		// Written by another provider: no reasoning to send back, so the
		// tool turn's assistant messages carry an empty reasoning_content
		// (the reasoning API refuses them without one); the first turn's
		// answer, outside any tool turn, carries none.
		{"reasoning_tool_turn_without_reasoning", func(ex providers.Executor) providers.Provider {
			p, _ := NewReasoningProvider(ReasoningOptions{APIKey: "k", Executor: ex})
			return p
		}, providers.Request{Messages: dropReasoning(dropImages(conversation)), Tools: tools}},
		// Without thinking nothing goes back, tool turn or not.
		{"reasoning_disabled", func(ex providers.Executor) providers.Provider {
			p, _ := NewReasoningProvider(ReasoningOptions{APIKey: "k", Executor: ex, Thinking: ThinkingDisabled, ReasoningEffort: providers.EffortHigh, DefaultModel: "chat-1"})
			return p
		}, providers.Request{Messages: dropImages(conversation), Temperature: &temp}},
		{"regional_web_effort", func(ex providers.Executor) providers.Provider {
			p, _ := NewRegionalProvider(RegionalOptions{APIKey: "k", Executor: ex, BuiltInWebTools: WebTools{WebSearch: true, WebFetch: true}})
			return p
		}, providers.Request{Messages: conversation[:2], Effort: providers.EffortMedium}},
		{"regional_web_fetch", func(ex providers.Executor) providers.Provider {
			p, _ := NewRegionalProvider(RegionalOptions{APIKey: "k", Executor: ex, BuiltInWebTools: WebTools{WebFetch: true}})
			return p
		}, providers.Request{Messages: conversation[:2]}},
		{"regional_search_only", func(ex providers.Executor) providers.Provider {
			p, _ := NewRegionalProvider(RegionalOptions{APIKey: "k", Executor: ex, BuiltInWebTools: WebTools{WebSearch: true}})
			return p
		}, providers.Request{Model: "model-vl-1", Messages: conversation[3:4]}},
		{"client_options", func(ex providers.Executor) providers.Provider {
			c, err := NewClient(Options{BaseURL: "https://gw.example/v1", DefaultModel: "gw-model", Executor: ex, OmitStreamUsage: true,
				StrictTools: true, MaxTokensField: "max_completion_tokens", EffortField: "effort_level",
				Decorate: func(_ *providers.Request, b map[string]any) error { b["store"] = false; return nil }})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}, providers.Request{Messages: conversation[:2], Tools: tools[:1], MaxTokens: 50, Effort: providers.EffortMax}},
	}
	data, _ := os.ReadFile("testdata/text.sse")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex := pt.NewReplay(pt.Stream(data))
			if got := pt.Run(t, c.p(ex), &c.req); strings.Contains(got, "error") {
				t.Fatal(got)
			}
			pt.Golden(t, "testdata/request_"+c.name+".json", pt.IndentJSON(t, ex.Body(0)))
		})
	}
}

func dropReasoning(msgs []providers.Message) []providers.Message {
	out := make([]providers.Message, 0, len(msgs))
	for _, m := range msgs {
		var parts []providers.Part
		for _, p := range m.Content {
			if _, ok := p.(providers.Reasoning); !ok {
				parts = append(parts, p)
			}
		}
		out = append(out, providers.Message{Role: m.Role, Content: parts})
	}
	return out
}

func dropImages(msgs []providers.Message) []providers.Message {
	out := make([]providers.Message, 0, len(msgs))
	for _, m := range msgs {
		var parts []providers.Part
		for _, p := range m.Content {
			switch p := p.(type) {
			case providers.Image:
				continue
			case providers.ToolResult:
				var keep []providers.Part
				for _, c := range p.Content {
					if _, ok := c.(providers.Image); !ok {
						keep = append(keep, c)
					}
				}
				p.Content = keep
				parts = append(parts, p)
				continue
			}
			parts = append(parts, p)
		}
		out = append(out, providers.Message{Role: m.Role, Content: parts})
	}
	return out
}

// Arguments the API could not take are refused before anything is sent.
func TestRefusedBeforeSending(t *testing.T) {
	ex := pt.NewReplay(pt.Stream(nil))
	rp, _ := NewReasoningProvider(ReasoningOptions{APIKey: "k", Executor: ex})
	img := &providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: []providers.Part{providers.Image{URL: "https://x/y.png"}}}}}
	bad := []*providers.Request{
		img,
		{},
		{Messages: hello().Messages, ResponseFormat: providers.ResponseFormat{Type: providers.FormatJSONSchema, Schema: json.RawMessage(`{}`)}},
		{Messages: hello().Messages, Tools: []providers.Tool{{Name: "bad name"}}},
		{Messages: hello().Messages, Tools: []providers.Tool{{Name: "a"}}, ToolChoice: providers.ToolChoice{Mode: providers.ToolNamed, Name: "b"}},
		{Messages: hello().Messages, Effort: "extreme"},
		{Messages: []providers.Message{{Role: providers.RoleUser, Content: []providers.Part{providers.ToolCall{ID: "x", Name: "y"}}}}},
		{Messages: []providers.Message{{Role: providers.RoleTool, Content: []providers.Part{providers.ToolResult{}}}}},
	}
	for i, req := range bad {
		_, err := rp.Chat(context.Background(), req)
		var pe *providers.Error
		if !errors.Is(err, providers.ErrInvalidRequest) || !errors.As(err, &pe) || pe.Provider != "reasoning" {
			t.Errorf("case %d: %v", i, err)
		}
	}
	if _, err := localWith(t, LocalOptions{Executor: ex, DefaultModel: "-"}).Chat(context.Background(), &providers.Request{Model: "", Messages: hello().Messages}); err != nil {
		t.Errorf("default model: %v", err)
	}
	lp, _ := NewLocalProvider(LocalOptions{Executor: ex})
	if _, err := lp.Chat(context.Background(), hello()); !errors.Is(err, providers.ErrInvalidRequest) {
		t.Errorf("no model: %v", err)
	}
	if ex.Requests() != 1 {
		t.Errorf("%d requests sent, want only the valid one", ex.Requests())
	}
}

func errOf(t *testing.T, p providers.Provider) (*providers.Error, string) {
	t.Helper()
	var evs []providers.Event
	s, err := p.Chat(context.Background(), hello())
	if err == nil {
		evs, err = pt.Drain(s)
	}
	var pe *providers.Error
	if !errors.As(err, &pe) {
		t.Fatalf("not a *providers.Error: %v\n%s", err, pt.Format(evs, err))
	}
	return pe, pt.Format(evs, err)
}

// Status errors map to kinds; transient ones are retried at most twice,
// honouring Retry-After and x-should-retry (docs/providers.md, "Deadlines
// and retries").
func TestStatusAndRetries(t *testing.T) {
	ok, _ := os.ReadFile("testdata/text.sse")
	okWant := pt.Run(t, localWith(t, LocalOptions{Executor: pt.NewReplay(pt.Stream(ok))}), hello())
	synctest.Test(t, func(t *testing.T) {
		cases := []struct {
			name     string
			script   []pt.Response
			kind     error // nil: success
			requests int
			code     string
		}{
			{"429 Retry-After then success", []pt.Response{pt.Status(429, `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`, "Retry-After", "2"), pt.Stream(ok)}, nil, 2, ""},
			{"retry-after-ms", []pt.Response{pt.Status(429, `{}`, "Retry-After-Ms", "250"), pt.Stream(ok)}, nil, 2, ""},
			{"500 twice then success", []pt.Response{pt.Status(500, `{"error":{"message":"oops","type":"server_error"}}`), pt.Status(502, `bad gateway`), pt.Stream(ok)}, nil, 3, ""},
			{"503 three times", []pt.Response{pt.Status(503, `{"error":"overloaded"}`)}, providers.ErrUpstream, 3, ""},
			{"408", []pt.Response{pt.Status(408, ``)}, providers.ErrTimeout, 3, ""},
			{"409 then success", []pt.Response{pt.Status(409, ``), pt.Stream(ok)}, nil, 2, ""},
			{"connection error then success", []pt.Response{{Err: errors.New("connection reset")}, pt.Stream(ok)}, nil, 2, ""},
			{"400 not retried", []pt.Response{pt.Status(400, `{"error":{"message":"bad","type":"invalid_request_error","param":"messages","code":null}}`), pt.Stream(ok)}, providers.ErrInvalidRequest, 1, "invalid_request_error"},
			{"400 context length", []pt.Response{pt.Status(400, `{"error":{"message":"This model's maximum context length is 65536 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`)}, providers.ErrContextTooLong, 1, "context_length_exceeded"},
			{"400 x-should-retry true", []pt.Response{pt.Status(400, `{}`, "X-Should-Retry", "true"), pt.Stream(ok)}, nil, 2, ""},
			{"503 x-should-retry false", []pt.Response{pt.Status(503, `{}`, "X-Should-Retry", "false"), pt.Stream(ok)}, providers.ErrUpstream, 1, ""},
			{"401", []pt.Response{pt.Status(401, `{"error":{"message":"Authentication Fails","type":"authentication_error"}}`)}, providers.ErrAuthentication, 1, "authentication_error"},
			{"402", []pt.Response{pt.Status(402, `{"error":{"message":"Insufficient Balance"}}`)}, providers.ErrAuthentication, 1, ""},
			{"404", []pt.Response{pt.Status(404, `{"error":{"message":"model not found","code":"model_not_found"}}`)}, providers.ErrInvalidRequest, 1, "model_not_found"},
			{"413", []pt.Response{pt.Status(413, `too large`)}, providers.ErrContextTooLong, 1, ""},
			{"redirect", []pt.Response{pt.Status(307, ``, "Location", "http://elsewhere")}, providers.ErrInvalidRequest, 1, ""},
			{"Retry-After over a minute", []pt.Response{pt.Status(429, `{}`, "Retry-After", "120"), pt.Stream(ok)}, providers.ErrRateLimited, 1, ""},
			// An absurd wait counts as longer than a minute, never as none.
			{"negative Retry-After", []pt.Response{pt.Status(429, `{}`, "Retry-After", "-5"), pt.Stream(ok)}, providers.ErrRateLimited, 1, ""},
			{"overflowing retry-after-ms", []pt.Response{pt.Status(429, `{}`, "Retry-After-Ms", "99999999999999999999999"), pt.Stream(ok)}, providers.ErrRateLimited, 1, ""},
			{"Retry-After date far ahead", []pt.Response{pt.Status(503, `{}`, "Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT"), pt.Stream(ok)}, providers.ErrUpstream, 1, ""},
			{"JSON instead of a stream", []pt.Response{{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"error":{"message":"no"}}`)}}, providers.ErrUpstream, 1, ""},
		}
		for _, c := range cases {
			ex := pt.NewReplay(c.script...)
			p := localWith(t, LocalOptions{Executor: ex})
			start := time.Now()
			got := pt.Run(t, p, hello())
			if c.kind == nil {
				if got != okWant {
					t.Errorf("%s: %s", c.name, got)
				}
			} else {
				ex2 := pt.NewReplay(c.script...)
				pe, _ := errOf(t, localWith(t, LocalOptions{Executor: ex2}))
				if !errors.Is(pe, c.kind) || pe.Code != c.code || pe.Provider != "local" {
					t.Errorf("%s: %v (code %q)", c.name, pe, pe.Code)
				}
			}
			if ex.Requests() != c.requests {
				t.Errorf("%s: %d requests, want %d", c.name, ex.Requests(), c.requests)
			}
			if c.name == "429 Retry-After then success" && time.Since(start) != 2*time.Second {
				t.Errorf("waited %v, want the 2 s the server asked", time.Since(start))
			}
			if c.name == "500 twice then success" {
				if d := time.Since(start); d < 1125*time.Millisecond || d > 1500*time.Millisecond {
					t.Errorf("backoff waited %v, want 0.5 s + 1 s less jitter", d)
				}
			}
		}
		pe, _ := errOf(t, localWith(t, LocalOptions{Executor: pt.NewReplay(pt.Status(429, `{}`, "Retry-After", "120"))}))
		if pe.RetryAfter != 2*time.Minute || !pe.Retryable {
			t.Errorf("RetryAfter %v retryable %v", pe.RetryAfter, pe.Retryable)
		}
		pe, _ = errOf(t, localWith(t, LocalOptions{Executor: pt.NewReplay(pt.Status(429, `{"error":{"message":"slow down"}}`, "Retry-After-Ms", "-1"))}))
		if pe.RetryAfter != providers.RetryAfterTooLong || pe.Error() != "local: rate limited (429): slow down; the server asks to wait longer than 1m0s" {
			t.Errorf("absurd Retry-After: %v", pe)
		}
	})
}

// In-stream errors are typed; nothing is retried once an event has
// reached the caller; a stream that fails before its first event is.
func TestStreamFailures(t *testing.T) {
	ok, _ := os.ReadFile("testdata/text.sse")
	okWant := pt.Run(t, localWith(t, LocalOptions{Executor: pt.NewReplay(pt.Stream(ok))}), hello())
	synctest.Test(t, func(t *testing.T) {
		for _, name := range []string{"error_instream", "truncated", "resource"} {
			data, _ := os.ReadFile("testdata/" + name + ".sse")
			ex := pt.NewReplay(pt.Stream(data), pt.Stream(ok))
			got := pt.Run(t, localWith(t, LocalOptions{Executor: ex}), hello())
			if ex.Requests() != 1 || !strings.Contains(got, "error local: upstream error") {
				t.Errorf("%s: %d requests\n%s", name, ex.Requests(), got)
			}
		}
		// Failing before any event: retried.
		for _, data := range []string{"data: {\"choices\":[{\"index\":0,\"delta\":{\"cont", "event: error\ndata: {\"error\":{\"message\":\"busy\",\"type\":\"server_error\"}}\n\n", "data: {\"id\":\"x\",\"choices\":[]}\n\n"} {
			ex := pt.NewReplay(pt.Stream([]byte(data)), pt.Stream(ok))
			got := pt.Run(t, localWith(t, LocalOptions{Executor: ex}), hello())
			if ex.Requests() != 2 || got != okWant {
				t.Errorf("%q: %d requests\n%s", data, ex.Requests(), got)
			}
		}
		// A rate-limit error in the stream is typed as such.
		data, _ := os.ReadFile("testdata/error_event.sse")
		pe, _ := errOf(t, localWith(t, LocalOptions{Executor: pt.NewReplay(pt.Stream(data))}))
		if !errors.Is(pe, providers.ErrRateLimited) || pe.Code != "rate_limit_exceeded" {
			t.Errorf("in-stream rate limit: %v", pe)
		}
	})
}

// A line over the 16 MiB bound is a clear error, not a hang or a crash.
func TestLineTooLong(t *testing.T) {
	pt.LineTooLong(t, func(t testing.TB, ex providers.Executor) providers.Provider {
		return localWith(t, LocalOptions{Executor: ex})
	}, hello,
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"", "\"}}]}\n\ndata: [DONE]\n\n")
}

// The idle watchdog ends a stalled stream; the first-byte deadline ends a
// silent server (retried); a slow but steady stream is never cut.
func TestWatchdog(t *testing.T) {
	data, _ := os.ReadFile("testdata/text.sse")
	synctest.Test(t, func(t *testing.T) {
		// Stalls after the first events were delivered: no retry.
		cut := bytes.Index(data, []byte(`"Hello"`)) + 100
		ex := pt.NewReplay(pt.Response{Body: data, Stall: true, StallAfter: cut})
		p := localWith(t, LocalOptions{Executor: ex, Timeout: 30 * time.Second})
		start := time.Now()
		got := pt.Run(t, p, hello())
		if !strings.Contains(got, "text 0 \"Hello\"") || !strings.Contains(got, "error local: timed out") || ex.Requests() != 1 {
			t.Errorf("stalled stream:\n%s", got)
		}
		if d := time.Since(start); d != 30*time.Second {
			t.Errorf("watchdog fired after %v", d)
		}

		// Silent from the start, with or without an answer's headers: the
		// deadline, retried once (providers.MaxTimeoutRetries).
		for _, r := range []pt.Response{{Body: data, Stall: true}, {NoAnswer: true}} {
			ex = pt.NewReplay(r)
			start = time.Now()
			pe, _ := errOf(t, localWith(t, LocalOptions{Executor: ex, Timeout: 10 * time.Second}))
			if !errors.Is(pe, providers.ErrTimeout) || ex.Requests() != 2 || time.Since(start) > 21*time.Second {
				t.Errorf("silent server: %v after %d requests and %v", pe, ex.Requests(), time.Since(start))
			}
		}

		// Fourteen minutes of a slow stream, one event every 20 s, with a
		// 30 s watchdog: never cut.
		var slow []byte
		const n = 42
		for i := range n {
			slow = fmt.Appendf(slow, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%02d\"}}]}\n\n", i)
		}
		slow = append(slow, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"...)
		ex = pt.NewReplay(pt.Response{Body: slow, Delay: 20 * time.Second, Chunk: len(slow[:bytes.Index(slow, []byte("\n\n"))+2])})
		start = time.Now()
		got = pt.Run(t, localWith(t, LocalOptions{Executor: ex, Timeout: 30 * time.Second}), hello())
		if strings.Count(got, "text 0") != n || !strings.HasSuffix(got, "finish stop \"stop\"\n") || time.Since(start) < 14*time.Minute {
			t.Errorf("slow stream after %v:\n%s", time.Since(start), got)
		}
	})
}

// Cancelling the context mid-stream ends it promptly with a cancelled
// error, over a real connection, leaving no goroutine behind.
func TestCancelMidStream(t *testing.T) {
	data, _ := os.ReadFile("testdata/text.sse")
	pt.CancelMidStream(t, func(t testing.TB, url string, c *http.Client) providers.Provider {
		return localWith(t, LocalOptions{BaseURL: url, Client: c})
	}, hello, data, bytes.Index(data, []byte(`"Hello"`))+100, func(ev providers.Event) bool {
		return ev.Type == providers.EventTextDelta && ev.Text == "Hello"
	})
}

func TestPayloadLogger(t *testing.T) {
	data, _ := os.ReadFile("testdata/text.sse")
	synctest.Test(t, func(t *testing.T) {
		var pl pt.Payloads
		var logs bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		ex := pt.NewReplay(pt.Status(500, `{}`), pt.Stream(data))
		rp, _ := NewReasoningProvider(ReasoningOptions{APIKey: "secret-key", Executor: ex, PayloadLogger: &pl, Logger: logger})
		req := hello()
		req.Tools = []providers.Tool{{Name: "Read"}}
		pt.Run(t, rp, req)
		sums := pl.Summaries()
		if len(sums) != 2 {
			t.Fatalf("%d summaries", len(sums))
		}
		s := sums[1]
		if s.Provider != "reasoning" || s.Model != ReasoningDefaultModel || s.Messages != 1 || s.Tools != 1 || s.Attempt != 2 ||
			s.URL != "https://api.deepseek.com/chat/completions" || s.Bytes != len(ex.Body(1)) {
			t.Errorf("summary %+v", s)
		}
		if l := logs.String(); !strings.Contains(l, "retrying") || strings.Contains(l, "secret-key") || strings.Count(l, `msg="provider request"`) != 2 {
			t.Errorf("logs:\n%s", l)
		}
	})
}

// Each provider hands its executor, logger, payload logger and timeout
// (docs/providers.md, "Options shared by every chat provider") to the
// shared plumbing.
func TestPlumbingOptions(t *testing.T) {
	data, _ := os.ReadFile("testdata/text.sse")
	cut := bytes.Index(data, []byte(`"Hello"`)) + 100
	t.Run("reasoning", func(t *testing.T) {
		pt.CheckPlumbing(t, "reasoning", "sk-secret", func(t testing.TB, o pt.Plumbing) providers.Provider {
			p, err := NewReasoningProvider(ReasoningOptions{APIKey: "sk-secret", Executor: o.Executor, Logger: o.Logger, PayloadLogger: o.PayloadLogger, Timeout: o.Timeout})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}, hello, data, cut)
	})
	t.Run("regional", func(t *testing.T) {
		pt.CheckPlumbing(t, "regional", "sk-secret", func(t testing.TB, o pt.Plumbing) providers.Provider {
			p, err := NewRegionalProvider(RegionalOptions{APIKey: "sk-secret", Executor: o.Executor, Logger: o.Logger, PayloadLogger: o.PayloadLogger, Timeout: o.Timeout})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}, hello, data, cut)
	})
	t.Run("local", func(t *testing.T) {
		pt.CheckPlumbing(t, "local", "", func(t testing.TB, o pt.Plumbing) providers.Provider {
			return localWith(t, LocalOptions{Executor: o.Executor, Logger: o.Logger, PayloadLogger: o.PayloadLogger, Timeout: o.Timeout})
		}, hello, data, cut)
	})
}

func TestCapabilities(t *testing.T) {
	rp, _ := NewReasoningProvider(ReasoningOptions{APIKey: "k"})
	if c := rp.Capabilities(""); c.Images || !c.Reasoning || !c.Tools || c.JSONSchema || !c.JSONObject {
		t.Errorf("reasoning %+v", c)
	}
	rp, _ = NewReasoningProvider(ReasoningOptions{APIKey: "k", Thinking: ThinkingDisabled})
	if c := rp.Capabilities(""); c.Reasoning || !c.Temperature {
		t.Errorf("reasoning without thinking %+v", c)
	}
	gp, _ := NewRegionalProvider(RegionalOptions{APIKey: "k"})
	if c := gp.Capabilities(""); c.Images || !c.Tools {
		t.Errorf("regional %+v", c)
	}
	if c := gp.Capabilities("model-vl-1"); !c.Images {
		t.Errorf("regional vision %+v", c)
	}
	if c := localWith(t, LocalOptions{}).Capabilities(""); !c.Images || !c.JSONSchema {
		t.Errorf("local %+v", c)
	}
	if _, err := NewReasoningProvider(ReasoningOptions{APIKey: "k", Thinking: "maybe"}); err == nil {
		t.Error("thinking maybe accepted")
	}
	if _, err := NewReasoningProvider(ReasoningOptions{APIKey: "k", ReasoningEffort: "huge"}); err == nil {
		t.Error("effort huge accepted")
	}
}

// Several streams at once share one provider.
func TestConcurrentStreams(t *testing.T) {
	data, _ := os.ReadFile("testdata/tools_parallel.sse")
	p := localWith(t, LocalOptions{Executor: pt.NewReplay(pt.Stream(data))})
	want := pt.Run(t, p, hello())
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := pt.Run(t, p, hello()); got != want {
				t.Errorf("concurrent stream:\n%s", got)
			}
		})
	}
	wg.Wait()
}
