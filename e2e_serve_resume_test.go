package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"agent/internal/fakemodel"
	"agent/internal/sse"
)

// TestE2EServeResume: over loopback HTTP, a client whose connection drops
// in the middle of agent_submit resumes the answer with GET and
// Last-Event-ID; the turn was not cancelled by the drop
// (docs/reference/mcp.md, "Resumable streams").
func TestE2EServeResume(t *testing.T) {
	s, _ := printSandbox(t,
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Bash", Args: `{"command":"sleep 1"}`}}},
		fakemodel.Reply{Text: "finished after the drop"})
	s.write(".agent/settings.local.json", `{"permissions": {"allow": ["Bash(sleep *)"]}}`)
	p, url, h, _ := serveSessionHTTP(t, s)

	ctx, drop := context.WithCancel(context.Background())
	req := mcpPost(t, url, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"wait"},"_meta":{"progressToken":1}}}`, h)
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	rd := sse.NewReader(bufio.NewReader(resp.Body), sse.Options{})
	ev, err := rd.Next() // the first message after the priming event
	if err != nil || !strings.Contains(ev.Data, "notifications/progress") {
		t.Fatalf("first event %+v, %v", ev, err)
	}
	if d, ok := rd.Retry(); !ok || d.Milliseconds() != 1000 || ev.ID != "1.1" {
		t.Fatalf("priming: retry %v %v, id %q", d, ok, ev.ID)
	}
	drop()
	resp.Body.Close()

	get, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		get.Header.Set(k, v)
	}
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Last-Event-ID", ev.ID)
	resp2, err := http.DefaultClient.Do(get)
	if err != nil || resp2.StatusCode != 200 {
		t.Fatalf("resume: %v %v", resp2, err)
	}
	body, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if !strings.Contains(string(body), `"finished after the drop"`) || strings.Contains(string(body), "id: 1.1\n") {
		t.Fatalf("resumed stream: %s", body)
	}
	if !regexp.MustCompile(`id: 1\.\d+\ndata: \{"jsonrpc":"2.0","id":5,"result"`).Match(body) {
		t.Fatalf("the answer has no event id: %s", body)
	}
	p.stop(t, syscall.SIGTERM)
}

// serveSessionHTTP starts loopback `agent mcp serve` in the sandbox and
// opens a session of 2025-11-25: the endpoint, the headers of the
// session's requests (bearer token, session id, revision), and the token
// file.
func serveSessionHTTP(t *testing.T, s *sandbox) (p *serveProc, url string, h map[string]string, tokFile string) {
	t.Helper()
	tokFile = filepath.Join(t.TempDir(), "serve.token")
	p = startServe(t, s, "--http-token-file", tokFile)
	port := p.waitLine(t, listenRe)[1]
	p.waitLine(t, regexp.MustCompile(regexp.QuoteMeta("bearer token in "+tokFile)))
	tok, _ := os.ReadFile(tokFile)
	url = "http://127.0.0.1:" + port + "/mcp"
	h = map[string]string{"Authorization": "Bearer " + string(tok)}
	resp, _ := httpDo(t, mcpPost(t, url, initLine, h))
	h["Mcp-Session-Id"] = resp.Header.Get("Mcp-Session-Id")
	h["MCP-Protocol-Version"] = "2025-11-25"
	httpDo(t, mcpPost(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h))
	return p, url, h, tokFile
}
