package tui

import "unicode"

// maxComposer bounds the composer's text (a paste beyond it is cut): a
// prompt is not a file transfer.
const maxComposer = 1 << 20

// maxHistory bounds the prompt history kept for up/down.
const maxHistory = 500

// composer is the chat-input editor: a rune buffer with a cursor and the
// prompt history (the chat-input actions of docs/reference/keybindings.md,
// "Defaults").
type composer struct {
	buf []rune
	cur int

	history []string // oldest first
	hidx    int      // len(history) when not browsing
	draft   string   // what was typed before browsing began
}

func (c *composer) text() string { return string(c.buf) }

func (c *composer) set(s string) {
	c.buf = []rune(s)
	c.cur = len(c.buf)
}

func (c *composer) reset() {
	c.buf, c.cur = c.buf[:0], 0
	c.hidx = len(c.history)
}

// insert types text at the cursor.
func (c *composer) insert(s string) {
	rs := []rune(s)
	if room := maxComposer - len(c.buf); len(rs) > room {
		rs = rs[:max(room, 0)]
	}
	c.buf = append(c.buf[:c.cur], append(rs, c.buf[c.cur:]...)...)
	c.cur += len(rs)
}

func (c *composer) left() {
	if c.cur > 0 {
		c.cur--
	}
}

func (c *composer) right() {
	if c.cur < len(c.buf) {
		c.cur++
	}
}

func (c *composer) home() {
	for c.cur > 0 && c.buf[c.cur-1] != '\n' {
		c.cur--
	}
}

func (c *composer) end() {
	for c.cur < len(c.buf) && c.buf[c.cur] != '\n' {
		c.cur++
	}
}

func (c *composer) deleteBackward() {
	if c.cur > 0 {
		c.buf = append(c.buf[:c.cur-1], c.buf[c.cur:]...)
		c.cur--
	}
}

// deleteWord deletes the word before the cursor and the spaces after it
// (Ctrl-W in a shell).
func (c *composer) deleteWord() {
	i := c.cur
	for i > 0 && unicode.IsSpace(c.buf[i-1]) {
		i--
	}
	for i > 0 && !unicode.IsSpace(c.buf[i-1]) {
		i--
	}
	c.buf = append(c.buf[:i], c.buf[c.cur:]...)
	c.cur = i
}

// deleteLine deletes from the start of the cursor's line to the cursor
// (Ctrl-U in a shell); at the start of a line it joins it to the previous.
func (c *composer) deleteLine() {
	i := c.cur
	for i > 0 && c.buf[i-1] != '\n' {
		i--
	}
	if i == c.cur && i > 0 {
		i--
	}
	c.buf = append(c.buf[:i], c.buf[c.cur:]...)
	c.cur = i
}

// remember adds a submitted prompt to the history (not a repeat of the
// last one).
func (c *composer) remember(s string) {
	if s == "" || (len(c.history) > 0 && c.history[len(c.history)-1] == s) {
		c.hidx = len(c.history)
		return
	}
	c.history = append(c.history, s)
	if len(c.history) > maxHistory {
		c.history = c.history[len(c.history)-maxHistory:]
	}
	c.hidx = len(c.history)
}

// previous shows the previous history entry; the draft is kept for next.
func (c *composer) previous() {
	if c.hidx == 0 {
		return
	}
	if c.hidx == len(c.history) {
		c.draft = c.text()
	}
	c.hidx--
	c.set(c.history[c.hidx])
}

func (c *composer) next() {
	if c.hidx >= len(c.history) {
		return
	}
	c.hidx++
	if c.hidx == len(c.history) {
		c.set(c.draft)
		return
	}
	c.set(c.history[c.hidx])
}

// column is the cursor's offset from the start of its line.
func (c *composer) column() int {
	n := 0
	for i := c.cur; i > 0 && c.buf[i-1] != '\n'; i-- {
		n++
	}
	return n
}

// up moves the cursor to the same column of the previous line (or its
// end when shorter); on the first line it reports false.
func (c *composer) up() bool {
	col := c.column()
	start := c.cur - col
	if start == 0 {
		return false
	}
	prevEnd := start - 1 // the newline ending the previous line
	prevStart := prevEnd
	for prevStart > 0 && c.buf[prevStart-1] != '\n' {
		prevStart--
	}
	c.cur = prevStart + min(col, prevEnd-prevStart)
	return true
}

// down moves the cursor to the same column of the next line (or its end
// when shorter); on the last line it reports false.
func (c *composer) down() bool {
	col := c.column()
	i := c.cur
	for i < len(c.buf) && c.buf[i] != '\n' {
		i++
	}
	if i == len(c.buf) {
		return false
	}
	nextStart := i + 1
	nextEnd := nextStart
	for nextEnd < len(c.buf) && c.buf[nextEnd] != '\n' {
		nextEnd++
	}
	c.cur = nextStart + min(col, nextEnd-nextStart)
	return true
}

// multiline reports whether the text spans lines: the composer is then a
// multi-line entry (the text-input context, docs/reference/keybindings.md,
// "Contexts"), where the arrows move between lines instead of through the
// history.
func (c *composer) multiline() bool {
	for _, r := range c.buf {
		if r == '\n' {
			return true
		}
	}
	return false
}
