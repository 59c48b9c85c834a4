package main

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"agent/internal/fakemodel"
)

// tuiMCP is a Streamable HTTP MCP server of revision 2025-11-25 with a
// resource, a prompt and a tool "ask" that asks the user a question over
// the listening GET stream and answers with the user's answer.
type tuiMCP struct {
	events chan []byte // written on the GET stream
	answer chan json.RawMessage
}

func newTUIMCP() *tuiMCP {
	return &tuiMCP{events: make(chan []byte), answer: make(chan json.RawMessage, 1)}
}

func (m *tuiMCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reply := func(id json.RawMessage, result any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	}
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case b := <-m.events:
				io.WriteString(w, "data: "+string(b)+"\n\n")
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
		} `json:"params"`
		Result json.RawMessage `json:"result"`
	}
	json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&msg)
	switch {
	case msg.Method == "" && msg.ID != nil: // the answer to our question
		m.answer <- msg.Result
		w.WriteHeader(http.StatusAccepted)
		return
	case msg.ID == nil:
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch msg.Method {
	case "initialize":
		w.Header().Set("Mcp-Session-Id", "tui-session")
		reply(msg.ID, map[string]any{"protocolVersion": "2025-11-25", "serverInfo": map[string]any{"name": "tui-mcp", "version": "1"},
			"capabilities": map[string]any{"tools": map[string]any{}, "resources": map[string]any{}, "prompts": map[string]any{}}})
	case "tools/list":
		reply(msg.ID, map[string]any{"tools": []any{map[string]any{"name": "ask", "description": "asks the user", "inputSchema": map[string]any{"type": "object"}}}})
	case "tools/call":
		q, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "q1", "method": "elicitation/create", "params": map[string]any{
			"message": "Who is reviewing?", "requestedSchema": map[string]any{"type": "object",
				"properties": map[string]any{"reviewer": map[string]any{"type": "string", "title": "Reviewer"}}, "required": []string{"reviewer"}}}})
		select {
		case m.events <- q:
		case <-time.After(20 * time.Second):
		}
		var ans json.RawMessage
		select {
		case ans = <-m.answer:
		case <-time.After(60 * time.Second):
		}
		reply(msg.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "answer: " + string(ans)}}})
	case "resources/list":
		reply(msg.ID, map[string]any{"resources": []any{map[string]any{"uri": "file:///notes.txt", "name": "notes"}}})
	case "resources/read":
		reply(msg.ID, map[string]any{"contents": []any{map[string]any{"uri": "file:///notes.txt", "text": "remember the milk"}}})
	case "prompts/list":
		reply(msg.ID, map[string]any{"prompts": []any{map[string]any{"name": "review", "description": "Review a file",
			"arguments": []any{map[string]any{"name": "file", "required": true}}}}})
	case "prompts/get":
		reply(msg.ID, map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Review " + msg.Params.Arguments["file"] + " carefully"}}}})
	default:
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
	}
}

var authorizeURL = regexp.MustCompile(`https://127\.0\.0\.1:\d+/authorize\?[A-Za-z0-9%&=._~+-]+`)

// TestE2ETerminalUIMCP: in the terminal UI, a server signed in with /mcp
// login shows its counts and revision in /mcp; @ completes its resource,
// whose text is attached to the prompt; its prompt runs as
// /mcp__remote__review; and its question during a tool call is answered
// on the UI's prompt screens (docs/reference/mcp.md).
func TestE2ETerminalUIMCP(t *testing.T) {
	a := newE2EASWith(t, newTUIMCP())
	s := loginSandbox(t, a)
	srv := fakemodel.New(
		fakemodel.Reply{Text: "noted"},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "remote__ask", Args: `{}`}}},
		fakemodel.Reply{Text: "thanks"})
	t.Cleanup(srv.Close)
	s.write("~/.agent/settings.json", `{"defaultModel": {"provider": "local", "model": "fake-model"}, "providers": {"local": {"baseURL": "`+srv.URL()+`"}},
		"mcpAllowedNetworks": ["127.0.0.0/8", "::1/128"], "permissions": {"allow": ["remote__*"]},
		"mcpServers": {"remote": {"type": "http", "url": "`+a.srv.URL+`/mcp", "oauth": {}}}}`)
	if r := s.run("", "trust", "--yes"); r.Code != 0 {
		t.Fatal(r)
	}
	// Wide enough for the authorization URL on one row.
	m, out, done := startTUIOn(t, s, 40, 900)
	out.waitFor(t, "Type a prompt")
	m.Write([]byte("/mcp approve remote\r"))
	out.waitFor(t, "Approved MCP server remote")
	m.Write([]byte("/mcp login remote --no-browser\r"))
	out.waitFor(t, "Paste the full address")
	link := authorizeURL.FindString(out.String())
	if link == "" {
		t.Fatalf("no authorization URL in %q", out.String())
	}
	m.Write([]byte(browser(t, a, link) + "\r"))
	out.waitFor(t, "Signed in to MCP server remote; 1 of its tools are available")
	m.Write([]byte("/mcp\r"))
	out.waitFor(t, "connected, 1 tool, 1 resource, 0 resource templates, 1 prompt, protocol 2025-11-25")

	m.Write([]byte("what is in @rem"))
	out.waitFor(t, "@remote:file:///notes.txt")
	m.Write([]byte("\t\r"))
	out.waitFor(t, "noted")
	if first := string(srv.Requests()[0]); !strings.Contains(first, "remember the milk") || !strings.Contains(first, "what is in @remote:file:///notes.txt") {
		t.Fatalf("the resource was not attached: %.3000s", first)
	}

	m.Write([]byte("/mcp__remote__review main.go\r"))
	out.waitFor(t, "MCP server remote asks")
	out.waitFor(t, "Who is reviewing?")
	m.Write([]byte("y"))
	out.waitFor(t, "Reviewer (required)")
	m.Write([]byte("Ann\r"))
	out.waitFor(t, "Send these answers to MCP server remote?")
	m.Write([]byte("\r"))
	out.waitFor(t, "thanks")
	reqs := srv.Requests()
	if !strings.Contains(string(reqs[1]), "Review main.go carefully") {
		t.Fatalf("the prompt did not reach the model: %.2000s", reqs[1])
	}
	if !strings.Contains(string(reqs[2]), `answer: {\"action\":\"accept\",\"content\":{\"reviewer\":\"Ann\"}}`) {
		t.Fatalf("the server did not get the answer: %.3000s", reqs[2])
	}
	ctrlCTwice(t, m, out, done)
}
