package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// guardRepo is a workspace with a git repository (hooks, config) and an
// editor folder, and its guard.
func guardRepo(t testing.TB) (ws, home string, g *Guard) {
	t.Helper()
	root := t.TempDir()
	ws, home = filepath.Join(root, "ws"), filepath.Join(root, "home")
	for _, d := range []string{filepath.Join(ws, ".git", "hooks"), filepath.Join(ws, ".vscode"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(ws, ".git", "config"), "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://h/r\n")
	write(t, filepath.Join(ws, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(ws, ".git", "hooks", "pre-commit.sample"), "#!/bin/sh\n")
	write(t, filepath.Join(ws, ".vscode", "settings.json"), "{}\n")
	return ws, home, NewGuard(GuardOptions{Workspace: ws, Home: home, ID: "s1"})
}

func write(t testing.TB, p, content string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGuard(t *testing.T) {
	cases := []struct {
		name    string
		change  func(t *testing.T, ws string)
		want    []string // in the restores, in order
		check   func(t *testing.T, ws string)
		restore bool // something was quarantined
	}{
		{"nothing changed", func(t *testing.T, ws string) {}, nil, nil, false},
		{"a new hook", func(t *testing.T, ws string) {
			write(t, filepath.Join(ws, ".git/hooks/pre-commit"), "#!/bin/sh\nevil\n")
		},
			[]string{".git/hooks/pre-commit (a new file; moved to "},
			func(t *testing.T, ws string) { gone(t, filepath.Join(ws, ".git/hooks/pre-commit")) }, true},
		{"a changed sample", func(t *testing.T, ws string) { write(t, filepath.Join(ws, ".git/hooks/pre-commit.sample"), "evil\n") },
			[]string{".git/hooks/pre-commit.sample (changed; moved to "},
			func(t *testing.T, ws string) {
				content(t, filepath.Join(ws, ".git/hooks/pre-commit.sample"), "#!/bin/sh\n")
			}, true},
		{"a removed file comes back", func(t *testing.T, ws string) { os.Remove(filepath.Join(ws, ".vscode/settings.json")) },
			[]string{".vscode/settings.json (removed)"},
			func(t *testing.T, ws string) { content(t, filepath.Join(ws, ".vscode/settings.json"), "{}\n") }, false},
		{"a mode change", func(t *testing.T, ws string) { os.Chmod(filepath.Join(ws, ".git/hooks/pre-commit.sample"), 0o755) },
			[]string{".git/hooks/pre-commit.sample (changed; moved to "},
			func(t *testing.T, ws string) {
				if fi, _ := os.Stat(filepath.Join(ws, ".git/hooks/pre-commit.sample")); fi.Mode().Perm() != 0o644 {
					t.Errorf("mode %v", fi.Mode())
				}
			}, true},
		{"a link in place of a file", func(t *testing.T, ws string) {
			p := filepath.Join(ws, ".vscode/settings.json")
			os.Remove(p)
			os.Symlink("/etc/passwd", p)
		}, []string{".vscode/settings.json (changed; moved to "},
			func(t *testing.T, ws string) { content(t, filepath.Join(ws, ".vscode/settings.json"), "{}\n") }, true},
		{"a new editor task", func(t *testing.T, ws string) { write(t, filepath.Join(ws, ".vscode/tasks.json"), "{}") },
			[]string{".vscode/tasks.json (a new file; moved to "}, nil, true},
		{"a new protected file at the top", func(t *testing.T, ws string) { write(t, filepath.Join(ws, ".envrc"), "export X=1") },
			[]string{".envrc (a new file; moved to "}, nil, true},
		{"a program key in .git/config", func(t *testing.T, ws string) {
			appendTo(t, filepath.Join(ws, ".git/config"), "[core]\n\tfsmonitor = /tmp/x\n")
		}, []string{".git/config (set core.fsmonitor=/tmp/x; moved to "},
			func(t *testing.T, ws string) {
				if strings.Contains(readFile(t, filepath.Join(ws, ".git/config")), "fsmonitor") {
					t.Error("fsmonitor kept")
				}
			}, true},
		{"an ordinary git change is kept", func(t *testing.T, ws string) {
			appendTo(t, filepath.Join(ws, ".git/config"), "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n")
		}, nil, func(t *testing.T, ws string) {
			if !strings.Contains(readFile(t, filepath.Join(ws, ".git/config")), "[branch \"main\"]") {
				t.Error("the upstream was lost")
			}
		}, false},
		{"a configuration git cannot read", func(t *testing.T, ws string) { appendTo(t, filepath.Join(ws, ".git/config"), "[broken\n") },
			[]string{".git/config (a configuration git cannot read; moved to "}, nil, true},
		{"core.hooksPath names a folder", func(t *testing.T, ws string) {
			appendTo(t, filepath.Join(ws, ".git/config"), "[core]\n\thooksPath = githooks\n")
		}, []string{".git/config (set core.hookspath=githooks"}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, home, g := guardRepo(t)
			g.Before()
			c.change(t, ws)
			got := g.After()
			if len(got) != len(c.want) {
				t.Fatalf("restores %v, want %d", got, len(c.want))
			}
			for i, w := range c.want {
				if s := got[i].String(); !strings.HasPrefix(s, w) || got[i].Failed != "" {
					t.Errorf("restore %d: %q, want %q…", i, s, w)
				}
			}
			if c.check != nil {
				c.check(t, ws)
			}
			q, _ := filepath.Glob(filepath.Join(home, ".agent", "quarantine", "s1-*"))
			if (len(q) > 0) != c.restore {
				t.Errorf("quarantine %v", q)
			}
			for _, dir := range q {
				filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
					if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm() != 0o600 {
						t.Errorf("%s: mode %v in the quarantine", p, fi.Mode())
					}
					return nil
				})
			}
			// The restored state is the saved state: nothing more to do.
			if again := g.Check(); len(again) != 0 {
				t.Errorf("second check: %v", again)
			}
		})
	}
}

// TestGuardBetweenCommands: what changed between two commands (the user,
// an editor, the agent's own Write tool) is the new state to keep.
func TestGuardBetweenCommands(t *testing.T) {
	ws, _, g := guardRepo(t)
	g.Before()
	g.After()
	write(t, filepath.Join(ws, ".vscode/settings.json"), `{"editor.tabSize": 2}`)
	g.Before()
	if rs := g.After(); len(rs) != 0 {
		t.Fatalf("%v", rs)
	}
	content(t, filepath.Join(ws, ".vscode/settings.json"), `{"editor.tabSize": 2}`)
	// While another confined command runs, a change is not taken in.
	g.Before() // the running one
	g.Before() // a second one starts
	write(t, filepath.Join(ws, ".vscode/evil.json"), "{}")
	if rs := g.After(); len(rs) != 1 {
		t.Fatalf("%v", rs)
	}
	g.After()
}

// TestGuardGitInit: a repository created by the command (git init) is not
// undone: its sample hooks and plain configuration are harmless.
func TestGuardGitInit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ws := t.TempDir()
	g := NewGuard(GuardOptions{Workspace: ws, Home: t.TempDir(), ID: "s"})
	g.Before()
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if rs := g.After(); len(rs) != 0 {
		t.Fatalf("git init undone: %v", rs)
	}
}

// TestGuardWorktree: a worktree's hooks and configuration are where git
// keeps them, in the main repository's folder.
func TestGuardWorktree(t *testing.T) {
	root := t.TempDir()
	main, wt := filepath.Join(root, "main"), filepath.Join(root, "wt")
	write(t, filepath.Join(main, ".git", "config"), "[core]\n\tbare = false\n")
	write(t, filepath.Join(main, ".git", "worktrees", "wt", "commondir"), "../..\n")
	write(t, filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(main, ".git", "worktrees", "wt")+"\n")
	gitDir, common := GitDirs(wt)
	if gitDir != filepath.Join(main, ".git", "worktrees", "wt") || common != filepath.Join(main, ".git") {
		t.Fatalf("%s %s", gitDir, common)
	}
	g := NewGuard(GuardOptions{Workspace: wt, Home: t.TempDir(), ID: "s"})
	g.Before()
	write(t, filepath.Join(main, ".git", "hooks", "post-checkout"), "evil")
	if rs := g.After(); len(rs) != 1 || !strings.Contains(rs[0].Path, "post-checkout") {
		t.Fatalf("%v", rs)
	}
	// A workspace in a subfolder of a repository finds it above.
	sub := filepath.Join(main, "pkg")
	os.MkdirAll(sub, 0o755)
	if _, common := GitDirs(sub); common != filepath.Join(main, ".git") {
		t.Fatalf("subfolder: %s", common)
	}
}

func gone(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Lstat(p); err == nil {
		t.Errorf("%s still there", p)
	}
}

func content(t *testing.T, p, want string) {
	t.Helper()
	if got := readFile(t, p); got != want {
		t.Errorf("%s: %q, want %q", p, got, want)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func appendTo(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(s)
	f.Close()
}

// BenchmarkGuardCheck is the check after a command in a repository of
// 10,000 files (docs/performance.md, "Sandbox": under 1 ms). Only the
// protected paths are looked at, so the size of the repository costs
// nothing; the benchmark proves it.
func BenchmarkGuardCheck(b *testing.B) {
	ws, _, g := guardRepo(b)
	for i := 0; i < 10000; i++ {
		p := filepath.Join(ws, fmt.Sprintf("pkg%03d", i/100), fmt.Sprintf("f%05d.go", i))
		if i%100 == 0 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		os.WriteFile(p, []byte("package p\n"), 0o644)
	}
	for i := 0; i < 12; i++ {
		write(b, filepath.Join(ws, ".git", "hooks", fmt.Sprintf("hook%d.sample", i)), "#!/bin/sh\n")
	}
	g.Before()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if rs := g.After(); len(rs) != 0 {
			b.Fatal(rs)
		}
		g.active++ // as Before would, without taking the state again
	}
}
