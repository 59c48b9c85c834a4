package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// files maps a short name to content: "user", "user-compat", "project",
// "project-compat", "local", "local-compat".
type files map[string]string

func setup(t *testing.T, fs files) (home, ws string) {
	t.Helper()
	root := t.TempDir()
	home, ws = filepath.Join(root, "home"), filepath.Join(root, "ws")
	paths := map[string]string{
		"user":           filepath.Join(home, ".agent", "settings.json"),
		"user-compat":    filepath.Join(home, ".compat", "settings.json"),
		"project":        filepath.Join(ws, ".agent", "settings.json"),
		"project-compat": filepath.Join(ws, ".compat", "settings.json"),
		"local":          filepath.Join(ws, ".agent", "settings.local.json"),
		"local-compat":   filepath.Join(ws, ".compat", "settings.local.json"),
	}
	for name, content := range fs {
		p, ok := paths[name]
		if !ok {
			t.Fatalf("unknown file %q", name)
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(home, 0o755)
	os.MkdirAll(ws, 0o755)
	return home, ws
}

func env(kv ...string) LookupFunc {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(n string) (string, bool) { v, ok := m[n]; return v, ok }
}

func load(t *testing.T, fs files, trusted bool, lookup LookupFunc) *Settings {
	home, ws := setup(t, fs)
	if lookup == nil {
		lookup = env()
	}
	return Load(Options{Home: home, Workspace: ws, Trusted: trusted, Lookup: lookup})
}

func diagText(s *Settings) string {
	var b strings.Builder
	for _, d := range s.Diagnostics {
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}

func wantDiag(t *testing.T, s *Settings, subs ...string) {
	t.Helper()
	text := diagText(s)
	for _, sub := range subs {
		if !strings.Contains(text, sub) {
			t.Errorf("diagnostics lack %q:\n%s", sub, text)
		}
	}
}

func noDiag(t *testing.T, s *Settings) {
	t.Helper()
	if len(s.Diagnostics) > 0 {
		t.Errorf("unexpected diagnostics:\n%s", diagText(s))
	}
}

func server(t *testing.T, s *Settings, name string) *ServerDef {
	t.Helper()
	d := s.Servers[name]
	if d == nil {
		t.Fatalf("server %q missing; have %v", name, s.ServerNames())
	}
	return d
}

// The six files and their scopes (docs/reference/settings.md, "Files and
// scopes").
func TestScopesAndFiles(t *testing.T) {
	def := func(cmd string) string {
		return `{"mcpServers":{"s":{"type":"stdio","command":"` + cmd + `"}}}`
	}
	cases := []struct {
		name    string
		fs      files
		trusted bool
		want    string // the winning command
		scope   Scope
	}{
		{"user only", files{"user": def("u")}, true, "u", User},
		{"user compat only", files{"user-compat": def("uc")}, true, "uc", User},
		{".agent beats .compat in a scope", files{"user": def("u"), "user-compat": def("uc")}, true, "u", User},
		{"project beats user", files{"user": def("u"), "project": def("p")}, true, "p", Project},
		{"project compat beats user", files{"user": def("u"), "project-compat": def("pc")}, true, "pc", Project},
		{"local beats project", files{"project": def("p"), "local": def("l")}, true, "l", Local},
		{"local compat beats project", files{"project": def("p"), "local-compat": def("lc")}, true, "lc", Local},
		{"untrusted: project not loaded, user wins", files{"user": def("u"), "project": def("p"), "local": def("l")}, false, "u", User},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := load(t, c.fs, c.trusted, nil)
			d := server(t, s, "s")
			if d.Command.Value != c.want || d.Scope != c.scope {
				t.Fatalf("got command %q scope %v, want %q %v", d.Command.Value, d.Scope, c.want, c.scope)
			}
		})
	}
}

// Whole entries win, never merged field by field
// (docs/reference/settings.md, "Precedence").
func TestWholeEntryPrecedence(t *testing.T) {
	s := load(t, files{
		"user":    `{"mcpServers":{"s":{"type":"stdio","command":"u","args":["-x"],"env":{"A":"1"},"timeout":5}}}`,
		"project": `{"mcpServers":{"s":{"type":"stdio","command":"p"}}}`,
	}, true, nil)
	d := server(t, s, "s")
	if d.Command.Value != "p" || len(d.Args) != 0 || len(d.Env) != 0 || d.Timeout != 0 {
		t.Fatalf("fields merged from a lower scope: %+v", d)
	}
}

// Untrusted definitions (docs/reference/settings.md, "Trust gating").
func TestUntrustedDefinitions(t *testing.T) {
	s := load(t, files{
		"project": `{"mcpServers":{"p":{"type":"stdio","command":"${HOME}"}},"permissions":{"allow":["Bash"]},"mcp":{"callTimeoutMs":5}}`,
		"local":   `{"mcpServers":{"l":{"type":"http","url":"https://x.example"}}}`,
	}, false, env("HOME", "/secret/home"))
	for _, n := range []string{"p", "l"} {
		d := server(t, s, n)
		if !d.Untrusted || d.Command.Value != "" {
			t.Fatalf("%s: %+v", n, d)
		}
	}
	if server(t, s, "l").Type != "http" || server(t, s, "l").Scope != Local {
		t.Fatal("untrusted entries keep their type and scope for listing")
	}
	if len(s.Permissions.Allow) != 0 || s.MCP.CallTimeout != DefaultCallTimeout {
		t.Fatal("an untrusted file applied settings")
	}
	wantDiag(t, s, "not loaded: the workspace is not trusted")
	for _, f := range s.Files {
		if f.Scope != User && f.Status == Loaded {
			t.Fatalf("%s loaded while untrusted", f.Path)
		}
	}
}

// A file that is not valid JSON is reported with line and column and
// skipped; the others still load.
func TestInvalidFileSkipped(t *testing.T) {
	s := load(t, files{
		"user":    "{\n  \"mcpServers\": {\"a\": {\"type\":\"stdio\",\"command\":\"x\"},}\n}",
		"project": `{"mcpServers":{"b":{"type":"stdio","command":"y"}}}`,
		"local":   `{"x":1,"x":2}`,
	}, true, nil)
	wantDiag(t, s, "settings.json: not valid JSON: line 2, column 54: expected a string key", "file skipped", `settings.local.json: not valid JSON: line 1, column 8: duplicate key "x"`)
	if _, ok := s.Servers["a"]; ok {
		t.Fatal("definition from an invalid file used")
	}
	server(t, s, "b")
	s = load(t, files{"user": `[]`}, true, nil)
	wantDiag(t, s, "$: expected an object, found array")
}

// Every field rule (docs/reference/settings.md, "mcpServers").
func TestServerDefinitionRules(t *testing.T) {
	cases := []struct {
		name  string
		def   string
		ok    bool
		diags []string
	}{
		{"stdio minimal", `{"type":"stdio","command":"srv"}`, true, nil},
		{"stdio full", `{"type":"stdio","command":"srv","args":["a","b"],"cwd":"/tmp","env":{"A":"1"},"timeout":1500}`, true, nil},
		{"http minimal", `{"type":"http","url":"https://x.example/mcp"}`, true, nil},
		{"streamable-http alias", `{"type":"streamable-http","url":"https://x.example/mcp"}`, true, nil},
		{"sse", `{"type":"sse","url":"https://x.example/sse"}`, true, nil},
		{"ws", `{"type":"ws","url":"wss://x.example/ws"}`, true, nil},
		{"http full", `{"type":"http","url":"https://x.example","headers":{"X-Key":"v"},"headersHelper":{"command":"/bin/h","args":["-a"]},"oauth":{"clientId":"c","callbackPort":8080,"authServerMetadataUrl":"https://as.example/.well-known/oauth-authorization-server","scopes":["a","b"]},"timeout":0.5}`, true, nil},
		{"oauth empty", `{"type":"http","url":"https://x.example","oauth":{}}`, true, nil},
		{"oauth scopes string", `{"type":"http","url":"https://x.example","oauth":{"scopes":"a b"}}`, true, nil},
		{"no type", `{"command":"srv"}`, false, []string{`no type: add "type" ('http' or 'stdio')`}},
		{"type not string", `{"type":1,"command":"srv"}`, false, []string{"$.mcpServers.s.type: expected a string, found number"}},
		{"unknown type", `{"type":"grpc","url":"https://x"}`, false, []string{`unknown type "grpc"`}},
		{"type case matters", `{"type":"HTTP","url":"https://x"}`, false, []string{`unknown type "HTTP"`}},
		{"not an object", `"stdio"`, false, []string{"expected an object, found string"}},
		{"stdio without command", `{"type":"stdio"}`, false, []string{`"command" is required for type stdio`}},
		{"stdio empty command", `{"type":"stdio","command":""}`, false, []string{"$.mcpServers.s.command: must not be empty"}},
		{"http without url", `{"type":"http"}`, false, []string{`"url" is required for type http`}},
		{"alias without url names alias", `{"type":"streamable-http"}`, false, []string{`"url" is required for type streamable-http`}},
		{"sse without url", `{"type":"sse"}`, false, []string{`"url" is required for type sse`}},
		{"url on stdio", `{"type":"stdio","command":"x","url":"https://x"}`, false, []string{"$.mcpServers.s.url: does not apply to type stdio"}},
		{"command on http", `{"type":"http","url":"https://x","command":"x"}`, false, []string{"$.mcpServers.s.command: does not apply to type http"}},
		{"env on http", `{"type":"http","url":"https://x","env":{}}`, false, []string{"env: does not apply"}},
		{"oauth on stdio", `{"type":"stdio","command":"x","oauth":{}}`, false, []string{"oauth: does not apply"}},
		{"unknown field", `{"type":"stdio","command":"x","disabled":true}`, false, []string{"$.mcpServers.s.disabled: unknown field"}},
		{"args not array", `{"type":"stdio","command":"x","args":"a b"}`, false, []string{"args: expected an array of strings, found string"}},
		{"args item not string", `{"type":"stdio","command":"x","args":["a",1]}`, false, []string{"args[1]: expected a string, found number"}},
		{"cwd not string", `{"type":"stdio","command":"x","cwd":[]}`, false, []string{"cwd: expected a string"}},
		{"env not object", `{"type":"stdio","command":"x","env":["A=1"]}`, false, []string{"env: expected an object of strings"}},
		{"env value not string", `{"type":"stdio","command":"x","env":{"A":1}}`, false, []string{"env.A: expected a string value, found number"}},
		{"env bad name", `{"type":"stdio","command":"x","env":{"A=B":"1"}}`, false, []string{"not a valid environment variable name"}},
		{"headers value not string", `{"type":"http","url":"https://x","headers":{"X":true}}`, false, []string{"headers.X: expected a string value, found boolean"}},
		{"header bad name", `{"type":"http","url":"https://x","headers":{"X Y":"v"}}`, false, []string{"not a valid header name"}},
		{"header line break", `{"type":"http","url":"https://x","headers":{"X":"a\r\nB: c"}}`, false, []string{"line break"}},
		{"url not string", `{"type":"http","url":5}`, false, []string{"url: expected a string"}},
		{"url bad scheme", `{"type":"http","url":"ftp://x"}`, false, []string{"scheme must be http or https"}},
		{"url no host", `{"type":"http","url":"https:///p"}`, false, []string{"no host"}},
		{"url relative", `{"type":"http","url":"/mcp"}`, false, []string{"scheme must be"}},
		{"url userinfo", `{"type":"http","url":"https://u:p@x.example"}`, false, []string{"must not carry user credentials"}},
		{"ws needs ws scheme", `{"type":"ws","url":"https://x"}`, false, []string{"scheme must be ws or wss"}},
		{"helper relative", `{"type":"http","url":"https://x","headersHelper":{"command":"h"}}`, false, []string{"headersHelper.command: must be an absolute path"}},
		{"helper no command", `{"type":"http","url":"https://x","headersHelper":{"args":[]}}`, false, []string{`headersHelper: "command" is required`}},
		{"helper unknown key", `{"type":"http","url":"https://x","headersHelper":{"command":"/h","shell":true}}`, false, []string{"headersHelper.shell: unknown field"}},
		{"helper no templates", `{"type":"http","url":"https://x","headersHelper":{"command":"${H}"}}`, false, []string{"must be an absolute path"}},
		{"oauth unknown key", `{"type":"http","url":"https://x","oauth":{"clientID":"c"}}`, false, []string{"oauth.clientID: unknown key in oauth"}},
		{"oauth clientSecret", `{"type":"http","url":"https://x","oauth":{"clientId":"c","callbackPort":1,"clientSecret":"s"}}`, false, []string{"oauth.clientSecret: a client secret is never accepted"}},
		{"client_secret anywhere", `{"type":"http","url":"https://x","client_secret":"s"}`, false, []string{"client_secret: a client secret is never accepted"}},
		{"clientId requires callbackPort", `{"type":"http","url":"https://x","oauth":{"clientId":"c"}}`, false, []string{"clientId requires callbackPort"}},
		{"callbackPort range", `{"type":"http","url":"https://x","oauth":{"callbackPort":70000}}`, false, []string{"port number from 1 to 65535"}},
		{"callbackPort fraction", `{"type":"http","url":"https://x","oauth":{"callbackPort":80.5}}`, false, []string{"port number"}},
		{"oauth no templates", `{"type":"http","url":"https://x","oauth":{"authServerMetadataUrl":"${AS}"}}`, false, []string{"must be an https URL"}},
		{"oauth metadata http", `{"type":"http","url":"https://x","oauth":{"authServerMetadataUrl":"http://as.example"}}`, false, []string{"must be an https URL"}},
		{"oauth not object", `{"type":"http","url":"https://x","oauth":true}`, false, []string{"oauth: expected an object"}},
		{"oauth scope with space", `{"type":"http","url":"https://x","oauth":{"scopes":["a b"]}}`, false, []string{"oauth.scopes[0]"}},
		{"timeout zero", `{"type":"stdio","command":"x","timeout":0}`, false, []string{"timeout: must be a positive number of milliseconds"}},
		{"timeout negative", `{"type":"stdio","command":"x","timeout":-5}`, false, []string{"timeout: must be a positive"}},
		{"timeout string", `{"type":"stdio","command":"x","timeout":"5s"}`, false, []string{"timeout: must be a positive"}},
		{"timeout huge", `{"type":"stdio","command":"x","timeout":1e300}`, false, []string{"timeout: must be a positive"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := load(t, files{"user": `{"mcpServers":{"s":` + c.def + `}}`}, true, nil)
			d := server(t, s, "s")
			if d.Refused() == c.ok {
				t.Fatalf("refused=%v, want %v; problems %v", d.Refused(), !c.ok, d.Problems)
			}
			if c.ok {
				noDiag(t, s)
			}
			wantDiag(t, s, c.diags...)
			// A refused definition is kept (rule 5) and every diagnostic
			// names the file and a path into the server.
			for _, dg := range s.Diagnostics {
				if !strings.HasSuffix(dg.File, "settings.json") || !strings.HasPrefix(string(dg.Path), "$.mcpServers.s") {
					t.Errorf("diagnostic without file or server path: %s", dg)
				}
			}
		})
	}
}

func TestServerFieldsDecoded(t *testing.T) {
	s := load(t, files{"user": `{"mcpServers":{"s":{"type":"streamable-http","url":"https://x.example/mcp","headers":{"A":"1","B":"2"},"timeout":2500,"oauth":{"clientId":"c","callbackPort":9000,"scopes":["r","w"]}}}}`}, true, nil)
	d := server(t, s, "s")
	if d.Type != "http" || d.RawType != "streamable-http" || !d.Remote() || d.Timeout != 2500*time.Millisecond {
		t.Fatalf("%+v", d)
	}
	if len(d.Headers) != 2 || d.Headers[0].Name != "A" || d.Headers[1].Value.Value != "2" {
		t.Fatalf("headers %+v", d.Headers)
	}
	if d.OAuth.ClientID != "c" || d.OAuth.CallbackPort != 9000 || strings.Join(d.OAuth.Scopes, ",") != "r,w" {
		t.Fatalf("oauth %+v", d.OAuth)
	}
}

// Templates in command, args, cwd, env, url and headers
// (docs/reference/settings.md, "Templates").
func TestTemplatesInDefinitions(t *testing.T) {
	lookup := env("BIN", "/opt/srv", "DIR", "/w", "API_TOKEN", "tok123", "HOST", "mcp.example")
	s := load(t, files{"user": `{"mcpServers":{
		"a":{"type":"stdio","command":"${BIN}","args":["--dir","${DIR}","${MISSING:-fallback}"],"cwd":"${DIR}/sub","env":{"T":"${API_TOKEN}","U":"${UNSET_VAR}"}},
		"b":{"type":"http","url":"https://${HOST}/mcp?key=${API_TOKEN}","headers":{"Authorization":"Bearer ${API_TOKEN}"}}}}`}, true, lookup)
	a := server(t, s, "a")
	if a.Command.Value != "/opt/srv" || a.Command.Raw != "${BIN}" || a.Args[1].Value != "/w" || a.Args[2].Value != "fallback" || a.Cwd.Value != "/w/sub" {
		t.Fatalf("%+v", a)
	}
	if a.Env[0].Value.Value != "tok123" || a.Env[0].Value.Display != Mask {
		t.Fatalf("credential-shaped variable not masked: %+v", a.Env[0])
	}
	if a.Env[1].Value.Value != "${UNSET_VAR}" {
		t.Fatalf("unset variable not left literal: %q", a.Env[1].Value.Value)
	}
	if a.Refused() {
		t.Fatal("an unset variable is reported, not a refusal")
	}
	wantDiag(t, s, "$.mcpServers.a.env.U: ${UNSET_VAR} is not set and has no default; left as literal text")
	b := server(t, s, "b")
	if b.URL.Value != "https://mcp.example/mcp?key=tok123" || b.URL.Display != "https://mcp.example/mcp?key=***" {
		t.Fatalf("url %+v", b.URL)
	}
	if b.Headers[0].Value.Display != "Bearer ***" {
		t.Fatalf("header display %q", b.Headers[0].Value.Display)
	}
	// No diagnostic ever holds a value.
	if strings.Contains(diagText(s), "tok123") {
		t.Fatal("a secret value reached a diagnostic")
	}
}

// mcpHeaderHelpers only from user settings (docs/reference/settings.md,
// "mcpHeaderHelpers").
func TestHeaderHelpers(t *testing.T) {
	s := load(t, files{
		"user":    `{"mcpHeaderHelpers":[{"command":"/usr/bin/h","args":["a"]},{"command":"rel"},{"command":"/x","extra":1}]}`,
		"project": `{"mcpHeaderHelpers":[{"command":"/evil","args":[]}]}`,
		"local":   `{"mcpHeaderHelpers":[]}`,
	}, true, nil)
	if len(s.HeaderHelpers) != 1 || !s.HeaderHelpers[0].Equal(HeaderHelper{Command: "/usr/bin/h", Args: []string{"a"}}) {
		t.Fatalf("%+v", s.HeaderHelpers)
	}
	if s.HeaderHelpers[0].Equal(HeaderHelper{Command: "/usr/bin/h", Args: []string{"a", "b"}}) {
		t.Fatal("Equal ignores extra args")
	}
	wantDiag(t, s, "$.mcpHeaderHelpers[1].command: must be an absolute path", "$.mcpHeaderHelpers[2].extra: unknown field",
		".agent/settings.json: $.mcpHeaderHelpers: ignored: only user settings may allow a header helper",
		"settings.local.json: $.mcpHeaderHelpers: ignored")
}

// mcp.autoBackgroundMs and mcp.callTimeoutMs (docs/reference/settings.md,
// "mcp").
func TestMCPSettings(t *testing.T) {
	cases := []struct {
		name       string
		fs         files
		auto, call time.Duration
		diags      []string
	}{
		{"defaults", files{}, 120 * time.Second, 600 * time.Second, nil},
		{"user values", files{"user": `{"mcp":{"autoBackgroundMs":1000,"callTimeoutMs":5000}}`}, time.Second, 5 * time.Second, nil},
		{"zero turns handoff off", files{"user": `{"mcp":{"autoBackgroundMs":0}}`}, 0, 600 * time.Second, nil},
		{"each key on its own (rule 1)", files{"user": `{"mcp":{"autoBackgroundMs":1000,"callTimeoutMs":9000}}`, "project": `{"mcp":{"callTimeoutMs":4000}}`}, time.Second, 4 * time.Second, nil},
		{"local overrides project key", files{"project": `{"mcp":{"autoBackgroundMs":1000}}`, "local": `{"mcp":{"autoBackgroundMs":2000}}`}, 2 * time.Second, 600 * time.Second, nil},
		{"negative discards the file's object (rule 2)", files{"user": `{"mcp":{"autoBackgroundMs":1000,"callTimeoutMs":-1}}`}, 120 * time.Second, 600 * time.Second, []string{"$.mcp.callTimeoutMs: must be a non-negative integer; this file's whole mcp object is ignored"}},
		{"non-integer discards (rule 2)", files{"user": `{"mcp":{"callTimeoutMs":5000,"autoBackgroundMs":1.5}}`}, 120 * time.Second, 600 * time.Second, []string{"whole mcp object is ignored"}},
		{"string discards (rule 2)", files{"user": `{"mcp":{"callTimeoutMs":"5000"}}`}, 120 * time.Second, 600 * time.Second, []string{"whole mcp object is ignored"}},
		{"discard only that file", files{"user": `{"mcp":{"callTimeoutMs":700000}}`, "project": `{"mcp":{"autoBackgroundMs":-5,"callTimeoutMs":1}}`}, 120 * time.Second, 700 * time.Second, []string{"whole mcp object is ignored"}},
		{"handoff not smaller (rule 3)", files{"user": `{"mcp":{"autoBackgroundMs":5000,"callTimeoutMs":5000}}`}, 0, 5 * time.Second, []string{"is not smaller than callTimeoutMs (5000): background handoff is off"}},
		{"default handoff above call timeout (rule 3)", files{"user": `{"mcp":{"callTimeoutMs":60000}}`}, 0, 60 * time.Second, []string{"autoBackgroundMs (120000) is not smaller"}},
		{"mcp not object", files{"user": `{"mcp":[]}`}, 120 * time.Second, 600 * time.Second, []string{"$.mcp: expected an object"}},
		{"unknown key", files{"user": `{"mcp":{"autoBackgroundMS":1}}`}, 120 * time.Second, 600 * time.Second, []string{"$.mcp.autoBackgroundMS: unknown key"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := load(t, c.fs, true, nil)
			if s.MCP.AutoBackground != c.auto || s.MCP.CallTimeout != c.call {
				t.Fatalf("got %v/%v, want %v/%v", s.MCP.AutoBackground, s.MCP.CallTimeout, c.auto, c.call)
			}
			if c.diags == nil {
				noDiag(t, s)
			}
			wantDiag(t, s, c.diags...)
		})
	}
}

func TestAllowedNetworks(t *testing.T) {
	s := load(t, files{
		"user":    `{"mcpAllowedNetworks":["127.0.0.0/8","10.1.2.3/8","::ffff:192.168.0.0/112","x",5]}`,
		"project": `{"mcpAllowedNetworks":["0.0.0.0/0"]}`,
	}, true, nil)
	var got []string
	for _, p := range s.AllowedNetworks {
		got = append(got, p.String())
	}
	if strings.Join(got, " ") != "127.0.0.0/8 10.0.0.0/8 192.168.0.0/16" {
		t.Fatalf("%v", got)
	}
	wantDiag(t, s, `$.mcpAllowedNetworks[3]: not a CIDR network`, "$.mcpAllowedNetworks[4]: expected a CIDR string", ".agent/settings.json: $.mcpAllowedNetworks: ignored: only user settings")
}

func TestPermissions(t *testing.T) {
	s := load(t, files{
		"user":    `{"permissions":{"allow":["Read","Bash(go test *)"],"deny":["WebFetch"],"defaultMode":"acceptEdits"}}`,
		"project": `{"permissions":{"allow":["gh__*","Edit(src/**)","Bad tool",1],"deny":["Bash(rm *)"],"ask":[]}}`,
		"local":   `{"permissions":{"defaultMode":"yolo"}}`,
	}, true, nil)
	var allow, deny []string
	for _, r := range s.Permissions.Allow {
		allow = append(allow, r.String()+"@"+r.Scope.String())
	}
	for _, r := range s.Permissions.Deny {
		deny = append(deny, r.String())
	}
	if strings.Join(allow, " ") != "Read@user Bash(go test *)@user gh__*@project Edit(src/**)@project" || strings.Join(deny, " ") != "WebFetch Bash(rm *)" {
		t.Fatalf("allow %v deny %v", allow, deny)
	}
	if s.Permissions.DefaultMode != ModeAcceptEdits {
		t.Fatalf("mode %q", s.Permissions.DefaultMode)
	}
	wantDiag(t, s, "$.permissions.allow[2]: rule \"Bad tool\"", "$.permissions.allow[3]: expected a rule string", "$.permissions.ask: unknown key", "$.permissions.defaultMode: must be one of")
}

func TestParseRule(t *testing.T) {
	cases := []struct {
		name          string
		in, tool, pat string
		hasPat, ok    bool
	}{
		{"a tool name alone", "Read", "Read", "", false, true},
		{"a tool with a pattern", "Bash(go test ./...)", "Bash", "go test ./...", true, true},
		{"parentheses inside the pattern", "Bash(echo (nested))", "Bash", "echo (nested)", true, true},
		{"a wildcard inside the pattern", "WebFetch(*.example.com)", "WebFetch", "*.example.com", true, true},
		{"every tool of a server", "github__*", "github__*", "", false, true},
		{"one tool of a server", "github__create_issue", "github__create_issue", "", false, true},
		{"a dash in the server name", "my-server__tool", "my-server__tool", "", false, true},
		{"an empty rule", "", "", "", false, false},
		{"an unclosed pattern", "Bash(", "", "", false, false},
		{"an empty pattern", "Bash()", "", "", false, false},
		{"a blank pattern", "Bash(  )", "", "", false, false},
		{"text after the pattern", "Bash(x)y", "", "", false, false},
		{"a star alone", "*", "", "", false, false},
		{"a star after a name that is not a server", "Ba*", "", "", false, false},
		{"a server wildcard takes no pattern", "github__*(x)", "", "", false, false},
		{"a space in the tool name", "Bad name", "", "", false, false},
		{"a dot in the tool name", "tool.name", "", "", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseRule(c.in)
			if (err == nil) != c.ok {
				t.Errorf("ParseRule(%q): err %v, want ok=%v", c.in, err, c.ok)
				return
			}
			if c.ok && (r.Tool != c.tool || r.Pattern != c.pat || r.HasPattern != c.hasPat || r.String() != c.in) {
				t.Errorf("ParseRule(%q) = %+v", c.in, r)
			}
		})
	}
}

func TestProvidersAndDefaultModel(t *testing.T) {
	lookup := env("MY_KEY", "k-123", "LOCAL_URL", "http://127.0.0.1:8080/v1")
	s := load(t, files{
		"user": `{"defaultModel":{"provider":"local","model":"qwen"},
			"providers":{"local":{"baseURL":"$ENV:LOCAL_URL","model":"m1","timeout":30000},
			"responses":{"apiKey":"$ENV:MY_KEY","apiSurface":"responses","store":false,"reasoning":{"effort":"high"}},
			"regional":{"region":"beijing","apiKey":"$ENV:NOPE"},
			"reasoning":{"reasoningEffort":"extreme","thinking":true,"bogus":1},
			"vendorx":{}}}`,
		"project": `{"providers":{"local":{"model":"m2"}}}`,
	}, true, lookup)
	if s.DefaultModel == nil || s.DefaultModel.Provider != "local" || s.DefaultModel.Model != "qwen" {
		t.Fatalf("%+v", s.DefaultModel)
	}
	l := s.Providers["local"]
	if l.BaseURL != "http://127.0.0.1:8080/v1" || l.Model != "m2" || l.Timeout != 30*time.Second {
		t.Fatalf("local %+v", l)
	}
	r := s.Providers["responses"]
	if r.APIKey != "k-123" || r.APIKeyVar != "MY_KEY" || r.Options["apiSurface"] != "responses" || r.Options["store"] != false {
		t.Fatalf("responses %+v", r)
	}
	if eff := r.Options["reasoning"].(map[string]any)["effort"]; eff != "high" {
		t.Fatalf("reasoning %v", eff)
	}
	if g := s.Providers["regional"]; g.APIKey != "" || g.APIKeyVar != "NOPE" || g.Options["region"] != "beijing" {
		t.Fatalf("regional %+v", g)
	}
	wantDiag(t, s, "$.providers.regional.apiKey: environment variable NOPE is not set",
		"$.providers.reasoning.reasoningEffort: must be one of", "$.providers.reasoning.thinking: expected a string",
		"$.providers.reasoning.bogus: unknown option for provider reasoning", "$.providers.vendorx: unknown provider id")
	if strings.Contains(diagText(s), "k-123") {
		t.Fatal("a key reached a diagnostic")
	}
	for _, bad := range []string{`{"defaultModel":{"provider":"nope","model":"m"}}`, `{"defaultModel":{"model":"m"}}`, `{"defaultModel":"local"}`, `{"defaultModel":{"provider":"local","model":""}}`} {
		s := load(t, files{"user": bad}, true, nil)
		if s.DefaultModel != nil || len(s.Diagnostics) == 0 {
			t.Errorf("%s accepted", bad)
		}
	}
	s = load(t, files{"user": `{"providers":{"local":{"baseURL":"ftp://x"}}}`}, true, nil)
	wantDiag(t, s, "$.providers.local.baseURL: must be an http or https URL")
}

func TestShadowedInSameScope(t *testing.T) {
	s := load(t, files{
		"user-compat": `{"mcpServers":{"s":{"type":"stdio","command":"c"}}}`,
		"user":        `{"mcpServers":{"s":{"type":"stdio","command":"a"}}}`,
	}, true, nil)
	if server(t, s, "s").Command.Value != "a" {
		t.Fatal(".agent must win over .compat")
	}
	wantDiag(t, s, ".compat/settings.json: $.mcpServers.s: shadowed by the definition in")
}

func TestUnreadableFile(t *testing.T) {
	home, ws := setup(t, files{})
	os.MkdirAll(filepath.Join(home, ".agent", "settings.json"), 0o755) // a directory where a file should be
	s := Load(Options{Home: home, Workspace: ws, Lookup: env()})
	wantDiag(t, s, "settings.json: cannot read: ")
}

func TestIsCredentialName(t *testing.T) {
	yes := []string{"GITHUB_TOKEN", "token", "API_KEY", "APIKEY", "X-Api-Key", "Authorization", "MY_SECRET", "DB_PASSWORD",
		"PASSWD", "AWS_SECRET_ACCESS_KEY", "SESSION_COOKIE", "PRIVATE_KEY_PATH", "SENTRY_DSN", "GHTOKEN", "OPENAI_APIKEY",
		"DATABASE_URL", "REDIS_URL", "PG_URI", "MONGODB_URI", "GOOGLE_APPLICATION_CREDENTIALS", "BASIC_AUTH", "x-auth"}
	no := []string{"PWD", "OLDPWD", "HOME", "PATH", "USER", "LANG", "API_URL", "SERVER_URL", "PORT", "DEBUG", "REGION", "HOST"}
	for _, n := range yes {
		if !IsCredentialName(n) {
			t.Errorf("%s should be credential-shaped", n)
		}
	}
	for _, n := range no {
		if IsCredentialName(n) {
			t.Errorf("%s should not be credential-shaped", n)
		}
	}
}

func TestExpand(t *testing.T) {
	lookup := env("A", "x", "EMPTY", "", "MY_TOKEN", "t")
	cases := []struct {
		name          string
		in, val, disp string
		unset         int
		invalid       int
	}{
		{"text without templates", "plain", "plain", "plain", 0, 0},
		{"a set variable", "${A}", "x", "x", 0, 0},
		{"several templates in one text", "a${A}b${A}", "axbx", "axbx", 0, 0},
		{"an unset variable stays literal and is reported", "${B}", "${B}", "${B}", 1, 0},
		{"the default of an unset variable", "${B:-def}", "def", "def", 0, 0},
		{"a set variable ignores its default", "${A:-def}", "x", "x", 0, 0},
		{"the default applies to an empty variable", "${EMPTY:-def}", "def", "def", 0, 0},
		{"an empty variable without a default", "${EMPTY}", "", "", 0, 0},
		{"an empty default", "${B:-}", "", "", 0, 0},
		{"a credential-shaped variable is masked on display", "${MY_TOKEN}", "t", "***", 0, 0},
		{"a dollar without a brace is literal", "$A", "$A", "$A", 0, 0},
		{"a dollar before a template stays literal", "$${A}", "$x", "$x", 0, 0},
		{"an opening without a name is not a template", "${", "${", "${", 0, 1},
		{"an unclosed template", "${A", "${A", "${A", 0, 1},
		{"a name starting with a digit", "${1A}", "${1A}", "${1A}", 0, 1},
		{"a dash without a colon is not a default", "${A-B}", "${A-B}", "${A-B}", 0, 1},
		{"an empty name", "${}", "${}", "${}", 0, 1},
		{"a default next to a template", "${B:-a}${A}", "ax", "ax", 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := Expand(c.in, lookup)
			if e.Value != c.val || e.Display != c.disp || len(e.Unset) != c.unset || len(e.Invalid) != c.invalid {
				t.Errorf("Expand(%q) = %+v", c.in, e)
			}
		})
	}
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"${A}", "${B:-x}", "a${", "${MY_TOKEN}x", "$${}}"} {
		f.Add(s)
	}
	lookup := env("A", "x", "MY_TOKEN", "secret")
	f.Fuzz(func(t *testing.T, s string) {
		e := Expand(s, lookup)
		if !strings.Contains(s, "${") && (e.Value != s || e.Display != s) {
			t.Fatalf("text without templates changed: %q", s)
		}
		if strings.Contains(e.Display, "secret") && !strings.Contains(s, "secret") {
			t.Fatalf("credential value shown: %q -> %q", s, e.Display)
		}
	})
}

// FuzzLoad feeds arbitrary bytes as a settings file: loading never panics,
// and every diagnostic names the file.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers":{"s":{"type":"stdio","command":"x","args":["${A}"]}}}`,
		`{"mcp":{"autoBackgroundMs":1,"callTimeoutMs":2},"permissions":{"allow":["Bash(x)"]}}`,
		`{"providers":{"local":{"baseURL":"$ENV:X"}},"defaultModel":{"provider":"local","model":"m"}}`,
		`{"mcpServers":{"h":{"type":"http","url":"https://x","oauth":{"clientId":"a","callbackPort":1}}}}`,
		`{"mcpAllowedNetworks":["10.0.0.0/8"],"mcpHeaderHelpers":[{"command":"/x","args":[]}]}`,
		`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"x","timeout":5,"args":["a"],"failClosed":true}]}]},"disableAllHooks":false}`,
		`{"autoCompact":false,"autoCompactAt":0.7,"models":{"m":{"contextWindow":1000,"maxOutputTokens":10}}}`,
		`{"modelPrices":{"m":{"input":3,"output":15,"cacheRead":0.3},"n":{"input":-1}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		home := filepath.Join(root, "home")
		os.MkdirAll(filepath.Join(home, ".agent"), 0o755)
		p := filepath.Join(home, ".agent", "settings.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s := Load(Options{Home: home, Workspace: filepath.Join(root, "ws"), Lookup: env("A", "1", "X", "http://h")})
		for _, d := range s.Diagnostics {
			if d.File != p {
				t.Fatalf("diagnostic without the file: %s", d)
			}
		}
	})
}

// mcpServers is an object of name to definition
// (docs/reference/settings.md, "mcpServers"); any other shape is reported
// against the file, and the other keys still apply.
func TestMCPServersShape(t *testing.T) {
	cases := []struct {
		name, file string
		diags      []string
	}{
		{"array", `{"mcpServers":[{"type":"stdio","command":"x"}],"mcp":{"callTimeoutMs":5000}}`, []string{"$.mcpServers: expected an object"}},
		{"string", `{"mcpServers":"x","mcp":{"callTimeoutMs":5000}}`, []string{"$.mcpServers: expected an object"}},
		{"null", `{"mcpServers":null,"mcp":{"callTimeoutMs":5000}}`, []string{"$.mcpServers: expected an object"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := load(t, files{"user": c.file}, true, nil)
			wantDiag(t, s, c.diags...)
			if len(s.Servers) != 0 {
				t.Fatalf("servers from a malformed mcpServers: %v", s.ServerNames())
			}
			if s.MCP.CallTimeout.Milliseconds() != 5000 {
				t.Fatal("the file's other keys were dropped")
			}
		})
	}
	s := load(t, files{"user": `{"mcpServers":{}}`}, true, nil)
	noDiag(t, s)
}

// Only the six settings files define servers (docs/reference/settings.md,
// "Files and scopes"); a plugin's or a project's .mcp.json is never read,
// whatever it holds.
func TestMCPJSONNotRead(t *testing.T) {
	home, ws := setup(t, files{"user": `{"mcpServers":{"u":{"type":"stdio","command":"u"}}}`})
	def := []byte(`{"mcpServers":{"plugin":{"type":"stdio","command":"evil"}}}`)
	for _, p := range []string{
		filepath.Join(ws, ".mcp.json"),
		filepath.Join(ws, ".agent", ".mcp.json"),
		filepath.Join(home, ".agent", "plugins", "p", ".mcp.json"),
		filepath.Join(home, ".mcp.json"),
	} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, def, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := Load(Options{Home: home, Workspace: ws, Trusted: true, Lookup: env()})
	if _, ok := s.Servers["plugin"]; ok || len(s.Servers) != 1 {
		t.Fatalf("servers %v: a .mcp.json was read", s.ServerNames())
	}
	for _, f := range s.Files {
		if filepath.Base(f.Path) == ".mcp.json" {
			t.Fatalf("file list holds %s", f.Path)
		}
	}
}

// ValidBaseURL is the one rule for providers.<id>.baseURL and --base-url.
func TestValidBaseURL(t *testing.T) {
	for s, want := range map[string]bool{
		"https://api.example.com/v1": true, "http://127.0.0.1:8080/v1": true, "http://[::1]:1/": true,
		"": false, "/v1": false, "api.example.com/v1": false, "ftp://x.example": false, "http://": false,
		"https://user:pw@x.example/v1": false, "https://user@x.example": false, "https://x.example/%zz": false,
	} {
		if got := ValidBaseURL(s); got != want {
			t.Errorf("ValidBaseURL(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestPromptSettings(t *testing.T) {
	cases := []struct {
		name                 string
		fs                   files
		trusted              bool
		system, appendPrompt string
		maxBytes             int
		diags                []string
	}{
		{"none set", files{"user": `{}`}, true, "", "", 0, nil},
		{"user keys", files{"user": `{"systemPrompt":"be brief","appendSystemPrompt":"use tabs","instructions":{"maxBytes":1024}}`}, true, "be brief", "use tabs", 1024, nil},
		{"the project's key wins over the user's", files{"user": `{"appendSystemPrompt":"u"}`, "project": `{"appendSystemPrompt":"p"}`}, true, "", "p", 0, nil},
		{"an untrusted project's key does not apply", files{"user": `{"appendSystemPrompt":"u"}`, "project": `{"appendSystemPrompt":"p"}`}, false, "", "u", 0, nil},
		{"a prompt that is not a string", files{"user": `{"systemPrompt":7}`}, true, "", "", 0, []string{"$.systemPrompt: expected a string, found number; ignored"}},
		{"maxBytes zero", files{"user": `{"instructions":{"maxBytes":0}}`}, true, "", "", 0, []string{"$.instructions.maxBytes: must be a whole number"}},
		{"maxBytes a fraction", files{"user": `{"instructions":{"maxBytes":1.5}}`}, true, "", "", 0, []string{"$.instructions.maxBytes: must be a whole number"}},
		{"maxBytes too large", files{"user": `{"instructions":{"maxBytes":99999999999}}`}, true, "", "", 0, []string{"$.instructions.maxBytes: must be a whole number"}},
		{"an unknown instructions key", files{"user": `{"instructions":{"max":1}}`}, true, "", "", 0, []string{"$.instructions.max: unknown key"}},
		{"instructions not an object", files{"user": `{"instructions":[]}`}, true, "", "", 0, []string{"$.instructions: expected an object"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := load(t, c.fs, c.trusted, nil)
			text := func(ts *TextSetting) string {
				if ts == nil {
					return ""
				}
				return ts.Value
			}
			if got := text(s.Prompt.SystemPrompt); got != c.system {
				t.Errorf("systemPrompt %q, want %q", got, c.system)
			}
			if got := text(s.Prompt.AppendSystemPrompt); got != c.appendPrompt {
				t.Errorf("appendSystemPrompt %q, want %q", got, c.appendPrompt)
			}
			if s.Prompt.InstructionsMaxBytes != c.maxBytes {
				t.Errorf("maxBytes %d, want %d", s.Prompt.InstructionsMaxBytes, c.maxBytes)
			}
			wantDiag(t, s, c.diags...)
		})
	}
}
