package prompt

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// tree is a folder to build: relative path -> content. A content starting
// "-> " makes a symbolic link to the rest; a path ending in "/" is a
// folder.
type tree map[string]string

// mkTree builds tr in a new temporary folder and returns its real path.
func mkTree(t testing.TB, tr tree) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range slices.Sorted(func(yield func(string) bool) {
		for k := range tr {
			if !yield(k) {
				return
			}
		}
	}) {
		p := filepath.Join(root, rel)
		content := tr[rel]
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(rel, "/"):
			err = os.MkdirAll(p, 0o755)
		case strings.HasPrefix(content, "-> "):
			err = os.Symlink(content[3:], p)
		default:
			err = os.WriteFile(p, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// outcome lists, relative to root: the loaded files (with "+" and the
// imports they inlined), the dropped ones ("dropped PATH"), the
// duplicates ("PATH = OF") and the diagnostics ("KIND PATH:LINE").
func summarize(root string, s *Set) (files, dropped, dups, diags []string) {
	rel := func(p string) string {
		if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
		return p
	}
	if s == nil {
		return
	}
	for _, f := range s.Files {
		e := rel(f.Path)
		for _, im := range f.Imports {
			e += " +" + rel(im.Path)
		}
		files = append(files, e)
	}
	for _, f := range s.Dropped {
		dropped = append(dropped, rel(f.Path))
	}
	for _, d := range s.Duplicates {
		dups = append(dups, rel(d.Path)+" = "+rel(d.Of))
	}
	for _, d := range s.Diagnostics {
		diags = append(diags, fmt.Sprintf("%s %s:%d", d.Kind, rel(d.Path), d.Line))
	}
	return
}

type loadCase struct {
	name    string
	tree    tree
	ws      string // the workspace, relative ("" the root)
	home    string // the home folder, relative ("" none)
	trusted bool
	max     int
	files   []string
	dropped []string
	dups    []string
	diags   []string
	// text holds substrings the text of the file named by the key must
	// contain; absent those it must not ("!" prefix).
	text map[string][]string
}

func runLoadCases(t *testing.T, cases []loadCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := mkTree(t, c.tree)
			opts := LoaderOptions{Workspace: filepath.Join(root, c.ws), Trusted: c.trusted, MaxBytes: c.max}
			if c.home != "" {
				opts.Home = filepath.Join(root, c.home)
			}
			set := NewLoader(opts).Load()
			checkSet(t, root, set, c)
		})
	}
}

func checkSet(t *testing.T, root string, set *Set, c loadCase) {
	t.Helper()
	files, dropped, dups, diags := summarize(root, set)
	if !slices.Equal(files, c.files) {
		t.Errorf("files %q, want %q", files, c.files)
	}
	if !slices.Equal(dropped, c.dropped) {
		t.Errorf("dropped %q, want %q", dropped, c.dropped)
	}
	if !slices.Equal(dups, c.dups) {
		t.Errorf("duplicates %q, want %q", dups, c.dups)
	}
	if !slices.Equal(diags, c.diags) {
		t.Errorf("diagnostics %q, want %q", diags, c.diags)
		for _, d := range set.Diagnostics {
			t.Log(d)
		}
	}
	for name, subs := range c.text {
		var text *string
		for i := range set.Files {
			if set.Files[i].Path == filepath.Join(root, name) {
				text = &set.Files[i].Text
			}
		}
		if text == nil {
			t.Errorf("%s not loaded", name)
			continue
		}
		for _, sub := range subs {
			if neg, ok := strings.CutPrefix(sub, "!"); ok {
				if strings.Contains(*text, neg) {
					t.Errorf("%s holds %q:\n%s", name, neg, *text)
				}
			} else if !strings.Contains(*text, sub) {
				t.Errorf("%s lacks %q:\n%s", name, sub, *text)
			}
		}
	}
	if set.Size() > set.MaxBytes {
		t.Errorf("size %d over the limit %d", set.Size(), set.MaxBytes)
	}
}

// TestWalk: which folders' files load, in which order
// (docs/reference/runtime.md, "Instruction files").
func TestWalk(t *testing.T) {
	runLoadCases(t, []loadCase{
		{
			name: "git root above the workspace, never above it",
			tree: tree{"AGENTS.md": "above", "repo/.git/": "", "repo/AGENTS.md": "root", "repo/a/CLAUDE.md": "a",
				"repo/a/b/AGENTS.local.md": "b", "repo/a/b/c/AGENTS.md": "below"},
			ws: "repo/a/b", trusted: true,
			files: []string{"repo/AGENTS.md", "repo/a/CLAUDE.md", "repo/a/b/AGENTS.local.md"},
		},
		{
			name:  "no git: the workspace alone",
			tree:  tree{"AGENTS.md": "above", "ws/AGENTS.md": "ws"},
			ws:    "ws",
			files: []string{"ws/AGENTS.md"}, trusted: true,
		},
		{
			name: "nested repositories: the nearest root",
			tree: tree{"outer/.git/": "", "outer/AGENTS.md": "outer", "outer/inner/.git/": "",
				"outer/inner/AGENTS.md": "inner", "outer/inner/sub/CLAUDE.md": "sub"},
			ws: "outer/inner/sub", trusted: true,
			files: []string{"outer/inner/AGENTS.md", "outer/inner/sub/CLAUDE.md"},
		},
		{
			name: "symlinked workspace: the real path's walk",
			tree: tree{"repo/.git/": "", "repo/AGENTS.md": "root", "repo/sub/AGENTS.md": "sub", "link": "-> repo/sub",
				"link-parent/AGENTS.md": "not here"},
			ws: "link", trusted: true,
			files: []string{"repo/AGENTS.md", "repo/sub/AGENTS.md"},
		},
		{
			name: "a .git file (worktree or submodule) marks the root",
			tree: tree{"AGENTS.md": "above", "wt/.git": "gitdir: /elsewhere\n", "wt/AGENTS.md": "root", "wt/x/CLAUDE.md": "x"},
			ws:   "wt/x", trusted: true,
			files: []string{"wt/AGENTS.md", "wt/x/CLAUDE.md"},
		},
		{
			name: "the names of one folder in order",
			tree: tree{".git/": "", "CLAUDE.local.md": "6", "AGENTS.local.md": "5", ".compat/CLAUDE.md": "4",
				".agent/AGENTS.md": "3", "CLAUDE.md": "2", "AGENTS.md": "1", "agents.md.bak": "no"},
			trusted: true,
			files:   []string{"AGENTS.md", "CLAUDE.md", ".agent/AGENTS.md", ".compat/CLAUDE.md", "AGENTS.local.md", "CLAUDE.local.md"},
		},
		{
			name: "user files come first",
			tree: tree{"home/.agent/AGENTS.md": "user agent", "home/.compat/CLAUDE.md": "user compat", "home/AGENTS.md": "not a user file",
				"ws/.git/": "", "ws/AGENTS.md": "ws"},
			ws: "ws", home: "home", trusted: true,
			files: []string{"home/.agent/AGENTS.md", "home/.compat/CLAUDE.md", "ws/AGENTS.md"},
		},
		{
			name: "untrusted: user files only",
			tree: tree{"home/.agent/AGENTS.md": "user", "ws/.git/": "", "ws/AGENTS.md": "ws", "ws/CLAUDE.local.md": "local"},
			ws:   "ws", home: "home",
			files: []string{"home/.agent/AGENTS.md"},
		},
		{
			name: "a project file that links outside the root is skipped",
			tree: tree{"secret": "key", "ws/.git/": "", "ws/AGENTS.md": "-> ../secret", "ws/CLAUDE.md": "ok"},
			ws:   "ws", trusted: true,
			files: []string{"ws/CLAUDE.md"},
			diags: []string{"outside the repository ws/AGENTS.md:0"},
		},
		{
			name: "a link inside the root loads",
			tree: tree{"ws/.git/": "", "ws/docs/guide.md": "guide", "ws/AGENTS.md": "-> docs/guide.md"},
			ws:   "ws", trusted: true,
			files: []string{"ws/AGENTS.md"},
			text:  map[string][]string{"ws/AGENTS.md": {"guide"}},
		},
		{
			name: "a folder named like an instruction file",
			tree: tree{"ws/.git/": "", "ws/AGENTS.md/": "", "ws/CLAUDE.md": "ok"},
			ws:   "ws", trusted: true,
			files: []string{"ws/CLAUDE.md"},
			diags: []string{"unreadable ws/AGENTS.md:0"},
		},
	})
}

// TestImports: @path lines (docs/reference/runtime.md, "Imports").
func TestImports(t *testing.T) {
	runLoadCases(t, []loadCase{
		{
			name:    "relative to the importing file",
			tree:    tree{".git/": "", "AGENTS.md": "top\n@docs/a.md\nend\n", "docs/a.md": "A\n@b.md\n", "docs/b.md": "B\n"},
			trusted: true,
			files:   []string{"AGENTS.md +docs/a.md +docs/b.md"},
			text:    map[string][]string{"AGENTS.md": {"top\nA\nB\nend\n"}},
		},
		{
			name: "depth 4 loads, the fifth level is refused",
			tree: tree{".git/": "", "AGENTS.md": "@1.md\n", "1.md": "one\n@2.md\n", "2.md": "two\n@3.md\n", "3.md": "three\n@4.md\n",
				"4.md": "four\n@5.md\n", "5.md": "five\n"},
			trusted: true,
			files:   []string{"AGENTS.md +1.md +2.md +3.md +4.md"},
			diags:   []string{"import too deep 4.md:2"},
			text:    map[string][]string{"AGENTS.md": {"four", "[@5.md not imported: imports nest at most 4 deep]", "!five"}},
		},
		{
			name:    "a cycle is cut",
			tree:    tree{".git/": "", "AGENTS.md": "@a.md\n", "a.md": "A\n@b.md\n", "b.md": "B\n@a.md\n"},
			trusted: true,
			files:   []string{"AGENTS.md +a.md +b.md"},
			diags:   []string{"import loop b.md:2"},
			text:    map[string][]string{"AGENTS.md": {"A\nB\n[@a.md not imported: import loop"}},
		},
		{
			name:    "a file importing itself",
			tree:    tree{".git/": "", "AGENTS.md": "me\n@AGENTS.md\n"},
			trusted: true,
			files:   []string{"AGENTS.md"},
			diags:   []string{"import loop AGENTS.md:2"},
		},
		{
			name: "escape from the git root",
			tree: tree{"outside.md": "secret", "repo/.git/": "", "repo/AGENTS.md": "@../outside.md\n"},
			ws:   "repo", trusted: true,
			files: []string{"repo/AGENTS.md"},
			diags: []string{"import outside the repository repo/AGENTS.md:1"},
			text:  map[string][]string{"repo/AGENTS.md": {"[@../outside.md not imported: outside the repository root", "!secret"}},
		},
		{
			name: "escape through a link",
			tree: tree{"outside.md": "secret", "repo/.git/": "", "repo/AGENTS.md": "x\n@in.md\n", "repo/in.md": "-> ../outside.md"},
			ws:   "repo", trusted: true,
			files: []string{"repo/AGENTS.md"},
			diags: []string{"import outside the repository repo/AGENTS.md:2"},
			text:  map[string][]string{"repo/AGENTS.md": {"!secret"}},
		},
		{
			name: "escape of a missing file outside is still an escape",
			tree: tree{"repo/.git/": "", "repo/AGENTS.md": "@/nonexistent/x.md\n"},
			ws:   "repo", trusted: true,
			files: []string{"repo/AGENTS.md"},
			diags: []string{"import outside the repository repo/AGENTS.md:1"},
		},
		{
			name: "~/ from a user file",
			tree: tree{"home/.agent/AGENTS.md": "user\n@~/notes/style.md\n", "home/notes/style.md": "tabs\n", "ws/": ""},
			ws:   "ws", home: "home",
			files: []string{"home/.agent/AGENTS.md +home/notes/style.md"},
			text:  map[string][]string{"home/.agent/AGENTS.md": {"user\ntabs\n"}},
		},
		{
			name: "a user file imports anywhere",
			tree: tree{"home/.compat/CLAUDE.md": "@../../shared.md\n", "shared.md": "shared\n", "ws/": ""},
			ws:   "ws", home: "home",
			files: []string{"home/.compat/CLAUDE.md +shared.md"},
		},
		{
			name: "~/ from a project file escapes",
			tree: tree{"home/notes.md": "private", "ws/.git/": "", "ws/AGENTS.md": "@~/notes.md\n"},
			ws:   "ws", home: "home", trusted: true,
			files: []string{"ws/AGENTS.md"},
			diags: []string{"import outside the repository ws/AGENTS.md:1"},
		},
		{
			name:    "code fences and inline spans are not imports",
			tree:    tree{".git/": "", "AGENTS.md": "```\n@a.md\n```\nsee `this\n@a.md\n` span\n", "a.md": "A"},
			trusted: true,
			files:   []string{"AGENTS.md"},
			text:    map[string][]string{"AGENTS.md": {"```\n@a.md\n```", "`this\n@a.md\n`"}},
		},
		{
			name:    "a missing import is noted inline",
			tree:    tree{".git/": "", "AGENTS.md": "one\ntwo\n@nope.md\nthree\n"},
			trusted: true,
			files:   []string{"AGENTS.md"},
			diags:   []string{"missing import AGENTS.md:3"},
			text:    map[string][]string{"AGENTS.md": {"two\n[@nope.md not imported: no such file]\nthree"}},
		},
		{
			name:    "an import of a file loaded above is noted, not repeated",
			tree:    tree{".git/": "", "AGENTS.md": "the rules\n", "CLAUDE.md": "@AGENTS.md\n"},
			trusted: true,
			files:   []string{"AGENTS.md", "CLAUDE.md"},
			text:    map[string][]string{"CLAUDE.md": {"included above", "!the rules"}},
		},
		{
			name: "a file imported first is not loaded again",
			tree: tree{".git/": "", "AGENTS.md": "@sub/AGENTS.md\n", "sub/AGENTS.md": "sub rules"},
			ws:   "sub", trusted: true,
			files: []string{"AGENTS.md +sub/AGENTS.md"},
			dups:  []string{"sub/AGENTS.md = sub/AGENTS.md"},
		},
		{
			name:    "an imported file over 256 KiB",
			tree:    tree{".git/": "", "AGENTS.md": "@big.md\n", "big.md": strings.Repeat("x", MaxFileBytes+1)},
			trusted: true,
			files:   []string{"AGENTS.md"},
			diags:   []string{"too large AGENTS.md:1"},
		},
		{
			name:    "an imported file that is not UTF-8",
			tree:    tree{".git/": "", "AGENTS.md": "@bad.md\n", "bad.md": "ok\n\xff\n"},
			trusted: true,
			files:   []string{"AGENTS.md"},
			diags:   []string{"not UTF-8 AGENTS.md:1"},
			text:    map[string][]string{"AGENTS.md": {"(line 2)"}},
		},
		{
			name:    "an import of a folder",
			tree:    tree{".git/": "", "AGENTS.md": "@docs\n", "docs/x.md": "x"},
			trusted: true,
			files:   []string{"AGENTS.md"},
			diags:   []string{"unreadable AGENTS.md:1"},
		},
	})
}

// TestLimits: one file's size, the total, and files that cannot be used
// (docs/reference/runtime.md, "Limits of the instruction files").
func TestLimits(t *testing.T) {
	runLoadCases(t, []loadCase{
		{
			name:    "a file over 256 KiB is skipped",
			tree:    tree{".git/": "", "AGENTS.md": strings.Repeat("x", MaxFileBytes+1), "CLAUDE.md": "small"},
			trusted: true,
			files:   []string{"CLAUDE.md"},
			diags:   []string{"too large AGENTS.md:0"},
		},
		{
			name:    "a file of exactly 256 KiB loads when the cap allows",
			tree:    tree{".git/": "", "AGENTS.md": strings.Repeat("x", MaxFileBytes)},
			trusted: true, max: MaxFileBytes,
			files: []string{"AGENTS.md"},
		},
		{
			name: "over the total, farthest first",
			tree: tree{".git/": "", "AGENTS.md": strings.Repeat("r", 60), "a/AGENTS.md": strings.Repeat("a", 30),
				"a/b/AGENTS.md": strings.Repeat("b", 60)},
			ws: "a/b", trusted: true, max: 100,
			files:   []string{"a/AGENTS.md", "a/b/AGENTS.md"},
			dropped: []string{"AGENTS.md"},
			diags:   []string{"over the limit AGENTS.md:0"},
		},
		{
			name: "user files are the farthest",
			tree: tree{"home/.agent/AGENTS.md": strings.Repeat("u", 60), "ws/.git/": "", "ws/AGENTS.md": strings.Repeat("w", 60)},
			ws:   "ws", home: "home", trusted: true, max: 100,
			files:   []string{"ws/AGENTS.md"},
			dropped: []string{"home/.agent/AGENTS.md"},
			diags:   []string{"over the limit home/.agent/AGENTS.md:0"},
		},
		{
			name:    "a file alone over the cap goes, the others stay",
			tree:    tree{".git/": "", "AGENTS.md": strings.Repeat("r", 30), "CLAUDE.md": strings.Repeat("c", 150)},
			trusted: true, max: 100,
			files:   []string{"AGENTS.md"},
			dropped: []string{"CLAUDE.md"},
			diags:   []string{"over the limit CLAUDE.md:0"},
		},
		{
			name: "imports count toward the total",
			tree: tree{".git/": "", "AGENTS.md": "@big.md\n", "big.md": strings.Repeat("x", 80),
				"sub/AGENTS.md": strings.Repeat("s", 50)},
			ws: "sub", trusted: true, max: 100,
			files:   []string{"sub/AGENTS.md"},
			dropped: []string{"AGENTS.md"},
			diags:   []string{"over the limit AGENTS.md:0"},
		},
		{
			name: "a drop lets a later file inline what it had only noted",
			tree: tree{".git/": "", "AGENTS.md": strings.Repeat("r", 280) + "\n@shared.md\n", "shared.md": "shared\n",
				"sub/AGENTS.md": "@../shared.md\n"},
			ws: "sub", trusted: true, max: 300,
			files:   []string{"sub/AGENTS.md +shared.md"},
			dropped: []string{"AGENTS.md"},
			diags:   []string{"over the limit AGENTS.md:0"},
		},
		{
			name:    "not UTF-8",
			tree:    tree{".git/": "", "AGENTS.md": "line one\nline two \xc3\x28\n"},
			trusted: true,
			diags:   []string{"not UTF-8 AGENTS.md:2"},
		},
		{
			name:    "a byte order mark is dropped",
			tree:    tree{".git/": "", "AGENTS.md": "\uFEFFrules"},
			trusted: true,
			files:   []string{"AGENTS.md"},
			text:    map[string][]string{"AGENTS.md": {"!\uFEFF", "rules"}},
		},
	})
}

// TestDuplicates: the same real path or the same content loads once.
func TestDuplicates(t *testing.T) {
	runLoadCases(t, []loadCase{
		{
			name:    "same real path through a link",
			tree:    tree{".git/": "", "AGENTS.md": "rules", "CLAUDE.md": "-> AGENTS.md"},
			trusted: true,
			files:   []string{"AGENTS.md"},
			dups:    []string{"CLAUDE.md = AGENTS.md"},
		},
		{
			name:    "same content in two files",
			tree:    tree{".git/": "", "AGENTS.md": "rules", ".compat/CLAUDE.md": "rules"},
			trusted: true,
			files:   []string{"AGENTS.md"},
			dups:    []string{".compat/CLAUDE.md = AGENTS.md"},
		},
		{
			name: "same content in two folders",
			tree: tree{".git/": "", "AGENTS.md": "rules", "sub/AGENTS.md": "rules", "sub/CLAUDE.md": "other"},
			ws:   "sub", trusted: true,
			files: []string{"AGENTS.md", "sub/CLAUDE.md"},
			dups:  []string{"sub/AGENTS.md = AGENTS.md"},
		},
		{
			name: "the home folder as the repository: a user file is also a project file",
			tree: tree{"home/.git/": "", "home/.agent/AGENTS.md": "mine", "home/AGENTS.md": "dotfiles"},
			ws:   "home", home: "home", trusted: true,
			files: []string{"home/.agent/AGENTS.md", "home/AGENTS.md"},
			dups:  []string{"home/.agent/AGENTS.md = home/.agent/AGENTS.md"},
		},
	})
}

// TestAbsoluteImport: an absolute import inside the root loads (apart
// from the table, which cannot name the temporary folder).
func TestAbsoluteImport(t *testing.T) {
	root := mkTree(t, tree{".git/": "", "docs/x.md": "X"})
	os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("@"+root+"/docs/x.md\n"), 0o644)
	set := NewLoader(LoaderOptions{Workspace: root, Trusted: true}).Load()
	if files, _, _, diags := summarize(root, set); !slices.Equal(files, []string{"AGENTS.md +docs/x.md"}) || diags != nil {
		t.Errorf("files %q, diagnostics %q", files, diags)
	}
}

func TestFIFONeverBlocks(t *testing.T) {
	root := mkTree(t, tree{".git/": "", "CLAUDE.md": "@pipe\n"})
	for _, name := range []string{"AGENTS.md", "pipe"} {
		if err := syscall.Mkfifo(filepath.Join(root, name), 0o644); err != nil {
			t.Skip("no FIFOs here:", err)
		}
	}
	set := NewLoader(LoaderOptions{Workspace: root, Trusted: true}).Load()
	files, _, _, diags := summarize(root, set)
	if !slices.Equal(files, []string{"CLAUDE.md"}) || !slices.Equal(diags, []string{"unreadable AGENTS.md:0", "unreadable CLAUDE.md:1"}) {
		t.Errorf("files %q, diagnostics %q", files, diags)
	}
	if d := set.Diagnostics[0].String(); !strings.Contains(d, "a FIFO") {
		t.Errorf("diagnostic %q does not name the FIFO", d)
	}
}

func TestUnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every file")
	}
	root := mkTree(t, tree{".git/": "", "AGENTS.md": "secret", "CLAUDE.md": "ok"})
	os.Chmod(filepath.Join(root, "AGENTS.md"), 0)
	set := NewLoader(LoaderOptions{Workspace: root, Trusted: true}).Load()
	files, _, _, diags := summarize(root, set)
	if !slices.Equal(files, []string{"CLAUDE.md"}) || !slices.Equal(diags, []string{"unreadable AGENTS.md:0"}) {
		t.Errorf("files %q, diagnostics %q", files, diags)
	}
}

// TestAttach: files below the workspace attach once per session, as tools
// reach their folders (docs/reference/runtime.md, "Instruction files").
func TestAttach(t *testing.T) {
	root := mkTree(t, tree{
		".git/": "", "AGENTS.md": "root rules",
		"a/AGENTS.md": "a rules", "a/b/CLAUDE.md": "b rules", "a/b/x.go": "", "a/c/AGENTS.md": "root rules",
		"a/d/AGENTS.md": "@../../AGENTS.md\nd rules", "e/AGENTS.md": "@../../outside.md",
		"g/AGENTS.md": "g rules", "lg": "-> g", "out": "-> ..",
	})
	l := NewLoader(LoaderOptions{Workspace: root, Trusted: true})
	l.Load()
	steps := []struct {
		name  string
		path  string
		files []string
		dups  []string
		diags []string
		none  bool
	}{
		{name: "a file two folders down: both folders, farthest first", path: "a/b/x.go", files: []string{"a/AGENTS.md", "a/b/CLAUDE.md"}},
		{name: "the same file again: nothing", path: "a/b/x.go", none: true},
		{name: "a new file in a folder attached: nothing", path: "a/b/new.go", none: true},
		{name: "a sibling folder: only it", path: root + "/a/c/y.go", dups: []string{"a/c/AGENTS.md = AGENTS.md"}},
		{name: "an import of a file loaded at the start is noted", path: "a/d", files: []string{"a/d/AGENTS.md"}},
		{name: "the workspace itself: nothing", path: "z.go", none: true},
		{name: "outside the workspace: nothing", path: "/etc/passwd", none: true},
		{name: "an import escaping the root", path: "e/f.go", files: []string{"e/AGENTS.md"}, diags: []string{"import outside the repository e/AGENTS.md:1"}},
		{name: "the empty path: nothing", path: "", none: true},
		{name: "a path through a link: the real folder", path: "lg/new.go", files: []string{"g/AGENTS.md"}},
		{name: "a link out of the workspace: nothing", path: "out/x.go", none: true},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			set := l.Attach(s.path)
			if s.none {
				if set != nil {
					t.Errorf("Attach(%q) = %+v, want nil", s.path, set)
				}
				return
			}
			files, _, dups, diags := summarize(root, set)
			if !slices.Equal(files, s.files) || !slices.Equal(dups, s.dups) || !slices.Equal(diags, s.diags) {
				t.Errorf("Attach(%q): files %q dups %q diags %q; want %q %q %q", s.path, files, dups, diags, s.files, s.dups, s.diags)
			}
		})
	}
	if set := l.Attach("a/b/x.go"); set != nil {
		t.Errorf("attached twice: %+v", set)
	}
	l.Load()
	if set := l.Attach("a/b/x.go"); set == nil || len(set.Files) != 2 {
		t.Errorf("after Load, Attach gave %+v; want the two folders again", set)
	}

	untrusted := NewLoader(LoaderOptions{Workspace: root})
	untrusted.Load()
	if set := untrusted.Attach("a/b/x.go"); set != nil {
		t.Errorf("untrusted Attach = %+v, want nil", set)
	}
}

// BenchmarkLoad loads a repository with 20 instruction files holding 64
// KiB in all (docs/performance.md, "System prompt and instruction files").
func BenchmarkLoad(b *testing.B) {
	tr := tree{".git/": ""}
	dir := ""
	for i := range 10 {
		body := strings.Repeat(fmt.Sprintf("- rule %d of folder %d: keep it short and exact.\n", i, i), 100)
		body = body[:DefaultMaxBytes/20-1] + "\n"
		tr[dir+"AGENTS.md"] = body
		tr[dir+".agent/AGENTS.md"] = strings.ToUpper(body)
		dir += fmt.Sprintf("d%d/", i)
	}
	root := mkTree(b, tr)
	ws := filepath.Join(root, "d0/d1/d2/d3/d4/d5/d6/d7/d8")
	l := NewLoader(LoaderOptions{Workspace: ws, Trusted: true})
	if set := l.Load(); len(set.Files) != 20 || len(set.Diagnostics) != 0 {
		b.Fatalf("%d files, %v", len(set.Files), set.Diagnostics)
	}
	b.ReportAllocs()
	for b.Loop() {
		l.Load()
	}
}
