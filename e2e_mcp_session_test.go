package main

import (
	"context"
	"crypto/x509"
	"fmt"
	"strings"
	"sync"
	"testing"

	"agent/agent"
	"agent/internal/fakemodel"
)

// sessionUI answers a sign-in inside a session the way a user with
// --no-browser does: it opens the shown URL itself and pastes where the
// authorization server sent the browser.
type sessionUI struct {
	t   *testing.T
	a   *e2eAS
	mu  sync.Mutex
	url string
}

func (u *sessionUI) Show(line string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if i := strings.Index(line, "https://"); i >= 0 && strings.Contains(line, "/authorize") {
		u.url = strings.Fields(line[i:])[0]
	}
}

func (u *sessionUI) Confirm(ctx context.Context, q string) (bool, error) { return false, nil }

func (u *sessionUI) ReadSecret(ctx context.Context, prompt string) (string, error) {
	u.mu.Lock()
	url := u.url
	u.mu.Unlock()
	if url == "" {
		u.t.Error("asked for the redirect before showing the URL")
		return "", context.Canceled
	}
	return browser(u.t, u.a, url), nil
}

// TestSessionMCPLoginConnects: in a running session, /mcp login on an
// approved OAuth server signs in and connects it (docs/reference/mcp.md,
// "What connects and when", rule 2, and "Sign-in"); its tools reach the
// model from the next message; before approval a sign-in does not connect;
// /mcp logout disconnects and revokes.
func TestSessionMCPLoginConnects(t *testing.T) {
	a := newE2EAS(t)
	s := loginSandbox(t, a)
	srv := fakemodel.New(fakemodel.Reply{Text: "one"}, fakemodel.Reply{Text: "two"})
	t.Cleanup(srv.Close)
	if r := s.run("", "trust", "--yes"); r.Code != 0 {
		t.Fatal(r)
	}
	roots := x509.NewCertPool()
	roots.AddCert(a.srv.Certificate())
	ui := &sessionUI{t: t, a: a}
	c, err := agent.Start(t.Context(), agent.StartOptions{Workspace: s.Work, Home: s.Home, LookupEnv: func(string) (string, bool) { return "", false },
		Provider: "local", Model: "m", BaseURL: srv.URL(), SignInUI: ui, Overrides: agent.StartOverrides{NoTranscript: true, MCPRootCAs: roots}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := t.Context()

	// Signed in but not approved: no connection.
	out, err := c.MCPCommand(ctx, []string{"login", "remote", "--no-browser"})
	if err != nil || !strings.Contains(out, "approve it with /mcp approve remote") {
		t.Fatalf("%q %v", out, err)
	}
	if len(c.MCP.Tools()) != 0 {
		t.Fatal("connected without approval")
	}
	// Approving alone does not connect either.
	if _, err := c.MCPCommand(ctx, []string{"approve", "remote"}); err != nil {
		t.Fatal(err)
	}
	if len(c.MCP.Tools()) != 0 {
		t.Fatal("approve connected the server")
	}
	out, err = c.MCPCommand(ctx, []string{"login", "remote", "--no-browser"})
	if err != nil || out != "Signed in to MCP server remote; 3 of its tools are available from your next message.\n" {
		t.Fatalf("%q %v", out, err)
	}
	c.Session.Run(ctx, "hello")
	if names := strings.Join(toolNamesOf(srv.Requests()[0]), ","); !strings.Contains(names, "remote__one") || !strings.Contains(names, "remote__three") {
		t.Fatalf("offered %s", names)
	}
	status, _ := c.MCPCommand(ctx, nil)
	if !strings.Contains(status, "remote\tapproved\tuser\thttp\tconnected, 3 tools, 0 resources, 0 resource templates, 0 prompts, protocol 2025-06-18\tsigned-in") {
		t.Fatalf("%q", status)
	}

	out, err = c.MCPCommand(ctx, []string{"logout", "remote"})
	if err != nil || !strings.Contains(out, "Signed out of MCP server remote") {
		t.Fatalf("%q %v", out, err)
	}
	if len(c.MCP.Tools()) != 0 {
		t.Fatal("tools remain after logout")
	}
	c.Session.Run(ctx, "again")
	if names := strings.Join(toolNamesOf(srv.Requests()[1]), ","); strings.Contains(names, "remote__") {
		t.Fatalf("offered %s after logout", names)
	}
	a.with(func() {
		if len(a.revoked) == 0 {
			t.Error("no revocation")
		}
	})
	// Without a sign-in UI (print mode, background) there is no /mcp login.
	c2, err := agent.Start(t.Context(), agent.StartOptions{Workspace: s.Work, Home: s.Home, LookupEnv: func(string) (string, bool) { return "", false },
		Provider: "local", Model: "m", BaseURL: srv.URL(), Overrides: agent.StartOverrides{NoTranscript: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.MCPCommand(ctx, []string{"login", "remote"}); err == nil || !strings.Contains(err.Error(), "agent mcp login remote") {
		t.Fatalf("err = %v", err)
	}
}

// TestSessionMCPLoginNeedsSecret: a pre-registered client that needs its
// secret cannot sign in inside a session; the error names the terminal
// command (docs/reference/mcp.md, "Sign-in").
func TestSessionMCPLoginNeedsSecret(t *testing.T) {
	a := newE2EAS(t)
	s := loginSandbox(t, a)
	s.write("~/.agent/settings.json", `{"mcpAllowedNetworks":["127.0.0.0/8","::1/128"],"mcpServers":{
		"pre":{"type":"http","url":"`+a.srv.URL+`/mcp","oauth":{"clientId":"needs-secret","callbackPort":`+fmt.Sprint(freePort(t))+`}}}}`)
	roots := x509.NewCertPool()
	roots.AddCert(a.srv.Certificate())
	c, err := agent.Start(t.Context(), agent.StartOptions{Workspace: s.Work, Home: s.Home, LookupEnv: func(string) (string, bool) { return "", false },
		Provider: "local", Model: "m", BaseURL: "http://127.0.0.1:1/v1", SignInUI: &sessionUI{t: t, a: a}, Overrides: agent.StartOverrides{NoTranscript: true, MCPRootCAs: roots}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.MCPCommand(t.Context(), []string{"login", "pre", "--no-browser"})
	if err == nil || !strings.Contains(err.Error(), "agent mcp login pre --client-secret") {
		t.Fatalf("err = %v", err)
	}
}

func toolNamesOf(body []byte) []string {
	var names []string
	for _, part := range strings.Split(string(body), `"name":"`)[1:] {
		names = append(names, part[:strings.IndexByte(part, '"')])
	}
	return names
}
