// Package strictjson decodes JSON documents that come from outside the
// process (settings files, keybindings, grants, tokens, protocol frames)
// under rules stricter than encoding/json: object keys match struct fields
// by exact case, duplicate keys are refused, unknown fields are refused,
// trailing data is refused, input size and nesting depth are bounded, and
// every syntax error carries a line and column.
//
// It has two layers. Parse builds a Value tree that keeps every key's
// position, for validators that report each problem with its JSONPath.
// Unmarshal checks the tree against a Go type and then decodes into it.
//
// Imports: standard library only (architecture.md, pure leaves).
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"agent/internal/quote"
)

// Defaults used when Options leaves a limit at zero.
const (
	DefaultMaxBytes = 1 << 20 // 1 MiB
	DefaultMaxDepth = 64
)

// Options bounds a decode. The zero value applies the defaults above.
type Options struct {
	MaxBytes int // largest accepted document; 0 means DefaultMaxBytes
	MaxDepth int // deepest accepted nesting of arrays and objects; 0 means DefaultMaxDepth
}

func (o Options) maxBytes() int {
	if o.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return o.MaxBytes
}

func (o Options) maxDepth() int {
	if o.MaxDepth <= 0 {
		return DefaultMaxDepth
	}
	return o.MaxDepth
}

// ErrTooLarge is wrapped by the error returned for a document over MaxBytes.
var ErrTooLarge = errors.New("document too large")

// Kind is the JSON type of a Value.
type Kind int

// The JSON kinds.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Number:
		return "number"
	case String:
		return "string"
	case Array:
		return "array"
	case Object:
		return "object"
	}
	return "unknown"
}

// Value is one node of a parsed document. Line and Col (1-based, column in
// bytes) locate its first byte in the input.
type Value struct {
	Kind    Kind
	Line    int
	Col     int
	Bool    bool
	Str     string // the decoded string for String; the literal text for Number
	Items   []*Value
	Members []Member // object members in document order; keys are unique
}

// Member is one key of an object.
type Member struct {
	Key   string
	Line  int // position of the key
	Col   int
	Value *Value
}

// Get returns the member value with exactly this key, or nil.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != Object {
		return nil
	}
	for i := range v.Members {
		if v.Members[i].Key == key {
			return v.Members[i].Value
		}
	}
	return nil
}

// Int returns the number as an int64 when it is an integer literal within
// range (no fraction, no exponent that leaves a fraction).
func (v *Value) Int() (int64, bool) {
	if v == nil || v.Kind != Number {
		return 0, false
	}
	if n, err := strconv.ParseInt(v.Str, 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(v.Str, 64)
	if err != nil || f != float64(int64(f)) || f > 1<<62 || f < -(1<<62) {
		return 0, false
	}
	return int64(f), true
}

// Float returns the number as a float64.
func (v *Value) Float() (float64, bool) {
	if v == nil || v.Kind != Number {
		return 0, false
	}
	f, err := strconv.ParseFloat(v.Str, 64)
	return f, err == nil
}

// SyntaxError reports malformed input at a position.
type SyntaxError struct {
	Line int
	Col  int
	Msg  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// Parse parses exactly one JSON value (surrounded by optional white space)
// into a tree. Duplicate keys in any object, invalid UTF-8, trailing data
// and documents over the limits are errors.
func Parse(data []byte, opts Options) (*Value, error) {
	if len(data) > opts.maxBytes() {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(data), opts.maxBytes())
	}
	p := parser{data: data, line: 1, lineStart: 0, maxDepth: opts.maxDepth()}
	// A UTF-8 byte order mark is not JSON (RFC 8259 §8.1: must not add one).
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, p.errorf("empty document")
	}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return nil, p.errorf("unexpected data after the top-level value")
	}
	return v, nil
}

type parser struct {
	data      []byte
	pos       int
	line      int
	lineStart int
	maxDepth  int
}

func (p *parser) errorf(format string, args ...any) error {
	return &SyntaxError{Line: p.line, Col: p.pos - p.lineStart + 1, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\r':
			p.pos++
		case '\n':
			p.pos++
			p.line++
			p.lineStart = p.pos
		default:
			return
		}
	}
}

func (p *parser) here() (int, int) { return p.line, p.pos - p.lineStart + 1 }

func (p *parser) value(depth int) (*Value, error) {
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of input")
	}
	line, col := p.here()
	c := p.data[p.pos]
	switch {
	case c == '{':
		if depth >= p.maxDepth {
			return nil, p.errorf("nesting deeper than %d", p.maxDepth)
		}
		return p.object(depth+1, line, col)
	case c == '[':
		if depth >= p.maxDepth {
			return nil, p.errorf("nesting deeper than %d", p.maxDepth)
		}
		return p.array(depth+1, line, col)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &Value{Kind: String, Line: line, Col: col, Str: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		s, err := p.number()
		if err != nil {
			return nil, err
		}
		return &Value{Kind: Number, Line: line, Col: col, Str: s}, nil
	case c == 't':
		if err := p.literal("true"); err != nil {
			return nil, err
		}
		return &Value{Kind: Bool, Line: line, Col: col, Bool: true}, nil
	case c == 'f':
		if err := p.literal("false"); err != nil {
			return nil, err
		}
		return &Value{Kind: Bool, Line: line, Col: col}, nil
	case c == 'n':
		if err := p.literal("null"); err != nil {
			return nil, err
		}
		return &Value{Kind: Null, Line: line, Col: col}, nil
	}
	return nil, p.errorf("unexpected character %s", quoteByte(c))
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("0x%02x", c)
}

func (p *parser) literal(word string) error {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(word)) {
		return p.errorf("invalid literal (expected %s)", word)
	}
	p.pos += len(word)
	return nil
}

func (p *parser) object(depth, line, col int) (*Value, error) {
	v := &Value{Kind: Object, Line: line, Col: col}
	p.pos++ // '{'
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	var seen map[string]struct{}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in object")
		}
		if p.data[p.pos] != '"' {
			return nil, p.errorf("expected a string key, found %s", quoteByte(p.data[p.pos]))
		}
		kl, kc := p.here()
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if len(v.Members) >= 8 {
			if seen == nil {
				seen = make(map[string]struct{}, 16)
				for _, m := range v.Members {
					seen[m.Key] = struct{}{}
				}
			}
			if _, dup := seen[key]; dup {
				return nil, &SyntaxError{Line: kl, Col: kc, Msg: fmt.Sprintf("duplicate key %q", quote.V(key))}
			}
			seen[key] = struct{}{}
		} else {
			for _, m := range v.Members {
				if m.Key == key {
					return nil, &SyntaxError{Line: kl, Col: kc, Msg: fmt.Sprintf("duplicate key %q", quote.V(key))}
				}
			}
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("expected ':' after object key")
		}
		p.pos++
		p.skipSpace()
		mv, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		v.Members = append(v.Members, Member{Key: key, Line: kl, Col: kc, Value: mv})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return v, nil
		default:
			return nil, p.errorf("expected ',' or '}' in object, found %s", quoteByte(p.data[p.pos]))
		}
	}
}

func (p *parser) array(depth, line, col int) (*Value, error) {
	v := &Value{Kind: Array, Line: line, Col: col}
	p.pos++ // '['
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	for {
		p.skipSpace()
		item, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		v.Items = append(v.Items, item)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return v, nil
		default:
			return nil, p.errorf("expected ',' or ']' in array, found %s", quoteByte(p.data[p.pos]))
		}
	}
}

// number scans an RFC 8259 §6 number and returns its literal text.
func (p *parser) number() (string, error) {
	start := p.pos
	d := p.data
	if d[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(d) && d[p.pos] == '0':
		p.pos++
	case p.pos < len(d) && d[p.pos] >= '1' && d[p.pos] <= '9':
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	default:
		return "", p.errorf("invalid number")
	}
	if p.pos < len(d) && d[p.pos] == '.' {
		p.pos++
		n := p.pos
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
		if p.pos == n {
			return "", p.errorf("invalid number: digits expected after '.'")
		}
	}
	if p.pos < len(d) && (d[p.pos] == 'e' || d[p.pos] == 'E') {
		p.pos++
		if p.pos < len(d) && (d[p.pos] == '+' || d[p.pos] == '-') {
			p.pos++
		}
		n := p.pos
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
		if p.pos == n {
			return "", p.errorf("invalid number: digits expected in exponent")
		}
	}
	return string(d[start:p.pos]), nil
}

// str scans a string starting at the opening quote and returns its decoded
// content. Control characters must be escaped; the input must be UTF-8;
// escaped surrogates must pair.
func (p *parser) str() (string, error) {
	d := p.data
	p.pos++ // opening quote
	start := p.pos
	// Fast path: no escapes.
	for p.pos < len(d) {
		c := d[p.pos]
		if c == '"' {
			s := d[start:p.pos]
			if !utf8.Valid(s) {
				return "", p.errorAt(start, "invalid UTF-8 in string")
			}
			p.pos++
			return string(s), nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.errorf("control character %s in string", quoteByte(c))
		}
		p.pos++
	}
	var b strings.Builder
	b.Write(d[start:p.pos])
	for {
		if p.pos >= len(d) {
			return "", p.errorf("unterminated string")
		}
		c := d[p.pos]
		switch {
		case c == '"':
			p.pos++
			s := b.String()
			if !utf8.ValidString(s) {
				return "", p.errorAt(start, "invalid UTF-8 in string")
			}
			return s, nil
		case c < 0x20:
			return "", p.errorf("control character %s in string", quoteByte(c))
		case c == '\\':
			if p.pos+1 >= len(d) {
				return "", p.errorf("unterminated string")
			}
			e := d[p.pos+1]
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
				p.pos += 2
			case 'b':
				b.WriteByte('\b')
				p.pos += 2
			case 'f':
				b.WriteByte('\f')
				p.pos += 2
			case 'n':
				b.WriteByte('\n')
				p.pos += 2
			case 'r':
				b.WriteByte('\r')
				p.pos += 2
			case 't':
				b.WriteByte('\t')
				p.pos += 2
			case 'u':
				r, err := p.hex4(p.pos + 2)
				if err != nil {
					return "", err
				}
				p.pos += 6
				if r >= 0xD800 && r < 0xDC00 {
					if p.pos+1 < len(d) && d[p.pos] == '\\' && d[p.pos+1] == 'u' {
						r2, err := p.hex4(p.pos + 2)
						if err != nil {
							return "", err
						}
						if r2 >= 0xDC00 && r2 < 0xE000 {
							p.pos += 6
							r = 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00)
							b.WriteRune(r)
							continue
						}
					}
					return "", p.errorf("unpaired surrogate in string escape")
				}
				if r >= 0xDC00 && r < 0xE000 {
					return "", p.errorf("unpaired surrogate in string escape")
				}
				b.WriteRune(r)
			default:
				return "", p.errorf("invalid escape %s in string", quoteByte(e))
			}
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
}

func (p *parser) hex4(at int) (rune, error) {
	if at+4 > len(p.data) {
		return 0, p.errorf("truncated \\u escape")
	}
	var r rune
	for _, c := range p.data[at : at+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, p.errorf("invalid \\u escape")
		}
	}
	return r, nil
}

// errorAt reports an error at an earlier offset on the current line.
func (p *parser) errorAt(off int, msg string) error {
	line, lineStart := p.line, p.lineStart
	if off < lineStart { // strings cannot span lines, but stay safe
		off = lineStart
	}
	return &SyntaxError{Line: line, Col: off - lineStart + 1, Msg: msg}
}

// Path is a JSONPath like $.bindings.chat-input.submit[1], built while a
// validator walks a tree.
type Path string

// Root is the path of the top-level value.
const Root Path = "$"

// Key appends an object key. Keys made of letters, digits, '_' and '-' use
// dot notation; others use the bracket form with a quoted key.
func (p Path) Key(k string) Path {
	if k != "" && plainKey(k) {
		return p + "." + Path(k)
	}
	q, _ := json.Marshal(k)
	return p + "[" + Path(q) + "]"
}

// Index appends an array index.
func (p Path) Index(i int) Path { return p + "[" + Path(strconv.Itoa(i)) + "]" }

func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '$') {
			return false
		}
	}
	return true
}

// Interface converts the value to encoding/json's generic shapes: nil,
// bool, json.Number, string, []any and map[string]any.
func (v *Value) Interface() any {
	switch v.Kind {
	case Bool:
		return v.Bool
	case Number:
		return json.Number(v.Str)
	case String:
		return v.Str
	case Array:
		out := make([]any, len(v.Items))
		for i, it := range v.Items {
			out[i] = it.Interface()
		}
		return out
	case Object:
		out := make(map[string]any, len(v.Members))
		for _, m := range v.Members {
			out[m.Key] = m.Value.Interface()
		}
		return out
	}
	return nil
}
