package mcp

import (
	"net/netip"
	"testing"
	"time"

	"agent/config"
	"agent/internal/netguard"
	"agent/mcp/oauth"
)

func TestStatusLines(t *testing.T) {
	home := t.TempDir()
	store := oauth.NewStore(home)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(name, typ, url string, oa bool) *config.ServerDef {
		d := &config.ServerDef{Name: name, Scope: config.User, File: "/f", Type: typ, RawType: typ}
		d.URL.Value = url
		if oa {
			d.OAuth = &config.OAuth{}
		}
		return d
	}
	s := &config.Settings{Servers: map[string]*config.ServerDef{
		"a-stdio":     {Name: "a-stdio", Scope: config.Project, Type: "stdio", RawType: "stdio"},
		"b-sse":       mk("b-sse", "sse", "https://x", false),
		"c-ws":        mk("c-ws", "ws", "wss://x", false),
		"d-static":    mk("d-static", "http", "https://x.example", false),
		"e-oauth":     mk("e-oauth", "http", "https://x.example", true),
		"f-private":   mk("f-private", "http", "http://192.168.1.10/mcp", true),
		"g-loop6":     mk("g-loop6", "http", "http://[::1]:8080/mcp", true),
		"h-untrust":   {Name: "h-untrust", Scope: config.Local, Type: "http", Untrusted: true},
		"i-refused":   {Name: "i-refused", Scope: config.User, Problems: []string{"no type"}},
		"j-signed":    mk("j-signed", "http", "https://y.example", true),
		"k-expired":   mk("k-expired", "http", "https://z.example", true),
		"l-required":  mk("l-required", "http", "https://w.example", true),
		"m-allowed":   mk("m-allowed", "http", "http://127.0.0.1:9/mcp", true),
		"n\x1bname":   mk("n\x1bname", "sse", "https://x", false),
		"o-localhost": mk("o-localhost", "http", "http://localhost:8080/mcp", true),
		"p-sublocal":  mk("p-sublocal", "http", "https://Foo.LOCALHOST./mcp", true),
	}}
	store.Save(CredentialIdentity(s.Servers["j-signed"]), &oauth.Credentials{AccessToken: "a", Expiry: now.Add(time.Hour)})
	store.Save(CredentialIdentity(s.Servers["k-expired"]), &oauth.Credentials{AccessToken: "a", RefreshToken: "r", Expiry: now.Add(-time.Hour)})
	store.Save(CredentialIdentity(s.Servers["l-required"]), &oauth.Credentials{AccessToken: "a", Expiry: now.Add(-time.Hour)})
	lines := Status(s, StatusOptions{Approvals: NewApprovals("/ws", nil), Credentials: store, Now: now,
		Policy: netguard.Policy{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}})
	want := []string{
		"a-stdio\tpending\tproject\tstdio\tmissing host authority",
		"b-sse\tpending\tuser\tsse\ttransport not supported",
		"c-ws\tpending\tuser\tws\ttransport not supported",
		"d-static\tpending\tuser\thttp\tno oauth: cannot connect",
		"e-oauth\tpending\tuser\thttp\t-\tsigned-out",
		"f-private\tpending\tuser\thttp\taddress refused: private network\tsigned-out",
		"g-loop6\tpending\tuser\thttp\taddress refused: loopback\tsigned-out",
		"h-untrust\tuntrusted\tlocal\thttp\tworkspace untrusted",
		"i-refused\trefused\tuser\t-\tinvalid definition",
		"j-signed\tpending\tuser\thttp\t-\tsigned-in",
		"k-expired\tpending\tuser\thttp\t-\ttoken-expired",
		"l-required\tpending\tuser\thttp\t-\tsign-in-required",
		"m-allowed\tpending\tuser\thttp\t-\tsigned-out",
		"n?name\tpending\tuser\tsse\ttransport not supported",
		"o-localhost\tpending\tuser\thttp\t-\tsigned-out", // 127.0.0.0/8 is allowed here
		"p-sublocal\tpending\tuser\thttp\t-\tsigned-out",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines", len(lines))
	}
	for i, l := range lines {
		if l.String() != want[i] {
			t.Errorf("line %d:\n got %q\nwant %q", i, l.String(), want[i])
		}
	}
	// Without allowed networks, localhost names are refused by name, before
	// any lookup (docs/reference/mcp.md, "Address policy"; RFC 6761).
	for _, name := range []string{"o-localhost", "p-sublocal"} {
		l := Status(&config.Settings{Servers: map[string]*config.ServerDef{name: s.Servers[name]}}, StatusOptions{Approvals: NewApprovals("/ws", nil)})
		if l[0].Reason != "address refused: loopback" {
			t.Errorf("%s: reason %q", name, l[0].Reason)
		}
	}
	// With a stdio authority from an embedder, stdio has no reason.
	l := Status(&config.Settings{Servers: map[string]*config.ServerDef{"a": s.Servers["a-stdio"]}}, StatusOptions{
		Approvals: NewApprovals("/ws", nil), StdioAuthorized: func(*config.ServerDef) bool { return true }})
	if l[0].Reason != "" {
		t.Fatalf("reason %q", l[0].Reason)
	}
}
