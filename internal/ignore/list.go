// Package ignore decides which paths git ignores: the gitignore(5)
// pattern format (negation, anchoring, directory-only patterns, "**",
// escapes, trailing spaces, character classes, all as git matches them),
// the order in which a folder's ignore files, its parents', the
// repository's info/exclude and the user's excludes file are consulted,
// and the core.excludesFile setting of git's configuration files
// (docs/reference/runtime.md, "What the search tools skip").
//
// It is pure: file contents and paths in, decisions out; the walker that
// reads the files is internal/search.
//
// Imports: the standard library only, and no os, syscall or net
// (CONTRIBUTING.md, "Import direction").
package ignore

import (
	"bytes"
	"strings"
)

// Result is what one list of patterns says about a path.
type Result uint8

// Results of [List.Match].
const (
	None    Result = iota // no pattern matched
	Ignored               // the last matching pattern ignores the path
	Kept                  // the last matching pattern is a negation ("!pat")
)

type pattern struct {
	toks    []token
	negate  bool
	dirOnly bool // the pattern ended with '/'
	// base: the pattern has no '/' (after its trailing one is removed), so
	// it matches the last segment of a path at any depth.
	base bool
	// lit is the whole pattern when it has no wildcard, suffix the rest
	// of a "*literal" pattern: the fast paths git takes too.
	lit    string
	isLit  bool
	suffix string
	isSuf  bool
	prefix string // the literal start of an anchored pattern
}

// List is the patterns of one ignore file, in file order. A nil *List
// matches nothing. It is safe for concurrent use.
type List struct {
	pats []pattern
}

// Problem is a line of an ignore file that can never match anything the
// way git reads it (an unclosed class, a trailing backslash, an unknown
// [:name:]); the rest of the file still applies.
type Problem struct {
	Line    int    // from 1
	Pattern string // the line as written, after trailing spaces are cut
	Reason  string
}

// Parse reads an ignore file the way git does: a UTF-8 byte order mark is
// skipped; lines end with LF (a CR before it is dropped); blank lines and
// lines starting with '#' are skipped; unescaped trailing spaces are cut;
// "\#" and "\!" start a pattern with a literal '#' or '!'. It returns
// nil when the file has no pattern.
func Parse(data []byte) (*List, []Problem) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var l List
	var probs []Problem
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if i := bytes.IndexByte(line, 0); i >= 0 {
			line = line[:i] // git reads a line as a C string
		}
		text := trimTrailingSpaces(string(line))
		p, err := parsePattern(text)
		if err != nil {
			probs = append(probs, Problem{Line: n, Pattern: text, Reason: err.Error()})
			continue
		}
		if p != nil {
			l.pats = append(l.pats, *p)
		}
	}
	if len(l.pats) == 0 {
		return nil, probs
	}
	return &l, probs
}

// trimTrailingSpaces cuts the spaces at the end of a line that no
// backslash escapes (tabs stay, as in git).
func trimTrailingSpaces(s string) string {
	end := -1 // where a run of trailing spaces starts
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if end < 0 {
				end = i
			}
		case '\\':
			i++
			if i >= len(s) {
				return s
			}
			end = -1
		default:
			end = -1
		}
	}
	if end >= 0 {
		return s[:end]
	}
	return s
}

// parsePattern parses one line; nil means a pattern that can match
// nothing and is no error (an empty one, "!" or "/").
func parsePattern(s string) (*pattern, error) {
	var p pattern
	if strings.HasPrefix(s, "!") {
		p.negate = true
		s = s[1:]
	}
	if strings.HasSuffix(s, "/") {
		p.dirOnly = true
		s = s[:len(s)-1]
	}
	p.base = !strings.Contains(s, "/")
	if !p.base && s[0] == '/' {
		s = s[1:] // anchored: the pattern is matched from the list's folder
	}
	toks, err := compile(s)
	if err != nil {
		return nil, err
	}
	if s == "" {
		return nil, nil
	}
	p.toks = toks
	simple := strings.IndexAny(s, `*?[\`)
	switch {
	case simple < 0:
		p.lit, p.isLit = s, true
	case p.base && s[0] == '*' && !strings.ContainsAny(s[1:], `*?[\`):
		p.suffix, p.isSuf = s[1:], true
	case !p.base:
		p.prefix = s[:simple]
	}
	return &p, nil
}

// Match says what the list decides for path, which is relative to the
// folder of the list's file ('/'-separated, no leading or trailing '/');
// dir says whether it is a folder. The last matching pattern decides.
func (l *List) Match(path string, dir bool) Result {
	if l == nil {
		return None
	}
	name := path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		name = path[i+1:]
	}
	for i := len(l.pats) - 1; i >= 0; i-- {
		p := &l.pats[i]
		if p.dirOnly && !dir {
			continue
		}
		if !p.matches(path, name) {
			continue
		}
		if p.negate {
			return Kept
		}
		return Ignored
	}
	return None
}

func (p *pattern) matches(path, name string) bool {
	s := name
	if !p.base {
		s = path
	}
	switch {
	case p.isLit:
		return s == p.lit
	case p.isSuf:
		return strings.HasSuffix(s, p.suffix)
	case !strings.HasPrefix(s, p.prefix):
		return false
	}
	return match(p.toks, s)
}

// Len returns the number of patterns in the list.
func (l *List) Len() int {
	if l == nil {
		return 0
	}
	return len(l.pats)
}
