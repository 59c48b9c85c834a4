package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"agent/agent"
	"agent/agent/tools"
	"agent/providers"
	"agent/tui/keymap"
	"agent/tui/keys"
)

type harness struct {
	t       *testing.T
	term    *fakeTerm
	sess    *fakeSession
	app     *App
	cancel  context.CancelFunc
	done    chan struct{}
	code    int
	err     error
	updates chan keymap.Update

	mu       sync.Mutex
	commands [][]string
}

// start runs an App over a fake terminal and session; call inside a
// synctest bubble.
func start(t *testing.T, w, h int, opts Options) *harness {
	t.Helper()
	hs := &harness{t: t, term: newFakeTerm(w, h), sess: &fakeSession{}, done: make(chan struct{}), updates: make(chan keymap.Update)}
	opts.Terminal = hs.term
	opts.KeymapUpdates = hs.updates
	if opts.Commands == nil {
		opts.Commands = func(_ context.Context, words []string) (string, error) {
			hs.mu.Lock()
			hs.commands = append(hs.commands, words)
			hs.mu.Unlock()
			if words[0] == "/mcp" && len(words) > 1 && words[1] == "approve" && len(words) == 2 {
				return "", fmt.Errorf("%w: /mcp approve SERVER", agent.ErrUsage)
			}
			return "github\tapproved\tuser\thttp\t-\n", nil
		}
	}
	hs.app = New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	hs.cancel = cancel
	go func() {
		defer close(hs.done)
		hs.code, hs.err = hs.app.Run(ctx, hs.sess, Status{Provider: "local", Model: "fake-model", Mode: "default"}, "")
		hs.app.Close()
	}()
	synctest.Wait()
	t.Cleanup(func() {
		cancel()
		<-hs.done
	})
	return hs
}

// typ feeds key bytes and waits until the UI has drawn.
func (h *harness) typ(s string) {
	h.term.feed(s)
	synctest.Wait()
}

func (h *harness) emit(evs ...agent.Event) {
	h.sess.emit(evs...)
	synctest.Wait()
}

func (h *harness) screen() string { return h.term.screen() }

func (h *harness) expect(substr string) {
	h.t.Helper()
	if s := h.screen(); !strings.Contains(s, substr) {
		h.t.Fatalf("screen lacks %q:\n%s", substr, s)
	}
}

func (h *harness) expectNot(substr string) {
	h.t.Helper()
	if s := h.screen(); strings.Contains(s, substr) {
		h.t.Fatalf("screen shows %q:\n%s", substr, s)
	}
}

func (h *harness) exited() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

func TestTypeSubmitAndStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 60, 16, Options{})
		h.expect("local · fake-model · mode default")
		h.expect("Enter send")
		h.typ("hello wörld")
		h.expect("› hello wörld")
		h.typ("\r")
		if sub, _, _ := h.sess.get(); len(sub) != 1 || sub[0] != "hello wörld" {
			t.Fatalf("submitted %q", sub)
		}
		h.emit(agent.Event{Kind: agent.EventTurnStart, Turn: "s/1", Text: "hello wörld"},
			agent.Event{Kind: agent.EventText, Turn: "s/1", Text: "# Answer\n\nSome **bold** "})
		h.expect("› hello wörld")
		h.expect("● Answer")
		h.expect("thinking")
		h.expect("Esc abort")
		h.emit(agent.Event{Kind: agent.EventText, Turn: "s/1", Text: "text\x1b[2J and `code`."},
			// The cache counts are part of the input, not added to it.
			agent.Event{Kind: agent.EventUsage, Turn: "s/1", Usage: &providers.Usage{InputTokens: 1200, OutputTokens: 34, CacheReadTokens: 1000, CacheWriteTokens: 150}},
			agent.Event{Kind: agent.EventComplete, Turn: "s/1", Result: &agent.TurnResult{Status: agent.StatusComplete}})
		h.expect("Some bold text[2J and code.")
		h.expect("ctx 1.2k tokens")
		h.expectNot("thinking")
	})
}

// TestExternalTurnsAreMarked: a turn started by an external event is shown
// with its sender and the claimed name marked as a claim, never as a prompt
// the user typed (docs/reference/events.md, "The event's turn").
func TestExternalTurnsAreMarked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 100, 16, Options{})
		h.expect("Enter send")
		framed := "[message from external:ci, claimed name \"Release Manager\" (unverified)]\nthe deploy finished"
		h.emit(agent.Event{Kind: agent.EventTurnStart, Turn: "s/1", Text: framed, From: "external:ci"})
		h.expect("[external:ci] [message from external:ci, claimed name \"Release Manager\" (unverified)]")
		h.expect("the deploy finished")
		h.expectNot("› the deploy finished")
	})
}

func TestToolEntriesAndDiff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 70, 24, Options{})
		h.emit(agent.Event{Kind: agent.EventTurnStart, Turn: "s/1", Text: "edit it"},
			agent.Event{Kind: agent.EventToolStart, Turn: "s/1", Tool: &agent.ToolEvent{CallID: "c1", Name: "Bash", Args: json.RawMessage(`{"command":"ls -l"}`)}})
		h.expect("⚙ Bash(command: ls -l)")
		h.expect("running…")
		h.emit(agent.Event{Kind: agent.EventToolEnd, Turn: "s/1", Tool: &agent.ToolEvent{CallID: "c1", Name: "Bash", Result: &tools.Result{Content: "a\nb\nc\nd\ne\n"}}},
			agent.Event{Kind: agent.EventToolStart, Turn: "s/1", Tool: &agent.ToolEvent{CallID: "c2", Name: "Edit", Args: json.RawMessage(`{"file_path":"x.go"}`)}},
			agent.Event{Kind: agent.EventToolEnd, Turn: "s/1", Tool: &agent.ToolEvent{CallID: "c2", Name: "Edit", Result: &tools.Result{Content: "ok", Display: "--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-old\n+new\n"}}})
		h.expect("⎿ a")
		h.expect("… 2 more lines")
		h.expect("⎿ --- a/x.go")
		h.expect("    -old")
		h.expect("    +new")
	})
}

func TestCtrlCAbortsThenExits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 60, 12, Options{})
		h.typ("q\r")
		h.emit(agent.Event{Kind: agent.EventTurnStart, Turn: "s/1", Text: "q"}, agent.Event{Kind: agent.EventText, Turn: "s/1", Text: "partial"})
		h.typ("\x03")
		if _, aborts, _ := h.sess.get(); aborts != 1 {
			t.Fatalf("aborts %d", aborts)
		}
		h.expect("Press Ctrl-C again to exit")
		h.emit(agent.Event{Kind: agent.EventInterrupted, Turn: "s/1", Result: &agent.TurnResult{Status: agent.StatusInterrupted}})
		h.expect("● partial")
		h.expect("⏹ interrupted")
		// After the window, the hint goes and Ctrl-C starts over.
		time.Sleep(exitWindow + time.Millisecond)
		synctest.Wait()
		h.expectNot("again to exit")
		h.typ("\x03")
		if h.exited() {
			t.Fatal("one Ctrl-C after the window exited")
		}
		time.Sleep(time.Second)
		h.typ("\x03")
		<-h.done
		if h.code != ExitInterrupted || h.err != nil {
			t.Fatalf("exit %d %v", h.code, h.err)
		}
	})
}

func TestEscapeAbortsThinking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 60, 12, Options{})
		h.emit(agent.Event{Kind: agent.EventTurnStart, Turn: "s/1", Text: "q"})
		h.typ("\x1b")
		if _, aborts, _ := h.sess.get(); aborts != 0 {
			t.Fatal("a lone ESC acted before its timeout")
		}
		time.Sleep(30 * time.Millisecond) // the escape timeout
		synctest.Wait()
		if _, aborts, _ := h.sess.get(); aborts != 1 {
			t.Fatalf("aborts %d", aborts)
		}
		// An arrow key (a sequence beginning with ESC) is not an abort.
		h.typ("\x1b[A")
		if _, aborts, _ := h.sess.get(); aborts != 1 {
			t.Fatalf("aborts %d after an arrow", aborts)
		}
	})
}

func TestComposerEditing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 60, 12, Options{})
		h.typ("one two three\x17") // ctrl+w
		h.expect("› one two")
		h.expectNot("three")
		h.typ("\x1b[D\x1b[D\x7fX") // left, left, backspace, X: "one two |" → "one tXo "
		h.expect("› one tXo")
		h.typ("\x15") // ctrl+u deletes to the start of the line
		h.expect("› o")
		h.expectNot("one")
		h.typ("\x1b[200~line 1\r\nline 2\x1b[201~")
		h.expect("› line 1")
		h.expect("  line 2o")
		h.typ("\r")
		h.typ("second\r")
		sub, _, _ := h.sess.get()
		if len(sub) != 2 || sub[0] != "line 1\nline 2o " || sub[1] != "second" {
			t.Fatalf("submitted %q", sub)
		}
		h.typ("draft\x1b[A")
		h.expect("› second")
		h.typ("\x1b[A")
		h.expect("› line 1")
		h.typ("\x1b[B\x1b[B")
		h.expect("› draft")
	})
}

func TestQueuedAndRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 60, 14, Options{})
		h.emit(agent.Event{Kind: agent.EventTurnStart, Turn: "s/1", Text: "first"},
			agent.Event{Kind: agent.EventQueued, Turn: "s/2", Text: "second prompt"})
		h.expect("⏳ queued: second prompt")
		h.expect("Backspace/Del cancel queued")
		h.typ("\x7f")
		if _, _, c := h.sess.get(); len(c) != 1 || c[0] != "s/2" {
			t.Fatalf("cancelled %q", c)
		}
		h.expectNot("queued: second")
		h.emit(agent.Event{Kind: agent.EventError, Turn: "s/1", Err: errors.New("server said no"), Result: &agent.TurnResult{Status: agent.StatusError}})
		h.expect("✗ The turn failed: server said no")
		h.expect("Enter retry")
		h.typ("\r")
		if sub, _, _ := h.sess.get(); len(sub) != 1 || sub[0] != "first" {
			t.Fatalf("retry submitted %q", sub)
		}
	})
}

func TestPermissionPrompt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 70, 16, Options{})
		ask := func() chan agent.Answer {
			return h.askAsync(agent.PermissionRequest{Tool: "Bash", Args: json.RawMessage(`{"command":"rm -rf build\u001b[31m"}`), Suggest: "Bash(rm -rf build)", Reason: "Bash asks in default mode"})
		}
		ch := ask()
		h.expect("Allow Bash?")
		h.expect("command: rm -rf build[31m")
		h.expect("2. Allow for this session (Bash(rm -rf build))")
		h.expect("y allow once · s/a session · p project · n/d deny")
		h.typ("\x1b")
		time.Sleep(30 * time.Millisecond)
		synctest.Wait()
		h.expect("Allow Bash?") // Escape does nothing here
		h.typ("\x1b[B\x1b[B\r")
		if ans := <-ch; ans != agent.AllowProject {
			t.Fatalf("answer %v", ans)
		}
		h.expectNot("Allow Bash?")
		for key, want := range map[string]agent.Answer{"y": agent.AllowOnce, "a": agent.AllowSession, "d": agent.DenyOnce} {
			ch := ask()
			h.typ(key)
			if ans := <-ch; ans != want {
				t.Fatalf("%s: answer %v", key, ans)
			}
		}
		// A withdrawn question (the turn was aborted) closes the screen.
		ctx, cancel := context.WithCancel(context.Background())
		go h.app.AskPermission(ctx, agent.PermissionRequest{Tool: "Write"})
		synctest.Wait()
		h.expect("Allow Write?")
		cancel()
		synctest.Wait()
		h.expectNot("Allow Write?")
	})
}

// askAsync puts a permission question to the UI from another goroutine
// and returns where its answer arrives.
func (h *harness) askAsync(req agent.PermissionRequest) chan agent.Answer {
	ch := make(chan agent.Answer, 1)
	go func() {
		ans, _ := h.app.AskPermission(context.Background(), req)
		ch <- ans
	}()
	synctest.Wait()
	return ch
}

// TestEscalationPrompt: a command that asks to leave the sandbox is
// answered once or not at all; the keys that would remember an answer do
// nothing (docs/sandbox.md, "Escalation").
func TestEscalationPrompt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 80, 16, Options{})
		ask := func() chan agent.Answer {
			return h.askAsync(agent.PermissionRequest{Tool: "Bash",
				Args:   json.RawMessage(`{"command":"curl https://example.com"}`),
				Target: tools.Target{Kind: tools.TargetCommand, Value: "curl https://example.com", Escalation: "network", Justification: "download the \x1b[31mfile"},
				Reason: "the command asks to run outside the sandbox for network access: download the \x1b[31mfile"})
		}
		ch := ask()
		h.expect("Run Bash outside the sandbox?")
		h.expect("for network access: download the")
		h.expect("1. Allow once, for this command only")
		h.expect("2. Deny")
		h.expectNot("Allow for this session")
		h.expect("y allow once · n/d deny")
		h.typ("s")
		h.typ("p")
		synctest.Wait()
		h.expect("Run Bash outside the sandbox?") // neither key answers
		h.typ("\x1b[B\r")
		if ans := <-ch; ans != agent.DenyOnce {
			t.Fatalf("answer %v", ans)
		}
		ch = ask()
		h.typ("y")
		if ans := <-ch; ans != agent.AllowOnce {
			t.Fatalf("answer %v", ans)
		}
	})
}

func TestAutocompleteAndCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 70, 20, Options{})
		h.typ("/")
		h.expect("/mcp status")
		h.expect("/keybindings")
		h.expect("Tab complete")
		h.typ("mc\t")
		h.expect("› /mcp")
		h.typ(" st\r")
		h.expect("github\tapproved"[:6])
		h.mu.Lock()
		got := fmt.Sprint(h.commands)
		h.mu.Unlock()
		if got != "[[/mcp status]]" {
			t.Fatalf("commands %s", got)
		}
		h.typ("/mcp ap\r") // execute a command that needs an argument: accept it
		h.expect("› /mcp approve")
		h.typ("\r")
		h.expect("Usage: /mcp approve SERVER")
		h.typ("/nope\r")
		h.expect("Unknown command /nope")
		// The instruction-file commands are in the menu and run through
		// the session's command runner.
		h.typ("/mem")
		h.expect("/memory reload")
		h.expect("read the instruction files again")
		h.typ("\x15/con")
		h.expect("what the context is made of")
		h.typ("\x15/in")
		h.expect("write or improve AGENTS.md")
		h.typ("\x15")
		h.typ("/he\x1b")
		time.Sleep(30 * time.Millisecond)
		synctest.Wait()
		h.expectNot("list the commands") // closed
		h.typ("\x15/ex\r")
		<-h.done
		if h.code != ExitOK {
			t.Fatalf("exit %d", h.code)
		}
	})
}

func TestLiveKeybindings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 70, 12, Options{})
		km, problems := keys.ParseFile([]byte(`{"version": 1, "bindings": {"chat-input": {"submit": "ctrl+s", "history-previous": null}}}`))
		if km == nil {
			t.Fatal(problems)
		}
		h.updates <- keymap.Update{Keymap: km}
		synctest.Wait()
		h.expect("Ctrl+S send")
		h.expectNot("history")
		h.typ("hi\r")
		if sub, _, _ := h.sess.get(); len(sub) != 0 {
			t.Fatalf("enter still submits: %q", sub)
		}
		h.typ("\x13") // ctrl+s
		if sub, _, _ := h.sess.get(); len(sub) != 1 || sub[0] != "hi" {
			t.Fatalf("submitted %q", sub)
		}
		// An invalid file keeps the bindings and shows its problems once.
		h.updates <- keymap.Update{Keymap: km, Notices: []string{"/home/u/.agent/keybindings.json: $.bindings.chat-input.submit: bad key"}}
		synctest.Wait()
		h.expect("keybindings.json: $.bindings.chat-input.submit: bad")
		h.expect("Ctrl+S send")
	})
}

func TestResize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		resize := make(chan struct{}, 1)
		h := start(t, 40, 10, Options{Resize: resize})
		h.emit(agent.Event{Kind: agent.EventTurnStart, Turn: "s/1", Text: "a long prompt that wraps in a narrow window"})
		h.expect("› a long prompt that wraps in a narrow")
		h.term.resize(80, 12)
		resize <- struct{}{}
		synctest.Wait()
		h.expect("› a long prompt that wraps in a narrow window")
	})
}

func TestConfirmAndTextPrompt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		term := newFakeTerm(60, 10)
		a := New(Options{Terminal: term})
		defer a.Close()
		res := make(chan bool)
		go func() {
			ok, _ := a.Confirm(context.Background(), "Trust this workspace?", "/w: its settings can define MCP servers.")
			res <- ok
		}()
		synctest.Wait()
		if s := term.screen(); !strings.Contains(s, "Trust this workspace?") || !strings.Contains(s, "Yes    No") {
			t.Fatalf("confirm screen:\n%s", s)
		}
		term.feed("y")
		if !<-res {
			t.Fatal("y did not confirm")
		}
		go func() {
			ok, _ := a.Confirm(context.Background(), "Again?", "q")
			res <- ok
		}()
		synctest.Wait()
		term.feed("\x1b[C\r") // right toggles to Yes… then Enter
		if !<-res {
			t.Fatal("right+enter")
		}
		type tr struct {
			v  string
			ok bool
		}
		tres := make(chan tr)
		go func() {
			v, ok, _ := a.AskText(context.Background(), "Paste the address", true)
			tres <- tr{v, ok}
		}()
		synctest.Wait()
		term.feed("secret")
		synctest.Wait()
		if s := term.screen(); strings.Contains(s, "secret") || !strings.Contains(s, "› ••••••") {
			t.Fatalf("masked prompt:\n%s", s)
		}
		term.feed("\x7f\r")
		if r := <-tres; r.v != "secre" || !r.ok {
			t.Fatalf("text %+v", r)
		}
	})
}

// TestMultiLineEntry: once the composer holds several lines it is the
// text-input context (docs/reference/keybindings.md, "Contexts"): up and
// down move between the lines, and leave the text for the history only past
// its first or last line; enter submits the whole text.
func TestMultiLineEntry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 60, 12, Options{})
		h.typ("\x1b[200~abc\r\ndefgh\r\nij\x1b[201~")
		h.expect("  ij")
		h.typ("\x1b[AX")       // up: line 2, column 2
		h.typ("\x1b[AY")       // up: line 1, its end
		h.typ("\x1b[B\x1b[BZ") // down twice: line 3, its end
		h.typ("\r")
		sub, _, _ := h.sess.get()
		if len(sub) != 1 || sub[0] != "abcY\ndeXfgh\nijZ" {
			t.Fatalf("submitted %q", sub)
		}
		// A one-line composer browses the history with up as before.
		h.typ("\x1b[A")
		h.expect("› abcY")
	})
}

// TestContextAndCompaction: the status line shows how full the context is
// once the window is known; a compaction shows its progress, then one
// line; a failed /compact is said once (docs/reference/runtime.md,
// "Context management").
func TestContextAndCompaction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 100, 16, Options{})
		h.expect("Enter send")
		h.emit(agent.Event{Kind: agent.EventContext, Context: &agent.ContextUse{Tokens: 24000, Window: 200000}})
		h.expect("ctx 12% of 200k")
		h.emit(agent.Event{Kind: agent.EventContext, Context: &agent.ContextUse{Tokens: 30000, Window: 48000, Inferred: true}})
		h.expect("ctx 62% of ~48k")
		h.emit(agent.Event{Kind: agent.EventTurnStart, Turn: "s/1", Text: "go"},
			agent.Event{Kind: agent.EventCompactStart, Turn: "s/1", Compact: &agent.CompactInfo{Trigger: "auto", TokensBefore: 182000}})
		h.expect("Compacting the conversation…")
		h.expect("compacting")
		h.emit(agent.Event{Kind: agent.EventCompact, Turn: "s/1", Compact: &agent.CompactInfo{Trigger: "auto", TokensBefore: 182000, TokensAfter: 31000}},
			agent.Event{Kind: agent.EventNotice, Turn: "s/1", Text: "a notice for the user"},
			agent.Event{Kind: agent.EventComplete, Turn: "s/1", Result: &agent.TurnResult{Status: agent.StatusComplete}})
		h.expect("Context compacted: 182k → 31k tokens")
		h.expect("a notice for the user")
		h.expectNot("Compacting the conversation…")
		fail := fmt.Errorf("%w: the summary request failed", agent.ErrCompactFailed)
		h.emit(agent.Event{Kind: agent.EventTurnStart, Turn: "s/2", Text: "/compact"},
			agent.Event{Kind: agent.EventCompactStart, Turn: "s/2", Compact: &agent.CompactInfo{Trigger: "manual"}},
			agent.Event{Kind: agent.EventCompact, Turn: "s/2", Compact: &agent.CompactInfo{Trigger: "manual", Err: errors.New("the summary request failed")}},
			agent.Event{Kind: agent.EventError, Turn: "s/2", Err: fail, Result: &agent.TurnResult{Status: agent.StatusError, Err: fail}})
		h.expect("Compaction failed: the summary request failed")
		h.expectNot("The turn failed")
	})
}

// TestSubagentBlock: a running subagent's calls show inside its Agent
// call's block, which collapses to the answer when it ends.
func TestSubagentBlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 100, 20, Options{})
		h.expect("Enter send")
		info := &agent.AgentInfo{ID: "s-a1", Type: "Explore", Description: "find the parser", CallID: "c1"}
		h.emit(agent.Event{Kind: agent.EventTurnStart, Turn: "s/1", Text: "go"},
			agent.Event{Kind: agent.EventToolStart, Turn: "s/1", Tool: &agent.ToolEvent{CallID: "c1", Name: "Agent", Args: json.RawMessage(`{"description":"find the parser"}`)}},
			agent.Event{Kind: agent.EventAgentStart, Turn: "s/1", Agent: info},
			agent.Event{Kind: agent.EventToolStart, Turn: "s/1", Agent: info, Tool: &agent.ToolEvent{CallID: "k1", Name: "Grep", Args: json.RawMessage(`{"pattern":"func Parse"}`)}})
		h.expect("agent Explore: find the parser")
		h.expect("⚙ Grep(pattern: func Parse)")
		h.emit(agent.Event{Kind: agent.EventAgentEnd, Turn: "s/1", Agent: info, Text: "(agent s-a1: 1 tool calls, 900 tokens, 1.2 s)"},
			agent.Event{Kind: agent.EventToolEnd, Turn: "s/1", Tool: &agent.ToolEvent{CallID: "c1", Name: "Agent", Result: &tools.Result{Content: "It is in parse.go.\n\n(agent s-a1: 1 tool calls, 900 tokens, 1.2 s)"}}})
		h.expect("It is in parse.go.")
		h.expectNot("Grep(pattern")
	})
}
