package screen

import (
	"bytes"
	"strings"
	"testing"
)

func TestFramePut(t *testing.T) {
	f := NewFrame(10, 3)
	if x := f.Put(0, 0, "hello", Style{}); x != 5 {
		t.Fatalf("x = %d", x)
	}
	f.Put(0, 1, "漢字漢字漢字", Style{}) // 12 columns into 10
	f.Put(0, 2, "ab\x1b[2Jc\td\ne\u0301", Style{})
	want := "hello\n漢字漢字漢\nab[2Jc d e\u0301\n"
	if got := f.String(); got != want {
		t.Fatalf("frame\n%q\nwant\n%q", got, want)
	}
	// A wide character that does not fit is not half drawn.
	f.Put(9, 0, "漢", Style{})
	if c := f.Cell(9, 0); c.Text != " " {
		t.Fatalf("cell 9 = %q", c.Text)
	}
	// Overwriting half of a wide character blanks the other half.
	f.Put(1, 1, "x", Style{})
	if got := f.Row(1); got != " x字漢字漢" {
		t.Fatalf("row = %q", got)
	}
	f.Put(4, 1, "y", Style{})
	if got := f.Row(1); got != " x字y 字漢" {
		t.Fatalf("row = %q", got)
	}
}

func TestRenderOnlyChangedRows(t *testing.T) {
	r := NewRenderer(RendererOptions{})
	f := NewFrame(20, 4)
	f.Put(0, 0, "first", Style{})
	f.Put(0, 1, "second", Style{FG: Red, Attr: Bold})
	f.Put(0, 3, "fourth", Style{})
	out := string(r.Render(f))
	if !strings.HasPrefix(out, "\x1b[?2026h") || !strings.HasSuffix(out, "\x1b[?2026l") {
		t.Fatalf("not wrapped in synchronized output: %q", out)
	}
	if !strings.Contains(out, "\x1b[2J") || !strings.Contains(out, "\x1b[2;1H\x1b[0;1;31msecond\x1b[0m\x1b[4;1Hfourth") {
		t.Fatalf("first frame %q", out)
	}
	if strings.Contains(out, "\x1b[3;1H") {
		t.Fatalf("a blank row was written on a cleared screen: %q", out)
	}
	if got := r.Render(f); got != nil {
		t.Fatalf("unchanged frame wrote %q", got)
	}
	f.Put(0, 3, "FOURTH", Style{})
	out = string(r.Render(f))
	want := "\x1b[?2026h\x1b[4;1HFOURTH\x1b[?2026l"
	if out != want {
		t.Fatalf("diff frame\n%q\nwant\n%q", out, want)
	}
	// Only the changed span of a row is written; a shorter row is erased
	// to its end.
	f.Put(0, 3, "FOXRTH", Style{})
	if out := string(r.Render(f)); out != "\x1b[?2026h\x1b[4;3HX\x1b[?2026l" {
		t.Fatalf("one cell %q", out)
	}
	f.Put(0, 3, "FO    ", Style{})
	if out := string(r.Render(f)); out != "\x1b[?2026h\x1b[4;3H\x1b[K\x1b[?2026l" {
		t.Fatalf("shrink %q", out)
	}
	// A change in the right half of a wide character redraws from its
	// left half; a styled span starts with its style.
	f.Put(0, 3, "ab漢字", Style{})
	r.Render(f)
	f.Put(4, 3, "x", Style{FG: Green})
	if out := string(r.Render(f)); out != "\x1b[?2026h\x1b[4;5H\x1b[0;32mx\x1b[0m\x1b[K\x1b[?2026l" {
		t.Fatalf("wide %q", out)
	}
	// A full row gets no erase (it would clear the last column).
	f.Put(0, 2, strings.Repeat("x", 20), Style{})
	out = string(r.Render(f))
	if !strings.Contains(out, "\x1b[3;1H"+strings.Repeat("x", 20)+"\x1b[?2026l") {
		t.Fatalf("full row %q", out)
	}
	// The cursor moves without redrawing rows.
	f.CursorVisible, f.CursorX, f.CursorY = true, 3, 1
	out = string(r.Render(f))
	if out != "\x1b[?2026h\x1b[2;4H\x1b[?25h\x1b[?2026l" {
		t.Fatalf("cursor %q", out)
	}
	// A resize redraws everything.
	f.Resize(10, 2)
	f.Put(0, 0, "small", Style{})
	if out := string(r.Render(f)); !strings.Contains(out, "\x1b[2J") || !strings.Contains(out, "small") {
		t.Fatalf("resize %q", out)
	}
}

func TestRenderNoColor(t *testing.T) {
	r := NewRenderer(RendererOptions{NoColor: true})
	f := NewFrame(20, 1)
	f.Put(0, 0, "red", Style{FG: Red, BG: Blue, Attr: Bold})
	f.Put(4, 0, "green", Style{FG: Green})
	out := r.Render(f)
	if bytes.Contains(out, []byte(";31")) || bytes.Contains(out, []byte(";32")) || bytes.Contains(out, []byte(";44")) {
		t.Fatalf("colour under NO_COLOR: %q", out)
	}
	if !bytes.Contains(out, []byte("\x1b[0;1mred\x1b[0m green")) {
		t.Fatalf("attributes lost: %q", out)
	}
}

func TestStyleSGR(t *testing.T) {
	cases := []struct {
		name string
		st   Style
		want string
	}{
		{"the zero style resets", Style{}, "\x1b[0m"},
		{"a foreground colour", Style{FG: Red}, "\x1b[0;31m"},
		{"a bright foreground on a background", Style{FG: BrightBlack, BG: White}, "\x1b[0;90;47m"},
		{"attributes before a bright background", Style{BG: BrightWhite, Attr: Underline | Reverse}, "\x1b[0;4;7;107m"},
		{"several attributes", Style{Attr: Bold | Dim | Italic}, "\x1b[0;1;2;3m"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := string(c.st.appendSGR(nil, false)); got != c.want {
				t.Errorf("%+v: %q, want %q", c.st, got, c.want)
			}
		})
	}
}

func TestASCIIIsEveryPrintableCharacter(t *testing.T) {
	for c := byte(0x20); c < 0x7f; c++ {
		if got := ascii(c); got != string(rune(c)) {
			t.Fatalf("ascii(%#x) = %q", c, got)
		}
	}
}
