package pathglob

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMatchSegment(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pat, s string
		want   bool
	}{
		{"star", "*.go", "a.go", true},
		{"star matches a leading dot", "*.go", ".go", true},
		{"question mark is one rune", "?.go", "é.go", true},
		{"range", "[a-c]x", "bx", true},
		{"negated range with !", "[!a-c]x", "bx", false},
		{"negated class with ^", "[^a]x", "bx", true},
		{"unclosed bracket is literal", "[x", "[x", true},
		{"escaped star is literal", `\*`, "*", true},
		{"escaped star is no wildcard", `\*`, "a", false},
		{"star matches empty", "*", "", true},
		{"the text before a star is required", "a*", "", false},
		{"stars around a letter", "*a*", "bab", true},
		{"bracket first in a class", "[]]", "]", true},
		{"non-ASCII between wildcards", "*é?", "aéb", true},
		{"escaped bracket in a class", `[\]]`, "]", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MatchSegment(tc.pat, tc.s); got != tc.want {
				t.Errorf("MatchSegment(%q, %q) = %v", tc.pat, tc.s, got)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pat, p string
		want   bool
	}{
		{"double star matches no folder", "/a/**", "/a", true},
		{"double star matches many folders", "/a/**", "/a/b/c", true},
		{"star stays in one folder", "/a/*", "/a/b/c", false},
		{"leading double star matches no folder", "/**/x", "/x", true},
		{"leading double star matches many folders", "/**/x", "/a/b/x", true},
		{"the last segment must match", "/**/x", "/a/b/x/y", false},
		{"two double stars", "/a/**/b/**/c", "/a/x/b/y/z/c", true},
		{"root", "/", "/", true},
		{"double star matches the root", "/**", "/", true},
		{"a segment does not match the root", "/a", "/", false},
		{"literal", "/a/b", "/a/b", true},
		{"a literal segment matches whole", "/a/b", "/a/bc", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Match(Split(tc.pat), tc.p); got != tc.want {
				t.Errorf("Match(%q, %q) = %v", tc.pat, tc.p, got)
			}
		})
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
