package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func newTestBash(t *testing.T, opts Options) (string, Tool) {
	t.Helper()
	if opts.Workspace == "" {
		opts.Workspace = realTempDir(t)
	}
	return opts.Workspace, Builtin(opts)[5]
}

func TestBash(t *testing.T) {
	ws, bash := newTestBash(t, Options{Env: []string{"FOO=bar", "PATH=" + os.Getenv("PATH")}})
	for _, tc := range []struct {
		name      string
		cmd, want string
		isErr     bool
	}{
		{"both streams and the exit code", "echo out; echo err >&2; exit 3", "out\nerr\n[exit code 3]", true},
		{"runs in the workspace", "pwd", ws + "\n", false},
		{"no output", "true", "(no output)", false},
		{"environment from the options", "echo $FOO", "bar\n", false},
		{"last line without a newline", "printf 'no newline'; exit 1", "no newline\n[exit code 1]", true},
		{"killed by a signal", "kill -9 $$", "[killed by signal killed]", true},
		{"stdin is empty", "cat", "(no output)", false}, // stdin is empty, not the terminal
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runTool(t, bash, `{"command":`+strconv.Quote(tc.cmd)+`}`)
			if res.Content != tc.want || res.IsError != tc.isErr {
				t.Errorf("%s:\n got %q (error %v)\nwant %q", tc.cmd, res.Content, res.IsError, tc.want)
			}
		})
	}
	tgt, err := bash.Target(json.RawMessage(`{"command":"go test ./...","description":"run tests"}`))
	if err != nil || tgt != (Target{Kind: TargetCommand, Value: "go test ./..."}) {
		t.Errorf("target %+v %v", tgt, err)
	}
	if _, err := bash.Target(json.RawMessage(`{"command":"  "}`)); !errors.Is(err, ErrBadArguments) {
		t.Errorf("empty command target: %v", err)
	}
}

func TestBashOutputBounded(t *testing.T) {
	_, bash := newTestBash(t, Options{Limits: Limits{Output: 100}})
	res := runTool(t, bash, `{"command":"seq 1 100000"}`)
	if !strings.HasPrefix(res.Content, "1\n2\n3\n") || !strings.HasSuffix(res.Content, "99999\n100000\n") {
		t.Errorf("head or tail lost: %q", res.Content)
	}
	if !strings.Contains(res.Content, "bytes cut from the middle") || len(res.Content) > 250 {
		t.Errorf("%d bytes: %q", len(res.Content), res.Content)
	}
}

// alive reports whether a process still runs (a zombie does not count).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: trust kill
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}

func waitDead(t *testing.T, pidFile string) {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("background process %d survived", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBashTimeoutKillsGroup(t *testing.T) {
	ws, bash := newTestBash(t, Options{})
	start := time.Now()
	// A second is long enough for bash to start and print under a loaded
	// machine; the check on the time taken is for a hang, not speed.
	res := runTool(t, bash, `{"command":"sleep 30 & echo $! > bg.pid; echo started; sleep 30","timeout":1000}`)
	if !res.IsError || res.Content != "started\n[timed out after 1s; the process group was killed]" {
		t.Errorf("%+v", res)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %s", d)
	}
	waitDead(t, ws+"/bg.pid")
}

func TestBashMaxTimeout(t *testing.T) {
	_, bash := newTestBash(t, Options{Limits: Limits{BashMaxTimeout: 200 * time.Millisecond}})
	res := runTool(t, bash, `{"command":"sleep 5","timeout":600000}`)
	if res.Content != "[timed out after 200ms; the process group was killed]" {
		t.Errorf("%+v", res)
	}
	// The default is capped by the maximum too.
	res = runTool(t, bash, `{"command":"sleep 5"}`)
	if res.Content != "[timed out after 200ms; the process group was killed]" {
		t.Errorf("%+v", res)
	}
}

func TestBashCancelKillsGroup(t *testing.T) {
	ws, bash := newTestBash(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	res := bash.Run(ctx, json.RawMessage(`{"command":"(sleep 30; echo never) & echo $! > bg.pid; wait"}`))
	if !res.IsError || !strings.HasPrefix(res.Content, "[interrupted after ") || !strings.HasSuffix(res.Content, "; the process group was killed]") {
		t.Errorf("%+v", res)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s", d)
	}
	waitDead(t, ws+"/bg.pid")
}

func TestBashLingeringChildDoesNotHang(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	_, bash := newTestBash(t, Options{})
	start := time.Now()
	// A child that leaves the group and keeps the output pipe open.
	res := runTool(t, bash, `{"command":"setsid sleep 30 & echo done"}`)
	if res.Content != "done\n" {
		t.Errorf("%+v", res)
	}
	if d := time.Since(start); d > pipeGrace+2*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestOutputCapture(t *testing.T) {
	c := &outputCapture{keep: 4}
	for _, s := range []string{"ab", "cdefgh", "ijklmnopqrstuvwxyz", "0123"} {
		c.Write([]byte(s))
	}
	if got := c.String(); got != "abcd\n[… output truncated: 22 of 30 bytes cut from the middle …]\n0123" {
		t.Errorf("%q", got)
	}
	c = &outputCapture{keep: 4}
	c.Write([]byte("abcdefgh"))
	if got := c.String(); got != "abcdefgh" {
		t.Errorf("%q", got)
	}
}
