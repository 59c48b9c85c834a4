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
// The tokens (white space, literals, numbers, strings) are read by
// internal/jsonlex, the lexical layer every JSON reader of the project
// shares.
//
// Imports: the standard library, internal/jsonlex and internal/quote
// (CONTRIBUTING.md, "Import direction"; docs/design.md).
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"agent/internal/jsonlex"
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
// into a tree. Duplicate keys in any object, invalid UTF-8, escaped
// surrogates that do not pair, trailing data and documents over the limits
// are errors.
func Parse(data []byte, opts Options) (*Value, error) {
	if len(data) > opts.maxBytes() {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(data), opts.maxBytes())
	}
	p := parser{data: data, line: 1, maxDepth: opts.maxDepth()}
	p.nextLF = p.lineFeed(0)
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
	data     []byte
	pos      int
	maxDepth int
	// Offsets from lineStart up to nextLF, the next line feed (len(data)
	// when there is none), are on line line.
	line      int
	lineStart int
	nextLF    int
}

// at returns the line and column (1-based, column in bytes) of offset off.
// Line feeds occur only in white space (a string refuses them unescaped),
// so white space is skipped by the shared lexer and lines are found on
// demand: one search for each line feed while the parse moves forward, and
// none for a position on the line already found.
func (p *parser) at(off int) (line, col int) {
	if off < p.lineStart {
		p.line, p.lineStart, p.nextLF = 1, 0, p.lineFeed(0)
	}
	for p.nextLF < off {
		p.line++
		p.lineStart = p.nextLF + 1
		p.nextLF = p.lineFeed(p.lineStart)
	}
	return p.line, off - p.lineStart + 1
}

// lineFeed returns the offset of the first line feed at or after i, or
// len(p.data).
func (p *parser) lineFeed(i int) int {
	if j := bytes.IndexByte(p.data[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(p.data)
}

func (p *parser) errorf(format string, args ...any) error {
	return p.errorAt(p.pos, fmt.Sprintf(format, args...))
}

// errorAt reports an error at an offset.
func (p *parser) errorAt(off int, msg string) error {
	line, col := p.at(off)
	return &SyntaxError{Line: line, Col: col, Msg: msg}
}

func (p *parser) skipSpace() { p.pos = jsonlex.Space(p.data, p.pos) }

func (p *parser) here() (int, int) { return p.at(p.pos) }

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
	case c == 't' || c == 'f' || c == 'n':
		if err := p.literal(); err != nil {
			return nil, err
		}
		if c == 'n' {
			return &Value{Kind: Null, Line: line, Col: col}, nil
		}
		return &Value{Kind: Bool, Line: line, Col: col, Bool: c == 't'}, nil
	}
	return nil, p.errorf("unexpected character %s", quoteByte(c))
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("0x%02x", c)
}

// literal reads the true, false or null that begins at p.pos.
func (p *parser) literal() error {
	end, f := jsonlex.Literal(p.data, p.pos)
	if f != jsonlex.None {
		word := "null"
		switch p.data[p.pos] {
		case 't':
			word = "true"
		case 'f':
			word = "false"
		}
		return p.errorf("invalid literal (expected %s)", word)
	}
	p.pos = end
	return nil
}

func (p *parser) object(depth, line, col int) (*Value, error) {
	v := &Value{Kind: Object, Line: line, Col: col}
	var empty bool
	if p.pos, empty = jsonlex.Open(p.data, p.pos, '}'); empty {
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
		if more, err := p.next('}', "object"); !more {
			if err != nil {
				return nil, err
			}
			return v, nil
		}
	}
}

func (p *parser) array(depth, line, col int) (*Value, error) {
	v := &Value{Kind: Array, Line: line, Col: col}
	var empty bool
	if p.pos, empty = jsonlex.Open(p.data, p.pos, ']'); empty {
		return v, nil
	}
	for {
		p.skipSpace()
		item, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		v.Items = append(v.Items, item)
		if more, err := p.next(']', "array"); !more {
			if err != nil {
				return nil, err
			}
			return v, nil
		}
	}
}

// next reads the comma (more) or the closing bracket after a member.
func (p *parser) next(closer byte, in string) (more bool, err error) {
	end, more, f := jsonlex.Next(p.data, p.pos, closer)
	p.pos = end
	switch f {
	case jsonlex.EndOfInput:
		return false, p.errorf("unexpected end of input in %s", in)
	case jsonlex.Unexpected:
		return false, p.errorf("expected ',' or '%c' in %s, found %s", closer, in, quoteByte(p.data[end]))
	}
	return more, nil
}

// number reads an RFC 8259 §6 number and returns its literal text.
func (p *parser) number() (string, error) {
	end, f := jsonlex.Number(p.data, p.pos)
	if f != jsonlex.None {
		p.pos = end
		msg := "invalid number"
		switch f {
		case jsonlex.NoFractionDigits:
			msg += ": digits expected after '.'"
		case jsonlex.NoExponentDigits:
			msg += ": digits expected in exponent"
		}
		return "", p.errorf("%s", msg)
	}
	s := string(p.data[p.pos:end])
	p.pos = end
	return s, nil
}

// str reads a string starting at the opening quote and returns its decoded
// content. Control characters must be escaped; the input must be UTF-8;
// escaped surrogates must pair.
func (p *parser) str() (string, error) {
	end, c, f := jsonlex.PlainString(p.data, p.pos), jsonlex.Content(0), jsonlex.None
	if end < 0 {
		end, c, f = jsonlex.String(p.data, p.pos, jsonlex.PairSurrogates)
	}
	if f != jsonlex.None {
		p.pos = end
		return "", p.stringError(f)
	}
	raw := p.data[p.pos+1 : end-1]
	start := p.pos + 1
	p.pos = end
	// Invalid UTF-8 is reported where the string's text begins, once the
	// string is otherwise well-formed.
	if c&jsonlex.NonASCII != 0 && !utf8.Valid(raw) {
		return "", p.errorAt(start, "invalid UTF-8 in string")
	}
	if c&jsonlex.Escaped == 0 {
		return string(raw), nil
	}
	return jsonlex.Unescape(raw), nil
}

// stringError words a fault of a string at p.pos.
func (p *parser) stringError(f jsonlex.Fault) error {
	d := p.data
	switch f {
	case jsonlex.Unterminated, jsonlex.UnterminatedEscape:
		return p.errorf("unterminated string")
	case jsonlex.ControlChar:
		return p.errorf("control character %s in string", quoteByte(d[p.pos]))
	case jsonlex.BadEscape:
		return p.errorf("invalid escape %s in string", quoteByte(d[p.pos+1]))
	case jsonlex.BadHex, jsonlex.BadLowHex:
		if p.pos+6 > len(d) {
			return p.errorf("truncated \\u escape")
		}
		return p.errorf("invalid \\u escape")
	}
	return p.errorf("%s", f) // an unpaired surrogate
}

// Path is a JSONPath like $.bindings.chat-input.submit[1], built while a
// validator walks a tree.
type Path string

// Root is the path of the top-level value.
const Root Path = "$"

// Key appends an object key. Keys made of letters, digits, '_' and '-' use
// dot notation; others use the bracket form with a quoted key. A key
// longer than quote.Max is cut there, with its length, as every
// diagnostic cuts what it quotes: `$["aaa"… (300000 bytes)]`.
func (p Path) Key(k string) Path {
	if len(k) > quote.Max {
		return p + "[" + Path(quote.Q(k)) + "]"
	}
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
