package pathglob

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMatchSegment(t *testing.T) {
	for _, tc := range []struct {
		pat, s string
		want   bool
	}{
		{"*.go", "a.go", true}, {"*.go", ".go", true}, {"?.go", "é.go", true}, {"[a-c]x", "bx", true},
		{"[!a-c]x", "bx", false}, {"[^a]x", "bx", true}, {"[x", "[x", true}, {`\*`, "*", true},
		{`\*`, "a", false}, {"*", "", true}, {"a*", "", false}, {"*a*", "bab", true}, {"[]]", "]", true},
		{"*é?", "aéb", true}, {`[\]]`, "]", true},
	} {
		if got := MatchSegment(tc.pat, tc.s); got != tc.want {
			t.Errorf("MatchSegment(%q, %q) = %v", tc.pat, tc.s, got)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pat, p string
		want   bool
	}{
		{"/a/**", "/a", true}, {"/a/**", "/a/b/c", true}, {"/a/*", "/a/b/c", false},
		{"/**/x", "/x", true}, {"/**/x", "/a/b/x", true}, {"/**/x", "/a/b/x/y", false},
		{"/a/**/b/**/c", "/a/x/b/y/z/c", true}, {"/", "/", true}, {"/**", "/", true}, {"/a", "/", false},
		{"/a/b", "/a/b", true}, {"/a/b", "/a/bc", false},
	} {
		if got := Match(Split(tc.pat), tc.p); got != tc.want {
			t.Errorf("Match(%q, %q) = %v", tc.pat, tc.p, got)
		}
	}
}

// FuzzMatch checks Match against a slow reference, a pattern compiled to
// a regular expression, wherever the reference can express the pattern
// (the star forms), and that no pattern or path makes it panic.
func FuzzMatch(f *testing.F) {
	// Path forms the reference can check, then forms it cannot, which
	// must not panic.
	f.Add("/a/**/b", "/a/x/y/b")
	f.Add("/src/*.go", "/src/a.go")
	f.Add("/**", "/")
	f.Add(`/x\*`, "/x*")
	f.Add("[a-", "[a-")
	f.Add("go test *", "go test ./...")
	f.Add("a*b*c", "aXbYc")
	f.Fuzz(func(t *testing.T, pat, s string) {
		if len(pat) > 64 || len(s) > 256 {
			return // the reference is a regular expression; keep it quick
		}
		if !strings.HasPrefix(pat, "/") || !strings.HasPrefix(s, "/") || strings.ContainsAny(pat, "?[\\") {
			Match(Split(pat), s) // must not panic
			return
		}
		if got, want := Match(Split(pat), s), refPath(pat, s); got != want {
			t.Fatalf("Match(%q, %q) = %v, reference %v", pat, s, got, want)
		}
	})
}

func refPath(pat, s string) bool {
	if !utf8.ValidString(pat) || !utf8.ValidString(s) {
		return Match(Split(pat), s)
	}
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for _, seg := range Split(pat) {
		if seg == "**" {
			b.WriteString(`(?:/[^/]*)*`)
			continue
		}
		b.WriteString("/")
		for _, r := range seg {
			if r == '*' {
				b.WriteString(`[^/]*`)
			} else {
				b.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
	}
	b.WriteString(`)$`)
	if s == "/" {
		s = ""
	}
	return regexp.MustCompile(b.String()).MatchString(s)
}
