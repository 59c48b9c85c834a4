package screen

import (
	"strings"
	"unicode/utf8"
)

// Sanitize makes outside text (from models, tools, servers, files) safe to
// show (docs/reference/cli.md, "Output streams"): it removes ESC and every
// other C0 control but tab and newline, DEL and the C1 controls
// (U+0080–U+009F), turns CR LF into LF and a lone CR into LF (a CR would
// move the cursor back over what is already drawn), replaces invalid UTF-8
// with U+FFFD, and neutralises the bidi embeddings, overrides and isolates
// (U+202A– U+202E, U+2066–U+2069) by removing them, so that text cannot
// reorder what the terminal shows around it. The result is valid UTF-8.
func Sanitize(s string) string {
	if clean(s, true) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\r':
			if i < len(s) && s[i] == '\n' {
				continue // the LF follows
			}
			b.WriteByte('\n')
		case r == '\t' || r == '\n':
			b.WriteRune(r)
		case UnsafeRune(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// SanitizeLine is Sanitize for text shown on one line (a tool argument, a
// status field, a notice): line breaks and tabs become spaces.
func SanitizeLine(s string) string {
	if clean(s, false) {
		return s
	}
	s = Sanitize(s)
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

// UnsafeRune reports the runes Sanitize removes: controls (tab and
// newline included; Sanitize keeps those two before it asks), DEL, C1, and
// the bidi formatting characters that embed, override or isolate.
func UnsafeRune(r rune) bool {
	return r < 0x20 || (r >= 0x7F && r < 0xA0) ||
		(r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// clean reports whether s needs no change: valid UTF-8 with no unsafe
// rune and no CR (and, unless multiline, no tab or newline).
func clean(s string, multiline bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7F {
			i++
			continue
		}
		if c == '\n' || c == '\t' {
			if !multiline {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || UnsafeRune(r) {
			return false
		}
		i += size
	}
	return true
}
