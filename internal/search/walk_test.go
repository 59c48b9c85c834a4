package search

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// walkAll returns the relative paths a walk visits from root, and its
// report.
func walkAll(t *testing.T, o WalkOptions) ([]string, *Report) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	o.Visit = func(_ int, e Entry) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e.Rel)
	}
	rep, err := Walk(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	return got, rep
}

func TestWalkRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string // path -> content ("" for an empty file)
		sub   string            // the folder walked, below the top
		env   func(top, home string) Env
		want  string
	}{
		{
			name:  "hidden files are searched, .git is not",
			files: map[string]string{".git/HEAD": "", ".hidden": "", "a/.env": "", "b": ""},
			want:  "[.hidden a/.env b]",
		},
		{
			name:  ".gitignore applies only inside a repository",
			files: map[string]string{".gitignore": "*.log\n", "a.log": "", "b": ""},
			want:  "[.gitignore a.log b]",
		},
		{
			name:  ".ignore applies anywhere and beats .gitignore",
			files: map[string]string{".git/HEAD": "", ".gitignore": "!keep.log\n*.tmp\n", ".ignore": "*.log\n!x.tmp\n", "keep.log": "", "x.tmp": "", "y.tmp": ""},
			want:  "[.gitignore .ignore x.tmp]",
		},
		{
			name:  "the rules of the folders above the one walked apply",
			files: map[string]string{".git/HEAD": "", ".gitignore": "/sub/anchored\n*.o\n", "sub/anchored": "", "sub/a.o": "", "sub/c": ""},
			sub:   "sub",
			want:  "[c]",
		},
		{
			name:  "a nested repository drops the outer .gitignore",
			files: map[string]string{".git/HEAD": "", ".gitignore": "*.o\n", "inner/.git/HEAD": "", "inner/a.o": "", "b.o": ""},
			want:  "[.gitignore inner/a.o]",
		},
		{
			name:  "info/exclude",
			files: map[string]string{".git/info/exclude": "secret\n", "secret": "", "plain": ""},
			want:  "[plain]",
		},
		{
			name:  "a linked worktree's exclude lives in the common folder",
			files: map[string]string{"main/.git/info/exclude": "*.gen\n", "main/.git/worktrees/wt/commondir": "../..\n", "wt/.git": "gitdir: ../main/.git/worktrees/wt\n", "wt/a.gen": "", "wt/b": ""},
			sub:   "wt",
			want:  "[b]",
		},
		{
			name:  "core.excludesFile of ~/.gitconfig",
			files: map[string]string{".git/HEAD": "", "HOME/.gitconfig": "[core]\n\texcludesfile = ~/my-ignore\n", "HOME/my-ignore": "*.swp\n", "a.swp": "", "b": ""},
			want:  "[HOME/.gitconfig HOME/my-ignore b]",
		},
		{
			name:  "the XDG ignore file is the default",
			files: map[string]string{".git/HEAD": "", "HOME/.config/git/ignore": "*.swp\n", "a.swp": "", "b": ""},
			want:  "[HOME/.config/git/ignore b]",
		},
		{
			name:  "XDG_CONFIG_HOME moves the default",
			files: map[string]string{".git/HEAD": "", "XDG/git/ignore": "*.swp\n", "a.swp": "", "b": ""},
			env:   func(top, home string) Env { return Env{Home: home, XDGConfigHome: filepath.Join(top, "XDG")} },
			want:  "[XDG/git/ignore b]",
		},
		{
			name:  "an included configuration file",
			files: map[string]string{".git/HEAD": "", "HOME/.gitconfig": "[include]\n\tpath = more.inc\n", "HOME/more.inc": "[core]\nexcludesFile = " + "~/x-ignore\n", "HOME/x-ignore": "*.bak\n", "a.bak": ""},
			want:  "[HOME/.gitconfig HOME/more.inc HOME/x-ignore]",
		},
		{
			name:  "GIT_CONFIG_GLOBAL replaces the user's files",
			files: map[string]string{".git/HEAD": "", "HOME/.gitconfig": "[core]\nexcludesFile = ~/one\n", "HOME/one": "a\n", "HOME/two": "b\n", "G/config": "[core]\nexcludesFile = ~/two\n", "a": "", "b": ""},
			env:   func(top, home string) Env { return Env{Home: home, GitConfigGlobal: filepath.Join(top, "G/config")} },
			want:  "[G/config HOME/.gitconfig HOME/one HOME/two a]",
		},
		{
			name:  "the repository's own config",
			files: map[string]string{".git/config": "[core]\n\texcludesFile = .git/mine\n", ".git/mine": "*.x\n", "a.x": "", "b": ""},
			want:  "[b]",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			for p, c := range tc.files {
				writeFile(t, filepath.Join(top, p), c)
			}
			home := filepath.Join(top, "HOME")
			env := Env{Home: home}
			if tc.env != nil {
				env = tc.env(top, home)
			}
			got, rep := walkAll(t, WalkOptions{Root: filepath.Join(top, tc.sub), Env: env})
			if fmt.Sprint(got) != tc.want {
				t.Errorf("got %v, want %s", got, tc.want)
			}
			if p := rep.Problems(); len(p) > 0 {
				t.Errorf("problems: %q", p)
			}
		})
	}
}

func TestWalkBadInput(t *testing.T) {
	top := t.TempDir()
	writeFile(t, filepath.Join(top, ".git/HEAD"), "")
	writeFile(t, filepath.Join(top, ".gitignore"), "[unclosed\n*.log\nok\\\n")
	writeFile(t, filepath.Join(top, "a.log"), "")
	writeFile(t, filepath.Join(top, "plain"), "")
	writeFile(t, filepath.Join(top, "bad\xffname"), "")
	writeFile(t, filepath.Join(top, "HOME/.gitconfig"), "[core\n")
	if err := os.Symlink(".", filepath.Join(top, "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop2", filepath.Join(top, "loop1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop1", filepath.Join(top, "loop2")); err != nil {
		t.Fatal(err)
	}
	got, rep := walkAll(t, WalkOptions{Root: top, Env: Env{Home: filepath.Join(top, "HOME")}})
	if fmt.Sprint(got) != "[.gitignore HOME/.gitconfig loop loop1 loop2 plain]" {
		t.Errorf("visited %v: links are entries, never followed; the rest of .gitignore applies", got)
	}
	wantProblems := []string{
		filepath.Join(top, ".gitignore") + `:1: pattern "[unclosed" is ignored: a character class is not closed`,
		filepath.Join(top, ".gitignore") + `:3: pattern "ok\\" is ignored: it ends with a lone backslash`,
		filepath.Join(top, "HOME/.gitconfig") + ": is not a valid git configuration (line 1: a section header without ']'); its core.excludesFile was not used",
	}
	if p := rep.Problems(); fmt.Sprint(p) != fmt.Sprint(wantProblems) {
		t.Errorf("problems\n got %q\nwant %q", p, wantProblems)
	}
	if n := rep.Notices(); len(n) != 1 || n[0] != "1 entries whose names are not valid UTF-8 were skipped, in "+top {
		t.Errorf("notices %q", n)
	}
}

func TestWalkLimitsAndPruning(t *testing.T) {
	top := t.TempDir()
	for i := range 30 {
		writeFile(t, filepath.Join(top, fmt.Sprintf("d%d/sub/f%d", i%3, i)), "")
	}
	got, rep := walkAll(t, WalkOptions{Root: top, MaxEntries: 10})
	if !rep.Truncated || len(got) >= 30 {
		t.Errorf("the entry limit did not end the walk: %d visited, truncated %v", len(got), rep.Truncated)
	}
	got, _ = walkAll(t, WalkOptions{Root: top, Descend: func(rel string, depth int) bool { return rel == "d1" || rel == "d1/sub" }})
	if len(got) != 10 || !strings.HasPrefix(got[0], "d1/sub/") {
		t.Errorf("Descend: %v", got)
	}
}

// TestWalkReportsUnreadableFolder needs a folder the walk may not list;
// root may list anything, so as root the test runs itself again as
// nobody.
func TestWalkReportsUnreadableFolder(t *testing.T) {
	if dir := os.Getenv("SEARCH_TEST_UNREADABLE"); dir != "" {
		checkUnreadable(t, dir)
		return
	}
	top, err := os.MkdirTemp("", "search-unreadable-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(top)
	writeFile(t, filepath.Join(top, "open/a"), "")
	writeFile(t, filepath.Join(top, "closed/b"), "")
	for _, d := range []string{top, filepath.Join(top, "open")} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(top, "closed"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(top, "closed"), 0o755)
	if os.Geteuid() != 0 {
		checkUnreadable(t, top)
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(top, "search.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestWalkReportsUnreadableFolder$", "-test.v")
	cmd.Env = append(os.Environ(), "SEARCH_TEST_UNREADABLE="+top)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestWalkReportsUnreadableFolder") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

func checkUnreadable(t *testing.T, top string) {
	got, rep := walkAll(t, WalkOptions{Root: top})
	want := "[open/a]"
	if strings.Contains(fmt.Sprint(got), "search.test") {
		want = "[open/a search.test]"
	}
	if fmt.Sprint(got) != want {
		t.Errorf("visited %v, want %s", got, want)
	}
	n := rep.Notices()
	if len(n) != 1 || n[0] != "1 unreadable folders or files were skipped: "+filepath.Join(top, "closed")+" (permission denied)" {
		t.Errorf("notices %q", n)
	}
}
