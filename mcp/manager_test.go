package mcp

import (
	"context"
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

	"agent/config"
	"agent/internal/netguard"
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
	if l := m.Status(); len(l) != 1 || l[0].Reason != "connected, 5 tools" {
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
