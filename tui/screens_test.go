package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"agent/agent"
	"agent/tui/keys"
	"agent/tui/screen"
)

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// fakeTransports is a Transports for the settings screen.
type fakeTransports struct {
	mu    sync.Mutex
	on    map[string]bool
	fails string
}

func (f *fakeTransports) Transports() []TransportState {
	f.mu.Lock()
	defer f.mu.Unlock()
	return []TransportState{
		{Name: "http", Detail: "127.0.0.1:7777, token in ~/.agent/serve.token", On: f.on["http"]},
		{Name: "stdio", Detail: "not applicable inside the terminal UI", On: false},
	}
}

func (f *fakeTransports) SetTransport(name string, on bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if name == f.fails {
		return errors.New(name + " cannot run here")
	}
	f.on[name] = on
	return nil
}

var testProviders = []ProviderModels{
	{ID: "messages", Label: "Messages API", Models: []string{"big-model", "small-model"}},
	{ID: "local", Label: "local server", Models: nil},
}

var testTasks = []agent.TaskInfo{
	{ID: 2, Tool: "db__query", Started: t0.Add(-5 * time.Second), State: agent.TaskRunning},
	{ID: 1, Tool: "github__search", Started: t0.Add(-time.Minute), Ended: t0.Add(-50 * time.Second), State: agent.TaskFinished, Result: "found 3 issues:\n#1 crash\n#2 leak\n#3 \x1b[31mred\x1b[0m"},
}

func testHooks() Hooks {
	return Hooks{
		Workspace: "/w/project",
		Sessions: func(context.Context) ([]SessionSummary, error) {
			return []SessionSummary{
				{ID: "20250101-aaaa", Title: "fix the flaky test", Modified: t0.Add(-time.Hour)},
				{ID: "20241231-bbbb", Title: "write the release notes\nwith detail", Modified: t0.Add(-48 * time.Hour)},
			}, nil
		},
		SwitchSession: func(context.Context, string) (Switched, error) {
			return Switched{}, errors.New("not in this test")
		},
		Providers: testProviders,
		SetModel: func(_ context.Context, p, m string) (Status, error) {
			return Status{Provider: p, Model: m, Mode: "default"}, nil
		},
		SetMode: func(m string) (Status, error) { return Status{Mode: m}, nil },
		PendingMCP: func(context.Context) ([]string, error) {
			return []string{"github", "jira", "wiki"}, nil
		},
		Tasks: func() []agent.TaskInfo { return testTasks },
		History: func(context.Context) ([]HistoryPrompt, error) {
			return []HistoryPrompt{
				{Text: "git status please", Session: "cur", Workspace: "/w/project"},
				{Text: "explain the git log", Session: "old", Workspace: "/w/project"},
				{Text: "git blame elsewhere", Session: "far", Workspace: "/w/other"},
				{Text: "unrelated prompt", Session: "old", Workspace: "/w/project"},
			}, nil
		},
		Background: func(context.Context) ([]agent.BackgroundInfo, error) {
			return []agent.BackgroundInfo{{ID: "bg-1", Name: "nightly", Workspace: "/w/project", Busy: true, Queued: 1}}, nil
		},
	}
}

// TestGoldenListScreens draws every list screen from a scripted state.
func TestGoldenListScreens(t *testing.T) {
	clock := &fakeClock{t: t0}
	newS := func() *state {
		s := newState(nil, clock.now)
		s.session = &fakeSession{}
		s.status = Status{Provider: "messages", Model: "big-model", Mode: "default", SessionID: "cur"}
		s.hooks = testHooks()
		s.hooks.Transports = &fakeTransports{on: map[string]bool{"http": true}}
		s.spawn = func(fn func(context.Context) func()) { fn(t.Context())() } // synchronous
		return s
	}
	cases := []struct {
		name  string
		w, h  int
		setup func(s *state)
	}{
		{"history-search", 60, 12, func(s *state) {
			s.comp.history = []string{"git commit", "make test"}
			s.openHistorySearch()
			s.listAction(s.top(), keys.ActCycleScope) // project
			for _, r := range "git" {
				s.top().typed(keys.Event{Kind: keys.EventKey, Rune: r})
			}
		}},
		{"resume", 70, 10, func(s *state) { s.openResume(); s.listAction(s.top(), keys.ActNext) }},
		{"model-providers", 60, 10, func(s *state) { s.openModel() }},
		{"model-models", 60, 10, func(s *state) {
			s.openModel()
			s.listAction(s.top(), keys.ActSelect)
		}},
		{"permissions", 60, 10, func(s *state) { s.openPermissions(); s.listAction(s.top(), keys.ActNext) }},
		{"mcp-approve", 50, 10, func(s *state) {
			s.openMCPApprove()
			s.listAction(s.top(), keys.ActToggle)
			s.listAction(s.top(), keys.ActNext)
		}},
		{"background-list", 70, 10, func(s *state) { s.openBackground() }},
		{"background-detail", 50, 10, func(s *state) {
			s.openBackground()
			s.listAction(s.top(), keys.ActNext)
			s.listAction(s.top(), keys.ActOpen)
		}},
		{"workspace-switcher", 60, 10, func(s *state) { s.openSwitcher(); s.listAction(s.top(), keys.ActNext) }},
		{"transport-settings", 70, 10, func(s *state) { s.openTransports() }},
		{"theme-picker", 50, 10, func(s *state) {
			s.openTheme()
			s.listAction(s.top(), keys.ActNext)
			s.listAction(s.top(), keys.ActToggleMotion)
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

func TestHistorySearchApp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 60, 14, Options{Hooks: testHooks()})
		h.typ("make test\r")
		h.typ("\x12") // ctrl+r
		h.expect("History search · this session")
		h.expect("› make test")
		h.typ("\x13") // ctrl+s: project
		h.expect("History search · this project")
		h.expect("explain the git log")
		h.expectNot("git blame elsewhere")
		h.typ("\x13")
		h.expect("all projects")
		h.typ("git")
		h.expect("search: git")
		h.expect("git blame elsewhere")
		h.expectNot("unrelated prompt")
		h.typ("\x12") // ctrl+r: older
		h.typ("\t")   // insert
		h.expectNot("History search")
		h.expect("› explain the git log")
		if sub, _, _ := h.sess.get(); len(sub) != 1 {
			t.Fatalf("insert submitted: %q", sub)
		}
		// Execute runs the prompt; Escape cancels and keeps the composer.
		h.typ("\x15\x12")
		h.typ("\x13\x13unrel\x05") // all, query, ctrl+e
		if sub, _, _ := h.sess.get(); len(sub) != 2 || sub[1] != "unrelated prompt" {
			t.Fatalf("submitted %q", sub)
		}
		h.typ("draft\x12")
		h.esc()
		h.expectNot("History search")
		h.expect("› draft")
	})
}

// A rebound key reaches the history search (every key goes through the
// keymap) and the footer shows the new binding.
func TestHistorySearchRebound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		km, problems := keys.ParseFile([]byte(`{"version": 1, "bindings": {"history-search": {"cycle-scope": "ctrl+o", "insert": null}}}`))
		if km == nil {
			t.Fatal(problems)
		}
		h := start(t, 80, 12, Options{Hooks: testHooks(), Keymap: km})
		h.typ("\x12")
		h.expect("Ctrl+O scope")
		h.expectNot("insert")
		h.typ("\x0f")
		h.expect("this project")
	})
}

func TestResumeSwitchesSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hooks := testHooks()
		next := &fakeSession{}
		var asked string
		hooks.SwitchSession = func(_ context.Context, id string) (Switched, error) {
			asked = id
			return Switched{Session: next, Status: Status{Provider: "local", Model: "m2", Mode: "plan", SessionID: id},
				Messages: []ReplayMessage{
					{Turn: "1", User: true, Text: "fix the flaky test"},
					{Turn: "1", Tool: "Bash", ToolArgs: []byte(`{"command":"go test"}`)},
					{Turn: "1", Text: "Fixed: a **race**."},
					{Turn: "2", User: true, From: "ci", Text: "build failed"},
				}}, nil
		}
		h := start(t, 70, 20, Options{Hooks: hooks})
		h.typ("/resume\r")
		h.expect("Resume a session")
		h.expect("fix the flaky test")
		h.typ("\x1b[B\x1b[A\r")
		h.expect("Resumed the session 20250101-aaaa")
		if asked != "20250101-aaaa" {
			t.Fatalf("asked %q", asked)
		}
		h.expect("› fix the flaky test")
		h.expect("⚙ Bash(command: go test)")
		h.expect("● Fixed: a race.")
		h.expect("[ci] build failed")
		h.expect("local · m2 · mode plan")
		// The new session gets the prompts and its events show.
		h.typ("go on\r")
		if sub, _, _ := next.get(); len(sub) != 1 || sub[0] != "go on" {
			t.Fatalf("new session got %q", sub)
		}
		if sub, _, _ := h.sess.get(); len(sub) != 0 {
			t.Fatalf("old session got %q", sub)
		}
		next.emit(agent.Event{Kind: agent.EventTurnStart, Turn: "x/3", Text: "go on"}, agent.Event{Kind: agent.EventText, Turn: "x/3", Text: "continuing"})
		synctest.Wait()
		h.expect("● continuing")
	})
}

func TestModelAndPermissionMenus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hooks := testHooks()
		var mu sync.Mutex
		var calls []string
		hooks.SetModel = func(_ context.Context, p, m string) (Status, error) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, p+"/"+m)
			if p == "messages" && m == "small-model" {
				return Status{}, errors.New("no API key: set MESSAGES_API_KEY")
			}
			return Status{Provider: p, Model: m, Mode: "default"}, nil
		}
		hooks.SetMode = func(m string) (Status, error) { return Status{Provider: "local", Model: "slug-1", Mode: m}, nil }
		h := start(t, 70, 16, Options{Hooks: hooks})
		h.typ("/model\r")
		h.expect("Model: choose a provider")
		h.typ("\x1b[A\r") // messages (local, the current one, is selected first)
		h.expect("Model: messages")
		h.typ("\x1b[B\r") // small-model: fails, the menu stays with the error
		h.expect("set MESSAGES_API_KEY")
		h.esc() // back to the providers
		h.expect("Model: choose a provider")
		h.typ("\x1b[B\r") // local
		h.expect("Other…")
		h.typ("\r")
		h.expect("Model slug for local")
		h.typ("slug-1\r")
		h.expect("The model is now local · slug-1")
		h.expect("local · slug-1 · mode default")
		mu.Lock()
		got := strings.Join(calls, " ")
		mu.Unlock()
		if got != "messages/small-model local/slug-1" {
			t.Fatalf("SetModel calls %s", got)
		}
		h.typ("/permissions\r")
		h.expect("Permission mode")
		h.typ("\x1b[B\x1b[B\r") // plan
		h.expect("mode plan")
		h.expect("The permission mode is now plan")
	})
}

func TestMCPBulkApprove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 70, 16, Options{Hooks: testHooks()})
		h.typ("/mcp approve\r")
		h.expect("Approve MCP servers")
		h.expect("[ ] github")
		h.typ(" \x1b[B\x1b[B ")
		h.expect("[x] github")
		h.expect("[x] wiki")
		h.typ("\r")
		h.expectNot("Approve MCP servers")
		h.mu.Lock()
		got := fmt.Sprint(h.commands)
		h.mu.Unlock()
		if got != "[[/mcp approve github] [/mcp approve wiki]]" {
			t.Fatalf("commands %s", got)
		}
		// With a server named, the command runs as before.
		h.typ("/mcp approve jira\r")
		h.mu.Lock()
		n := len(h.commands)
		h.mu.Unlock()
		if n != 3 {
			t.Fatalf("%d commands", n)
		}
	})
}

func TestBackgroundListAndDetail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 70, 16, Options{Hooks: testHooks()})
		h.typ("/background\r")
		h.expect("Background tasks")
		h.expect("2  db__query")
		h.typ("\x1b[B\r")
		h.expect("Task 1 · github__search · finished")
		h.expect("#3 [31mred[0m") // sanitised: the escape is gone
		h.esc()
		h.expect("Background tasks")
		h.esc()
		h.expectNot("Background tasks")
	})
}

func TestTransportSettings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hooks := testHooks()
		tr := &fakeTransports{on: map[string]bool{}, fails: "stdio"}
		hooks.Transports = tr
		h := start(t, 80, 14, Options{Hooks: hooks})
		h.typ("/settings\r")
		h.expect("[ ] http")
		h.typ(" ")
		h.expect("[x] http")
		if !tr.on["http"] {
			t.Fatal("http not turned on")
		}
		h.typ("\x1b[B ")
		h.expect("stdio cannot run here")
		h.typ("\r")
		h.expectNot("Serving transports")
	})
}

func TestThemePicker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hooks := testHooks()
		var saved []UISettings
		hooks.SaveUI = func(u UISettings) error { saved = append(saved, u); return nil }
		h := start(t, 60, 14, Options{Hooks: hooks})
		h.typ("/theme\r")
		h.expect("syntax highlighting on · motion on")
		h.typ("\x1b[B") // light: previewed at once
		if h.app.st.th.name != "light" {
			t.Fatalf("preview theme %q", h.app.st.th.name)
		}
		h.esc() // cancel restores
		if h.app.st.th.name != "default" {
			t.Fatalf("after cancel %q", h.app.st.th.name)
		}
		h.typ("/theme\r")
		h.typ("\x1b[B\x1b[Bsm")
		h.expect("syntax highlighting off · motion off")
		h.typ("\r")
		h.expect("Theme high-contrast saved")
		if len(saved) != 1 || saved[0] != (UISettings{Theme: "high-contrast", NoSyntax: true, ReducedMotion: true}) {
			t.Fatalf("saved %+v", saved)
		}
		// Reduced motion: a running turn sets no spinner deadline.
		h.emit(agent.Event{Kind: agent.EventTurnStart, Turn: "s/1", Text: "x"})
		h.expect("… thinking")
		if _, ok := h.app.st.nextDeadline(); ok {
			t.Fatal("the spinner still animates")
		}
	})
}

func TestWorkspaceSwitcherAttach(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hooks := testHooks()
		bg := &fakeSession{}
		hooks.Attach = func(_ context.Context, id string) (Session, Status, error) {
			return bg, Status{Provider: "local", Model: "bg-model", Mode: "default", SessionID: id}, nil
		}
		h := start(t, 70, 16, Options{Hooks: hooks})
		h.emit(agent.Event{Kind: agent.EventTurnStart, Turn: "s/1", Text: "main prompt"}, agent.Event{Kind: agent.EventComplete, Turn: "s/1"})
		h.typ("\x02") // ctrl+b
		h.expect("main session (current)")
		h.expect("nightly (bg-1)")
		h.typ("\x1b[Ba")
		h.expect("Attached to the background session bg-1")
		h.expect("local · bg-model")
		h.expectNot("main prompt")
		bg.emit(agent.Event{Kind: agent.EventTurnStart, Turn: "b/1", Text: "bg work"})
		synctest.Wait()
		h.expect("› bg work")
		// The main session works on while a background one is shown: its
		// events wait and show on the way back.
		h.emit(agent.Event{Kind: agent.EventTurnStart, Turn: "s/2", Text: "queued while away"},
			agent.Event{Kind: agent.EventText, Turn: "s/2", Text: "answered "}, agent.Event{Kind: agent.EventText, Turn: "s/2", Text: "meanwhile"},
			agent.Event{Kind: agent.EventComplete, Turn: "s/2", Result: &agent.TurnResult{Turn: "s/2", Status: agent.StatusComplete, Text: "answered meanwhile"}})
		synctest.Wait()
		h.expectNot("queued while away")
		h.typ("\x02")
		h.expect("main session")
		h.typ("\r")
		h.expect("Back in the main session")
		h.expect("› main prompt")
		h.expect("› queued while away")
		h.expect("answered meanwhile")
		h.expect("local · fake-model")
		h.typ("\x02")
		h.esc()
		h.expectNot("Sessions")
	})
}

// esc types a lone Escape and waits out the escape timeout.
func (h *harness) esc() {
	h.typ("\x1b")
	time.Sleep(30 * time.Millisecond)
	synctest.Wait()
}

// TestResumeSaysEmptyOnlyWhenLoaded: while the stored sessions are being
// fetched the picker says it is loading, not that there are none (a key
// pressed then found nothing to open).
func TestResumeSaysEmptyOnlyWhenLoaded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hooks := testHooks()
		release := make(chan struct{})
		hooks.Sessions = func(context.Context) ([]SessionSummary, error) {
			<-release
			return nil, nil
		}
		h := start(t, 70, 20, Options{Hooks: hooks})
		h.typ("/resume\r")
		h.expect("loading…")
		h.expectNot("No stored session")
		close(release)
		synctest.Wait()
		h.expect("No stored session of this workspace.")
		h.expectNot("loading…")
	})
}
