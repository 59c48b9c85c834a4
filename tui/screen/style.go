package screen

import "strconv"

// Color is a terminal colour: 0 is the terminal's default, 1–16 the
// sixteen ANSI colours (Black+1 … BrightWhite+1), so that the zero Style
// is plain text.
type Color uint8

// The ANSI colours.
const (
	Default Color = iota
	Black
	Red
	Green
	Yellow
	Blue
	Magenta
	Cyan
	White
	BrightBlack
	BrightRed
	BrightGreen
	BrightYellow
	BrightBlue
	BrightMagenta
	BrightCyan
	BrightWhite
)

// Attr is a set of text attributes.
type Attr uint8

// The attributes.
const (
	Bold Attr = 1 << iota
	Dim
	Italic
	Underline
	Reverse
)

// Style is how a cell looks. The zero value is the terminal's default.
type Style struct {
	FG, BG Color
	Attr   Attr
}

// Plain strips the colours and keeps the attributes: what a style becomes
// under NO_COLOR (https://no-color.org: no colour, but emphasis such as
// bold and reverse video may stay, and the cursor of a selection must).
func (s Style) Plain() Style { return Style{Attr: s.Attr} }

// appendSGR appends the select-graphic-rendition sequence that sets s from
// the default state (it always starts with a reset, so it does not depend
// on the previous style).
func (s Style) appendSGR(b []byte, noColor bool) []byte {
	if noColor {
		s = s.Plain()
	}
	b = append(b, "\x1b[0"...)
	for _, a := range [...]struct {
		a    Attr
		code string
	}{{Bold, ";1"}, {Dim, ";2"}, {Italic, ";3"}, {Underline, ";4"}, {Reverse, ";7"}} {
		if s.Attr&a.a != 0 {
			b = append(b, a.code...)
		}
	}
	b = appendColor(b, s.FG, 30, 90)
	b = appendColor(b, s.BG, 40, 100)
	return append(b, 'm')
}

func appendColor(b []byte, c Color, base, bright int) []byte {
	switch {
	case c == Default:
		return b
	case c <= White:
		b = append(b, ';')
		return strconv.AppendInt(b, int64(base+int(c-Black)), 10)
	case c <= BrightWhite:
		b = append(b, ';')
		return strconv.AppendInt(b, int64(bright+int(c-BrightBlack)), 10)
	}
	return b
}

// Theme is the styles the layouts use.
type Theme struct {
	Text, Dim, Heading, Code, CodeFence, Bullet, Quote, Bold Style
	DiffAdd, DiffRemove, DiffHunk, DiffHeader                Style
	// Syntax turns on the highlighting of fenced code blocks in the
	// languages Highlight knows, with these styles (code that is none of
	// them keeps Code).
	Syntax                                                   bool
	SyntaxKeyword, SyntaxString, SyntaxComment, SyntaxNumber Style
}

// DefaultTheme is the theme of a terminal with colours.
var DefaultTheme = Theme{
	Dim:        Style{Attr: Dim},
	Heading:    Style{FG: Cyan, Attr: Bold},
	Code:       Style{FG: Yellow},
	CodeFence:  Style{Attr: Dim},
	Bullet:     Style{FG: Cyan},
	Quote:      Style{Attr: Dim | Italic},
	Bold:       Style{Attr: Bold},
	DiffAdd:    Style{FG: Green},
	DiffRemove: Style{FG: Red},
	DiffHunk:   Style{FG: Cyan},
	DiffHeader: Style{Attr: Bold},

	SyntaxKeyword: Style{FG: Magenta, Attr: Bold},
	SyntaxString:  Style{FG: Green},
	SyntaxComment: Style{Attr: Dim | Italic},
	SyntaxNumber:  Style{FG: Cyan},
}
