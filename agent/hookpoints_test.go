package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agent/agent/hooks"
	"agent/agent/tools"
	"agent/config"
	"agent/internal/fakemodel"
)

// userHooks builds user hooks (they need no approval) for a session in
// a fresh workspace.
func userHooks(t *testing.T, ws string, hs ...config.HookHandler) *hooks.Set {
	t.Helper()
	for i := range hs {
		hs[i].Type, hs[i].File, hs[i].Scope = "command", "/u/.agent/settings.json", config.User
	}
	return hooks.New(&config.Settings{Hooks: hs}, hooks.Options{Workspace: ws, Home: t.TempDir()})
}

func bodyOf(h *harness, i int) string { return string(h.srv.Requests()[i]) }

func TestHookDecisionsOnToolCalls(t *testing.T) {
	echoCall := fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Danger", Args: `{"text":"orig"}`}}}
	cases := []struct {
		name      string
		hook      config.HookHandler
		perms     *rulePerms
		prompter  bool
		wantRuns  int
		wantAsked int
		wantIn    string // in the second request
	}{
		{"PreToolUse allow answers an ask", config.HookHandler{Event: "PreToolUse", Command: `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`},
			&rulePerms{}, false, 1, 0, "echo: orig"},
		{"PreToolUse allow never beats a deny rule", config.HookHandler{Event: "PreToolUse", Command: `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`},
			&rulePerms{denied: map[string]bool{"Danger": true}}, false, 0, 0, "There is no tool named"},
		{"PreToolUse deny", config.HookHandler{Event: "PreToolUse", Matcher: "Danger", Command: `echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"too risky"}}'`},
			&rulePerms{allowed: map[string]bool{"Danger": true}}, false, 0, 0, "A hook blocked this Danger call: too risky"},
		{"PreToolUse ask makes an allowed call ask", config.HookHandler{Event: "PreToolUse", Command: `echo '{"hookSpecificOutput":{"permissionDecision":"ask"}}'`},
			&rulePerms{allowed: map[string]bool{"Danger": true}}, true, 1, 1, "echo: orig"},
		{"updatedInput replaces the arguments", config.HookHandler{Event: "PreToolUse", Command: `echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"text":"changed"}}}'`},
			&rulePerms{}, false, 1, 0, "echo: changed"},
		{"an updatedInput the schema refuses is an error", config.HookHandler{Event: "PreToolUse", Command: `echo '{"hookSpecificOutput":{"updatedInput":{"nope":1}}}'`},
			&rulePerms{allowed: map[string]bool{"Danger": true}}, false, 0, 0, "updatedInput is invalid"},
		{"PermissionRequest allow answers for the user", config.HookHandler{Event: "PermissionRequest", Command: `echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'`},
			&rulePerms{}, true, 1, 0, "echo: orig"},
		{"PermissionRequest deny", config.HookHandler{Event: "PermissionRequest", Command: `echo '{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"not now"}}}'`},
			&rulePerms{}, true, 0, 0, "not now"},
		{"PermissionRequest does not run without a prompt", config.HookHandler{Event: "PermissionRequest", Command: `exit 2`},
			&rulePerms{allowed: map[string]bool{"Danger": true}}, false, 1, 0, "echo: orig"},
		{"PostToolUse exit 2 feeds its stderr back", config.HookHandler{Event: "PostToolUse", Command: `echo 'lint: 3 warnings' >&2; exit 2`},
			&rulePerms{allowed: map[string]bool{"Danger": true}}, false, 1, 0, "Hook feedback: lint: 3 warnings"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			danger := &echoTool{name: "Danger", risk: tools.RiskExecute}
			ws := t.TempDir()
			opts := SessionOptions{Tools: []tools.Tool{danger}, Permissions: c.perms, Workspace: ws, Hooks: userHooks(t, ws, c.hook)}
			ans := &answerer{ans: AllowOnce}
			if c.prompter {
				opts.Prompter = ans
			}
			h := newHarness(t, opts, echoCall, fakemodel.Reply{Text: "done"})
			res := run(t, h.sess, "go")
			if res.Status != StatusComplete {
				t.Fatalf("%+v", res)
			}
			if danger.runs != c.wantRuns || len(ans.asked) != c.wantAsked {
				t.Errorf("runs %d asked %d", danger.runs, len(ans.asked))
			}
			if c.wantIn != "" && !strings.Contains(bodyOf(h, 1), c.wantIn) {
				t.Errorf("second request lacks %q: %.800s", c.wantIn, bodyOf(h, 1))
			}
		})
	}
}

// continue: false from a PostToolUse hook ends the turn after the step.
func TestHookContinueFalse(t *testing.T) {
	echo := &echoTool{name: "Echo", risk: tools.RiskInspect}
	ws := t.TempDir()
	h := newHarness(t, SessionOptions{Tools: []tools.Tool{echo}, Permissions: &rulePerms{}, Workspace: ws,
		Hooks: userHooks(t, ws, config.HookHandler{Event: "PostToolUse", Command: `echo '{"continue":false,"stopReason":"quota reached"}'`})},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Echo", Args: `{"text":"a"}`}}}, fakemodel.Reply{Text: "never"})
	res := run(t, h.sess, "go")
	if res.Status != StatusComplete || res.StopReason != "hook" || len(h.srv.Requests()) != 1 {
		t.Fatalf("%+v, %d requests", res, len(h.srv.Requests()))
	}
	if !strings.Contains(h.kinds(), "notice") {
		t.Errorf("events %s", h.kinds())
	}
}

// A Stop hook that always blocks keeps the turn going at most 8 times in a
// row.
func TestStopHookCap(t *testing.T) {
	ws := t.TempDir()
	var replies []fakemodel.Reply
	for range 20 {
		replies = append(replies, fakemodel.Reply{Text: "done"})
	}
	h := newHarness(t, SessionOptions{Workspace: ws, Hooks: userHooks(t, ws, config.HookHandler{Event: "Stop", Command: `echo more >&2; exit 2`})}, replies...)
	res := run(t, h.sess, "go")
	if res.Status != StatusComplete || len(h.srv.Requests()) != 1+maxStopBlocksInARow {
		t.Fatalf("%+v, %d requests", res, len(h.srv.Requests()))
	}
	if !strings.Contains(bodyOf(h, 1), `"stop_hook_active"`) && !strings.Contains(bodyOf(h, 1), "Stop hook feedback") {
		t.Errorf("second request %.500s", bodyOf(h, 1))
	}
}

// SessionStart adds context to the first prompt; SessionEnd runs at the
// close with its reason.
func TestSessionStartAndEnd(t *testing.T) {
	ws := t.TempDir()
	set := userHooks(t, ws,
		config.HookHandler{Event: "SessionStart", Matcher: "startup", Command: `echo 'branch policy: never push to main'`},
		config.HookHandler{Event: "SessionEnd", Command: `cat > "$AGENT_PROJECT_DIR/ended.json"`})
	h := newHarness(t, SessionOptions{Workspace: ws, Hooks: set, StartSource: "startup"}, fakemodel.Reply{Text: "ok"})
	run(t, h.sess, "hello")
	if !strings.Contains(bodyOf(h, 0), "branch policy: never push to main") {
		t.Fatalf("first request %.800s", bodyOf(h, 0))
	}
	h.sess.closeWithReason("prompt_input_exit")
	data, err := os.ReadFile(filepath.Join(ws, "ended.json"))
	var in map[string]any
	if err != nil || json.Unmarshal(data, &in) != nil || in["reason"] != "prompt_input_exit" || in["hook_event_name"] != "SessionEnd" {
		t.Fatalf("SessionEnd input %s %v", data, err)
	}
}

// PreCompact and PostCompact run around a summary, with the trigger and
// the summary.
func TestCompactHooks(t *testing.T) {
	ws := t.TempDir()
	set := userHooks(t, ws,
		config.HookHandler{Event: "PreCompact", Matcher: "manual", Command: `cat > "$AGENT_PROJECT_DIR/pre.json"`},
		config.HookHandler{Event: "PostCompact", Command: `cat > "$AGENT_PROJECT_DIR/post.json"`},
		config.HookHandler{Event: "SessionStart", Matcher: "compact", Command: `echo 'remember the release checklist'`})
	m := &windowModel{calls: 1}
	hh := newCtxHarness(t, m, 3000, SessionOptions{Workspace: ws, Hooks: set})
	runOK(t, hh.sess, "first")
	turn, _ := hh.sess.Submit(CompactRequest("keep the API notes"))
	if res, _ := turn.Wait(context.Background()); res.Status != StatusComplete {
		t.Fatalf("%+v", res)
	}
	for _, c := range []struct{ file, want string }{
		{"pre.json", `"custom_instructions":"keep the API notes"`},
		{"pre.json", `"trigger":"manual"`},
		{"post.json", `"compact_summary":"SUMMARY`},
	} {
		data, _ := os.ReadFile(filepath.Join(ws, c.file))
		if !strings.Contains(string(data), c.want) {
			t.Errorf("%s lacks %s: %s", c.file, c.want, data)
		}
	}
	if hist := hh.sess.History(); !strings.Contains(fullText(hist), "remember the release checklist") || !isSummary(hist[0]) {
		t.Errorf("history %s", fullText(hist))
	}
}

// A permission prompt tells the Notification hooks.
func TestNotificationOnPrompt(t *testing.T) {
	ws := t.TempDir()
	danger := &echoTool{name: "Danger", risk: tools.RiskExecute}
	set := userHooks(t, ws, config.HookHandler{Event: "Notification", Matcher: "permission_prompt", Command: `cat > "$AGENT_PROJECT_DIR/note.json"`})
	h := newHarness(t, SessionOptions{Tools: []tools.Tool{danger}, Permissions: &rulePerms{}, Workspace: ws, Hooks: set, Prompter: &answerer{ans: DenyOnce}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Danger", Args: `{"text":"x"}`}}}, fakemodel.Reply{Text: "ok"})
	run(t, h.sess, "go")
	for range 100 {
		if data, _ := os.ReadFile(filepath.Join(ws, "note.json")); strings.Contains(string(data), "needs your permission to use Danger") {
			return
		}
		waitABit()
	}
	t.Fatal("no notification")
}

// A blocked prompt never reaches the model.
func TestPromptBlocked(t *testing.T) {
	ws := t.TempDir()
	h := newHarness(t, SessionOptions{Workspace: ws, Hooks: userHooks(t, ws, config.HookHandler{Event: "UserPromptSubmit", Command: `exit 2`})}, fakemodel.Reply{Text: "never"})
	res, _ := h.sess.Run(context.Background(), "hi")
	if res.Status != StatusError || len(h.srv.Requests()) != 0 || len(h.sess.History()) != 0 {
		t.Fatalf("%+v", res)
	}
}

// A call that fails runs PostToolUseFailure, whose context reaches the
// model.
func TestPostToolUseFailure(t *testing.T) {
	ws := t.TempDir()
	set := userHooks(t, ws, config.HookHandler{Event: "PostToolUseFailure", Matcher: "Read", Command: `grep -q '"error":' && echo '{"hookSpecificOutput":{"additionalContext":"the file moved to docs/"}}'`})
	h := newHarness(t, SessionOptions{Tools: tools.Builtin(tools.Options{Workspace: ws}), Permissions: &rulePerms{}, Workspace: ws, Hooks: set},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Read", Args: `{"file_path":"missing.md"}`}}}, fakemodel.Reply{Text: "ok"})
	run(t, h.sess, "go")
	if !strings.Contains(bodyOf(h, 1), "the file moved to docs/") {
		t.Fatalf("second request %.800s", bodyOf(h, 1))
	}
}

func waitABit() { time.Sleep(20 * time.Millisecond) }

// turnPerms is rulePerms whose turn allowances name tools.
type turnPerms struct{ *rulePerms }

func (p turnPerms) TurnAllows(rules []config.Rule, spec tools.Spec, _ tools.Target) bool {
	for _, r := range rules {
		if r.Tool == spec.Name {
			return true
		}
	}
	return false
}

// A hook's ask wins over a command's allowed-tools: the call is asked.
func TestHookAskBeatsCommandAllowance(t *testing.T) {
	danger := &echoTool{name: "Danger", risk: tools.RiskExecute}
	ws := t.TempDir()
	ans := &answerer{ans: AllowOnce}
	h := newHarness(t, SessionOptions{Tools: []tools.Tool{danger}, Permissions: turnPerms{&rulePerms{}}, Workspace: ws, Prompter: ans,
		Hooks: userHooks(t, ws, config.HookHandler{Event: "PreToolUse", Command: `echo '{"hookSpecificOutput":{"permissionDecision":"ask"}}'`})},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Danger", Args: `{"text":"x"}`}}}, fakemodel.Reply{Text: "done"})
	tr, err := h.sess.Submit(TurnRequest{Prompt: "go", Allow: []config.Rule{{Tool: "Danger"}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if res, err := tr.Wait(ctx); err != nil || res.Status != StatusComplete {
		t.Fatalf("%+v %v", res, err)
	}
	if danger.runs != 1 || len(ans.asked) != 1 {
		t.Errorf("runs %d asked %d: the hook's ask was overridden", danger.runs, len(ans.asked))
	}
}
