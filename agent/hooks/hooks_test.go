package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agent/config"
)

// set builds a Set of user handlers (which need no approval) in a fresh
// workspace.
func set(t *testing.T, handlers ...config.HookHandler) (*Set, string) {
	t.Helper()
	ws := t.TempDir()
	for i := range handlers {
		if handlers[i].Type == "" {
			handlers[i].Type = "command"
		}
		if handlers[i].File == "" {
			handlers[i].File = "/home/u/.agent/settings.json"
		}
	}
	return New(&config.Settings{Hooks: handlers}, Options{Workspace: ws, Home: t.TempDir()}), ws
}

func toolInput(event, tool string) Input {
	return Input{SessionID: "s1", TranscriptPath: "/t.jsonl", Cwd: "/w", PermissionMode: "default", HookEventName: event,
		ToolName: tool, ToolInput: json.RawMessage(`{"command":"rm -rf /tmp/x"}`), ToolUseID: "c1"}
}

func TestMatchers(t *testing.T) {
	cases := []struct {
		name, matcher, value string
		mcp                  bool
		want                 bool
	}{
		{"empty matches all", "", "Bash", false, true},
		{"star matches all", "*", "Write", false, true},
		{"an exact name", "Bash", "Bash", false, true},
		{"an exact name is not a prefix", "Bash", "BashOutput", false, false},
		{"a list of names", "Edit|Write", "Write", false, true},
		{"case matters", "bash", "Bash", false, false},
		{"a regular expression matches whole", "Notebook.*", "NotebookEdit", false, true},
		{"a regular expression anchored", "Edit.*", "MultiEdit", false, false},
		{"an MCP tool by its mcp__ name", "mcp__github__.*", "github__create_issue", true, true},
		{"an MCP tool by its own name", "github__create_issue", "github__create_issue", true, true},
		{"an invalid expression matches nothing", "(", "Bash", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			re, names := compileMatcher(c.matcher)
			h := &Handler{match: re, names: names}
			values := []string{c.value}
			if c.mcp {
				values = append(values, "mcp__"+c.value)
			}
			if got := h.matches(values...); got != c.want {
				t.Errorf("matcher %q on %q = %v", c.matcher, c.value, got)
			}
		})
	}
}

// Claude Code's documented answers, one row per rule.
func TestResults(t *testing.T) {
	cases := []struct {
		name    string
		event   string
		command string
		fail    bool // failClosed
		check   func(t *testing.T, r Result)
	}{
		{"exit 0, no output: nothing", "PreToolUse", "true", false, func(t *testing.T, r Result) {
			if r.Block || r.Permission != "" || len(r.Failures) != 0 || r.Ran != 1 {
				t.Errorf("%+v", r)
			}
		}},
		{"exit 2 blocks with stderr as the reason", "PreToolUse", "echo 'no rm here' >&2; exit 2", false, func(t *testing.T, r Result) {
			if !r.Block || r.Reason != "no rm here" {
				t.Errorf("%+v", r)
			}
		}},
		{"exit 2 without stderr still blocks, naming the hook", "PreToolUse", "exit 2", false, func(t *testing.T, r Result) {
			if !r.Block || !strings.Contains(r.Reason, "blocked by the hook") {
				t.Errorf("%+v", r)
			}
		}},
		{"another exit code is a failure, not a block", "PreToolUse", "echo oops >&2; exit 1", false, func(t *testing.T, r Result) {
			if r.Block || len(r.Failures) != 1 || !strings.Contains(r.Failures[0].Err, "exit code 1: oops") {
				t.Errorf("%+v", r)
			}
		}},
		{"failClosed turns a failure into a block", "PreToolUse", "exit 3", true, func(t *testing.T, r Result) {
			if !r.Block || len(r.Failures) != 1 || !strings.Contains(r.Reason, "fails closed") {
				t.Errorf("%+v", r)
			}
		}},
		{"a missing program is a failure", "PreToolUse", "/nonexistent/hook-program", false, func(t *testing.T, r Result) {
			if r.Block || len(r.Failures) != 1 {
				t.Errorf("%+v", r)
			}
		}},
		{"invalid JSON is a failure", "PreToolUse", `echo '{"decision": '`, false, func(t *testing.T, r Result) {
			if r.Block || len(r.Failures) != 1 || !strings.Contains(r.Failures[0].Err, "not valid JSON") {
				t.Errorf("%+v", r)
			}
		}},
		{"unknown fields are said, the rest applies", "PreToolUse", `echo '{"decision":"block","reason":"r","colour":"blue"}'`, false, func(t *testing.T, r Result) {
			if !r.Block || r.Reason != "r" || len(r.Messages) != 1 || !strings.Contains(r.Messages[0], `"colour"`) {
				t.Errorf("%+v", r)
			}
		}},
		{"permissionDecision deny", "PreToolUse", `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not today"}}'`, false, func(t *testing.T, r Result) {
			if r.Permission != "deny" || r.PermissionReason != "not today" {
				t.Errorf("%+v", r)
			}
		}},
		{"permissionDecision allow with updatedInput", "PreToolUse", `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"ls"}}}'`, false, func(t *testing.T, r Result) {
			if r.Permission != "allow" || string(r.UpdatedInput) != `{"command":"ls"}` {
				t.Errorf("%+v", r)
			}
		}},
		{"an unknown permissionDecision is a failure", "PreToolUse", `echo '{"hookSpecificOutput":{"permissionDecision":"maybe"}}'`, false, func(t *testing.T, r Result) {
			if r.Permission != "" || len(r.Failures) != 1 {
				t.Errorf("%+v", r)
			}
		}},
		{"the older decision approve is allow", "PreToolUse", `echo '{"decision":"approve","reason":"fine"}'`, false, func(t *testing.T, r Result) {
			if r.Permission != "allow" {
				t.Errorf("%+v", r)
			}
		}},
		{"PermissionRequest behavior deny", "PermissionRequest", `echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no"}}}'`, false, func(t *testing.T, r Result) {
			if r.Permission != "deny" || r.PermissionReason != "no" {
				t.Errorf("%+v", r)
			}
		}},
		{"PostToolUse additionalContext", "PostToolUse", `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"formatted"}}'`, false, func(t *testing.T, r Result) {
			if len(r.Context) != 1 || r.Context[0] != "formatted" {
				t.Errorf("%+v", r)
			}
		}},
		{"UserPromptSubmit plain stdout is context", "UserPromptSubmit", `echo 'today is Friday'`, false, func(t *testing.T, r Result) {
			if len(r.Context) != 1 || r.Context[0] != "today is Friday" {
				t.Errorf("%+v", r)
			}
		}},
		{"PreToolUse plain stdout is not context", "PreToolUse", `echo 'chatter'`, false, func(t *testing.T, r Result) {
			if len(r.Context) != 0 || len(r.Failures) != 0 {
				t.Errorf("%+v", r)
			}
		}},
		{"continue false stops with a reason", "Stop", `echo '{"continue":false,"stopReason":"build broken","systemMessage":"see the log"}'`, false, func(t *testing.T, r Result) {
			if !r.Stop || r.StopReason != "build broken" || len(r.Messages) != 1 {
				t.Errorf("%+v", r)
			}
		}},
		{"the input arrives on stdin", "PreToolUse", `grep -q '"tool_name":"Bash"' || exit 2`, false, func(t *testing.T, r Result) {
			if r.Block {
				t.Errorf("%+v", r)
			}
		}},
		{"the project variables are set", "PreToolUse", `[ "$AGENT_PROJECT_DIR" = "$CLAUDE_PROJECT_DIR" ] && [ "$PWD" = "$AGENT_PROJECT_DIR" ] || exit 2`, false, func(t *testing.T, r Result) {
			if r.Block {
				t.Errorf("%+v", r)
			}
		}},
		{"no terminal", "PreToolUse", `tty -s && exit 2; exit 0`, false, func(t *testing.T, r Result) {
			if r.Block {
				t.Errorf("a hook had a terminal: %+v", r)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := set(t, config.HookHandler{Event: c.event, Command: c.command, FailClosed: c.fail})
			in := toolInput(c.event, "Bash")
			c.check(t, s.Run(context.Background(), in, nil))
		})
	}
}

// Handlers of one event run in parallel, and their answers merge in
// settings order: deny beats ask beats allow.
func TestParallelAndMerged(t *testing.T) {
	s, _ := set(t,
		config.HookHandler{Event: "PreToolUse", Command: `sleep 0.3; echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`},
		config.HookHandler{Event: "PreToolUse", Command: `sleep 0.3; echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"second"}}'`},
		config.HookHandler{Event: "PreToolUse", Command: `sleep 0.3; echo '{"hookSpecificOutput":{"permissionDecision":"ask"}}'`},
		config.HookHandler{Event: "PostToolUse", Command: `exit 2`},
	)
	start := time.Now()
	r := s.Run(context.Background(), toolInput("PreToolUse", "Bash"), nil)
	if d := time.Since(start); d > 800*time.Millisecond {
		t.Errorf("three 0.3 s handlers took %s: not in parallel", d)
	}
	if r.Permission != "deny" || r.PermissionReason != "second" || r.Ran != 3 || r.Block {
		t.Errorf("%+v", r)
	}
}

// An identical handler from two files runs once.
func TestIdenticalHandlersRunOnce(t *testing.T) {
	h := config.HookHandler{Event: "PreToolUse", Command: `echo x >> "$AGENT_PROJECT_DIR/count"`}
	h2 := h
	h2.File = "/home/u/.compat/settings.json"
	s, ws := set(t, h, h2)
	r := s.Run(context.Background(), toolInput("PreToolUse", "Bash"), nil)
	data, _ := os.ReadFile(filepath.Join(ws, "count"))
	if r.Ran != 1 || string(data) != "x\n" {
		t.Errorf("ran %d, count %q", r.Ran, data)
	}
}

// Bad handlers end bounded in time and memory.
func TestBoundedHandlers(t *testing.T) {
	cases := []struct {
		name, command string
		timeout       int
		check         func(t *testing.T, r Result, d time.Duration)
	}{
		{"a handler that never exits is killed at its timeout", "sleep 60", 1, func(t *testing.T, r Result, d time.Duration) {
			if d > 5*time.Second || len(r.Failures) != 1 || !strings.Contains(r.Failures[0].Err, "timed out") {
				t.Errorf("%s %+v", d, r)
			}
		}},
		{"its children go with it", "sleep 60 & sleep 60", 1, func(t *testing.T, r Result, d time.Duration) {
			if d > 5*time.Second {
				t.Errorf("took %s", d)
			}
		}},
		{"a daemon holding the pipes does not hold the hook", "(setsid sleep 60 &) ; echo done", 0, func(t *testing.T, r Result, d time.Duration) {
			if d > 4*time.Second || len(r.Failures) != 0 {
				t.Errorf("%s %+v", d, r)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := set(t, config.HookHandler{Event: "PreToolUse", Command: c.command, Timeout: c.timeout})
			start := time.Now()
			r := s.Run(context.Background(), toolInput("PreToolUse", "Bash"), nil)
			c.check(t, r, time.Since(start))
		})
	}
}

// 100 MB of output: read to its end, kept to 10,000 characters.
func TestHugeOutput(t *testing.T) {
	s, _ := set(t, config.HookHandler{Event: "UserPromptSubmit", Command: "head -c 100000000 /dev/zero | tr '\\0' a"})
	r := s.Run(context.Background(), Input{HookEventName: "UserPromptSubmit", Prompt: "p"}, nil)
	if len(r.Context) != 1 || len(r.Context[0]) > MaxOutput+100 || !strings.Contains(r.Context[0], "cut at 10,000") || len(r.Failures) != 0 {
		t.Errorf("context of %d bytes, %+v", len(r.Context), r.Failures)
	}
}

func TestCappedOutput(t *testing.T) {
	c := &capped{}
	for range 1000 {
		c.Write([]byte(strings.Repeat("é", 1000)))
	}
	s := c.String()
	if n := len([]rune(strings.TrimSuffix(s, "\n[output cut at 10,000 characters]"))); n != MaxOutput || !strings.HasSuffix(s, "cut at 10,000 characters]") {
		t.Errorf("%d characters kept", n)
	}
}

// Cancelling the turn kills the handlers.
func TestCancelKills(t *testing.T) {
	s, _ := set(t, config.HookHandler{Event: "PreToolUse", Command: "sleep 60"})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := s.Run(ctx, toolInput("PreToolUse", "Bash"), nil)
	if time.Since(start) > 3*time.Second || len(r.Failures) != 1 {
		t.Errorf("%+v after %s", r, time.Since(start))
	}
}

// The statusMessage shows while the handler runs.
func TestStatusMessage(t *testing.T) {
	s, _ := set(t, config.HookHandler{Event: "PreToolUse", Command: "true", StatusMessage: "Checking the command"})
	var got []string
	s.Run(context.Background(), toolInput("PreToolUse", "Bash"), func(m string) { got = append(got, m) })
	if strings.Join(got, "|") != "Checking the command|" {
		t.Errorf("status %q", got)
	}
}

// The exec form runs without a shell.
func TestExecForm(t *testing.T) {
	s, _ := set(t, config.HookHandler{Event: "PreToolUse", Command: "sh", Args: []string{"-c", "exit 2", "$(touch pwned)"}, HasArgs: true})
	r := s.Run(context.Background(), toolInput("PreToolUse", "Bash"), nil)
	if !r.Block {
		t.Errorf("%+v", r)
	}
}

// A session without handlers for an event does nothing.
func TestNoHandlers(t *testing.T) {
	var s *Set
	if s.Has("PreToolUse") || s.Run(context.Background(), toolInput("PreToolUse", "Bash"), nil).Ran != 0 {
		t.Error("a nil set ran something")
	}
	s2, _ := set(t, config.HookHandler{Event: "PostToolUse", Command: "exit 2"})
	if s2.Has("PreToolUse") || s2.Run(context.Background(), toolInput("PreToolUse", "Bash"), nil).Ran != 0 {
		t.Error("another event's handler ran")
	}
}

func TestShellWords(t *testing.T) {
	cases := []struct{ in, want string }{
		{`python3 .claude/hooks/check.py --strict`, "python3|.claude/hooks/check.py|--strict"},
		{`"$CLAUDE_PROJECT_DIR"/hooks/fmt.sh`, "$CLAUDE_PROJECT_DIR/hooks/fmt.sh"},
		{`bash 'my hooks/x.sh' && ./y.sh|tee log`, "bash|my hooks/x.sh|./y.sh|tee|log"},
		{`a\ b c`, "a b|c"},
	}
	for _, c := range cases {
		if got := strings.Join(shellWords(c.in), "|"); got != c.want {
			t.Errorf("shellWords(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
