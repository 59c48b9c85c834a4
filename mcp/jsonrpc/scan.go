package jsonrpc

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"agent/internal/jsonlex"
	"agent/internal/quote"
)

// scanner validates one JSON text in a single pass, without building a tree:
// RFC 8259 syntax, valid UTF-8 (escaped surrogates must pair), bounded
// nesting, and no two keys of one object that are equal or equal under
// simple case folding. The case rule exists because the typed payloads
// (MCP results, parameters) are decoded with encoding/json, which matches
// keys to fields case-insensitively: {"isError":false,"IsError":true} would
// otherwise mean one thing to us and another to a peer. The tokens are read
// by internal/jsonlex, under its rules CheckUTF8 and PairSurrogates.
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

func (s *scanner) skipSpace() { s.pos = jsonlex.Space(s.data, s.pos) }

// advance moves past a token the lexer read up to end, or reports its
// fault there.
func (s *scanner) advance(end int, f jsonlex.Fault) error {
	s.pos = end
	switch f {
	case jsonlex.None:
		return nil
	case jsonlex.BadEscape:
		return s.errorf("invalid escape character %q", quote.V(s.data[end+1]))
	}
	return s.errorf("%s", f)
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
	case c == 't' || c == 'f' || c == 'n':
		return s.advance(jsonlex.Literal(s.data, s.pos))
	case c == '-' || (c >= '0' && c <= '9'):
		return s.advance(jsonlex.Number(s.data, s.pos))
	default:
		return s.errorf("invalid character %q looking for a value", quote.V(c))
	}
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
	var empty bool
	if s.pos, empty = jsonlex.Open(s.data, s.pos, '}'); empty {
		return nil
	}
	var keys []string
	var folded map[string]struct{}
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
		if more, err := s.next('}', "object"); !more {
			return err
		}
	}
}

func (s *scanner) array(depth int) error {
	if depth > s.maxDepth {
		return s.errorf("nesting deeper than %d", s.maxDepth)
	}
	var empty bool
	if s.pos, empty = jsonlex.Open(s.data, s.pos, ']'); empty {
		return nil
	}
	for {
		if err := s.value(depth); err != nil {
			return err
		}
		if more, err := s.next(']', "array"); !more {
			return err
		}
	}
}

// next reads the comma (more) or the closing bracket after a member.
func (s *scanner) next(closer byte, in string) (more bool, err error) {
	end, more, f := jsonlex.Next(s.data, s.pos, closer)
	s.pos = end
	if f == jsonlex.Unexpected {
		return false, s.errorf("expected ',' or '%c' in %s", closer, in)
	}
	if f != jsonlex.None {
		return false, s.errorf("%s in %s", f, in)
	}
	return more, nil
}

// numberKind validates an RFC 8259 number and reports whether it is a
// plain integer literal (no fraction, no exponent).
func (s *scanner) numberKind() (integer bool, err error) {
	start := s.pos
	if err := s.advance(jsonlex.Number(s.data, s.pos)); err != nil {
		return false, err
	}
	return !bytes.ContainsAny(s.data[start:s.pos], ".eE"), nil
}

// str validates the string at s.pos. With decode it also returns the
// decoded value (for keys and for the few envelope members that are
// strings); raw is the text between the quotes.
func (s *scanner) str(decode bool) (val string, raw []byte, err error) {
	end, c, f := jsonlex.PlainString(s.data, s.pos), jsonlex.Content(0), jsonlex.None
	if end < 0 {
		end, c, f = jsonlex.String(s.data, s.pos, jsonlex.CheckUTF8|jsonlex.PairSurrogates)
	}
	if f != jsonlex.None {
		return "", nil, s.advance(end, f)
	}
	raw = s.data[s.pos+1 : end-1]
	s.pos = end
	switch {
	case !decode:
		return "", raw, nil
	case c&jsonlex.Escaped == 0:
		return string(raw), raw, nil
	}
	return jsonlex.Unescape(raw), raw, nil
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
