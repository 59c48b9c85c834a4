package ignore

import (
	"fmt"
	"strings"
	"testing"
)

type matchCase struct {
	name    string
	file    string // the ignore file
	path    string
	dir     bool
	want    Result
	nProbs  int // problems Parse reports
	problem string
}

var matchCases = []matchCase{
	{name: "a name matches at any depth", file: "foo\n", path: "a/b/foo", want: Ignored},
	{name: "a name matches a folder too", file: "foo\n", path: "foo", dir: true, want: Ignored},
	{name: "a name does not match a longer name", file: "foo\n", path: "foobar", want: None},
	{name: "a directory pattern skips files", file: "build/\n", path: "build", want: None},
	{name: "a directory pattern matches folders", file: "build/\n", path: "x/build", dir: true, want: Ignored},
	{name: "a leading slash anchors", file: "/foo\n", path: "a/foo", want: None},
	{name: "an anchored name matches at the top", file: "/foo\n", path: "foo", want: Ignored},
	{name: "a middle slash anchors", file: "a/foo\n", path: "x/a/foo", want: None},
	{name: "a middle slash matches from the top", file: "a/foo\n", path: "a/foo", want: Ignored},
	{name: "star stays in a segment", file: "a/*.c\n", path: "a/b/x.c", want: None},
	{name: "star within a segment", file: "a/*.c\n", path: "a/x.c", want: Ignored},
	{name: "suffix pattern", file: "*.o\n", path: "src/main.o", want: Ignored},
	{name: "suffix pattern with a longer suffix", file: "*.o\n", path: "src/main.oo", want: None},
	{name: "leading double star", file: "**/foo\n", path: "a/b/foo", want: Ignored},
	{name: "leading double star matches at the top", file: "**/foo\n", path: "foo", want: Ignored},
	{name: "trailing double star", file: "abc/**\n", path: "abc/x/y", want: Ignored},
	{name: "trailing double star not the folder itself", file: "abc/**\n", path: "abc", dir: true, want: None},
	{name: "inner double star matches no folder", file: "a/**/b\n", path: "a/b", want: Ignored},
	{name: "inner double star matches folders", file: "a/**/b\n", path: "a/x/y/b", want: Ignored},
	{name: "double star next to a name is a star", file: "a/**b\n", path: "a/x/b", want: None},
	{name: "double star next to a name within a segment", file: "a/**b\n", path: "a/xb", want: Ignored},
	{name: "question mark", file: "f?o\n", path: "fxo", want: Ignored},
	{name: "question mark not a slash", file: "a?b/c\n", path: "a/b/c", want: None},
	{name: "class", file: "f[a-c]o\n", path: "fbo", want: Ignored},
	{name: "class miss", file: "f[a-c]o\n", path: "fdo", want: None},
	{name: "negated class", file: "f[!a-c]o\n", path: "fdo", want: Ignored},
	{name: "caret negates too", file: "f[^a-c]o\n", path: "fao", want: None},
	{name: "leading bracket is a member", file: "[]a]\n", path: "]", want: Ignored},
	{name: "named class", file: "[[:digit:]]x\n", path: "7x", want: Ignored},
	{name: "named class miss", file: "[[:digit:]]x\n", path: "ax", want: None},
	{name: "a colon class without its colon is members", file: "[[:a]\n", path: ":", want: Ignored},
	{name: "escaped star is literal", file: "a\\*b\n", path: "a*b", want: Ignored},
	{name: "escaped star does not glob", file: "a\\*b\n", path: "axb", want: None},
	{name: "escaped hash", file: "\\#x\n", path: "#x", want: Ignored},
	{name: "hash starts a comment", file: "#x\n", path: "#x", want: None},
	{name: "escaped bang", file: "\\!x\n", path: "!x", want: Ignored},
	{name: "negation keeps", file: "*.log\n!keep.log\n", path: "keep.log", want: Kept},
	{name: "last match wins", file: "!keep.log\n*.log\n", path: "keep.log", want: Ignored},
	{name: "trailing spaces are cut", file: "foo   \n", path: "foo", want: Ignored},
	{name: "escaped trailing space stays", file: "foo\\ \n", path: "foo ", want: Ignored},
	{name: "escaped trailing space needs the space", file: "foo\\ \n", path: "foo", want: None},
	{name: "trailing tab stays", file: "foo\t\n", path: "foo", want: None},
	{name: "CRLF lines", file: "foo\r\nbar\r\n", path: "bar", want: Ignored},
	{name: "byte order mark skipped", file: "\xef\xbb\xbffoo\n", path: "foo", want: Ignored},
	{name: "no final newline", file: "a\nfoo", path: "foo", want: Ignored},
	{name: "blank lines", file: "\n\n   \nfoo\n", path: "foo", want: Ignored},
	{name: "bytes, not characters", file: "?\n", path: "é", want: None},
	{name: "two question marks for two bytes", file: "??\n", path: "é", want: Ignored},
	{name: "unclosed class reported, the rest applies", file: "[abc\nfoo\n", path: "foo", want: Ignored, nProbs: 1, problem: "line 1: [abc: a character class is not closed"},
	{name: "trailing backslash reported", file: "foo\\\n", path: "foo\\", want: None, nProbs: 1, problem: "line 1: foo\\: it ends with a lone backslash"},
	{name: "unknown class name reported", file: "[[:word:]]\n", path: "a", want: None, nProbs: 1, problem: "line 1: [[:word:]]: a [:name:] class is unknown"},
	{name: "lone bang matches nothing", file: "!\n", path: "!", want: None},
	{name: "lone slash matches nothing", file: "/\n", path: "x", dir: true, want: None},
	{name: "directory-only negation", file: "*\n!*/\n", path: "sub", dir: true, want: Kept},
	{name: "star matches dot files", file: "*\n", path: ".hidden", want: Ignored},
	{name: "range from an escaped bracket", file: "[\\]-a]\n", path: "_", want: Ignored},
	{name: "a backwards range is empty", file: "[a-\\]]\n", path: "]", want: None},
	{name: "NUL ends a line's pattern", file: "foo\x00bar\n", path: "foo", want: Ignored},
}

func TestMatch(t *testing.T) {
	for _, tc := range matchCases {
		t.Run(tc.name, func(t *testing.T) {
			for _, nl := range []string{"", "\n", "\r\n"} {
				file := tc.file
				if nl != "\n" && !strings.Contains(file, "\r") {
					file = strings.TrimSuffix(file, "\n") + nl
				}
				l, probs := Parse([]byte(file))
				if got := l.Match(tc.path, tc.dir); got != tc.want {
					t.Errorf("%q (ending %q) on %q dir=%v: %v, want %v", tc.file, nl, tc.path, tc.dir, got, tc.want)
				}
				if len(probs) != tc.nProbs {
					t.Fatalf("%q: problems %v, want %d", tc.file, probs, tc.nProbs)
				}
				if tc.problem != "" {
					if got := fmt.Sprintf("line %d: %s: %s", probs[0].Line, probs[0].Pattern, probs[0].Reason); got != tc.problem {
						t.Errorf("problem %q, want %q", got, tc.problem)
					}
				}
			}
		})
	}
}

func TestDirPrecedence(t *testing.T) {
	parse := func(s string) *List { l, _ := Parse([]byte(s)); return l }
	// top (a repository) / sub / deeper; paths are relative to top.
	top := (*Dir)(nil).Child(0, Rules{Repo: true, Gitignore: parse("*.log\nbuild/\n"), Exclude: parse("*.tmp\n"), Global: parse("*.swp\n*.bak\n")})
	sub := top.Child(len("sub/"), Rules{Gitignore: parse("!keep.log\n/only-here\n"), Ignore: parse("*.bak\n!*.tmp\n")})
	deeper := sub.Child(len("sub/deeper/"), Rules{})
	for _, tc := range []struct {
		name string
		d    *Dir
		path string
		dir  bool
		want bool
	}{
		{"gitignore at the top", top, "a.log", false, true},
		{"a nearer gitignore negates", sub, "sub/keep.log", false, false},
		{"the negation is local", top, "keep.log", false, true},
		{"anchored to its own folder", deeper, "sub/only-here", false, true},
		{"anchored, not below", deeper, "sub/deeper/only-here", false, false},
		{"info/exclude", deeper, "sub/deeper/x.tmp", false, false}, // .ignore's !*.tmp wins
		{"info/exclude elsewhere", top, "x.tmp", false, true},
		{"global excludes", top, "x.swp", false, true},
		{"ignore beats gitignore", sub, "sub/x.bak", false, true},
		{"directory pattern", deeper, "sub/deeper/build", true, true},
		{"nothing matches", deeper, "sub/deeper/main.go", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.d.Ignored(tc.path, tc.dir); got != tc.want {
				t.Errorf("%s: %v, want %v", tc.path, got, tc.want)
			}
		})
	}
	t.Run("gitignore outside a repository is not read", func(t *testing.T) {
		d := (*Dir)(nil).Child(0, Rules{Gitignore: parse("*\n"), Ignore: parse("x\n")})
		if d.Ignored("a", false) || !d.Ignored("x", false) {
			t.Errorf("outside a repository: .gitignore must not apply, .ignore must")
		}
	})
	t.Run("a nested repository stops the rules above", func(t *testing.T) {
		nested := top.Child(len("nested/"), Rules{Repo: true})
		if nested.Ignored("nested/a.log", false) {
			t.Errorf("the outer .gitignore applied inside a nested repository")
		}
	})
}

// ref is an independent, plainly recursive reading of the pattern
// semantics (gitignore(5)) used to check the automaton: exponential, so
// only for short inputs.
func ref(p, s string) (bool, bool) {
	var rec func(pi, si int) bool
	valid := true
	rec = func(pi, si int) bool {
		if pi == len(p) {
			return si == len(s)
		}
		switch c := p[pi]; c {
		case '\\':
			if pi+1 == len(p) {
				valid = false
				return false
			}
			return si < len(s) && s[si] == p[pi+1] && rec(pi+2, si+1)
		case '?':
			return si < len(s) && s[si] != '/' && rec(pi+1, si+1)
		case '*':
			j := pi
			for j < len(p) && p[j] == '*' {
				j++
			}
			special := j-pi >= 2 && (pi == 0 || p[pi-1] == '/') && (j == len(p) || p[j] == '/' || strings.HasPrefix(p[j:], `\/`))
			if special && j < len(p) && p[j] == '/' && rec(j+1, si) {
				return true
			}
			for k := si; ; k++ {
				if rec(j, k) {
					return true
				}
				if k == len(s) || (!special && s[k] == '/') {
					return false
				}
			}
		case '[':
			set, neg, end, err := parseClass(p, pi)
			if err != nil {
				valid = false
				return false
			}
			if si >= len(s) || s[si] == '/' {
				return false
			}
			in := set[s[si]>>6]&(1<<(s[si]&63)) != 0
			return in != neg && rec(end+1, si+1)
		default:
			return si < len(s) && s[si] == c && rec(pi+1, si+1)
		}
	}
	m := rec(0, 0)
	return m, valid
}

var wildCases = []struct{ pat, s string }{
	{"a*b", "axxb"}, {"a*b", "a/b"}, {"**/b", "x/y/b"}, {"a/**", "a/x/y"}, {"a/**/b", "a/b"},
	{"a/**/b", "a/x/b"}, {"a**/b", "ax/b"}, {"a**/b", "a/x/b"}, {"**", "a/b"}, {"*", "a/b"},
	{"[!a]", "/"}, {"[a-c]*", "b/x"}, {"\\*", "*"}, {"**\\/x", "a/x"}, {"**\\/x", "x"},
	{"*/", "a/"}, {"a?c", "a/c"}, {"[[:alpha:]]?", "a1"}, {"x/**/", "x/a/"}, {"[]-]", "-"},
}

func TestMatchAgainstReference(t *testing.T) {
	for _, tc := range wildCases {
		t.Run(tc.pat+" "+tc.s, func(t *testing.T) {
			checkAgainstRef(t, tc.pat, tc.s)
		})
	}
}

func checkAgainstRef(t *testing.T, pat, s string) {
	want, valid := ref(pat, s)
	toks, err := compile(pat)
	if err != nil {
		if valid && want {
			t.Fatalf("%q rejected (%v) but matches %q", pat, err, s)
		}
		return
	}
	if got := match(toks, s); got != want {
		t.Errorf("match(%q, %q) = %v, reference %v", pat, s, got, want)
	}
	if got := matchWide(toks, s); got != want {
		t.Errorf("matchWide(%q, %q) = %v, reference %v", pat, s, got, want)
	}
}

func FuzzMatch(f *testing.F) {
	for _, tc := range wildCases {
		f.Add(tc.pat, tc.s)
	}
	f.Fuzz(func(t *testing.T, pat, s string) {
		if len(pat) > 12 || len(s) > 12 {
			return // the reference is exponential
		}
		checkAgainstRef(t, pat, s)
	})
}

func FuzzParse(f *testing.F) {
	for _, tc := range matchCases {
		f.Add([]byte(tc.file), tc.path)
	}
	f.Fuzz(func(t *testing.T, data []byte, path string) {
		l, probs := Parse(data)
		lines := strings.Count(string(data), "\n") + 1
		for _, p := range probs {
			if p.Line < 1 || p.Line > lines || p.Reason == "" {
				t.Errorf("problem %+v out of range (%d lines)", p, lines)
			}
		}
		for _, dir := range []bool{false, true} {
			_ = l.Match(path, dir)
		}
	})
}
