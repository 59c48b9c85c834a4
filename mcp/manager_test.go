package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agent/config"
	"agent/internal/elicit"
	"agent/internal/netguard"
	"agent/mcp/jsonrpc"
)

// loadSettings writes user settings and loads them.
func loadSettings(t *testing.T, json string) *config.Settings {
	t.Helper()
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".agent"), 0o700)
	if err := os.WriteFile(filepath.Join(home, ".agent", "settings.json"), []byte(json), 0o600); err != nil {
		t.Fatal(err)
	}
	return config.Load(config.Options{Home: home, Workspace: t.TempDir(), Lookup: func(k string) (string, bool) {
		if k == "SECRET_TOKEN" {
			return "s3cr3t", true
		}
		return "", false
	}})
}

func TestStdioAuthorityAllows(t *testing.T) {
	s := loadSettings(t, `{"mcpServers": {
		"a": {"type": "stdio", "command": "/bin/srv", "args": ["--x", "1"], "env": {"K": "v"}, "cwd": "/tmp"},
		"b": {"type": "stdio", "command": "/bin/srv"},
		"h": {"type": "http", "url": "https://example.com/mcp"}}}`)
	exact := StdioAuthority{Command: "/bin/srv", Args: []string{"--x", "1"}, Env: map[string]string{"K": "v"}, Cwd: "/tmp"}
	cases := []struct {
		name string
		def  string
		a    StdioAuthority
		want bool
	}{
		{"exact", "a", exact, true},
		{"other command", "a", StdioAuthority{Command: "/bin/other", Args: exact.Args, Env: exact.Env, Cwd: "/tmp"}, false},
		{"an extra argument", "a", StdioAuthority{Command: "/bin/srv", Args: []string{"--x", "1", "2"}, Env: exact.Env, Cwd: "/tmp"}, false},
		{"another argument", "a", StdioAuthority{Command: "/bin/srv", Args: []string{"--x", "2"}, Env: exact.Env, Cwd: "/tmp"}, false},
		{"another env value", "a", StdioAuthority{Command: "/bin/srv", Args: exact.Args, Env: map[string]string{"K": "w"}, Cwd: "/tmp"}, false},
		{"an extra env entry", "a", StdioAuthority{Command: "/bin/srv", Args: exact.Args, Env: map[string]string{"K": "v", "L": "x"}, Cwd: "/tmp"}, false},
		{"another cwd", "a", StdioAuthority{Command: "/bin/srv", Args: exact.Args, Env: exact.Env, Cwd: "/"}, false},
		{"bare", "b", StdioAuthority{Command: "/bin/srv"}, true},
		{"bare with cwd", "b", StdioAuthority{Command: "/bin/srv", Cwd: "/tmp"}, false},
		{"not stdio", "h", StdioAuthority{Command: ""}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.a.Allows(s.Servers[c.def]); got != c.want {
				t.Errorf("Allows = %v, want %v", got, c.want)
			}
		})
	}
}

// TestManagerConnectRules: what may connect (docs/reference/mcp.md, "What
// connects and when").
func TestManagerConnectRules(t *testing.T) {
	s := loadSettings(t, `{"mcpServers": {
		"stdio": {"type": "stdio", "command": "/bin/true"},
		"plain": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${SECRET_TOKEN}"}},
		"priv": {"type": "http", "url": "https://10.0.0.5/mcp", "oauth": {}},
		"oauthed": {"type": "http", "url": "https://example.com/mcp", "oauth": {}},
		"old": {"type": "sse", "url": "https://example.com/sse"},
		"sock": {"type": "ws", "url": "wss://example.com/ws"}}}`)
	m := NewManager(ManagerOptions{Settings: s})
	defer m.Close()
	ctx := context.Background()
	// Nothing is approved: nothing connects, and the reason says so.
	if err := m.Connect(ctx, "oauthed"); !errors.Is(err, ErrCannotConnect) || !strings.Contains(err.Error(), "pending") {
		t.Fatalf("err = %v", err)
	}
	if err := m.Connect(ctx, "nope"); err == nil {
		t.Fatal("connected an undefined server")
	}
	for _, n := range s.ServerNames() {
		if err := m.Approve(n); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{
		"stdio":   ReasonMissingAuthority,
		"plain":   ReasonNoOAuth,
		"priv":    "address refused: private network",
		"oauthed": "sign-in required",
		"old":     ReasonTransport,
		"sock":    ReasonTransport,
	}
	for n, reason := range want {
		err := m.Connect(ctx, n)
		if !errors.Is(err, ErrCannotConnect) || !strings.Contains(err.Error(), reason) {
			t.Errorf("%s: err = %v, want %q", n, err, reason)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: the error shows a secret", n)
		}
	}
	if len(m.Tools()) != 0 {
		t.Fatal("tools without a connection")
	}
	// Approving never connected anything (docs/reference/mcp.md, "What
	// connects and when", rule 2).
	for _, l := range m.Status() {
		if l.State != Approved || strings.HasPrefix(l.Reason, "connected") {
			t.Errorf("%+v", l)
		}
	}
}

// TestManagerHTTPOAuth: an approved OAuth server connects through the
// sign-in's transport and the address policy; the definition's headers go
// along; its tools get model names; revoke disconnects and withdraws them.
func TestManagerHTTPOAuth(t *testing.T) {
	srv := newFakeServer(fakeConfig{})
	var sawBearer, sawStatic atomic.Bool
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawBearer.Store(sawBearer.Load() || r.Header.Get("Authorization") == "Bearer tok")
		sawStatic.Store(sawStatic.Load() || r.Header.Get("X-Team") == "blue")
		srv.ServeHTTP(w, r)
	}))
	defer hs.Close()
	s := loadSettings(t, `{"mcpAllowedNetworks": ["127.0.0.0/8"], "mcpServers": {
		"docs": {"type": "http", "url": "`+hs.URL+`/mcp", "oauth": {}, "headers": {"X-Team": "blue"}}}}`)
	var changes atomic.Int32
	var diags []string
	var mu sync.Mutex
	m := NewManager(ManagerOptions{
		Settings: s, Policy: netguard.Policy{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		OAuthTransport: func(d *config.ServerDef, base http.RoundTripper) (http.RoundTripper, error) {
			return roundTripper(func(r *http.Request) (*http.Response, error) {
				r = r.Clone(r.Context())
				r.Header.Set("Authorization", "Bearer tok")
				return base.RoundTrip(r)
			}), nil
		},
		OnChange:     func() { changes.Add(1) },
		OnDiagnostic: func(s string) { mu.Lock(); diags = append(diags, s); mu.Unlock() },
	})
	defer m.Close()
	ctx := context.Background()
	if err := m.Approve("docs"); err != nil {
		t.Fatal(err)
	}
	if err := m.Connect(ctx, "docs"); err != nil {
		t.Fatal(err)
	}
	if !sawBearer.Load() || !sawStatic.Load() {
		t.Fatalf("bearer %v, static header %v", sawBearer.Load(), sawStatic.Load())
	}
	tools := m.Tools()
	if len(tools) != 5 || tools[0].Name != "docs__add" || tools[0].Server != "docs" {
		t.Fatalf("%+v", tools)
	}
	res, err := m.Call(ctx, "docs__echo", []byte(`{"text":"hi"}`), CallOptions{})
	if err != nil || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "hi") {
		t.Fatalf("%+v %v", res, err)
	}
	if l := m.Status(); len(l) != 1 || l[0].Reason != "connected, 5 tools, 0 resources, 0 resource templates, 0 prompts, protocol 2026-07-28" {
		t.Fatalf("%+v", l)
	}
	if changes.Load() == 0 {
		t.Fatal("no change reported")
	}
	if err := m.Revoke("docs"); err != nil {
		t.Fatal(err)
	}
	if len(m.Tools()) != 0 {
		t.Fatal("revoked server's tools remain")
	}
	if _, err := m.Call(ctx, "docs__echo", []byte(`{"text":"hi"}`), CallOptions{}); !errors.Is(err, ErrCannotConnect) {
		t.Fatalf("err = %v", err)
	}
	m.Close()
	m.Close()
	if err := m.Connect(ctx, "docs"); err == nil {
		t.Fatal("connected after Close")
	}
}

// TestManagerContent: a server's resources, templates and prompts are
// listed at connect, counted in /mcp with its revision, read and fetched
// through the manager, refreshed after list_changed; elicitation reaches
// the callback with the server's name; the workspace is the one root.
func TestManagerContent(t *testing.T) {
	srv := newFakeServer(fakeConfig{versions: legacyOnly, content: true, listChanged: true})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	s := loadSettings(t, `{"mcpAllowedNetworks": ["127.0.0.0/8"], "mcpServers": {
		"kb": {"type": "http", "url": "`+hs.URL+`/mcp", "oauth": {}}}}`)
	asked := make(chan elicit.Request, 1)
	changes := make(chan struct{}, 16)
	ws := t.TempDir()
	m := NewManager(ManagerOptions{
		Settings: s, Workspace: ws, Policy: netguard.Policy{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		OAuthTransport:   func(d *config.ServerDef, base http.RoundTripper) (http.RoundTripper, error) { return base, nil },
		ListChangedDelay: 20 * time.Millisecond,
		OnChange:         func() { changes <- struct{}{} },
		Elicit: func(_ context.Context, r elicit.Request) (elicit.Result, error) {
			asked <- r
			return elicit.Result{Action: elicit.Decline}, nil
		},
	})
	defer m.Close()
	ctx := context.Background()
	m.Approve("kb")
	if err := m.Connect(ctx, "kb"); err != nil {
		t.Fatal(err)
	}
	res, tmpl := m.Resources()
	if len(res) != 2 || res[0].Server != "kb" || res[0].URI != "file:///notes.txt" || len(tmpl) != 1 || tmpl[0].URITemplate != "mem://item/{id}" {
		t.Fatalf("resources %+v, templates %+v", res, tmpl)
	}
	if got := m.ResourceServers(); len(got) != 1 || got[0] != "kb" {
		t.Fatalf("resource servers %q", got)
	}
	if l := m.Status(); l[0].Reason != "connected, 5 tools, 2 resources, 1 resource template, 2 prompts, protocol 2025-11-25" {
		t.Fatalf("status %q", l[0].Reason)
	}
	prompts := m.Prompts()
	if len(prompts) != 2 || prompts[0].Command != "mcp__kb__hello" || prompts[1].Command != "mcp__kb__review" {
		t.Fatalf("prompts %+v", prompts)
	}
	gp, err := m.GetPrompt(ctx, "mcp__kb__review", map[string]string{"file": "x.go"})
	if err != nil || !strings.Contains(gp.Messages[0].Content.Text, "x.go") {
		t.Fatalf("GetPrompt = %+v, %v", gp, err)
	}
	if _, err := m.GetPrompt(ctx, "mcp__kb__nothing", nil); err == nil {
		t.Fatal("an unknown prompt command was fetched")
	}
	rr, err := m.ReadResource(ctx, "kb", "mem://item/7")
	if err != nil || *rr.Contents[0].Text != "item 7" {
		t.Fatalf("ReadResource = %+v, %v", rr, err)
	}
	if _, err := m.ReadResource(ctx, "gone", "x"); !errors.Is(err, ErrCannotConnect) {
		t.Fatalf("a server that is not connected: %v", err)
	}
	// The server's requests reach the session with its name; the root is
	// the workspace.
	c, _ := m.client("kb")
	for len(changes) > 0 {
		<-changes
	}
	srv.broadcast(mustNote(t, "notifications/prompts/list_changed"))
	select {
	case <-changes:
	case <-time.After(5 * time.Second):
		t.Fatal("no change after prompts/list_changed")
	}
	raw, err := c.handle(ctx, mustRequest(t, "elicitation/create", `{"message":"Name?","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}`))
	if err != nil || raw.(elicitAnswer).Action != elicit.Decline {
		t.Fatalf("elicitation = %+v, %v", raw, err)
	}
	if r := <-asked; r.Server != "kb" || r.Message != "Name?" {
		t.Fatalf("request %+v", r)
	}
	roots, err := c.handle(ctx, mustRequest(t, "roots/list", ``))
	if err != nil || roots.(map[string]any)["roots"].([]Root)[0].URI != "file://"+filepath.ToSlash(ws) {
		t.Fatalf("roots = %+v, %v", roots, err)
	}
}

func mustNote(t *testing.T, method string) *jsonrpc.Message {
	t.Helper()
	n, err := jsonrpc.NewNotification(method, nil)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustRequest(t *testing.T, method, params string) *jsonrpc.Message {
	t.Helper()
	var p any
	if params != "" {
		p = json.RawMessage(params)
	}
	m, err := jsonrpc.NewRequest(jsonrpc.Int64ID(1), method, p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestManagerMasksSecrets: an error that carries the URL shows the part
// that came from a credential-shaped variable masked
// (docs/reference/settings.md, "Templates").
func TestManagerMasksSecrets(t *testing.T) {
	ln := httptest.NewServer(http.NotFoundHandler())
	addr := ln.URL
	ln.Close() // nothing listens there now
	s := loadSettings(t, `{"mcpServers": {
		"leaky": {"type": "http", "url": "`+addr+`/mcp?token=${SECRET_TOKEN}", "oauth": {}}}}`)
	var diags []string
	m := NewManager(ManagerOptions{
		Settings: s, Policy: netguard.Policy{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		OAuthTransport: func(d *config.ServerDef, base http.RoundTripper) (http.RoundTripper, error) { return base, nil },
		OnDiagnostic:   func(s string) { diags = append(diags, s) },
	})
	defer m.Close()
	m.Approve("leaky")
	err := m.Connect(context.Background(), "leaky")
	if err == nil {
		t.Fatal("connected to nothing")
	}
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("secret shown: %v", err)
	}
	// Whatever a lower layer prints, the value never shows.
	d := s.Servers["leaky"]
	inner := errors.New("Post \"" + d.URL.Value + "\": refused; raw s3cr3t")
	me := mask(d, fmt.Errorf("%w: %w", ErrCannotConnect, inner))
	if strings.Contains(me.Error(), "s3cr3t") || !strings.Contains(me.Error(), "token=") || !errors.Is(me, ErrCannotConnect) || !errors.Is(me, inner) {
		t.Fatalf("mask: %v", me)
	}
	m.ConnectApproved(context.Background())
	for _, d := range diags {
		if strings.Contains(d, "s3cr3t") {
			t.Fatalf("secret in a diagnostic: %s", d)
		}
	}
	if len(diags) == 0 {
		t.Fatal("no diagnostic for the failed connection")
	}
}

func TestSecretParts(t *testing.T) {
	cases := []struct {
		name           string
		value, display string
		want           []string
	}{
		{"a masked query value", "https://h/x?k=abcd1234", "https://h/x?k=***", []string{"abcd1234"}},
		{"a value masked whole", "abcd1234", "***", []string{"abcd1234"}},
		{"two masked parts", "pre-secret1-mid-secret2-end", "pre-***-mid-***-end", []string{"secret1", "secret2"}},
		{"a part too short to mask alone", "a-xy-b", "a-***-b", nil},
		{"nothing masked", "no mask", "no mask", nil},
		{"a display that does not match the value", "mismatch", "other***", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := secretParts(c.value, c.display)
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("secretParts(%q, %q) = %q, want %q", c.value, c.display, got, c.want)
			}
		})
	}
}

func FuzzSecretParts(f *testing.F) {
	f.Add("https://h/x?k=abcd1234", "https://h/x?k=***")
	f.Add("pre-secret1-mid-secret2-end", "pre-***-mid-***-end")
	f.Fuzz(func(t *testing.T, value, display string) {
		for _, p := range secretParts(value, display) {
			if !strings.Contains(value, p) {
				t.Fatalf("part %q not in %q", p, value)
			}
		}
	})
}
