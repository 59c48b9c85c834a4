package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"agent/agent/extend"
	"agent/agent/tools"
	"agent/config"
)

// routeModel answers each chat request with what answer returns for it,
// in memory (a transport for Start's HTTP client). It records requests.
type routeModel struct {
	mu     sync.Mutex
	reqs   []chatReq
	answer func(req chatReq) string // an SSE body
}

func (m *routeModel) RoundTrip(hr *http.Request) (*http.Response, error) {
	if hr.URL.Path != "/v1/chat/completions" {
		return &http.Response{StatusCode: 404, Body: io.NopCloser(strings.NewReader("")), Request: hr}, nil
	}
	body, _ := io.ReadAll(hr.Body)
	var req chatReq
	json.Unmarshal(body, &req)
	req.bytes = len(body)
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	sse := m.answer(req) + "data: [DONE]\n\n"
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(sse)), Request: hr}, nil
}

func (m *routeModel) requests() []chatReq {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]chatReq(nil), m.reqs...)
}

// child reports whether a request is a subagent's.
func (r chatReq) child() bool { return strings.Contains(r.text(0), "You are a subagent") }

// lastText is the text of the request's last message.
func (r chatReq) lastText() string { return r.text(len(r.Messages) - 1) }

// toolNames are the tools a request offers.
func (r chatReq) toolNames() string {
	var out []string
	for _, t := range r.Tools {
		if f, ok := t["function"].(map[string]any); ok {
			out = append(out, fmt.Sprint(f["name"]))
		}
	}
	return strings.Join(out, ",")
}

func sseCallArgs(id, name, args string) string {
	b, _ := json.Marshal(args)
	return fmt.Sprintf("data: {\"id\":\"1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":%q,\"type\":\"function\",\"function\":{\"name\":%q,\"arguments\":%s}}]}}]}\n\n", id, name, b) +
		"data: {\"id\":\"1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
}

// sseCalls is one answer with several calls.
func sseCalls(calls ...[3]string) string {
	var parts []string
	for i, c := range calls {
		b, _ := json.Marshal(c[2])
		parts = append(parts, fmt.Sprintf(`{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}`, i, c[0], c[1], b))
	}
	return fmt.Sprintf("data: {\"id\":\"1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[%s]}}]}\n\n", strings.Join(parts, ",")) +
		"data: {\"id\":\"1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
}

// startWith starts a workspace session whose model is m, with settings
// and the files setup writes first.
func startWith(t *testing.T, m *routeModel, settings string, opts StartOptions, setup ...func(home, ws string)) (*WorkspaceSession, string, string) {
	t.Helper()
	home, ws := startSandbox(t, true)
	for _, f := range setup {
		f(home, ws)
	}
	if settings != "" {
		os.MkdirAll(filepath.Join(home, ".agent"), 0o700)
		os.WriteFile(filepath.Join(home, ".agent", "settings.json"), []byte(settings), 0o600)
	}
	opts.Home, opts.Workspace, opts.LookupEnv = home, ws, lookupNone
	opts.Provider, opts.BaseURL, opts.Model = "local", "http://model.test/v1", "m"
	opts.Overrides.HTTPClient = &http.Client{Transport: m}
	c, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, home, ws
}

func runTurnOK(t *testing.T, c *WorkspaceSession, req TurnRequest) TurnResult {
	t.Helper()
	turn, err := c.Session.Submit(req)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := turn.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The Agent tool runs Explore: its own conversation, the read-only tools,
// no instruction files; the parent reads its report and the figures line.
func TestAgentToolRunsExplore(t *testing.T) {
	m := &routeModel{}
	m.answer = func(r chatReq) string {
		switch {
		case r.child():
			return sseText("Found it in src/x.go:12.")
		case strings.Contains(r.lastText(), "agent "):
			return sseText("done")
		case len(r.Messages) > 0 && r.Messages[len(r.Messages)-1].Role == "tool":
			return sseText("done")
		}
		return sseCallArgs("c1", "Agent", `{"description":"find the parser","prompt":"Where is the parser?","subagent_type":"Explore"}`)
	}
	c, home, ws := startWith(t, m, "", StartOptions{})
	os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte("PROJECT RULES"), 0o644)
	c.Instructions.Reload()
	res := runTurnOK(t, c, TurnRequest{Prompt: "find the parser"})
	if res.Status != StatusComplete {
		t.Fatalf("%+v", res)
	}
	var child, parent2 chatReq
	for _, r := range m.requests() {
		if r.child() {
			child = r
		} else if len(r.Messages) > 0 && r.Messages[len(r.Messages)-1].Role == "tool" {
			parent2 = r
		}
	}
	if got := child.toolNames(); got != "Read,Glob,Grep,WebFetch" {
		t.Errorf("Explore's tools %q", got)
	}
	body, _ := json.Marshal(child.Messages)
	if strings.Contains(string(body), "PROJECT RULES") {
		t.Error("Explore got the instruction files")
	}
	if !strings.Contains(child.lastText(), "Where is the parser?") {
		t.Errorf("child prompt %q", child.lastText())
	}
	tool, _ := json.Marshal(parent2.Messages[len(parent2.Messages)-1])
	if !strings.Contains(string(tool), "Found it in src/x.go:12.") || !strings.Contains(string(tool), "tool calls") {
		t.Errorf("the parent read %s", tool)
	}
	files, _ := filepath.Glob(filepath.Join(SessionsDir(home), c.Session.ID()+".agents", "*.jsonl"))
	if len(files) != 1 {
		t.Errorf("child transcripts %v", files)
	}
	if ts, _ := ListTranscripts(home); len(ts) != 1 {
		t.Errorf("the child's transcript is listed as a session: %v", ts)
	}
}

// A child's permissions only narrow: a tool a deny rule names stays
// denied; a definition cannot raise the mode; a child starts no agents.
func TestSubagentPermissionsNarrow(t *testing.T) {
	m := &routeModel{}
	var childTools atomic.Value
	m.answer = func(r chatReq) string {
		switch {
		case r.child() && len(r.Messages) > 0 && r.Messages[len(r.Messages)-1].Role == "tool":
			return sseText("child done")
		case r.child():
			childTools.Store(r.toolNames())
			return sseCallArgs("k1", "Write", `{"file_path":"out.txt","content":"x"}`)
		case r.Messages[len(r.Messages)-1].Role == "tool":
			return sseText("done")
		}
		return sseCallArgs("c1", "Agent", `{"description":"write","prompt":"write out.txt","subagent_type":"writer"}`)
	}
	settings := `{"permissions": {"deny": ["Bash"]}}`
	c, _, ws := startWith(t, m, settings, StartOptions{PermissionMode: "plan"}, func(home, ws string) {
		writeFile(t, filepath.Join(ws, ".agent", "agents", "writer.md"), "---\nname: writer\ndescription: writes files\npermissionMode: bypassPermissions\n---\nWrite.\n")
	})
	runTurnOK(t, c, TurnRequest{Prompt: "go"})
	if _, err := os.Stat(filepath.Join(ws, "out.txt")); err == nil {
		t.Error("a plan-mode parent's child wrote a file")
	}
	got, _ := childTools.Load().(string)
	if got == "" || !strings.Contains(got, "Write") || strings.Contains(got, "Bash") || strings.Contains(got, "Agent") {
		t.Errorf("the child was offered %s", got)
	}
}

// Six subagents asked for at once run four at a time.
func TestFourChildrenAtATime(t *testing.T) {
	m := &routeModel{}
	var running, most atomic.Int32
	m.answer = func(r chatReq) string {
		switch {
		case r.child():
			n := running.Add(1)
			for {
				old := most.Load()
				if n <= old || most.CompareAndSwap(old, n) {
					break
				}
			}
			time.Sleep(150 * time.Millisecond)
			running.Add(-1)
			return sseText("part done")
		case r.Messages[len(r.Messages)-1].Role == "tool":
			return sseText("all done")
		}
		var calls [][3]string
		for i := range 6 {
			calls = append(calls, [3]string{fmt.Sprint("c", i), "Agent", fmt.Sprintf(`{"description":"part %d","prompt":"do part %d"}`, i, i)})
		}
		return sseCalls(calls...)
	}
	c, _, _ := startWith(t, m, "", StartOptions{})
	start := time.Now()
	res := runTurnOK(t, c, TurnRequest{Prompt: "do six parts"})
	if res.Status != StatusComplete || most.Load() != maxChildren {
		t.Fatalf("%+v; at most %d at once", res, most.Load())
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("six children took %s", d)
	}
}

// A definition asking for tools the session lacks is refused at spawn,
// naming them; an unknown type names the known ones.
func TestSubagentSpawnRefusals(t *testing.T) {
	m := &routeModel{}
	m.answer = func(r chatReq) string {
		if r.Messages[len(r.Messages)-1].Role == "tool" {
			return sseText("ok")
		}
		if strings.Contains(r.lastText(), "unknown") {
			return sseCallArgs("c1", "Agent", `{"description":"x","prompt":"y","subagent_type":"nosuch"}`)
		}
		return sseCallArgs("c1", "Agent", `{"description":"x","prompt":"y","subagent_type":"deployer"}`)
	}
	c, _, _ := startWith(t, m, "", StartOptions{Agents: []*extend.Agent{{Name: "deployer", Description: "deploys", Prompt: "Deploy.", HasTools: true, Tools: []string{"Read", "Kubectl", "Helm"}, Scope: "flag", File: "--agents"}}})
	runTurnOK(t, c, TurnRequest{Prompt: "deploy"})
	runTurnOK(t, c, TurnRequest{Prompt: "unknown"})
	var results []string
	for _, r := range m.requests() {
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
			b, _ := json.Marshal(last)
			results = append(results, string(b))
		}
	}
	if len(results) != 2 || !strings.Contains(results[0], "Kubectl, Helm") || !strings.Contains(results[1], "general-purpose") {
		t.Errorf("results %v", results)
	}
}

// A custom command: its arguments, @path and !`command` (allowed by its
// allowed-tools), and its allowed-tools pre-approve the turn's calls.
func TestCustomCommandTurn(t *testing.T) {
	m := &routeModel{}
	m.answer = func(r chatReq) string {
		if r.Messages[len(r.Messages)-1].Role == "tool" {
			return sseText("committed")
		}
		return sseCallArgs("c1", "Bash", `{"command":"echo committing > done.txt"}`)
	}
	c, _, ws := startWith(t, m, "", StartOptions{}, func(home, ws string) {
		writeFile(t, filepath.Join(ws, "notes.md"), "NOTES CONTENT")
		writeFile(t, filepath.Join(ws, ".agent", "commands", "commit.md"), "---\nallowed-tools: Bash(echo:*)\ndescription: Commit\n---\nCommit: $ARGUMENTS ($1)\nRead @notes.md\nBranch: !`echo main-branch`\n")
	})
	req, ok, err := c.CommandTurn(context.Background(), "/commit", "fix parser")
	if !ok || err != nil {
		t.Fatalf("%v %v", ok, err)
	}
	for _, want := range []string{"Commit: fix parser (fix)", "NOTES CONTENT", "Branch: main-branch"} {
		if !strings.Contains(req.Prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, req.Prompt)
		}
	}
	// Headless, Bash would be denied; the command's allowed-tools allow it.
	res := runTurnOK(t, c, req)
	if res.Status != StatusComplete {
		t.Fatalf("%+v", res)
	}
	if _, err := os.Stat(filepath.Join(ws, "done.txt")); err != nil {
		t.Error("the command's allowed Bash call did not run")
	}
	if _, ok, _ := c.CommandTurn(context.Background(), "/nosuch", ""); ok {
		t.Error("an unknown command resolved")
	}
}

// A skill: named in the system prompt, loaded by the Skill tool, the
// files beside it readable with Read (headless, without a prompt).
func TestSkillByTheModel(t *testing.T) {
	var ref string
	m := &routeModel{}
	m.answer = func(r chatReq) string {
		last, _ := json.Marshal(r.Messages[len(r.Messages)-1])
		switch {
		case strings.Contains(string(last), "EXTRACT STEPS"):
			return sseCallArgs("c2", "Read", `{"file_path":"`+ref+`"}`)
		case r.Messages[len(r.Messages)-1].Role == "tool":
			return sseText("used the skill")
		}
		return sseCallArgs("c1", "Skill", `{"skill":"pdf"}`)
	}
	home := t.TempDir()
	ref = filepath.Join(home, ".agent", "skills", "pdf", "scripts", "ref.md")
	c, _, _ := startWith(t, m, "", StartOptions{}, func(h, ws string) {
		// A user skill: its folder lies outside the workspace, so Read
		// there needs the allowance the skill gives.
		dir := filepath.Join(h, ".agent", "skills", "pdf")
		writeFile(t, filepath.Join(dir, "SKILL.md"), "---\nname: pdf\ndescription: Work with PDF files\n---\nEXTRACT STEPS\n")
		writeFile(t, filepath.Join(dir, "scripts", "ref.md"), "REFERENCE TEXT")
		ref = filepath.Join(dir, "scripts", "ref.md")
	})
	res := runTurnOK(t, c, TurnRequest{Prompt: "extract the tables"})
	if res.Status != StatusComplete {
		t.Fatalf("%+v", res)
	}
	reqs := m.requests()
	sys := reqs[0].text(1)
	if !strings.Contains(reqs[0].text(0)+sys, "- pdf: Work with PDF files") || !strings.Contains(reqs[0].toolNames(), "Skill") {
		t.Errorf("the skill is not offered: %s", reqs[0].toolNames())
	}
	last, _ := json.Marshal(reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1])
	if !strings.Contains(string(last), "REFERENCE TEXT") {
		t.Errorf("the file beside the skill was not read: %s", last)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkChildStart is a subagent's local start: its tools, permissions,
// framing, transcript and session (docs/performance.md: under 1 ms). Its
// close, which syncs the transcript to disk, is not counted.
func BenchmarkChildStart(b *testing.B) {
	home, ws := b.TempDir(), b.TempDir()
	if _, err := config.Trust(home, ws, time.Now()); err != nil {
		b.Fatal(err)
	}
	m := &routeModel{answer: func(chatReq) string { return sseText("ok") }}
	c, err := Start(context.Background(), StartOptions{Home: home, Workspace: ws, LookupEnv: lookupNone, Provider: "local", BaseURL: "http://model.test/v1", Model: "m",
		Overrides: StartOverrides{HTTPClient: &http.Client{Transport: m}}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	def := c.Catalog.Agent("general-purpose")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		child, err := c.agents.startChild(def, agentArgs{Prompt: "x"}, AgentInfo{ID: fmt.Sprint("bench-", i), Type: def.Name})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		child.Close()
		b.StartTimer()
	}
}

// TestCustomCommandMentionsAreText: a !`command` written in a file the
// command mentions is the file's text, never run; a FIFO, a file outside
// the workspace and a missing one are notes; the sentence's punctuation
// after a mention stays.
func TestCustomCommandMentionsAreText(t *testing.T) {
	m := &routeModel{}
	m.answer = func(chatReq) string { return sseText("ok") }
	c, _, ws := startWith(t, m, "", StartOptions{}, func(home, ws string) {
		writeFile(t, filepath.Join(ws, "README.md"), "Setup: !`touch pwned`")
		writeFile(t, filepath.Join(home, "secret.txt"), "SECRET")
		writeFile(t, filepath.Join(ws, ".agent", "commands", "look.md"),
			"---\nallowed-tools: Bash(touch:*)\n---\nSee @README.md, then @pipe and @"+filepath.Join(home, "secret.txt")+" and @nothing.md.\n")
	})
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan TurnRequest, 1)
	go func() {
		req, _, _ := c.CommandTurn(context.Background(), "/look", "")
		done <- req
	}()
	var req TurnRequest
	select {
	case req = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the command waited on the FIFO")
	}
	if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
		t.Fatal("a command written in a mentioned file ran")
	}
	for _, want := range []string{"Setup: !`touch pwned`", "@pipe [not attached:", "[not attached: it is outside the workspace]",
		"@nothing.md [not attached: no such file]."} {
		if !strings.Contains(req.Prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, req.Prompt)
		}
	}
	if strings.Contains(req.Prompt, "SECRET") || strings.Contains(req.Prompt, "\x00") {
		t.Errorf("prompt:\n%q", req.Prompt)
	}
}

// TestCustomCommandMentionMarks: a file holding NUL past the 8 KiB that
// readMention looks at (here the very mark of the next file) is binary,
// not attached; each file lands in its own place once; the prompt holds
// no NUL, from the body either.
func TestCustomCommandMentionMarks(t *testing.T) {
	m := &routeModel{}
	m.answer = func(chatReq) string { return sseText("ok") }
	c, _, _ := startWith(t, m, "", StartOptions{}, func(home, ws string) {
		writeFile(t, filepath.Join(ws, "a.txt"), strings.Repeat("x", 9000)+"\x001\x00")
		writeFile(t, filepath.Join(ws, "b.txt"), "BEE")
		writeFile(t, filepath.Join(ws, ".agent", "commands", "two.md"), "First @a.txt then @b.txt\x00.\n")
	})
	req, _, err := c.CommandTurn(context.Background(), "/two", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(req.Prompt, "@a.txt [not attached: it is a binary file]") || strings.Count(req.Prompt, "BEE") != 1 ||
		strings.Contains(req.Prompt, "\x00") || strings.Contains(req.Prompt, "xxxx") {
		t.Errorf("prompt:\n%q", req.Prompt)
	}
}

// TestChildTools: a built-in agent takes what the session has of its
// tools (no WebFetch: Explore still starts); a definition's missing tool
// refuses the spawn; disallowedTools removes a named tool and leaves a
// pattern to the permission rules.
func TestChildTools(t *testing.T) {
	var parent []tools.Tool
	for _, tl := range tools.Builtin(tools.Options{}) {
		if n := tl.Spec().Name; n != "WebFetch" {
			parent = append(parent, tl)
		}
	}
	names := func(ts []tools.Tool) string {
		var out []string
		for _, tl := range ts {
			out = append(out, tl.Spec().Name)
		}
		return strings.Join(out, ",")
	}
	explore := &extend.Agent{Name: "Explore", Builtin: true, HasTools: true, Tools: []string{"Read", "Glob", "Grep", "WebFetch"}}
	if ts, err := childTools(parent, explore); err != nil || names(ts) != "Read,Glob,Grep" {
		t.Errorf("Explore without WebFetch: %s %v", names(ts), err)
	}
	mine := &extend.Agent{Name: "fetcher", HasTools: true, Tools: []string{"Read", "WebFetch"}}
	if _, err := childTools(parent, mine); err == nil || !strings.Contains(err.Error(), "WebFetch") {
		t.Errorf("a definition's missing tool: %v", err)
	}
	careful := &extend.Agent{Name: "careful", DisallowedTools: []string{"Write", "Bash(rm:*)"}}
	ts, err := childTools(parent, careful)
	if err != nil || strings.Contains(names(ts), "Write") || !strings.Contains(names(ts), "Bash") {
		t.Errorf("disallowed: %s %v", names(ts), err)
	}
	rules, err := disallowRules(careful)
	if err != nil || len(rules) != 2 || rules[1].Tool != "Bash" || !rules[1].HasPattern || rules[1].Pattern != "rm:*" {
		t.Errorf("deny rules %+v %v", rules, err)
	}
	typo := &extend.Agent{Name: "typo", File: "/a/typo.md", DisallowedTools: []string{"Bash(rm:*"}}
	if _, err := childTools(parent, typo); err == nil || !strings.Contains(err.Error(), "/a/typo.md") || !strings.Contains(err.Error(), "disallowedTools") {
		t.Errorf("a disallowedTools entry that is not a rule: %v", err)
	}
}

// SubagentStart runs as a child starts, with its type; SubagentStop runs
// when the child would end, and its block keeps the child going with the
// reason (the parent's Stop hooks are not run for a child).
func TestSubagentHooks(t *testing.T) {
	m := &routeModel{}
	m.answer = func(r chatReq) string {
		switch {
		case r.child() && strings.Contains(r.lastText(), "check the tests too"):
			return sseText("child checked")
		case r.child():
			return sseText("child done")
		case r.Messages[len(r.Messages)-1].Role == "tool":
			return sseText("parent done")
		}
		return sseCallArgs("c1", "Agent", `{"description":"look","prompt":"look around","subagent_type":"general-purpose"}`)
	}
	var start, stop, stops string
	c, _, _ := startWith(t, m, "", StartOptions{}, func(home, ws string) {
		start, stop, stops = filepath.Join(home, "start.json"), filepath.Join(home, "stop.json"), filepath.Join(home, "stops")
		hooks := map[string]any{"hooks": map[string]any{
			"SubagentStart": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "cat > " + start}}}},
			"SubagentStop": []any{map[string]any{"hooks": []any{map[string]any{"type": "command",
				"command": "echo x >> " + stops + "; if [ ! -f " + stop + " ]; then cat > " + stop + "; echo 'check the tests too' >&2; exit 2; fi"}}}},
			"Stop": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "echo parent >> " + stops}}}},
		}}
		b, _ := json.Marshal(hooks)
		writeFile(t, filepath.Join(home, ".agent", "settings.json"), string(b))
	})
	res := runTurnOK(t, c, TurnRequest{Prompt: "go"})
	if res.Status != StatusComplete {
		t.Fatalf("%+v", res)
	}
	in, _ := os.ReadFile(start)
	if !strings.Contains(string(in), `"hook_event_name":"SubagentStart"`) || !strings.Contains(string(in), `"agent_type":"general-purpose"`) {
		t.Errorf("SubagentStart input %s", in)
	}
	in, _ = os.ReadFile(stop)
	if !strings.Contains(string(in), `"hook_event_name":"SubagentStop"`) {
		t.Errorf("SubagentStop input %s", in)
	}
	if n, _ := os.ReadFile(stops); string(n) != "x\nx\nparent\n" {
		t.Errorf("stop hooks ran %q (two SubagentStop, then the parent's Stop)", n)
	}
	var tool string
	for _, r := range m.requests() {
		if !r.child() && r.Messages[len(r.Messages)-1].Role == "tool" {
			b, _ := json.Marshal(r.Messages[len(r.Messages)-1])
			tool = string(b)
		}
	}
	if !strings.Contains(tool, "child checked") {
		t.Errorf("the parent read %s", tool)
	}
}

// A child's permission question reaches the parent's prompter naming the
// agent that asks; a child whose definition is stricter than its parent
// (plan) cannot write.
func TestSubagentPermissionQuestions(t *testing.T) {
	m := &routeModel{}
	m.answer = func(r chatReq) string {
		switch {
		case r.child() && r.Messages[len(r.Messages)-1].Role == "tool":
			return sseText("child done")
		case r.child() && strings.Contains(r.lastText(), "out2.txt"):
			return sseCallArgs("k1", "Write", `{"file_path":"out2.txt","content":"x"}`)
		case r.child():
			return sseCallArgs("k1", "Write", `{"file_path":"out.txt","content":"x"}`)
		case r.Messages[len(r.Messages)-1].Role == "tool":
			return sseText("done")
		}
		if strings.Contains(r.lastText(), "planner") {
			return sseCallArgs("c1", "Agent", `{"description":"plan","prompt":"write out2.txt","subagent_type":"planner"}`)
		}
		return sseCallArgs("c1", "Agent", `{"description":"write","prompt":"write out.txt","subagent_type":"general-purpose"}`)
	}
	ans := &answerer{ans: AllowOnce}
	c, _, ws := startWith(t, m, "", StartOptions{Prompter: ans}, func(home, ws string) {
		writeFile(t, filepath.Join(ws, ".agent", "agents", "planner.md"), "---\nname: planner\ndescription: plans\npermissionMode: plan\n---\nPlan.\n")
	})
	runTurnOK(t, c, TurnRequest{Prompt: "write it"})
	if len(ans.asked) != 1 || !strings.HasPrefix(ans.asked[0].Agent, "general-purpose") || ans.asked[0].Tool != "Write" {
		t.Fatalf("asked %+v", ans.asked)
	}
	if _, err := os.Stat(filepath.Join(ws, "out.txt")); err != nil {
		t.Fatalf("the allowed write: %v", err)
	}
	runTurnOK(t, c, TurnRequest{Prompt: "use the planner"})
	if _, err := os.Stat(filepath.Join(ws, "out2.txt")); err == nil || len(ans.asked) != 1 {
		t.Fatalf("a plan-mode child wrote (asked %d times)", len(ans.asked))
	}
}

// Entries of allowed-tools and disallowedTools that are not permission
// rules are problems of their files, said at the start.
func TestCatalogRuleProblems(t *testing.T) {
	c := &extend.Catalog{
		Agents:   []*extend.Agent{{Name: "a", File: "/w/.agent/agents/a.md", DisallowedTools: []string{"Bash(rm:*", "Write"}}},
		Commands: []*extend.Command{{Name: "c", File: "/w/.agent/commands/c.md", AllowedTools: []string{"Bash(git:*)", "Bash(git"}}},
	}
	got := strings.Join(catalogProblems(c), "\n")
	for _, want := range []string{`/w/.agent/agents/a.md: disallowedTools entry "Bash(rm:*" is not a permission rule`, "the agent does not start",
		`/w/.agent/commands/c.md: allowed-tools entry "Bash(git" is not a permission rule`, "it allows nothing"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "\n") != 1 {
		t.Errorf("good entries were reported:\n%s", got)
	}
}
