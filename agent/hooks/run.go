package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"agent/internal/quote"
)

// Execution limits (docs/reference/runtime.md, "Hooks").
const (
	// DefaultTimeout is a handler's time limit unless it sets one.
	DefaultTimeout = 600 * time.Second
	// PromptTimeout is UserPromptSubmit's default: the user waits.
	PromptTimeout = 30 * time.Second
	// MaxOutput is how many characters of stdout and of stderr are read.
	MaxOutput = 10000
	// pipeGrace is how long the output pipes stay open after the handler
	// exits, for a process it left behind (a daemon) that still holds them.
	pipeGrace = time.Second
)

// Result is what the handlers of one event decided, in settings order.
type Result struct {
	// Block: an exit code 2, a "decision": "block", a permission decision
	// "deny", or a failure of a handler that fails closed. Reason says
	// why (stderr of exit 2, the JSON's reason).
	Block  bool
	Reason string
	// Permission is "allow", "deny" or "ask" from PreToolUse, or the
	// behavior of PermissionRequest ("allow", "deny"); "" when no handler
	// said.
	Permission       string
	PermissionReason string
	// UpdatedInput replaces the tool call's arguments (PreToolUse,
	// PermissionRequest), from the first handler that gave one.
	UpdatedInput json.RawMessage
	// Context is what handlers add to the conversation: additionalContext,
	// and the plain stdout of UserPromptSubmit and SessionStart.
	Context []string
	// Stop: a handler said "continue": false; StopReason is shown to the
	// user.
	Stop       bool
	StopReason string
	// Messages are systemMessage texts and unknown-field notes for the
	// user.
	Messages []string
	// Failures are the handlers that failed (shown to the user).
	Failures []Failure
	// Ran is how many handlers ran.
	Ran int
}

// Failure is a handler that failed: an exit code other than 0 and 2, a
// timeout, a program that would not start, invalid JSON.
type Failure struct {
	Handler string // its command, cut for display
	Err     string
}

func (f Failure) String() string { return fmt.Sprintf("hook %s: %s", f.Handler, f.Err) }

// Status is called with a handler's statusMessage while it runs ("" when
// all have ended), for the UI's spinner.
type Status func(msg string)

// Run runs the active handlers of in's event that its value matches (a
// tool's name — also as mcp__<server>__<tool> for an MCP tool, whose name
// here is <server>__<tool>, and as Task for the Agent tool — a session
// source, a compaction trigger),
// each identical handler once, all in parallel, and merges what they
// decided. ctx ending kills them. A Set without handlers for the event
// returns at once without building anything.
func (s *Set) Run(ctx context.Context, in Input, status Status) Result {
	if !s.Has(in.HookEventName) {
		return Result{}
	}
	value := in.matchValue()
	values := []string{value}
	switch {
	case in.ToolName != "" && strings.Contains(value, "__"):
		values = append(values, "mcp__"+value)
	case in.ToolName == "Agent":
		values = append(values, "Task") // Claude Code's older name
	}
	s.mu.Lock()
	var run []*Handler
	seen := map[string]bool{}
	for _, h := range s.handlers {
		if h.State != Active || h.Event != in.HookEventName || !h.matches(values...) {
			continue
		}
		key := h.Type + "\x00" + h.Command + "\x00" + strings.Join(h.Args, "\x00")
		if seen[key] {
			continue // an identical handler from another file runs once
		}
		seen[key] = true
		run = append(run, h)
	}
	s.mu.Unlock()
	if len(run) == 0 {
		return Result{}
	}
	payload, err := json.Marshal(in)
	if err != nil {
		return Result{Failures: []Failure{{Handler: in.HookEventName, Err: err.Error()}}}
	}
	if status != nil {
		for _, h := range run {
			if h.StatusMessage != "" {
				status(h.StatusMessage)
				break
			}
		}
		defer status("")
	}
	outs := make([]outcome, len(run))
	var wg sync.WaitGroup
	for i, h := range run {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = s.runOne(ctx, h, in.HookEventName, payload)
		}()
	}
	wg.Wait()
	return merge(in.HookEventName, run, outs)
}

// outcome is how one handler ended.
type outcome struct {
	code           int // -1: it did not exit normally (see err)
	stdout, stderr string
	err            error
}

// runOne runs a handler: its own session and process group (no terminal),
// the input on stdin then EOF, the workspace as its folder, the project
// variables set; the group killed at the timeout or when ctx ends.
func (s *Set) runOne(ctx context.Context, h *Handler, event string, payload []byte) outcome {
	timeout := DefaultTimeout
	if event == "UserPromptSubmit" {
		timeout = PromptTimeout
	}
	if h.Timeout > 0 {
		timeout = time.Duration(h.Timeout) * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var cmd *exec.Cmd
	if h.HasArgs {
		cmd = exec.CommandContext(ctx, h.Command, h.Args...)
	} else {
		cmd = exec.CommandContext(ctx, shell(), "-c", h.Command)
	}
	cmd.Dir = s.opts.Workspace
	env := s.opts.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(append([]string(nil), env...), "AGENT_PROJECT_DIR="+s.opts.Workspace, "CLAUDE_PROJECT_DIR="+s.opts.Workspace)
	cmd.Stdin = bytes.NewReader(payload)
	stdout, stderr := &capped{}, &capped{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = pipeGrace
	err := cmd.Run()
	if cmd.Process != nil {
		// Whatever the handler left in its group goes with it.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	o := outcome{code: -1, stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		o.err = fmt.Errorf("timed out after %s (its process group was killed)", timeout)
	case ctx.Err() != nil:
		o.err = errors.New("cancelled")
	case err == nil || errors.Is(err, exec.ErrWaitDelay):
		o.code = cmd.ProcessState.ExitCode()
	case errors.As(err, &exit):
		o.code = exit.ExitCode()
		if o.code < 0 {
			o.err = fmt.Errorf("ended by %s", exit.ProcessState)
		}
	default:
		o.err = fmt.Errorf("could not start: %v", err)
	}
	return o
}

// shell is the shell of the command form: bash, as Claude Code uses, else
// sh.
var shell = sync.OnceValue(func() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/sh"
})

// capped keeps the first MaxOutput characters written to it and swallows
// the rest, so that a handler printing without end neither blocks nor
// fills memory.
type capped struct {
	mu  sync.Mutex
	b   []byte
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := MaxOutput*utf8.UTFMax - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(len(p), room)]...)
	}
	if len(p) > 0 && len(c.b) >= MaxOutput*utf8.UTFMax {
		c.cut = true
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := string(c.b)
	if utf8.RuneCountInString(s) > MaxOutput || c.cut {
		r := []rune(s)
		s = string(r[:min(len(r), MaxOutput)]) + "\n[output cut at 10,000 characters]"
	}
	return s
}

// hookOutput is a handler's JSON answer (Claude Code's fields).
type hookOutput struct {
	Continue       *bool  `json:"continue"`
	StopReason     string `json:"stopReason"`
	SuppressOutput bool   `json:"suppressOutput"`
	SystemMessage  string `json:"systemMessage"`
	Decision       string `json:"decision"`
	Reason         string `json:"reason"`
	Specific       *struct {
		HookEventName            string          `json:"hookEventName"`
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
		AdditionalContext        string          `json:"additionalContext"`
		Decision                 *struct {
			Behavior     string          `json:"behavior"`
			UpdatedInput json.RawMessage `json:"updatedInput"`
			Message      string          `json:"message"`
			Interrupt    bool            `json:"interrupt"`
		} `json:"decision"`
	} `json:"hookSpecificOutput"`
}

func knownOutputField(k string) bool {
	switch k {
	case "continue", "stopReason", "suppressOutput", "systemMessage", "decision", "reason", "hookSpecificOutput":
		return true
	}
	return false
}

func knownSpecificField(k string) bool {
	switch k {
	case "hookEventName", "permissionDecision", "permissionDecisionReason", "updatedInput", "additionalContext", "decision":
		return true
	}
	return false
}

// plainContext: the events whose plain stdout (exit 0, not JSON) is
// context for the model.
func plainContext(event string) bool {
	return event == "UserPromptSubmit" || event == "SessionStart"
}

// merge reads each handler's outcome in settings order.
func merge(event string, run []*Handler, outs []outcome) Result {
	var r Result
	r.Ran = len(run)
	block := func(reason string) {
		r.Block = true
		if reason != "" {
			if r.Reason != "" {
				r.Reason += "\n"
			}
			r.Reason += reason
		}
	}
	for i, o := range outs {
		h := run[i]
		name := quote.Cut(displayCommand(h))
		fail := func(msg string) {
			r.Failures = append(r.Failures, Failure{Handler: name, Err: msg})
			if h.FailClosed {
				block(fmt.Sprintf("the hook %s failed (it fails closed): %s", name, msg))
			}
		}
		switch {
		case o.err != nil:
			fail(o.err.Error())
		case o.code == 2:
			reason := strings.TrimSpace(o.stderr)
			if reason == "" {
				reason = fmt.Sprintf("blocked by the hook %s", name)
			}
			block(reason)
		case o.code != 0:
			msg := fmt.Sprintf("exit code %d", o.code)
			if e := strings.TrimSpace(o.stderr); e != "" {
				msg += ": " + firstLines(e, 3)
			}
			fail(msg)
		default:
			mergeJSON(event, h, o, &r, fail, block)
		}
	}
	return r
}

// mergeJSON reads an exit-0 answer: JSON when stdout holds an object,
// otherwise plain text (context for UserPromptSubmit and SessionStart).
func mergeJSON(event string, h *Handler, o outcome, r *Result, fail func(string), block func(string)) {
	out := strings.TrimSpace(o.stdout)
	if !strings.HasPrefix(out, "{") {
		if out != "" && plainContext(event) {
			r.Context = append(r.Context, out)
		}
		return
	}
	var ho hookOutput
	if err := json.Unmarshal([]byte(out), &ho); err != nil {
		fail("its output is not valid JSON: " + quote.Cut(err.Error()))
		return
	}
	r.Messages = append(r.Messages, unknownFields(h, out)...)
	if ho.SystemMessage != "" {
		r.Messages = append(r.Messages, ho.SystemMessage)
	}
	if ho.Continue != nil && !*ho.Continue {
		r.Stop = true
		if r.StopReason == "" {
			r.StopReason = ho.StopReason
		}
	}
	switch ho.Decision {
	case "block":
		block(ho.Reason)
	case "approve": // PreToolUse's older form of allow
		if r.Permission == "" {
			r.Permission, r.PermissionReason = "allow", ho.Reason
		}
	}
	sp := ho.Specific
	if sp == nil {
		return
	}
	if sp.AdditionalContext != "" {
		r.Context = append(r.Context, sp.AdditionalContext)
	}
	decide := func(p, reason string, updated json.RawMessage) {
		// deny beats ask beats allow, whichever handler said it.
		rank := map[string]int{"": 0, "allow": 1, "ask": 2, "deny": 3}
		if rank[p] > rank[r.Permission] {
			r.Permission, r.PermissionReason = p, reason
		}
		if len(updated) > 0 && r.UpdatedInput == nil && p != "deny" {
			r.UpdatedInput = updated
		}
	}
	switch event {
	case "PreToolUse":
		switch sp.PermissionDecision {
		case "allow", "ask", "deny":
			decide(sp.PermissionDecision, sp.PermissionDecisionReason, sp.UpdatedInput)
		case "":
			if len(sp.UpdatedInput) > 0 && r.UpdatedInput == nil {
				r.UpdatedInput = sp.UpdatedInput
			}
		default:
			fail("permissionDecision must be allow, deny or ask, not " + quote.Q(sp.PermissionDecision))
		}
	case "PermissionRequest":
		if d := sp.Decision; d != nil {
			switch d.Behavior {
			case "allow", "deny":
				decide(d.Behavior, d.Message, d.UpdatedInput)
			default:
				fail("decision.behavior must be allow or deny, not " + quote.Q(d.Behavior))
			}
		}
	}
}

// unknownFields notes the fields of an answer this agent does not read.
func unknownFields(h *Handler, out string) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal([]byte(out), &top) != nil {
		return nil
	}
	var unknown []string
	for k, v := range top {
		if !knownOutputField(k) {
			unknown = append(unknown, k)
			continue
		}
		if k == "hookSpecificOutput" {
			var sp map[string]json.RawMessage
			if json.Unmarshal(v, &sp) == nil {
				for sk := range sp {
					if !knownSpecificField(sk) {
						unknown = append(unknown, "hookSpecificOutput."+sk)
					}
				}
			}
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	for i, u := range unknown {
		unknown[i] = quote.Q(u)
	}
	return []string{fmt.Sprintf("hook %s: fields not read here, ignored: %s", quote.Cut(displayCommand(h)), strings.Join(unknown, ", "))}
}

func displayCommand(h *Handler) string {
	if !h.HasArgs {
		return h.Command
	}
	return strings.Join(append([]string{h.Command}, h.Args...), " ")
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, " ")
}
