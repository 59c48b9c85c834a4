package screen

import (
	"unicode"
	"unicode/utf8"
)

// runeRange is an inclusive range of code points.
type runeRange struct{ lo, hi rune }

// wide lists the code points whose East_Asian_Width property is W (wide)
// or F (fullwidth) in the Unicode Character Database (EastAsianWidth.txt,
// Unicode 16.0), merged into sorted, non-overlapping ranges. A terminal
// gives each of them two columns. Unassigned code points inside the CJK
// blocks and the planes 2 and 3 are W by the UCD's default and are
// included.
var wide = [...]runeRange{
	{0x1100, 0x115F}, // Hangul Jamo initial consonants
	{0x231A, 0x231B}, // watch, hourglass
	{0x2329, 0x232A}, // angle brackets
	{0x23E9, 0x23EC},
	{0x23F0, 0x23F0},
	{0x23F3, 0x23F3},
	{0x25FD, 0x25FE},
	{0x2614, 0x2615},
	{0x2630, 0x2637}, // trigrams (W since 16.0)
	{0x2648, 0x2653}, // zodiac
	{0x267F, 0x267F},
	{0x268A, 0x268F}, // monograms and digrams (W since 16.0)
	{0x2693, 0x2693},
	{0x26A1, 0x26A1},
	{0x26AA, 0x26AB},
	{0x26BD, 0x26BE},
	{0x26C4, 0x26C5},
	{0x26CE, 0x26CE},
	{0x26D4, 0x26D4},
	{0x26EA, 0x26EA},
	{0x26F2, 0x26F3},
	{0x26F5, 0x26F5},
	{0x26FA, 0x26FA},
	{0x26FD, 0x26FD},
	{0x2705, 0x2705},
	{0x270A, 0x270B},
	{0x2728, 0x2728},
	{0x274C, 0x274C},
	{0x274E, 0x274E},
	{0x2753, 0x2755},
	{0x2757, 0x2757},
	{0x2795, 0x2797},
	{0x27B0, 0x27B0},
	{0x27BF, 0x27BF},
	{0x2B1B, 0x2B1C},
	{0x2B50, 0x2B50},
	{0x2B55, 0x2B55},
	{0x2E80, 0x2E99}, // CJK radicals supplement
	{0x2E9B, 0x2EF3},
	{0x2F00, 0x2FD5}, // Kangxi radicals
	{0x2FF0, 0x303E}, // ideographic description, CJK symbols; 3000 is F
	{0x3041, 0x3096}, // Hiragana
	{0x3099, 0x30FF}, // Katakana
	{0x3105, 0x312F}, // Bopomofo
	{0x3131, 0x318E}, // Hangul compatibility Jamo
	{0x3190, 0x31E5},
	{0x31EF, 0x321E},
	{0x3220, 0x3247},
	{0x3250, 0xA48C}, // enclosed CJK … CJK unified ideographs … Yi syllables
	{0xA490, 0xA4C6}, // Yi radicals
	{0xA960, 0xA97C}, // Hangul Jamo extended-A
	{0xAC00, 0xD7A3}, // Hangul syllables
	{0xF900, 0xFAFF}, // CJK compatibility ideographs
	{0xFE10, 0xFE19}, // vertical forms
	{0xFE30, 0xFE52}, // CJK compatibility forms, small forms
	{0xFE54, 0xFE66},
	{0xFE68, 0xFE6B},
	{0xFF01, 0xFF60}, // fullwidth forms (F)
	{0xFFE0, 0xFFE6}, // fullwidth signs (F)
	{0x16FE0, 0x16FE4},
	{0x16FF0, 0x16FF1},
	{0x17000, 0x187F7}, // Tangut
	{0x18800, 0x18CD5}, // Tangut components, Khitan small script
	{0x18CFF, 0x18D08},
	{0x1AFF0, 0x1AFF3}, // Kana extended-B
	{0x1AFF5, 0x1AFFB},
	{0x1AFFD, 0x1AFFE},
	{0x1B000, 0x1B122}, // Kana supplement, extended-A
	{0x1B132, 0x1B132},
	{0x1B150, 0x1B152},
	{0x1B155, 0x1B155},
	{0x1B164, 0x1B167},
	{0x1B170, 0x1B2FB}, // Nushu
	{0x1D300, 0x1D356}, // Tai Xuan Jing symbols (W since 16.0)
	{0x1D360, 0x1D376}, // counting rod numerals (W since 16.0)
	{0x1F004, 0x1F004},
	{0x1F0CF, 0x1F0CF},
	{0x1F18E, 0x1F18E},
	{0x1F191, 0x1F19A},
	{0x1F200, 0x1F202},
	{0x1F210, 0x1F23B},
	{0x1F240, 0x1F248},
	{0x1F250, 0x1F251},
	{0x1F260, 0x1F265},
	{0x1F300, 0x1F320}, // pictographs
	{0x1F32D, 0x1F335},
	{0x1F337, 0x1F37C},
	{0x1F37E, 0x1F393},
	{0x1F3A0, 0x1F3CA},
	{0x1F3CF, 0x1F3D3},
	{0x1F3E0, 0x1F3F0},
	{0x1F3F4, 0x1F3F4},
	{0x1F3F8, 0x1F43E},
	{0x1F440, 0x1F440},
	{0x1F442, 0x1F4FC},
	{0x1F4FF, 0x1F53D},
	{0x1F54B, 0x1F54E},
	{0x1F550, 0x1F567},
	{0x1F57A, 0x1F57A},
	{0x1F595, 0x1F596},
	{0x1F5A4, 0x1F5A4},
	{0x1F5FB, 0x1F64F}, // emoticons
	{0x1F680, 0x1F6C5}, // transport and map symbols
	{0x1F6CC, 0x1F6CC},
	{0x1F6D0, 0x1F6D2},
	{0x1F6D5, 0x1F6D7},
	{0x1F6DC, 0x1F6DF},
	{0x1F6EB, 0x1F6EC},
	{0x1F6F4, 0x1F6FC},
	{0x1F7E0, 0x1F7EB},
	{0x1F7F0, 0x1F7F0},
	{0x1F90C, 0x1F93A}, // supplemental symbols and pictographs
	{0x1F93C, 0x1F945},
	{0x1F947, 0x1F9FF},
	{0x1FA70, 0x1FA7C}, // symbols and pictographs extended-A
	{0x1FA80, 0x1FA89},
	{0x1FA8F, 0x1FAC6},
	{0x1FACE, 0x1FADC},
	{0x1FADF, 0x1FAE9},
	{0x1FAF0, 0x1FAF8},
	{0x20000, 0x2FFFD}, // plane 2 (W by default)
	{0x30000, 0x3FFFD}, // plane 3 (W by default)
}

// isWide reports whether r is in the wide table (binary search).
func isWide(r rune) bool {
	if r < wide[0].lo {
		return false
	}
	lo, hi := 0, len(wide)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch {
		case r < wide[m].lo:
			hi = m
		case r > wide[m].hi:
			lo = m + 1
		default:
			return true
		}
	}
	return false
}

// isZeroWidth reports whether r takes no column of its own: combining
// marks (general categories Mn and Me, which include the variation
// selectors FE00–FE0F and E0100–E01EF), format characters (Cf: zero width
// joiner and non-joiner, bidi marks, the soft hyphen, tag characters), the
// Hangul medial vowels and final consonants that join the preceding
// initial consonant (1160–11FF, D7B0–D7FF), and control characters, which
// never reach a frame unsanitised.
func isZeroWidth(r rune) bool {
	switch {
	case r < 0x20 || (r >= 0x7F && r < 0xA0):
		return true
	case r < 0x300:
		return r == 0xAD
	case r >= 0x1160 && r <= 0x11FF, r >= 0xD7B0 && r <= 0xD7FF:
		return true
	case r == 0x200B: // zero width space (Cf in older data, Zs-like in use)
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf)
}

// RuneWidth returns the number of columns r takes: 0 for combining and
// format characters and controls, 2 for East Asian wide and fullwidth
// characters, 1 otherwise (ambiguous-width characters are narrow, as in
// every non-CJK locale). An invalid rune (utf8.RuneError) takes 1: it is
// shown as U+FFFD.
func RuneWidth(r rune) int {
	switch {
	case r >= 0x20 && r < 0x7F:
		return 1 // the common case first
	case isZeroWidth(r):
		return 0
	case isWide(r):
		return 2
	}
	return 1
}

// StringWidth returns the display width of s: the sum of its runes'
// widths. Tabs and newlines count 0 here; layout expands them first.
func StringWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7F {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += RuneWidth(r)
		i += size
	}
	return n
}

// Truncate returns the longest prefix of s whose width is at most w,
// never splitting a wide character or separating a character from the
// combining marks that follow it.
func Truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		rw := RuneWidth(r)
		if n+rw > w {
			return s[:i]
		}
		n += rw
		i += size
	}
	return s
}

// TruncateEllipsis is Truncate that marks a cut with "…" (the result's
// width is still at most w).
func TruncateEllipsis(s string, w int) string {
	if StringWidth(s) <= w {
		return s
	}
	if w <= 1 {
		return Truncate("…", w)
	}
	return Truncate(s, w-1) + "…"
}
