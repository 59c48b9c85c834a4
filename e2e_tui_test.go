package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"agent/internal/fakemodel"
	"agent/providers/builtin"
)

// The interactive session with stdout not a terminal (the e2e runner pipes
// it, with TERM=dumb) is the plain fallback: the prompt from the argument,
// then one prompt per stdin line (docs/reference/cli.md, "The interactive
// session").
func TestE2EInteractivePlainFallback(t *testing.T) {
	s, srv := printSandbox(t,
		fakemodel.Reply{Text: "first \x1b[31manswer\x1b[0m"},
		fakemodel.Reply{Text: "second answer"},
		fakemodel.Reply{Text: "third"})
	r := s.run("line two\n\n/help\nline three\n", "the first prompt")
	if r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	// Model text is sanitised: no ESC reaches the output.
	if strings.Contains(r.Stdout, "\x1b") || !strings.Contains(r.Stdout, "first [31manswer[0m\nsecond answer\n") || !strings.HasSuffix(r.Stdout, "third\n") {
		t.Fatalf("stdout %q", r.Stdout)
	}
	if !strings.Contains(r.Stdout, "/mcp status") { // the /help output
		t.Fatalf("no /help output: %q", r.Stdout)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || !strings.Contains(string(reqs[0]), "the first prompt") || !strings.Contains(string(reqs[2]), "line three") {
		t.Fatalf("%d requests", len(reqs))
	}
	// One conversation: the third request carries the first exchange.
	if !strings.Contains(string(reqs[2]), "second answer") {
		t.Fatalf("the turns do not share the session: %s", reqs[2])
	}
}

func TestE2EInteractivePlainExitAndCommands(t *testing.T) {
	s, srv := printSandbox(t, fakemodel.Reply{Text: "never"})
	r := s.run("/help\n/mcp\n/keybindings\n/nope\n/exit\nnot sent\n")
	if r.Code != 0 || len(srv.Requests()) != 0 {
		t.Fatalf("%+v (%d requests)", r, len(srv.Requests()))
	}
	for _, cmd := range []string{"/init ", "/memory ", "/memory reload ", "/context "} {
		if !strings.Contains(r.Stdout, "  "+cmd) {
			t.Errorf("/help does not list %s:\n%s", cmd, r.Stdout)
		}
	}
	if !strings.Contains(r.Stdout, "No MCP servers are defined.") || !strings.Contains(r.Stdout, "Created "+s.Home+"/.agent/keybindings.json") {
		t.Fatalf("stdout %q", r.Stdout)
	}
	if !strings.Contains(r.Stderr, "unknown command /nope") {
		t.Fatalf("stderr %q", r.Stderr)
	}
}

func TestE2EInteractivePlainToolDenied(t *testing.T) {
	// Nobody can answer a permission prompt in the plain fallback: the
	// call is denied naming the rule, and the turn goes on.
	s, _ := printSandbox(t,
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Bash", Args: `{"command":"touch x"}`}}},
		fakemodel.Reply{Text: "could not run it"})
	s.askForBash()
	r := s.run("", "make a file")
	if r.Code != 0 || r.Stdout != "could not run it\n" {
		t.Fatalf("%+v", r)
	}
	if !strings.Contains(r.Stderr, "⚙ Bash(command: touch x)") || !strings.Contains(r.Stderr, "Bash(touch x)") {
		t.Fatalf("stderr %q", r.Stderr)
	}
}

func TestE2EInteractiveUntrustedAndUsage(t *testing.T) {
	s := newSandbox(t)
	srv := fakemodel.New(fakemodel.Reply{Text: "user settings only"})
	t.Cleanup(srv.Close)
	s.write("~/.agent/settings.json", `{"defaultModel": {"provider": "local", "model": "m"}, "providers": {"local": {"baseURL": "`+srv.URL()+`"}}}`)
	// Project settings that would break the start if they were read.
	s.write(".agent/settings.json", `{"defaultModel": {"provider": "reasoning"}}`)
	r := s.run("", "hi there")
	if r.Code != 0 || r.Stdout != "user settings only\n" || !strings.Contains(r.Stderr, "not trusted") {
		t.Fatalf("%+v", r)
	}
	for _, args := range [][]string{
		{"--external-event-port", "9000"},
		{"--output-format", "json", "x y"},
		{"--permission-mode", "yolo"},
		{"a b", "c d"},
		{"bogus"},
	} {
		r := s.run("", args...)
		if r.Code != 2 || len(strings.Split(strings.TrimSpace(r.Stderr), "\n")) != 1 {
			t.Errorf("%v: %+v", args, r)
		}
	}
	if r := s.run("", "--external-event-port", "9000"); !strings.Contains(r.Stderr, "need at least one --external-event-grant") {
		t.Errorf("%+v", r)
	}
}

// openPTY opens a pseudo-terminal pair of 30×100 with the standard
// library only.
func openPTY(t testing.TB) (master, slave *os.File) { return openPTYSize(t, 30, 100) }

// openPTYSize opens a pseudo-terminal pair of rows×cols.
func openPTYSize(t testing.TB, rows, cols uint16) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	ioctl := func(req uint, arg unsafe.Pointer) error {
		sc, _ := m.SyscallConn()
		var errno syscall.Errno
		sc.Control(func(fd uintptr) { _, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(req), uintptr(arg)) })
		if errno != 0 {
			return errno
		}
		return nil
	}
	var unlock int32
	var n uint32
	if ioctl(syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)) != nil || ioctl(syscall.TIOCGPTN, unsafe.Pointer(&n)) != nil {
		t.Skip("pty ioctls refused")
	}
	ws := struct{ row, col, x, y uint16 }{row: rows, col: cols}
	ioctl(syscall.TIOCSWINSZ, unsafe.Pointer(&ws))
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("pts: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// ptyOutput accumulates what the program writes to the terminal.
type ptyOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *ptyOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// waitFor polls the output until it contains s (the program runs on its
// own; this bounds a hang, it does not time anything).
func (o *ptyOutput) waitFor(t testing.TB, s string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(o.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("never saw %q in %q", s, o.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitForMore waits until s shows more than n times.
func (o *ptyOutput) waitForMore(t testing.TB, s string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(o.String(), s) <= n {
		if time.Now().After(deadline) {
			t.Fatalf("never saw %q more than %d times in %q", s, n, o.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestE2ETerminalUI runs the binary on a pseudo-terminal as its
// controlling terminal: the trust question, a streamed answer, a
// permission prompt, Ctrl-C twice (exit 130) and the terminal restored.
func TestE2ETerminalUI(t *testing.T) {
	s := newSandbox(t)
	srv := fakemodel.New(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Bash", Args: `{"command":"echo hi > made.txt"}`}}},
		fakemodel.Reply{Text: "Made **the** file."})
	t.Cleanup(srv.Close)
	s.write("~/.agent/settings.json", `{"defaultModel": {"provider": "local", "model": "fake-model"}, "providers": {"local": {"baseURL": "`+srv.URL()+`"}}}`)
	s.askForBash()
	m, slave := openPTY(t)
	cmd := exec.Command(agentBinary(t))
	cmd.Dir = s.Work
	cmd.Env = append([]string{"HOME=" + s.Home, "PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "NO_COLOR=1"}, s.Env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	out := &ptyOutput{}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := m.Read(b)
			out.mu.Lock()
			out.buf.Write(b[:n])
			out.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	out.waitFor(t, "Trust this workspace?")
	if !strings.Contains(out.String(), "\x1b[?2026h") || !strings.Contains(out.String(), "\x1b[?1049h") {
		t.Fatalf("no synchronized output or alternate screen: %q", out.String())
	}
	m.Write([]byte("y"))
	out.waitFor(t, "Type a prompt")
	m.Write([]byte("make a file"))
	out.waitFor(t, "make a file")
	m.Write([]byte("\r"))
	out.waitFor(t, "Allow ")
	out.waitFor(t, "echo hi > made.txt")
	m.Write([]byte("y"))
	out.waitFor(t, "file.")
	if b, err := os.ReadFile(filepath.Join(s.Work, "made.txt")); err != nil || string(b) != "hi\n" {
		t.Fatalf("the allowed command did not run: %q %v", b, err)
	}
	if strings.Contains(out.String(), "\x1b[0;3") { // a colour under NO_COLOR
		t.Fatalf("colour written under NO_COLOR")
	}
	m.Write([]byte("\x03"))
	out.waitFor(t, "Ctrl-C again")
	m.Write([]byte("\x03"))
	err := <-done
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v\n%q", err, out.String())
	}
	all := out.String()
	if !strings.Contains(all, "\x1b[?1049l") || !strings.Contains(all, "\x1b[?2004l") || !strings.Contains(all, "--resume") {
		t.Fatalf("terminal not restored: %q", all[max(len(all)-300, 0):])
	}
	// The answer to the trust question was recorded.
	st := s.run("", "trust", "status")
	if strings.TrimSpace(st.Stdout) != "trusted" {
		t.Fatalf("trust status %+v", st)
	}
}

// startTUI runs the binary on a pty in the sandbox's workspace and
// collects its output.
func startTUI(t testing.TB, s *sandbox, args ...string) (m *os.File, out *ptyOutput, done chan error) {
	t.Helper()
	return startTUIOn(t, s, 30, 100, args...)
}

// startTUIOn is startTUI on a terminal of rows×cols.
func startTUIOn(t testing.TB, s *sandbox, rows, cols uint16, args ...string) (m *os.File, out *ptyOutput, done chan error) {
	t.Helper()
	m, slave := openPTYSize(t, rows, cols)
	cmd := exec.Command(agentBinary(t), args...)
	cmd.Dir = s.Work
	cmd.Env = append([]string{"HOME=" + s.Home, "PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "NO_COLOR=1"}, s.Env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done = make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	out = &ptyOutput{}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := m.Read(b)
			out.mu.Lock()
			out.buf.Write(b[:n])
			out.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return m, out, done
}

func ctrlCTwice(t *testing.T, m *os.File, out *ptyOutput, done chan error) {
	t.Helper()
	m.Write([]byte("\x03"))
	out.waitFor(t, "Ctrl-C again")
	m.Write([]byte("\x03"))
	if err := <-done; err == nil {
		t.Fatal("exit 0 after Ctrl-C twice")
	}
}

// TestE2ETerminalUIScreens: Ctrl+R finds a prompt of an earlier session
// of the project, /resume switches to that session, /theme persists the
// choice in ~/.agent/tui.json.
func TestE2ETerminalUIScreens(t *testing.T) {
	s, _ := printSandbox(t, fakemodel.Reply{Text: "noted"}, fakemodel.Reply{Text: "resumed answer"})
	if r := s.run("", "-p", "remember the milk"); r.Code != 0 {
		t.Fatalf("print: %+v", r)
	}
	m, out, done := startTUI(t, s)
	out.waitFor(t, "Type a prompt")
	m.Write([]byte("\x12")) // ctrl+r
	out.waitFor(t, "History search")
	m.Write([]byte("\x13"))   // ctrl+s: this project
	out.waitFor(t, "project") // the renderer writes only the changed part of a row
	m.Write([]byte("milk"))
	out.waitFor(t, "remember the milk")
	m.Write([]byte("\t"))
	seen := strings.Count(out.String(), "remember the milk")
	m.Write([]byte("\x15/resume\r")) // ctrl+u clears the composer
	out.waitFor(t, "Resume a session")
	out.waitForMore(t, "remember the milk", seen) // the list is fetched after the picker opens
	m.Write([]byte("\r"))
	out.waitFor(t, "Resumed the session")
	m.Write([]byte("and the bread\r"))
	out.waitFor(t, "resumed") // the answer streams: its words may come in separate frames
	m.Write([]byte("/theme\r"))
	out.waitFor(t, "syntax highlighting on")
	m.Write([]byte("\x1b[B\r"))
	out.waitFor(t, "Theme light saved")
	b, err := os.ReadFile(filepath.Join(s.Home, ".agent", "tui.json"))
	if err != nil || !strings.Contains(string(b), `"theme": "light"`) {
		t.Fatalf("tui.json %q %v", b, err)
	}
	ctrlCTwice(t, m, out, done)
	// The resumed transcript got the new turn: one session file only.
	ents, _ := os.ReadDir(filepath.Join(s.Home, ".agent", "sessions"))
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			n++
		}
	}
	if n != 2 { // the print session and the UI's first session
		t.Fatalf("%d transcripts", n)
	}
}

// TestE2ETerminalUISetup: with no provider configured the UI asks for
// one, writes defaultModel and providers.<id> to the user settings
// (keeping the other keys) and starts the session.
func TestE2ETerminalUISetup(t *testing.T) {
	srv := fakemodel.New(fakemodel.Reply{Text: "set up and running"})
	t.Cleanup(srv.Close)
	s := newSandbox(t)
	s.write("~/.agent/settings.json", `{"permissions": {"allow": ["Read"]}}`)
	if r := s.run("", "trust", "--yes"); r.Code != 0 {
		t.Fatalf("trust: %+v", r)
	}
	idx := -1
	for i, d := range builtin.DefaultDefinitions() {
		if d.ID == "local" {
			idx = i
		}
	}
	m, out, done := startTUI(t, s)
	out.waitFor(t, "No provider is configured")
	m.Write([]byte(strings.Repeat("\x1b[B", idx) + "\r"))
	out.waitFor(t, "Base URL")
	m.Write([]byte(srv.URL() + "\r"))
	out.waitFor(t, "Model slug")
	m.Write([]byte("fake-model\r"))
	out.waitFor(t, "Saved the provider local")
	m.Write([]byte("hello\r"))
	out.waitFor(t, "running") // the answer streams: its words may come in separate frames
	ctrlCTwice(t, m, out, done)
	b, _ := os.ReadFile(filepath.Join(s.Home, ".agent", "settings.json"))
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	dm, _ := doc["defaultModel"].(map[string]any)
	pv, _ := doc["providers"].(map[string]any)
	local, _ := pv["local"].(map[string]any)
	if dm["provider"] != "local" || dm["model"] != "fake-model" || local["baseURL"] != srv.URL() || doc["permissions"] == nil {
		t.Fatalf("settings %s", b)
	}
	if fi, err := os.Stat(filepath.Join(s.Home, ".agent", "settings.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
}

// A settings file that does not parse is left alone by the setup.
func TestWriteSetupRefusesBadFile(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".agent"), 0o700)
	p := filepath.Join(home, ".agent", "settings.json")
	os.WriteFile(p, []byte(`{"broken": `), 0o600)
	if _, err := writeSetup(home, "local", "", "m"); err == nil || !strings.Contains(err.Error(), "does not parse") {
		t.Fatalf("err %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != `{"broken": ` {
		t.Fatalf("file changed: %q", b)
	}
	os.WriteFile(p, []byte(`{"providers": []}`), 0o600)
	if _, err := writeSetup(home, "local", "", "m"); err == nil {
		t.Fatal("providers not an object accepted")
	}
}

// The setup changes its keys in place: the user's other keys keep their
// order, their formatting and every byte.
func TestWriteSetupKeepsTheUsersFile(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".agent"), 0o700)
	p := filepath.Join(home, ".agent", "settings.json")
	orig := "{\n    \"zeta\": {\"compact\": [1,2,3]},\n    \"providers\": {\n        \"local\": {\"timeout\": 5000}\n    },\n    \"alpha\": \"<&>\"\n}\n"
	os.WriteFile(p, []byte(orig), 0o600)
	if _, err := writeSetup(home, "local", "http://127.0.0.1:1234/v1", "m"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	want := "{\n    \"zeta\": {\"compact\": [1,2,3]},\n    \"providers\": {\n        \"local\": {\"timeout\": 5000, \"baseURL\": \"http://127.0.0.1:1234/v1\", \"model\": \"m\"}\n    },\n    \"alpha\": \"<&>\",\n    \"defaultModel\": {\n        \"provider\": \"local\",\n        \"model\": \"m\"\n    }\n}\n"
	if string(b) != want {
		t.Fatalf("got\n%s\nwant\n%s", b, want)
	}
}

// BenchmarkBinaryTUIFirstFrame: from starting the binary on a pty (a
// trusted workspace, a configured provider) to the end of the first
// frame's synchronized output; then the idle resident set of the process.
func BenchmarkBinaryTUIFirstFrame(b *testing.B) {
	s := printBenchSandbox(b, "http://127.0.0.1:9/v1")
	var total time.Duration
	var rss int
	for i := 0; b.Loop(); i++ {
		m, out, done := startTUI(b, s)
		start := time.Now()
		out.waitFor(b, "Type a prompt")
		out.waitFor(b, "\x1b[?2026l")
		total += time.Since(start)
		if i == 0 {
			time.Sleep(500 * time.Millisecond) // idle
			rss = vmRSS(b, out)
		}
		m.Write([]byte("\x03\x03"))
		<-done
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-to-first-frame")
	b.ReportMetric(float64(rss)/1024, "idle-RSS-MB")
}

// vmRSS reads the resident set of the newest agent process from /proc.
func vmRSS(b testing.TB, _ *ptyOutput) int {
	ents, _ := os.ReadDir("/proc")
	best, bestPID := 0, 0
	bin := agentBinary(b)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid < bestPID {
			continue
		}
		exe, err := os.Readlink("/proc/" + e.Name() + "/exe")
		if err != nil || exe != bin {
			continue
		}
		st, _ := os.ReadFile("/proc/" + e.Name() + "/status")
		for _, line := range strings.Split(string(st), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
				best, bestPID = kb, pid
			}
		}
	}
	return best
}

// TestE2ETerminalUISetupKey: a provider whose key variable is unset asks
// for the key in a masked prompt, uses it for this session only, and
// never writes it to the settings file.
func TestE2ETerminalUISetupKey(t *testing.T) {
	srv := fakemodel.New(fakemodel.Reply{Text: "keyed and running"})
	t.Cleanup(srv.Close)
	s := newSandbox(t)
	if r := s.run("", "trust", "--yes"); r.Code != 0 {
		t.Fatalf("trust: %+v", r)
	}
	idx, models := -1, 0
	for i, d := range builtin.DefaultDefinitions() {
		if d.ID == "reasoning" {
			idx, models = i, len(d.Models)
		}
	}
	m, out, done := startTUI(t, s)
	out.waitFor(t, "No provider is configured")
	m.Write([]byte(strings.Repeat("\x1b[B", idx) + "\r"))
	out.waitFor(t, "Base URL")
	m.Write([]byte(srv.URL() + "\r"))
	if models > 0 {
		out.waitFor(t, "Other")
		m.Write([]byte(strings.Repeat("\x1b[B", models) + "\r"))
	}
	out.waitFor(t, "Model slug")
	m.Write([]byte("fake-model\r"))
	out.waitFor(t, "API key for reasoning")
	m.Write([]byte("sk-secret-typed\r"))
	// Typed at once, before the session has finished starting: the prompt
	// is kept for it, not lost.
	m.Write([]byte("hello\r"))
	out.waitFor(t, "running")
	ctrlCTwice(t, m, out, done)
	if strings.Contains(out.String(), "sk-secret-typed") {
		t.Fatal("the key was echoed")
	}
	b, _ := os.ReadFile(filepath.Join(s.Home, ".agent", "settings.json"))
	if strings.Contains(string(b), "sk-secret") || !strings.Contains(string(b), `"reasoning"`) {
		t.Fatalf("settings %s", b)
	}
}

// newestAgentPID finds the newest running process of the built binary.
func newestAgentPID(b testing.TB) int {
	ents, _ := os.ReadDir("/proc")
	best := 0
	bin := agentBinary(b)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid < best {
			continue
		}
		if exe, err := os.Readlink("/proc/" + e.Name() + "/exe"); err == nil && exe == bin {
			best = pid
		}
	}
	return best
}

// procSample is a process's CPU time (clock ticks, user and system) and
// resident set (kB) from /proc.
func procSample(b testing.TB, pid int) (ticks, rssKB int) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name, which is in parentheses.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+2:])
	f := strings.Fields(rest)
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rssKB, _ = strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
	return utime + stime, rssKB
}

// BenchmarkBinaryTUIIdle: the UI sits idle for 5 s after its first frame;
// the CPU time it used meanwhile and its resident set growth (issue
// target: no CPU and no memory growth while idle).
func BenchmarkBinaryTUIIdle(b *testing.B) {
	s := printBenchSandbox(b, "http://127.0.0.1:9/v1")
	var cpuTicks, growthKB int
	for b.Loop() {
		m, out, done := startTUI(b, s)
		out.waitFor(b, "Type a prompt")
		out.waitFor(b, "\x1b[?2026l")
		time.Sleep(500 * time.Millisecond) // past start-up work
		pid := newestAgentPID(b)
		t0, r0 := procSample(b, pid)
		time.Sleep(5 * time.Second)
		t1, r1 := procSample(b, pid)
		cpuTicks += t1 - t0
		growthKB += r1 - r0
		m.Write([]byte("\x03\x03"))
		<-done
	}
	b.ReportMetric(float64(cpuTicks)*10/float64(b.N), "idle-CPU-ms/5s")
	b.ReportMetric(float64(growthKB)/float64(b.N), "idle-RSS-growth-kB/5s")
}
