package screen

import (
	"testing"
	"unicode/utf8"
)

// FuzzLayout: for any outside text, sanitising leaves nothing a terminal
// interprets, truncation and every layout fit their width, writing the
// lines into a frame never panics, and the rendered bytes hold no escape
// that the renderer did not write itself.
func FuzzLayout(f *testing.F) {
	for _, s := range []string{
		"plain", "漢字かな", "e\u0301", "\x1b[31mred", "\u202Eevil", "\xff\xfe", "a\r\nb\rc",
		"# H\n- item\n> q\n```go\ncode\n```", "**b** `c`", "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y",
		"👍🏽\u200d", "\t\ttabs", "1) one\n22. two",
	} {
		f.Add(s, uint8(10))
		f.Add(s, uint8(1))
	}
	f.Fuzz(func(t *testing.T, s string, w8 uint8) {
		w := int(w8%120) + 1
		clean := Sanitize(s)
		if !utf8.ValidString(clean) {
			t.Fatalf("Sanitize gave invalid UTF-8: %q", clean)
		}
		checkSafe(t, "Sanitize", clean)
		checkSafe(t, "SanitizeLine", SanitizeLine(s))
		if got := Truncate(s, w); StringWidth(got) > w {
			t.Fatalf("Truncate(%q, %d) = %q", s, w, got)
		}
		if got := TruncateEllipsis(clean, w); StringWidth(got) > w {
			t.Fatalf("TruncateEllipsis(%q, %d) = %q", s, w, got)
		}
		fr := NewFrame(w, 8)
		for name, ls := range map[string][]Line{
			"Wrap": Wrap(s, w, Style{}), "Markdown": Markdown(s, w, nil),
			"Diff": Diff(s, w, nil), "Clip": Clip(s, w, Style{}),
		} {
			for i, l := range ls {
				if l.Width() > w {
					t.Fatalf("%s(%q, %d): line %q has width %d", name, s, w, l.String(), l.Width())
				}
				for _, sp := range l {
					checkSafe(t, name, sp.Text)
					if sp.Text != "" && (sp.Text[0] == '\n' || sp.Text[len(sp.Text)-1] == '\t') {
						t.Fatalf("%s: tab or newline in %q", name, sp.Text)
					}
				}
				if x := fr.PutLine(0, i%8, l); x > w {
					t.Fatalf("%s: PutLine reached column %d of %d", name, x, w)
				}
			}
		}
		fr.Put(0, 0, s, Style{})
		r := NewRenderer(RendererOptions{})
		out := r.Render(fr)
		// Every ESC in the output begins a sequence the renderer writes:
		// CSI followed by parameters and a final byte.
		for i := 0; i < len(out); i++ {
			if out[i] != 0x1b {
				if out[i] < 0x20 || out[i] == 0x7f {
					t.Fatalf("control byte %#x in the rendered frame", out[i])
				}
				continue
			}
			if i+1 >= len(out) || out[i+1] != '[' {
				t.Fatalf("ESC not starting a CSI at %d: %q", i, out)
			}
		}
		if utf8.RuneCount(out) < 0 {
			t.Fatal()
		}
	})
}
