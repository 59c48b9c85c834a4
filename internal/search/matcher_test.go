package search

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// naiveLines is the plain meaning of a search: the expression on every
// line, one trailing CR cut.
func naiveLines(re *regexp.Regexp, data []byte) []int {
	var out []int
	for n, off := 0, 0; off < len(data); n++ {
		end := lineEnd(data, off)
		if re.Match(trimCR(data[off:end])) {
			out = append(out, n)
		}
		off = end + 1
	}
	return out
}

// fastLines finds the matching lines with Matcher.Next.
func fastLines(m *Matcher, data []byte) []int {
	var out []int
	n, counted := 0, 0
	for from := 0; from < len(data); {
		start, end, ok := m.Next(data, from)
		if !ok {
			break
		}
		n += bytes.Count(data[counted:start], []byte("\n"))
		counted = start
		out = append(out, n)
		from = end + 1
	}
	return out
}

var matcherCases = []struct {
	name       string
	pattern    string
	ignoreCase bool
	text       string
	exact      bool // the pattern is found without running the expression
	prefilter  string
}{
	{name: "literal", pattern: "Reader", text: "a Reader\nno\nReaderReader\n", exact: true, prefilter: "Reader"},
	{name: "escaped literal", pattern: `a\.b`, text: "a.b\naxb\n", exact: true, prefilter: "a.b"},
	{name: "required literal of an expression", pattern: `[A-Z][a-z]+Reader\(`, text: "NewReader(\nBufReader(x\nReader(\nxReader(\n", prefilter: "Reader("},
	{name: "longest of several", pattern: `ab.*cdefg\d`, text: "ab cdefg1\ncdefg1\n", prefilter: "cdefg"},
	{name: "anchored literal is not exact", pattern: `^func`, text: "func\n func\n", prefilter: "func"},
	{name: "end anchor sees the line without its CR", pattern: `x$`, text: "x\r\nxy\r\nx", prefilter: "x"},
	{name: "a CR in the literal is checked by the expression", pattern: "a\r", text: "a\r\r\na\r\n", prefilter: "a\r"},
	{name: "a line feed never matches", pattern: "a\nb", text: "a\nb\n", exact: false},
	{name: "case-insensitive literal", pattern: "reader", ignoreCase: true, text: "READER\nReAdEr\nread\n", exact: true, prefilter: "(?i)reader"},
	{name: "k folds with the Kelvin sign", pattern: "kind", ignoreCase: true, text: "\u212aind\nKIND\nkin\n", prefilter: "(?i)ind"},
	{name: "s folds with the long s", pattern: "as", ignoreCase: true, text: "a\u017f\nAS\n", prefilter: "(?i)a"},
	{name: "non-ASCII literal", pattern: "héllo", text: "héllo\nhello\n", exact: true, prefilter: "héllo"},
	{name: "replacement character matches bad bytes", pattern: "a\uFFFDb", text: "a\xffb\na\uFFFDb\n", prefilter: "a"},
	{name: "alternation has no literal", pattern: "foo|bar", text: "foo\nbar\nbaz\n"},
	{name: "optional part is not required", pattern: "ab?c", text: "ac\nabc\n", prefilter: "a"},
	{name: "repeat keeps its literal", pattern: "(ab){2,}", text: "abab\nab\n", prefilter: "ab"},
	{name: "empty pattern matches every line", pattern: "", text: "a\n\nb", exact: false},
	{name: "mixed folding", pattern: "(?i)a(?-i)B", text: "aB\nAB\nab\n", exact: true, prefilter: "(?i)aB"},
	{name: "no final newline", pattern: "end", text: "a\nthe end", exact: true, prefilter: "end"},
	{name: "class of one character", pattern: "a[.]b", text: "a.b\n", exact: true, prefilter: "a.b"},
}

func describe(p *prefilter) string {
	if p == nil {
		return ""
	}
	if p.needle != nil {
		return string(p.needle)
	}
	var b strings.Builder
	b.WriteString("(?i)")
	for _, c := range p.cls {
		if c.n == 2 {
			b.WriteByte(c.b[0] | 0x20)
		} else {
			b.WriteByte(c.b[0])
		}
	}
	return b.String()
}

func TestMatcher(t *testing.T) {
	for _, tc := range matcherCases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Compile(tc.pattern, tc.ignoreCase)
			if err != nil {
				t.Fatal(err)
			}
			if m.exact != tc.exact || describe(m.pre) != tc.prefilter {
				t.Errorf("exact %v prefilter %q, want %v %q", m.exact, describe(m.pre), tc.exact, tc.prefilter)
			}
			checkMatcher(t, m, []byte(tc.text))
		})
	}
}

func checkMatcher(t *testing.T, m *Matcher, data []byte) {
	t.Helper()
	want := naiveLines(m.re, data)
	if got := fastLines(m, data); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%q on %q: lines %v, plain %v", m.re, data, got, want)
	}
	var byLine []int
	for n, off := 0, 0; off < len(data); n++ {
		end := lineEnd(data, off)
		if m.MatchLine(data[off:end]) {
			byLine = append(byLine, n)
		}
		off = end + 1
	}
	if fmt.Sprint(byLine) != fmt.Sprint(want) {
		t.Errorf("%q on %q: MatchLine %v, plain %v", m.re, data, byLine, want)
	}
}

func FuzzMatcher(f *testing.F) {
	for _, tc := range matcherCases {
		f.Add(tc.pattern, tc.ignoreCase, []byte(tc.text))
	}
	f.Add("Reader", false, bytes.Repeat([]byte("xReadeR\nReader\r\n"), 40))
	f.Add("ea", true, []byte("EA\nEa\neA\nea\n"))
	f.Fuzz(func(t *testing.T, pattern string, ignoreCase bool, data []byte) {
		m, err := Compile(pattern, ignoreCase)
		if err != nil {
			return
		}
		checkMatcher(t, m, data)
	})
}

func TestPrefilterCommonAnchor(t *testing.T) {
	// A needle whose anchor byte is everywhere: the library search takes
	// over and still finds the right place.
	p := newPrefilter([]byteClass{{n: 1, b: [2]byte{'~'}}, {n: 1, b: [2]byte{'!'}}})
	buf := append(bytes.Repeat([]byte("~~~~"), 200), "~!"...)
	if got := p.index(buf); got != 800 {
		t.Errorf("index %d, want 800", got)
	}
}
