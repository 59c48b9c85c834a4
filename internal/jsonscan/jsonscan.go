// Package jsonscan is a small pull scanner for JSON text, for decoders on
// a hot path (the model providers' stream chunks, docs/providers.md) where
// encoding/json's reflection costs more than the rest of the pipeline. The
// caller walks the document it expects and skips the rest; strings without
// escapes come back as substrings of the input, so a chunk decodes with
// few or no allocations.
//
// It checks the JSON grammar of everything it reads or skips (the tokens
// through internal/jsonlex, which the strict decoders share), bounds
// nesting (MaxDepth), and after the first error every call returns a zero
// value; Err reports the error. It reads strings as encoding/json does:
// invalid UTF-8 and escaped surrogates that do not pair become U+FFFD. It
// is not for security-relevant documents (use internal/strictjson):
// duplicate keys are the caller's business.
//
// Imports: the standard library and internal/jsonlex (CONTRIBUTING.md,
// "Import direction").
package jsonscan

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"agent/internal/jsonlex"
)

// MaxDepth bounds the nesting of arrays and objects.
const MaxDepth = 64

// ErrSyntax is wrapped by every error of a malformed document.
var ErrSyntax = errors.New("jsonscan: invalid JSON")

// Kind is the type of the next value.
type Kind uint8

// Kinds of values.
const (
	Invalid Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
)

// Scanner reads one JSON document. The zero value is not ready: call
// Reset. It is not safe for concurrent use.
type Scanner struct {
	s     string
	i     int
	depth int
	first uint64 // bit d-1: no member read yet at depth d
	arr   uint64 // bit d-1: depth d is an array
	err   error
}

// Reset starts scanning s.
func (sc *Scanner) Reset(s string) { *sc = Scanner{s: s} }

// Err returns the first error, or nil.
func (sc *Scanner) Err() error { return sc.err }

// Done checks that only white space follows the document and returns the
// first error.
func (sc *Scanner) Done() error {
	sc.ws()
	if sc.err == nil && sc.i != len(sc.s) {
		sc.fail("data after the document")
	}
	return sc.err
}

func (sc *Scanner) fail(what string) {
	if sc.err == nil {
		sc.err = fmt.Errorf("%w: %s at offset %d", ErrSyntax, what, sc.i)
		sc.i = len(sc.s)
	}
}

func (sc *Scanner) ws() { sc.i = jsonlex.Space(sc.s, sc.i) }

// Peek returns the kind of the next value without consuming it.
func (sc *Scanner) Peek() Kind {
	sc.ws()
	if sc.err != nil || sc.i >= len(sc.s) {
		return Invalid
	}
	switch c := sc.s[sc.i]; {
	case c == '{':
		return Object
	case c == '[':
		return Array
	case c == '"':
		return String
	case c == 'n':
		return Null
	case c == 't' || c == 'f':
		return Bool
	case c == '-' || c >= '0' && c <= '9':
		return Number
	}
	return Invalid
}

// literal consumes the literal that begins at sc.i.
func (sc *Scanner) literal() bool {
	end, f := jsonlex.Literal(sc.s, sc.i)
	if f != jsonlex.None {
		sc.fail("invalid literal")
		return false
	}
	sc.i = end
	return true
}

// Null consumes a null and reports whether the next value was one.
func (sc *Scanner) Null() bool {
	if sc.Peek() == Null {
		return sc.literal()
	}
	return false
}

// Object consumes the '{' of an object and reports whether one began; a
// null is consumed too and reports false. Read the members with More and
// Key.
func (sc *Scanner) Object() bool { return sc.open(Object, '{') }

// Array consumes the '[' of an array, like Object. Read the elements with
// More.
func (sc *Scanner) Array() bool { return sc.open(Array, '[') }

func (sc *Scanner) open(k Kind, c byte) bool {
	switch sc.Peek() {
	case k:
	case Null:
		sc.literal()
		return false
	default:
		sc.fail("want " + string(c))
		return false
	}
	if sc.depth >= MaxDepth {
		sc.fail("nesting too deep")
		return false
	}
	sc.i++
	sc.depth++
	sc.first |= 1 << (sc.depth - 1)
	if k == Array {
		sc.arr |= 1 << (sc.depth - 1)
	} else {
		sc.arr &^= 1 << (sc.depth - 1)
	}
	return true
}

// More reports whether the innermost open object or array has another
// member, consuming the separating comma; at the end it consumes the
// closing bracket and returns false.
func (sc *Scanner) More() bool {
	sc.ws()
	if sc.err != nil || sc.depth == 0 {
		return false
	}
	if sc.i >= len(sc.s) {
		sc.fail("unexpected end")
		return false
	}
	c := sc.s[sc.i]
	bit := uint64(1) << (sc.depth - 1)
	if c == '}' || c == ']' {
		if (c == ']') != (sc.arr&bit != 0) {
			sc.fail("mismatched closing bracket")
			return false
		}
		sc.i++
		sc.depth--
		return false
	}
	if sc.first&bit != 0 {
		sc.first &^= bit
		return true
	}
	if c != ',' {
		sc.fail("want , or closing bracket")
		return false
	}
	sc.i++
	return true
}

// Key reads a member's name and its colon.
func (sc *Scanner) Key() string {
	// A name is a string (RFC 8259 §4); String would read null as "".
	if sc.Peek() == Null {
		sc.fail("want a string")
		return ""
	}
	k := sc.String()
	sc.ws()
	if sc.err == nil {
		if sc.i >= len(sc.s) || sc.s[sc.i] != ':' {
			sc.fail("want :")
			return ""
		}
		sc.i++
	}
	return k
}

// String reads a string value; null reads as "".
func (sc *Scanner) String() string {
	switch sc.Peek() {
	case String:
	case Null:
		sc.literal()
		return ""
	default:
		sc.fail("want a string")
		return ""
	}
	end, c, f := jsonlex.PlainString(sc.s, sc.i), jsonlex.Content(0), jsonlex.None
	if end < 0 {
		end, c, f = jsonlex.String(sc.s, sc.i, 0)
	}
	switch f {
	case jsonlex.None:
	case jsonlex.Unterminated, jsonlex.UnterminatedEscape:
		// Reported at the opening quote.
		sc.fail("unterminated string")
		return ""
	default:
		sc.i = end
		sc.fail(stringFaults[f])
		return ""
	}
	// Without escapes the value is a substring of the input: no
	// allocation, and most keys and values are ASCII, so no UTF-8 check.
	v := sc.s[sc.i+1 : end-1]
	sc.i = end
	if c&jsonlex.Escaped != 0 {
		v = jsonlex.Unescape(v)
	}
	if c&jsonlex.NonASCII != 0 && !utf8.ValidString(v) {
		return fixUTF8(v)
	}
	return v
}

// stringFaults words the faults jsonlex.String reports without rules.
var stringFaults = [...]string{
	jsonlex.ControlChar: "control character in a string",
	jsonlex.BadEscape:   "invalid escape",
	jsonlex.BadHex:      "invalid \\u escape",
}

// fixUTF8 replaces each byte of invalid UTF-8 with U+FFFD, as
// encoding/json does.
func fixUTF8(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// number consumes a number and returns its text.
func (sc *Scanner) number() string {
	end, f := jsonlex.Number(sc.s, sc.i)
	if f != jsonlex.None {
		sc.fail("invalid number")
		return ""
	}
	start := sc.i
	sc.i = end
	return sc.s[start:end]
}

// Int reads a number as an int (a fraction is truncated; out-of-range
// values clamp); null reads as 0.
func (sc *Scanner) Int() int {
	switch sc.Peek() {
	case Number:
	case Null:
		sc.literal()
		return 0
	default:
		sc.fail("want a number")
		return 0
	}
	txt := sc.number()
	if n, err := strconv.Atoi(txt); err == nil {
		return n
	}
	f, _ := strconv.ParseFloat(txt, 64)
	switch {
	case f >= 1<<62:
		return 1 << 62
	case f <= -(1 << 62):
		return -(1 << 62)
	}
	return int(f)
}

// Raw reads any value and returns its text.
func (sc *Scanner) Raw() string {
	sc.ws()
	start := sc.i
	sc.Skip()
	if sc.err != nil {
		return ""
	}
	return sc.s[start:sc.i]
}

// Skip reads any value and discards it, checking its grammar.
func (sc *Scanner) Skip() {
	switch sc.Peek() {
	case Object:
		if sc.Object() {
			for sc.More() {
				sc.Key()
				sc.Skip()
			}
		}
	case Array:
		if sc.Array() {
			for sc.More() {
				sc.Skip()
			}
		}
	case String:
		_ = sc.String()
	case Number:
		sc.number()
	case Null:
		sc.literal()
	case Bool:
		sc.literal()
	default:
		if sc.i >= len(sc.s) {
			sc.fail("unexpected end")
		} else {
			sc.fail("unexpected character")
		}
	}
}
