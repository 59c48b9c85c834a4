package screen

import (
	"strings"
	"testing"
)

func TestRuneWidth(t *testing.T) {
	cases := []struct {
		r    rune
		want int
	}{
		{'a', 1}, {' ', 1}, {'~', 1},
		{0, 0}, {'\t', 0}, {0x1b, 0}, {0x7f, 0}, {0x85, 0}, {0x9b, 0},
		{'é', 1}, {'ß', 1}, {'Ω', 1}, {'я', 1},
		{0x0301, 0}, // combining acute accent (Mn)
		{0x20DD, 0}, // combining enclosing circle (Me)
		{0x200D, 0}, // zero width joiner (Cf)
		{0x200B, 0}, // zero width space
		{0xFE0F, 0}, // variation selector 16
		{0xE0100, 0},
		{0x00AD, 0}, // soft hyphen
		{0x1160, 0}, // Hangul medial vowel
		{0x1100, 2}, {0x115F, 2},
		{'漢', 2}, {'字', 2}, {'あ', 2}, {'カ', 2}, {'한', 2},
		{0x3000, 2}, // ideographic space (F)
		{0x303F, 1}, // half fill space (N)
		{0xFF21, 2}, // fullwidth A (F)
		{0xFF61, 1}, // halfwidth ideographic full stop (H)
		{0xFFE0, 2},
		{0x1F600, 2}, {0x1F680, 2}, {0x1F9FF, 2},
		{0x1F321, 1},             // thermometer: text presentation by default (N)
		{0x2630, 2}, {0x4DC0, 2}, // Unicode 16 additions
		{0x20000, 2}, {0x2FFFD, 2}, {0x3FFFD, 2}, {0x40000, 1},
		{0x231A, 2}, {0x231C, 1},
		{0x2605, 1}, // black star: ambiguous, narrow here
		{0x10FFFF, 1},
	}
	for _, c := range cases {
		if got := RuneWidth(c.r); got != c.want {
			t.Errorf("RuneWidth(%U) = %d, want %d", c.r, got, c.want)
		}
	}
}

// TestWideTableSorted: the binary search needs sorted, disjoint ranges.
func TestWideTableSorted(t *testing.T) {
	for i, r := range wide {
		if r.lo > r.hi {
			t.Errorf("range %d: %U > %U", i, r.lo, r.hi)
		}
		if i > 0 && r.lo <= wide[i-1].hi {
			t.Errorf("range %d (%U) overlaps or is out of order after %U", i, r.lo, wide[i-1].hi)
		}
	}
}

func TestStringWidthAndTruncate(t *testing.T) {
	cases := []struct {
		s     string
		width int
		cut   int
		want  string
	}{
		{"hello", 5, 3, "hel"},
		{"漢字かな", 8, 5, "漢字"},
		{"漢字かな", 8, 4, "漢字"},
		{"a漢", 3, 2, "a"},
		{"e\u0301te\u0301", 3, 1, "e\u0301"},
		{"👍🏽ok", 6, 4, "👍🏽"}, // the skin-tone modifier is wide in the table
		{"", 0, 3, ""},
		{"abc", 3, 0, ""},
		{"x\u200dy", 2, 1, "x\u200d"},
	}
	for _, c := range cases {
		if got := StringWidth(c.s); got != c.width {
			t.Errorf("StringWidth(%q) = %d, want %d", c.s, got, c.width)
		}
		got := Truncate(c.s, c.cut)
		if got != c.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", c.s, c.cut, got, c.want)
		}
		if StringWidth(got) > c.cut {
			t.Errorf("Truncate(%q, %d) is wider than %d", c.s, c.cut, c.cut)
		}
	}
	if got := TruncateEllipsis("abcdef", 4); got != "abc…" {
		t.Errorf("TruncateEllipsis = %q", got)
	}
	if got := TruncateEllipsis("漢字漢字", 5); got != "漢字…" || StringWidth(got) != 5 {
		t.Errorf("TruncateEllipsis wide = %q", got)
	}
	if got := TruncateEllipsis("abc", 3); got != "abc" {
		t.Errorf("TruncateEllipsis fits = %q", got)
	}
}

func TestSanitize(t *testing.T) {
	cases := []struct{ in, want, line string }{
		{"plain", "plain", "plain"},
		{"a\x1b[31mred\x1b[0m", "a[31mred[0m", "a[31mred[0m"},
		{"title\x1b]0;pwned\x07x", "title]0;pwnedx", "title]0;pwnedx"},
		{"bell\x07 nul\x00 bs\x08 del\x7f", "bell nul bs del", "bell nul bs del"},
		{"c1\u009b31m \u0085next", "c131m next", "c131m next"},
		{"crlf\r\nline", "crlf\nline", "crlf line"},
		{"over\rwrite", "over\nwrite", "over write"},
		{"tab\there", "tab\there", "tab here"},
		{"bidi \u202Eevil\u202C \u2066iso\u2069", "bidi evil iso", "bidi evil iso"},
		{"mark \u200F\u200E ok", "mark \u200F\u200E ok", "mark \u200F\u200E ok"},
		{"bad \xff\xfe utf8", "bad \uFFFD\uFFFD utf8", "bad \uFFFD\uFFFD utf8"},
		{"漢字 é", "漢字 é", "漢字 é"},
	}
	for _, c := range cases {
		if got := Sanitize(c.in); got != c.want {
			t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := SanitizeLine(c.in); got != c.line {
			t.Errorf("SanitizeLine(%q) = %q, want %q", c.in, got, c.line)
		}
	}
}

// checkSafe fails when s holds anything a terminal would interpret.
func checkSafe(t *testing.T, what, s string) {
	t.Helper()
	for _, r := range s {
		if r == 0x1b || (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r < 0xa0) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) {
			t.Fatalf("%s: unsafe rune %U in %q", what, r, s)
		}
	}
	if strings.ContainsRune(s, '\r') {
		t.Fatalf("%s: CR in %q", what, s)
	}
}
