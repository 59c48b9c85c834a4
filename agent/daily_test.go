package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agent/agent/tools"
	"agent/config"
	"agent/internal/fakemodel"
	"agent/providers"
)

func (h *harness) eventsOf(k EventKind) []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Event
	for _, e := range h.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// The model's list reaches the session, the front ends and the
// transcript; a malformed one is refused with what to fix and the list
// stays; resuming restores the last list (docs/reference/runtime.md, "The
// todo list").
func TestTodoListInASession(t *testing.T) {
	good := `{"todos":[{"content":"Read the code","status":"completed","activeForm":"Reading the code"},{"content":"Fix the bug","status":"in_progress","activeForm":"Fixing the bug"}]}`
	bad := `{"todos":[{"content":"a","status":"in_progress","activeForm":"a-ing"},{"content":"b","status":"in_progress","activeForm":"b-ing"}]}`
	h := newCkHarness(t, toolReply("c1", "TodoWrite", good), toolReply("c2", "TodoWrite", bad), fakemodel.Reply{Text: "ok"})
	run(t, h.sess, "plan it")
	list := h.sess.Todos()
	if len(list) != 2 || list[1].ActiveForm != "Fixing the bug" {
		t.Fatalf("list %+v", list)
	}
	evs := h.eventsOf(EventTodos)
	if len(evs) != 1 || len(evs[0].Todos) != 2 {
		t.Fatalf("todos events %+v", evs)
	}
	ends := h.eventsOf(EventToolEnd)
	if ends[0].Tool.Result.Content != "Todo list updated: 2 items (1 completed, 1 in progress, 0 pending)." || !ends[1].Tool.Result.IsError ||
		!strings.Contains(ends[1].Tool.Result.Content, "keep exactly one item in_progress. The previous list is unchanged") {
		t.Errorf("results %q / %q", ends[0].Tool.Result.Content, ends[1].Tool.Result.Content)
	}
	if got := h.sess.TodosCommand(); got != "[x] Read the code\n[>] Fix the bug\n" {
		t.Errorf("/todos %q", got)
	}
	if h.sess.openTodos() == "" {
		t.Error("an open list is not kept across compactions")
	}
	h.sess.setTodos([]tools.Todo{{Content: "a", Status: tools.TodoCompleted, ActiveForm: "a"}})
	if h.sess.openTodos() != "" {
		t.Error("a finished list is kept across compactions")
	}
	h.sess.Close()
	l, err := LoadTranscript(h.home, h.id)
	if err != nil || len(l.Todos) != 1 || l.Todos[0].Status != tools.TodoCompleted {
		t.Fatalf("resumed todos %+v %v", l.Todos, err)
	}
	// Without TodoWrite in the options, the tool is not offered.
	h2 := newHarness(t, SessionOptions{})
	for _, sp := range h2.sess.ToolSpecs() {
		if sp.Name == "TodoWrite" {
			t.Error("TodoWrite offered")
		}
	}
	if got := h2.sess.TodosCommand(); !strings.Contains(got, "There is no todo list") {
		t.Errorf("%q", got)
	}
}

// A "!" line runs as a Bash call of its own turn, without a model call;
// its output joins the conversation. In plan mode it is denied and
// nothing joins.
func TestShellTurn(t *testing.T) {
	h := newCkHarness(t, fakemodel.Reply{Text: "I see the output"})
	req := UserPrompt("!echo hello; echo world")
	if !req.Shell || req.Prompt != "echo hello; echo world" || req.Display != "!echo hello; echo world" {
		t.Fatalf("%+v", req)
	}
	turn, err := h.sess.Submit(req)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := turn.Wait(t.Context())
	if res.Status != StatusComplete || res.Text != "hello\nworld\n" {
		t.Fatalf("%+v", res)
	}
	if n := len(h.srv.Requests()); n != 0 {
		t.Fatalf("%d model calls", n)
	}
	hist := h.sess.History()
	if len(hist) != 1 || !strings.Contains(fullText(hist), "[The user ran a shell command in the workspace; its output follows.]\n$ echo hello; echo world\nhello\nworld") {
		t.Fatalf("history %s", fullText(hist))
	}
	run(t, h.sess, "what did it print?")
	if body := string(h.srv.Requests()[0]); !strings.Contains(body, `$ echo hello; echo world\nhello\nworld`) {
		t.Errorf("the next request lacks the output: %s", body)
	}
	if cps := h.sess.Checkpoints(); len(cps) != 2 || cps[0].Prompt != "!echo hello; echo world" {
		t.Errorf("checkpoints %+v", cps)
	}
	// Plan mode denies it: nothing ran, nothing joins.
	plan := newHarness(t, SessionOptions{Tools: tools.Builtin(tools.Options{Workspace: h.ws}), Workspace: h.ws,
		Permissions: NewChecker(CheckerOptions{Mode: "plan", Workspace: h.ws})})
	turn, _ = plan.sess.Submit(UserPrompt("!touch made"))
	res, _ = turn.Wait(t.Context())
	if res.Status != StatusComplete || !strings.HasPrefix(res.Text, "Permission denied") || len(plan.sess.History()) != 0 {
		t.Fatalf("%+v %d", res, len(plan.sess.History()))
	}
	if _, err := os.Stat(filepath.Join(h.ws, "made")); err == nil {
		t.Error("the denied command ran")
	}
	// Default mode: a command that would ask runs (the user typed it).
	def := newHarness(t, SessionOptions{Tools: tools.Builtin(tools.Options{Workspace: h.ws}), Workspace: h.ws,
		Permissions: NewChecker(CheckerOptions{Workspace: h.ws})})
	turn, _ = def.sess.Submit(UserPrompt("!touch made"))
	if res, _ = turn.Wait(t.Context()); res.Status != StatusComplete {
		t.Fatalf("%+v", res)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "made")); err != nil {
		t.Error("the user's command did not run")
	}
	if p := UserPrompt("!  "); p.Shell || !p.Mentions {
		t.Errorf("a bare ! is a prompt: %+v", p)
	}
}

func TestMentions(t *testing.T) {
	cases := []struct {
		prompt string
		want   []string
	}{
		{"look at @main.go please", []string{"main.go"}},
		{"@a.go and @b/c.go", []string{"a.go", "b/c.go"}},
		{`open @"my file.txt" now`, []string{"my file.txt"}},
		{"mail me@example.com", nil},
		{"@ alone", nil},
		{`an @"unclosed quote`, nil},
		{"tab\t@x.go", []string{"x.go"}},
	}
	for _, c := range cases {
		t.Run(c.prompt, func(t *testing.T) {
			var got []string
			for _, m := range Mentions(c.prompt) {
				got = append(got, m.Path)
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("%q", got)
			}
		})
	}
}

// Mentioned text files are attached; a missing, binary, huge or folder
// mention is said and not attached (docs/reference/runtime.md, "Shell
// commands and mentions").
func TestMentionsAttach(t *testing.T) {
	ws := t.TempDir()
	put := func(rel, content string) {
		os.MkdirAll(filepath.Dir(filepath.Join(ws, rel)), 0o755)
		os.WriteFile(filepath.Join(ws, rel), []byte(content), 0o644)
	}
	put("src/main.go", "package main\n")
	put("my notes.md", "# notes\n")
	put("bin.dat", "a\x00b")
	put("huge.log", strings.Repeat("x", maxMentionFile+1))
	parts, notes := expandMentions(ws, "", "see @src/main.go, @\"my notes.md\" @src/main.go @missing.go @bin.dat @huge.log @src @github:repo://x")
	var texts []string
	for _, p := range parts {
		texts = append(texts, p.(providers.Text).Text)
	}
	want := []string{MentionLead + "src/main.go]\npackage main\n", MentionLead + "my notes.md]\n# notes\n"}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("attached %q", texts)
	}
	wantNotes := []string{
		"@missing.go: not attached: no such file.",
		"@bin.dat: not attached: it is a binary file.",
		"@huge.log: not attached: it is 256 KiB, over the 256 KiB an @ mention attaches (ask the model to Read it).",
		"@src: not attached: it is a folder (mention the files in it).",
	}
	if strings.Join(notes, "\n") != strings.Join(wantNotes, "\n") {
		t.Errorf("notes:\n%s", strings.Join(notes, "\n"))
	}
	if !IsAttachment(texts[0]) || IsAttachment("see @src/main.go") {
		t.Error("IsAttachment")
	}
	// Through a session: the prompt as typed is shown, the file goes to
	// the model, the notes to the user.
	h := newHarness(t, SessionOptions{Workspace: ws}, fakemodel.Reply{Text: "read it"})
	turn, _ := h.sess.Submit(UserPrompt("explain @src/main.go and @gone.txt"))
	turn.Wait(t.Context())
	body := string(h.srv.Requests()[0])
	if !strings.Contains(body, `[Attached by the user's @ mention: src/main.go]\npackage main\n`) {
		t.Errorf("request %s", body)
	}
	if starts := h.eventsOf(EventTurnStart); starts[0].Text != "explain @src/main.go and @gone.txt" {
		t.Errorf("shown %q", starts[0].Text)
	}
	if n := h.eventsOf(EventNotice); len(n) != 1 || n[0].Text != "@gone.txt: not attached: no such file." {
		t.Errorf("notices %+v", n)
	}
}

// The rules the answers "this session" and "this project" record,
// generalised as a user would write them (docs/reference/runtime.md,
// "Permission prompts").
func TestGeneraliseRules(t *testing.T) {
	ws := "/w"
	c := NewChecker(CheckerOptions{Workspace: ws, Home: "/home/u"})
	bash := tools.Spec{Name: "Bash", Risk: tools.RiskExecute}
	edit := tools.Spec{Name: "Edit", Risk: tools.RiskModify}
	write := tools.Spec{Name: "Write", Risk: tools.RiskModify}
	cases := []struct {
		name   string
		spec   tools.Spec
		target tools.Target
		want   []string
	}{
		{"one word", bash, cmd("ls -la"), []string{"Bash(ls:*)"}},
		{"a subcommand", bash, cmd("git status --short"), []string{"Bash(git status:*)"}},
		{"a file argument is not a subcommand", bash, cmd("cat hello.txt"), []string{"Bash(cat:*)"}},
		{"a package manager's script", bash, cmd("npm run test:unit -- --watch"), []string{"Bash(npm run test:unit:*)"}},
		{"go test", bash, cmd("go test ./..."), []string{"Bash(go test:*)"}},
		{"a compound command: one rule per command", bash, cmd("cat hello.txt && ls -la"), []string{"Bash(cat:*)", "Bash(ls:*)"}},
		{"a pipeline", bash, cmd("go test ./... 2>&1 | tail -5"), []string{"Bash(go test:*)", "Bash(tail:*)"}},
		{"repeated commands once", bash, cmd("ls a; ls b"), []string{"Bash(ls:*)"}},
		{"quotes keep operators inside", bash, cmd(`grep -n "a && b; c | d" file.txt`), []string{"Bash(grep:*)"}},
		{"single quotes too", bash, cmd(`echo 'x|y' && git log --oneline`), []string{"Bash(echo:*)", "Bash(git log:*)"}},
		{"a substitution stays exact", bash, cmd("echo $(rm -rf /)"), []string{"Bash(echo $(rm -rf /))"}},
		{"backquotes stay exact", bash, cmd("ls `pwd`"), []string{"Bash(ls `pwd`)"}},
		{"a process substitution stays exact", bash, cmd("diff <(ls a) <(ls b)"), []string{"Bash(diff <(ls a) <(ls b))"}},
		{"a variable first word stays exact", bash, cmd("$EDITOR x"), []string{"Bash($EDITOR x)"}},
		{"an assignment stays exact", bash, cmd("GOOS=linux go build"), []string{"Bash(GOOS=linux go build)"}},
		{"a wrapper stays exact", bash, cmd("sudo apt install x"), []string{"Bash(sudo apt install x)"}},
		{"rm stays exact", bash, cmd("rm -rf build"), []string{"Bash(rm -rf build)"}},
		{"one exact command makes the whole exact", bash, cmd("make && rm -rf build"), []string{"Bash(make && rm -rf build)"}},
		{"a script path with spaces, quoted", bash, cmd(`"./my script.sh" --fast`), []string{`Bash("./my script.sh":*)`}},
		{"a path with an escaped space", bash, cmd(`./my\ script.sh run`), []string{`Bash(./my\ script.sh:*)`}},
		{"make with a target", bash, cmd("make test"), []string{"Bash(make test:*)"}},
		{"an unknown program takes one word", bash, cmd("mytool build x"), []string{"Bash(mytool:*)"}},
		{"a quoted subcommand is an argument", bash, cmd(`git "status"`), []string{"Bash(git:*)"}},
		{"a redirection first stays exact", bash, cmd("> out.txt echo hi"), []string{"Bash(> out.txt echo hi)"}},
		{"an unbalanced quote stays exact", bash, cmd(`echo "hi`), []string{`Bash(echo "hi)`}},
		{"Edit: the file's folder", edit, path("/w/src/pkg/a.go", false), []string{"Edit(src/pkg/**)"}},
		{"Write: the file's folder", write, path("/w/docs/x.md", false), []string{"Write(docs/**)"}},
		{"a folder with spaces and wildcards", edit, path("/w/my dir[1]/a.go", false), []string{`Edit(my dir\[1]/**)`}},
		{"a file at the top stays the file", edit, path("/w/main.go", false), []string{"Edit(main.go)"}},
		{"outside the workspace stays the file", edit, path("/etc/hosts", true), []string{"Edit(/etc/hosts)"}},
		{"in the home stays the file", write, path("/home/u/notes.txt", true), []string{"Write(~/notes.txt)"}},
		{"Read is not generalised", tools.Spec{Name: "Read"}, path("/w/src/a.go", false), []string{"Read(src/a.go)"}},
		{"WebFetch keeps the host", tools.Spec{Name: "WebFetch", Risk: tools.RiskExecute}, tools.Target{Kind: tools.TargetHost, Value: "Docs.Example.com"}, []string{"WebFetch(docs.example.com)"}},
		{"an MCP tool keeps its name", tools.Spec{Name: "gh__search", Risk: tools.RiskExecute}, tools.Target{}, []string{"gh__search"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := c.Generalise(tc.spec, tc.target)
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			// Every rule parses, and together they allow the call.
			sess := NewChecker(CheckerOptions{Workspace: ws, Home: "/home/u"})
			for _, r := range got {
				rule, err := config.ParseRule(r)
				if err != nil {
					t.Fatalf("%s: %v", r, err)
				}
				sess.AllowForSession(rule)
			}
			if v := sess.Check(tc.spec, tc.target); v.Decision != Allow && !tc.target.OutsideWorkspace {
				t.Errorf("the rules do not allow the call: %+v", v)
			}
		})
	}
}

func cmd(s string) tools.Target { return tools.Target{Kind: tools.TargetCommand, Value: s} }
func path(p string, outside bool) tools.Target {
	return tools.Target{Kind: tools.TargetPath, Value: p, OutsideWorkspace: outside}
}

// A prompt carries the call's preview and the generalised rules, and an
// answer for the session records exactly those rules.
func TestPermissionPromptRules(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	checker := NewChecker(CheckerOptions{Workspace: ws})
	ans := &answerer{ans: AllowSession}
	h := newHarness(t, SessionOptions{Tools: tools.Builtin(tools.Options{Workspace: ws}), Workspace: ws, Permissions: checker, Prompter: ans},
		toolReply("c1", "Bash", `{"command":"cat hello.txt && ls -la","description":"look around"}`),
		toolReply("c2", "Bash", `{"command":"cat other.txt | ls"}`),
		fakemodel.Reply{Text: "done"})
	run(t, h.sess, "look")
	if len(ans.asked) != 1 {
		t.Fatalf("asked %d times (the second call is covered by the rules)", len(ans.asked))
	}
	req := ans.asked[0]
	if strings.Join(req.Rules, " ") != "Bash(cat:*) Bash(ls:*)" || req.Suggest != "Bash(cat hello.txt && ls -la)" {
		t.Errorf("rules %q suggest %q", req.Rules, req.Suggest)
	}
	if p := req.Preview; p == nil || p.Kind != tools.PreviewCommand || p.Note != "look around" {
		t.Errorf("preview %+v", p)
	}
}

// /cost: each turn's tokens and the total, priced where the price is
// known; the settings' modelPrices wins over the table.
func TestCostReport(t *testing.T) {
	turns := []TurnCost{
		{Turn: "s/1", Provider: "messages", Model: "claude-sonnet-4-5", Usage: providers.Usage{InputTokens: 100000, OutputTokens: 2000, CacheReadTokens: 80000, CacheWriteTokens: 10000}},
		{Turn: "s/2", Provider: "local", Model: "llama", Usage: providers.Usage{InputTokens: 5000, OutputTokens: 100}},
	}
	price := func(p, m string) (Price, bool) { return ModelPrice(p, m, nil) }
	got := costReport([]ModelUsage{{Provider: "messages", Model: "claude-sonnet-4-5", Turns: 3, Usage: providers.Usage{InputTokens: 1000000}}}, turns, price)
	want := "       turn                       model      input  output  cache read  cache write             cost\n" +
		"  3 earlier  messages/claude-sonnet-4-5  1,000,000       0           0            0            $3.00\n" +
		"          1  messages/claude-sonnet-4-5    100,000   2,000      80,000       10,000          $0.1215\n" +
		"          2                 local/llama      5,000     100           0            0                —\n" +
		"      total                              1,105,000   2,100      80,000       10,000  $3.12 + unknown\n" +
		"Input counts the whole prompt, cache reads and writes included; output includes reasoning.\n" +
		"No price is known for local/llama: add it to modelPrices in the settings to see its cost.\n"
	if got != want {
		t.Errorf("report\n%s\nwant\n%s", got, want)
	}
	s := &config.Settings{Context: config.ContextSettings{Prices: map[string]config.ModelPrice{"llama": {Input: 1, Output: 1, CacheRead: 1, CacheWrite: 1}}}}
	if p, ok := ModelPrice("local", "llama", s); !ok || p.Input != 1 {
		t.Errorf("settings price %+v %v", p, ok)
	}
	// 0.1215 = 10000 uncached × 3 + 80000 × 0.3 + 10000 × 3.75 + 2000 × 15, per million.
	if c := Cost(turns[0].Usage, Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}); c < 0.12149 || c > 0.12151 {
		t.Errorf("cost %v", c)
	}
	if got := costReport(nil, nil, price); !strings.Contains(got, "No model call") {
		t.Errorf("%q", got)
	}
}

// The ledger follows the session: turn records carry the model, and a
// resumed session counts its earlier turns.
func TestCostLedgerResumes(t *testing.T) {
	h := newCkHarness(t, fakemodel.Reply{Text: "a", InputTokens: 120, OutputTokens: 7}, fakemodel.Reply{Text: "b", InputTokens: 130, OutputTokens: 8})
	run(t, h.sess, "one")
	run(t, h.sess, "two")
	h.sess.Close()
	l, err := LoadTranscript(h.home, h.id)
	if err != nil {
		t.Fatal(err)
	}
	if _, turns := l.daily.costs.snapshot(); len(turns) != 2 || turns[1].Usage.InputTokens != 130 {
		t.Fatalf("ledger %+v", turns)
	}
	r := openCkHarness(t, h.home, h.ws, h.id)
	if by := r.sess.cost.byModel(); len(by) != 1 || by[0].Turns != 2 || by[0].Usage.OutputTokens != 15 {
		t.Errorf("by model %+v", by)
	}
}

// A running command's last lines reach the front ends while it runs, at
// most every 50 ms, bounded to the tail, and none after it ended.
func TestLiveOutput(t *testing.T) {
	h := newCkHarness(t, toolReply("c1", "Bash", `{"command":"for i in $(seq 1 5); do echo step $i; sleep 0.1; done; head -c 3000000 /dev/zero | tr '\\0' x; echo; echo last"}`), fakemodel.Reply{Text: "done"})
	var mu sync.Mutex
	var outs []string
	ended := false
	lateOutput := false
	h.sess.Subscribe(func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		switch e.Kind {
		case EventToolOutput:
			outs = append(outs, e.Text)
		case EventToolEnd:
			ended = true
		}
		if e.Kind == EventToolOutput && ended {
			lateOutput = true
		}
	})
	start := time.Now()
	run(t, h.sess, "run it")
	elapsed := time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	if len(outs) < 3 {
		t.Fatalf("%d views", len(outs))
	}
	if max := int(elapsed/liveEvery) + 3; len(outs) > max {
		t.Errorf("%d views in %v (at most %d)", len(outs), elapsed, max)
	}
	for _, o := range outs {
		if len(o) > liveTail || strings.Count(o, "\n") >= liveLines {
			t.Errorf("a view of %d bytes, %d lines", len(o), strings.Count(o, "\n")+1)
		}
	}
	if !strings.HasPrefix(outs[0], "step 1") {
		t.Errorf("first view %q", outs[0])
	}
	_ = lateOutput // a view already on its way may land after the end; the UI ignores it
	if ev := h.eventsOf(EventToolOutput); ev[0].Tool == nil || ev[0].Tool.CallID != "c1" || ev[0].Tool.Name != "Bash" {
		t.Errorf("%+v", ev[0].Tool)
	}
	if j, _ := json.Marshal(outs[len(outs)-1]); len(j) == 0 {
		t.Fatal()
	}
}
