package ignore

import (
	"errors"
	"math/bits"
)

// A pattern is compiled to a short program of tokens run as a
// nondeterministic automaton over the bytes of a path, so matching takes
// time linear in the path whatever the pattern (a hostile ignore file
// cannot make a search slow). The meaning of each piece is git's
// (gitignore(5), "PATTERN FORMAT"): matching is by bytes, not characters;
// '*' and '?' never match '/'; "**" is special only as a whole segment.

type tokKind uint8

const (
	tokByte  tokKind = iota // one literal byte
	tokAny                  // '?': any byte but '/'
	tokClass                // "[...]": a byte in the set (never '/')
	tokStar                 // '*' (no '/') or a special "**" (anything)
	tokSkip                 // consumes nothing: the way past the "**/" that follows it
)

type token struct {
	kind  tokKind
	slash bool // tokStar: may match '/'
	b     byte
	class *[4]uint64
	// skip: the states i+1 and i+skip are reachable from state i without
	// consuming a byte (a star can match nothing; the "**/" after a
	// tokSkip can be passed over whole, its slash included).
	skip uint8
}

// Errors of a pattern that git would never let match anything.
var (
	errTrailingBackslash = errors.New("it ends with a lone backslash")
	errUnclosedClass     = errors.New("a character class is not closed")
	errBadClassName      = errors.New("a [:name:] class is unknown")
)

// compile turns a pattern (with no leading '!', no trailing '/') into
// tokens. The rules for classes follow git's wildmatch: '!' or '^' first
// negates; a ']' first is literal; "a-z" is a range of bytes; '\' escapes;
// "[:alpha:]" and the other eleven POSIX names are ASCII classes; an
// unclosed class, an unknown name or a trailing '\' make the pattern one
// that matches nothing, which is reported instead.
func compile(p string) ([]token, error) {
	var toks []token
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '\\':
			if i+1 >= len(p) {
				return nil, errTrailingBackslash
			}
			i++
			toks = append(toks, token{kind: tokByte, b: p[i]})
		case '?':
			toks = append(toks, token{kind: tokAny})
		case '*':
			j := i
			for j < len(p) && p[j] == '*' {
				j++
			}
			run := j - i
			if run >= 2 && (i == 0 || p[i-1] == '/') && (j == len(p) || p[j] == '/' || (p[j] == '\\' && j+1 < len(p) && p[j+1] == '/')) {
				if j < len(p) && p[j] == '/' {
					// "**/": nothing at all, or anything ending in '/'.
					toks = append(toks, token{kind: tokSkip, skip: 3}, token{kind: tokStar, slash: true, skip: 1}, token{kind: tokByte, b: '/'})
					j++
				} else {
					toks = append(toks, token{kind: tokStar, slash: true, skip: 1})
				}
			} else {
				toks = append(toks, token{kind: tokStar, skip: 1})
			}
			i = j - 1
		case '[':
			set, neg, end, err := parseClass(p, i)
			if err != nil {
				return nil, err
			}
			if neg {
				for k := range set {
					set[k] = ^set[k]
				}
			}
			set['/'>>6] &^= 1 << ('/' & 63)
			toks = append(toks, token{kind: tokClass, class: &set})
			i = end
		default:
			toks = append(toks, token{kind: tokByte, b: c})
		}
	}
	return toks, nil
}

// parseClass reads the class opening at p[open] and returns its set, whether
// it is negated and the index of its closing ']'.
func parseClass(p string, open int) (set [4]uint64, neg bool, end int, err error) {
	add := func(lo, hi byte) {
		for c := int(lo); c <= int(hi); c++ {
			set[c>>6] |= 1 << (c & 63)
		}
	}
	i := open + 1
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		neg = true
		i++
	}
	var prev byte // the previous single byte, which may start a range; 0 after a range or a named class
	hasPrev := false
	for first := true; ; first = false {
		if i >= len(p) {
			return set, neg, 0, errUnclosedClass
		}
		c := p[i]
		if c == ']' && !first {
			return set, neg, i, nil
		}
		switch {
		case c == '\\':
			i++
			if i >= len(p) {
				return set, neg, 0, errUnclosedClass
			}
			c = p[i]
			add(c, c)
			prev, hasPrev = c, c != 0
		case c == '-' && hasPrev && i+1 < len(p) && p[i+1] != ']':
			i++
			hi := p[i]
			if hi == '\\' {
				i++
				if i >= len(p) {
					return set, neg, 0, errUnclosedClass
				}
				hi = p[i]
			}
			if prev <= hi {
				add(prev, hi)
			}
			hasPrev = false
		case c == '[' && i+1 < len(p) && p[i+1] == ':':
			close := -1
			for k := i + 2; k < len(p); k++ {
				if p[k] == ']' {
					close = k
					break
				}
			}
			if close < 0 {
				return set, neg, 0, errUnclosedClass
			}
			if close-(i+2) < 1 || p[close-1] != ':' {
				// Not a named class: the '[' is an ordinary member.
				add('[', '[')
				prev, hasPrev = '[', true
				break
			}
			if !addNamed(&set, p[i+2:close-1]) {
				return set, neg, 0, errBadClassName
			}
			hasPrev = false
			i = close
		default:
			add(c, c)
			prev, hasPrev = c, true
		}
		i++
	}
}

// addNamed adds a POSIX class of the C locale.
func addNamed(set *[4]uint64, name string) bool {
	var in func(c byte) bool
	isUpper := func(c byte) bool { return 'A' <= c && c <= 'Z' }
	isLower := func(c byte) bool { return 'a' <= c && c <= 'z' }
	isDigit := func(c byte) bool { return '0' <= c && c <= '9' }
	isAlnum := func(c byte) bool { return isUpper(c) || isLower(c) || isDigit(c) }
	isGraph := func(c byte) bool { return 0x21 <= c && c <= 0x7e }
	switch name {
	case "alnum":
		in = isAlnum
	case "alpha":
		in = func(c byte) bool { return isUpper(c) || isLower(c) }
	case "blank":
		in = func(c byte) bool { return c == ' ' || c == '\t' }
	case "cntrl":
		in = func(c byte) bool { return c < 0x20 || c == 0x7f }
	case "digit":
		in = isDigit
	case "graph":
		in = isGraph
	case "lower":
		in = isLower
	case "print":
		in = func(c byte) bool { return 0x20 <= c && c <= 0x7e }
	case "punct":
		in = func(c byte) bool { return isGraph(c) && !isAlnum(c) }
	case "space":
		in = func(c byte) bool { return c == ' ' || ('\t' <= c && c <= '\r') }
	case "upper":
		in = isUpper
	case "xdigit":
		in = func(c byte) bool { return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F') }
	default:
		return false
	}
	for c := 0; c < 128; c++ {
		if in(byte(c)) {
			set[c>>6] |= 1 << (c & 63)
		}
	}
	return true
}

func (t *token) accepts(c byte) bool {
	switch t.kind {
	case tokByte:
		return c == t.b
	case tokAny:
		return c != '/'
	case tokClass:
		return t.class[c>>6]&(1<<(c&63)) != 0
	case tokStar:
		return t.slash || c != '/'
	}
	return false
}

// match runs the tokens over s. State i means "token i is next"; state
// len(toks) accepts.
func match(toks []token, s string) bool {
	if len(toks) < 64 {
		return match64(toks, s)
	}
	return matchWide(toks, s)
}

// matchWide is match for any number of tokens.
func matchWide(toks []token, s string) bool {
	n := len(toks) + 1
	words := (n + 63) / 64
	cur := make([]uint64, words)
	next := make([]uint64, words)
	set := func(v []uint64, i int) { v[i>>6] |= 1 << (i & 63) }
	has := func(v []uint64, i int) bool { return v[i>>6]&(1<<(i&63)) != 0 }
	closure := func(v []uint64) {
		for i := range toks {
			if has(v, i) && toks[i].skip > 0 {
				set(v, i+1)
				set(v, i+int(toks[i].skip))
			}
		}
	}
	set(cur, 0)
	closure(cur)
	for j := 0; j < len(s); j++ {
		clear(next)
		any := false
		for i := range toks {
			if !has(cur, i) || !toks[i].accepts(s[j]) {
				continue
			}
			any = true
			if toks[i].kind == tokStar {
				set(next, i)
			} else {
				set(next, i+1)
			}
		}
		if !any {
			return false
		}
		closure(next)
		cur, next = next, cur
	}
	return has(cur, len(toks))
}

// match64 is match for up to 63 tokens, with the states in one word.
func match64(toks []token, s string) bool {
	closure := func(v uint64) uint64 {
		for w := v; w != 0; w &= w - 1 {
			i := bits.TrailingZeros64(w)
			if i < len(toks) && toks[i].skip > 0 {
				more := uint64(1)<<(i+1) | uint64(1)<<(i+int(toks[i].skip))
				v |= more
				w |= more // newly reached states may skip further
			}
		}
		return v
	}
	cur := closure(1)
	for j := 0; j < len(s); j++ {
		c := s[j]
		var next uint64
		for w := cur; w != 0; w &= w - 1 {
			i := bits.TrailingZeros64(w)
			if i == len(toks) || !toks[i].accepts(c) {
				continue
			}
			if toks[i].kind == tokStar {
				next |= 1 << i
			} else {
				next |= 1 << (i + 1)
			}
		}
		if next == 0 {
			return false
		}
		cur = closure(next)
	}
	return cur&(1<<len(toks)) != 0
}
