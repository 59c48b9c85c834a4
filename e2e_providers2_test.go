package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeAPI answers each POST with the next scripted event stream and
// records what it was sent.
type fakeAPI struct {
	srv     *httptest.Server
	mu      sync.Mutex
	streams []string
	reqs    []fakeRequest
}

type fakeRequest struct {
	Path   string // with the query
	Header http.Header
	Body   string
}

func newFakeAPI(t *testing.T, streams ...string) *fakeAPI {
	f := &fakeAPI{streams: streams}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, fakeRequest{Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: string(body)})
		if r.Method == http.MethodGet || strings.HasPrefix(r.URL.Path, "/api/") {
			// The local provider's question about the context window
			// (llama.cpp, LM Studio, Ollama paths) takes no scripted answer.
			f.reqs = f.reqs[:n]
			f.mu.Unlock()
			http.NotFound(w, r)
			return
		}
		f.mu.Unlock()
		if n >= len(f.streams) {
			http.Error(w, `{"error":{"message":"no more scripted answers"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, f.streams[n])
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) requests() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.reqs...)
}

func sseEvents(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		var head struct{ Type string }
		json.Unmarshal([]byte(e), &head)
		if head.Type != "" {
			b.WriteString("event: " + head.Type + "\n")
		}
		b.WriteString("data: " + e + "\n\n")
	}
	return b.String()
}

func trustedSandbox(t *testing.T, settings string) *sandbox {
	t.Helper()
	s := newSandbox(t)
	s.write("~/.agent/settings.json", settings)
	if r := s.run("", "trust", "--yes"); r.Code != 0 {
		t.Fatalf("trust: %+v", r)
	}
	return s
}

// The responses surface end to end: a tool call (Read) with an encrypted
// reasoning item, then the answer. The second request carries the tool's
// output and the reasoning item unchanged; the key comes from
// RESPONSES_API_KEY and the organization from the settings.
func TestE2EProviderResponsesSurface(t *testing.T) {
	reasoning := `{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"ENC+/=="}`
	api := newFakeAPI(t,
		sseEvents(
			`{"type":"response.created","response":{"id":"r1","status":"in_progress"}}`,
			`{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
			`{"type":"response.output_item.done","output_index":0,"item":`+reasoning+`}`,
			`{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"Read","arguments":""}}`,
			`{"type":"response.function_call_arguments.delta","output_index":1,"item_id":"fc_1","delta":"{\"file_path\":\"notes.txt\"}"}`,
			`{"type":"response.output_item.done","output_index":1,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"Read","arguments":"{\"file_path\":\"notes.txt\"}"}}`,
			`{"type":"response.completed","response":{"id":"r1","status":"completed","usage":{"input_tokens":10,"output_tokens":5}}}`),
		sseEvents(
			`{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`,
			`{"type":"response.output_text.delta","output_index":0,"item_id":"msg_1","content_index":0,"delta":"The notes say "}`,
			`{"type":"response.output_text.delta","output_index":0,"item_id":"msg_1","content_index":0,"delta":"hello."}`,
			`{"type":"response.completed","response":{"id":"r2","status":"completed","usage":{"input_tokens":30,"output_tokens":4}}}`))
	s := trustedSandbox(t, `{"providers": {"responses": {"baseURL": "`+api.srv.URL+`/v1", "apiSurface": "responses",
		"organization": "org-e2e", "store": false, "includeEncryptedReasoning": true, "strictTools": true}}}`)
	s.write("notes.txt", "hello from the notes file\n")
	s.Env = append(s.Env, "RESPONSES_API_KEY=sk-e2e-secret")
	r := s.run("", "-p", "--provider", "responses", "--model", "model-e2e", "what do my notes say?")
	if r.Code != 0 || r.Stdout != "The notes say hello.\n" || strings.Contains(r.Stderr, "sk-e2e-secret") {
		t.Fatalf("%+v", r)
	}
	reqs := api.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, q := range reqs {
		if q.Path != "/v1/responses" || q.Header.Get("Authorization") != "Bearer sk-e2e-secret" || q.Header.Get("OpenAI-Organization") != "org-e2e" {
			t.Errorf("request %s %v", q.Path, q.Header)
		}
	}
	var first map[string]any
	json.Unmarshal([]byte(reqs[0].Body), &first)
	if first["model"] != "model-e2e" || first["store"] != false || !strings.Contains(reqs[0].Body, `"include":["reasoning.encrypted_content"]`) || !strings.Contains(reqs[0].Body, `"strict":true`) {
		t.Errorf("first request %s", reqs[0].Body)
	}
	second := reqs[1].Body
	if !strings.Contains(second, reasoning) || !strings.Contains(second, `"type":"function_call_output","call_id":"call_1"`) || !strings.Contains(second, "hello from the notes file") {
		t.Errorf("second request %s", second)
	}
}

// A custom base URL without apiSurface speaks chat completions
// (docs/providers.md, "responses (`providers/responses`)"), with stream
// usage asked for unless includeStreamUsage is false.
func TestE2EProviderResponsesChatSurface(t *testing.T) {
	chunk := `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"via chat"},"finish_reason":null}]}`
	end := `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	stream := "data: " + chunk + "\n\ndata: " + end + "\n\ndata: [DONE]\n\n"
	api := newFakeAPI(t, stream, stream)
	s := trustedSandbox(t, `{"defaultModel": {"provider": "responses", "model": "gw-model"}, "providers": {"responses": {"baseURL": "`+api.srv.URL+`/v1"}}}`)
	s.Env = append(s.Env, "RESPONSES_API_KEY=k")
	if r := s.run("", "-p", "hi"); r.Code != 0 || r.Stdout != "via chat\n" {
		t.Fatalf("%+v", r)
	}
	s.write("~/.agent/settings.json", `{"defaultModel": {"provider": "responses", "model": "gw-model"}, "providers": {"responses": {"baseURL": "`+api.srv.URL+`/v1", "includeStreamUsage": false}}}`)
	if r := s.run("", "-p", "hi"); r.Code != 0 || r.Stdout != "via chat\n" {
		t.Fatalf("%+v", r)
	}
	reqs := api.requests()
	if reqs[0].Path != "/v1/chat/completions" || !strings.Contains(reqs[0].Body, `"stream_options":{"include_usage":true}`) || strings.Contains(reqs[1].Body, "stream_options") {
		t.Errorf("requests %+v", reqs)
	}
}

// Refusals before any request: a missing key names its variable; the
// hosted web tools on a custom endpoint; image output from a model that is
// not image-capable.
func TestE2EProviderRefusals(t *testing.T) {
	api := newFakeAPI(t)
	cases := []struct {
		name, settings, provider, env, errSub string
	}{
		{"responses without key", `{}`, "responses", "", "RESPONSES_API_KEY"},
		{"genai without key", `{}`, "genai", "", "GENAI_API_KEY"},
		{"web tools on a custom endpoint", `{"providers": {"responses": {"baseURL": "` + api.srv.URL + `/v1", "apiSurface": "responses", "nativeWebTools": {"webSearch": true}}}}`, "responses", "RESPONSES_API_KEY=k", "nativeWebTools"},
		{"image output from a text model", `{"providers": {"genai": {"baseURL": "` + api.srv.URL + `", "model": "text-model", "defaultResponseModalities": ["TEXT", "IMAGE"]}}}`, "genai", "GENAI_API_KEY=k", `model "text-model" cannot return images`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := trustedSandbox(t, c.settings)
			if c.env != "" {
				s.Env = append(s.Env, c.env)
			}
			r := s.run("", "-p", "--provider", c.provider, "hi")
			if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, c.errSub) {
				t.Errorf("%+v", r)
			}
		})
	}
	if n := len(api.requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// The genai surface end to end: a function call with a thought signature,
// then the answer; the signature goes back on the call, the key in its
// header, the options under providers.genai in the body.
func TestE2EProviderGenai(t *testing.T) {
	call := `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"Read","args":{"file_path":"notes.txt"}},"thoughtSignature":"SIG-e2e"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":3},"responseId":"g1"}`
	answer1 := `{"candidates":[{"content":{"role":"model","parts":[{"text":"Genai read: "}]}}],"responseId":"g2"}`
	answer2 := `{"candidates":[{"content":{"role":"model","parts":[{"text":"hello."}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":4},"responseId":"g2"}`
	api := newFakeAPI(t, "data: "+call+"\n\n", "data: "+answer1+"\n\ndata: "+answer2+"\n\n")
	s := trustedSandbox(t, `{"providers": {"genai": {"baseURL": "`+api.srv.URL+`", "model": "gemini-e2e",
		"thinkingConfig": {"includeThoughts": true, "thinkingBudget": 1024},
		"safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}]}}}`)
	s.write("notes.txt", "hello from the notes file\n")
	s.Env = append(s.Env, "GENAI_API_KEY=g-e2e-secret")
	r := s.run("", "-p", "--provider", "genai", "what do my notes say?")
	if r.Code != 0 || r.Stdout != "Genai read: hello.\n" || strings.Contains(r.Stderr, "g-e2e-secret") {
		t.Fatalf("%+v", r)
	}
	reqs := api.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, q := range reqs {
		if q.Path != "/v1beta/models/gemini-e2e:streamGenerateContent?alt=sse" || q.Header.Get("X-Goog-Api-Key") != "g-e2e-secret" {
			t.Errorf("request %s %v", q.Path, q.Header)
		}
	}
	if !strings.Contains(reqs[0].Body, `"thinkingConfig":{"includeThoughts":true,"thinkingBudget":1024}`) || !strings.Contains(reqs[0].Body, `"threshold":"BLOCK_ONLY_HIGH"`) {
		t.Errorf("first request %s", reqs[0].Body)
	}
	second := reqs[1].Body
	if !strings.Contains(second, `"functionCall":{"name":"Read","args":{"file_path":"notes.txt"}},"thoughtSignature":"SIG-e2e"`) ||
		!strings.Contains(second, `"functionResponse":{"name":"Read","response":{"output":`) || !strings.Contains(second, "hello from the notes file") {
		t.Errorf("second request %s", second)
	}
}
