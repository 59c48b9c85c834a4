package jsonrpc

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"agent/internal/quote"
)

// scanner validates one JSON text in a single pass, without building a tree:
// RFC 8259 syntax, valid UTF-8 (escaped surrogates must pair), bounded
// nesting, and no two keys of one object that are equal or equal under
// simple case folding. The case rule exists because the typed payloads
// (MCP results, parameters) are decoded with encoding/json, which matches
// keys to fields case-insensitively: {"isError":false,"IsError":true} would
// otherwise mean one thing to us and another to a peer.
type scanner struct {
	data     []byte
	pos      int
	maxDepth int
}

// syntaxError is a malformed-JSON report with its byte offset.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("offset %d: %s", e.off, e.msg) }

func (s *scanner) errorf(format string, args ...any) error {
	return &syntaxError{off: s.pos, msg: fmt.Sprintf(format, args...)}
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return
		}
	}
}

// value validates the value at s.pos and leaves s.pos after it.
func (s *scanner) value(depth int) error {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return s.errorf("unexpected end of input")
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object(depth+1, nil)
	case c == '[':
		return s.array(depth + 1)
	case c == '"':
		_, _, err := s.str(false)
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	default:
		return s.errorf("invalid character %q looking for a value", quote.V(c))
	}
}

func (s *scanner) literal(word string) error {
	if len(s.data)-s.pos < len(word) || string(s.data[s.pos:s.pos+len(word)]) != word {
		return s.errorf("invalid literal")
	}
	s.pos += len(word)
	return nil
}

// member receives each key of the object being scanned and the span of its
// value; only the top level of a message uses it.
type member func(key string, start, end int) error

// foldLinearMax is the member count up to which duplicate keys are found by
// comparing with every earlier key; larger objects use a map so that a
// hostile object with many keys costs linear time, not quadratic.
const foldLinearMax = 16

func (s *scanner) object(depth int, each member) error {
	if depth > s.maxDepth {
		return s.errorf("nesting deeper than %d", s.maxDepth)
	}
	s.pos++ // '{'
	var keys []string
	var folded map[string]struct{}
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	for {
		s.skipSpace()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return s.errorf("expected a string key")
		}
		keyAt := s.pos
		key, _, err := s.str(true)
		if err != nil {
			return err
		}
		if folded != nil {
			f := foldKey(key)
			if _, dup := folded[f]; dup {
				return &syntaxError{off: keyAt, msg: fmt.Sprintf("duplicate key %q (keys may not repeat, even in another case)", quote.V(key))}
			}
			folded[f] = struct{}{}
		} else {
			for _, k := range keys {
				if k == key || strings.EqualFold(k, key) {
					return &syntaxError{off: keyAt, msg: fmt.Sprintf("duplicate key %q (keys may not repeat, even in another case)", quote.V(key))}
				}
			}
			keys = append(keys, key)
			if len(keys) > foldLinearMax {
				folded = make(map[string]struct{}, 2*len(keys))
				for _, k := range keys {
					folded[foldKey(k)] = struct{}{}
				}
				keys = nil
			}
		}
		s.skipSpace()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return s.errorf("expected ':' after object key")
		}
		s.pos++
		s.skipSpace()
		start := s.pos
		if err := s.value(depth); err != nil {
			return err
		}
		if each != nil {
			if err := each(key, start, s.pos); err != nil {
				return err
			}
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			return s.errorf("unexpected end of input in object")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.errorf("expected ',' or '}' in object")
		}
	}
}

func (s *scanner) array(depth int) error {
	if depth > s.maxDepth {
		return s.errorf("nesting deeper than %d", s.maxDepth)
	}
	s.pos++ // '['
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return nil
	}
	for {
		if err := s.value(depth); err != nil {
			return err
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			return s.errorf("unexpected end of input in array")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.errorf("expected ',' or ']' in array")
		}
	}
}

// number validates an RFC 8259 number and reports whether it is a plain
// integer literal (no fraction, no exponent).
func (s *scanner) number() error {
	_, err := s.numberKind()
	return err
}

func (s *scanner) numberKind() (integer bool, err error) {
	d := s.data
	if s.pos < len(d) && d[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos < len(d) && d[s.pos] == '0':
		s.pos++
	case s.pos < len(d) && d[s.pos] >= '1' && d[s.pos] <= '9':
		for s.pos < len(d) && d[s.pos] >= '0' && d[s.pos] <= '9' {
			s.pos++
		}
	default:
		return false, s.errorf("invalid number")
	}
	integer = true
	if s.pos < len(d) && d[s.pos] == '.' {
		integer = false
		s.pos++
		if s.pos >= len(d) || d[s.pos] < '0' || d[s.pos] > '9' {
			return false, s.errorf("invalid number: digit expected after '.'")
		}
		for s.pos < len(d) && d[s.pos] >= '0' && d[s.pos] <= '9' {
			s.pos++
		}
	}
	if s.pos < len(d) && (d[s.pos] == 'e' || d[s.pos] == 'E') {
		integer = false
		s.pos++
		if s.pos < len(d) && (d[s.pos] == '+' || d[s.pos] == '-') {
			s.pos++
		}
		if s.pos >= len(d) || d[s.pos] < '0' || d[s.pos] > '9' {
			return false, s.errorf("invalid number: digit expected in exponent")
		}
		for s.pos < len(d) && d[s.pos] >= '0' && d[s.pos] <= '9' {
			s.pos++
		}
	}
	return integer, nil
}

// str validates the string at s.pos. With decode it also returns the
// decoded value (for keys and for the few envelope members that are
// strings); raw is the text between the quotes.
func (s *scanner) str(decode bool) (val string, raw []byte, err error) {
	s.pos++ // opening quote
	start := s.pos
	escaped := false
	d := s.data
	for s.pos < len(d) {
		c := d[s.pos]
		switch {
		case c == '"':
			raw = d[start:s.pos]
			s.pos++
			if !decode {
				return "", raw, nil
			}
			if !escaped {
				return string(raw), raw, nil
			}
			return unescape(raw), raw, nil
		case c == '\\':
			escaped = true
			if err := s.escape(); err != nil {
				return "", nil, err
			}
		case c < 0x20:
			return "", nil, s.errorf("control character in string")
		case c < utf8.RuneSelf:
			s.pos++
		default:
			r, size := utf8.DecodeRune(d[s.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", nil, s.errorf("invalid UTF-8 in string")
			}
			s.pos += size
		}
	}
	return "", nil, s.errorf("unterminated string")
}

// escape validates the escape sequence at s.pos (the backslash).
func (s *scanner) escape() error {
	d := s.data
	if s.pos+1 >= len(d) {
		return s.errorf("unterminated escape")
	}
	switch d[s.pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.pos += 2
		return nil
	case 'u':
		r, ok := hex4(d, s.pos+2)
		if !ok {
			return s.errorf("invalid \\u escape")
		}
		s.pos += 6
		switch {
		case r >= 0xD800 && r < 0xDC00:
			// A high surrogate must be followed by an escaped low one.
			if s.pos+1 >= len(d) || d[s.pos] != '\\' || d[s.pos+1] != 'u' {
				return s.errorf("unpaired surrogate in string escape")
			}
			r2, ok := hex4(d, s.pos+2)
			if !ok || r2 < 0xDC00 || r2 > 0xDFFF {
				return s.errorf("unpaired surrogate in string escape")
			}
			s.pos += 6
		case r >= 0xDC00 && r <= 0xDFFF:
			return s.errorf("unpaired surrogate in string escape")
		}
		return nil
	default:
		return s.errorf("invalid escape character %q", quote.V(d[s.pos+1]))
	}
}

func hex4(d []byte, at int) (rune, bool) {
	if at+4 > len(d) {
		return 0, false
	}
	var r rune
	for _, c := range d[at : at+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// unescape decodes the text of a string already validated by str.
func unescape(raw []byte) string {
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		switch raw[i+1] {
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
			r, _ := hex4(raw, i+2)
			if r >= 0xD800 && r < 0xDC00 {
				r2, _ := hex4(raw, i+8)
				r = 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00)
				i += 6
			}
			b.WriteRune(r)
			i += 6
			continue
		default: // '"', '\\', '/'
			b.WriteByte(raw[i+1])
		}
		i += 2
	}
	return b.String()
}

// foldKey maps a key to a representative of its class under simple case
// folding (the relation strings.EqualFold and encoding/json use): each rune
// becomes the smallest rune of its folding orbit.
func foldKey(k string) string {
	ascii := true
	for i := 0; i < len(k); i++ {
		if k[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		// For ASCII letters the smallest member of the orbit is the upper
		// case letter ('K' < 'k' < U+212A KELVIN SIGN).
		return strings.ToUpper(k)
	}
	var b strings.Builder
	for _, r := range k {
		min := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < min {
				min = f
			}
		}
		b.WriteRune(min)
	}
	return b.String()
}
