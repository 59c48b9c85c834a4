package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
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

// LoopRequest is a first request for a ToolLoop, shaped as the runtime's:
// a static system prompt, a system text of the session, the context
// message with the instruction files, the prompt, and six tools, with
// the cache marks of docs/providers.md, "Prompt caching".
func LoopRequest() *providers.Request {
	var static, files strings.Builder
	for i := range 60 {
		fmt.Fprintf(&static, "Rule %d: keep changes small, test what you touch, and say what you did.\n", i)
	}
	for i := range 30 {
		fmt.Fprintf(&files, "- Instruction %d of the project: run the tests of a package after changing it.\n", i)
	}
	text := func(role providers.Role, s string) providers.Message {
		return providers.Message{Role: role, Content: []providers.Part{providers.Text{Text: s}}}
	}
	req := &providers.Request{Model: "family-4-5", Messages: []providers.Message{
		text(providers.RoleSystem, static.String()),
		text(providers.RoleSystem, "Today is 2025-01-01. The workspace is /work/project."),
		text(providers.RoleUser, "<instructions>\n"+files.String()+"</instructions>"),
		text(providers.RoleUser, "Find where the parser drops the last line, and fix it."),
	}, Cache: providers.Cache{Key: "session-1", StaticSystem: 1, Prefix: 3}}
	for _, name := range []string{"Read", "Write", "Edit", "Bash", "Glob", "Grep"} {
		req.Tools = append(req.Tools, providers.Tool{Name: name, Description: name + " works on the files of the workspace; paths are relative to its root.",
			Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"the file"},"pattern":{"type":"string"},"limit":{"type":"integer"}},"required":["path"]}`)})
	}
	return req
}

// LoopResult is a tool result for a ToolLoop: a small source file.
func LoopResult(n int, id string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// file %d, read for %s\npackage parser\n", n, id)
	for i := range 12 {
		fmt.Fprintf(&b, "func step%d() int { return %d }\n", i, n*i)
	}
	return b.String()
}

// Unmarked returns a request body without the cache marks written as mark,
// and where each mark stood in the bytes returned. The marks say where the
// API caches; they are not part of what it caches (docs/providers.md,
// "Prompt caching"). A mark must be text that cannot occur inside a JSON
// string, such as a member with its quotes.
func Unmarked(body []byte, mark string) ([]byte, []int) {
	var out []byte
	var at []int
	for {
		i := bytes.Index(body, []byte(mark))
		if i < 0 {
			return append(out, body...), at
		}
		out = append(out, body[:i]...)
		at = append(at, len(out))
		body = body[i+len(mark):]
	}
}

// CheckCachePrefix holds the request bodies of a tool loop, in order, to
// what lets a cache-marking API serve each from its cache: each carries
// one to four marks; each repeats the bytes of the one before up to that
// one's last mark (the marks aside) and marks that place again; and from
// the third on at least 80% of its bytes lie in that prefix. It logs the
// share of each request that is cacheable.
func CheckCachePrefix(t *testing.T, bodies [][]byte, mark string) {
	t.Helper()
	var prev []byte
	var prevMarks []int
	for n, body := range bodies {
		cur, at := Unmarked(body, mark)
		if len(at) == 0 || len(at) > 4 {
			t.Fatalf("request %d: %d cache marks", n+1, len(at))
		}
		if n > 0 {
			end := prevMarks[len(prevMarks)-1]
			if !bytes.HasPrefix(cur, prev[:end]) {
				i := 0
				for i < end && i < len(cur) && cur[i] == prev[i] {
					i++
				}
				t.Fatalf("request %d departs from the cached prefix at byte %d of %d:\n%s", n+1, i, end, cur[max(i-80, 0):min(i+80, len(cur))])
			}
			if !slices.Contains(at, end) {
				t.Errorf("request %d does not mark where request %d ended (%d): %v", n+1, n, end, at)
			}
			share := float64(end) / float64(len(cur))
			t.Logf("request %2d: %6d bytes, %6d cacheable (%.1f%%)", n+1, len(cur), end, 100*share)
			if n >= 2 && share < 0.8 {
				t.Errorf("request %d: only %.1f%% of it is cacheable", n+1, 100*share)
			}
		}
		prev, prevMarks = cur, at
	}
}
