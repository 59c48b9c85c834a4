package tui

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"agent/agent"
	"agent/agent/tools"
	"agent/providers"
	"agent/tui/screen"
)

var update = flag.Bool("update", false, "rewrite the golden frames in testdata/")

// fakeClock is a fixed time the tests move by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// golden compares a frame's text with testdata/NAME.golden.
func golden(t *testing.T, name string, f *screen.Frame) {
	t.Helper()
	got := f.String()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Errorf("frame %s:\n%s\nwant\n%s", name, got, want)
	}
}

// TestGoldenScreens draws each screen from a scripted event stream with a
// fixed clock; the goldens are the frames' text.
func TestGoldenScreens(t *testing.T) {
	clock := &fakeClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	sess := &fakeSession{}
	sess.Subscribe(func(agent.Event) {})
	newS := func() *state {
		s := newState(nil, clock.now)
		s.session = sess
		s.status = Status{Provider: "local", Model: "fake-model", Mode: "default"}
		return s
	}
	turn := []agent.Event{
		{Kind: agent.EventTurnStart, Turn: "t/1", Text: "Rename the helper and show me."},
		{Kind: agent.EventReasoning, Turn: "t/1", Text: "The helper lives in util.go."},
		{Kind: agent.EventToolStart, Turn: "t/1", Tool: &agent.ToolEvent{CallID: "c1", Name: "Grep", Args: json.RawMessage(`{"pattern":"helper"}`)}},
		{Kind: agent.EventToolEnd, Turn: "t/1", Tool: &agent.ToolEvent{CallID: "c1", Name: "Grep", Result: &tools.Result{Content: "util.go:3\nmain.go:9\nmain.go:12\nmain.go:20\n"}}},
		{Kind: agent.EventToolStart, Turn: "t/1", Tool: &agent.ToolEvent{CallID: "c2", Name: "Edit", Args: json.RawMessage(`{"file_path":"util.go"}`)}},
		{Kind: agent.EventToolEnd, Turn: "t/1", Tool: &agent.ToolEvent{CallID: "c2", Name: "Edit", Result: &tools.Result{Content: "ok", Display: "--- a/util.go\n+++ b/util.go\n@@ -1,3 +1,3 @@\n package util\n-func helper() {}\n+func assist() {}\n"}}},
		{Kind: agent.EventText, Turn: "t/1", Text: "## Done\n\nRenamed `helper` to **assist**:\n\n- util.go\n- main.go (3 calls)\n\n```go\nassist()\n"},
		{Kind: agent.EventUsage, Turn: "t/1", Usage: &providers.Usage{InputTokens: 2400, OutputTokens: 120}},
	}
	cases := []struct {
		name  string
		w, h  int
		setup func(s *state)
	}{
		{"empty", 60, 10, func(s *state) {}},
		{"thinking", 64, 30, func(s *state) {
			for _, ev := range turn {
				s.event(ev)
			}
		}},
		{"complete", 64, 30, func(s *state) {
			for _, ev := range turn {
				s.event(ev)
			}
			s.event(agent.Event{Kind: agent.EventComplete, Turn: "t/1"})
		}},
		{"interrupted", 50, 12, func(s *state) {
			s.event(agent.Event{Kind: agent.EventTurnStart, Turn: "t/1", Text: "long story"})
			s.event(agent.Event{Kind: agent.EventText, Turn: "t/1", Text: "Once upon a time"})
			s.event(agent.Event{Kind: agent.EventInterrupted, Turn: "t/1"})
		}},
		{"queued", 50, 12, func(s *state) {
			s.event(agent.Event{Kind: agent.EventTurnStart, Turn: "t/1", Text: "first"})
			s.event(agent.Event{Kind: agent.EventQueued, Turn: "t/2", Text: "second"})
			s.event(agent.Event{Kind: agent.EventQueued, Turn: "t/3", Text: "third"})
		}},
		{"recovery", 50, 12, func(s *state) {
			s.event(agent.Event{Kind: agent.EventTurnStart, Turn: "t/1", Text: "try"})
			s.event(agent.Event{Kind: agent.EventError, Turn: "t/1", Err: errors.New("503 from the server")})
		}},
		{"permission", 60, 16, func(s *state) {
			s.askPermission(&permPrompt{req: agent.PermissionRequest{Tool: "Bash", Args: json.RawMessage(`{"command":"go test ./..."}`), Suggest: "Bash(go test ./...)", Reason: "Bash asks in default mode"}, reply: make(chan agent.Answer, 1), ctx: t.Context()})
			s.permAction("next")
		}},
		{"escalation", 60, 16, func(s *state) {
			req := agent.PermissionRequest{Tool: "Bash", Args: json.RawMessage(`{"command":"go mod download","sandbox":"escalate","needs":"network","justification":"fetch the modules"}`),
				Target: tools.Target{Kind: tools.TargetCommand, Value: "go mod download", Escalation: "network", Justification: "fetch the modules"},
				Reason: "the command asks to run outside the sandbox for network access: fetch the modules"}
			s.askPermission(&permPrompt{req: req, reply: make(chan agent.Answer, 1), ctx: t.Context()})
			s.permAction("next")
		}},
		{"confirm", 60, 10, func(s *state) {
			s.confirm = &confirmPrompt{title: "Trust this workspace?", question: "/home/u/project\nIts settings can define MCP servers.", reply: func(bool) {}}
		}},
		{"text-prompt", 40, 8, func(s *state) {
			s.textPrompt = &textPrompt{title: "Paste the redirect address", masked: true, buf: []rune("secret"), reply: func(string, bool) {}}
		}},
		{"autocomplete", 60, 14, func(s *state) {
			s.comp.set("/mcp")
			s.composerChanged()
			s.autocompleteAction("next")
		}},
		{"wide-and-hostile", 30, 10, func(s *state) {
			s.event(agent.Event{Kind: agent.EventTurnStart, Turn: "t/1", Text: "漢字のテスト"})
			s.event(agent.Event{Kind: agent.EventText, Turn: "t/1", Text: "全角の文字が折り返されます。\x1b]0;title\x07\u202Eevil"})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newS()
			c.setup(s)
			f := screen.NewFrame(c.w, c.h)
			s.view(f)
			golden(t, c.name, f)
			for y := range f.H {
				if w := screen.StringWidth(f.Row(y)); w > f.W {
					t.Fatalf("row %d is %d wide", y, w)
				}
			}
		})
	}
}
