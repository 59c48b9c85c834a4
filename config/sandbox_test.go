package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"agent/internal/sandbox"
)

func TestSandboxSettings(t *testing.T) {
	type want struct {
		mode     sandbox.Mode
		disabled bool
		network  sandbox.NetMode
		fail     bool
		auto     bool
		unsbx    bool
	}
	def := want{mode: sandbox.WorkspaceWrite, auto: true, unsbx: true}
	with := func(f func(*want)) want { w := def; f(&w); return w }
	cases := []struct {
		name  string
		fs    files
		want  want
		diags []string
	}{
		{"no settings: the default", files{"user": `{}`}, def, nil},
		{"enabled true is workspace-write", files{"user": `{"sandbox":{"enabled":true}}`}, def, nil},
		{"the user turns it off", files{"user": `{"sandbox":{"enabled":false}}`}, with(func(w *want) { w.mode, w.disabled = sandbox.FullAccess, true }), nil},
		{"a project cannot turn it off", files{"project": `{"sandbox":{"enabled":false}}`}, def, []string{"$.sandbox.enabled: ignored: only user settings may loosen the sandbox"}},
		{"a project may turn it back on", files{"user": `{"sandbox":{"enabled":false}}`, "project": `{"sandbox":{"enabled":true}}`}, def, nil},
		{"the user's read-only", files{"user": `{"sandbox":{"mode":"read-only"}}`}, with(func(w *want) { w.mode = sandbox.ReadOnly }), nil},
		{"a project tightens to read-only", files{"project": `{"sandbox":{"mode":"read-only"}}`}, with(func(w *want) { w.mode = sandbox.ReadOnly }), nil},
		{"a local file cannot widen the mode", files{"user": `{"sandbox":{"mode":"read-only"}}`, "local": `{"sandbox":{"mode":"workspace-write"}}`},
			with(func(w *want) { w.mode = sandbox.ReadOnly }), []string{"settings.local.json: $.sandbox.mode: ignored: only user settings"}},
		{"a project cannot ask for full access", files{"project-compat": `{"sandbox":{"mode":"danger-full-access"}}`}, def, []string{"$.sandbox.mode: ignored"}},
		{"an unknown mode", files{"user": `{"sandbox":{"mode":"yolo"}}`}, def, []string{`$.sandbox.mode: "yolo" is not one of read-only, workspace-write or danger-full-access`}},
		{"a mode not a string", files{"user": `{"sandbox":{"mode":1}}`}, def, []string{"$.sandbox.mode: expected one of"}},
		{"the user's host network", files{"user": `{"sandbox":{"network":{"mode":"host"}}}`}, with(func(w *want) { w.network = sandbox.NetHost }), nil},
		{"a project cannot open the network", files{"project": `{"sandbox":{"network":{"mode":"loopback"}}}`}, def, []string{"$.sandbox.network.mode: ignored"}},
		{"a project may close it", files{"user": `{"sandbox":{"network":{"mode":"host"}}}`, "project": `{"sandbox":{"network":{"mode":"none"}}}`}, def, nil},
		{"failIfUnavailable from a project", files{"project": `{"sandbox":{"failIfUnavailable":true}}`}, with(func(w *want) { w.fail = true }), nil},
		{"a project cannot drop failIfUnavailable", files{"user": `{"sandbox":{"failIfUnavailable":true}}`, "project": `{"sandbox":{"failIfUnavailable":false}}`},
			with(func(w *want) { w.fail = true }), []string{"$.sandbox.failIfUnavailable: ignored"}},
		{"a project turns autoAllow off", files{"project": `{"sandbox":{"autoAllowBashIfSandboxed":false}}`}, with(func(w *want) { w.auto = false }), nil},
		{"a project cannot turn autoAllow on", files{"user": `{"sandbox":{"autoAllowBashIfSandboxed":false}}`, "project": `{"sandbox":{"autoAllowBashIfSandboxed":true}}`},
			with(func(w *want) { w.auto = false }), []string{"$.sandbox.autoAllowBashIfSandboxed: ignored"}},
		{"a project removes escalation", files{"project": `{"sandbox":{"allowUnsandboxedCommands":false}}`}, with(func(w *want) { w.unsbx = false }), nil},
		{"a project cannot bring escalation back", files{"user": `{"sandbox":{"allowUnsandboxedCommands":false}}`, "local": `{"sandbox":{"allowUnsandboxedCommands":true}}`},
			with(func(w *want) { w.unsbx = false }), []string{"$.sandbox.allowUnsandboxedCommands: ignored"}},
		{"a project repeats the user's loose value, unsaid", files{"user": `{"sandbox":{"autoAllowBashIfSandboxed":true}}`, "project": `{"sandbox":{"autoAllowBashIfSandboxed":true,"allowUnsandboxedCommands":true}}`}, def, nil},
		{"a bool not a bool", files{"user": `{"sandbox":{"enabled":"yes"}}`}, def, []string{"$.sandbox.enabled: expected true or false, found string"}},
		{"sandbox not an object", files{"user": `{"sandbox":true}`}, def, []string{"$.sandbox: expected an object {enabled, mode, "}},
		{"an unknown key", files{"user": `{"sandbox":{"enable":true}}`}, def, []string{"$.sandbox.enable: unknown key"}},
		{"an unknown filesystem key", files{"user": `{"sandbox":{"filesystem":{"write":[]}}}`}, def, []string{"$.sandbox.filesystem.write: unknown key"}},
		{"an unknown network key", files{"user": `{"sandbox":{"network":{"proxy":"x"}}}`}, def, []string{"$.sandbox.network.proxy: unknown key"}},
		{"an untrusted project does nothing", files{"project": `{"sandbox":{"mode":"read-only"}}`}, def, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home, ws := setup(t, c.fs)
			trusted := c.name != "an untrusted project does nothing"
			s := Load(Options{Home: home, Workspace: ws, Trusted: trusted, Lookup: env()})
			sb := s.Sandbox
			got := want{mode: sb.Mode, disabled: sb.Disabled, network: sb.Network, fail: sb.FailIfUnavailable, auto: sb.AutoAllowBash, unsbx: sb.AllowUnsandboxed}
			if got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			if c.diags == nil && trusted {
				noDiag(t, s)
			}
			wantDiag(t, s, c.diags...)
		})
	}
}

func TestSandboxPaths(t *testing.T) {
	cases := []struct {
		name  string
		fs    files
		check func(t *testing.T, s SandboxSettings, home, ws string)
		diags []string
	}{
		{"user paths of every form", files{"user": `{"sandbox":{"filesystem":{"allowWrite":["~/out","/tmp","build"],"denyRead":["~/secrets"],"allowRead":["~/.ssh"]}}}`},
			func(t *testing.T, s SandboxSettings, home, ws string) {
				if want := []string{filepath.Join(home, "out"), "/tmp", filepath.Join(ws, "build")}; !reflect.DeepEqual(s.AllowWrite, want) {
					t.Errorf("allowWrite %q, want %q", s.AllowWrite, want)
				}
				if want := []string{filepath.Join(home, "secrets")}; !reflect.DeepEqual(s.DenyRead, want) {
					t.Errorf("denyRead %q", s.DenyRead)
				}
				if want := []string{filepath.Join(home, ".ssh")}; !reflect.DeepEqual(s.AllowRead, want) {
					t.Errorf("allowRead %q", s.AllowRead)
				}
			}, nil},
		{"a missing writable path is said and skipped", files{"user": `{"sandbox":{"filesystem":{"allowWrite":["/no/such/dir"]}}}`},
			func(t *testing.T, s SandboxSettings, home, ws string) {
				if len(s.AllowWrite) != 0 {
					t.Errorf("allowWrite %q", s.AllowWrite)
				}
			}, []string{`$.sandbox.filesystem.allowWrite[0]: "/no/such/dir" does not exist; skipped`}},
		{"a project writes inside the workspace only", files{"project": `{"sandbox":{"filesystem":{"allowWrite":["build","/tmp"]}}}`},
			func(t *testing.T, s SandboxSettings, home, ws string) {
				if want := []string{filepath.Join(ws, "build")}; !reflect.DeepEqual(s.ProjectWrite, want) || len(s.AllowWrite) != 0 {
					t.Errorf("allowWrite %q, project's %q, want %q", s.AllowWrite, s.ProjectWrite, want)
				}
			}, []string{"$.sandbox.filesystem.allowWrite[1]: a path outside the workspace (as its links lead) is ignored"}},
		{"a project's link out of the workspace writes nothing", files{"project": `{"sandbox":{"filesystem":{"allowWrite":["h", "h/new", "build"]}}}`},
			func(t *testing.T, s SandboxSettings, home, ws string) {
				if want := []string{filepath.Join(ws, "build")}; !reflect.DeepEqual(s.ProjectWrite, want) || len(s.AllowWrite) != 0 {
					t.Errorf("allowWrite %q, project's %q, want %q", s.AllowWrite, s.ProjectWrite, want)
				}
			}, []string{"$.sandbox.filesystem.allowWrite[0]: a path outside the workspace (as its links lead) is ignored",
				"$.sandbox.filesystem.allowWrite[1]:"}},
		{"a project cannot re-open reads", files{"project": `{"sandbox":{"filesystem":{"allowRead":["~/.ssh"]}}}`},
			func(t *testing.T, s SandboxSettings, home, ws string) {
				if len(s.AllowRead) != 0 {
					t.Errorf("allowRead %q", s.AllowRead)
				}
			}, []string{"$.sandbox.filesystem.allowRead: ignored"}},
		{"a project denies and protects", files{"project": `{"sandbox":{"filesystem":{"denyRead":[".env"],"denyWrite":["ci/"]},"protectedPaths":["Makefile"]}}`},
			func(t *testing.T, s SandboxSettings, home, ws string) {
				if !reflect.DeepEqual(s.DenyRead, []string{filepath.Join(ws, ".env")}) || !reflect.DeepEqual(s.DenyWrite, []string{filepath.Join(ws, "ci")}) || !reflect.DeepEqual(s.Protected, []string{filepath.Join(ws, "Makefile")}) {
					t.Errorf("%+v", s)
				}
			}, nil},
		{"a project cannot exclude commands", files{"project": `{"sandbox":{"excludedCommands":["docker ps"]}}`},
			func(t *testing.T, s SandboxSettings, home, ws string) {
				if len(s.Excluded) != 0 {
					t.Errorf("excluded %q", s.Excluded)
				}
			}, []string{"$.sandbox.excludedCommands: ignored"}},
		{"the user's exclusions and sockets", files{"user": `{"sandbox":{"excludedCommands":["docker ps"],"network":{"allowUnixSockets":["/run/docker.sock"],"allowAllUnixSockets":true,"allowLocalBinding":true}}}`},
			func(t *testing.T, s SandboxSettings, home, ws string) {
				if !reflect.DeepEqual(s.Excluded, []string{"docker ps"}) || !reflect.DeepEqual(s.UnixSockets, []string{"/run/docker.sock"}) || !s.AllUnixSockets || !s.LocalBinding {
					t.Errorf("%+v", s)
				}
			}, nil},
		{"a project cannot allow sockets", files{"project": `{"sandbox":{"network":{"allowUnixSockets":["/x"],"allowAllUnixSockets":true,"allowLocalBinding":true}}}`},
			func(t *testing.T, s SandboxSettings, home, ws string) {
				if len(s.UnixSockets) != 0 || s.AllUnixSockets || s.LocalBinding {
					t.Errorf("%+v", s)
				}
			}, []string{"$.sandbox.network.allowUnixSockets: ignored", "$.sandbox.network.allowAllUnixSockets: ignored", "$.sandbox.network.allowLocalBinding: ignored"}},
		{"bad items are said one by one", files{"user": `{"sandbox":{"filesystem":{"denyRead":["", 3, "ok"]}}}`},
			func(t *testing.T, s SandboxSettings, home, ws string) {
				if len(s.DenyRead) != 1 {
					t.Errorf("denyRead %q", s.DenyRead)
				}
			}, []string{"denyRead[0]: expected a path, found an empty string", "denyRead[1]: expected a path (a string), found number"}},
		{"paths not an array", files{"user": `{"sandbox":{"protectedPaths":"x"}}`},
			func(t *testing.T, s SandboxSettings, home, ws string) {}, []string{"$.sandbox.protectedPaths: expected an array of strings, found string"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home, ws := setup(t, c.fs)
			os.MkdirAll(filepath.Join(home, "out"), 0o755)
			os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
			os.MkdirAll(filepath.Join(ws, "build"), 0o755)
			os.Symlink(filepath.Join(home, "out"), filepath.Join(ws, "h")) // a link out of the workspace
			s := Load(Options{Home: home, Workspace: ws, Trusted: true, Lookup: env()})
			c.check(t, s.Sandbox, home, ws)
			if c.diags == nil {
				noDiag(t, s)
			}
			wantDiag(t, s, c.diags...)
		})
	}
}

func TestSandboxProfiles(t *testing.T) {
	home, ws := setup(t, files{
		"user": `{"mcpHeaderHelpers":[{"command":"/bin/tok","args":[],"sandbox":{"network":"host","allowRead":["~/.config/gh"]}}]}`,
		"project": `{"mcpServers":{
			"a":{"type":"stdio","command":"srv","sandbox":{"mode":"read-only","network":"host","allowWrite":["out"]}},
			"b":{"type":"stdio","command":"srv","sandbox":{"mode":"nope","extra":1}},
			"c":{"type":"http","url":"https://h/mcp","sandbox":{}},
			"d":{"type":"http","url":"https://h/mcp","headersHelper":{"command":"/bin/tok","sandbox":{}}}}}`,
	})
	s := Load(Options{Home: home, Workspace: ws, Trusted: true, Lookup: env()})
	a := server(t, s, "a")
	if a.Refused() || a.Sandbox == nil || *a.Sandbox.Mode != sandbox.ReadOnly || *a.Sandbox.Network != sandbox.NetHost || !reflect.DeepEqual(a.Sandbox.AllowWrite, []string{filepath.Join(ws, "out")}) {
		t.Errorf("a: %+v %+v", a.Problems, a.Sandbox)
	}
	if b := server(t, s, "b"); !b.Refused() || !strings.Contains(strings.Join(b.Problems, "\n"), "must be read-only") {
		t.Errorf("b: %q", b.Problems)
	}
	if c := server(t, s, "c"); !strings.Contains(strings.Join(c.Problems, "\n"), "does not apply to type http") {
		t.Errorf("c: %q", c.Problems)
	}
	if d := server(t, s, "d"); !strings.Contains(strings.Join(d.Problems, "\n"), "set in its mcpHeaderHelpers entry") {
		t.Errorf("d: %q", d.Problems)
	}
	if len(s.HeaderHelpers) != 1 || s.HeaderHelpers[0].Sandbox == nil || *s.HeaderHelpers[0].Sandbox.Network != sandbox.NetHost ||
		!reflect.DeepEqual(s.HeaderHelpers[0].Sandbox.AllowRead, []string{filepath.Join(home, ".config/gh")}) {
		t.Errorf("helpers: %+v", s.HeaderHelpers)
	}
}
