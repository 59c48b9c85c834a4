package providertest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"agent/providers"
)

// ToolLoop describes a scripted tool loop: a conversation that goes on
// for Steps model calls, each answered with tool calls whose results are
// appended before the next call, as the runtime does within a turn.
type ToolLoop struct {
	// Build makes the provider for a test server at baseURL (the
	// server's root).
	Build func(t testing.TB, baseURL string, c *http.Client) providers.Provider
	// First is the first request; each step extends a copy of its
	// messages.
	First *providers.Request
	Steps int
	// Answer is the event stream the server answers call n (from 0)
	// with: an answer that calls tools.
	Answer func(n int) []byte
	// Result is the text of the result of the tool call named id, made
	// in call n.
	Result func(n int, id string) string
}

// Run drives the loop against an httptest server that records every
// request body, and returns the bodies in the order they came.
func (l ToolLoop) Run(t *testing.T) [][]byte {
	t.Helper()
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		mu.Lock()
		n := len(bodies)
		bodies = append(bodies, body)
		mu.Unlock()
		if err != nil || n >= l.Steps {
			http.Error(w, `{"error":{"message":"unexpected request"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(l.Answer(n))
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	p := l.Build(t, srv.URL, &http.Client{Transport: tr})
	req := *l.First
	req.Messages = append([]providers.Message(nil), l.First.Messages...)
	for n := range l.Steps {
		s, err := p.Chat(context.Background(), &req)
		if err != nil {
			t.Fatalf("call %d: %v", n, err)
		}
		evs, err := Drain(s)
		if err != nil {
			t.Fatalf("call %d: %v", n, err)
		}
		var c providers.Collector
		for _, ev := range evs {
			c.Add(ev)
		}
		calls := c.ToolCalls()
		if len(calls) == 0 {
			t.Fatalf("call %d: no tool call in the answer", n)
		}
		results := providers.Message{Role: providers.RoleTool}
		for _, call := range calls {
			results.Content = append(results.Content, providers.ToolResult{CallID: call.ID, Content: []providers.Part{providers.Text{Text: l.Result(n, call.ID)}}})
		}
		req.Messages = append(req.Messages, c.Message(), results)
	}
	mu.Lock()
	defer mu.Unlock()
	return bodies
}
