package screen

import (
	"strings"
	"unicode/utf8"
)

// Cell is one column of a frame. Text is the character shown there with
// any combining marks that follow it, " " for a blank, and "" for the
// right half of a wide character (the cell to its left holds it).
type Cell struct {
	Text  string
	Style Style
}

// Frame is a screen's worth of styled cells, W columns by H rows, and
// where the cursor goes. Everything written is sanitised on the way in
// (no control character can reach a cell), so a frame is always safe to
// render.
type Frame struct {
	W, H  int
	cells []Cell
	// Cursor is where the terminal's cursor is placed after a render, and
	// whether it is shown (the composer shows it, lists hide it).
	CursorX, CursorY int
	CursorVisible    bool
}

var blank = Cell{Text: " "}

// asciiChars holds the printable ASCII characters, so that writing one
// slices it and allocates nothing (and the start builds no table of 128
// strings: docs/performance.md, "Startup (main, config)").
const asciiChars = " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"

// ascii returns the one-character string of printable ASCII c.
func ascii(c byte) string { return asciiChars[c-0x20 : c-0x20+1] }

// NewFrame returns a blank frame of w×h cells (negative sizes are 0).
func NewFrame(w, h int) *Frame {
	w, h = max(w, 0), max(h, 0)
	f := &Frame{W: w, H: h, cells: make([]Cell, w*h)}
	f.Clear()
	return f
}

// Resize changes the frame's size and blanks it.
func (f *Frame) Resize(w, h int) {
	w, h = max(w, 0), max(h, 0)
	if cap(f.cells) >= w*h {
		f.cells = f.cells[:w*h]
	} else {
		f.cells = make([]Cell, w*h)
	}
	f.W, f.H = w, h
	f.Clear()
}

// Clear blanks every cell and hides the cursor.
func (f *Frame) Clear() {
	for i := range f.cells {
		f.cells[i] = blank
	}
	f.CursorX, f.CursorY, f.CursorVisible = 0, 0, false
}

// Cell returns the cell at x, y (a blank outside the frame).
func (f *Frame) Cell(x, y int) Cell {
	if x < 0 || y < 0 || x >= f.W || y >= f.H {
		return blank
	}
	return f.cells[y*f.W+x]
}

// Fill sets the style of row y from column x to the end, keeping the text.
func (f *Frame) Fill(x, y int, st Style) {
	if y < 0 || y >= f.H {
		return
	}
	row := f.cells[y*f.W : (y+1)*f.W]
	for i := max(x, 0); i < f.W; i++ {
		row[i].Style = st
	}
}

// Put writes s at column x of row y in style st, clipped at the right
// edge, and returns the column after the last character written. Text is
// laid out on one line: tabs and line breaks become spaces, and the runes
// Sanitize removes are dropped, so that nothing unsafe reaches a cell even
// when the caller forgot to sanitise. A wide character that does not fit
// before the edge is not written.
func (f *Frame) Put(x, y int, s string, st Style) int {
	if y < 0 || y >= f.H || x >= f.W {
		return x
	}
	row := f.cells[y*f.W : (y+1)*f.W]
	for i := 0; i < len(s); {
		c := s[i]
		if x >= f.W && (c < 0x80 || !zeroWidthAt(s[i:])) {
			break // clipped; only marks for the last character go on
		}
		if c >= 0x20 && c < 0x7F {
			if x >= 0 {
				f.set(row, x, ascii(c), st)
			}
			x++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		text := s[i : i+size]
		i += size
		switch {
		case r == '\t' || r == '\n':
			r, text = ' ', " "
		case r == utf8.RuneError && size == 1:
			text = "\uFFFD"
		case UnsafeRune(r) || r == '\r':
			continue
		}
		w := RuneWidth(r)
		switch {
		case w == 0:
			// A combining mark or format character joins the character
			// to its left.
			p := x - 1
			if p >= 0 && p < f.W && row[p].Text == "" && p > 0 {
				p--
			}
			if p >= 0 && p < f.W {
				row[p].Text += text
			}
		case x < 0:
			x += w
		case x+w > f.W:
			for ; x < f.W; x++ {
				f.set(row, x, " ", st)
			}
		default:
			f.set(row, x, text, st)
			if w == 2 {
				if x+2 < f.W && row[x+2].Text == "" {
					row[x+2] = Cell{Text: " ", Style: row[x+2].Style}
				}
				row[x+1] = Cell{Text: "", Style: st}
			}
			x += w
		}
	}
	return x
}

func zeroWidthAt(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return RuneWidth(r) == 0
}

// set writes one narrow or the left half of a wide character at x,
// repairing a wide character it overwrites half of.
func (f *Frame) set(row []Cell, x int, text string, st Style) {
	if row[x].Text == "" && x > 0 {
		row[x-1].Text = " " // the right half of a wide character
	}
	if x+1 < len(row) && row[x+1].Text == "" {
		row[x+1].Text = " " // the left half of a wide character
	}
	row[x] = Cell{Text: text, Style: st}
}

// PutLine writes a laid-out line's spans from column x of row y and
// returns the column after it.
func (f *Frame) PutLine(x, y int, l Line) int {
	for _, sp := range l {
		x = f.Put(x, y, sp.Text, sp.Style)
	}
	return x
}

// Row returns the text of row y without styles, trailing blanks removed
// (for tests and the plain fallback).
func (f *Frame) Row(y int) string {
	if y < 0 || y >= f.H {
		return ""
	}
	var b strings.Builder
	for _, c := range f.cells[y*f.W : (y+1)*f.W] {
		b.WriteString(c.Text)
	}
	return strings.TrimRight(b.String(), " ")
}

// String returns every row's text, one per line: the golden form of a
// frame in tests.
func (f *Frame) String() string {
	var b strings.Builder
	for y := range f.H {
		b.WriteString(f.Row(y))
		b.WriteByte('\n')
	}
	return b.String()
}
