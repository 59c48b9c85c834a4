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
	prev    []string // each row's encoding in the last frame
	w, h    int
	started bool
	curX    int
	curY    int
	curVis  bool
	buf     []byte
	row     []byte
}

// NewRenderer returns a renderer whose first frame redraws everything.
func NewRenderer(opts RendererOptions) *Renderer { return &Renderer{opts: opts} }

// Invalidate makes the next frame redraw everything (after a resize, or
// when something else may have written to the terminal).
func (r *Renderer) Invalidate() { r.started = false }

// Render returns the bytes that bring the terminal from the previous
// frame to f, or nil when nothing changed. The slice is reused by the
// next call.
func (r *Renderer) Render(f *Frame) []byte {
	full := !r.started || f.W != r.w || f.H != r.h
	b := r.buf[:0]
	b = append(b, syncBegin...)
	if full {
		r.prev = make([]string, f.H)
		r.w, r.h, r.started = f.W, f.H, true
		b = append(b, sgrReset+cursorHide+eraseScreen...)
		r.curVis = false
		r.curX, r.curY = -1, -1
	}
	changed := full
	for y := range f.H {
		r.row = r.encodeRow(r.row[:0], f, y)
		if !full && string(r.row) == r.prev[y] {
			continue
		}
		if full && (len(r.row) == 0 || string(r.row) == eraseLine) {
			r.prev[y] = string(r.row)
			continue // blank, and the screen was just erased
		}
		changed = true
		r.prev[y] = string(r.row)
		b = appendMove(b, 0, y)
		b = append(b, r.row...)
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

// encodeRow appends row y's text with the SGR changes between cells. The
// blanks at the end of the row in the default style are left to an erase
// to the end of the line, which is also what clears the rest of a row that
// had more before. A row that ends in its last column gets no erase: in
// the pending-wrap state an erase would clear that last character.
func (r *Renderer) encodeRow(b []byte, f *Frame, y int) []byte {
	row := f.cells[y*f.W : (y+1)*f.W]
	end := len(row)
	for end > 0 && row[end-1].Text == " " && row[end-1].Style == (Style{}) {
		end--
	}
	var cur Style
	for _, c := range row[:end] {
		if c.Text == "" {
			continue
		}
		st := c.Style
		if r.opts.NoColor {
			st = st.Plain()
		}
		if st != cur {
			b = st.appendSGR(b, r.opts.NoColor)
			cur = st
		}
		b = append(b, c.Text...)
	}
	if cur != (Style{}) {
		b = append(b, sgrReset...)
	}
	if end < len(row) {
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
