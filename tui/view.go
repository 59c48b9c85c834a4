package tui

import (
	"fmt"
	"strings"

	"agent/tui/keys"
	"agent/tui/screen"
)

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Bounds of what a tool entry shows collapsed.
const (
	toolPreviewLines = 3
	diffPreviewLines = 40
)

// view draws the whole screen into f: the transcript at the top, then
// (bottom up) the footer hints, the status line, the composer or the open
// prompt, the queued prompts and the autocomplete menu.
func (s *state) view(f *screen.Frame) {
	f.Clear()
	w, h := f.W, f.H
	if w <= 0 || h <= 0 {
		return
	}
	y := h - 1
	s.drawFooter(f, y)
	y--
	if y >= 0 && s.confirm == nil {
		s.drawStatus(f, y)
		y--
	}
	var bottom []screen.Line
	cursorRow, cursorCol := -1, 0
	switch {
	case s.perm != nil:
		bottom = s.permLines(w, max(y, 1))
	case s.confirm != nil:
		bottom = s.confirmLines(w)
	case s.textPrompt != nil:
		bottom, cursorRow, cursorCol = s.textPromptLines(w)
	case len(s.screens) > 0:
		bottom, cursorRow, cursorCol = s.listLines(s.top(), w, max(y, 1))
	default:
		var comp []screen.Line
		comp, cursorRow, cursorCol = s.composerLines(w, max(h/3, 1))
		bottom = append(append(s.todoLines(w), s.queuedLines(w)...), comp...)
		cursorRow += len(bottom) - len(comp)
	}
	// The prompt area takes what it needs up to all but one row.
	if len(bottom) > y {
		cut := len(bottom) - max(y, 0)
		bottom = bottom[cut:]
		cursorRow -= cut
	}
	top := y - len(bottom) + 1
	for i, l := range bottom {
		f.PutLine(0, top+i, l)
	}
	if cursorRow >= 0 && cursorRow < len(bottom) {
		f.CursorX, f.CursorY, f.CursorVisible = min(cursorCol, w-1), top+cursorRow, true
	}
	// The autocomplete menu floats over the transcript above the composer.
	area := top
	if s.ac.open() && s.perm == nil && s.confirm == nil && s.textPrompt == nil && len(s.screens) == 0 {
		menu := s.menuLines(w)
		if len(menu) > area {
			// A window that keeps the selection in view, the first
			// entries first.
			start := min(max(s.ac.sel-area+1, 0), len(menu)-area)
			menu = menu[start : start+area]
		}
		area -= len(menu)
		for i, l := range menu {
			f.PutLine(0, area+i, l)
		}
	}
	s.drawTranscript(f, area, w)
}

// drawTranscript fills rows 0 … rows-1 with the end of the transcript
// (minus the scroll offset).
func (s *state) drawTranscript(f *screen.Frame, rows, w int) {
	if rows <= 0 {
		return
	}
	// Collect from the newest entry backwards only as many lines as fit.
	need := rows + s.scroll
	var chunks [][]screen.Line
	total := 0
	for i := len(s.entries) - 1; i >= 0 && total < need; i-- {
		ls := s.entries[i].lines(w, s)
		chunks = append(chunks, ls)
		total += len(ls) + 1 // a blank row between entries
	}
	maxScroll := max(total-rows, 0)
	if s.scroll > maxScroll {
		s.scroll = maxScroll
	}
	y := rows - 1 + s.scroll
	for _, ls := range chunks {
		for j := len(ls) - 1; j >= 0; j-- {
			if y < rows && y >= 0 {
				f.PutLine(0, y, ls[j])
			}
			y--
		}
		y-- // the blank row
		if y < 0 {
			break
		}
	}
	if s.scroll > 0 {
		f.Put(max(w-12, 0), 0, fmt.Sprintf("↑ %d more", s.scroll), s.th.dim)
	}
}

// lines lays out an entry at width w, from the cache when it is valid.
func (e *entry) lines(w int, s *state) []screen.Line {
	if e.cacheOK && e.cacheW == w {
		return e.cache
	}
	e.cache, e.cacheW, e.cacheOK = e.layout(w, s), w, true
	return e.cache
}

func prefixed(first, rest string, st screen.Style, ls []screen.Line) []screen.Line {
	for i := range ls {
		p := rest
		if i == 0 {
			p = first
		}
		ls[i] = append(screen.Line{{Text: p, Style: st}}, ls[i]...)
	}
	return ls
}

func (e *entry) layout(w int, s *state) []screen.Line {
	inner := max(w-2, 1)
	switch e.kind {
	case entUser:
		return prefixed("› ", "  ", s.th.prompt, screen.Wrap(e.text, inner, s.th.user))
	case entAssistant:
		ls := e.markdown(inner, &s.th.md)
		if len(ls) == 0 {
			ls = []screen.Line{nil}
		}
		ls = prefixed("● ", "  ", screen.Style{}, ls)
		if e.interrupted {
			ls = append(ls, screen.Line{{Text: "  ⏹ interrupted", Style: s.th.notice}})
		}
		return ls
	case entReasoning:
		ls := screen.Wrap(e.text, inner, screen.Style{Attr: screen.Dim | screen.Italic})
		if e.finished && len(ls) > toolPreviewLines {
			ls = append(ls[:1:1], screen.Line{{Text: fmt.Sprintf("… %d more lines of reasoning", len(ls)-1), Style: s.th.dim}})
		} else if len(ls) > toolPreviewLines {
			ls = ls[len(ls)-toolPreviewLines:]
		}
		return prefixed("∴ ", "  ", s.th.dim, ls)
	case entTool:
		return e.toolLines(w, s)
	case entNotice:
		return prefixed("! ", "  ", s.th.notice, screen.Wrap(e.text, inner, s.th.notice))
	case entError:
		ls := prefixed("✗ ", "  ", s.th.err, screen.Wrap(e.text, inner, s.th.err))
		return ls
	case entOutput:
		return screen.Clip(e.text, w, screen.Style{})
	}
	return nil
}

// markdown lays out the answer; while it streams, the part before the
// last blank line outside a code fence is laid out once and kept (markdown
// state does not cross such a line), so each delta costs the layout of the
// last paragraph, not of the whole answer.
func (e *entry) markdown(w int, th *screen.Theme) []screen.Line {
	if e.finished {
		e.stable, e.stableLen = nil, 0
		return screen.Markdown(e.text, w, th)
	}
	cut := stableCut(e.text)
	if cut == 0 {
		return screen.Markdown(e.text, w, th)
	}
	if e.stableLen != cut || e.stableW != w {
		e.stable, e.stableLen, e.stableW = screen.Markdown(e.text[:cut], w, th), cut, w
	}
	rest := screen.Markdown(e.text[cut:], w, th)
	out := make([]screen.Line, 0, len(e.stable)+1+len(rest))
	out = append(out, e.stable...)
	if len(e.stable) > 0 && len(rest) > 0 {
		out = append(out, nil)
	}
	return append(out, rest...)
}

// stableCut returns the offset just after the last blank line that is
// outside a code fence, or 0.
func stableCut(text string) int {
	cut, inFence, start := 0, false, 0
	prevBlank := false
	for start < len(text) {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			break // the last line is still growing
		}
		line := strings.TrimSpace(text[start : start+end])
		start += end + 1
		switch {
		case strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~"):
			inFence = !inFence
			prevBlank = false
		case line == "" && !inFence:
			if !prevBlank {
				cut = start
			}
			prevBlank = true
		default:
			prevBlank = false
		}
	}
	return cut
}

func (e *entry) toolLines(w int, s *state) []screen.Line {
	t := e.tool
	head := screen.Line{{Text: "⚙ ", Style: s.th.toolName}, {Text: screen.SanitizeLine(t.name), Style: s.th.toolName}}
	if t.args != "" {
		head = append(head, screen.Span{Text: "(" + screen.SanitizeLine(t.args) + ")", Style: s.th.dim})
	}
	ls := []screen.Line{truncLine(head, w)}
	inner := max(w-4, 1)
	if sub := t.sub; sub != nil && !t.done {
		// A running subagent: its latest calls; when it ends the block
		// collapses to its answer and figures line.
		ls = append(ls, truncLine(screen.Line{{Text: "  ⎿ agent " + screen.SanitizeLine(sub.agent), Style: s.th.dim}}, w))
		for _, c := range sub.calls {
			ls = append(ls, truncLine(screen.Line{{Text: "    ⚙ " + screen.SanitizeLine(c), Style: s.th.dim}}, w))
		}
		return ls
	}
	switch {
	case !t.done && t.progress != "":
		// What the call last reported (an MCP server's progress).
		ls = append(ls, screen.Line{{Text: "  ⎿ running: ", Style: s.th.dim}, {Text: screen.TruncateEllipsis(screen.SanitizeLine(t.progress), max(inner-9, 1)), Style: s.th.dim}})
	case !t.done:
		ls = append(ls, s.runningLines(t, inner)...)
	case t.denied:
		ls = append(ls, screen.Line{{Text: "  ⎿ ", Style: s.th.dim}, {Text: screen.TruncateEllipsis(screen.SanitizeLine(firstLine(t.content)), inner), Style: s.th.err}})
	case t.display != "":
		d := screen.Diff(t.display, inner, &s.th.md)
		more := 0
		if len(d) > diffPreviewLines {
			more = len(d) - diffPreviewLines
			d = d[:diffPreviewLines]
		}
		ls = append(ls, prefixed("  ⎿ ", "    ", s.th.dim, d)...)
		if more > 0 {
			ls = append(ls, screen.Line{{Text: moreLines(more), Style: s.th.dim}})
		}
	default:
		st := s.th.dim
		if t.isError {
			st = s.th.err
		}
		out := screen.Clip(strings.TrimRight(t.content, "\n"), inner, st)
		more := 0
		if len(out) > toolPreviewLines {
			more = len(out) - toolPreviewLines
			out = out[:toolPreviewLines]
		}
		ls = append(ls, prefixed("  ⎿ ", "    ", s.th.dim, out)...)
		if more > 0 {
			ls = append(ls, screen.Line{{Text: moreLines(more), Style: s.th.dim}})
		}
	}
	return ls
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// truncLine cuts a line of spans at width w.
func truncLine(l screen.Line, w int) screen.Line {
	var out screen.Line
	used := 0
	for _, sp := range l {
		sw := screen.StringWidth(sp.Text)
		if used+sw <= w {
			out = append(out, sp)
			used += sw
			continue
		}
		out = append(out, screen.Span{Text: screen.TruncateEllipsis(sp.Text, w-used), Style: sp.Style})
		break
	}
	return out
}

// composerLines lays out the composer: "› " and the text wrapped by
// character, at most maxRows rows (the rows around the cursor), and where
// the cursor is.
func (s *state) composerLines(w, maxRows int) ([]screen.Line, int, int) {
	inner := max(w-2, 1)
	var rows []screen.Line
	var cur []rune
	col := 0
	curRow, curCol := 0, 0
	flush := func() {
		rows = append(rows, screen.Line{{Text: string(cur)}})
		cur, col = cur[:0], 0
	}
	for i, r := range s.comp.buf {
		if i == s.comp.cur {
			curRow, curCol = len(rows), col
		}
		if r == '\n' {
			flush()
			continue
		}
		if r == '\t' {
			r = ' '
		}
		if screen.SanitizeLine(string(r)) == "" {
			continue
		}
		rw := screen.RuneWidth(r)
		if col+rw > inner {
			flush()
			if i == s.comp.cur {
				curRow, curCol = len(rows), 0
			}
		}
		cur = append(cur, r)
		col += rw
	}
	if s.comp.cur >= len(s.comp.buf) {
		if col >= inner {
			flush()
		}
		curRow, curCol = len(rows), col
	}
	flush()
	if len(s.comp.buf) == 0 {
		hint := "Type a prompt, / for commands"
		if s.busy {
			hint = "Type to queue a prompt"
		}
		rows[0] = screen.Line{{Text: screen.TruncateEllipsis(hint, inner), Style: s.th.dim}}
	}
	start := 0
	if len(rows) > maxRows {
		start = min(max(curRow-maxRows+1, 0), len(rows)-maxRows)
		rows = rows[start : start+maxRows]
	}
	for i := range rows {
		p := "  "
		if i == 0 && start == 0 {
			p = "› "
		}
		rows[i] = append(screen.Line{{Text: p, Style: s.th.prompt}}, rows[i]...)
	}
	sep := screen.Line{{Text: strings.Repeat("─", w), Style: s.th.dim}}
	return append([]screen.Line{sep}, rows...), curRow - start + 1, curCol + 2
}

func (s *state) queuedLines(w int) []screen.Line {
	if len(s.queued) == 0 {
		return nil
	}
	var ls []screen.Line
	show := s.queued
	if len(show) > 3 {
		show = show[len(show)-3:]
		ls = append(ls, screen.Line{{Text: fmt.Sprintf("  … %d more queued", len(s.queued)-3), Style: s.th.dim}})
	}
	for _, q := range show {
		ls = append(ls, truncLine(screen.Line{{Text: "  ⏳ queued: ", Style: s.th.dim}, {Text: screen.SanitizeLine(q.prompt)}}, w))
	}
	return ls
}

func (s *state) menuLines(w int) []screen.Line {
	ac := s.ac
	var ls []screen.Line
	for i, c := range ac.matches {
		st, help := screen.Style{}, s.th.dim
		if i == ac.sel {
			st, help = s.th.selected, s.th.selected
		}
		l := screen.Line{{Text: fmt.Sprintf(" %-16s ", c.text), Style: st}, {Text: c.help + " ", Style: help}}
		ls = append(ls, truncLine(l, w))
	}
	return ls
}

func (s *state) confirmLines(w int) []screen.Line {
	c := s.confirm
	ls := []screen.Line{{{Text: strings.Repeat("─", w), Style: s.th.dim}}}
	if c.title != "" {
		ls = append(ls, truncLine(screen.Line{{Text: screen.SanitizeLine(c.title), Style: s.th.title}}, w))
	}
	ls = append(ls, screen.Wrap(c.question, w, screen.Style{})...)
	yes, no := screen.Style{}, s.th.selected
	if c.yes {
		yes, no = s.th.selected, screen.Style{}
	}
	ls = append(ls, screen.Line{{Text: "  "}, {Text: " Yes ", Style: yes}, {Text: "  "}, {Text: " No ", Style: no}})
	return ls
}

func (s *state) textPromptLines(w int) ([]screen.Line, int, int) {
	t := s.textPrompt
	ls := []screen.Line{{{Text: strings.Repeat("─", w), Style: s.th.dim}}}
	ls = append(ls, truncLine(screen.Line{{Text: screen.SanitizeLine(t.title), Style: s.th.title}}, w))
	if t.detail != "" {
		ls = append(ls, screen.Wrap(t.detail, w, s.th.dim)...)
	}
	v := string(t.buf)
	if t.masked {
		v = strings.Repeat("•", len(t.buf))
	}
	v = screen.SanitizeLine(v)
	// Show the end of a long value: that is where typing happens.
	for screen.StringWidth(v) > w-3 && v != "" {
		_, rest, _ := strings.Cut(v, string([]rune(v)[0]))
		v = rest
	}
	ls = append(ls, screen.Line{{Text: "› ", Style: s.th.prompt}, {Text: v}})
	return ls, len(ls) - 1, 2 + screen.StringWidth(v)
}

// drawStatus draws the status line: provider, model, permission mode,
// context use, and the thinking indicator.
func (s *state) drawStatus(f *screen.Frame, y int) {
	f.Fill(0, y, s.th.status)
	parts := []string{}
	if s.status.Provider != "" {
		parts = append(parts, s.status.Provider)
	}
	if s.status.Model != "" {
		parts = append(parts, s.status.Model)
	}
	if s.status.Mode != "" {
		parts = append(parts, "mode "+s.status.Mode)
	}
	if s.status.Sandbox != "" {
		parts = append(parts, "sandbox "+s.status.Sandbox)
	}
	switch {
	case s.ctxWin > 0:
		// docs/reference/runtime.md, "Context management": ctx N% of W.
		w := windowSize(s.ctxWin)
		if s.ctxGuess {
			w = "~" + w // learned from a refusal, not told
		}
		parts = append(parts, fmt.Sprintf("ctx %d%% of %s", min(s.ctxTok*100/s.ctxWin, 999), w))
	case s.ctxTok > 0:
		parts = append(parts, "ctx "+tokens(s.ctxTok))
	}
	left := " " + screen.SanitizeLine(strings.Join(parts, " · "))
	right := ""
	if s.busy {
		sp := spinner[s.spin%len(spinner)]
		if s.ui.ReducedMotion {
			sp = "…" // reduced motion: no animation (the theme-picker toggle; docs/reference/keybindings.md, "Contexts")
		}
		right = sp + " thinking "
		if a := s.activeForm(); a != "" {
			right = sp + " " + screen.TruncateEllipsis(screen.SanitizeLine(a), 40) + " "
		}
		if s.compacting != nil {
			right = sp + " compacting "
		}
		if s.hookStatus != "" {
			right = sp + " " + screen.TruncateEllipsis(screen.SanitizeLine(s.hookStatus), 40) + " "
		}
	}
	if first, ok := s.matcher.Pending(); ok {
		right = first.Display() + " … " + right
	}
	x := f.Put(0, y, screen.TruncateEllipsis(left, max(f.W-screen.StringWidth(right)-1, 0)), s.th.status)
	if right != "" {
		f.Put(max(f.W-screen.StringWidth(right), x), y, right, s.th.status)
	}
}

// windowSize is a context window as people say it: 200k, 1M, 32k.
func windowSize(n int) string {
	switch {
	case n >= 1000000 && n%1000000 == 0 || n == 1048576:
		return fmt.Sprintf("%dM", (n+500000)/1000000)
	case n >= 1000:
		return fmt.Sprintf("%dk", (n+500)/1000)
	}
	return fmt.Sprint(n)
}

func tokens(n int) string {
	if n < 1000 {
		return fmt.Sprintf("%d tokens", n)
	}
	return fmt.Sprintf("%.1fk tokens", float64(n)/1000)
}

// hintAction is an action whose key the footer shows, and its label.
type hintAction struct {
	a     keys.Action
	label string
}

// hintActions are the footer's hints per context, indexed by context: a
// table laid out by the compiler, not built when the package initialises.
// The list contexts' hints follow the others (docs/reference/keybindings.md, "Defaults").
var hintActions = [keys.NumContexts][]hintAction{
	keys.ChatInput:         {{keys.ActSubmit, "send"}, {keys.ActHistoryPrevious, "history"}},
	keys.TextInput:         {{keys.ActSubmit, "send"}, {keys.ActCursorUp, "line up"}},
	keys.Thinking:          {{keys.ActAbort, "abort"}},
	keys.QueuedPrompt:      {{keys.ActCancel, "cancel queued"}},
	keys.Recovery:          {{keys.ActRetry, "retry"}},
	keys.AutocompleteMenu:  {{keys.ActAccept, "complete"}, {keys.ActExecute, "run"}, {keys.ActClose, "close"}},
	keys.PermissionPrompt:  {{keys.ActAllowOnce, "allow once"}, {keys.ActAllowSession, "session"}, {keys.ActAllowProject, "project"}, {keys.ActDeny, "deny"}, {keys.ActConfirm, "choose"}},
	keys.ConfirmPrompt:     {{keys.ActChooseYes, "yes"}, {keys.ActChooseNo, "no"}, {keys.ActConfirm, "choose"}},
	keys.TextPrompt:        {{keys.ActSubmit, "submit"}, {keys.ActCancel, "cancel"}},
	keys.ListPicker:        {{keys.ActSelect, "open"}, {keys.ActCancel, "cancel"}},
	keys.MenuSelect:        {{keys.ActSelect, "choose"}, {keys.ActBack, "back"}},
	keys.MultiSelect:       {{keys.ActToggle, "toggle"}, {keys.ActConfirm, "confirm"}, {keys.ActCancel, "cancel"}},
	keys.BackgroundList:    {{keys.ActOpen, "open"}, {keys.ActClose, "close"}},
	keys.BackgroundDetail:  {{keys.ActReturnToMain, "back"}},
	keys.WorkspaceSwitcher: {{keys.ActSelect, "switch"}, {keys.ActAttach, "attach"}, {keys.ActClose, "close"}},
	keys.TransportSettings: {{keys.ActToggle, "toggle"}, {keys.ActClose, "done"}},
	keys.HistorySearch:     {{keys.ActNext, "older"}, {keys.ActCycleScope, "scope"}, {keys.ActInsert, "insert"}, {keys.ActExecute, "run"}, {keys.ActCancel, "cancel"}},
	keys.ThemePicker:       {{keys.ActSelect, "save"}, {keys.ActToggleSyntax, "syntax"}, {keys.ActToggleMotion, "motion"}, {keys.ActCancel, "cancel"}},
}

// drawFooter shows the hints of the contexts in focus from the live
// bindings (docs/reference/keybindings.md, "Meaning of a binding": an
// unbound action's hint disappears), or a transient message.
func (s *state) drawFooter(f *screen.Frame, y int) {
	if s.hint != "" {
		f.Put(1, y, s.hint, s.th.notice)
		return
	}
	var parts []string
	ctxs := s.contexts()
	for i, c := range ctxs {
		if int(c) >= len(hintActions) {
			continue
		}
		for _, h := range hintActions[c] {
			if c == keys.PermissionPrompt && s.perm != nil && s.perm.escalation() && (h.a == keys.ActAllowSession || h.a == keys.ActAllowProject) {
				continue // an escalation is answered once or not at all
			}
			if k := s.km.Hint(c, h.a); k != "" && !s.shadowed(ctxs[:i], c, h.a) {
				parts = append(parts, k+" "+h.label)
			}
		}
	}
	parts = append(parts, "Ctrl+C×2 exit")
	f.Put(1, y, screen.TruncateEllipsis(strings.Join(parts, " · "), max(f.W-2, 0)), s.th.dim)
}

// shadowed reports whether every key of action a in context c is taken by
// a context ahead of it in focus (its hint would lie).
func (s *state) shadowed(ahead []keys.Context, c keys.Context, a keys.Action) bool {
	if len(ahead) == 0 {
		return false
	}
	for _, q := range s.km.Keys(c, a) {
		taken := false
		for _, o := range ahead {
			if _, ok := s.km.Lookup(o, q.First); ok || s.km.IsPrefix(o, q.First) {
				taken = true
				break
			}
		}
		if !taken {
			return false
		}
	}
	return true
}

// moreLines says how many lines are hidden.
func moreLines(n int) string {
	if n == 1 {
		return "    … 1 more line"
	}
	return fmt.Sprintf("    … %d more lines", n)
}
