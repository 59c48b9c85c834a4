package screen

import "strconv"

// Escape sequences the renderer writes.
const (
	syncBegin   = "\x1b[?2026h" // DEC private mode 2026: hold drawing
	syncEnd     = "\x1b[?2026l" // … and show the frame at once
	eraseScreen = "\x1b[2J"
	eraseLine   = "\x1b[K"
	sgrReset    = "\x1b[0m"
	cursorShow  = "\x1b[?25h"
	cursorHide  = "\x1b[?25l"
)

// RendererOptions configures a Renderer. The zero value is the default.
type RendererOptions struct {
	// NoColor drops colours and keeps attributes (NO_COLOR).
	NoColor bool
}

// Renderer turns frames into the bytes that update a terminal from the
// previous frame: only the rows that changed are written, each frame is
// one byte slice inside synchronized output (CSI ?2026h … CSI ?2026l;
// terminals without the mode ignore it), so the terminal never shows a
// half-drawn frame. It assumes it owns the screen (the alternate screen)
// and that nothing else writes to it. Not safe for concurrent use.
type Renderer struct {
	opts    RendererOptions
	prev    []Cell // the last frame's cells
	w, h    int
	started bool
	curX    int
	curY    int
	curVis  bool
	buf     []byte
}

// NewRenderer returns a renderer whose first frame redraws everything.
func NewRenderer(opts RendererOptions) *Renderer { return &Renderer{opts: opts} }

// Invalidate makes the next frame redraw everything (after a resize, or
// when something else may have written to the terminal).
func (r *Renderer) Invalidate() { r.started = false }

// Render returns the bytes that bring the terminal from the previous
// frame to f, or nil when nothing changed. Within a changed row only the
// span from its first to its last changed cell is written (a typed
// character costs a few bytes, not a row). The slice is reused by the
// next call.
func (r *Renderer) Render(f *Frame) []byte {
	full := !r.started || f.W != r.w || f.H != r.h
	b := r.buf[:0]
	b = append(b, syncBegin...)
	if full {
		r.prev = make([]Cell, len(f.cells))
		for i := range r.prev {
			r.prev[i] = blank
		}
		r.w, r.h, r.started = f.W, f.H, true
		b = append(b, sgrReset+cursorHide+eraseScreen...)
		r.curVis = false
		r.curX, r.curY = -1, -1
	}
	changed := full
	for y := range f.H {
		row, prev := f.cells[y*f.W:(y+1)*f.W], r.prev[y*f.W:(y+1)*f.W]
		x0 := 0
		for x0 < len(row) && row[x0] == prev[x0] {
			x0++
		}
		if x0 == len(row) {
			continue
		}
		x1 := len(row) - 1
		for row[x1] == prev[x1] {
			x1--
		}
		if row[x0].Text == "" && x0 > 0 {
			x0-- // start at the left half of a wide character
		}
		changed = true
		b = appendMove(b, x0, y)
		b = r.encodeSpan(b, row, x0, x1)
		copy(prev, row)
	}
	cx, cy := min(max(f.CursorX, 0), max(f.W-1, 0)), min(max(f.CursorY, 0), max(f.H-1, 0))
	if changed || cx != r.curX || cy != r.curY || f.CursorVisible != r.curVis {
		if f.CursorVisible {
			b = appendMove(b, cx, cy)
		}
		if f.CursorVisible != r.curVis {
			if f.CursorVisible {
				b = append(b, cursorShow...)
			} else {
				b = append(b, cursorHide...)
			}
		}
		r.curX, r.curY, r.curVis = cx, cy, f.CursorVisible
		changed = true
	}
	if !changed {
		return nil
	}
	b = append(b, syncEnd...)
	r.buf = b
	return b
}

// encodeSpan appends the cells x0 … x1 of a row with the SGR changes
// between them. When the span reaches the blanks at the end of the row
// (in the default style), they are left to an erase to the end of the
// line instead; a row that ends in its last column gets no erase: in the
// pending-wrap state an erase would clear that last character.
func (r *Renderer) encodeSpan(b []byte, row []Cell, x0, x1 int) []byte {
	end := len(row)
	for end > 0 && row[end-1] == blank {
		end--
	}
	erase := false
	if x1 >= end {
		x1, erase = end-1, end < len(row)
	}
	var cur Style
	first := true
	for x := x0; x <= x1; x++ {
		c := row[x]
		if c.Text == "" {
			continue
		}
		st := c.Style
		if r.opts.NoColor {
			st = st.Plain()
		}
		if st != cur || (first && st != Style{}) {
			b = st.appendSGR(b, r.opts.NoColor)
			cur = st
		}
		first = false
		b = append(b, c.Text...)
	}
	if cur != (Style{}) {
		b = append(b, sgrReset...)
	}
	if erase {
		b = append(b, eraseLine...)
	}
	return b
}

// appendMove appends the cursor position sequence for column x, row y
// (zero-based; the terminal counts from 1).
func appendMove(b []byte, x, y int) []byte {
	b = append(b, "\x1b["...)
	b = strconv.AppendInt(b, int64(y+1), 10)
	b = append(b, ';')
	b = strconv.AppendInt(b, int64(x+1), 10)
	return append(b, 'H')
}
