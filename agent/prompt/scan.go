package prompt

import "strings"

// Import is one import line that ScanImports found: a line whose text,
// without leading and trailing spaces and tabs, is "@" followed by a path
// with no space or tab in it (docs/reference/runtime.md, "Imports").
type Import struct {
	Line       int    // 1-based line number
	Path       string // the text after "@", as written
	Start, End int    // the line's byte offsets in the text, End before its line break
}

// ScanImports returns the import lines of an instruction file's text, in
// order. Lines inside fenced code blocks (``` or ~~~, up to three spaces of
// indentation, closed by a fence of the same character at least as long;
// an unclosed fence runs to the end) and lines covered by an inline code
// span (a run of backticks closed by a run of the same length later in
// the same paragraph, which may span lines) are text, not imports.
//
// The text comes from outside; ScanImports is pure and linear in its
// length.
func ScanImports(text string) []Import {
	var (
		out   []Import
		para  []lineSpan // the lines of the current paragraph
		fence fenceState
	)
	flush := func() {
		out = paragraphImports(out, text, para)
		para = para[:0]
	}
	for n, off, rest := 1, 0, text; rest != ""; n++ {
		line, tail, found := strings.Cut(rest, "\n")
		content := strings.TrimSuffix(line, "\r")
		switch {
		case fence.open:
			if fence.closedBy(content) {
				fence.open = false
			}
		case fence.opens(content), isBlank(content):
			flush()
		default:
			para = append(para, lineSpan{n: n, start: off, end: off + len(content)})
		}
		off += len(line)
		if found {
			off++
		}
		rest = tail
	}
	flush()
	return out
}

// lineSpan is one line of the text: its number and its byte offsets
// without the line break (and without a carriage return before it).
type lineSpan struct{ n, start, end int }

// importPath reports whether a line is an import line and returns its path.
func importPath(line string) (string, bool) {
	t := strings.Trim(line, " \t")
	if len(t) < 2 || t[0] != '@' {
		return "", false
	}
	p := t[1:]
	if strings.ContainsAny(p, " \t") {
		return "", false
	}
	return p, true
}

// paragraphImports appends the import lines of one paragraph that no code
// span covers.
func paragraphImports(out []Import, text string, para []lineSpan) []Import {
	if len(para) == 0 {
		return out
	}
	var cands []Import
	for _, ls := range para {
		if p, ok := importPath(text[ls.start:ls.end]); ok {
			cands = append(cands, Import{Line: ls.n, Path: p, Start: ls.start, End: ls.end})
		}
	}
	if len(cands) == 0 {
		return out
	}
	lo, hi := para[0].start, para[len(para)-1].end
	if strings.IndexByte(text[lo:hi], '`') < 0 {
		return append(out, cands...)
	}
	spans := codeSpans(text, lo, hi)
	k := 0
	for _, c := range cands {
		for k < len(spans) && spans[k].end <= c.Start {
			k++
		}
		if k < len(spans) && spans[k].start < c.End {
			continue // a code span covers part of the line
		}
		out = append(out, c)
	}
	return out
}

// span is a code span's byte range, from its opening backticks to the end
// of its closing ones.
type span struct{ start, end int }

// codeSpans finds the inline code spans of text[lo:hi], in order: a run
// of n backticks opens a span that the next run of exactly n backticks
// closes; a run with no such closer is literal. A backslash before a run
// makes its first backtick literal (outside a span); inside a span
// backslashes are literal, so a closing run is counted whole. Each length
// keeps a cursor into its runs, so the search is linear whatever the text
// holds.
func codeSpans(text string, lo, hi int) []span {
	type run struct {
		start, n int
		escaped  bool
	}
	var runs []run
	byLen := map[int][]int{} // run length -> indices into runs, ascending
	for i := lo; i < hi; {
		if text[i] != '`' {
			i++
			continue
		}
		j := i
		for j < hi && text[j] == '`' {
			j++
		}
		bs := 0
		for k := i - 1; k >= lo && text[k] == '\\'; k-- {
			bs++
		}
		byLen[j-i] = append(byLen[j-i], len(runs))
		runs = append(runs, run{start: i, n: j - i, escaped: bs%2 == 1})
		i = j
	}
	cursor := map[int]int{}
	var spans []span
	for i := 0; i < len(runs); i++ {
		start, n := runs[i].start, runs[i].n
		if runs[i].escaped {
			start, n = start+1, n-1
		}
		if n == 0 {
			continue
		}
		idx, c := byLen[n], cursor[n]
		for c < len(idx) && idx[c] <= i {
			c++
		}
		cursor[n] = c
		if c == len(idx) {
			continue // no closer: literal backticks
		}
		j := idx[c]
		spans = append(spans, span{start: start, end: runs[j].start + runs[j].n})
		i = j
	}
	return spans
}

// fenceState is the open fenced code block, if any.
type fenceState struct {
	open bool
	char byte
	n    int
}

// opens reports whether line opens a fenced code block and, if so, records
// it.
func (f *fenceState) opens(line string) bool {
	c, n, rest, ok := fenceRun(line)
	if !ok || (c == '`' && strings.IndexByte(rest, '`') >= 0) {
		return false
	}
	*f = fenceState{open: true, char: c, n: n}
	return true
}

// closedBy reports whether line closes the open fence.
func (f *fenceState) closedBy(line string) bool {
	c, n, rest, ok := fenceRun(line)
	return ok && c == f.char && n >= f.n && strings.Trim(rest, " \t") == ""
}

// fenceRun reads a fence: up to three spaces, then three or more of the
// same backtick or tilde; rest is what follows the run.
func fenceRun(line string) (c byte, n int, rest string, ok bool) {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	if i == len(line) || (line[i] != '`' && line[i] != '~') {
		return 0, 0, "", false
	}
	c = line[i]
	j := i
	for j < len(line) && line[j] == c {
		j++
	}
	if j-i < 3 {
		return 0, 0, "", false
	}
	return c, j - i, line[j:], true
}

func isBlank(line string) bool { return strings.Trim(line, " \t") == "" }
