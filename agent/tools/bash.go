package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

const bashSchema = `{"type":"object","properties":{` +
	`"command":{"type":"string","minLength":1,"description":"The shell command to run in the workspace"},` +
	`"timeout":{"type":"integer","minimum":1,"maximum":600000,"description":"Time limit in milliseconds (default 120000, at most 600000)"},` +
	`"description":{"type":"string","description":"A few words on what the command does, shown to the user"}},` +
	`"required":["command"],"additionalProperties":false}`

// pipeGrace is how long a finished or killed command's output pipes stay
// open for processes that left its group but still hold them.
const pipeGrace = 2 * time.Second

type bashTool struct {
	ws    string
	shell string
	env   []string
	lim   Limits
	sb    *BashSandbox // nil: commands run unconfined
}

type bashArgs struct {
	Command       string `json:"command"`
	Timeout       int64  `json:"timeout"`
	Description   string `json:"description"`
	Sandbox       string `json:"sandbox"`
	Justification string `json:"justification"`
	Needs         string `json:"needs"`
}

func (t *bashTool) Spec() Spec {
	desc := fmt.Sprintf("Run a shell command in the workspace folder with %s; each call starts afresh there. "+
		"Stdout and stderr are returned together (long output keeps its start and end) with the exit code. "+
		"Default time limit %s, at most %s; on timeout the whole process group is killed. Stdin is empty.",
		t.shell, t.lim.BashTimeout, t.lim.BashMaxTimeout)
	schema := bashSchema
	if t.confining() {
		desc += " " + t.sb.describe()
		if t.sb.Escalation {
			schema = bashEscalationSchema
		}
	}
	return Spec{Name: "Bash", Description: desc, Schema: json.RawMessage(schema), Risk: RiskExecute}
}

func (t *bashTool) Target(args json.RawMessage) (Target, error) {
	var a bashArgs
	if err := decodeToolArgs(args, &a); err != nil {
		return Target{}, err
	}
	if strings.TrimSpace(a.Command) == "" {
		return Target{}, badArgs("the command is empty")
	}
	tg := Target{Kind: TargetCommand, Value: a.Command}
	if !t.confining() || t.sb.excluded(a.Command) {
		return tg, nil
	}
	if a.Sandbox == "escalate" {
		needs, err := t.sb.checkEscalation(a)
		if err != nil {
			return Target{}, err
		}
		tg.Escalation, tg.Justification = needs, a.Justification
		return tg, nil
	}
	tg.Sandboxed = t.sb.Box.Support().Filesystem()
	return tg, nil
}

func (t *bashTool) Run(ctx context.Context, args json.RawMessage) Result {
	var a bashArgs
	if err := decodeToolArgs(args, &a); err != nil {
		return errorResult("%v", err)
	}
	if strings.TrimSpace(a.Command) == "" {
		return errorResult("the command is empty")
	}
	if strings.IndexByte(a.Command, 0) >= 0 {
		return errorResult("the command contains a NUL byte")
	}
	timeout := t.lim.BashTimeout
	if a.Timeout > 0 {
		timeout = min(time.Duration(a.Timeout)*time.Millisecond, t.lim.BashMaxTimeout)
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := &outputCapture{keep: t.lim.Output / 2, live: outputSink(ctx)}
	build := func() *exec.Cmd {
		cmd := exec.CommandContext(runCtx, t.shell, "-c", a.Command)
		cmd.Dir = t.ws
		cmd.Env = t.env
		// Its own process group, so a timeout or an abort kills everything
		// the command started, not just the shell (a confined command
		// gets a session of its own, which is a group too).
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = pipeGrace
		cmd.Stdout, cmd.Stderr = out, out
		return cmd
	}
	call := &bashCall{ctx: ctx, runCtx: runCtx, timeout: timeout, out: out, start: time.Now()}
	if t.confining() && !t.sb.excluded(a.Command) {
		return t.runConfined(call, a, build)
	}
	cmd := build()
	err := cmd.Run()
	return t.result(call, cmd, err, nil)
}

// bashCall is one call's context, limits and output.
type bashCall struct {
	ctx, runCtx context.Context
	timeout     time.Duration
	out         *outputCapture
	start       time.Time
}

// result turns a finished command into the tool's result; extra are the
// sandbox's lines for it (docs/sandbox.md, "When something is refused").
func (t *bashTool) result(call *bashCall, cmd *exec.Cmd, err error, extra []string) Result {
	elapsed := time.Since(call.start).Round(time.Millisecond)
	runCtx, ctx, timeout := call.runCtx, call.ctx, call.timeout
	text := call.out.String()
	if len(extra) > 0 {
		text = withNewline(text) + strings.Join(extra, "\n") + "\n"
	}
	var exitErr *exec.ExitError
	switch {
	case err != nil && cmd.ProcessState == nil:
		return errorResult("could not start %s: %v", t.shell, err)
	case runCtx.Err() != nil && ctx.Err() != nil:
		return errorResult("%s[interrupted after %s; the process group was killed]", withNewline(text), elapsed)
	case runCtx.Err() != nil:
		return errorResult("%s[timed out after %s; the process group was killed]", withNewline(text), timeout)
	case err == nil || errors.Is(err, exec.ErrWaitDelay):
		if cmd.ProcessState.ExitCode() == 0 {
			if text == "" {
				text = "(no output)"
			}
			return Result{Content: text}
		}
	case !errors.As(err, &exitErr):
		return errorResult("%s[%v]", withNewline(text), err)
	}
	st := cmd.ProcessState
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return errorResult("%s[killed by signal %s]", withNewline(text), ws.Signal())
	}
	return errorResult("%s[exit code %d]", withNewline(text), st.ExitCode())
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// outputCapture keeps the first and the last keep bytes of a command's output
// and counts what falls between, so a command that prints gigabytes costs
// bounded memory and the model still sees how it started and ended.
type outputCapture struct {
	mu    sync.Mutex
	keep  int
	head  []byte
	tail  []byte
	total int64
	live  func([]byte) // the runtime's view of the output as it comes; may be nil
}

func (c *outputCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live != nil {
		c.live(p)
	}
	c.total += int64(len(p))
	n := len(p)
	if room := c.keep - len(c.head); room > 0 {
		take := min(room, len(p))
		c.head = append(c.head, p[:take]...)
		p = p[take:]
	}
	if len(p) > 0 {
		c.tail = append(c.tail, p...)
		if len(c.tail) > 2*c.keep {
			c.tail = append(c.tail[:0], c.tail[len(c.tail)-c.keep:]...)
		}
	}
	return n, nil
}

func (c *outputCapture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := c.tail
	if len(tail) > c.keep {
		tail = tail[len(tail)-c.keep:]
	}
	cut := c.total - int64(len(c.head)) - int64(len(tail))
	if cut == 0 {
		return textOf(append(append([]byte(nil), c.head...), tail...))
	}
	return textOf(c.head) + fmt.Sprintf("\n[… output truncated: %d of %d bytes cut from the middle …]\n", cut, c.total) + textOf(tail)
}
