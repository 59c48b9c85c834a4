package search

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The walk is compared with git's own answer on generated trees: the files
// `git ls-files --others --exclude-standard` lists (untracked and not
// ignored, in a repository where nothing is tracked) are exactly those the
// walk visits, and `--ignored` lists the rest. Skipped only where git is
// not installed.

// gitTree is a generated working tree: files, and ignore files with
// patterns drawn from the gitignore grammar.
type gitTree struct {
	files   []string          // paths of files
	ignores map[string]string // folder ("" the top) -> .gitignore content
	exclude string            // .git/info/exclude
	global  string            // the excludes file of the user's configuration
}

// Names that the patterns below can hit in interesting ways.
var treeNames = []string{"a", "b", "ab", "a.txt", "b.log", "c.o", "x.go", "x_test.go", ".hid", "[x]", "a b", "#h", "!b", "foo", "foo.bar", "Build", "build", "déjà", "t\\u", "a*"}

var patternPieces = []string{"a", "b", "*", "**", "?", "[ab]", "[!a]", "[a-c]", "[[:alpha:]]", ".txt", ".log", "foo", "build", "x", "_test", ".go", "\\*", "\\[x]", "\\#h", "\\!b", "é", "d", "[]x]"}

func randomTree(r *rand.Rand) gitTree {
	t := gitTree{ignores: map[string]string{}}
	var dirs = []string{""}
	for range 3 + r.IntN(6) {
		parent := dirs[r.IntN(len(dirs))]
		name := treeNames[r.IntN(len(treeNames))]
		d := strings.TrimPrefix(parent+"/"+name, "/")
		dirs = append(dirs, d)
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		seen[d] = true
	}
	for range 10 + r.IntN(30) {
		d := dirs[r.IntN(len(dirs))]
		p := strings.TrimPrefix(d+"/"+treeNames[r.IntN(len(treeNames))], "/")
		if seen[p] || isUnder(p, dirs) {
			continue
		}
		seen[p] = true
		t.files = append(t.files, p)
	}
	for _, d := range dirs {
		if r.IntN(2) == 0 {
			t.ignores[d] = randomPatterns(r)
		}
	}
	if r.IntN(2) == 0 {
		t.exclude = randomPatterns(r)
	}
	if r.IntN(2) == 0 {
		t.global = randomPatterns(r)
	}
	return t
}

// isUnder reports whether a file path would need to be a folder too.
func isUnder(p string, dirs []string) bool {
	for _, d := range dirs {
		if d == p || strings.HasPrefix(d, p+"/") {
			return true
		}
	}
	return false
}

func randomPatterns(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.IntN(5) {
		p := randomPattern(r)
		for versionDependent(p.String()) {
			p = randomPattern(r)
		}
		b.WriteString(p.String())
		if r.IntN(8) == 0 {
			b.WriteString("\r")
		}
		b.WriteByte('\n')
		if r.IntN(8) == 0 {
			b.WriteString("# comment\n\n")
		}
	}
	return b.String()
}

// versionDependent reports a pattern whose first wildcard is a "**" right
// after a literal in its segment ("a**/b"): git before 2.52 cut the
// literal off and then took the "**" for a whole segment, so its answer
// depends on the installed version. The documented meaning (a plain
// star) is checked by the table tests of internal/ignore.
func versionDependent(p string) bool {
	p = strings.TrimPrefix(p, "!")
	body := strings.TrimRight(p, " ")
	if !strings.Contains(strings.TrimSuffix(body, "/"), "/") {
		return false // matched against the name alone: no prefix is cut
	}
	body = strings.TrimPrefix(body, "/")
	i := strings.IndexAny(body, `*?[\`)
	return i > 0 && strings.HasPrefix(body[i:], "**") && body[i-1] != '/'
}

func randomPattern(r *rand.Rand) *strings.Builder {
	var p strings.Builder
	if r.IntN(4) == 0 {
		p.WriteByte('!')
	}
	if r.IntN(4) == 0 {
		p.WriteByte('/')
	}
	for k := range 1 + r.IntN(3) {
		if k > 0 {
			p.WriteByte('/')
		}
		for range 1 + r.IntN(2) {
			p.WriteString(patternPieces[r.IntN(len(patternPieces))])
		}
	}
	if r.IntN(4) == 0 {
		p.WriteByte('/')
	}
	if r.IntN(6) == 0 {
		p.WriteString("  ")
	}
	if r.IntN(10) == 0 {
		p.WriteString("\\ ")
	}
	return &p
}

func (gt gitTree) write(t testing.TB, root, home string) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("git", "init", "-q", root)
	cmd.Env = gitEnv(home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	for _, f := range gt.files {
		p := filepath.Join(root, f)
		must(os.MkdirAll(filepath.Dir(p), 0o755))
		must(os.WriteFile(p, []byte("x\n"), 0o644))
	}
	for d, content := range gt.ignores {
		must(os.MkdirAll(filepath.Join(root, d), 0o755))
		must(os.WriteFile(filepath.Join(root, d, ".gitignore"), []byte(content), 0o644))
	}
	must(os.MkdirAll(filepath.Join(root, ".git", "info"), 0o755))
	must(os.WriteFile(filepath.Join(root, ".git", "info", "exclude"), []byte(gt.exclude), 0o644))
	must(os.WriteFile(filepath.Join(home, "global-ignore"), []byte(gt.global), 0o644))
	must(os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[core]\n\texcludesFile = ~/global-ignore\n"), 0o644))
}

// gitEnv is a git with no system or user configuration but the test's.
func gitEnv(home string) []string {
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "xdg"), "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH"), "LC_ALL=C"}
	return env
}

func gitFiles(t testing.TB, root, home string, ignored bool) []string {
	t.Helper()
	args := []string{"-C", root, "ls-files", "-z", "--others", "--exclude-standard"}
	if ignored {
		args = append(args, "--ignored")
	}
	cmd := exec.Command("git", args...)
	cmd.Env = gitEnv(home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v\n%s", err, stderr.String())
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" && !strings.HasSuffix(f, ".gitignore") {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files
}

func walkFiles(t testing.TB, root, home string) ([]string, *Report) {
	t.Helper()
	var mu sync.Mutex
	var files []string
	rep, err := Walk(context.Background(), WalkOptions{
		Root: root,
		Env:  Env{Home: home, XDGConfigHome: filepath.Join(home, "xdg")},
		Visit: func(_ int, e Entry) {
			mu.Lock()
			defer mu.Unlock()
			if e.Name != ".gitignore" {
				files = append(files, e.Rel)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files, rep
}

func requireGit(t testing.TB) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

func compareWithGit(t testing.TB, gt gitTree) {
	t.Helper()
	root, home := t.TempDir(), t.TempDir()
	gt.write(t, root, home)
	want := gitFiles(t, root, home, false)
	got, _ := walkFiles(t, root, home)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		var desc strings.Builder
		for d, c := range gt.ignores {
			fmt.Fprintf(&desc, "%s/.gitignore: %q\n", d, c)
		}
		fmt.Fprintf(&desc, "info/exclude: %q\nglobal: %q\nfiles: %q\n", gt.exclude, gt.global, gt.files)
		t.Fatalf("walk %q\n git %q\n%s", got, want, desc.String())
	}
	// What git calls ignored is exactly the rest.
	ignored := gitFiles(t, root, home, true)
	if len(ignored)+len(want) != len(gt.files) {
		t.Errorf("git: %d visible + %d ignored != %d files", len(want), len(ignored), len(gt.files))
	}
}

func TestWalkMatchesGit(t *testing.T) {
	requireGit(t)
	fixed := []struct {
		name string
		tree gitTree
	}{
		{"negation inside an ignored folder stays ignored", gitTree{files: []string{"build/keep.txt", "build/x", "src/a"}, ignores: map[string]string{"": "build/\n!build/keep.txt\n"}}},
		{"contents pattern lets a negation through", gitTree{files: []string{"build/keep.txt", "build/x"}, ignores: map[string]string{"": "build/*\n!build/keep.txt\n"}}},
		{"nested gitignore anchors to its folder", gitTree{files: []string{"a/foo", "a/b/foo", "foo"}, ignores: map[string]string{"a": "/foo\n"}}},
		{"double star forms", gitTree{files: []string{"x/y/z.log", "z.log", "a/b/c/d", "a/d"}, ignores: map[string]string{"": "**/z.log\na/**/d\n"}}},
		{"info/exclude and the global file", gitTree{files: []string{"a.o", "b.tmp", "c"}, exclude: "*.o\n", global: "*.tmp\n"}},
		{"a nearer file re-includes", gitTree{files: []string{"sub/a.log", "a.log"}, ignores: map[string]string{"": "*.log\n", "sub": "!a.log\n"}}},
		{"escapes and trailing spaces", gitTree{files: []string{"a*", "ab", "#h", "!b", "a b"}, ignores: map[string]string{"": "a\\*\n\\#h   \n\\!b\na\\ b\n"}}},
		{"character classes", gitTree{files: []string{"a1", "ab", "a]", "a-"}, ignores: map[string]string{"": "a[[:digit:]]\na[]]\n"}}},
	}
	for _, tc := range fixed {
		t.Run(tc.name, func(t *testing.T) { compareWithGit(t, tc.tree) })
	}
	for seed := range 40 {
		t.Run(fmt.Sprintf("generated %d", seed), func(t *testing.T) {
			compareWithGit(t, randomTree(rand.New(rand.NewPCG(uint64(seed), 21))))
		})
	}
}

// FuzzWalkMatchesGit draws trees and pattern sets from the fuzzer's
// numbers; each input runs git, so it is slow, and it only runs its seeds
// in a plain `go test`.
func FuzzWalkMatchesGit(f *testing.F) {
	for seed := range 4 {
		f.Add(uint64(seed), uint64(7))
	}
	f.Fuzz(func(t *testing.T, a, b uint64) {
		requireGit(t)
		compareWithGit(t, randomTree(rand.New(rand.NewPCG(a, b))))
	})
}
