// Package fakemodel is a scripted model server for tests: it speaks the
// chat-completions streaming surface (the client appends /chat/completions
// to a base URL that includes /v1; docs/providers.md, "Endpoint paths and
// masked URLs") and answers each request with the next scripted Reply,
// recording the request bodies. It is test support: only tests import it.
//
// Imports: standard library only.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// ToolCall is a scripted tool call.
type ToolCall struct {
	ID   string
	Name string
	Args string // JSON text, sent in two pieces to exercise argument deltas
}

// Reply is one scripted answer.
type Reply struct {
	Text      string
	Reasoning string
	ToolCalls []ToolCall
	Status    int    // non-zero: answer with this HTTP status and Body instead
	Body      string // for Status
	// Hang sends the first piece of Text, then waits until the client goes
	// away (to test abort).
	Hang bool
	// InputTokens and OutputTokens are reported in a usage chunk.
	InputTokens, OutputTokens int
}

// Server is a running fake model server.
type Server struct {
	srv      *httptest.Server
	mu       sync.Mutex
	replies  []Reply
	requests [][]byte
	started  chan struct{} // receives one value per request received
	// window, when set, refuses a request over window tokens (its body's
	// bytes / 4) as too long, as a real server does; summary answers a
	// compaction's summary request. Neither takes a scripted reply.
	window  int
	summary string
	refused int
}

// SummaryMarker starts the system message of the runtime's summary
// request (docs/reference/runtime.md, "Context management").
const SummaryMarker = "You write the working summary"

// SetContext makes the server enforce a context window of window tokens
// (0: none) and answer summary requests with summary ("" takes them from
// the script like any request).
func (s *Server) SetContext(window int, summary string) {
	s.mu.Lock()
	s.window, s.summary = window, summary
	s.mu.Unlock()
}

// Refused is how many requests the window refused.
func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// New starts a server with scripted replies. Requests beyond the script
// get a plain "ok" answer.
func New(replies ...Reply) *Server {
	s := &Server{replies: replies, started: make(chan struct{}, 1024)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// URL is the base URL including /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Close stops the server.
func (s *Server) Close() { s.srv.CloseClientConnections(); s.srv.Close() }

// Add appends replies to the script.
func (s *Server) Add(r ...Reply) {
	s.mu.Lock()
	s.replies = append(s.replies, r...)
	s.mu.Unlock()
}

// Requests returns the request bodies received so far.
func (s *Server) Requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.requests...)
}

// Started receives a value each time a request arrives.
func (s *Server) Started() <-chan struct{} { return s.started }

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	s.mu.Lock()
	s.requests = append(s.requests, body)
	rep := Reply{Text: "ok"}
	switch {
	case s.window > 0 && len(body)/4 > s.window:
		s.refused++
		rep = Reply{Status: 400, Body: `{"error":{"message":"This model's maximum context length is exceeded","type":"invalid_request_error","code":"context_length_exceeded"}}`}
	case s.summary != "" && strings.Contains(string(body), SummaryMarker):
		rep = Reply{Text: s.summary, InputTokens: len(body) / 4, OutputTokens: len(s.summary) / 4}
	case len(s.replies) > 0:
		rep, s.replies = s.replies[0], s.replies[1:]
	}
	s.mu.Unlock()
	select {
	case s.started <- struct{}{}:
	default:
	}
	if rep.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.Status)
		io.WriteString(w, rep.Body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if rep.Reasoning != "" {
		send(chunk(map[string]any{"reasoning_content": rep.Reasoning}, nil))
	}
	if rep.Hang {
		first := rep.Text
		if len(first) > 4 {
			first = first[:4]
		}
		send(chunk(map[string]any{"content": first}, nil))
		<-r.Context().Done()
		return
	}
	for _, piece := range split(rep.Text) {
		send(chunk(map[string]any{"content": piece}, nil))
	}
	for i, tc := range rep.ToolCalls {
		half := len(tc.Args) / 2
		send(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": tc.Args[:half]}}}}, nil))
		send(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": tc.Args[half:]}}}}, nil))
	}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	send(chunk(map[string]any{}, finish))
	if rep.InputTokens+rep.OutputTokens > 0 {
		send(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "choices": []any{},
			"usage": map[string]any{"prompt_tokens": rep.InputTokens, "completion_tokens": rep.OutputTokens, "total_tokens": rep.InputTokens + rep.OutputTokens}})
	}
	io.WriteString(w, "data: [DONE]\n\n")
}

// split cuts text into a few pieces so clients see several deltas.
func split(text string) []string {
	if text == "" {
		return nil
	}
	words := strings.SplitAfter(text, " ")
	return words
}
