// Package jsonlex is the lexical layer of JSON text (RFC 8259): white
// space, the literals true, false and null, numbers, strings with their
// escapes, surrogate pairs and UTF-8, and the brackets and commas around
// the members of an array or object. The project's three JSON readers
// share it, so that one piece of code decides what a JSON token is:
// internal/strictjson (documents from outside, parsed into a tree with
// positions), internal/jsonscan (the providers' stream chunks, pulled
// without allocating) and the strict single pass of mcp/jsonrpc.
//
// Each reader keeps its own structure, limits and diagnostics. A function
// here returns the offset where it stopped and, for malformed input, a
// Fault that names what is wrong at that offset; the reader words the
// error and says where (a line and column, or a byte offset). String takes
// Rules, the checks beyond the grammar that a reader's contract asks for.
//
// The functions read string and []byte alike (jsonscan reads strings, the
// strict decoders byte slices); only Unescape allocates, once, for its
// result. The small ones (Space, Literal, PlainString, Open, Next) are
// inlined into the readers, so that the common token costs no call.
//
// Imports: standard library only (CONTRIBUTING.md, "Import direction").
package jsonlex

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Text is the input of every function.
type Text interface{ string | []byte }

// Fault names what is malformed at an offset.
type Fault uint8

// The faults. None is the zero value: no fault.
const (
	None               Fault = iota
	EndOfInput               // the input ends where a comma or bracket was expected
	Unexpected               // a byte that is neither a comma nor the closing bracket
	BadLiteral               // t, f or n that does not begin true, false or null
	NoDigits                 // a number without a digit where its integer part begins
	NoFractionDigits         // no digit after a number's '.'
	NoExponentDigits         // no digit in a number's exponent
	Unterminated             // the input ends inside a string
	UnterminatedEscape       // the input ends right after a backslash
	ControlChar              // a byte below 0x20 in a string, unescaped
	BadEscape                // a backslash before a byte that begins no escape
	BadHex                   // \u without four hexadecimal digits
	BadLowHex                // PairSurrogates: a high surrogate followed by \u without four hexadecimal digits
	LoneSurrogate            // PairSurrogates: an escaped surrogate that is not half of a pair
	BadUTF8                  // CheckUTF8: a byte that is not part of valid UTF-8
)

// String describes the fault in the words the strict JSON-RPC decoder
// uses; the other readers word some faults their own way.
func (f Fault) String() string {
	switch f {
	case None:
		return "no fault"
	case EndOfInput:
		return "unexpected end of input"
	case Unexpected:
		return "unexpected character"
	case BadLiteral:
		return "invalid literal"
	case NoDigits:
		return "invalid number"
	case NoFractionDigits:
		return "invalid number: digit expected after '.'"
	case NoExponentDigits:
		return "invalid number: digit expected in exponent"
	case Unterminated:
		return "unterminated string"
	case UnterminatedEscape:
		return "unterminated escape"
	case ControlChar:
		return "control character in string"
	case BadEscape:
		return "invalid escape character"
	case BadHex:
		return "invalid \\u escape"
	case BadLowHex, LoneSurrogate:
		// A malformed escape where the low half belongs leaves the high
		// half unpaired.
		return "unpaired surrogate in string escape"
	case BadUTF8:
		return "invalid UTF-8 in string"
	}
	return "unknown fault"
}

// Space returns the offset of the first byte at or after i that is not
// white space (RFC 8259 §2: space, tab, line feed, carriage return).
func Space[T Text](d T, i int) int {
	for ; i < len(d); i++ {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return i
		}
	}
	return i
}

// Literal reads the literal that the byte at i begins (true, false or
// null) and returns the offset after it; on BadLiteral, i.
func Literal[T Text](d T, i int) (int, Fault) {
	if i >= len(d) {
		return i, BadLiteral
	}
	var word string
	switch d[i] {
	case 't':
		word = "true"
	case 'f':
		word = "false"
	case 'n':
		word = "null"
	default:
		return i, BadLiteral
	}
	if len(d)-i < len(word) {
		return i, BadLiteral
	}
	for k := 1; k < len(word); k++ {
		if d[i+k] != word[k] {
			return i, BadLiteral
		}
	}
	return i + len(word), None
}

// Number reads the number at i (RFC 8259 §6: an optional minus, an
// integer part without leading zeros, an optional fraction and exponent)
// and returns the offset after it. On a fault (NoDigits, NoFractionDigits,
// NoExponentDigits) the offset is where a digit was expected.
func Number[T Text](d T, i int) (int, Fault) {
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = digits(d, i+1)
	default:
		return i, NoDigits
	}
	if i < len(d) && d[i] == '.' {
		j := digits(d, i+1)
		if j == i+1 {
			return j, NoFractionDigits
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := digits(d, i)
		if j == i {
			return j, NoExponentDigits
		}
		i = j
	}
	return i, None
}

func digits[T Text](d T, i int) int {
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	return i
}

// Rules are the checks String makes beyond the grammar. The zero value
// reads as encoding/json does: invalid UTF-8 and escaped surrogates that
// are not half of a pair pass, for the reader to replace (Unescape turns
// such a surrogate into U+FFFD).
type Rules uint8

const (
	// CheckUTF8 refuses invalid UTF-8 in a string: BadUTF8 at the first
	// byte that is not part of a valid encoding.
	CheckUTF8 Rules = 1 << iota
	// PairSurrogates refuses an escaped surrogate that is not half of a
	// pair, which no UTF-8 text can hold (RFC 8259 §8.2 leaves its meaning
	// open; I-JSON, RFC 7493 §2.1, forbids it): LoneSurrogate after its
	// escape, or BadLowHex at a malformed escape where the low half
	// belongs.
	PairSurrogates
)

// Content says what a string holds, so that a reader does only the work
// its content needs.
type Content uint8

const (
	Escaped  Content = 1 << iota // a backslash: the text needs Unescape
	NonASCII                     // a byte of 0x80 or more
)

// plain marks the bytes a string holds as they are: ASCII from the space
// up, but the quote and the backslash. A table lookup decides the common
// case in one load.
var plain = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// PlainString reads the string whose opening quote is at i when its
// content is plain: ASCII without control characters and escapes, as most
// keys and short values are. It returns the offset after the closing quote, or -1 for any
// other string, which String then reads. It is small enough to be inlined,
// so a reader on a hot path decides the common string without a call.
func PlainString[T Text](d T, i int) int {
	j := i + 1
	for j < len(d) && plain[d[j]] {
		j++
	}
	if j < len(d) && d[j] == '"' {
		return j + 1
	}
	return -1
}

// shortEscape marks the bytes that follow a backslash in the escapes of
// two bytes (RFC 8259 §7).
var shortEscape = [256]bool{'"': true, '\\': true, '/': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true}

// String reads the string whose opening quote is at i and returns the
// offset after its closing quote and what its content holds. Control
// characters must be escaped and every escape must be one of RFC 8259 §7;
// rules add the checks above. On a fault the offset is where it is:
// Unterminated at the end of the input, ControlChar and BadUTF8 at the
// byte, UnterminatedEscape, BadEscape and BadHex at the backslash,
// BadLowHex and LoneSurrogate as PairSurrogates says.
func String[T Text](d T, i int, rules Rules) (int, Content, Fault) {
	var c Content
	for j := i + 1; j < len(d); {
		b := d[j]
		switch {
		case plain[b]:
			j++
		case b == '"':
			return j + 1, c, None
		case b == '\\':
			c |= Escaped
			if j+1 < len(d) && shortEscape[d[j+1]] {
				j += 2 // the common escapes without a call
				continue
			}
			var f Fault
			if j, f = escape(d, j, rules); f != None {
				return j, c, f
			}
		case b < 0x20:
			return j, c, ControlChar
		case rules&CheckUTF8 == 0:
			c |= NonASCII
			j++
		default:
			c |= NonASCII
			r, size := decodeRune(d, j)
			if r == utf8.RuneError && size == 1 {
				return j, c, BadUTF8
			}
			j += size
		}
	}
	return len(d), c, Unterminated
}

// escape reads the escape whose backslash is at j and returns the offset
// after it.
func escape[T Text](d T, j int, rules Rules) (int, Fault) {
	if j+1 >= len(d) {
		return j, UnterminatedEscape
	}
	switch d[j+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return j + 2, None
	case 'u':
	default:
		return j, BadEscape
	}
	r, ok := hex4(d, j+2)
	if !ok {
		return j, BadHex
	}
	j += 6
	if rules&PairSurrogates == 0 || !utf16.IsSurrogate(r) {
		return j, None
	}
	// A high half (D800–DBFF) must be followed by an escaped low half
	// (DC00–DFFF); a low half alone pairs with nothing.
	if r >= 0xDC00 || j+1 >= len(d) || d[j] != '\\' || d[j+1] != 'u' {
		return j, LoneSurrogate
	}
	lo, ok := hex4(d, j+2)
	switch {
	case !ok:
		return j, BadLowHex
	case lo < 0xDC00 || lo > 0xDFFF:
		return j, LoneSurrogate
	}
	return j + 6, None
}

// hex4 reads the four hexadecimal digits at i.
func hex4[T Text](d T, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	var r rune
	for k := i; k < i+4; k++ {
		c := d[k]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// decodeRune and write pick the standard library's function for the
// input's type; the conversion to any does not escape, so it costs no
// allocation.
func decodeRune[T Text](d T, i int) (rune, int) {
	switch d := any(d).(type) {
	case string:
		return utf8.DecodeRuneInString(d[i:])
	case []byte:
		return utf8.DecodeRune(d[i:])
	}
	panic("unreachable")
}

func write[T Text](b *strings.Builder, s T) {
	switch s := any(s).(type) {
	case string:
		b.WriteString(s)
	case []byte:
		b.Write(s)
	}
}

// Unescape decodes the content of a string that String accepted (the text
// between its quotes). An escaped surrogate that is not half of a pair
// becomes U+FFFD, as encoding/json decodes it; bytes that are not valid
// UTF-8 are copied as they are, for the reader to refuse or replace. The
// result is one allocation.
func Unescape[T Text](s T) string {
	var b strings.Builder
	// Decoding never lengthens: an escape of 2, 6 or 12 bytes becomes at
	// most 1, 3 or 4.
	b.Grow(len(s))
	run := 0 // start of the bytes copied as they are
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			i++
			continue
		}
		write(&b, s[run:i])
		switch e := s[i+1]; e {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, _ := hex4(s, i+2)
			i += 6
			if utf16.IsSurrogate(r) {
				lo, ok := hex4(s, i+2)
				if ok && i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if p := utf16.DecodeRune(r, lo); p != utf8.RuneError {
						r = p
						i += 6
					}
				}
				if utf16.IsSurrogate(r) {
					r = utf8.RuneError
				}
			}
			b.WriteRune(r)
			run = i
			continue
		default: // '"', '\\', '/'
			b.WriteByte(e)
		}
		i += 2
		run = i
	}
	write(&b, s[run:])
	return b.String()
}

// Open reads the bracket at i that opens an array or object and the white
// space after it, and returns the offset after them; when the closing
// bracket closer follows at once (an empty array or object), empty is
// true and the offset is after it.
func Open[T Text](d T, i int, closer byte) (end int, empty bool) {
	i = Space(d, i+1)
	if i < len(d) && d[i] == closer {
		return i + 1, true
	}
	return i, false
}

// Next reads what follows a member of an array or object: white space,
// then a comma (more is true) or the closing bracket closer, and returns
// the offset after that byte. On a fault (EndOfInput, or Unexpected for
// any other byte) the offset is where it is.
func Next[T Text](d T, i int, closer byte) (end int, more bool, f Fault) {
	i = Space(d, i)
	switch {
	case i >= len(d):
		return i, false, EndOfInput
	case d[i] == ',':
		return i + 1, true, None
	case d[i] == closer:
		return i + 1, false, None
	}
	return i, false, Unexpected
}
