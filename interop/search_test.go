package interop

// The Grep tool against ripgrep on the same generated tree: the same files
// match, with the same counts and the same matching lines, ignore rules
// and binary files included (docs/reference/runtime.md, "What the search
// tools skip"). ripgrep comes from Debian's package, installed by .ci/run;
// without it the test skips, except under CI=true.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"agent/agent/tools"
)

func requireRipgrep(t *testing.T) string {
	t.Helper()
	rg, err := exec.LookPath("rg")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("rg missing under CI=true (.ci/run installs Debian's ripgrep)")
		}
		t.Skip("rg not installed (Debian: apt-get install ripgrep)")
	}
	return rg
}

// searchTree writes a repository-shaped tree with ignore files at several
// levels, hidden files, binary files, CRLF lines, a large file and a link.
func searchTree(t *testing.T, root string) {
	t.Helper()
	r := rand.New(rand.NewPCG(21, 4))
	write := func(p, s string) {
		t.Helper()
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lines := []string{"func NewReader(r io.Reader) *Reader {", "needle in the hay", "NEEDLE shouting", "nothing here", "\tbufReader(x)", "return BufReader(r)", "// Needle, mixed", "x := 1", ""}
	text := func(n int, crlf bool) string {
		var b strings.Builder
		for range n {
			b.WriteString(lines[r.IntN(len(lines))])
			if crlf {
				b.WriteByte('\r')
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(".gitignore", "*.log\nbuild/\n/top-only.txt\n!keep.log\ndocs/**/*.tmp\n")
	write(".ignore", "*.bak\n")
	write("sub/.gitignore", "local.txt\n!important.bak\n")
	dirs := []string{"", "sub", "sub/deep", "docs/a/b", "build/out", ".hidden", "pkg/util"}
	names := []string{"a.go", "b.txt", "c.log", "keep.log", "top-only.txt", "x.tmp", "y.bak", "local.txt", ".env", "important.bak"}
	for _, d := range dirs {
		for _, n := range names {
			if r.IntN(3) > 0 {
				write(filepath.Join(d, n), text(1+r.IntN(40), r.IntN(5) == 0))
			}
		}
	}
	write("blob.bin", "needle\x00binary")
	write("sub/late-nul.txt", strings.Repeat("padding line\n", 1000)+"needle after 8 KiB\n")
	write("large.txt", text(20000, false)) // several read buffers
	if err := os.Symlink("a.go", filepath.Join(root, "link.go")); err != nil {
		t.Fatal(err)
	}
}

func TestGrepMatchesRipgrep(t *testing.T) {
	rg := requireRipgrep(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	searchTree(t, root)
	var grep tools.Tool
	for _, tl := range tools.Builtin(tools.Options{Workspace: root, Home: t.TempDir(), Env: []string{}, Limits: tools.Limits{Output: 1 << 30}}) {
		if tl.Spec().Name == "Grep" {
			grep = tl
		}
	}
	for _, tc := range []struct {
		name    string
		pattern string
		fold    bool
	}{
		{"literal", "needle", false},
		{"case-insensitive literal", "needle", true},
		{"regular expression with a literal", `[A-Z][a-z]+Reader\(`, false},
		{"regular expression without one", `^\s*[a-z]+\s[a-z]`, false},
		{"anchored at the end", `\)$`, false},
	} {
		for _, mode := range []struct{ ours, flag string }{{"files_with_matches", "-l"}, {"count", "-c"}, {"content", "-n"}} {
			t.Run(tc.name+" "+mode.ours, func(t *testing.T) {
				args := []string{"--no-config", "--hidden", "--glob", "!.git", "--no-messages", "--crlf", mode.flag}
				if tc.fold {
					args = append(args, "-i")
				}
				args = append(args, "--regexp", tc.pattern, root)
				cmd := exec.Command(rg, args...)
				cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
				out, err := cmd.Output()
				if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
					t.Fatalf("rg: %v", err)
				}
				call, _ := json.Marshal(map[string]any{"pattern": tc.pattern, "-i": tc.fold, "output_mode": mode.ours})
				res := grep.Run(context.Background(), call)
				if res.IsError {
					t.Fatal(res.Content)
				}
				got := strings.TrimSuffix(res.Content, "\n")
				if got == "No matches found" {
					got = ""
				}
				want := strings.TrimSuffix(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n")
				// ripgrep prints lines with their CR; the tool cuts it.
				if g, w := sortedLines(got), sortedLines(want); g != w {
					t.Errorf("differs from rg %s:\n%s", strings.Join(args, " "), lineDiff(g, w))
				}
				if strings.Count(got, "\n") < 3 {
					t.Errorf("too few results to compare: %q", got)
				}
			})
		}
	}
}

func sortedLines(s string) string {
	l := strings.Split(s, "\n")
	sort.Strings(l)
	return strings.Join(l, "\n")
}

func lineDiff(got, want string) string {
	g, w := map[string]bool{}, map[string]bool{}
	for _, l := range strings.Split(got, "\n") {
		g[l] = true
	}
	for _, l := range strings.Split(want, "\n") {
		w[l] = true
	}
	var b strings.Builder
	n := 0
	for l := range g {
		if !w[l] && n < 10 {
			fmt.Fprintf(&b, "  only ours: %q\n", l)
			n++
		}
	}
	for l := range w {
		if !g[l] && n < 20 {
			fmt.Fprintf(&b, "  only rg:   %q\n", l)
			n++
		}
	}
	return b.String()
}
