//go:build unix

package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"agent/mcp/jsonrpc"
)

// The test binary doubles as the server process: with MCP_TEST_HELPER set,
// TestHelperProcess becomes a stdio server (or a misbehaving process) and
// exits.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv("MCP_TEST_HELPER")
	if mode == "" {
		return
	}
	fmt.Fprintf(os.Stderr, "ENV=%s\n", strings.Join(os.Environ(), ","))
	wd, _ := os.Getwd()
	fmt.Fprintf(os.Stderr, "CWD=%s\n", wd)
	serve := func() {
		var versions []string
		if v := os.Getenv("MCP_TEST_VERSIONS"); v != "" {
			versions = strings.Split(v, ",")
		}
		srv := newFakeServer(fakeConfig{versions: versions})
		conn, _ := srv.serveStream(jsonrpc.NewStream(os.Stdin, os.Stdout, jsonrpc.ReaderOptions{}))
		<-conn.Done()
	}
	switch mode {
	case "serve":
		serve()
	case "noise":
		fmt.Println("starting up...")
		serve()
	case "spam":
		chunk := strings.Repeat("e", 1000) + "\n"
		for i := 0; i < 200; i++ {
			os.Stderr.WriteString(chunk)
		}
		os.Stderr.WriteString("LAST LINE\n")
		serve()
	case "exit":
		fmt.Fprintln(os.Stderr, "fatal: no configuration")
		os.Exit(3)
	case "stubborn":
		// Ignores stdin's end and SIGTERM: only SIGKILL ends it.
		signal.Ignore(syscall.SIGTERM)
		select {}
	case "lingering":
		// Ignores stdin's end, dies on SIGTERM; starts a grandchild that
		// must die with it (the process group is signalled).
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = []string{"MCP_TEST_HELPER=sleep"}
		if err := cmd.Start(); err != nil {
			os.Exit(4)
		}
		fmt.Fprintf(os.Stderr, "GRANDCHILD=%d\n", cmd.Process.Pid)
		select {}
	case "sleep":
		time.Sleep(time.Minute)
	}
	os.Exit(0)
}

func helper(t *testing.T, mode string, extraEnv ...string) StdioOptions {
	t.Helper()
	return StdioOptions{
		Command: os.Args[0],
		Args:    []string{"-test.run=^TestHelperProcess$"},
		// The race detector's exit pause (1 s by default) would look like a
		// server that does not stop when its stdin closes.
		Env:          append([]string{"MCP_TEST_HELPER=" + mode, "GORACE=atexit_sleep_ms=0"}, extraEnv...),
		ShutdownWait: 300 * time.Millisecond,
	}
}

func TestStdioServer(t *testing.T) {
	for _, versions := range []string{"", "2025-11-25,2025-06-18"} {
		t.Run(versions, func(t *testing.T) {
			opts := helper(t, "serve", "MCP_TEST_VERSIONS="+versions)
			dir := t.TempDir()
			opts.Dir = dir
			tr, err := StartStdio(opts)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Connect(context.Background(), tr, ClientOptions{})
			if err != nil {
				t.Fatalf("Connect: %v (stderr: %s)", err, tr.Stderr())
			}
			want := Version20260728
			if versions != "" {
				want = Version20251125
			}
			if c.ProtocolVersion() != want {
				t.Errorf("version %q, want %q", c.ProtocolVersion(), want)
			}
			tools, err := c.ListTools(context.Background())
			if err != nil || len(tools) != 5 {
				t.Fatalf("tools = %d, %v", len(tools), err)
			}
			var steps int
			res, err := c.CallTool(context.Background(), "progress", nil, CallOptions{Progress: func(Progress) { steps++ }})
			if err != nil || res.Content[0].Text != "done" || steps != 3 {
				t.Fatalf("call = %+v, %v, %d steps", res, err, steps)
			}
			start := time.Now()
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			// Closing stdin suffices for a well-behaved server.
			if d := time.Since(start); d > 250*time.Millisecond {
				t.Errorf("Close took %v", d)
			}
			if err := tr.ExitErr(); err != nil {
				t.Errorf("exit: %v", err)
			}
			// Exactly the environment and directory given.
			stderr := tr.Stderr()
			if !strings.Contains(stderr, "ENV=MCP_TEST_HELPER=serve,GORACE=atexit_sleep_ms=0,MCP_TEST_VERSIONS="+versions+"\n") {
				t.Errorf("environment not exact: %s", firstLines(stderr))
			}
			if !strings.Contains(stderr, "CWD="+dir+"\n") {
				t.Errorf("working directory: %s", firstLines(stderr))
			}
		})
	}
}

func firstLines(s string) string {
	lines := strings.SplitN(s, "\n", 3)
	return strings.Join(lines[:min(2, len(lines))], " | ")
}

func TestStdioNoiseOnStdout(t *testing.T) {
	var diags []error
	tr, err := StartStdio(helper(t, "noise"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Connect(context.Background(), tr, ClientOptions{OnDiagnostic: func(err error) { diags = append(diags, err) }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ListTools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(diags) == 0 || !errors.Is(diags[0], jsonrpc.ErrParse) {
		t.Errorf("diagnostics %v", diags)
	}
}

func TestStdioServerExits(t *testing.T) {
	tr, err := StartStdio(helper(t, "exit"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Connect(context.Background(), tr, ClientOptions{})
	if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("err = %v", err)
	}
	<-tr.Exited()
	if !strings.Contains(tr.Stderr(), "fatal: no configuration") {
		t.Errorf("stderr %q", tr.Stderr())
	}
}

func TestStdioStderrBounded(t *testing.T) {
	opts := helper(t, "spam")
	opts.StderrLimit = 4096
	tr, err := StartStdio(opts)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Connect(context.Background(), tr, ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	s := tr.Stderr()
	if len(s) > 4096+64 || !strings.HasSuffix(s, "LAST LINE\n") || !strings.HasPrefix(s, "[earlier stderr output dropped]") {
		t.Errorf("stderr of %d bytes: %q...", len(s), s[:min(80, len(s))])
	}
}

func TestStdioShutdownEscalates(t *testing.T) {
	tr, err := StartStdio(helper(t, "stubborn"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let it install its signal handling
	start := time.Now()
	tr.Close()
	d := time.Since(start)
	if d < 600*time.Millisecond || d > 10*time.Second { // the upper bound only catches a wait of another kind; a loaded machine is slow
		t.Errorf("Close took %v, want about two waits of 300ms", d)
	}
	var ee *exec.ExitError
	if err := tr.ExitErr(); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("exit = %v, want killed", err)
	}
	tr.Close() // idempotent
}

func TestStdioShutdownKillsGroup(t *testing.T) {
	tr, err := StartStdio(helper(t, "lingering"))
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	waitFor(t, func() bool {
		for _, l := range strings.Split(tr.Stderr(), "\n") {
			if v, ok := strings.CutPrefix(l, "GRANDCHILD="); ok {
				pid, _ = strconv.Atoi(v)
			}
		}
		return pid != 0
	})
	tr.Close()
	var ee *exec.ExitError
	if err := tr.ExitErr(); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("exit = %v, want SIGTERM", err)
	}
	// The grandchild got SIGTERM too; once reaped by init it is gone.
	waitFor(t, func() bool {
		return syscall.Kill(pid, 0) == syscall.ESRCH || isZombie(pid)
	})
}

func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}

func TestStdioStartErrors(t *testing.T) {
	if _, err := StartStdio(StdioOptions{}); err == nil {
		t.Error("empty command accepted")
	}
	if _, err := StartStdio(StdioOptions{Command: "/nonexistent/server"}); err == nil {
		t.Error("missing executable started")
	}
	// No shell: metacharacters are part of the command name.
	if _, err := StartStdio(StdioOptions{Command: "true; echo pwned"}); err == nil {
		t.Error("a shell command line ran")
	}
}

func TestStdioWriteAfterClose(t *testing.T) {
	tr, err := StartStdio(helper(t, "serve"))
	if err != nil {
		t.Fatal(err)
	}
	tr.Close()
	m, _ := jsonrpc.NewNotification("x", nil)
	if err := tr.Write(context.Background(), m); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}
	if _, err := tr.Read(); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
}
