package screen

import (
	"strings"
	"unicode/utf8"
)

// Span is a run of text in one style. Text holds no control character
// but what the layout functions never produce (they emit neither tabs nor
// newlines).
type Span struct {
	Text  string
	Style Style
}

// Line is one laid-out row: spans whose total width fits the width it was
// laid out for.
type Line []Span

// Width returns the line's display width.
func (l Line) Width() int {
	n := 0
	for _, s := range l {
		n += StringWidth(s.Text)
	}
	return n
}

// String returns the line's text without styles.
func (l Line) String() string {
	var b strings.Builder
	for _, s := range l {
		b.WriteString(s.Text)
	}
	return b.String()
}

// cell is one rune of a paragraph being wrapped, with its style.
type srune struct {
	r  rune
	st Style
}

// tabWidth is how many spaces a tab becomes in code and plain text.
const tabWidth = 4

// Wrap lays out plain text (sanitised here) in style st at width w:
// each source line wraps at spaces, words longer than the width break
// between characters, runs of spaces inside a line are kept, and tabs
// become spaces.
func Wrap(text string, w int, st Style) []Line {
	w = max(w, 1)
	var out []Line
	for _, src := range strings.Split(Sanitize(text), "\n") {
		out = append(out, wrapRunes(toRunes(nil, expandTabs(src), st), w, nil, nil, false)...)
	}
	return out
}

// Clip lays out plain text one row per source line, cutting each row at
// width w with "…" instead of wrapping (tool output, diffs).
func Clip(text string, w int, st Style) []Line {
	w = max(w, 1)
	var out []Line
	for _, src := range strings.Split(Sanitize(text), "\n") {
		out = append(out, Line{{Text: TruncateEllipsis(expandTabs(src), w), Style: st}})
	}
	return out
}

func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	return strings.ReplaceAll(s, "\t", strings.Repeat(" ", tabWidth))
}

// toRunes appends s's runes in style st.
func toRunes(dst []srune, s string, st Style) []srune {
	for _, r := range s {
		dst = append(dst, srune{r, st})
	}
	return dst
}

// wrapRunes breaks a paragraph into lines of width at most w. The first
// line starts with first, later ones with rest (a hanging indent); a
// prefix that leaves no room is dropped. collapse turns each run of spaces
// into one (markdown paragraphs); otherwise runs are kept except at a
// break.
func wrapRunes(rs []srune, w int, first, rest Line, collapse bool) []Line {
	var out []Line
	var cur []srune
	prefix := first
	cw := 0
	start := func() {
		if prefix.Width() >= w {
			prefix = nil
		}
		cw = prefix.Width()
		cur = cur[:0]
	}
	emit := func() {
		out = append(out, join(prefix, cur))
		prefix = rest
		start()
	}
	start()
	i := 0
	for i < len(rs) {
		if rs[i].r == ' ' {
			j := i
			for j < len(rs) && rs[j].r == ' ' {
				j++
			}
			sp := rs[i:j]
			if collapse {
				sp = sp[:1]
			}
			i = j
			if len(cur) == 0 && (collapse || len(out) > 0) {
				continue // no spaces at the start of a wrapped line
			}
			if cw+len(sp) > w {
				emit() // the spaces fall on the break
				continue
			}
			cur = append(cur, sp...)
			cw += len(sp)
			continue
		}
		j := i
		ww := 0
		for j < len(rs) && rs[j].r != ' ' {
			ww += runeWidthIn(rs[j].r, w)
			j++
		}
		word := rs[i:j]
		i = j
		if cw+ww > w && len(cur) > 0 {
			// Drop the spaces before the break, then wrap.
			for len(cur) > 0 && cur[len(cur)-1].r == ' ' {
				cur = cur[:len(cur)-1]
			}
			emit()
		}
		for _, c := range word {
			rw := runeWidthIn(c.r, w)
			if cw+rw > w && len(cur) > 0 {
				emit()
			}
			if cw+rw > w {
				prefix, cw = nil, 0 // the prefix leaves no room for it
			}
			if rw == 0 && len(cur) == 0 && cw == 0 {
				continue // a combining mark with nothing to combine with
			}
			if rw == 1 && RuneWidth(c.r) == 2 {
				c.r = '·' // a wide character in a one-column layout
			}
			cur = append(cur, c)
			cw += rw
		}
	}
	if len(cur) > 0 || len(out) == 0 {
		out = append(out, join(prefix, cur))
	}
	return out
}

// runeWidthIn is RuneWidth, except that a wide character counts 1 in a
// layout one column wide (it is replaced there).
func runeWidthIn(r rune, w int) int {
	n := RuneWidth(r)
	if n > w {
		return 1
	}
	return n
}

// join turns a prefix and styled runes into a Line, merging runs of one
// style.
func join(prefix Line, rs []srune) Line {
	l := append(Line(nil), prefix...)
	var b strings.Builder
	var st Style
	for i, c := range rs {
		if i > 0 && c.st != st {
			l = append(l, Span{b.String(), st})
			b.Reset()
		}
		st = c.st
		b.WriteRune(c.r)
	}
	if b.Len() > 0 {
		l = append(l, Span{b.String(), st})
	}
	return l
}

// Markdown lays out model text at width w: paragraphs (soft line breaks
// joined), ATX headings, bullet and numbered lists with hanging indents,
// block quotes, rules, fenced code blocks (``` or ~~~; kept verbatim,
// broken between characters when too long) and inline `code` and
// **bold**. It is safe for streaming: text cut anywhere renders, an
// unclosed fence renders what it has as code, and an unclosed inline
// marker renders literally. The source is sanitised here.
func Markdown(src string, w int, th *Theme) []Line {
	if th == nil {
		th = &DefaultTheme
	}
	w = max(w, 1)
	var out []Line
	var para []string
	flush := func() {
		if len(para) == 0 {
			return
		}
		rs := inline(nil, strings.Join(para, " "), th.Text, th)
		out = append(out, wrapRunes(rs, w, nil, nil, true)...)
		para = para[:0]
	}
	blankLine := func() {
		if len(out) > 0 && len(out[len(out)-1]) > 0 {
			out = append(out, nil)
		}
	}
	fence, lang := "", ""
	srcLines := strings.Split(Sanitize(src), "\n")
	if n := len(srcLines); n > 1 && srcLines[n-1] == "" {
		srcLines = srcLines[:n-1] // the end of the last line, not a line
	}
	for _, src := range srcLines {
		src = expandTabs(src)
		trimmed := strings.TrimLeft(src, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
				fence = ""
				continue
			}
			var rs []srune
			if th.Syntax && lang != "" {
				for _, sp := range Highlight(lang, expandTabs(src), th) {
					rs = toRunes(rs, sp.Text, sp.Style)
				}
			} else {
				rs = toRunes(nil, expandTabs(src), th.Code)
			}
			out = append(out, wrapRunes(rs, w, Line{{"  ", th.Code}}, Line{{"  ", th.Code}}, false)...)
			continue
		}
		if f := fenceOf(trimmed); f != "" && len(src)-len(trimmed) < 4 {
			flush()
			fence = f
			lang = strings.TrimSpace(trimmed[len(f):])
			if lang != "" {
				out = append(out, Line{{TruncateEllipsis(lang, w), th.CodeFence}})
			}
			continue
		}
		switch {
		case strings.TrimSpace(src) == "":
			flush()
			blankLine()
		case isRule(trimmed):
			flush()
			out = append(out, Line{{strings.Repeat("─", w), th.Dim}})
		case headingLevel(trimmed) > 0:
			flush()
			n := headingLevel(trimmed)
			text := strings.TrimRight(strings.TrimSpace(trimmed[n:]), "#")
			rs := inline(nil, strings.TrimSpace(text), th.Heading, th)
			out = append(out, wrapRunes(rs, w, nil, nil, true)...)
		case strings.HasPrefix(trimmed, ">"):
			flush()
			text := strings.TrimPrefix(strings.TrimPrefix(trimmed, ">"), " ")
			rs := inline(nil, text, th.Quote, th)
			bar := Line{{"│ ", th.Quote}}
			out = append(out, wrapRunes(rs, w, bar, bar, true)...)
		default:
			if marker, text, ok := listItem(trimmed); ok {
				flush()
				indent := strings.Repeat(" ", min(len(src)-len(trimmed), 8))
				first := Line{{indent, th.Text}, {marker + " ", th.Bullet}}
				rest := Line{{indent + strings.Repeat(" ", StringWidth(marker)+1), th.Text}}
				out = append(out, wrapRunes(inline(nil, text, th.Text, th), w, first, rest, true)...)
				continue
			}
			para = append(para, strings.TrimSpace(src))
		}
	}
	flush()
	for len(out) > 0 && len(out[len(out)-1]) == 0 {
		out = out[:len(out)-1]
	}
	return out
}

func fenceOf(s string) string {
	for _, f := range [...]string{"```", "~~~"} {
		if strings.HasPrefix(s, f) {
			n := len(s) - len(strings.TrimLeft(s, f[:1]))
			return s[:n]
		}
	}
	return ""
}

func isRule(s string) bool {
	s = strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	if len(s) < 3 {
		return false
	}
	return strings.Count(s, s[:1]) == len(s) && (s[0] == '-' || s[0] == '*' || s[0] == '_')
}

func headingLevel(s string) int {
	n := 0
	for n < len(s) && n < 7 && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(s) && s[n] != ' ') {
		return 0
	}
	return n
}

// listItem recognises "- x", "* x", "+ x" (shown with a bullet) and
// "1. x", "1) x" (shown with the number).
func listItem(s string) (marker, text string, ok bool) {
	if len(s) >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && s[1] == ' ' {
		return "•", s[2:], true
	}
	n := 0
	for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n > 0 && n+1 < len(s) && (s[n] == '.' || s[n] == ')') && s[n+1] == ' ' {
		return s[:n+1], s[n+2:], true
	}
	return "", "", false
}

// inline appends s's runes with `code` and **bold** styled; an unclosed
// marker is literal text.
func inline(dst []srune, s string, base Style, th *Theme) []srune {
	bold := base
	bold.Attr |= Bold
	for len(s) > 0 {
		i := strings.IndexAny(s, "`*")
		if i < 0 {
			return toRunes(dst, s, base)
		}
		dst = toRunes(dst, s[:i], base)
		s = s[i:]
		switch {
		case s[0] == '`':
			if j := strings.IndexByte(s[1:], '`'); j > 0 {
				dst = toRunes(dst, s[1:1+j], th.Code)
				s = s[j+2:]
				continue
			}
		case strings.HasPrefix(s, "**"):
			if j := strings.Index(s[2:], "**"); j > 0 {
				dst = toRunes(dst, s[2:2+j], bold)
				s = s[j+4:]
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(s)
		dst = toRunes(dst, s[:size], base)
		s = s[size:]
	}
	return dst
}

// Diff lays out a unified diff (an edit's result) at width w: file
// headers, hunk headers, added and removed lines in their styles, each
// row cut with "…" rather than wrapped so that the columns stay aligned.
func Diff(src string, w int, th *Theme) []Line {
	if th == nil {
		th = &DefaultTheme
	}
	w = max(w, 1)
	var out []Line
	src = strings.TrimRight(Sanitize(src), "\n")
	if src == "" {
		return nil
	}
	for _, l := range strings.Split(src, "\n") {
		st := th.Text
		switch {
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
			st = th.DiffHeader
		case strings.HasPrefix(l, "@@"):
			st = th.DiffHunk
		case strings.HasPrefix(l, "+"):
			st = th.DiffAdd
		case strings.HasPrefix(l, "-"):
			st = th.DiffRemove
		case strings.HasPrefix(l, `\`):
			st = th.Dim
		}
		out = append(out, Line{{TruncateEllipsis(expandTabs(l), w), st}})
	}
	return out
}
