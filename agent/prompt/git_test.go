package prompt

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// gitEnv is an environment in which git reads no user or system
// configuration.
func gitEnv(home string) []string {
	return append(os.Environ(), "HOME="+home, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
}

// gitRepo makes a repository with the commits given (subjects, oldest
// first) and returns its folder and a function that runs git in it.
func gitRepo(t *testing.T, subjects ...string) (string, func(args ...string)) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := mkTree(t, tree{})
	env := gitEnv(dir)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	for i, s := range subjects {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), []byte(s), 0o644)
		git("add", ".")
		git("commit", "-q", "-m", s+"\n\nbody line")
	}
	return dir, git
}

func TestGitSnapshot(t *testing.T) {
	t.Run("branch, status and the last five subjects", func(t *testing.T) {
		dir, _ := gitRepo(t, "one", "two", "three", "four", "five", "six")
		os.WriteFile(filepath.Join(dir, "f0"), []byte("changed"), 0o644)
		os.WriteFile(filepath.Join(dir, "new"), nil, 0o644)
		s := TakeGitSnapshot(context.Background(), dir, GitOptions{Env: gitEnv(dir)})
		if s == nil {
			t.Fatal("no snapshot")
		}
		want := &GitSnapshot{Branch: "main", Status: " M f0\n?? new", Commits: []string{"six", "five", "four", "three", "two"}}
		if s.Branch != want.Branch || s.Status != want.Status || s.StatusCut != 0 || !slices.Equal(s.Commits, want.Commits) {
			t.Errorf("snapshot %+v, want %+v", s, want)
		}
		text := s.Text()
		for _, sub := range []string{"# Git snapshot", "Taken when the session started", "Branch: main", " M f0\n?? new", "- six\n- five"} {
			if !strings.Contains(text, sub) {
				t.Errorf("text lacks %q:\n%s", sub, text)
			}
		}
	})
	t.Run("a subfolder of the repository", func(t *testing.T) {
		dir, _ := gitRepo(t, "one")
		sub := filepath.Join(dir, "sub")
		os.Mkdir(sub, 0o755)
		if s := TakeGitSnapshot(context.Background(), sub, GitOptions{Env: gitEnv(dir)}); s == nil || s.Branch != "main" {
			t.Errorf("snapshot %+v", s)
		}
	})
	t.Run("a clean repository", func(t *testing.T) {
		dir, _ := gitRepo(t, "one")
		s := TakeGitSnapshot(context.Background(), dir, GitOptions{Env: gitEnv(dir)})
		if s == nil || s.Status != "" || !strings.Contains(s.Text(), "Status: clean") {
			t.Errorf("snapshot %+v", s)
		}
	})
	t.Run("no commits yet", func(t *testing.T) {
		dir, _ := gitRepo(t)
		s := TakeGitSnapshot(context.Background(), dir, GitOptions{Env: gitEnv(dir)})
		if s == nil || s.Branch != "main" || len(s.Commits) != 0 || !strings.Contains(s.Text(), "Recent commits: none") {
			t.Errorf("snapshot %+v", s)
		}
	})
	t.Run("a detached HEAD", func(t *testing.T) {
		dir, git := gitRepo(t, "one", "two")
		git("checkout", "-q", "--detach", "HEAD~1")
		s := TakeGitSnapshot(context.Background(), dir, GitOptions{Env: gitEnv(dir)})
		if s == nil || s.Branch != "" || s.Detached == "" || !strings.HasPrefix(s.BranchText(), "detached HEAD at ") {
			t.Errorf("snapshot %+v", s)
		}
	})
	t.Run("not a repository", func(t *testing.T) {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("git is not installed")
		}
		dir := mkTree(t, tree{"x": ""})
		if s := TakeGitSnapshot(context.Background(), dir, GitOptions{Env: gitEnv(dir)}); s != nil {
			t.Errorf("snapshot %+v outside a repository", s)
		}
	})
	t.Run("git missing", func(t *testing.T) {
		dir := mkTree(t, tree{".git/": ""})
		if s := TakeGitSnapshot(context.Background(), dir, GitOptions{Git: filepath.Join(dir, "no-git")}); s != nil {
			t.Errorf("snapshot %+v without git", s)
		}
	})
	t.Run("a status over 2000 characters is cut with a note", func(t *testing.T) {
		dir, _ := gitRepo(t, "one")
		for i := range 100 {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("untracked-file-with-a-long-name-%03d", i)), nil, 0o644)
		}
		s := TakeGitSnapshot(context.Background(), dir, GitOptions{Env: gitEnv(dir)})
		if s == nil {
			t.Fatal("no snapshot")
		}
		// Each line is "?? " and 35 characters: 39 with its line break.
		if len(s.Status) > MaxStatusChars || s.StatusCut != 100-MaxStatusChars/39 {
			t.Errorf("status of %d bytes, %d lines cut", len(s.Status), s.StatusCut)
		}
		if !strings.HasSuffix(s.Status, "untracked-file-with-a-long-name-050") {
			t.Errorf("status does not end on a whole line: %q", s.Status[len(s.Status)-40:])
		}
		if note := fmt.Sprintf("[cut at 2000 characters: %d more lines not shown]", s.StatusCut); !strings.Contains(s.Text(), note) {
			t.Errorf("text lacks %q", note)
		}
	})
	t.Run("the repository's fsmonitor does not run", func(t *testing.T) {
		dir, git := gitRepo(t, "one")
		marker := filepath.Join(t.TempDir(), "ran")
		hook := filepath.Join(t.TempDir(), "monitor")
		os.WriteFile(hook, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755)
		git("config", "core.fsmonitor", hook)
		if s := TakeGitSnapshot(context.Background(), dir, GitOptions{Env: gitEnv(dir)}); s == nil {
			t.Fatal("no snapshot")
		}
		if _, err := os.Stat(marker); err == nil {
			t.Error("git status ran the repository's core.fsmonitor")
		}
	})
	t.Run("a git that hangs is stopped at the timeout", func(t *testing.T) {
		dir := mkTree(t, tree{".git/": "", "git": "#!/bin/sh\nsleep 30\n"})
		os.Chmod(filepath.Join(dir, "git"), 0o755)
		if s := TakeGitSnapshot(context.Background(), dir, GitOptions{Git: filepath.Join(dir, "git"), Timeout: 50 * time.Millisecond}); s != nil {
			t.Errorf("snapshot %+v from a hanging git", s)
		}
	})
}

func TestCutStatus(t *testing.T) {
	line := strings.Repeat("é", 9) + "\n" // 10 characters, 19 bytes
	cases := []struct {
		name     string
		out      string
		want     string
		wantCut  int
		capacity int
	}{
		{name: "short", out: " M a\n", want: " M a"},
		{name: "exactly the limit", out: strings.Repeat(line, 200), want: strings.TrimSuffix(strings.Repeat(line, 200), "\n")},
		{name: "one character over, counted in characters", out: strings.Repeat(line, 200) + "x", want: strings.TrimSuffix(strings.Repeat(line, 200), "\n"), wantCut: 1},
		{name: "many lines over", out: strings.Repeat(line, 250), want: strings.TrimSuffix(strings.Repeat(line, 200), "\n"), wantCut: 50},
		{name: "one line longer than the limit", out: strings.Repeat("x", 2500) + "\n", want: strings.Repeat("x", 2000), wantCut: 1},
		{name: "only part of the output kept", out: strings.Repeat(line, 250), capacity: 3000, want: strings.TrimSuffix(strings.Repeat(line, 157), "\n"), wantCut: 93},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			capt := &capture{max: maxGitOutput}
			if c.capacity > 0 {
				capt.max = c.capacity
			}
			// Written in small pieces, as a pipe delivers them.
			for rest := c.out; rest != ""; {
				n := min(7, len(rest))
				capt.Write([]byte(rest[:n]))
				rest = rest[n:]
			}
			got, cut := cutStatus(capt)
			if got != c.want || cut != c.wantCut {
				t.Errorf("cutStatus = %q (%d cut), want %q (%d cut)", got, cut, c.want, c.wantCut)
			}
		})
	}
}
