package search

import (
	"bytes"
	"regexp"
	"regexp/syntax"
)

// Matcher decides which lines match a Grep pattern. Its meaning is always
// that of the plain way: the RE2 expression run on each line (split at
// '\n', one trailing '\r' cut). It only gets there faster
// (docs/reference/runtime.md, "Grep"): a pattern that is a literal string
// is found with a byte search and never runs the expression; for any other
// expression, the longest literal that every match must contain picks the
// candidate lines, and the expression runs on those only.
type Matcher struct {
	re    *regexp.Regexp
	pre   *prefilter // nil: every line is a candidate
	exact bool       // a line holding pre's literal matches; the expression need not run
	never bool       // every match needs a line feed, which no line holds
}

// Compile compiles an RE2 pattern; ignoreCase is (?i).
func Compile(pattern string, ignoreCase bool) (*Matcher, error) {
	expr := pattern
	if ignoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	m := &Matcher{re: re}
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return m, nil // regexp accepted it; without the analysis every line is a candidate
	}
	tree = tree.Simplify()
	var best []byteClass
	for _, lit := range required(tree).req {
		for _, p := range lit {
			if p.r == '\n' {
				m.never = true
				return m, nil
			}
		}
		runs, _ := classes(lit)
		for _, run := range runs {
			if len(run) > len(best) {
				best = run
			}
		}
	}
	if len(best) == 0 {
		return m, nil
	}
	m.pre = newPrefilter(best)
	if lit, ok := pureLiteral(tree); ok {
		runs, whole := classes(lit)
		m.exact = whole && len(runs) == 1 && len(runs[0]) == len(best) && !hasCR(lit)
	}
	return m, nil
}

func hasCR(lit []piece) bool {
	for _, p := range lit {
		if p.r == '\r' {
			return true
		}
	}
	return false
}

// Regexp returns the compiled expression.
func (m *Matcher) Regexp() *regexp.Regexp { return m.re }

// MatchLine reports whether one line (without its '\n') matches.
func (m *Matcher) MatchLine(line []byte) bool {
	if m.never {
		return false
	}
	if m.pre != nil {
		if m.pre.index(line) < 0 {
			return false
		}
		if m.exact {
			return true
		}
	}
	return m.re.Match(trimCR(line))
}

// Next finds the first matching line that starts at or after from, which
// is the start of a line. buf holds whole lines: each ends with '\n' but
// perhaps the last. It returns the line's bounds (end excludes the '\n').
func (m *Matcher) Next(buf []byte, from int) (start, end int, ok bool) {
	if m.never {
		return 0, 0, false
	}
	if m.pre == nil {
		for start = from; start < len(buf); start = end + 1 {
			end = lineEnd(buf, start)
			if m.re.Match(trimCR(buf[start:end])) {
				return start, end, true
			}
		}
		return 0, 0, false
	}
	for pos := from; pos < len(buf); {
		i := m.pre.index(buf[pos:])
		if i < 0 {
			return 0, 0, false
		}
		hit := pos + i
		start = bytes.LastIndexByte(buf[pos:hit], '\n') + 1 + pos
		end = lineEnd(buf, hit)
		if m.exact || m.re.Match(trimCR(buf[start:end])) {
			return start, end, true
		}
		pos = end + 1
	}
	return 0, 0, false
}

func lineEnd(buf []byte, from int) int {
	if i := bytes.IndexByte(buf[from:], '\n'); i >= 0 {
		return from + i
	}
	return len(buf)
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

// prefilter finds a run of byte classes: a plain byte string, or one with
// both cases of ASCII letters.
type prefilter struct {
	needle []byte // when every class is one byte
	cls    []byteClass
	anchor int // the position searched for first: the rarest byte
}

func newPrefilter(cls []byteClass) *prefilter {
	p := &prefilter{cls: cls}
	single := true
	for _, c := range cls {
		if c.n != 1 {
			single = false
		}
	}
	if single {
		p.needle = make([]byte, len(cls))
		for i, c := range cls {
			p.needle[i] = c.b[0]
		}
	}
	best := -1
	for i, c := range cls {
		score := 0
		for _, b := range c.b[:c.n] {
			score += int(byteFreq[b])
		}
		if best < 0 || score < best {
			best, p.anchor = score, i
		}
	}
	return p
}

// index returns the first position of the run in buf, or -1.
func (p *prefilter) index(buf []byte) int {
	n := len(p.cls)
	if p.needle != nil {
		a := p.needle[p.anchor]
		fails := 0
		for pos := 0; pos+n <= len(buf); {
			i := bytes.IndexByte(buf[pos+p.anchor:len(buf)-n+1+p.anchor], a)
			if i < 0 {
				return -1
			}
			s := pos + i
			if bytes.Equal(buf[s:s+n], p.needle) {
				return s
			}
			pos = s + 1
			// A common anchor byte: let the library's search take over.
			if fails++; fails > 8+pos>>5 {
				if j := bytes.Index(buf[pos:], p.needle); j >= 0 {
					return pos + j
				}
				return -1
			}
		}
		return -1
	}
	c := p.cls[p.anchor]
	next := [2]int{-1, -1} // the next position of each variant of the anchor byte at or after pos
	for pos := 0; pos+n <= len(buf); {
		lim := buf[:len(buf)-n+1+p.anchor]
		s := -1
		for v := 0; v < c.n; v++ {
			if next[v] < pos+p.anchor {
				if i := bytes.IndexByte(lim[pos+p.anchor:], c.b[v]); i >= 0 {
					next[v] = pos + p.anchor + i
				} else {
					next[v] = len(buf) + 1 // none left
				}
			}
			if next[v] <= len(buf) && (s < 0 || next[v] < s) {
				s = next[v]
			}
		}
		if s < 0 {
			return -1
		}
		s -= p.anchor
		if p.at(buf[s:]) {
			return s
		}
		pos = s + 1
	}
	return -1
}

func (p *prefilter) at(b []byte) bool {
	for i, c := range p.cls {
		if b[i] != c.b[0] && (c.n == 1 || b[i] != c.b[1]) {
			return false
		}
	}
	return true
}

// byteFreq ranks bytes by how common they are in source code and text
// (higher is more common), so that the search for a literal starts from
// its rarest byte.
var byteFreq = func() [256]uint8 {
	var f [256]uint8
	const common = " etaoinsrlcd\nupmfh.(),;g=\t_bywv\"'/-*:0x1k{}[]2>EISTRNACLDOPMF<&#3!45q6789jzGHBUWVYKXJQZ|%\\@$^~`+?"
	for i := 0; i < len(common); i++ {
		f[common[i]] = uint8(255 - i)
	}
	return f
}()
