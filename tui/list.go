package tui

import (
	"strings"

	"agent/tui/keys"
	"agent/tui/screen"
)

// listItem is one row of a list screen. Text is outside text (a prompt,
// a session title, a tool's result): it is sanitised when drawn.
type listItem struct {
	id, label, detail string
	on                bool // multi-select and transport-settings: checked
	err               bool // shown in the error style
}

// listScreen is the one modal widget behind the list-like contexts of
// docs/reference/keybindings.md, "Contexts": list-picker, menu-select,
// multi-select, background-list, background-detail, workspace-switcher,
// transport-settings, theme-picker and history-search. Its keybinding
// context decides which actions reach it; the generic ones (previous, next,
// and the closing actions) are handled here, the rest by do.
// loadingNote is the note of a list whose items are still being fetched:
// its empty line waits until they arrive.
const loadingNote = "loading…"

type listScreen struct {
	ctx   keys.Context
	title string
	items []listItem
	sel   int
	empty string // shown when there is no item
	note  string // a line under the title (an error, "loading…")
	// header is outside text shown wrapped under the title (an MCP
	// server's question, the answers to review).
	header string

	// body, when set, replaces the items by scrollable text
	// (background-detail).
	body   string
	scroll int

	// search: typed runes filter all into items (history-search).
	search bool
	query  []rune
	all    []listItem

	// do runs every action but previous/next and the closing ones.
	do func(s *state, l *listScreen, a keys.Action)
	// moved runs after the selection changed (the theme's live preview).
	moved func(s *state, l *listScreen)
	// closed runs when a closing action removed the screen.
	closed func(s *state, l *listScreen)
}

// closing reports whether the action closes a list screen in its context.
func closing(c keys.Context, a keys.Action) bool {
	switch a {
	case keys.ActCancel, keys.ActClose, keys.ActBack, keys.ActReturnToMain:
		return true
	}
	return false
}

func (s *state) top() *listScreen {
	if n := len(s.screens); n > 0 {
		return s.screens[n-1]
	}
	return nil
}

// push opens a screen over the composer; the matcher's pending chord is
// dropped (it belonged to another context).
func (s *state) push(l *listScreen) {
	s.screens = append(s.screens, l)
	s.matcher.Cancel()
	s.dirty = true
}

// pop closes the top screen.
func (s *state) pop() {
	if n := len(s.screens); n > 0 {
		s.screens[n-1] = nil
		s.screens = s.screens[:n-1]
	}
	s.dirty = true
}

// closeAll closes every list screen (a session switch).
func (s *state) closeAll() {
	clear(s.screens)
	s.screens = s.screens[:0]
	s.dirty = true
}

func (l *listScreen) move(d int) {
	if l.body != "" {
		l.scroll = max(l.scroll+d, 0)
		return
	}
	if len(l.items) == 0 {
		return
	}
	l.sel = (l.sel + d + len(l.items)) % len(l.items)
}

func (l *listScreen) current() (listItem, bool) {
	if l.sel < 0 || l.sel >= len(l.items) {
		return listItem{}, false
	}
	return l.items[l.sel], true
}

func (s *state) listAction(l *listScreen, a keys.Action) {
	switch {
	case a == keys.ActPrevious:
		l.move(-1)
		if l.moved != nil {
			l.moved(s, l)
		}
	case a == keys.ActNext:
		l.move(1)
		if l.moved != nil {
			l.moved(s, l)
		}
	case closing(l.ctx, a) && !(l.ctx == keys.WorkspaceSwitcher && a == keys.ActSelect):
		s.popScreen(l)
		if l.closed != nil {
			l.closed(s, l)
		}
	case l.do != nil:
		l.do(s, l, a)
	}
}

// popScreen removes l wherever it is in the stack.
func (s *state) popScreen(l *listScreen) {
	for i, x := range s.screens {
		if x == l {
			s.screens = append(s.screens[:i], s.screens[i+1:]...)
			break
		}
	}
	s.dirty = true
}

// typed handles a key no binding claimed while a search screen is on top:
// printable runes extend the query, backspace shortens it.
func (l *listScreen) typed(ev keys.Event) bool {
	if !l.search {
		return false
	}
	switch {
	case ev.Rune != 0:
		if len(l.query) < 256 {
			l.query = append(l.query, ev.Rune)
		}
	case ev.Stroke == keys.Stroke{Key: keys.KeyBackspace} || ev.Stroke == keys.Stroke{Key: keys.KeyDelete}:
		if len(l.query) > 0 {
			l.query = l.query[:len(l.query)-1]
		}
	default:
		return false
	}
	l.filter()
	return true
}

// filter keeps the items whose label contains the query (case-insensitive),
// in their order (newest first for history).
func (l *listScreen) filter() {
	q := strings.ToLower(string(l.query))
	l.items = l.items[:0]
	for _, it := range l.all {
		if q == "" || strings.Contains(strings.ToLower(it.label), q) {
			l.items = append(l.items, it)
		}
	}
	l.sel = 0
}

// listLines lays out a list screen in at most rows rows: a rule, the
// title, a note, the query of a search, then a window of items around the
// selection (or the body's lines).
func (s *state) listLines(l *listScreen, w, rows int) ([]screen.Line, int, int) {
	ls := []screen.Line{{{Text: strings.Repeat("─", w), Style: s.th.dim}}}
	ls = append(ls, truncLine(screen.Line{{Text: screen.SanitizeLine(l.title), Style: s.th.title}}, w))
	if l.header != "" {
		ls = append(ls, screen.Wrap(l.header, w, screen.Style{})...)
	}
	if l.note != "" {
		ls = append(ls, indent(screen.Wrap(l.note, max(w-2, 1), s.th.notice))...)
	}
	curRow, curCol := -1, 0
	if l.search {
		q := screen.SanitizeLine(string(l.query))
		ls = append(ls, truncLine(screen.Line{{Text: "search: ", Style: s.th.prompt}, {Text: q}}, w))
		curRow, curCol = len(ls)-1, min(8+screen.StringWidth(q), w-1)
	}
	room := max(rows-len(ls), 1)
	if l.body != "" {
		body := screen.Clip(strings.TrimRight(l.body, "\n"), w, screen.Style{})
		l.scroll = min(l.scroll, max(len(body)-room, 0))
		end := min(l.scroll+room, len(body))
		return append(ls, body[l.scroll:end]...), curRow, curCol
	}
	if len(l.items) == 0 {
		if l.note == loadingNote {
			return ls, curRow, curCol // "nothing" is not known yet
		}
		empty := l.empty
		if empty == "" {
			empty = "Nothing to show."
		}
		return append(ls, screen.Line{{Text: "  " + empty, Style: s.th.dim}}), curRow, curCol
	}
	start := 0
	if len(l.items) > room {
		start = min(max(l.sel-room/2, 0), len(l.items)-room)
	}
	for i := start; i < len(l.items) && i < start+room; i++ {
		ls = append(ls, s.itemLine(l, i, w))
	}
	return ls, curRow, curCol
}

func (s *state) itemLine(l *listScreen, i, w int) screen.Line {
	it := l.items[i]
	st, dst := screen.Style{}, s.th.dim
	if it.err {
		st = s.th.err
	}
	mark := "  "
	if i == l.sel {
		st, dst, mark = s.th.selected, s.th.selected, "› "
	}
	line := screen.Line{{Text: mark}}
	switch l.ctx {
	case keys.MultiSelect, keys.TransportSettings:
		box := "[ ] "
		if it.on {
			box = "[x] "
		}
		line = append(line, screen.Span{Text: box, Style: st})
	}
	line = append(line, screen.Span{Text: screen.SanitizeLine(firstLine(it.label)), Style: st})
	if it.detail != "" {
		line = append(line, screen.Span{Text: "  " + screen.SanitizeLine(it.detail), Style: dst})
	}
	return truncLine(line, w)
}
