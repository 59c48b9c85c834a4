package tui

import (
	"fmt"
	"strings"

	"agent/agent/tools"
	"agent/tui/keys"
	"agent/tui/screen"
)

// The permission prompt shows what the call will do
// (docs/reference/runtime.md, "Permission prompts"): Write's new file or
// its diff against the file, Edit's diff, Bash's command with its
// description, WebFetch's URL, with syntax colours; a long preview
// scrolls inside the prompt (PageUp, PageDown). The answers that record a
// rule show the exact rules they record.

// minPreviewRows is the least a preview gets of a small window.
const minPreviewRows = 3

// permLines lays out the open permission question in at most rows rows.
func (s *state) permLines(w, rows int) []screen.Line {
	p := s.perm
	title := screen.Line{{Text: "Allow ", Style: s.th.title}, {Text: screen.SanitizeLine(p.req.Tool), Style: s.th.toolName}, {Text: "?", Style: s.th.title}}
	if p.escalation() {
		title = screen.Line{{Text: "Run ", Style: s.th.title}, {Text: screen.SanitizeLine(p.req.Tool), Style: s.th.toolName}, {Text: " outside the sandbox?", Style: s.th.title}}
	}
	if pv := p.req.Preview; pv != nil && pv.Title != "" {
		title = append(title, screen.Span{Text: "  " + screen.SanitizeLine(pv.Title), Style: s.th.user})
	}
	head := []screen.Line{{{Text: strings.Repeat("─", w), Style: s.th.dim}}, truncLine(title, w)}
	if p.req.Agent != "" {
		head = append(head, truncLine(screen.Line{{Text: "  asked by the agent " + screen.SanitizeLine(p.req.Agent), Style: s.th.dim}}, w))
	}
	var tail []screen.Line
	if pv := p.req.Preview; pv != nil && pv.Note != "" {
		for _, l := range screen.Wrap(pv.Note, max(w-2, 1), s.th.notice) {
			tail = append(tail, append(screen.Line{{Text: "  "}}, l...))
		}
	}
	switch {
	case p.escalation():
		// What it asks for and why, whole: the model's justification is
		// what the user decides on (docs/sandbox.md, "Escalation").
		for _, l := range screen.Wrap(screen.SanitizeLine(p.req.Reason), max(w-2, 1), s.th.dim) {
			tail = append(tail, append(screen.Line{{Text: "  "}}, l...))
		}
	case p.req.Reason != "":
		tail = append(tail, truncLine(screen.Line{{Text: "  " + screen.SanitizeLine(p.req.Reason), Style: s.th.dim}}, w))
	}
	for i, c := range p.choices() {
		label := c.label
		if (i == 1 || i == 2) && !p.escalation() { // the answers that record rules
			if rules := permRules(p); rules != "" {
				label += " (" + screen.SanitizeLine(rules) + ")"
			}
		}
		st, mark := screen.Style{}, "  "
		if i == p.sel {
			st, mark = s.th.selected, "› "
		}
		// Wrapped, not cut: the rules an answer records are shown whole.
		for j, l := range screen.Wrap(fmt.Sprintf("%d. %s", i+1, label), max(w-5, 1), st) {
			lead := "     "
			if j == 0 {
				lead = mark
			}
			tail = append(tail, append(screen.Line{{Text: lead}}, l...))
		}
	}
	body := s.permBody(p, w)
	room := max(rows-len(head)-len(tail), minPreviewRows)
	if len(body) > room {
		room-- // the scroll line
		p.scroll = min(max(p.scroll, 0), len(body)-room)
		end := p.scroll + room
		shown := append([]screen.Line(nil), body[p.scroll:end]...)
		shown = append(shown, screen.Line{{Text: fmt.Sprintf("  lines %d–%d of %d · PgUp/PgDn scroll", p.scroll+1, end, len(body)), Style: s.th.dim}})
		body = shown
	} else {
		p.scroll = 0
	}
	out := append(head, body...)
	return append(out, tail...)
}

// permRules are the rules an answer for the session or the project
// records, as the prompt shows them.
func permRules(p *permPrompt) string {
	if len(p.req.Rules) > 0 {
		return strings.Join(p.req.Rules, ", ")
	}
	return p.req.Suggest
}

// permScroll scrolls the preview (PageUp, PageDown: fixed keys, like the
// transcript's); it reports whether the key was one of them.
func (s *state) permScroll(ev keys.Event) bool {
	switch ev.Stroke {
	case keys.Stroke{Key: keys.KeyPageUp}:
		s.perm.scroll -= 10
	case keys.Stroke{Key: keys.KeyPageDown}:
		s.perm.scroll += 10
	default:
		return false
	}
	s.perm.scroll = max(s.perm.scroll, 0)
	return true
}

// permBody is the preview's lines at width w, laid out once per width.
func (s *state) permBody(p *permPrompt, w int) []screen.Line {
	if p.body != nil && p.bodyW == w {
		return p.body
	}
	p.body, p.bodyW = s.previewLines(p, w), w
	return p.body
}

func (s *state) previewLines(p *permPrompt, w int) []screen.Line {
	inner := max(w-2, 1)
	pv := p.req.Preview
	if pv == nil {
		return indent(screen.Wrap(argSummary(p.req.Args), inner, screen.Style{}))
	}
	th := &s.th.md
	text := strings.TrimRight(screen.Sanitize(pv.Text), "\n")
	if text == "" {
		return []screen.Line{}
	}
	var out []screen.Line
	switch pv.Kind {
	case tools.PreviewCommand:
		for _, l := range strings.Split(text, "\n") {
			spans := s.code("sh", expandTabs(l))
			out = append(out, wrapSpans(append([]screen.Span{{Text: "$ ", Style: s.th.prompt}}, spans...), inner)...)
		}
	case tools.PreviewURL:
		out = screen.Wrap(text, inner, screen.Style{FG: th.Heading.FG, Attr: screen.Underline})
	case tools.PreviewFile:
		lines := strings.Split(text, "\n")
		num := len(fmt.Sprint(len(lines)))
		for i, l := range lines {
			ln := screen.Line{{Text: fmt.Sprintf("%*d ", num, i+1), Style: s.th.dim}}
			out = append(out, truncLine(append(ln, s.code(pv.Lang, expandTabs(l))...), inner))
		}
	default: // a diff
		for _, l := range strings.Split(text, "\n") {
			out = append(out, truncLine(s.diffLine(pv.Lang, expandTabs(l)), inner))
		}
	}
	return indent(out)
}

// diffLine styles one line of a unified diff: the headers and hunk
// markers in the diff's styles, the code after an added or removed line's
// mark in syntax colours (the whole line in the diff's colour when syntax
// highlighting is off).
func (s *state) diffLine(lang, l string) screen.Line {
	th := &s.th.md
	switch {
	case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
		return screen.Line{{Text: l, Style: th.DiffHeader}}
	case strings.HasPrefix(l, "@@"):
		return screen.Line{{Text: l, Style: th.DiffHunk}}
	case strings.HasPrefix(l, `\`):
		return screen.Line{{Text: l, Style: th.Dim}}
	case l == "":
		return screen.Line{}
	}
	mark, code := l[:1], l[1:]
	st := th.Text
	switch mark {
	case "+":
		st = th.DiffAdd
	case "-":
		st = th.DiffRemove
	}
	if !th.Syntax || mark == " " {
		if mark == " " {
			return append(screen.Line{{Text: " "}}, s.code(lang, code)...)
		}
		return screen.Line{{Text: l, Style: st}}
	}
	return append(screen.Line{{Text: mark, Style: st}}, s.code(lang, code)...)
}

// code is a line of code in syntax colours, or plain when highlighting is
// off or the language unknown.
func (s *state) code(lang, line string) []screen.Span {
	if !s.th.md.Syntax {
		return []screen.Span{{Text: line}}
	}
	return screen.Highlight(lang, line, &s.th.md)
}

func indent(ls []screen.Line) []screen.Line {
	for i := range ls {
		ls[i] = append(screen.Line{{Text: "  "}}, ls[i]...)
	}
	return ls
}

func expandTabs(s string) string { return strings.ReplaceAll(s, "\t", "    ") }

// wrapSpans breaks styled spans into lines of at most w columns, by
// character (a command has no words to keep whole).
func wrapSpans(spans []screen.Span, w int) []screen.Line {
	var out []screen.Line
	var cur screen.Line
	col := 0
	for _, sp := range spans {
		var b strings.Builder
		for _, r := range sp.Text {
			rw := screen.RuneWidth(r)
			if col+rw > w && col > 0 {
				if b.Len() > 0 {
					cur = append(cur, screen.Span{Text: b.String(), Style: sp.Style})
					b.Reset()
				}
				out = append(out, cur)
				cur, col = nil, 0
			}
			b.WriteRune(r)
			col += rw
		}
		if b.Len() > 0 {
			cur = append(cur, screen.Span{Text: b.String(), Style: sp.Style})
		}
	}
	return append(out, cur)
}
