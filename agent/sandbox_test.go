package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"agent/agent/tools"
	"agent/config"
	"agent/internal/fakemodel"
	"agent/internal/sandbox"
)

func TestBashProfile(t *testing.T) {
	def := config.DefaultSandbox()
	with := func(f func(*config.SandboxSettings)) config.SandboxSettings { s := def; f(&s); return s }
	cases := []struct {
		name string
		s    config.SandboxSettings
		want sandbox.Profile
	}{
		{"the default", def, sandbox.Profile{Mode: sandbox.WorkspaceWrite, Network: sandbox.NetNone}},
		{"off", with(func(s *config.SandboxSettings) { s.Disabled, s.Mode = true, sandbox.FullAccess }), sandbox.Profile{Mode: sandbox.FullAccess}},
		{"allowWrite in workspace-write", with(func(s *config.SandboxSettings) { s.AllowWrite = []string{"/out"} }),
			sandbox.Profile{Mode: sandbox.WorkspaceWrite, Write: []string{"/out"}}},
		{"allowWrite has no effect in read-only", with(func(s *config.SandboxSettings) { s.Mode, s.AllowWrite = sandbox.ReadOnly, []string{"/out"} }),
			sandbox.Profile{Mode: sandbox.ReadOnly}},
		{"denyWrite and protectedPaths protect", with(func(s *config.SandboxSettings) { s.Protected, s.DenyWrite = []string{"/w/Makefile"}, []string{"/w/ci"} }),
			sandbox.Profile{Mode: sandbox.WorkspaceWrite, Protected: []string{"/w/Makefile", "/w/ci"}}},
		{"local binding needs a loopback of its own", with(func(s *config.SandboxSettings) { s.LocalBinding = true }),
			sandbox.Profile{Mode: sandbox.WorkspaceWrite, Network: sandbox.NetLoopback}},
		{"local binding leaves the host network", with(func(s *config.SandboxSettings) { s.LocalBinding, s.Network = true, sandbox.NetHost }),
			sandbox.Profile{Mode: sandbox.WorkspaceWrite, Network: sandbox.NetHost}},
		{"reads and sockets", with(func(s *config.SandboxSettings) {
			s.AllowRead, s.DenyRead, s.UnixSockets, s.AllUnixSockets = []string{"/a"}, []string{"/d"}, []string{"/s.sock"}, true
		}), sandbox.Profile{Mode: sandbox.WorkspaceWrite, AllowRead: []string{"/a"}, DenyRead: []string{"/d"}, UnixSockets: []string{"/s.sock"}, AllUnixSockets: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := BashProfile(c.s)
			if len(got.Protected) == 0 {
				got.Protected = nil
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestServerAndHelperProfiles(t *testing.T) {
	s := config.DefaultSandbox()
	s.Network = sandbox.NetHost
	host, ro := sandbox.NetHost, sandbox.ReadOnly
	if p := serverProfile(s, &config.ServerDef{}); p.Mode != sandbox.WorkspaceWrite || p.Network != sandbox.NetNone {
		t.Errorf("a server without a profile: %+v", p)
	}
	if p := serverProfile(s, &config.ServerDef{Sandbox: &config.SandboxProfile{Mode: &ro, Network: &host, AllowWrite: []string{"/o"}}}); p.Mode != sandbox.ReadOnly || p.Network != sandbox.NetHost || !reflect.DeepEqual(p.Write, []string{"/o"}) {
		t.Errorf("a server's own profile: %+v", p)
	}
	if p := helperProfile(s, &config.HeaderHelper{}); p.Mode != sandbox.ReadOnly || p.Network != sandbox.NetNone || p.Write != nil {
		t.Errorf("a helper without a profile: %+v", p)
	}
	if p := helperProfile(s, &config.HeaderHelper{Sandbox: &config.SandboxProfile{Network: &host, AllowRead: []string{"/gh"}}}); p.Network != sandbox.NetHost || !reflect.DeepEqual(p.AllowRead, []string{"/gh"}) {
		t.Errorf("a helper's own profile: %+v", p)
	}
	off := config.DefaultSandbox()
	off.Disabled, off.Mode = true, sandbox.FullAccess
	if p := helperProfile(off, &config.HeaderHelper{}); p.Confines() {
		t.Errorf("the sandbox is off, the helper is confined: %+v", p)
	}
}

func TestSandboxSettingsFlag(t *testing.T) {
	s := config.DefaultSandbox()
	s.Disabled, s.Mode = true, sandbox.FullAccess
	got, err := SandboxSettings(s, "read-only")
	if err != nil || got.Mode != sandbox.ReadOnly || got.Disabled {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := SandboxSettings(s, "nope"); !errors.Is(err, ErrSandboxMode) {
		t.Fatalf("%v", err)
	}
	if got, _ := SandboxSettings(s, ""); !got.Disabled {
		t.Fatal("no flag changed the settings")
	}
}

// TestCheckSandboxed: autoAllowBashIfSandboxed runs a confined Bash call
// without asking, after the deny rules and plan mode; a call that asks to
// leave the sandbox is asked in every mode, whatever the allow rules say
// (docs/sandbox.md, "Permissions" and "Escalation").
func TestCheckSandboxed(t *testing.T) {
	ws := realTempDir(t)
	boxed := tools.Target{Kind: tools.TargetCommand, Value: "go test ./...", Sandboxed: true}
	esc := tools.Target{Kind: tools.TargetCommand, Value: "curl x", Escalation: "network", Justification: "download"}
	cases := []struct {
		name      string
		mode      string
		auto      bool
		allow     []string
		deny      []string
		target    tools.Target
		want      Decision
		escalated string // what OnEscalation saw
	}{
		{"confined, auto-allowed", config.ModeDefault, true, nil, nil, boxed, Allow, ""},
		{"confined, autoAllow off asks", config.ModeDefault, false, nil, nil, boxed, Ask, ""},
		{"unconfined asks", config.ModeDefault, true, nil, nil, tools.Target{Kind: tools.TargetCommand, Value: "go test ./..."}, Ask, ""},
		{"a deny rule wins", config.ModeDefault, true, nil, []string{"Bash(go test *)"}, boxed, Deny, ""},
		{"plan mode denies", config.ModePlan, true, nil, nil, boxed, Deny, ""},
		{"an escalation is asked", config.ModeDefault, true, nil, nil, esc, Ask, "ask"},
		{"even in bypassPermissions", config.ModeBypass, true, nil, nil, esc, Ask, "ask"},
		{"even with an allow rule", config.ModeDefault, true, []string{"Bash"}, nil, esc, Ask, "ask"},
		{"a deny rule denies an escalation", config.ModeDefault, true, nil, []string{"Bash(curl *)"}, esc, Deny, "deny"},
		{"plan mode denies an escalation", config.ModePlan, true, nil, nil, esc, Deny, "deny"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seen := ""
			ch := NewChecker(CheckerOptions{Mode: c.mode, Allow: mkRules(t, c.allow...), Deny: mkRules(t, c.deny...), Workspace: ws,
				AutoAllowSandboxed: c.auto, OnEscalation: func(_ tools.Target, v Verdict) { seen = v.Decision.String() }})
			v := ch.Check(bashSpec, c.target)
			if v.Decision != c.want || seen != c.escalated {
				t.Fatalf("%v (%s), escalation seen %q; want %v, %q", v.Decision, v.Reason, seen, c.want, c.escalated)
			}
			if c.target.Escalation != "" && v.Decision == Ask {
				if v.Suggest != "" || !strings.Contains(v.Reason, "outside the sandbox for network access: download") {
					t.Fatalf("%+v", v)
				}
				if msg := DeniedMessage("Bash", v); !strings.Contains(msg, "sandbox.excludedCommands") {
					t.Fatalf("%s", msg)
				}
			}
		})
	}
}

type answering struct {
	ans  Answer
	err  error
	seen []PermissionRequest
}

func (a *answering) AskPermission(_ context.Context, r PermissionRequest) (Answer, error) {
	a.seen = append(a.seen, r)
	return a.ans, a.err
}

// TestStartSandbox: a session's Bash runs confined, says what was
// refused, and the transcript records the spawn; the environment block
// names the mode; an escalation answered by the user is recorded.
func TestStartSandbox(t *testing.T) {
	if sandbox.Detect().KernelABI < 1 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the CI machine should have Landlock")
		}
		t.Skip("no Landlock")
	}
	home, ws := startSandbox(t, true)
	srv := fakemodel.New(fakemodel.Reply{Text: "hello"})
	defer srv.Close()
	prompter := &answering{ans: DenyOnce}
	c, err := Start(t.Context(), StartOptions{Home: home, Workspace: ws, LookupEnv: lookupNone, Provider: "local", Model: "fake", BaseURL: srv.URL(), Headless: true, Prompter: prompter})
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Sandbox(); st.Mode != "workspace-write" || st.Banner != "" || !strings.HasPrefix(st.Tier, "landlock") {
		t.Fatalf("%+v", st)
	}
	args, _ := json.Marshal(map[string]string{"command": "echo x > " + filepath.Join(home, "out")})
	res := c.Session.CallTool(t.Context(), "Bash", args)
	if !res.IsError || !strings.Contains(res.Content, "refused: writing ~/out") {
		t.Fatalf("%+v", res)
	}
	if r, err := c.Session.Run(t.Context(), "hi"); err != nil || r.Text != "hello" {
		t.Fatalf("%+v %v", r, err)
	}
	// An escalation answered by the user, through the wrapped prompter.
	p := c.sandbox.prompter(prompter)
	if _, err := p.AskPermission(t.Context(), PermissionRequest{Tool: "Bash", Target: tools.Target{Value: "curl x", Escalation: "network"}}); err != nil {
		t.Fatal(err)
	}
	id := c.Session.ID()
	c.Close()
	data, err := os.ReadFile(TranscriptPath(home, id))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{`"type":"sandbox","event":"spawn","label":"Bash"`, `"violations":["writing ~/out (outside the writable folders)"]`,
		`"event":"escalation"`, `"decision":"denied by the user"`} {
		if !strings.Contains(text, want) {
			t.Errorf("transcript lacks %s:\n%s", want, text)
		}
	}
	if body := string(srv.Requests()[0]); !strings.Contains(body, `Sandbox: workspace-write`) || !strings.Contains(body, `\"escalate\"`) {
		t.Errorf("request: %s", body)
	}
	if _, err := os.Stat(filepath.Join(home, ".agent", "sandbox", "tmp")); err != nil {
		t.Fatal(err)
	}
	// What is left is an emptied spare for the next box (sandbox.makeTmp).
	tmpRoot := filepath.Join(home, ".agent", "sandbox", "tmp")
	left, _ := os.ReadDir(tmpRoot)
	for _, e := range left {
		inside, _ := os.ReadDir(filepath.Join(tmpRoot, e.Name()))
		if !strings.HasPrefix(e.Name(), ".spare-") || len(inside) != 0 {
			t.Errorf("private folder left behind: %s holding %v", e.Name(), inside)
		}
	}
}

// TestStartSandboxOff: with --sandbox danger-full-access (or the sandbox
// off) Bash runs as before and the schema has no escalation.
func TestStartSandboxOff(t *testing.T) {
	home, ws := startSandbox(t, true)
	srv := fakemodel.New(fakemodel.Reply{Text: "hello"})
	defer srv.Close()
	c, err := Start(t.Context(), StartOptions{Home: home, Workspace: ws, LookupEnv: lookupNone, Provider: "local", BaseURL: srv.URL(), Headless: true,
		SandboxMode: "danger-full-access", Overrides: StartOverrides{NoTranscript: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if st := c.Sandbox(); st.Mode != "danger-full-access" || st.Tier != "none" {
		t.Fatalf("%+v", st)
	}
	for _, s := range c.Session.ToolSpecs() {
		if s.Name == "Bash" && strings.Contains(string(s.Schema), "escalate") {
			t.Fatal("escalation offered without a sandbox")
		}
	}
	if _, err := Start(t.Context(), StartOptions{Home: home, Workspace: ws, LookupEnv: lookupNone, Provider: "local", BaseURL: srv.URL(), SandboxMode: "nope"}); !errors.Is(err, ErrSandboxMode) {
		t.Fatalf("%v", err)
	}
}
