package responses

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

	"agent/providers"
	pt "agent/providers/providertest"
)

func hello() *providers.Request {
	return &providers.Request{Model: "model-5", Messages: []providers.Message{{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "hi"}}}}}
}

func newWith(t testing.TB, opts Options) *Provider {
	t.Helper()
	if opts.APIKey == "" && opts.Client == nil {
		opts.APIKey = "test-key"
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
			return newWith(t, Options{BaseURL: url + "/v1", APISurface: SurfaceResponses, Client: c})
		},
		Retried: func(w string) bool { return strings.Contains(w, "error") && !strings.Contains(w, "text") },
	})
}

// The default surface rule (docs/providers.md, "responses
// (`providers/responses`)"), and the refusals of options an endpoint cannot
// honour, before any request.
func TestSurfaceRule(t *testing.T) {
	cases := []struct {
		name    string
		opts    Options
		surface Surface
		url     string
		errSub  string
	}{
		{"official by default", Options{}, SurfaceResponses, "https://api.openai.com/v1/responses", ""},
		{"official named explicitly", Options{BaseURL: "https://api.openai.com/v1/"}, SurfaceResponses, "https://api.openai.com/v1/responses", ""},
		{"custom base URL", Options{BaseURL: "https://gw.example/v1"}, SurfaceChatCompletions, "https://gw.example/v1/chat/completions", ""},
		{"custom base URL, responses asked", Options{BaseURL: "https://gw.example/v1/", APISurface: SurfaceResponses}, SurfaceResponses, "https://gw.example/v1/responses", ""},
		{"official, chat asked", Options{APISurface: SurfaceChatCompletions}, SurfaceChatCompletions, "https://api.openai.com/v1/chat/completions", ""},
		{"unknown surface", Options{APISurface: "assistants"}, "", "", "apiSurface"},
		{"bad base URL", Options{BaseURL: "ftp://x"}, "", "", "base URL"},
		{"web tools on a custom endpoint", Options{BaseURL: "https://gw.example/v1", APISurface: SurfaceResponses, NativeWebTools: NativeWebTools{WebSearch: true}}, "", "", "nativeWebTools: the hosted web tools exist only on the official endpoint"},
		{"web fetch on a custom endpoint", Options{BaseURL: "http://127.0.0.1:9/v1", NativeWebTools: NativeWebTools{WebFetch: true}}, "", "", "official endpoint"},
		{"web tools on chat completions", Options{APISurface: SurfaceChatCompletions, NativeWebTools: NativeWebTools{WebSearch: true}}, "", "", "responses apiSurface"},
		{"web tools official", Options{NativeWebTools: NativeWebTools{WebSearch: true}}, SurfaceResponses, "https://api.openai.com/v1/responses", ""},
		{"json_schema without schema", Options{ResponseFormat: FormatJSONSchema}, "", "", "jsonSchema"},
		{"unknown format", Options{ResponseFormat: "xml"}, "", "", "responseFormat"},
		{"unknown effort", Options{Reasoning: Reasoning{Effort: "extreme"}}, "", "", "reasoning.effort"},
		{"unknown summary", Options{Reasoning: Reasoning{Summary: "long"}}, "", "", "reasoning.summary"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opts.APIKey = "k"
			p, err := New(c.opts)
			if c.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), c.errSub) || strings.Contains(err.Error(), "k\"") {
					t.Errorf("err %v, want one naming %q", err, c.errSub)
				}
				return
			}
			if err != nil || p.Surface() != c.surface || p.URL() != c.url {
				t.Errorf("err %v, surface %v, URL %v", err, p.Surface(), p.URL())
			}
		})
	}
}

func TestMissingKeyAndHeaders(t *testing.T) {
	_, err := New(Options{})
	var mk *providers.MissingKeyError
	if !errors.Is(err, providers.ErrMissingKey) || !errors.As(err, &mk) || mk.EnvVar != "RESPONSES_API_KEY" {
		t.Fatalf("missing key: %v", err)
	}
	data, _ := os.ReadFile("testdata/text.sse")
	for _, surface := range []Surface{SurfaceResponses, SurfaceChatCompletions} {
		body := data
		if surface == SurfaceChatCompletions {
			body, _ = os.ReadFile("../chatcompat/testdata/text.sse")
		}
		ex := pt.NewReplay(pt.Stream(body))
		got := pt.Run(t, newWith(t, Options{APIKey: "sk-r", Organization: "org-1", APISurface: surface, Executor: ex, Header: http.Header{"X-Extra": {"1"}}}), hello())
		if strings.Contains(got, "error") {
			t.Fatalf("%s: %s", surface, got)
		}
		h := ex.Header(0)
		if h.Get("Authorization") != "Bearer sk-r" || h.Get("OpenAI-Organization") != "org-1" || h.Get("X-Extra") != "1" {
			t.Errorf("%s: headers %v", surface, h)
		}
	}
	ex := pt.NewReplay(pt.Stream(data))
	pt.Run(t, newWith(t, Options{Client: &http.Client{}, Executor: ex}), hello())
	if ex.Header(0).Get("Authorization") != "" {
		t.Error("an authorization header without a key")
	}
}

func collect(t *testing.T, p *Provider, req *providers.Request) *providers.Collector {
	t.Helper()
	s, err := p.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := pt.Drain(s)
	if err != nil {
		t.Fatal(err)
	}
	var c providers.Collector
	for _, ev := range evs {
		c.Add(ev)
	}
	return &c
}

// Encrypted reasoning items are asked for and go back unchanged, before the
// function calls they preceded, so that the conversation continues without
// stored state (includeEncryptedReasoning).
func TestEncryptedReasoningRoundTrip(t *testing.T) {
	data, _ := os.ReadFile("testdata/reasoning_tools.sse")
	ex := pt.NewReplay(pt.Stream(data))
	store := false
	p := newWith(t, Options{Executor: ex, Store: &store, IncludeEncryptedReasoning: true, Reasoning: Reasoning{Effort: "medium", Summary: "auto"}})
	req := hello()
	req.Tools = []providers.Tool{{Name: "Glob"}, {Name: "get_weather"}}
	c := collect(t, p, req)
	var first map[string]any
	json.Unmarshal(ex.Body(0), &first)
	if inc, _ := first["include"].([]any); len(inc) != 1 || inc[0] != "reasoning.encrypted_content" || first["store"] != false {
		t.Fatalf("first request %s", ex.Body(0))
	}
	answer := c.Message()
	if len(answer.Content) != 3 {
		t.Fatalf("collected %#v", answer)
	}
	r := answer.Content[0].(providers.Reasoning)
	if r.Text != "**Plan** list files.\n\nThen check weather." || !strings.Contains(r.Redacted, `"encrypted_content":"gAAAAABoENCRYPTED=="`) {
		t.Errorf("reasoning %#v", r)
	}
	if u := c.Usage(); u.InputTokens != 300 || u.OutputTokens != 90 || u.ReasoningTokens != 64 {
		t.Errorf("usage %+v", u)
	}
	if f, _ := c.Finish(); f != providers.FinishToolCalls {
		t.Errorf("finish %s", f)
	}
	next := *req
	next.Messages = append(append([]providers.Message{}, req.Messages...), answer,
		providers.Message{Role: providers.RoleTool, Content: []providers.Part{
			providers.ToolResult{CallID: "call_A", Content: []providers.Part{providers.Text{Text: "a.go"}}},
			providers.ToolResult{CallID: "call_B", Content: []providers.Part{providers.Text{Text: "sunny"}, providers.Image{MediaType: "image/png", Data: []byte("png")}}},
		}})
	body, _, err := p.Body(&next)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, []byte(r.Redacted)) {
		t.Errorf("the reasoning item did not go back unchanged:\n%s", body)
	}
	pt.Golden(t, "testdata/request_encrypted_round_trip.json", pt.IndentJSON(t, body))

	// Without encrypted content and without storage the API could not
	// resolve the item: it is left out. Reasoning of another provider too.
	p2 := newWith(t, Options{Store: &store})
	plain := `{"id":"rs_9","type":"reasoning","summary":[]}`
	next.Messages[1] = providers.Message{Role: providers.RoleAssistant, Content: []providers.Part{
		providers.Reasoning{Redacted: plain}, providers.Reasoning{Text: "other", Signature: "sig"},
		providers.ToolCall{ID: "call_A", Name: "Glob", Arguments: json.RawMessage(`{}`)}, providers.ToolCall{ID: "call_B", Name: "get_weather"}}}
	body, _, _ = p2.Body(&next)
	if bytes.Contains(body, []byte("rs_9")) || bytes.Contains(body, []byte("other")) {
		t.Errorf("unusable reasoning sent: %s", body)
	}
	body, _, _ = newWith(t, Options{}).Body(&next) // stored: the id is enough
	if !bytes.Contains(body, []byte("rs_9")) {
		t.Errorf("stored reasoning left out: %s", body)
	}
}

// The request bodies of both surfaces, checked against golden files.
func TestRequestBodies(t *testing.T) {
	temp := 0.25
	yes := true
	schema := json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false}`)
	tools := []providers.Tool{
		{Name: "Read", Description: "Read a file", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"]}`)},
		{Name: "Bash"},
	}
	conversation := []providers.Message{
		{Role: providers.RoleSystem, Content: []providers.Part{providers.Text{Text: "Be brief."}}},
		{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "Look"}, providers.Image{MediaType: "image/jpeg", Data: []byte{0xff, 0xd8, 0xff}}, providers.Image{URL: "https://example.com/a.png"}}},
		{Role: providers.RoleAssistant, Content: []providers.Part{
			providers.Text{Text: "Reading."},
			providers.ToolCall{ID: "call_1", Name: "Read", Arguments: json.RawMessage(`{"path":"a.go"}`)},
			providers.ToolCall{ID: "call_2", Name: "Bash"},
		}},
		{Role: providers.RoleTool, Content: []providers.Part{providers.ToolResult{CallID: "call_1", Content: []providers.Part{providers.Text{Text: "package a"}}}}},
		{Role: providers.RoleTool, Content: []providers.Part{providers.ToolResult{CallID: "call_2", IsError: true, Content: []providers.Part{providers.Text{Text: "denied"}}}}},
		{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "And now?"}}},
	}
	cases := []struct {
		name string
		opts Options
		req  providers.Request
	}{
		{"plain", Options{}, providers.Request{Model: "model-5", Messages: conversation[1:2]}},
		{"tools_strict_store_org", Options{StrictTools: true, Store: &yes, Organization: "org"}, providers.Request{Model: "model-5", Messages: conversation, Tools: tools, Temperature: &temp, MaxTokens: 500}},
		{"tool_named_effort_max", Options{Reasoning: Reasoning{Summary: "detailed"}}, providers.Request{Model: "model-5", Messages: conversation, Tools: tools, ToolChoice: providers.ToolChoice{Mode: providers.ToolNamed, Name: "Read"}, Effort: providers.EffortMax}},
		{"options_json_schema_web", Options{ResponseFormat: FormatJSONSchema, JSONSchema: &JSONSchema{Name: "answer", Description: "The answer", Schema: schema, Strict: true}, NativeWebTools: NativeWebTools{WebSearch: true, WebFetch: true}, Reasoning: Reasoning{Effort: "minimal"}},
			providers.Request{Model: "model-5", Messages: conversation[:2]}},
		{"request_json_object_wins", Options{ResponseFormat: FormatText}, providers.Request{Model: "model-5", Messages: conversation[:2], ResponseFormat: providers.ResponseFormat{Type: providers.FormatJSONObject}, Tools: tools, ToolChoice: providers.ToolChoice{Mode: providers.ToolRequired}}},
		{"text_format", Options{ResponseFormat: FormatText, DefaultModel: "default-model"}, providers.Request{Messages: conversation[:2], Tools: tools, ToolChoice: providers.ToolChoice{Mode: providers.ToolNone}}},
		{"chat_strict_options_format", Options{APISurface: SurfaceChatCompletions, StrictTools: true, ResponseFormat: FormatJSONSchema, JSONSchema: &JSONSchema{Schema: schema}, Reasoning: Reasoning{Effort: "high"}},
			providers.Request{Model: "gw/model", Messages: conversation, Tools: tools}},
		{"chat_no_stream_usage", Options{BaseURL: "http://127.0.0.1:8000/v1", OmitStreamUsage: true}, providers.Request{Model: "local-model", Messages: conversation[:2], Effort: providers.EffortLow}},
		{"cache_key", Options{}, providers.Request{Model: "model-5", Messages: conversation, Tools: tools, Cache: providers.Cache{Key: "20250101-120000-0a1b2c3d", StaticSystem: 1, Prefix: 2}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := "testdata/text.sse"
			if c.opts.APISurface == SurfaceChatCompletions || c.opts.BaseURL != "" {
				file = "../chatcompat/testdata/text.sse"
			}
			data, _ := os.ReadFile(file)
			ex := pt.NewReplay(pt.Stream(data))
			c.opts.Executor = ex
			if got := pt.Run(t, newWith(t, c.opts), &c.req); strings.Contains(got, "error") {
				t.Fatal(got)
			}
			pt.Golden(t, "testdata/request_"+c.name+".json", pt.IndentJSON(t, ex.Body(0)))
		})
	}
	// includeStreamUsage defaults to on for the chat-completions surface.
	data, _ := os.ReadFile("../chatcompat/testdata/text.sse")
	ex := pt.NewReplay(pt.Stream(data))
	pt.Run(t, newWith(t, Options{BaseURL: "https://gw.example/v1", Executor: ex}), hello())
	if !bytes.Contains(ex.Body(0), []byte(`"stream_options":{"include_usage":true}`)) {
		t.Errorf("stream usage not asked for: %s", ex.Body(0))
	}
	// Invalid arguments are refused before sending.
	ex = pt.NewReplay(pt.Stream(data))
	p := newWith(t, Options{Executor: ex, StrictTools: true})
	for _, req := range []*providers.Request{
		{Messages: hello().Messages},
		{Model: "m", Messages: conversation[:1]},
		{Model: "m", Messages: hello().Messages, Tools: []providers.Tool{{Name: "x", Schema: json.RawMessage(`[]`)}}},
	} {
		if _, err := p.Chat(context.Background(), req); !errors.Is(err, providers.ErrInvalidRequest) || !strings.HasPrefix(err.Error(), "responses: ") {
			t.Errorf("%+v: %v", req, err)
		}
	}
	if ex.Requests() != 0 {
		t.Errorf("%d requests sent for invalid arguments", ex.Requests())
	}
}

// Errors are typed and retried as docs/providers.md, "Deadlines and
// retries", says: transient ones while nothing has reached the caller.
func TestErrorsAndRetries(t *testing.T) {
	ok, _ := os.ReadFile("testdata/text.sse")
	failed, _ := os.ReadFile("testdata/failed.sse")
	rate, _ := os.ReadFile("testdata/error_event.sse")
	synctest.Test(t, func(t *testing.T) {
		want := pt.Run(t, newWith(t, Options{Executor: pt.NewReplay(pt.Stream(ok))}), hello())
		cases := []pt.ErrorCase{
			pt.Case("500 then success", []pt.Response{pt.Status(500, `{"error":{"message":"boom","type":"server_error","code":null}}`), pt.Stream(ok)}, nil, "", 2),
			pt.Case("response.failed then success", []pt.Response{pt.Stream(failed), pt.Stream(ok)}, nil, "", 2),
			pt.Case("in-stream rate limit then success", []pt.Response{pt.Stream(rate), pt.Stream(ok)}, nil, "", 2),
			pt.Case("response.failed three times", []pt.Response{pt.Stream(failed)}, providers.ErrUpstream, "server_error", 3),
			pt.Case("429 with retry-after-ms", []pt.Response{pt.Status(429, `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`, "Retry-After-Ms", "20"), pt.Stream(ok)}, nil, "", 2),
			pt.Case("429 too long to wait", []pt.Response{pt.Status(429, `{"error":{"message":"slow","code":"rate_limit_exceeded"}}`, "Retry-After", "3600")}, providers.ErrRateLimited, "rate_limit_exceeded", 1),
			pt.Case("x-should-retry false", []pt.Response{pt.Status(503, `{"error":{"message":"no"}}`, "X-Should-Retry", "false")}, providers.ErrUpstream, "", 1),
			pt.Case("401", []pt.Response{pt.Status(401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)}, providers.ErrAuthentication, "invalid_api_key", 1),
			pt.Case("context too long", []pt.Response{pt.Status(400, `{"error":{"message":"Your input exceeds the context window of this model.","type":"invalid_request_error","code":"context_length_exceeded"}}`)}, providers.ErrContextTooLong, "context_length_exceeded", 1),
			pt.Case("400", []pt.Response{pt.Status(400, `{"error":{"message":"Unknown parameter","type":"invalid_request_error","param":"x","code":"unknown_parameter"}}`)}, providers.ErrInvalidRequest, "unknown_parameter", 1),
		}
		pt.RunErrorCases(t, "responses", func(ex providers.Executor) providers.Provider { return newWith(t, Options{Executor: ex}) }, hello, want, cases)
		after, _ := os.ReadFile("testdata/error_after_text.sse")
		ex := pt.NewReplay(pt.Stream(after), pt.Stream(ok))
		if got := pt.Run(t, newWith(t, Options{Executor: ex}), hello()); ex.Requests() != 1 || !strings.Contains(got, "text 0 \"Partial\"\nerror responses: upstream error (server_error): stream interrupted") {
			t.Errorf("error after text, %d requests:\n%s", ex.Requests(), got)
		}
		// The chat-completions surface shares the rules and names the provider.
		ex = pt.NewReplay(pt.Status(401, `{"error":{"message":"bad key","code":"invalid_api_key"}}`))
		_, err := newWith(t, Options{BaseURL: "https://gw.example/v1", Executor: ex}).Chat(context.Background(), hello())
		var pe *providers.Error
		if !errors.As(err, &pe) || pe.Provider != "responses" || !errors.Is(err, providers.ErrAuthentication) {
			t.Errorf("chat surface: %v", err)
		}
	})
}

// A stalled stream ends with a timeout through the shared watchdog.
func TestIdleTimeout(t *testing.T) {
	data, _ := os.ReadFile("testdata/text.sse")
	synctest.Test(t, func(t *testing.T) {
		ex := pt.NewReplay(pt.Response{Body: data, Stall: true, StallAfter: 300})
		p := newWith(t, Options{Executor: ex, Timeout: 1000_000_000})
		got := pt.Run(t, p, hello())
		if !strings.Contains(got, "error responses: timed out") {
			t.Errorf("%s", got)
		}
	})
}
