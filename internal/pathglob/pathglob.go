// Package pathglob matches clean absolute paths against path patterns: the
// syntax of file permission rules (docs/reference/settings.md, "Rule
// syntax": `*` and `?` stay within a folder, `**` crosses folders, `[...]`
// classes, `\` escapes), which the Glob and Grep tools share so that a
// pattern means the same in a rule and in a search. It is pure: patterns
// and paths in, decisions out, no file system.
//
// Imports: the standard library only (a pure leaf; README.md, "A walk
// through the code").
package pathglob

import (
	"strings"
	"unicode/utf8"
)

// MatchSegment matches one path segment (no '/'): '*' matches any run of
// characters, '?' one character, "[...]" a class ("[!...]" or "[^...]"
// negates, "a-z" ranges), and '\' makes the next character literal. A '['
// without its ']' is literal, so no pattern is malformed and no deny rule
// silently stops matching.
func MatchSegment(pat, s string) bool {
	px, sx := 0, 0
	nextPx, nextSx := -1, 0
	for px < len(pat) || sx < len(s) {
		if px < len(pat) {
			switch c := pat[px]; c {
			case '*':
				nextPx, nextSx = px, sx
				if sx < len(s) {
					_, w := utf8.DecodeRuneInString(s[sx:])
					nextSx = sx + w
				} else {
					nextSx = len(s) + 1 // nothing left to give the star
				}
				px++
				continue
			case '?':
				if sx < len(s) {
					_, w := utf8.DecodeRuneInString(s[sx:])
					px++
					sx += w
					continue
				}
			case '[':
				if end := classEnd(pat, px); end > 0 {
					if sx < len(s) {
						r, w := utf8.DecodeRuneInString(s[sx:])
						if matchClass(pat[px+1:end], r) {
							px = end + 1
							sx += w
							continue
						}
					}
					break
				}
				if sx < len(s) && s[sx] == '[' {
					px++
					sx++
					continue
				}
			case '\\':
				if px+1 < len(pat) {
					if sx < len(s) && s[sx] == pat[px+1] {
						px += 2
						sx++
						continue
					}
					break
				}
				fallthrough
			default:
				if sx < len(s) && s[sx] == c {
					px++
					sx++
					continue
				}
			}
		}
		if nextPx >= 0 && nextSx <= len(s) {
			px, sx = nextPx, nextSx
			continue
		}
		return false
	}
	return true
}

// classEnd returns the index of the ']' that closes the class opening at
// pat[open], or -1.
func classEnd(pat string, open int) int {
	i := open + 1
	if i < len(pat) && (pat[i] == '!' || pat[i] == '^') {
		i++
	}
	if i < len(pat) && pat[i] == ']' { // a leading ']' is literal
		i++
	}
	for ; i < len(pat); i++ {
		switch pat[i] {
		case '\\':
			i++
		case ']':
			return i
		}
	}
	return -1
}

func matchClass(class string, r rune) bool {
	neg := false
	if class != "" && (class[0] == '!' || class[0] == '^') {
		neg, class = true, class[1:]
	}
	in := false
	for class != "" {
		lo, w := classRune(class)
		class = class[w:]
		hi := lo
		if len(class) >= 2 && class[0] == '-' {
			hi, w = classRune(class[1:])
			class = class[1+w:]
		}
		if lo <= r && r <= hi {
			in = true
		}
	}
	return in != neg
}

func classRune(s string) (rune, int) {
	if s[0] == '\\' && len(s) > 1 {
		r, w := utf8.DecodeRuneInString(s[1:])
		return r, w + 1
	}
	return utf8.DecodeRuneInString(s)
}

// HasMeta reports whether a path segment holds a wildcard.
func HasMeta(seg string) bool { return strings.ContainsAny(seg, "*?[\\") }

// Split splits a clean absolute path pattern into its segments
// after the leading '/'; "/" has none.
func Split(p string) []string {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// Match matches a clean absolute path against pattern segments: a segment
// "**" matches any number of whole segments (none included); any other
// segment matches exactly one through MatchSegment, so '*' stays within a
// folder (docs/reference/settings.md, "Rule syntax"). It walks p by offsets
// and allocates nothing.
func Match(pat []string, p string) bool {
	p = strings.TrimPrefix(p, "/")
	n := len(p)
	start := 0
	if p == "" {
		start = n + 1 // no segments at all
	}
	next := func(off int) (seg string, after int) {
		if i := strings.IndexByte(p[off:], '/'); i >= 0 {
			return p[off : off+i], off + i + 1
		}
		return p[off:], n + 1
	}
	pi, off := 0, start
	starPi, starOff := -1, 0
	for off <= n {
		if pi < len(pat) && pat[pi] == "**" {
			starPi, starOff = pi, off
			pi++
			continue
		}
		if pi < len(pat) {
			if seg, after := next(off); MatchSegment(pat[pi], seg) {
				pi++
				off = after
				continue
			}
		}
		if starPi >= 0 {
			_, starOff = next(starOff)
			pi, off = starPi+1, starOff
			continue
		}
		return false
	}
	for pi < len(pat) && pat[pi] == "**" {
		pi++
	}
	return pi == len(pat)
}
