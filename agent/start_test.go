package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agent/agent/tools"
	"agent/config"
	"agent/internal/fakemodel"
)

// startSandbox is a home and a trusted workspace for Start.
func startSandbox(t *testing.T, trusted bool) (home, ws string) {
	t.Helper()
	home, ws = t.TempDir(), t.TempDir()
	if trusted {
		if _, err := config.Trust(home, ws, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return home, ws
}

func lookupNone(string) (string, bool) { return "", false }

func TestStartHeadlessRefusesUntrusted(t *testing.T) {
	home, ws := startSandbox(t, false)
	srv := fakemodel.New()
	defer srv.Close()
	_, err := Start(t.Context(), StartOptions{Home: home, Workspace: ws, LookupEnv: lookupNone, Provider: "local", BaseURL: srv.URL(), Headless: true})
	var ue *UntrustedError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "agent trust --yes") {
		t.Fatalf("err = %v", err)
	}
	// Not headless: user settings only, and the session starts.
	c, err := Start(t.Context(), StartOptions{Home: home, Workspace: ws, LookupEnv: lookupNone, Provider: "local", BaseURL: srv.URL(), Overrides: StartOverrides{NoTranscript: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Trusted {
		t.Fatal("trusted")
	}
}

func TestStartRefusesBadMode(t *testing.T) {
	home, ws := startSandbox(t, true)
	_, err := Start(t.Context(), StartOptions{Home: home, Workspace: ws, LookupEnv: lookupNone, Provider: "local", BaseURL: "http://127.0.0.1:1/v1", PermissionMode: "yolo", Headless: true})
	if err == nil || !strings.Contains(err.Error(), "yolo") {
		t.Fatalf("err = %v", err)
	}
}

// TestStartRefusesBadHome: a home folder unset or relative is refused,
// from the options or from HOME, before anything is read or made.
func TestStartRefusesBadHome(t *testing.T) {
	_, ws := startSandbox(t, true)
	for _, tc := range []struct {
		name, home, env, want string
	}{
		{"no home", "", "", "HOME is not set"},
		{"a relative HOME", "", "rel", `HOME is "rel", not an absolute path`},
		{"a relative home in the options", "./rel", "", `the home folder is "./rel", not an absolute path`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) {
				if k == "HOME" && tc.env != "" {
					return tc.env, true
				}
				return "", false
			}
			_, err := Start(t.Context(), StartOptions{Home: tc.home, Workspace: ws, LookupEnv: lookup, Provider: "local", BaseURL: "http://127.0.0.1:1/v1", Headless: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// TestStartResume: a resumed session sends the stored conversation,
// appends to the same transcript (after a torn last line), and numbers its
// turns after the stored ones.
func TestStartResume(t *testing.T) {
	home, ws := startSandbox(t, true)
	srv := fakemodel.New(fakemodel.Reply{Text: "first"}, fakemodel.Reply{Text: "second"})
	defer srv.Close()
	opts := StartOptions{Home: home, Workspace: ws, LookupEnv: lookupNone, Provider: "local", Model: "fake", BaseURL: srv.URL(), Headless: true}
	c, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	id := c.Session.ID()
	if res, err := c.Session.Run(t.Context(), "one"); err != nil || res.Text != "first" {
		t.Fatalf("%+v %v", res, err)
	}
	c.Close()
	c.Close() // idempotent

	// A crash mid-write leaves a torn line.
	path := TranscriptPath(home, id)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"message","tu`)
	f.Close()

	opts.Resume = id
	c, err = Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if c.Session.ID() != id || len(c.Resumed.History) != 2 {
		t.Fatalf("resumed %s with %d messages", c.Session.ID(), len(c.Resumed.History))
	}
	if res, err := c.Session.Run(t.Context(), "two"); err != nil || res.Text != "second" || res.Turn != id+"/2" {
		t.Fatalf("%+v %v", res, err)
	}
	c.Close()
	var body map[string]any
	json.Unmarshal(srv.Requests()[1], &body)
	if n := len(body["messages"].([]any)); n != 5 { // the static system prompt, the environment block, one, first, two
		t.Fatalf("resumed request has %d messages", n)
	}
	l, err := LoadTranscript(home, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.History) != 4 || l.Turns != 2 {
		data, _ := os.ReadFile(path)
		t.Fatalf("after the resumed turn: %d messages, %d turns:\n%s", len(l.History), l.Turns, data)
	}

	// Another workspace cannot resume it.
	other := t.TempDir()
	config.Trust(home, other, time.Now())
	opts.Workspace = other
	if _, err := Start(t.Context(), opts); err == nil || !strings.Contains(err.Error(), "belongs to the workspace") {
		t.Fatalf("err = %v", err)
	}
	opts.Workspace, opts.Resume = ws, "no-such-session"
	if _, err := Start(t.Context(), opts); err == nil {
		t.Fatal("resumed a missing session")
	}
}

// TestCallToolDirect: a direct call (mcp serve) validates its arguments,
// runs an allowed tool, denies what would ask with the rule that would
// allow it, and hides and refuses a tool a deny rule names.
func TestCallToolDirect(t *testing.T) {
	echo := &echoTool{name: "Echo", risk: tools.RiskExecute}
	look := &echoTool{name: "Look", risk: tools.RiskInspect}
	gone := &echoTool{name: "Gone", risk: tools.RiskInspect}
	perms := &rulePerms{denied: map[string]bool{"Gone": true}}
	h := newHarness(t, SessionOptions{Tools: []tools.Tool{echo, look, gone}, Permissions: perms, Prompter: &answerer{ans: AllowOnce}})
	ctx := context.Background()

	var names []string
	for _, s := range h.sess.ToolSpecs() {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "Echo,Look" {
		t.Fatalf("offered %v", names)
	}
	if r := h.sess.CallTool(ctx, "Look", json.RawMessage(`{"text":"hi"}`)); r.IsError || r.Content != "echo: hi" {
		t.Fatalf("%+v", r)
	}
	// A prompter exists for turns, but a direct call has nobody to ask.
	r := h.sess.CallTool(ctx, "Echo", json.RawMessage(`{"text":"hi"}`))
	if !r.IsError || !strings.Contains(r.Content, "Echo") || echo.runs != 0 {
		t.Fatalf("%+v runs=%d", r, echo.runs)
	}
	if r := h.sess.CallTool(ctx, "Gone", json.RawMessage(`{"text":"hi"}`)); !r.IsError || gone.runs != 0 {
		t.Fatalf("%+v", r)
	}
	if r := h.sess.CallTool(ctx, "Look", json.RawMessage(`{"txt":1}`)); !r.IsError || !strings.Contains(r.Content, "Invalid arguments") {
		t.Fatalf("%+v", r)
	}
	if r := h.sess.CallTool(ctx, "Nope", nil); !r.IsError {
		t.Fatalf("%+v", r)
	}
	h.sess.Close()
	if r := h.sess.CallTool(ctx, "Look", json.RawMessage(`{"text":"hi"}`)); !r.IsError {
		t.Fatalf("after Close: %+v", r)
	}
}

// TestSetTools: a tool group added while the session runs is offered on
// the next model call and can be called; removing it withdraws it.
func TestSetTools(t *testing.T) {
	h := newHarness(t, SessionOptions{Permissions: &rulePerms{}},
		fakemodel.Reply{Text: "no tools yet"},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "srv__look", Args: `{"text":"x"}`}}},
		fakemodel.Reply{Text: "done"},
		fakemodel.Reply{Text: "gone again"})
	run(t, h.sess, "one")
	if _, ok := requestOf(t, h, 0)["tools"]; ok {
		t.Fatal("tools offered before any were added")
	}
	h.sess.SetTools("srv", []tools.Tool{&echoTool{name: "srv__look", risk: tools.RiskInspect}})
	if res := run(t, h.sess, "two"); res.Text != "done" {
		t.Fatalf("%+v", res)
	}
	if tools := requestOf(t, h, 1)["tools"].([]any); len(tools) != 1 {
		t.Fatalf("tools %v", tools)
	}
	if !strings.Contains(h.kinds(), "tool_end") {
		t.Fatal(h.kinds())
	}
	h.sess.SetTools("srv", nil)
	run(t, h.sess, "three")
	if _, ok := requestOf(t, h, 3)["tools"]; ok {
		t.Fatal("removed tools still offered")
	}
}

func TestOpenTranscriptRefusesSymlink(t *testing.T) {
	home := t.TempDir()
	dir := SessionsDir(home)
	os.MkdirAll(dir, 0o700)
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(target, []byte("x"), 0o600)
	os.Symlink(target, filepath.Join(dir, "s.jsonl"))
	if _, err := OpenTranscript(home, "s"); err == nil {
		t.Fatal("followed a symlink")
	}
	if _, err := OpenTranscript(home, "../s"); err == nil {
		t.Fatal("path escape")
	}
}

// TestEnvironmentBlockFollowsModelAndMode: /model and /permissions update
// the environment block, so the model is never told a stale one.
func TestEnvironmentBlockFollowsModelAndMode(t *testing.T) {
	home, ws := startSandbox(t, true)
	c, err := Start(t.Context(), StartOptions{Home: home, Workspace: ws, LookupEnv: lookupNone, Provider: "local", Model: "m1",
		BaseURL: "http://127.0.0.1:9/v1", Headless: true, Overrides: StartOverrides{NoTranscript: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	env := func() string { return c.Session.CurrentFraming().System[1] }
	if !strings.Contains(env(), "Model: m1") || !strings.Contains(env(), "Permission mode: default") {
		t.Fatalf("environment block at start: %s", env())
	}
	c.Instructions.SetModelAndMode("m2", "plan")
	if !strings.Contains(env(), "Model: m2") || !strings.Contains(env(), "Permission mode: plan") {
		t.Fatalf("environment block after the change: %s", env())
	}
}
