package agent

import (
	"strings"
	"unicode/utf8"
)

// matchStar reports whether s matches pattern, where '*' matches any run
// of bytes (none included) and every other byte stands for itself. It is
// the matcher of Bash commands and WebFetch hosts (decisions.md §6).
// Linear backtracking to the last star keeps it O(len(pattern)·len(s)).
func matchStar(pattern, s string) bool {
	p, i := 0, 0
	starP, starI := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			starP, starI = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case starP >= 0:
			p = starP + 1
			starI++
			i = starI
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// matchSegment matches one path segment (no '/'): '*' matches any run of
// characters, '?' one character, "[...]" a class ("[!...]" or "[^...]"
// negates, "a-z" ranges), and '\' makes the next character literal. A '['
// without its ']' is literal, so no pattern is malformed and no deny rule
// silently stops matching.
func matchSegment(pat, s string) bool {
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

// hasMeta reports whether a path segment holds a wildcard.
func hasMeta(seg string) bool { return strings.ContainsAny(seg, "*?[\\") }

// splitSegments splits a clean absolute path pattern into its segments
// after the leading '/'; "/" has none.
func splitSegments(p string) []string {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// matchPath matches a clean absolute path against pattern segments: a
// segment "**" matches any number of whole segments (none included); any
// other segment matches exactly one through matchSegment, so '*' stays
// within a folder (decisions.md §6). It walks p by offsets and allocates
// nothing.
func matchPath(pat []string, p string) bool {
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
			if seg, after := next(off); matchSegment(pat[pi], seg) {
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

// splitCommand cuts a shell command at its control operators (';', '&',
// '&&', '|', '||', '|&', newlines, parentheses) outside quotes, returning
// the simple commands, trimmed. substitutes is set when the command runs
// other commands inside its words ($(...), backquotes, <(...), >(...)):
// then no allow pattern with a wildcard can vouch for it, because the
// wildcard would be judging text whose meaning is another command.
// It is a guard rail for rules, not a shell parser: quoting is honoured,
// redirections such as 2>&1 stay inside their command, and an unbalanced
// quote counts as a substitution (nothing wildcard-allowed).
//
// The segments are appended to segs, so a caller can offer stack space.
func splitCommand(cmd string, segs []string) (_ []string, substitutes bool) {
	start := 0
	cut := func(end, next int) {
		if s := strings.TrimSpace(cmd[start:end]); s != "" {
			segs = append(segs, s)
		}
		start = next
	}
	// A substitution or subshell opens a fresh quoting context; the stack
	// remembers what to return to when it closes.
	type frame struct {
		kind     byte // '`', '$' (a substitution) or '(' (a subshell)
		inDouble bool
	}
	var stack []frame
	inSingle, inDouble := false, false
	open := func(kind byte) {
		stack = append(stack, frame{kind, inDouble})
		inDouble = false
	}
	closeFrame := func() {
		inDouble = stack[len(stack)-1].inDouble
		stack = stack[:len(stack)-1]
	}
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		if inSingle {
			if c == '\'' {
				inSingle = false
			}
			continue
		}
		switch c {
		case '\\':
			i++
			continue
		case '`':
			substitutes = true
			if len(stack) > 0 && stack[len(stack)-1].kind == '`' {
				closeFrame()
			} else {
				open('`')
			}
			cut(i, i+1)
			continue
		case '$':
			if i+1 < len(cmd) && cmd[i+1] == '(' {
				substitutes = true
				open('$')
				cut(i, i+2)
				i++
			}
			continue
		}
		if inDouble {
			if c == '"' {
				inDouble = false
			}
			continue
		}
		switch c {
		case '\'':
			inSingle = true
		case '"':
			inDouble = true
		case ';', '\n', '\r':
			cut(i, i+1)
		case ')':
			if len(stack) > 0 {
				closeFrame()
			}
			cut(i, i+1)
		case '(':
			if i > 0 && (cmd[i-1] == '<' || cmd[i-1] == '>') {
				substitutes = true
				open('$')
				cut(i-1, i+1)
			} else {
				open('(')
				cut(i, i+1)
			}
		case '|':
			if i+1 < len(cmd) && (cmd[i+1] == '|' || cmd[i+1] == '&') {
				cut(i, i+2)
				i++
			} else {
				cut(i, i+1)
			}
		case '&':
			switch {
			case i > 0 && (cmd[i-1] == '>' || cmd[i-1] == '<'): // >&2, <&0
			case i+1 < len(cmd) && cmd[i+1] == '>': // &> file
			case i+1 < len(cmd) && cmd[i+1] == '&':
				cut(i, i+2)
				i++
			default:
				cut(i, i+1)
			}
		}
	}
	if inSingle || inDouble {
		substitutes = true
	}
	cut(len(cmd), len(cmd))
	return segs, substitutes
}
