package search

import (
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// piece is one character of a literal; fold means any character of its
// simple case-folding orbit matches, as (?i) does.
type piece struct {
	r    rune
	fold bool
}

// litInfo is what the analysis knows of a node: exact is set when the
// node matches exactly the literal lit and nothing else (zero-width
// assertions count as the empty literal here, since they consume
// nothing); req are literals every match of the node contains.
type litInfo struct {
	exact bool
	lit   []piece
	req   [][]piece
}

// required computes, for a parsed expression, literals that every match
// must contain. It is conservative: a node it does not understand
// contributes nothing, which only costs speed.
func required(re *syntax.Regexp) litInfo {
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		lit := make([]piece, len(re.Rune))
		for i, r := range re.Rune {
			lit[i] = piece{r: r, fold: fold}
		}
		return litInfo{exact: true, lit: lit, req: [][]piece{lit}}
	case syntax.OpCharClass:
		if len(re.Rune) == 2 && re.Rune[0] == re.Rune[1] {
			lit := []piece{{r: re.Rune[0]}}
			return litInfo{exact: true, lit: lit, req: [][]piece{lit}}
		}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return litInfo{exact: true}
	case syntax.OpCapture:
		return required(re.Sub[0])
	case syntax.OpPlus:
		return litInfo{req: required(re.Sub[0]).req}
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return litInfo{req: required(re.Sub[0]).req}
		}
	case syntax.OpConcat:
		out := litInfo{exact: true}
		var run []piece
		flush := func() {
			if len(run) > 0 {
				out.req = append(out.req, run)
				run = nil
			}
		}
		for _, sub := range re.Sub {
			in := required(sub)
			if in.exact {
				run = append(run, in.lit...)
				out.lit = append(out.lit, in.lit...)
				continue
			}
			out.exact = false
			flush()
			out.req = append(out.req, in.req...)
		}
		flush()
		if !out.exact {
			out.lit = nil
		}
		return out
	}
	return litInfo{}
}

// pureLiteral reports whether the expression is a literal string and
// nothing else (no assertion, no class but of one character), returning it.
func pureLiteral(re *syntax.Regexp) ([]piece, bool) {
	switch re.Op {
	case syntax.OpLiteral, syntax.OpCharClass:
		in := required(re)
		return in.lit, in.exact
	case syntax.OpCapture:
		return pureLiteral(re.Sub[0])
	case syntax.OpConcat:
		var lit []piece
		for _, sub := range re.Sub {
			l, ok := pureLiteral(sub)
			if !ok {
				return nil, false
			}
			lit = append(lit, l...)
		}
		return lit, true
	}
	return nil, false
}

// byteClass is the bytes one position of a literal may be: one, or two
// for an ASCII letter under case folding.
type byteClass struct {
	n int
	b [2]byte
}

// classes turns a literal into runs of byte classes. A character whose
// case variants are not all single bytes (k and s fold with the Kelvin
// and long s signs) or that may stand for invalid UTF-8 (U+FFFD, which
// the regexp matches on a bad byte) cannot be found by bytes and ends a
// run; whole reports that no character was left out.
func classes(lit []piece) (runs [][]byteClass, whole bool) {
	var run []byteClass
	whole = true
	cut := func() {
		if len(run) > 0 {
			runs = append(runs, run)
			run = nil
		}
	}
	for _, p := range lit {
		if p.r == utf8.RuneError {
			cut()
			whole = false
			continue
		}
		if !p.fold || unicode.SimpleFold(p.r) == p.r {
			var enc [utf8.UTFMax]byte
			n := utf8.EncodeRune(enc[:], p.r)
			for _, b := range enc[:n] {
				run = append(run, byteClass{n: 1, b: [2]byte{b}})
			}
			continue
		}
		var c byteClass
		ok := true
		for r := p.r; ; {
			if r >= utf8.RuneSelf || c.n == 2 {
				ok = false
				break
			}
			c.b[c.n] = byte(r)
			c.n++
			if r = unicode.SimpleFold(r); r == p.r {
				break
			}
		}
		if !ok {
			cut()
			whole = false
			continue
		}
		run = append(run, c)
	}
	cut()
	return runs, whole
}
