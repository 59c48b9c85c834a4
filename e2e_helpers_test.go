package main

// Helpers for end-to-end tests that run the built binary (fakes over mocks:
// the real binary, a temporary HOME and workspace; CONTRIBUTING.md,
// "Tests").

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	builtPath string
	buildErr  error
)

// testTemp is the folder of what the test process builds (binaries),
// readable by every user (the sandbox tests also run as an unprivileged
// one); TestMain removes it when the tests end.
var testTemp struct {
	once sync.Once
	dir  string
	err  error
}

// testTempDir makes a new folder inside testTemp.
func testTempDir(prefix string) (string, error) {
	testTemp.once.Do(func() {
		testTemp.dir, testTemp.err = os.MkdirTemp("", "agent-test-")
		if testTemp.err == nil {
			testTemp.err = os.Chmod(testTemp.dir, 0o755)
		}
	})
	if testTemp.err != nil {
		return "", testTemp.err
	}
	return os.MkdirTemp(testTemp.dir, prefix)
}

// agentBinary builds the binary once per test process and returns its path.
func agentBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if bin := os.Getenv(reaperTestEnv); bin != "" {
			builtPath = bin // the parent test process built it
			return
		}
		dir, err := testTempDir("bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtPath = filepath.Join(dir, "agent")
		cmd := exec.Command("go", "build", "-o", builtPath, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("building agent: %v", buildErr)
	}
	return builtPath
}

// sandbox is a temporary HOME and workspace for one end-to-end test.
type sandbox struct {
	t    testing.TB
	Home string
	Work string
	Env  []string // extra KEY=VALUE entries
	// NoFile > 0 runs the binary with at most this many descriptors (soft
	// and hard limit, so neither it nor a process it starts can raise it).
	NoFile int
}

func newSandbox(t testing.TB) *sandbox {
	t.Helper()
	root := t.TempDir()
	s := &sandbox{t: t, Home: filepath.Join(root, "home"), Work: filepath.Join(root, "work")}
	for _, d := range []string{s.Home, s.Work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Resolve symlinks (macOS /var, tmpfs links) so paths match the real path.
	if w, err := filepath.EvalSymlinks(s.Work); err == nil {
		s.Work = w
	}
	return s
}

// write creates a file under the sandbox root, the home (~/...) or the
// workspace, creating parent directories.
func (s *sandbox) write(path, content string) string {
	s.t.Helper()
	switch {
	case strings.HasPrefix(path, "~/"):
		path = filepath.Join(s.Home, path[2:])
	case !filepath.IsAbs(path):
		path = filepath.Join(s.Work, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return path
}

type result struct {
	Stdout string
	Stderr string
	Code   int
}

// run runs the binary in the workspace with the sandbox's HOME, a minimal
// environment and the given stdin, with a deadline.
func (s *sandbox) run(stdin string, args ...string) result {
	s.t.Helper()
	return s.runWithin(60*time.Second, stdin, args...)
}

// runWithin is run with a deadline of d; a run that reaches it fails the
// test as hanging.
func (s *sandbox) runWithin(d time.Duration, stdin string, args ...string) result {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, agentBinary(s.t), args...)
	if s.NoFile > 0 {
		script := fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, s.NoFile)
		cmd = exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", script, agentBinary(s.t)}, args...)...)
	}
	cmd.Dir = s.Work
	cmd.Env = append([]string{"HOME=" + s.Home, "PATH=" + os.Getenv("PATH"), "TERM=dumb"}, s.Env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		s.t.Fatalf("agent %.200q hung (killed after %v); stderr:\n%s", args, d, errb.String())
	}
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			s.t.Fatalf("running agent %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// gitCommitAll makes the workspace a git repository on branch and commits
// everything in it with the subject given.
func (s *sandbox) gitCommitAll(branch, subject string) {
	s.t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", branch}, {"add", "."}, {"-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", subject}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = s.Work
		if out, err := cmd.CombinedOutput(); err != nil {
			s.t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}

// lookupEnv looks a variable up in the sandbox's extra environment.
func (s *sandbox) lookupEnv(key string) (string, bool) {
	for _, kv := range slices.Backward(s.Env) {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// read returns a file's content ("" when missing).
func (s *sandbox) read(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
