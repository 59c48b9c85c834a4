package interop

// The terminal UI under a real terminal emulator: tmux runs the binary,
// send-keys types, capture-pane reads the screen (issue: the terminal UI,
// tests in interop/). tmux comes from the machine's packages; without it
// the test skips, or fails under CI=true.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agent/internal/fakemodel"
)

type tmuxUI struct {
	t      *testing.T
	socket string
}

func (u *tmuxUI) tmux(args ...string) string {
	u.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", u.socket}, args...)...).CombinedOutput()
	if err != nil {
		u.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen is the visible pane; with escapes keeps the SGR sequences.
func (u *tmuxUI) screen(escapes bool) string {
	args := []string{"capture-pane", "-p", "-t", "ui"}
	if escapes {
		args = append(args, "-e")
	}
	return u.tmux(args...)
}

// waitFor polls the pane until it shows want.
func (u *tmuxUI) waitFor(want string) string {
	u.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := u.screen(false)
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("the screen never showed %q:\n%s", want, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitGone polls the pane until it no longer shows text.
func (u *tmuxUI) waitGone(text string) {
	u.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for strings.Contains(u.screen(false), text) {
		if time.Now().After(deadline) {
			u.t.Fatalf("the screen still shows %q:\n%s", text, u.screen(false))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (u *tmuxUI) keys(keys ...string) {
	u.t.Helper()
	u.tmux(append([]string{"send-keys", "-t", "ui"}, keys...)...)
}

func TestTUIUnderTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		missingPeer(t, "tmux is not installed (Debian package tmux)")
	}
	bin := buildAgent(t)
	srv := fakemodel.New(
		fakemodel.Reply{Text: "The answer is 42."},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Bash", Args: `{"command":"touch tmux-made"}`}}},
		fakemodel.Reply{Text: "Made the file."},
		fakemodel.Reply{Text: "Sent with the new key."},
	)
	defer srv.Close()
	home, work := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, ".agent"), 0o700)
	// The Bash call is to be asked about: the sandbox's autoAllowBashIfSandboxed
	// would run it without a question (docs/sandbox.md, "Permissions").
	settings := `{"defaultModel": {"provider": "local", "model": "fake-model"}, "providers": {"local": {"baseURL": "` + srv.URL() + `"}},
		"sandbox": {"autoAllowBashIfSandboxed": false}}`
	if err := os.WriteFile(filepath.Join(home, ".agent", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	trust := exec.Command(bin, "trust", "--yes")
	trust.Dir, trust.Env = work, []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	if out, err := trust.CombinedOutput(); err != nil {
		t.Fatalf("trust: %v %s", err, out)
	}

	u := &tmuxUI{t: t, socket: fmt.Sprintf("agent-interop-%d", os.Getpid())}
	cmd := fmt.Sprintf("cd %q && env -i HOME=%q PATH=%q TERM=xterm-256color NO_COLOR=1 %q", work, home, os.Getenv("PATH"), bin)
	u.tmux("new-session", "-d", "-s", "ui", "-x", "100", "-y", "30", cmd)
	defer exec.Command("tmux", "-L", u.socket, "kill-server").Run()

	// Type a prompt and see the streamed answer.
	u.waitFor("Type a prompt")
	u.keys("-l", "what is the answer?")
	u.keys("Enter")
	u.waitFor("The answer is 42.")

	// Answer a permission prompt.
	u.keys("-l", "make a file")
	u.keys("Enter")
	u.waitFor("touch tmux-made")
	u.keys("y")
	u.waitFor("Made the file.")
	if _, err := os.Stat(filepath.Join(work, "tmux-made")); err != nil {
		t.Fatalf("the allowed command did not run: %v", err)
	}

	// NO_COLOR: no colour in what the terminal shows.
	if s := u.screen(true); strings.Contains(s, "\x1b[3") && strings.Contains(s, "m") && containsColour(s) {
		t.Fatalf("colour under NO_COLOR:\n%q", s)
	}

	// Search history.
	u.keys("C-r")
	u.keys("-l", "answer")
	// The transcript shows the prompt already: wait for the search
	// screen's own line, so that the Escape below reaches the open search
	// and is not read together with the next key as Alt+key.
	s := u.waitFor("search: answer")
	if !strings.Contains(s, "what is the answer?") {
		t.Fatal(s)
	}
	// A lone Escape is told from a sequence by a pause: wait for it to
	// close the search before typing on.
	u.keys("Escape")
	u.waitGone("History search")

	// Rebind submit while the UI runs: ctrl+s sends, enter does not.
	kb := `{"version": 1, "bindings": {"chat-input": {"submit": "ctrl+s"}}}`
	if err := os.WriteFile(filepath.Join(home, ".agent", "keybindings.json"), []byte(kb), 0o600); err != nil {
		t.Fatal(err)
	}
	u.waitFor("Ctrl+S")
	u.keys("-l", "rebound")
	u.keys("C-s")
	u.waitFor("Sent with the new key.")

	// Resize: the frame follows the new width.
	u.tmux("resize-window", "-t", "ui", "-x", "60", "-y", "20")
	deadline := time.Now().Add(20 * time.Second)
	for {
		wide := false
		for _, line := range strings.Split(strings.TrimRight(u.screen(false), "\n"), "\n") {
			if len([]rune(strings.TrimRight(line, " "))) > 60 {
				wide = true
			}
		}
		if !wide && strings.Contains(u.screen(false), "fake-model") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no redraw at 60 columns:\n%s", u.screen(false))
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Ctrl-C twice exits.
	u.keys("C-c")
	u.waitFor("Ctrl-C again")
	u.keys("C-c")
	deadline = time.Now().Add(20 * time.Second)
	for {
		out, err := exec.Command("tmux", "-L", u.socket, "list-panes", "-t", "ui", "-F", "#{pane_dead}").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) == "1" {
			break // the session ended with its only pane
		}
		if time.Now().After(deadline) {
			t.Fatalf("still running after Ctrl-C twice:\n%s", u.screen(false))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// containsColour reports an SGR sequence that sets a foreground or
// background colour (30–37, 38;…, 40–47, 48;…, 90–97, 100–107).
func containsColour(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		if s[i] != 0x1b || s[i+1] != '[' {
			continue
		}
		j := i + 2
		for j < len(s) && s[j] != 'm' && (s[j] == ';' || (s[j] >= '0' && s[j] <= '9')) {
			j++
		}
		if j >= len(s) || s[j] != 'm' {
			continue
		}
		for _, p := range strings.Split(s[i+2:j], ";") {
			switch {
			case len(p) == 2 && (p[0] == '3' || p[0] == '4' || p[0] == '9') && p[1] >= '0' && p[1] <= '8':
				return true
			case len(p) == 3 && p[:2] == "10":
				return true
			}
		}
	}
	return false
}
