package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agent/agent"
	"agent/internal/fakemodel"
)

// TestSessionTransportHTTP: /settings turns loopback HTTP serving of the
// running session on (a token file, bearer checks, the session's tools
// and agent_submit) and off (the file removed, nothing listening).
func TestSessionTransportHTTP(t *testing.T) {
	s, _ := printSandbox(t, fakemodel.Reply{Text: "served answer"})
	c, err := agent.Start(t.Context(), agent.StartOptions{Workspace: s.Work, Home: s.Home, LookupEnv: func(string) (string, bool) { return "", false }, Overrides: agent.StartOverrides{NoTranscript: true}})
	if err != nil {
		t.Fatal(err)
	}
	live := &liveSession{}
	live.set(c, nil)
	defer live.close()
	st := &sessionTransports{live: live, runDir: filepath.Join(s.Home, ".agent", "run")}
	defer st.Close()
	if ts := st.Transports(); len(ts) != 1 || ts[0].On {
		t.Fatalf("%+v", ts)
	}
	if err := st.SetTransport("stdio", true); err == nil {
		t.Fatal("an unknown transport was turned on")
	}
	if err := st.SetTransport("http", true); err != nil {
		t.Fatal(err)
	}
	ts := st.Transports()
	if !ts[0].On || !strings.Contains(ts[0].Detail, "http://127.0.0.1:") {
		t.Fatalf("%+v", ts)
	}
	url := strings.Fields(ts[0].Detail)[0]
	url = strings.TrimSuffix(url, ",")
	tokPath := st.tokenPath
	fi, err := os.Stat(tokPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	tok, _ := os.ReadFile(tokPath)
	if resp, _ := httpDo(t, mcpPost(t, url, initLine, nil)); resp.StatusCode != 401 {
		t.Fatalf("without the token: %d", resp.StatusCode)
	}
	h := map[string]string{"Authorization": "Bearer " + string(tok)}
	resp, body := httpDo(t, mcpPost(t, url, initLine, h))
	if resp.StatusCode != 200 {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	h["Mcp-Session-Id"] = resp.Header.Get("Mcp-Session-Id")
	h["MCP-Protocol-Version"] = "2025-11-25"
	httpDo(t, mcpPost(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h))
	if resp, body := httpDo(t, mcpPost(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, h)); resp.StatusCode != 200 || !strings.Contains(body, `"Read"`) || !strings.Contains(body, "agent_submit") {
		t.Fatalf("tools/list: %d %s", resp.StatusCode, body)
	}
	if _, body := httpDo(t, mcpPost(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"hi"}}}`, h)); !strings.Contains(body, "served answer") {
		t.Fatalf("agent_submit: %s", body)
	}
	if err := st.SetTransport("http", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tokPath); !os.IsNotExist(err) {
		t.Fatalf("token file left: %v", err)
	}
	if _, err := http.Post(url, "application/json", strings.NewReader(initLine)); err == nil {
		t.Fatal("still listening after off")
	}
	if ts := st.Transports(); ts[0].On {
		t.Fatalf("%+v", ts)
	}
}
