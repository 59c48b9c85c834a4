package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"agent/agent"
	"agent/agent/tools"
	"agent/tui/keys"
	"agent/tui/screen"
)

// permAsk opens a permission question on a state.
func permAsk(t *testing.T, s *state, req agent.PermissionRequest) *permPrompt {
	p := &permPrompt{req: req, reply: make(chan agent.Answer, 1), ctx: t.Context()}
	s.askPermission(p)
	return p
}

// TestGoldenPermissionPrompts draws each kind of permission prompt: what
// the call will do and the exact rules the answers record
// (docs/reference/runtime.md, "Permission prompts").
func TestGoldenPermissionPrompts(t *testing.T) {
	clock := &fakeClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	long := ""
	for i := 1; i <= 40; i++ {
		long += fmt.Sprintf("line %d of the new file\n", i)
	}
	cases := []struct {
		name  string
		w, h  int
		req   agent.PermissionRequest
		setup func(s *state)
	}{
		{"perm-write-new", 64, 20, agent.PermissionRequest{Tool: "Write", Reason: "tools that modify files need approval in this mode",
			Args: json.RawMessage(`{"file_path":"cmd/hello.go","content":"…"}`), Rules: []string{"Write(cmd/**)"},
			Preview: &tools.Preview{Kind: tools.PreviewFile, Title: "cmd/hello.go (new file)", Lang: "go",
				Text: "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\") // greet\n}\n"}}, nil},
		{"perm-write-diff", 64, 18, agent.PermissionRequest{Tool: "Write", Rules: []string{"Write(docs/**)"},
			Preview: &tools.Preview{Kind: tools.PreviewDiff, Title: "docs/notes.md", Lang: "md",
				Text: "--- a/docs/notes.md\n+++ b/docs/notes.md\n@@ -1,2 +1,2 @@\n # Notes\n-old line\n+new line\n"}}, nil},
		{"perm-edit", 64, 18, agent.PermissionRequest{Tool: "Edit", Rules: []string{"Edit(src/**)"},
			Preview: &tools.Preview{Kind: tools.PreviewDiff, Title: "src/util.go", Lang: "go",
				Text: "--- a/src/util.go\n+++ b/src/util.go\n@@ -3,3 +3,3 @@\n // helper\n-func helper() int { return 1 }\n+func assist() int { return 2 }\n \n"}}, nil},
		{"perm-edit-fails", 64, 14, agent.PermissionRequest{Tool: "Edit", Rules: []string{"Edit(src/**)"},
			Preview: &tools.Preview{Kind: tools.PreviewDiff, Note: "This call will fail: old_string was not found in /w/src/util.go"}}, nil},
		{"perm-bash", 64, 16, agent.PermissionRequest{Tool: "Bash", Reason: "tools that execute need approval in this mode",
			Suggest: "Bash(cat hello.txt && ls -la)", Rules: []string{"Bash(cat:*)", "Bash(ls:*)"},
			Preview: &tools.Preview{Kind: tools.PreviewCommand, Text: "cat hello.txt && ls -la", Note: "Show the file and the folder", Lang: "sh"}},
			func(s *state) { s.permAction("next") }},
		{"perm-bash-long", 40, 14, agent.PermissionRequest{Tool: "Bash", Rules: []string{"Bash(go test:*)"},
			Preview: &tools.Preview{Kind: tools.PreviewCommand, Text: "go test -run 'TestAVeryLongName|TestAnother' -count=1 ./internal/...", Lang: "sh"}}, nil},
		{"perm-webfetch", 64, 12, agent.PermissionRequest{Tool: "WebFetch", Suggest: "WebFetch(docs.example.com)", Rules: []string{"WebFetch(docs.example.com)"},
			Preview: &tools.Preview{Kind: tools.PreviewURL, Text: "https://docs.example.com/guide?page=2"}}, nil},
		{"perm-mcp", 64, 12, agent.PermissionRequest{Tool: "github__create_issue", Suggest: "github__create_issue",
			Args: json.RawMessage(`{"title":"Crash on start","body":"Steps:\n1. run"}`)}, nil},
		{"perm-scrolled", 64, 16, agent.PermissionRequest{Tool: "Write", Rules: []string{"Write(gen/**)"},
			Preview: &tools.Preview{Kind: tools.PreviewFile, Title: "gen/big.txt (new file)", Text: long}},
			func(s *state) { s.unbound(keyEvent("\x1b[6~")) }},
		{"perm-hostile", 50, 12, agent.PermissionRequest{Tool: "Bash", Rules: []string{"Bash(echo:*)"},
			Preview: &tools.Preview{Kind: tools.PreviewCommand, Text: "echo \x1b]0;owned\x07 \u202Eevil", Note: "\x1b[31mred\x1b[0m note"}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newState(nil, clock.now)
			s.session = &fakeSession{}
			s.status = Status{Provider: "local", Model: "fake-model", Mode: "default"}
			permAsk(t, s, c.req)
			if c.setup != nil {
				c.setup(s)
			}
			f := screen.NewFrame(c.w, c.h)
			s.view(f)
			golden(t, c.name, f)
			for y := range f.H {
				if w := screen.StringWidth(f.Row(y)); w > f.W {
					t.Fatalf("row %d is %d wide", y, w)
				}
				if strings.ContainsAny(f.Row(y), "\x1b\a\u202E") {
					t.Fatalf("row %d holds a control: %q", y, f.Row(y))
				}
			}
		})
	}
}

// keyEvent decodes one key's bytes.
func keyEvent(b string) keys.Event {
	var dec keys.Decoder
	return dec.Feed(nil, []byte(b))[0]
}

// testTodos is a todo list of seven items, the third in progress.
var testTodos = []tools.Todo{
	{Content: "Read the parser", Status: tools.TodoCompleted, ActiveForm: "Reading the parser"},
	{Content: "Write the failing test", Status: tools.TodoCompleted, ActiveForm: "Writing the failing test"},
	{Content: "Fix the off-by-one", Status: tools.TodoInProgress, ActiveForm: "Fixing the off-by-one"},
	{Content: "Run the whole suite", Status: tools.TodoPending, ActiveForm: "Running the whole suite"},
	{Content: "Update the changelog", Status: tools.TodoPending, ActiveForm: "Updating the changelog"},
	{Content: "Tell the user", Status: tools.TodoPending, ActiveForm: "Telling the user"},
	{Content: "Clean up", Status: tools.TodoPending, ActiveForm: "Cleaning up"},
}

// TestGoldenDailyScreens draws the todo panel with the spinner's
// activeForm, and a running command's last lines with its elapsed time.
func TestGoldenDailyScreens(t *testing.T) {
	clock := &fakeClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	todos := testTodos
	cases := []struct {
		name  string
		w, h  int
		setup func(s *state)
	}{
		{"todo-panel", 60, 16, func(s *state) {
			s.event(agent.Event{Kind: agent.EventTurnStart, Turn: "t/1", Text: "fix the parser"})
			s.event(agent.Event{Kind: agent.EventTodos, Todos: todos})
		}},
		{"todo-panel-short", 60, 12, func(s *state) {
			s.event(agent.Event{Kind: agent.EventTodos, Todos: todos[2:4]})
		}},
		{"todo-panel-done", 60, 10, func(s *state) {
			s.event(agent.Event{Kind: agent.EventTodos, Todos: todos[:2]}) // all completed: no panel
		}},
		{"bash-live", 60, 16, func(s *state) {
			s.event(agent.Event{Kind: agent.EventTurnStart, Turn: "t/1", Text: "build it"})
			s.event(agent.Event{Kind: agent.EventToolStart, Turn: "t/1", Tool: &agent.ToolEvent{CallID: "c1", Name: "Bash", Args: json.RawMessage(`{"command":"make all"}`)}})
			clock.t = clock.t.Add(12*time.Second + 300*time.Millisecond)
			s.event(agent.Event{Kind: agent.EventToolOutput, Turn: "t/1", Tool: &agent.ToolEvent{CallID: "c1", Name: "Bash"},
				Text: "cc -c a.c\ncc -c b.c\ncc -c c.c\ncc -c d.c\ncc -c e.c\ncc -c f.c\nld -o app \x1b[1mbold\x1b[0m"})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clock.t = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
			s := newState(nil, clock.now)
			s.session = &fakeSession{}
			s.status = Status{Provider: "local", Model: "fake-model", Mode: "default"}
			c.setup(s)
			f := screen.NewFrame(c.w, c.h)
			s.view(f)
			golden(t, c.name, f)
		})
	}
}

// A running command's view: later views replace it, the elapsed time
// moves with the clock, a view after the end is dropped, and the end
// collapses the block to its result.
func TestLiveOutputBlock(t *testing.T) {
	clock := &fakeClock{t: t0}
	s := newState(nil, clock.now)
	s.session = &fakeSession{}
	s.busy = true
	call := &agent.ToolEvent{CallID: "c1", Name: "Bash", Args: json.RawMessage(`{"command":"slow"}`)}
	s.event(agent.Event{Kind: agent.EventToolStart, Turn: "t/1", Tool: call})
	s.event(agent.Event{Kind: agent.EventToolOutput, Turn: "t/1", Tool: call, Text: "first"})
	draw := func() string {
		f := screen.NewFrame(50, 12)
		s.view(f)
		return f.String()
	}
	if got := draw(); !strings.Contains(got, "running… 0s") || !strings.Contains(got, "first") {
		t.Fatalf("%s", got)
	}
	clock.t = clock.t.Add(3 * time.Second)
	s.tick(clock.t)
	s.event(agent.Event{Kind: agent.EventToolOutput, Turn: "t/1", Tool: call, Text: "second"})
	if got := draw(); !strings.Contains(got, "running… 3s") || strings.Contains(got, "first") || !strings.Contains(got, "second") {
		t.Fatalf("%s", got)
	}
	s.event(agent.Event{Kind: agent.EventToolEnd, Turn: "t/1", Tool: &agent.ToolEvent{CallID: "c1", Name: "Bash", Result: &tools.Result{Content: "done\n"}}})
	s.event(agent.Event{Kind: agent.EventToolOutput, Turn: "t/1", Tool: call, Text: "late"})
	if got := draw(); strings.Contains(got, "running") || strings.Contains(got, "late") || !strings.Contains(got, "⎿ done") {
		t.Fatalf("%s", got)
	}
}

// @path completion under the in-memory terminal: the menu offers the
// workspace's files (not what git ignores), Tab puts the path in the
// composer, and the prompt goes to the session as typed.
func TestMentionCompletion(t *testing.T) {
	ws := t.TempDir()
	for _, f := range []string{"src/parser.go", "src/printer.go", "README.md", "build/out.bin", "my notes.txt"} {
		os.MkdirAll(filepath.Dir(filepath.Join(ws, f)), 0o755)
		os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o644)
	}
	os.WriteFile(filepath.Join(ws, ".ignore"), []byte("build/\n"), 0o644)
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 60, 16, Options{Hooks: Hooks{Workspace: ws}})
		h.typ("explain @p")
		h.expect("@src/parser.go")
		h.expect("@src/printer.go")
		h.typ("\x1b[B\t") // the second, accepted with Tab
		h.expect("› explain @src/printer.go")
		h.expectNot("@src/parser.go")
		h.typ("and @b")
		h.expectNot("build/out.bin") // ignored by .ignore
		h.typ("\x7fmy")
		h.expect("@my notes.txt")
		h.typ("\r") // Enter accepts a path, quoted for its space
		h.expect(`› explain @src/printer.go and @"my notes.txt"`)
		h.typ("\r")
		if sub, _, _ := h.sess.get(); len(sub) != 1 || sub[0] != `explain @src/printer.go and @"my notes.txt" ` {
			t.Fatalf("submitted %q", sub)
		}
		h.typ("mail me@pr") // not at a word's start: no menu
		h.expectNot("@src/parser.go")
	})
}

// Ctrl+G under the in-memory terminal: the editor gets the prompt in a
// file and its text comes back; an unset or failing editor is said and
// the prompt is kept.
func TestEditorKey(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The file is the last argument, after the editor's own ("--wait").
	good := script("good-editor", `for f; do :; done; printf '%s\n' "$(cat "$f") and more" "second line" > "$f"`)
	bad := script("bad-editor", "exit 3\n")
	cases := []struct {
		name, visual, editor string
		want                 string // on screen afterwards
		composer             string // the composer's text afterwards
	}{
		{"the editor's text becomes the prompt", "", good + " --wait", "", "draft and more\nsecond line"},
		{"VISUAL wins over EDITOR", good, bad, "", "draft and more\nsecond line"},
		{"a failing editor", "", bad, "exited with status 3. The prompt is kept.", "draft"},
		{"no editor", "", "", "No editor is set: set $VISUAL or $EDITOR", "draft"},
		{"an editor that cannot start", "", filepath.Join(dir, "missing"), "The editor failed:", "draft"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("VISUAL", c.visual)
			t.Setenv("EDITOR", c.editor)
			term := newFakeTerm(200, 14) // wide: the notices name long temporary paths
			sess := &fakeSession{}
			app := New(Options{Terminal: term})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				app.Run(ctx, sess, Status{}, "")
				app.Close()
			}()
			defer func() { cancel(); <-done }()
			waitScreen(t, term, "Type a prompt")
			term.feed("draft")
			waitScreen(t, term, "› draft")
			term.feed("\x07") // Ctrl+G
			if c.want != "" {
				waitScreen(t, term, c.want)
			}
			want := strings.ReplaceAll(c.composer, "\n", "\n  ")
			waitScreen(t, term, "› "+want)
			// Typing goes on in the composer afterwards.
			term.feed("!")
			waitScreen(t, term, strings.Split(want, "\n")[len(strings.Split(want, "\n"))-1]+"!")
		})
	}
}

// waitScreen polls the fake terminal until it shows s (the app runs on
// its own; this bounds a hang).
func waitScreen(t *testing.T, term *fakeTerm, s string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(term.screen(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("never saw %q in\n%s", s, term.screen())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// /rewind under the in-memory terminal: the checkpoints newest first with
// their files, the menu with conversation only chosen, the forked session
// with the prompt back in the composer, and the code report.
func TestRewindScreens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cps := []agent.Checkpoint{
			{Turn: 1, Prompt: "add a parser", Time: t0, Files: []agent.FileChange{{Path: "/w/parser.go", Added: 40}}},
			{Turn: 2, Prompt: "rename the helper", Time: t0.Add(time.Minute), Files: []agent.FileChange{{Path: "/w/util.go", Added: 1, Removed: 1}, {Path: "/w/big.bin", NotSaved: "over 8 MiB, not saved"}}},
			{Turn: 3, Prompt: "run the tests", Time: t0.Add(2 * time.Minute)},
		}
		next := &fakeSession{}
		var got []RewindRequest
		hooks := Hooks{
			Checkpoints: func() []agent.Checkpoint { return cps },
			Rewind: func(_ context.Context, req RewindRequest) (RewindResult, error) {
				got = append(got, req)
				res := RewindResult{Old: "old-session"}
				if req.Code {
					res.Report = "restored util.go\nconflict parser.go: changed since the session last changed it (by Bash, you or an editor); not overwritten\n"
				}
				if req.Conversation {
					res.Switched = &Switched{Session: next, Status: Status{SessionID: "forked"}, Messages: []ReplayMessage{{Turn: "1", User: true, Text: "add a parser"}}}
					res.Prompt = "rename the helper"
				}
				return res, nil
			},
		}
		h := start(t, 90, 20, Options{Hooks: hooks})
		h.typ("/rewind\r")
		h.expect("Rewind to a checkpoint")
		h.expect("› run the tests")
		h.expect("util.go +1 -1, big.bin +0 -0")
		h.typ("\x1b[B\r") // rename the helper
		h.expect("Rewind to before: rename the helper")
		h.expect("Code: util.go, big.bin. Changes made by Bash commands are not restored. Not saved, so")
		h.expect("not restorable: big.bin (over 8 MiB, not saved).")
		h.expect("› Conversation only")
		h.typ("\r")
		if len(got) != 1 || got[0] != (RewindRequest{Checkpoint: 2, Conversation: true}) {
			t.Fatalf("requests %+v", got)
		}
		h.expect("Rewound the conversation to before checkpoint 2")
		h.expect("› rename the helper") // back in the composer
		h.expect("› add a parser")      // the fork's conversation
		h.typ("\r")
		if sub, _, _ := next.get(); len(sub) != 1 || sub[0] != "rename the helper" {
			t.Fatalf("forked session got %q", sub)
		}
		h.typ("/rewind\r\r\x1b[B\r") // code only, newest checkpoint
		if len(got) != 2 || got[1] != (RewindRequest{Checkpoint: 3, Code: true}) {
			t.Fatalf("requests %+v", got)
		}
		h.expect("Code restored to checkpoint 3:")
		h.expect("conflict parser.go")
		// While a turn runs, /rewind waits.
		next.emit(agent.Event{Kind: agent.EventTurnStart, Turn: "f/2", Text: "x"})
		synctest.Wait()
		h.typ("/rewind\r")
		h.expect("A turn is running")
	})
}
