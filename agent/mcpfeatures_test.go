package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"agent/agent/tools"
	"agent/internal/elicit"
	"agent/internal/fakemodel"
)

// The fuller MCP server (mcpecho with MCPECHO_FEATURES=1) through a
// workspace session: resources, prompts, elicitation, progress, roots,
// logging and list_changed (docs/reference/mcp.md).

func featureSetup(t *testing.T, env map[string]string, replies ...fakemodel.Reply) *mcpSetup {
	t.Helper()
	e := map[string]string{"MCPECHO_FEATURES": "1"}
	for k, v := range env {
		e[k] = v
	}
	return newMCPSetupEnv(t, e, `, "permissions": {"allow": ["echo__*"]}`, replies...)
}

func call(id, name, args string) fakemodel.Reply {
	return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: id, Name: name, Args: args}}}
}

// notices collects a session's notice events.
func notices(c *WorkspaceSession) func() []string {
	var mu sync.Mutex
	var out []string
	c.Session.Subscribe(func(ev Event) {
		if ev.Kind == EventNotice {
			mu.Lock()
			out = append(out, ev.Text)
			mu.Unlock()
		}
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), out...)
	}
}

// TestMCPResourceToolsAndMentions: the two read-only resource tools list
// and read; a prompt's @server:uri is attached to it (trailing punctuation
// left out), and /mcp counts what the server offers.
func TestMCPResourceToolsAndMentions(t *testing.T) {
	st := featureSetup(t, nil,
		call("c1", ListMCPResourcesToolName, `{}`),
		call("c2", ReadMCPResourceToolName, `{"server":"echo","uri":"mem://item/42"}`),
		fakemodel.Reply{Text: "listed"},
		fakemodel.Reply{Text: "seen"})
	st.opts.Headless = true
	c, err := Start(t.Context(), st.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := notices(c)
	if l := c.MCP.Status(); !strings.Contains(l[0].Reason, "connected, 8 tools, 1 resource, 1 resource template, 1 prompt, protocol 2025-11-25") {
		t.Fatalf("status %q", l[0].Reason)
	}
	res, err := c.Session.Run(t.Context(), "what resources are there?")
	if err != nil || res.Text != "listed" {
		t.Fatalf("%+v %v", res, err)
	}
	reqs := st.srv.Requests()
	if names := strings.Join(toolNames(reqs[0]), ","); !strings.Contains(names, ListMCPResourcesToolName) || !strings.Contains(names, ReadMCPResourceToolName) {
		t.Fatalf("offered %s", names)
	}
	if second := string(reqs[1]); !strings.Contains(second, `echo\tfile:///notes.txt\tnotes\ttext/plain\tShopping notes`) || !strings.Contains(second, "mem://item/{id}") {
		t.Fatalf("list result: %s", second)
	}
	if third := string(reqs[2]); !strings.Contains(third, "item 42") {
		t.Fatalf("read result: %s", third)
	}
	res, err = c.Session.Run(t.Context(), "look at @echo:file:///notes.txt.")
	if err != nil || res.Text != "seen" {
		t.Fatalf("%+v %v", res, err)
	}
	last := string(st.srv.Requests()[3])
	if !strings.Contains(last, `\u003cmcp-resource server=\"echo\" uri=\"file:///notes.txt\"\u003e\nremember the milk`) && !strings.Contains(last, `<mcp-resource server=\"echo\" uri=\"file:///notes.txt\">\nremember the milk`) {
		t.Fatalf("the mention was not attached: %s", last)
	}
	if !strings.Contains(strings.Join(got(), "\n"), "Attached @echo:file:///notes.txt") {
		t.Fatalf("notices %q", got())
	}
}

// TestMCPResourceTooLarge: a resource of 100 MB is refused as too large,
// said to the user and the model; the server stays connected.
func TestMCPResourceTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 MB through a pipe")
	}
	st := featureSetup(t, map[string]string{"MCPECHO_BIG": "100000000"},
		fakemodel.Reply{Text: "ok"},
		call("c1", "echo__echo", `{"text":"still here"}`),
		fakemodel.Reply{Text: "done"})
	c, err := Start(t.Context(), st.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := notices(c)
	start := time.Now()
	if _, err := c.Session.Run(t.Context(), "read @echo:mem://big"); err != nil {
		t.Fatal(err)
	}
	first := string(st.srv.Requests()[0])
	if !strings.Contains(first, "was not attached") || !strings.Contains(first, "larger than an MCP message may be here (16 MiB)") {
		t.Fatalf("the model was not told: %.2000s", first)
	}
	if !strings.Contains(strings.Join(got(), "\n"), "Not attached: reading mem://big") {
		t.Fatalf("notices %q", got())
	}
	t.Logf("refusing the 100 MB resource took %v", time.Since(start))
	if _, err := c.Session.Run(t.Context(), "again"); err != nil {
		t.Fatal(err)
	}
	if after := string(st.srv.Requests()[2]); !strings.Contains(after, "echo: still here") {
		t.Fatalf("the server did not stay connected: %s", after)
	}
}

type scriptedElicitor struct {
	mu   sync.Mutex
	reqs []elicit.Request
	ans  func(elicit.Request) elicit.Result
}

func (e *scriptedElicitor) Elicit(_ context.Context, r elicit.Request) (elicit.Result, error) {
	e.mu.Lock()
	e.reqs = append(e.reqs, r)
	e.mu.Unlock()
	return e.ans(r), nil
}

// TestMCPElicitation: a server's question goes to the session's Elicitor
// with the server's name and the parsed form; the answer goes back. A
// headless session declines, and says so.
func TestMCPElicitation(t *testing.T) {
	tests := []struct {
		name     string
		elicitor *scriptedElicitor
		tool     string
		want     string
		notice   string
	}{
		{name: "form accepted", tool: "echo__ask", want: `answer: {\"action\":\"accept\",\"content\":{\"color\":\"red\",\"name\":\"Ann\"}}`,
			elicitor: &scriptedElicitor{ans: func(r elicit.Request) elicit.Result {
				return elicit.Result{Action: elicit.Accept, Content: map[string]any{"name": "Ann", "color": "red"}}
			}}},
		{name: "form cancelled", tool: "echo__ask", want: `answer: {\"action\":\"cancel\"}`,
			elicitor: &scriptedElicitor{ans: func(elicit.Request) elicit.Result { return elicit.Result{Action: elicit.Cancel} }}},
		{name: "url declined", tool: "echo__askurl", want: `answer: {\"action\":\"decline\"}`,
			elicitor: &scriptedElicitor{ans: func(elicit.Request) elicit.Result { return elicit.Result{Action: elicit.Decline} }}},
		{name: "headless", tool: "echo__ask", want: `answer: {\"action\":\"decline\"}`, notice: "MCP server echo asked a question; declined: nobody can answer here."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := featureSetup(t, nil, call("c1", tc.tool, `{"text":"x"}`), fakemodel.Reply{Text: "done"})
			if tc.elicitor != nil {
				st.opts.Elicitor = tc.elicitor
			}
			var mu sync.Mutex
			var said []string
			st.opts.Notice = func(s string) { mu.Lock(); said = append(said, s); mu.Unlock() }
			c, err := Start(t.Context(), st.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Session.Run(t.Context(), "ask me"); err != nil {
				t.Fatal(err)
			}
			if second := string(st.srv.Requests()[1]); !strings.Contains(second, tc.want) {
				t.Fatalf("the server's answer: %s", second)
			}
			mu.Lock()
			defer mu.Unlock()
			if tc.notice != "" && !strings.Contains(strings.Join(said, "\n"), tc.notice) {
				t.Fatalf("notices %q", said)
			}
			if tc.elicitor == nil {
				return
			}
			r := tc.elicitor.reqs[0]
			if r.Server != "echo" {
				t.Fatalf("request %+v", r)
			}
			switch r.Mode {
			case elicit.ModeForm:
				// mcpecho writes the properties in name order.
				f := r.Form.Fields
				if r.Message != "Which colour?" || len(f) != 3 || f[0].Default != "blue" || !f[1].Required || !f[2].Secret {
					t.Fatalf("form %+v", r.Form)
				}
			case elicit.ModeURL:
				if r.URL != "https://example.com/connect?e=1" || r.ID != "e1" {
					t.Fatalf("url request %+v", r)
				}
			}
		})
	}
}

// TestMCPProgressAndRoots: a call's progress reaches the event stream as
// EventToolProgress for that call; the server's roots/list gets the
// workspace.
func TestMCPProgressAndRoots(t *testing.T) {
	st := featureSetup(t, nil,
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "echo__progress", Args: `{"text":"x"}`}, {ID: "c2", Name: "echo__roots", Args: `{"text":"x"}`}}},
		fakemodel.Reply{Text: "done"})
	c, err := Start(t.Context(), st.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mu sync.Mutex
	var progress []string
	c.Session.Subscribe(func(ev Event) {
		if ev.Kind == EventToolProgress && ev.Tool.CallID == "c1" {
			mu.Lock()
			progress = append(progress, ev.Tool.Progress)
			mu.Unlock()
		}
	})
	if _, err := c.Session.Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(progress, "|") != "1/3 step 1|2/3 step 2|3/3 step 3" {
		t.Fatalf("progress %q", progress)
	}
	if second := string(st.srv.Requests()[1]); !strings.Contains(second, `file://`+c.Workspace) {
		t.Fatalf("roots: %s", second)
	}
}

// TestMCPListChangedBetweenTurnsAndLog: a tool the server adds during a
// turn is offered from the next turn; its log line goes to the debug log,
// not the transcript or the notices.
func TestMCPListChangedBetweenTurnsAndLog(t *testing.T) {
	st := featureSetup(t, nil,
		call("c1", "echo__grow", `{"text":"x"}`),
		fakemodel.Reply{Text: "grown"},
		fakemodel.Reply{Text: "next"})
	st.opts.Overrides.NoTranscript = false
	c, err := Start(t.Context(), st.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := notices(c)
	if _, err := c.Session.Run(t.Context(), "grow"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(strings.Join(toolNamesOf(c), ","), "echo__extra") {
		if time.Now().After(deadline) {
			t.Fatal("the new tool never arrived")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := c.Session.Run(t.Context(), "again"); err != nil {
		t.Fatal(err)
	}
	reqs := st.srv.Requests()
	if strings.Contains(strings.Join(toolNames(reqs[1]), ","), "echo__extra") {
		t.Fatal("the tool list changed within the turn")
	}
	if !strings.Contains(strings.Join(toolNames(reqs[2]), ","), "echo__extra") {
		t.Fatalf("the next turn lacks the new tool: %q", toolNames(reqs[2]))
	}
	c.Close()
	log, err := os.ReadFile(DebugLogPath(st.home, c.Session.ID()))
	if err != nil || !strings.Contains(string(log), `mcp:echo info mcpecho: \"grew a tool\"`) {
		t.Fatalf("debug log %q, %v", log, err)
	}
	for _, n := range got() {
		if strings.Contains(n, "grew a tool") {
			t.Fatalf("a log message reached the notices: %q", n)
		}
	}
	tr, _ := os.ReadFile(TranscriptPath(st.home, c.Session.ID()))
	if strings.Contains(string(tr), "grew a tool") {
		t.Fatal("a log message reached the transcript")
	}
}

func toolNamesOf(c *WorkspaceSession) []string {
	var out []string
	for _, s := range c.Session.ToolSpecs() {
		out = append(out, s.Name)
	}
	return out
}

// TestMCPPromptCommands: a server's prompts are commands with argument
// hints; words fill the arguments by position (the last takes the rest)
// or by name; a missing required one is a usage error.
func TestMCPPromptCommands(t *testing.T) {
	st := featureSetup(t, nil)
	c, err := Start(t.Context(), st.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cmds := c.MCPPromptCommands()
	if len(cmds) != 1 || cmds[0].Name != "/mcp__echo__review" || cmds[0].ArgHint != "<file> [focus]" || cmds[0].Description != "(MCP echo) Review a file" {
		t.Fatalf("commands %+v", cmds)
	}
	tests := []struct {
		name  string
		words []string
		want  string
		usage bool
	}{
		{name: "positional, the last takes the rest", words: []string{"/mcp__echo__review", "a.go", "error", "handling"}, want: "Review a.go for error handling"},
		{name: "by name", words: []string{"/mcp__echo__review", "focus=speed", "file=b.go"}, want: "Review b.go for speed"},
		{name: "optional left out", words: []string{"/mcp__echo__review", "c.go"}, want: "Review c.go for "},
		{name: "missing required", words: []string{"/mcp__echo__review"}, usage: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := c.MCPPromptRequest(t.Context(), tc.words)
			if tc.usage {
				if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "<file> [focus]") {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil || req.Prompt != tc.want || req.Display != strings.Join(tc.words, " ") {
				t.Fatalf("request %+v, %v", req, err)
			}
		})
	}
	if _, err := c.MCPPromptRequest(t.Context(), []string{"/mcp__gone__x"}); err == nil || !IsMCPPromptCommand("/mcp__gone__x") {
		t.Fatalf("an unknown prompt: %v", err)
	}
}

// TestToolsChangeBetweenTurns: a group changed while a turn runs keeps its
// old tools until the turn ends.
func TestToolsChangeBetweenTurns(t *testing.T) {
	var h *harness
	changer := funcTool{name: "change", run: func() { h.sess.SetToolsBetweenTurns("g", []tools.Tool{funcTool{name: "added"}}) }}
	h = newHarness(t, SessionOptions{Tools: []tools.Tool{changer}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "change", Args: `{}`}}},
		fakemodel.Reply{Text: "first"},
		fakemodel.Reply{Text: "second"})
	run(t, h.sess, "one")
	run(t, h.sess, "two")
	reqs := h.srv.Requests()
	if strings.Contains(strings.Join(toolNames(reqs[1]), ","), "added") {
		t.Fatal("the list changed within the turn")
	}
	if !strings.Contains(strings.Join(toolNames(reqs[2]), ","), "added") {
		t.Fatal("the change did not apply after the turn")
	}
	// Without a running turn a change applies at once.
	h.sess.SetToolsBetweenTurns("g", nil)
	if strings.Contains(strings.Join(specNames(h.sess), ","), "added") {
		t.Fatal("an idle session kept the old group")
	}
}

func specNames(s *Session) []string {
	var out []string
	for _, sp := range s.ToolSpecs() {
		out = append(out, sp.Name)
	}
	return out
}

type funcTool struct {
	name string
	run  func()
}

func (f funcTool) Spec() tools.Spec {
	return tools.Spec{Name: f.name, Risk: tools.RiskInspect, Schema: json.RawMessage(`{"type":"object"}`)}
}
func (f funcTool) Target(json.RawMessage) (tools.Target, error) {
	return tools.Target{Kind: tools.TargetNone}, nil
}
func (f funcTool) Run(context.Context, json.RawMessage) tools.Result {
	if f.run != nil {
		f.run()
	}
	return tools.Result{Content: "ok"}
}
