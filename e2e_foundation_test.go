package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestE2ETrust(t *testing.T) {
	s := newSandbox(t)
	if r := s.run("", "trust", "status"); r.Code != 0 || r.Stdout != "untrusted\n" {
		t.Fatalf("%+v", r)
	}
	// Without --yes and without a terminal: exit 1 with the hint.
	r := s.run("", "trust")
	if r.Code != 1 || !strings.Contains(r.Stderr, "agent trust --yes") || r.Stdout != "" {
		t.Fatalf("%+v", r)
	}
	if r := s.run("", "trust", "--yes"); r.Code != 0 || !strings.Contains(r.Stdout, s.Work) {
		t.Fatalf("%+v", r)
	}
	if r := s.run("", "trust", "status"); r.Stdout != "trusted\n" {
		t.Fatalf("%+v", r)
	}
	fi, err := os.Stat(filepath.Join(s.Home, ".agent", "trusted-workspaces.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("trust store: %v %v", fi, err)
	}
	// The store is keyed by the real path: a symlink to the workspace is the same workspace.
	link := filepath.Join(filepath.Dir(s.Work), "link")
	os.Symlink(s.Work, link)
	s2 := *s
	s2.Work = link
	if r := s2.run("", "trust", "status"); r.Stdout != "trusted\n" {
		t.Fatalf("through a symlink: %+v", r)
	}
	if r := s.run("", "trust", "revoke"); r.Code != 0 || !strings.Contains(r.Stdout, "no longer trusted") {
		t.Fatalf("%+v", r)
	}
	if r := s.run("", "trust", "status"); r.Stdout != "untrusted\n" {
		t.Fatalf("%+v", r)
	}
	for _, args := range [][]string{{"trust", "extra"}, {"trust", "status", "x"}, {"trust", "--bogus"}} {
		if r := s.run("", args...); r.Code != 2 {
			t.Errorf("%v: %+v", args, r)
		}
	}
}

func TestE2EMCPList(t *testing.T) {
	s := newSandbox(t)
	s.Env = append(s.Env, "GH_TOKEN=ghp_supersecretvalue", "HOST=mcp.example.com")
	s.write("~/.agent/settings.json", `{
  "mcpServers": {
    "remote": {"type": "http", "url": "https://${HOST}/mcp", "oauth": {}},
    "static": {"type": "streamable-http", "url": "https://x.example/mcp", "headers": {"Authorization": "Bearer ${GH_TOKEN}"}},
    "files": {"type": "stdio", "command": "mcp-files", "env": {"TOKEN": "${GH_TOKEN}"}},
    "legacy": {"type": "sse", "url": "https://sse.example/sse"},
    "sock": {"type": "ws", "url": "wss://ws.example/"},
    "lan": {"type": "http", "url": "http://10.1.2.3/mcp", "oauth": {}},
    "notype": {"command": "x"}
  },
  "mcpHeaderHelpers": [{"command": "/usr/local/bin/helper", "args": []}]
}`)
	s.write(".agent/settings.json", `{"mcpServers": {"proj": {"type": "stdio", "command": "p"}, "remote": {"type": "stdio", "command": "shadow"}}}`)
	s.write(".compat/settings.local.json", `{"mcpServers": {"loc": {"type": "http", "url": "https://l.example", "oauth": {}}}}`)

	r := s.run("", "mcp", "list")
	if r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	want := strings.Join([]string{
		"files\tpending\tuser\tstdio\tmissing host authority",
		"lan\tpending\tuser\thttp\taddress refused: private network\tsigned-out",
		"legacy\tpending\tuser\tsse\ttransport not supported",
		"loc\tuntrusted\tlocal\thttp\tworkspace untrusted",
		"notype\trefused\tuser\t-\tinvalid definition",
		"proj\tuntrusted\tproject\tstdio\tworkspace untrusted",
		"remote\tpending\tuser\thttp\t-\tsigned-out",
		"sock\tpending\tuser\tws\ttransport not supported",
		"static\tpending\tuser\thttp\tno oauth: cannot connect",
	}, "\n") + "\n"
	diags, lines := splitDiagnostics(r.Stdout)
	if lines != want {
		t.Fatalf("status lines:\n%s\nwant:\n%s", lines, want)
	}
	for _, sub := range []string{"$.mcpServers.notype: no type", "not loaded: the workspace is not trusted"} {
		if !strings.Contains(diags, sub) {
			t.Errorf("diagnostics lack %q:\n%s", sub, diags)
		}
	}
	// Trusting the workspace loads project and local files: local beats
	// project beats user, whole entries.
	s.run("", "trust", "--yes")
	r = s.run("", "mcp", "list")
	_, lines = splitDiagnostics(r.Stdout)
	for _, l := range []string{"loc\tpending\tlocal\thttp\t-\tsigned-out", "proj\tpending\tproject\tstdio\tmissing host authority", "remote\tpending\tproject\tstdio\tmissing host authority"} {
		if !strings.Contains(lines, l+"\n") {
			t.Errorf("trusted listing lacks %q:\n%s", l, lines)
		}
	}
	// No value of a header, environment variable or secret ever appears
	// (docs/reference/mcp.md, "Status lines").
	if strings.Contains(r.Stdout+r.Stderr, "supersecret") {
		t.Fatal("a secret value was printed")
	}
}

// TestE2EMCPListRefusesLocalhostNames: `localhost` and `*.localhost` are
// loopback by definition (RFC 6761), so `agent mcp list` shows them refused
// by the address policy without looking the names up
// (docs/reference/mcp.md, "Address policy"), unless the user's settings
// allow a loopback network.
func TestE2EMCPListRefusesLocalhostNames(t *testing.T) {
	servers := `"mcpServers": {
    "plain": {"type": "http", "url": "http://localhost:8080/mcp", "oauth": {}},
    "upper": {"type": "http", "url": "https://LOCALHOST./mcp", "oauth": {}},
    "sub": {"type": "http", "url": "https://foo.localhost/mcp", "oauth": {}},
    "subdot": {"type": "http", "url": "https://foo.localhost.:9/mcp", "oauth": {}},
    "public": {"type": "http", "url": "https://mcp.example.com/mcp", "oauth": {}}
  }`
	cases := []struct {
		name     string
		settings string
		reason   string // of the four localhost servers
	}{
		{"default policy", `{` + servers + `}`, "address refused: loopback"},
		{"loopback allowed in user settings", `{"mcpAllowedNetworks": ["127.0.0.0/8"], ` + servers + `}`, "-"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSandbox(t)
			s.write("~/.agent/settings.json", tc.settings)
			r := s.run("", "mcp", "list")
			if r.Code != 0 {
				t.Fatalf("%+v", r)
			}
			want := strings.Join([]string{
				"plain\tpending\tuser\thttp\t" + tc.reason + "\tsigned-out",
				"public\tpending\tuser\thttp\t-\tsigned-out",
				"sub\tpending\tuser\thttp\t" + tc.reason + "\tsigned-out",
				"subdot\tpending\tuser\thttp\t" + tc.reason + "\tsigned-out",
				"upper\tpending\tuser\thttp\t" + tc.reason + "\tsigned-out",
			}, "\n") + "\n"
			if _, lines := splitDiagnostics(r.Stdout); lines != want {
				t.Fatalf("status lines:\n%s\nwant:\n%s", lines, want)
			}
		})
	}
}

func splitDiagnostics(out string) (diags, lines string) {
	var d, l strings.Builder
	for _, line := range strings.SplitAfter(out, "\n") {
		if strings.HasPrefix(line, "diagnostic: ") {
			d.WriteString(line)
		} else {
			l.WriteString(line)
		}
	}
	return d.String(), l.String()
}

func TestE2EMCPListInvalidJSON(t *testing.T) {
	s := newSandbox(t)
	s.write("~/.agent/settings.json", "{\n  \"mcpServers\": {\n    \"a\": {\"type\": \"stdio\",}\n  }\n}\n")
	s.write("~/.compat/settings.json", `{"mcpServers": {"b": {"type": "stdio", "command": "b"}}}`)
	r := s.run("", "mcp", "list")
	if r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	diags, lines := splitDiagnostics(r.Stdout)
	if !strings.Contains(diags, ".agent/settings.json: not valid JSON: line 3, column 27") {
		t.Fatalf("diagnostics: %s", diags)
	}
	if lines != "b\tpending\tuser\tstdio\tmissing host authority\n" {
		t.Fatalf("the other file must still load: %q", lines)
	}
}

func TestE2EMCPListEmpty(t *testing.T) {
	s := newSandbox(t)
	r := s.run("", "mcp", "list")
	if r.Code != 0 || r.Stdout != "" || r.Stderr != "" {
		t.Fatalf("%+v", r)
	}
	if r := s.run("", "mcp", "list", "extra"); r.Code != 2 {
		t.Fatalf("%+v", r)
	}
	if r := s.run("", "mcp"); r.Code != 2 || !strings.Contains(r.Stderr, "subcommand") {
		t.Fatalf("%+v", r)
	}
	if r := s.run("", "mcp", "--help"); r.Code != 0 || !strings.Contains(r.Stdout, "mcp list") {
		t.Fatalf("%+v", r)
	}
}

// Every command answers --help with usage on stdout and exit 0
// (docs/reference/cli.md, "Flag syntax").
func TestE2EHelpEverywhere(t *testing.T) {
	s := newSandbox(t)
	for _, c := range commands() {
		args := append(strings.Fields(c.path), "--help")
		r := s.run("", args...)
		if r.Code != 0 || !strings.HasPrefix(r.Stdout, fmt.Sprintf("Usage: agent %s", c.path)) || r.Stderr != "" {
			t.Errorf("agent %s --help: %+v", c.path, r)
		}
	}
}
