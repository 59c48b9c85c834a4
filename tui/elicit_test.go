package tui

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"agent/agent"
	"agent/internal/elicit"
)

func form(t *testing.T, schema string) *elicit.Form {
	t.Helper()
	f, err := elicit.ParseSchema([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// ask puts a question to the app from another goroutine, as the MCP
// client does, and returns where its answer arrives.
func (h *harness) ask(ctx context.Context, req elicit.Request) chan elicit.Result {
	ch := make(chan elicit.Result, 1)
	go func() {
		res, _ := h.app.Elicit(ctx, req)
		ch <- res
	}()
	synctest.Wait()
	return ch
}

// escape sends a lone Escape (the decoder waits for more first).
func (h *harness) escape() {
	h.typ("\x1b")
	time.Sleep(30 * time.Millisecond)
	synctest.Wait()
}

const contact = `{"type":"object","properties":{
	"name":{"type":"string","title":"Your name","description":"As on your badge"},
	"age":{"type":"integer","minimum":0},
	"token":{"type":"string","format":"password"},
	"color":{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"b","title":"Blue"}],"default":"b"},
	"tags":{"type":"array","items":{"enum":["x","y","z"]},"minItems":1},
	"ok":{"type":"boolean","default":true}},
	"required":["name"]}`

// TestElicitFormAccepted: each field on its screen, a refused answer
// asked again with the reason, the secret masked, the review, the send.
func TestElicitFormAccepted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 80, 24, Options{})
		ch := h.ask(context.Background(), elicit.Request{Server: "kb", Mode: elicit.ModeForm, Message: "Tell us about you", Form: form(t, contact)})
		h.expect("MCP server kb asks")
		h.expect("Tell us about you")
		h.expect("Yes: answer (6 questions)")
		h.typ("y")
		h.expect("kb asks (1/6): Your name (required)")
		h.expect("As on your badge")
		h.typ("\r") // empty: required
		h.expect("Your name is required")
		h.typ("Ann\r")
		h.expect("kb asks (2/6): age")
		h.typ("-4\r")
		h.expect("age must be at least 0")
		h.expect("› -4") // the refused answer stays, to be corrected
		h.typ("\x7f\x7f41\r")
		h.expect("(3/6): token")
		h.typ("hunter2")
		h.expect("•••••••")
		h.expectNot("hunter2")
		h.typ("\r")
		h.expect("(4/6): color")
		h.expect("› Blue") // the default is selected
		h.typ("\x1b[A\r")  // up: Red
		h.expect("(5/6): tags")
		h.typ("\r") // none chosen: minItems 1
		h.expect("tags needs at least 1 choices")
		h.typ(" \x1b[B\x1b[B \r") // x and z
		h.expect("(6/6): ok")
		h.typ("n")
		h.expect("Send these answers to MCP server kb?")
		h.expect("Your name: Ann")
		h.expect("token: ••••••••")
		h.expect("color: Red")
		h.expect("tags: x, z")
		h.expectNot("hunter2")
		h.typ("\r")
		res := <-ch
		want := map[string]any{"name": "Ann", "age": int64(41), "token": "hunter2", "color": "r", "tags": []string{"x", "z"}, "ok": false}
		if res.Action != elicit.Accept || !reflect.DeepEqual(res.Content, want) {
			t.Fatalf("result %+v", res)
		}
		h.expectNot("Send these answers")
	})
}

// TestElicitDeclineAndCancel: No at the start declines; Escape on a field,
// Ctrl-C on a yes/no, and Escape on the review cancel; Change starts
// over with the answers kept.
func TestElicitDeclineAndCancel(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want elicit.Action
	}{
		{name: "no at the start", keys: []string{"n"}, want: elicit.Decline},
		{name: "escape on a text field", keys: []string{"y", "\x1b"}, want: elicit.Cancel},
		{name: "ctrl-c on the start", keys: []string{"\x03"}, want: elicit.Cancel},
		{name: "decline on the review", keys: []string{"y", "Bo\r", "\x1b[B\x1b[B\r"}, want: elicit.Decline},
		{name: "escape on the review", keys: []string{"y", "Bo\r", "\x1b"}, want: elicit.Cancel},
		{name: "change, then send", keys: []string{"y", "Bo\r", "\x1b[B\r", "\r", "\r"}, want: elicit.Accept},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t, 80, 20, Options{})
				ch := h.ask(context.Background(), elicit.Request{Server: "kb", Mode: elicit.ModeForm, Message: "Name?", Form: form(t, `{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]}`)})
				for _, k := range tc.keys {
					if k == "\x1b" {
						h.escape()
						continue
					}
					h.typ(k)
				}
				res := <-ch
				if res.Action != tc.want {
					t.Fatalf("action %s, want %s", res.Action, tc.want)
				}
				if tc.want == elicit.Accept && res.Content["n"] != "Bo" {
					t.Fatalf("content %v", res.Content)
				}
				if tc.want != elicit.Accept {
					h.expect(fmt.Sprintf("question: %sd", map[elicit.Action]string{elicit.Decline: "decline", elicit.Cancel: "cancelle"}[tc.want]))
				}
			})
		})
	}
}

// TestElicitURL: the URL shown in full with its host; opened only on yes;
// no declines.
func TestElicitURL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var opened []string
		hooks := Hooks{OpenURL: func(_ context.Context, u string) error {
			mu.Lock()
			opened = append(opened, u)
			mu.Unlock()
			return nil
		}}
		h := start(t, 90, 20, Options{Hooks: hooks})
		req := elicit.Request{Server: "pay", Mode: elicit.ModeURL, Message: "Confirm the payment", URL: "https://xn--pypal-4ve.example/confirm?id=7", ID: "e1"}
		ch := h.ask(context.Background(), req)
		h.expect("MCP server pay asks you to open a web page")
		h.expect("https://xn--pypal-4ve.example/confirm?id=7")
		h.expect("Site: xn--pypal-4ve.example (an internationalised name")
		h.typ("\r") // No is the default
		if res := <-ch; res.Action != elicit.Decline {
			t.Fatalf("result %+v", res)
		}
		mu.Lock()
		if len(opened) != 0 {
			t.Fatalf("opened %q without the user", opened)
		}
		mu.Unlock()
		ch = h.ask(context.Background(), req)
		h.typ("y")
		if res := <-ch; res.Action != elicit.Accept {
			t.Fatalf("result %+v", res)
		}
		synctest.Wait()
		mu.Lock()
		if len(opened) != 1 || opened[0] != req.URL {
			t.Fatalf("opened %q", opened)
		}
		mu.Unlock()
		// A host in raw Unicode (a Cyrillic а) is marked the same way.
		ch = h.ask(context.Background(), elicit.Request{Server: "pay", Mode: elicit.ModeURL, Message: "Again", URL: "https://\u0430pple.example/x", ID: "e2"})
		h.expect("Site: \u0430pple.example (an internationalised name")
		h.typ("\r")
		if res := <-ch; res.Action != elicit.Decline {
			t.Fatalf("result %+v", res)
		}
	})
}

// TestElicitQueueAndWithdraw: a second question waits for the first; a
// question whose server gave up leaves the screen.
func TestElicitQueueAndWithdraw(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 80, 20, Options{})
		bool1 := form(t, `{"type":"object","properties":{"ok":{"type":"boolean"}}}`)
		ctx, cancel := context.WithCancel(context.Background())
		first := h.ask(ctx, elicit.Request{Server: "one", Mode: elicit.ModeForm, Message: "First?", Form: bool1})
		second := h.ask(context.Background(), elicit.Request{Server: "two", Mode: elicit.ModeForm, Message: "Second?", Form: bool1})
		h.expect("First?")
		h.expectNot("Second?")
		cancel()
		if res := <-first; res.Action != elicit.Cancel {
			t.Fatalf("withdrawn: %+v", res)
		}
		synctest.Wait()
		h.expect("Second?")
		h.typ("y")
		h.typ("y")
		h.typ("\r")
		if res := <-second; res.Action != elicit.Accept || res.Content["ok"] != true {
			t.Fatalf("second: %+v", res)
		}
	})
}

func TestToolProgressOnItsBlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 80, 16, Options{})
		h.emit(agent.Event{Kind: agent.EventTurnStart, Turn: "t1", Text: "go"},
			agent.Event{Kind: agent.EventToolStart, Turn: "t1", Tool: &agent.ToolEvent{CallID: "c1", Name: "kb__index"}},
			agent.Event{Kind: agent.EventToolProgress, Turn: "t1", Tool: &agent.ToolEvent{CallID: "c1", Name: "kb__index", Progress: "2/10 scanning\x1b[31m"}})
		h.expect("⎿ running: 2/10 scanning[31m")
		h.emit(agent.Event{Kind: agent.EventToolProgress, Turn: "t1", Tool: &agent.ToolEvent{CallID: "c9", Progress: "someone else's"}})
		h.expectNot("someone else's")
		h.emit(agent.Event{Kind: agent.EventToolEnd, Turn: "t1", Tool: &agent.ToolEvent{CallID: "c1", Name: "kb__index", Result: nil}},
			agent.Event{Kind: agent.EventToolProgress, Turn: "t1", Tool: &agent.ToolEvent{CallID: "c1", Progress: "late"}})
		h.expectNot("running: 2/10")
		h.expectNot("late")
	})
}

// TestMentionsAndPromptCommands: @ completes the connected servers'
// resources; the MCP prompts are in the slash menu with their arguments
// and run through the command runner.
func TestMentionsAndPromptCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hooks := Hooks{
			MCPMentions: func() []Mention {
				return []Mention{{Text: "@kb:file:///notes.txt", Help: "notes"}, {Text: "@kb:mem://item/{id}", Help: "item"}, {Text: "@wiki:page/home", Help: "home"}}
			},
			MCPPrompts: func() []agent.PromptCommand {
				return []agent.PromptCommand{{Name: "/mcp__kb__review", Description: "(MCP kb) Review a file", ArgHint: "<file> [focus]"}}
			},
		}
		h := start(t, 80, 20, Options{Hooks: hooks})
		h.typ("look at @k")
		h.expect("@kb:file:///notes.txt")
		h.expect("@kb:mem://item/{id}")
		h.expectNot("@wiki:page/home")
		h.typ("\t")
		h.expect("› look at @kb:file:///notes.txt")
		h.typ("and @w\r") // Enter takes the mention, it does not send
		h.expect("› look at @kb:file:///notes.txt and @wiki:page/home")
		h.typ("\r")
		sub, _, _ := h.sess.get()
		if len(sub) != 1 || sub[0] != "look at @kb:file:///notes.txt and @wiki:page/home " {
			t.Fatalf("submitted %q", sub)
		}
		h.typ("/mcp__")
		h.expect("/mcp__kb__review")
		h.expect("<file> [focus]  (MCP kb) Review a file")
		h.typ("\r") // needs arguments: accepted, not run
		h.expect("› /mcp__kb__review")
		h.typ("a.go\r")
		synctest.Wait()
		h.mu.Lock()
		got := fmt.Sprint(h.commands)
		h.mu.Unlock()
		if !strings.Contains(got, "[/mcp__kb__review a.go]") {
			t.Fatalf("commands %s", got)
		}
	})
}

// TestQuestionsWhileRunning: Confirm and AskText from a command goroutine
// while the session runs (a sign-in's questions) go to the running loop;
// Ctrl-C answers a posted confirm with no.
func TestQuestionsWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 80, 16, Options{})
		text := make(chan string, 1)
		go func() {
			v, ok, err := h.app.AskText(context.Background(), "Paste the full address", true)
			text <- fmt.Sprintf("%s %v %v", v, ok, err)
		}()
		synctest.Wait()
		h.expect("Paste the full address")
		h.typ("secret-value\r")
		if got := <-text; got != "secret-value true <nil>" {
			t.Fatalf("AskText = %s", got)
		}
		h.expectNot("Paste the full address")
		yes := make(chan bool, 1)
		go func() {
			y, _ := h.app.Confirm(context.Background(), "MCP sign-in", "Open the browser?")
			yes <- y
		}()
		synctest.Wait()
		h.expect("Open the browser?")
		h.typ("y")
		if !<-yes {
			t.Fatal("yes was not taken")
		}
		go func() {
			y, _ := h.app.Confirm(context.Background(), "MCP sign-in", "Open it now?")
			yes <- y
		}()
		synctest.Wait()
		h.typ("\x03")
		if <-yes {
			t.Fatal("Ctrl-C answered yes")
		}
		h.expectNot("Open it now?")
	})
}

// TestElicitSecretNumber: writeOnly makes any field secret; a secret
// number with a default, or answered and changed, is edited from its
// value (it once crashed the UI, which took a secret for text).
func TestElicitSecretNumber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, 80, 24, Options{})
		schema := `{"type":"object","properties":{"pin":{"type":"integer","writeOnly":true,"default":1234},"rate":{"type":"number","writeOnly":true}}}`
		ch := h.ask(context.Background(), elicit.Request{Server: "kb", Mode: elicit.ModeForm, Message: "Secrets", Form: form(t, schema)})
		h.expect("Yes: answer (2 questions)")
		h.typ("y")
		h.expect("(1/2): pin")
		h.expectNot("1234")
		h.typ("\r")
		h.expect("(2/2): rate")
		h.typ("1.5\r")
		h.expect("Send these answers to MCP server kb?")
		h.expectNot("1.5")
		h.typ("\x1b[B\r") // Change the answers
		h.expect("(1/2): pin")
		h.typ("\x7f5\r")
		h.expect("(2/2): rate")
		h.typ("\r")
		h.expect("Send these answers")
		h.typ("\r")
		res := <-ch
		want := map[string]any{"pin": int64(1235), "rate": 1.5}
		if res.Action != elicit.Accept || !reflect.DeepEqual(res.Content, want) {
			t.Fatalf("result %+v", res)
		}
	})
}

// TestElicitWaitsForAnotherDialog: a question that comes while another
// dialog is open waits for it instead of replacing it, and a question
// whose screen another dialog took comes back where it was.
func TestElicitWaitsForAnotherDialog(t *testing.T) {
	s := newState(nil, time.Now)
	other := &textPrompt{title: "Model slug"}
	s.textPrompt = other
	r := &elicitRun{req: elicit.Request{Server: "kb", Mode: elicit.ModeForm, Message: "Q", Form: form(t, contact)},
		ctx: context.Background(), reply: make(chan elicit.Result, 1)}
	s.askElicit(r)
	if s.textPrompt != other || s.confirm != nil || r.confirm != nil {
		t.Fatal("the question replaced the open dialog")
	}
	s.textPrompt = nil // the dialog closed
	s.resumeElicit()
	if r.confirm == nil || s.confirm != r.confirm {
		t.Fatal("the question did not come once the dialog closed")
	}
	signIn := &confirmPrompt{title: "Sign in?"}
	s.confirm = signIn // another dialog takes the screen
	s.resumeElicit()
	if s.confirm != signIn {
		t.Fatal("the question took the screen back from an open dialog")
	}
	s.confirm = nil
	s.resumeElicit()
	if s.confirm != r.confirm {
		t.Fatal("the question did not come back")
	}
}
