package genai

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
	return &providers.Request{Model: "gemini-2.5-flash", Messages: []providers.Message{{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "hi"}}}}}
}

func newWith(t testing.TB, opts Options) *Provider {
	t.Helper()
	if opts.APIKey == "" {
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
			return newWith(t, Options{BaseURL: url, Client: c})
		},
		Retried: func(w string) bool { return strings.Contains(w, "error") && !strings.Contains(w, "text") },
	})
}

func TestOptionsKeyAndURL(t *testing.T) {
	_, err := New(Options{})
	var mk *providers.MissingKeyError
	if !errors.Is(err, providers.ErrMissingKey) || !errors.As(err, &mk) || mk.EnvVar != "GENAI_API_KEY" {
		t.Fatalf("missing key: %v", err)
	}
	if _, err := New(Options{Client: &http.Client{}}); !errors.Is(err, providers.ErrMissingKey) {
		t.Errorf("a client replaced the key (genai always requires one): %v", err)
	}
	for _, c := range []struct {
		name   string
		opts   Options
		errSub string
	}{
		{"a base URL that is not HTTP", Options{BaseURL: "ftp://x"}, "base URL"},
		{"an unsupported response MIME type", Options{ResponseMimeType: "text/html"}, "responseMimeType"},
		{"a schema in both forms", Options{ResponseSchema: json.RawMessage(`{}`), ResponseJSONSchema: json.RawMessage(`{}`)}, "only one"},
		{"a JSON schema that is not an object", Options{ResponseJSONSchema: json.RawMessage(`[]`)}, "responseJsonSchema"},
		{"a tool config that is not an object", Options{ToolConfig: json.RawMessage(`"x"`)}, "toolConfig"},
		{"an unsupported response modality", Options{DefaultResponseModalities: []string{"AUDIO"}}, "defaultResponseModalities[0]"},
		{"a safety setting without a threshold", Options{SafetySettings: []SafetySetting{{Category: "HARM_CATEGORY_HARASSMENT"}}}, "safetySettings[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.APIKey = "secret-key"
			if _, err := New(c.opts); err == nil || !strings.Contains(err.Error(), c.errSub) || strings.Contains(err.Error(), "secret-key") {
				t.Errorf("%+v: %v", c.opts, err)
			}
		})
	}
	p := newWith(t, Options{BaseURL: "https://gw.example/root/"})
	if got := p.URL("models/gemini 2"); got != "https://gw.example/root/v1beta/models/gemini%202:streamGenerateContent?alt=sse" {
		t.Errorf("URL %s", got)
	}
	if got := newWith(t, Options{}).URL("m"); got != "https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse" {
		t.Errorf("default URL %s", got)
	}
	data, _ := os.ReadFile("testdata/text.sse")
	ex := pt.NewReplay(pt.Stream(data))
	pt.Run(t, newWith(t, Options{APIKey: "g-key", Executor: ex, Header: http.Header{"X-Extra": {"1"}}}), hello())
	if h := ex.Header(0); h.Get("X-Goog-Api-Key") != "g-key" || h.Get("X-Extra") != "1" || h.Get("Authorization") != "" {
		t.Errorf("headers %v", h)
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

// Function calls come back with their thought signatures on the same
// parts, as the API requires; made-up call ids are not sent, API ids are.
func TestSignatureRoundTrip(t *testing.T) {
	data, _ := os.ReadFile("testdata/thinking_tools.sse")
	budget := 2048
	p := newWith(t, Options{Executor: pt.NewReplay(pt.Stream(data)), ThinkingConfig: &ThinkingConfig{IncludeThoughts: true, ThinkingBudget: &budget}})
	req := hello()
	req.Tools = []providers.Tool{{Name: "Glob"}, {Name: "get_weather"}}
	c := collect(t, p, req)
	answer := c.Message()
	if len(answer.Content) != 4 {
		t.Fatalf("collected %#v", answer)
	}
	if r := answer.Content[0].(providers.Reasoning); r.Text != "**Listing** files first. Then the weather." {
		t.Errorf("thought %#v", r)
	}
	if r := answer.Content[1].(providers.Reasoning); r.Signature != "genai:CiQBcsjafSIGNATURE1" {
		t.Errorf("signature %#v", r)
	}
	if u := c.Usage(); u.InputTokens != 40 || u.OutputTokens != 82 || u.ReasoningTokens != 52 {
		t.Errorf("usage %+v", u)
	}
	if f, _ := c.Finish(); f != providers.FinishToolCalls {
		t.Errorf("finish %s", f)
	}
	calls := c.ToolCalls()
	next := *req
	next.Messages = append(append([]providers.Message{}, req.Messages...), answer,
		providers.Message{Role: providers.RoleTool, Content: []providers.Part{
			providers.ToolResult{CallID: calls[0].ID, Content: []providers.Part{providers.Text{Text: "a.go"}}},
			providers.ToolResult{CallID: calls[1].ID, IsError: true, Content: []providers.Part{providers.Text{Text: "no network"}, providers.Image{MediaType: "image/png", Data: []byte("png")}}},
		}})
	body, _, err := p.Body(&next)
	if err != nil {
		t.Fatal(err)
	}
	pt.Golden(t, "testdata/request_signature_round_trip.json", pt.IndentJSON(t, body))
	if bytes.Contains(body, []byte(generatedID)) || !bytes.Contains(body, []byte(`"functionCall":{"name":"Glob","args":{"pattern":"**/*.go"}},"thoughtSignature":"CiQBcsjafSIGNATURE1"`)) {
		t.Errorf("body %s", body)
	}

	// API ids go back on the call and the response; signatures of text
	// parts on their part; another API's signatures never.
	data, _ = os.ReadFile("testdata/tool_ids.sse")
	p = newWith(t, Options{Executor: pt.NewReplay(pt.Stream(data))})
	answer = collect(t, p, hello()).Message()
	msgs := append(hello().Messages, answer, providers.Message{Role: providers.RoleTool, Content: []providers.Part{providers.ToolResult{CallID: "fc-7", Content: []providers.Part{providers.Text{Text: "package a"}}}}},
		providers.Message{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "next"}}},
		providers.Message{Role: providers.RoleAssistant, Content: []providers.Part{providers.Reasoning{Text: "foreign", Signature: "EqQBforeign"}, providers.Text{Text: "Answer"}, providers.Reasoning{Signature: "genai:TXTSIG"}}},
		providers.Message{Role: providers.RoleAssistant, Content: []providers.Part{providers.Reasoning{Signature: "genai:LONE"}}})
	body, _, err = p.Body(&providers.Request{Model: "m", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"functionCall":{"id":"fc-7","name":"Read","args":{"path":"a.go"}},"thoughtSignature":"SIG2"}`,
		`{"functionResponse":{"id":"fc-7","name":"Read","response":{"output":"package a"}}}`,
		`{"text":"Answer","thoughtSignature":"TXTSIG"},{"text":"","thoughtSignature":"LONE"}`,
	} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("missing %s in\n%s", want, body)
		}
	}
	if bytes.Contains(body, []byte("foreign")) {
		t.Errorf("another API's reasoning sent: %s", body)
	}
}

// Image output: asked for with the response modalities, refused before any
// request for a model that is not image-capable, streamed as EventImage and
// sent back as inline data.
func TestImageOutput(t *testing.T) {
	data, _ := os.ReadFile("testdata/image.sse")
	ex := pt.NewReplay(pt.Stream(data))
	p := newWith(t, Options{Executor: ex, DefaultResponseModalities: []string{ModalityText, ModalityImage}})
	req := hello()
	_, err := p.Chat(context.Background(), req)
	if !errors.Is(err, providers.ErrInvalidRequest) || !strings.Contains(err.Error(), `genai: invalid request: model "gemini-2.5-flash" cannot return images`) {
		t.Errorf("not refused: %v", err)
	}
	req.Model = "gemini-2.5-flash-image"
	c := collect(t, p, req)
	if ex.Requests() != 1 {
		t.Fatalf("%d requests", ex.Requests())
	}
	var sent map[string]any
	json.Unmarshal(ex.Body(0), &sent)
	if m := sent["generationConfig"].(map[string]any)["responseModalities"].([]any); len(m) != 2 || m[1] != "IMAGE" {
		t.Errorf("modalities %v", m)
	}
	answer := c.Message()
	im, ok := answer.Content[1].(providers.Image)
	if !ok || im.MediaType != "image/png" || !bytes.HasPrefix(im.Data, []byte("\x89PNG")) {
		t.Fatalf("collected %#v", answer)
	}
	body, _, err := p.Body(&providers.Request{Model: req.Model, Messages: append(req.Messages, answer, providers.Message{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "bigger"}}})})
	if err != nil || !bytes.Contains(body, []byte(`{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgpmYWtlaW1hZ2U="},"thoughtSignature":"IMGSIG"}`)) {
		t.Errorf("%v %s", err, body)
	}
	// The list is the caller's: an explicit list replaces the defaults.
	p = newWith(t, Options{Executor: ex, DefaultResponseModalities: []string{ModalityImage}, ImageCapableModels: []string{"my-image-model"}})
	if _, err := p.Chat(context.Background(), req); !errors.Is(err, providers.ErrInvalidRequest) {
		t.Errorf("a model outside the list: %v", err)
	}
	req.Model = "my-image-model"
	if got := pt.Run(t, p, req); strings.Contains(got, "error") {
		t.Error(got)
	}
	if ex.Requests() != 2 {
		t.Errorf("%d requests", ex.Requests())
	}
}

// The request bodies, checked against golden files.
func TestRequestBodies(t *testing.T) {
	temp := 0.5
	zero := 0
	schema := json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`)
	tools := []providers.Tool{{Name: "Read", Description: "Read a file", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}, {Name: "Bash"}}
	conversation := []providers.Message{
		{Role: providers.RoleSystem, Content: []providers.Part{providers.Text{Text: "Be brief."}}},
		{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "Look"}, providers.Image{MediaType: "image/jpeg", Data: []byte{0xff, 0xd8, 0xff}}, providers.Image{MediaType: "image/png", URL: "https://example.com/a.png"}}},
		{Role: providers.RoleAssistant, Content: []providers.Part{providers.Text{Text: "Reading."}, providers.ToolCall{ID: "genai-call-r-0", Name: "Read", Arguments: json.RawMessage(`{"path":"a.go"}`)}, providers.ToolCall{ID: "genai-call-r-1", Name: "Bash", Arguments: json.RawMessage(`cut off`)}}},
		{Role: providers.RoleTool, Content: []providers.Part{providers.ToolResult{CallID: "genai-call-r-0", Content: []providers.Part{providers.Text{Text: "package a"}}}}},
		{Role: providers.RoleTool, Content: []providers.Part{providers.ToolResult{CallID: "genai-call-r-1", IsError: true}}},
		{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "And now?"}}},
	}
	cases := []struct {
		name string
		opts Options
		req  providers.Request
	}{
		{"plain", Options{}, providers.Request{Model: "gemini-2.5-flash", Messages: conversation[1:2]}},
		{"tools_thinking_safety", Options{ThinkingConfig: &ThinkingConfig{IncludeThoughts: true, ThinkingBudget: &zero},
			SafetySettings: []SafetySetting{{Category: "HARM_CATEGORY_HARASSMENT", Threshold: "BLOCK_ONLY_HIGH"}, {Category: "HARM_CATEGORY_DANGEROUS_CONTENT", Threshold: "BLOCK_NONE"}}},
			providers.Request{Model: "gemini-2.5-pro", Messages: conversation, Tools: tools, Temperature: &temp, MaxTokens: 800}},
		{"tool_named_effort", Options{}, providers.Request{Model: "m", Messages: conversation, Tools: tools, ToolChoice: providers.ToolChoice{Mode: providers.ToolNamed, Name: "Read"}, Effort: providers.EffortHigh}},
		{"tool_config_passthrough_mime_schema", Options{ToolConfig: json.RawMessage(`{"functionCallingConfig":{"mode":"VALIDATED"}}`), ResponseMimeType: "application/json", ResponseSchema: json.RawMessage(`{"type":"OBJECT","properties":{"a":{"type":"STRING"}}}`), DefaultModel: "default-m"},
			providers.Request{Messages: conversation[:2], Tools: tools, ToolChoice: providers.ToolChoice{Mode: providers.ToolRequired}}},
		{"request_json_schema_wins", Options{ResponseMimeType: "text/plain", ResponseJSONSchema: json.RawMessage(`{"type":"string"}`)},
			providers.Request{Model: "m", Messages: conversation[:2], ResponseFormat: providers.ResponseFormat{Type: providers.FormatJSONSchema, Schema: schema}, Tools: tools, ToolChoice: providers.ToolChoice{Mode: providers.ToolNone}}},
		{"text_modality", Options{DefaultResponseModalities: []string{"TEXT"}}, providers.Request{Model: "m", Messages: conversation[1:2], ResponseFormat: providers.ResponseFormat{Type: providers.FormatJSONObject}}},
	}
	data, _ := os.ReadFile("testdata/text.sse")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex := pt.NewReplay(pt.Stream(data))
			c.opts.Executor = ex
			if got := pt.Run(t, newWith(t, c.opts), &c.req); strings.Contains(got, "error") {
				t.Fatal(got)
			}
			pt.Golden(t, "testdata/request_"+c.name+".json", pt.IndentJSON(t, ex.Body(0)))
		})
	}
	ex := pt.NewReplay(pt.Stream(data))
	p := newWith(t, Options{Executor: ex})
	for _, req := range []*providers.Request{
		{Messages: hello().Messages},
		{Model: "m", Messages: conversation[:1]},
	} {
		if _, err := p.Chat(context.Background(), req); !errors.Is(err, providers.ErrInvalidRequest) || !strings.HasPrefix(err.Error(), "genai: ") {
			t.Errorf("%+v: %v", req, err)
		}
	}
	if ex.Requests() != 0 {
		t.Errorf("%d requests sent for invalid arguments", ex.Requests())
	}
}

func TestErrorsAndRetries(t *testing.T) {
	ok, _ := os.ReadFile("testdata/text.sse")
	over, _ := os.ReadFile("testdata/error_instream.sse")
	bare, _ := os.ReadFile("testdata/error_bare.sse")
	const bareExhausted = "{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"Resource has been exhausted (e.g. check quota).\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n"
	synctest.Test(t, func(t *testing.T) {
		want := pt.Run(t, newWith(t, Options{Executor: pt.NewReplay(pt.Stream(ok))}), hello())
		unavailable := `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`
		cases := []pt.ErrorCase{
			pt.Case("503 then success", []pt.Response{pt.Status(503, unavailable), pt.Stream(ok)}, nil, "", 2),
			pt.Case("503 as a list", []pt.Response{pt.Status(503, "["+unavailable+"]")}, providers.ErrUpstream, "UNAVAILABLE", 3),
			pt.Case("in-stream unavailable then success", []pt.Response{pt.Stream(over), pt.Stream(ok)}, nil, "", 2),
			pt.Case("in-stream unavailable three times", []pt.Response{pt.Stream(over)}, providers.ErrUpstream, "UNAVAILABLE", 3),
			// After the stream began the API writes an error as a bare JSON
			// object, on one line or over several.
			pt.Case("bare unavailable then success", []pt.Response{pt.Stream(bare), pt.Stream(ok)}, nil, "", 2),
			pt.Case("bare unavailable three times", []pt.Response{pt.Stream(bare)}, providers.ErrUpstream, "UNAVAILABLE", 3),
			pt.Case("bare multi-line resource exhausted then success", []pt.Response{pt.Stream([]byte(bareExhausted)), pt.Stream(ok)}, nil, "", 2),
			pt.Case("bare multi-line resource exhausted three times", []pt.Response{pt.Stream([]byte(bareExhausted))}, providers.ErrRateLimited, "RESOURCE_EXHAUSTED", 3),
			pt.Case("bare invalid argument", []pt.Response{pt.Stream([]byte(`{"error": {"code": 400, "message": "Invalid value.", "status": "INVALID_ARGUMENT"}}`))}, providers.ErrInvalidRequest, "INVALID_ARGUMENT", 1),
			pt.Case("429", []pt.Response{pt.Status(429, `{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}`, "Retry-After", "1"), pt.Stream(ok)}, nil, "", 2),
			pt.Case("bad key", []pt.Response{pt.Status(400, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`)}, providers.ErrAuthentication, "API_KEY_INVALID", 1),
			pt.Case("403", []pt.Response{pt.Status(403, `{"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}`)}, providers.ErrAuthentication, "PERMISSION_DENIED", 1),
			pt.Case("too long", []pt.Response{pt.Status(400, `{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`)}, providers.ErrContextTooLong, "INVALID_ARGUMENT", 1),
			pt.Case("404 model", []pt.Response{pt.Status(404, `{"error":{"code":404,"message":"models/x is not found","status":"NOT_FOUND"}}`)}, providers.ErrInvalidRequest, "NOT_FOUND", 1),
		}
		pt.RunErrorCases(t, "genai", func(ex providers.Executor) providers.Provider { return newWith(t, Options{Executor: ex}) }, hello, want, cases)
		after, _ := os.ReadFile("testdata/error_after_text.sse")
		ex := pt.NewReplay(pt.Stream(after), pt.Stream(ok))
		if got := pt.Run(t, newWith(t, Options{Executor: ex}), hello()); ex.Requests() != 1 || !strings.Contains(got, "text 0 \"Partial\"\nerror genai: upstream error (INTERNAL)") {
			t.Errorf("error after text, %d requests:\n%s", ex.Requests(), got)
		}
	})
}
