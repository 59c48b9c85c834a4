package screen

import (
	"strings"
	"testing"
)

func TestRuneWidth(t *testing.T) {
	cases := []struct {
		name  string
		runes []rune
		want  int
	}{
		{"printable ASCII", []rune{'a', ' ', '~'}, 1},
		{"C0 and C1 controls and DEL", []rune{0, '\t', 0x1b, 0x7f, 0x85, 0x9b}, 0},
		{"Latin, Greek and Cyrillic letters", []rune{'é', 'ß', 'Ω', 'я'}, 1},
		{"a combining accent (Mn)", []rune{0x0301}, 0},
		{"a combining enclosing circle (Me)", []rune{0x20DD}, 0},
		{"the zero width joiner (Cf)", []rune{0x200D}, 0},
		{"the zero width space", []rune{0x200B}, 0},
		{"variation selectors", []rune{0xFE0F, 0xE0100}, 0},
		{"the soft hyphen", []rune{0x00AD}, 0},
		{"a Hangul medial vowel", []rune{0x1160}, 0},
		{"Hangul initial consonants", []rune{0x1100, 0x115F}, 2},
		{"ideographs, kana and Hangul syllables", []rune{'漢', '字', 'あ', 'カ', '한'}, 2},
		{"the ideographic space (F)", []rune{0x3000}, 2},
		{"the half fill space (N)", []rune{0x303F}, 1},
		{"a fullwidth letter (F)", []rune{0xFF21}, 2},
		{"a halfwidth ideographic full stop (H)", []rune{0xFF61}, 1},
		{"a fullwidth sign", []rune{0xFFE0}, 2},
		{"emoji", []rune{0x1F600, 0x1F680, 0x1F9FF}, 2},
		{"a symbol with text presentation by default (N)", []rune{0x1F321}, 1},
		{"Unicode 16 additions", []rune{0x2630, 0x4DC0}, 2},
		{"the second and third planes", []rune{0x20000, 0x2FFFD, 0x3FFFD}, 2},
		{"the fourth plane is narrow", []rune{0x40000}, 1},
		{"the watch, emoji by default, is wide", []rune{0x231A}, 2},
		{"the corner after the hourglass is narrow", []rune{0x231C}, 1},
		{"an ambiguous star is narrow", []rune{0x2605}, 1},
		{"the last code point", []rune{0x10FFFF}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, r := range c.runes {
				if got := RuneWidth(r); got != c.want {
					t.Errorf("RuneWidth(%U) = %d, want %d", r, got, c.want)
				}
			}
		})
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
		name  string
		s     string
		width int
		cut   int
		want  string
	}{
		{"ASCII", "hello", 5, 3, "hel"},
		{"a wide character that does not fit is dropped", "漢字かな", 8, 5, "漢字"},
		{"wide characters that fit exactly", "漢字かな", 8, 4, "漢字"},
		{"a wide character after a narrow one", "a漢", 3, 2, "a"},
		{"a combining accent stays with its letter", "e\u0301te\u0301", 3, 1, "e\u0301"},
		{"a skin-tone modifier is wide", "👍🏽ok", 6, 4, "👍🏽"},
		{"empty", "", 0, 3, ""},
		{"a cut at zero", "abc", 3, 0, ""},
		{"a zero width joiner stays with what it follows", "x\u200dy", 2, 1, "x\u200d"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
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
		})
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
	cases := []struct {
		name           string
		in, want, line string
	}{
		{"plain text", "plain", "plain", "plain"},
		{"an escape sequence loses its escape", "a\x1b[31mred\x1b[0m", "a[31mred[0m", "a[31mred[0m"},
		{"a title sequence loses its control characters", "title\x1b]0;pwned\x07x", "title]0;pwnedx", "title]0;pwnedx"},
		{"C0 controls and DEL are dropped", "bell\x07 nul\x00 bs\x08 del\x7f", "bell nul bs del", "bell nul bs del"},
		{"C1 controls are dropped", "c1\u009b31m \u0085next", "c131m next", "c131m next"},
		{"CRLF is a line break", "crlf\r\nline", "crlf\nline", "crlf line"},
		{"a lone CR is a line break", "over\rwrite", "over\nwrite", "over write"},
		{"a tab stays, and is a space on one line", "tab\there", "tab\there", "tab here"},
		{"bidi overrides and isolates are dropped", "bidi \u202Eevil\u202C \u2066iso\u2069", "bidi evil iso", "bidi evil iso"},
		{"directional marks stay", "mark \u200F\u200E ok", "mark \u200F\u200E ok", "mark \u200F\u200E ok"},
		{"invalid UTF-8 becomes U+FFFD", "bad \xff\xfe utf8", "bad \uFFFD\uFFFD utf8", "bad \uFFFD\uFFFD utf8"},
		{"wide and accented text stays", "漢字 é", "漢字 é", "漢字 é"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Sanitize(c.in); got != c.want {
				t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
			}
			if got := SanitizeLine(c.in); got != c.line {
				t.Errorf("SanitizeLine(%q) = %q, want %q", c.in, got, c.line)
			}
		})
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
