package main

// The token file of loopback `mcp serve` is removed on every way the
// process can end (docs/design.md, "A token file is removed however the
// process ends"): every catchable signal, SIGKILL and a crash included
// (cleanup.go), and a restart with the same path works.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"agent/internal/fakemodel"
)

func TestE2ETokenFileGoesOnEveryExit(t *testing.T) {
	cases := []struct {
		sig  syscall.Signal
		code int // exit code, or -1 for death by the signal
	}{
		{syscall.SIGHUP, 130},
		{syscall.SIGQUIT, 2}, // Go's default: a stack dump and exit 2
		{syscall.SIGABRT, 2},
		{syscall.SIGTRAP, 2},
		{syscall.SIGKILL, -1},
		{syscall.SIGSEGV, 2}, // a crash: the runtime dies without cleaning up
	}
	for _, c := range cases {
		t.Run(c.sig.String(), func(t *testing.T) {
			s, _ := printSandbox(t, fakemodel.Reply{Text: "x"})
			tokFile := filepath.Join(t.TempDir(), "serve.token")
			for run := range 2 { // the second start reuses the path
				p := startServe(t, s, "--http-token-file", tokFile)
				p.waitLine(t, regexp.MustCompile(regexp.QuoteMeta("bearer token in "+tokFile)))
				if _, err := os.Stat(tokFile); err != nil {
					t.Fatalf("run %d: no token file: %v", run, err)
				}
				code := p.stop(t, c.sig)
				if code != c.code {
					t.Errorf("run %d: exit %d after %v, want %d; stderr:\n%s", run, code, c.sig, c.code, p.stderrText())
				}
				// SIGKILL leaves the removal to the cleanup child, which
				// acts once the pipe from the dead process ends.
				deadline := time.Now().Add(10 * time.Second)
				for {
					_, err := os.Lstat(tokFile)
					if os.IsNotExist(err) {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("run %d: the token file survived %v", run, c.sig)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
}

// TestCleanupChildLeavesAnotherFileAlone: a file made anew at the same
// path (another inode) is not the one the child was told of.
func TestCleanupChildLeavesAnotherFileAlone(t *testing.T) {
	bin := agentBinary(t)
	path := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(path, []byte("a"), 0o600)
	st, _ := os.Lstat(path)
	os.Remove(path)
	os.WriteFile(path, []byte("b"), 0o600)
	id, _ := idOf(st)
	cmd := execCleanupChild(t, bin, path, id)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "b" {
		t.Fatalf("the new file was touched: %q %v", b, err)
	}
}

// execCleanupChild runs the binary as a cleanup child told of path with
// the given identity, and ends its pipe at once (the parent "died").
func execCleanupChild(t *testing.T, bin, path string, id fileID) *exec.Cmd {
	t.Helper()
	order, _ := json.Marshal(cleanupOrder{Path: path, ID: id})
	cmd := exec.Command(bin)
	cmd.Env = []string{cleanupChildEnv + "=1"}
	cmd.Stdin = strings.NewReader(string(order) + "\n")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}
