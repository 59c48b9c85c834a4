// Package jsonschema compiles and applies the subset of JSON Schema (draft
// 2020-12 keywords) that tool argument schemas use: the schemas of the
// built-in tools, of MCP tools, and of the server's agent_submit tool
// (docs/reference/runtime.md, "A tool call"; docs/reference/mcp.md, "Served
// tools and agent_submit"). Arguments a model sends are checked before a
// tool runs, and every problem is reported with its JSONPath so the model
// can correct the call.
//
// Supported keywords: type (a name or an array of names), properties,
// required, additionalProperties (boolean or schema), patternProperties,
// minProperties, maxProperties, enum, const, minLength, maxLength, minimum,
// maximum, exclusiveMinimum, exclusiveMaximum (numbers), multipleOf, items
// (one schema), minItems, maxItems, uniqueItems, pattern (RE2 syntax),
// anyOf, oneOf, allOf, not, $defs and definitions with local $ref, boolean
// schemas. Annotations are ignored: title, description, default, examples,
// $comment, $schema, format, deprecated, readOnly, writeOnly,
// contentMediaType, contentEncoding, and $id at the root. Any other keyword
// makes Compile fail, so a schema never silently means less than it says.
//
// $ref is applied together with its sibling keywords (the 2020-12 rule).
// A cycle of $ref and in-place applicators (allOf, anyOf, oneOf, not) that
// never descends into the instance is refused at compile time; recursion
// through properties or items is allowed and bounded by the document's
// depth, the MaxDepth option and a step budget.
//
// Imports: standard library, agent/internal/strictjson and
// agent/internal/quote only (docs/design.md, "Pure leaves may import
// `internal/strictjson` and `internal/quote`").
package jsonschema

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"agent/internal/quote"
	"agent/internal/strictjson"
)

// Defaults used when Options leaves a field at zero.
const (
	DefaultMaxDepth    = 256
	DefaultMaxSteps    = 1_000_000
	DefaultMaxProblems = 32
)

// Options bound compilation and validation. The zero value applies the
// defaults above and strictjson's size and nesting limits.
type Options struct {
	// MaxBytes bounds the schema and each document Validate parses; 0 means
	// strictjson.DefaultMaxBytes.
	MaxBytes int
	// MaxDepth bounds the nesting of schema applications while validating.
	MaxDepth int
	// MaxSteps bounds the schema applications of one validation, so a
	// schema built to branch exponentially cannot stall a turn.
	MaxSteps int
	// MaxProblems bounds the problems one validation reports.
	MaxProblems int
}

func (o Options) withDefaults() Options {
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = DefaultMaxSteps
	}
	if o.MaxProblems <= 0 {
		o.MaxProblems = DefaultMaxProblems
	}
	return o
}

// ErrUnsupported is wrapped by the SchemaError for a keyword or form this
// package does not implement.
var ErrUnsupported = errors.New("unsupported")

// SchemaError is a problem in a schema, located by its JSONPath.
type SchemaError struct {
	Path strictjson.Path
	Msg  string
	Err  error // ErrUnsupported, or nil
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("schema %s: %s", e.Path, e.Msg)
}

func (e *SchemaError) Unwrap() error { return e.Err }

// Schema is a compiled schema. It is immutable and safe for concurrent use.
type Schema struct {
	root *node
	opts Options
}

type typeSet uint8

const (
	tNull typeSet = 1 << iota
	tBool
	tObject
	tArray
	tNumber
	tString
	tInteger
)

var typeNames = []struct {
	name string
	t    typeSet
}{
	{"null", tNull}, {"boolean", tBool}, {"object", tObject}, {"array", tArray},
	{"number", tNumber}, {"string", tString}, {"integer", tInteger},
}

type number struct {
	f     float64
	i     int64
	isInt bool   // i holds the exact value
	text  string // as written, for messages
}

type patProp struct {
	re     *regexp.Regexp
	schema *node
}

// node is one compiled schema object. Zero-valued fields impose nothing.
type node struct {
	boolean *bool // a boolean schema: true accepts all, false refuses all

	types      typeSet
	props      map[string]*node
	propNames  []string // sorted, for messages
	required   []string
	additional *node // nil: any additional property is allowed
	patProps   []patProp
	minProps   int
	maxProps   int // -1: none

	enum      map[string]bool // canonical forms
	enumText  []string        // as written, for messages
	constVal  *string         // canonical form
	constText string

	minLength, maxLength int // maxLength -1: none
	pattern              *regexp.Regexp

	minimum, maximum, exclMin, exclMax *number
	multipleOf                         *number

	items              *node
	minItems, maxItems int // maxItems -1: none
	uniqueItems        bool

	allOf, anyOf, oneOf []*node
	not                 *node
	ref                 *node
}

// Compile parses and compiles a schema document.
func Compile(schema []byte, opts Options) (*Schema, error) {
	opts = opts.withDefaults()
	root, err := strictjson.Parse(schema, strictjson.Options{MaxBytes: opts.MaxBytes})
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	c := &compiler{root: root, done: map[*strictjson.Value]*node{}}
	n, err := c.compile(root, strictjson.Root, true)
	if err != nil {
		return nil, err
	}
	if err := checkCycles(n); err != nil {
		return nil, err
	}
	return &Schema{root: n, opts: opts}, nil
}

// MustCompile is Compile for schemas written in the program; it panics on
// an error.
func MustCompile(schema string) *Schema {
	s, err := Compile([]byte(schema), Options{})
	if err != nil {
		panic(err)
	}
	return s
}

type compiler struct {
	root *strictjson.Value
	done map[*strictjson.Value]*node // each schema value compiles once, so $ref cycles terminate
}

func errAt(p strictjson.Path, format string, args ...any) error {
	return &SchemaError{Path: p, Msg: fmt.Sprintf(format, args...)}
}

func unsupported(p strictjson.Path, format string, args ...any) error {
	return &SchemaError{Path: p, Msg: fmt.Sprintf(format, args...), Err: ErrUnsupported}
}

// annotations carry no assertion; they are accepted and ignored.
var annotations = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true,
	"$comment": true, "format": true, "deprecated": true, "readOnly": true,
	"writeOnly": true, "contentMediaType": true, "contentEncoding": true,
}

func (c *compiler) compile(v *strictjson.Value, p strictjson.Path, isRoot bool) (*node, error) {
	if n, ok := c.done[v]; ok {
		return n, nil
	}
	n := &node{maxProps: -1, maxLength: -1, maxItems: -1}
	c.done[v] = n // before the members, so recursive $refs terminate
	switch v.Kind {
	case strictjson.Bool:
		b := v.Bool
		n.boolean = &b
		return n, nil
	case strictjson.Object:
	default:
		return nil, errAt(p, "a schema must be an object or a boolean, found %s", v.Kind)
	}
	for _, m := range v.Members {
		kp := p.Key(m.Key)
		mv := m.Value
		var err error
		switch {
		case annotations[m.Key]:
		case m.Key == "$schema" || m.Key == "$id":
			if !isRoot {
				err = unsupported(kp, "%s is supported only at the root", m.Key)
			} else if mv.Kind != strictjson.String {
				err = errAt(kp, "expected a string")
			}
		case m.Key == "$defs" || m.Key == "definitions":
			if mv.Kind != strictjson.Object {
				err = errAt(kp, "expected an object of schemas")
				break
			}
			for _, d := range mv.Members {
				if _, err = c.compile(d.Value, kp.Key(d.Key), false); err != nil {
					break
				}
			}
		case m.Key == "$ref":
			n.ref, err = c.resolveRef(mv, kp)
		case m.Key == "type":
			n.types, err = compileType(mv, kp)
		case m.Key == "properties":
			if mv.Kind != strictjson.Object {
				err = errAt(kp, "expected an object of schemas")
				break
			}
			n.props = make(map[string]*node, len(mv.Members))
			for _, pm := range mv.Members {
				var sub *node
				if sub, err = c.compile(pm.Value, kp.Key(pm.Key), false); err != nil {
					break
				}
				n.props[pm.Key] = sub
				n.propNames = append(n.propNames, pm.Key)
			}
			sort.Strings(n.propNames)
		case m.Key == "patternProperties":
			if mv.Kind != strictjson.Object {
				err = errAt(kp, "expected an object of schemas")
				break
			}
			for _, pm := range mv.Members {
				var re *regexp.Regexp
				if re, err = compilePattern(pm.Key, kp.Key(pm.Key)); err != nil {
					break
				}
				var sub *node
				if sub, err = c.compile(pm.Value, kp.Key(pm.Key), false); err != nil {
					break
				}
				n.patProps = append(n.patProps, patProp{re, sub})
			}
		case m.Key == "required":
			n.required, err = stringSet(mv, kp)
		case m.Key == "additionalProperties":
			n.additional, err = c.compile(mv, kp, false)
		case m.Key == "items":
			if mv.Kind == strictjson.Array {
				err = unsupported(kp, "the array form of items (tuples) is not supported")
				break
			}
			n.items, err = c.compile(mv, kp, false)
		case m.Key == "not":
			n.not, err = c.compile(mv, kp, false)
		case m.Key == "allOf" || m.Key == "anyOf" || m.Key == "oneOf":
			var list []*node
			list, err = c.compileList(mv, kp)
			switch m.Key {
			case "allOf":
				n.allOf = list
			case "anyOf":
				n.anyOf = list
			default:
				n.oneOf = list
			}
		case m.Key == "enum":
			if mv.Kind != strictjson.Array || len(mv.Items) == 0 {
				err = errAt(kp, "expected a non-empty array")
				break
			}
			n.enum = make(map[string]bool, len(mv.Items))
			for _, it := range mv.Items {
				n.enum[canonical(it)] = true
				n.enumText = append(n.enumText, text(it))
			}
		case m.Key == "const":
			s := canonical(mv)
			n.constVal, n.constText = &s, text(mv)
		case m.Key == "minLength":
			n.minLength, err = count(mv, kp)
		case m.Key == "maxLength":
			n.maxLength, err = count(mv, kp)
		case m.Key == "minItems":
			n.minItems, err = count(mv, kp)
		case m.Key == "maxItems":
			n.maxItems, err = count(mv, kp)
		case m.Key == "minProperties":
			n.minProps, err = count(mv, kp)
		case m.Key == "maxProperties":
			n.maxProps, err = count(mv, kp)
		case m.Key == "uniqueItems":
			if mv.Kind != strictjson.Bool {
				err = errAt(kp, "expected a boolean")
			}
			n.uniqueItems = mv.Bool
		case m.Key == "pattern":
			if mv.Kind != strictjson.String {
				err = errAt(kp, "expected a string")
				break
			}
			n.pattern, err = compilePattern(mv.Str, kp)
		case m.Key == "minimum":
			n.minimum, err = numberOf(mv, kp)
		case m.Key == "maximum":
			n.maximum, err = numberOf(mv, kp)
		case m.Key == "exclusiveMinimum" || m.Key == "exclusiveMaximum":
			if mv.Kind == strictjson.Bool {
				err = unsupported(kp, "the boolean form (draft 4) is not supported; give the bound as a number")
				break
			}
			if m.Key == "exclusiveMinimum" {
				n.exclMin, err = numberOf(mv, kp)
			} else {
				n.exclMax, err = numberOf(mv, kp)
			}
		case m.Key == "multipleOf":
			n.multipleOf, err = numberOf(mv, kp)
			if err == nil && !(n.multipleOf.f > 0) {
				err = errAt(kp, "must be greater than 0")
			}
		default:
			err = unsupported(kp, "keyword %q is not supported", quote.V(m.Key))
		}
		if err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (c *compiler) compileList(v *strictjson.Value, p strictjson.Path) ([]*node, error) {
	if v.Kind != strictjson.Array || len(v.Items) == 0 {
		return nil, errAt(p, "expected a non-empty array of schemas")
	}
	out := make([]*node, 0, len(v.Items))
	for i, it := range v.Items {
		n, err := c.compile(it, p.Index(i), false)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// resolveRef follows a local reference: "#" or a JSON Pointer fragment
// (RFC 6901) into this document, such as "#/$defs/path".
func (c *compiler) resolveRef(v *strictjson.Value, p strictjson.Path) (*node, error) {
	if v.Kind != strictjson.String {
		return nil, errAt(p, "expected a string")
	}
	ref := v.Str
	if !strings.HasPrefix(ref, "#") {
		return nil, unsupported(p, "only local references (#/...) are supported, found %q", quote.V(ref))
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil {
		return nil, errAt(p, "malformed reference %q", quote.V(ref))
	}
	target := c.root
	tp := strictjson.Root
	if frag != "" {
		if !strings.HasPrefix(frag, "/") {
			return nil, unsupported(p, "anchors are not supported, found %q", quote.V(ref))
		}
		for _, tok := range strings.Split(frag[1:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			switch target.Kind {
			case strictjson.Object:
				target = target.Get(tok)
				tp = tp.Key(tok)
			case strictjson.Array:
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(target.Items) {
					target = nil
					break
				}
				target = target.Items[i]
				tp = tp.Index(i)
			default:
				target = nil
			}
			if target == nil {
				return nil, errAt(p, "reference %q points to nothing", quote.V(ref))
			}
		}
	}
	return c.compile(target, tp, target == c.root)
}

func compileType(v *strictjson.Value, p strictjson.Path) (typeSet, error) {
	one := func(s string, p strictjson.Path) (typeSet, error) {
		for _, t := range typeNames {
			if t.name == s {
				return t.t, nil
			}
		}
		return 0, errAt(p, "unknown type %q", quote.V(s))
	}
	switch v.Kind {
	case strictjson.String:
		return one(v.Str, p)
	case strictjson.Array:
		if len(v.Items) == 0 {
			return 0, errAt(p, "expected at least one type")
		}
		var set typeSet
		for i, it := range v.Items {
			if it.Kind != strictjson.String {
				return 0, errAt(p.Index(i), "expected a type name")
			}
			t, err := one(it.Str, p.Index(i))
			if err != nil {
				return 0, err
			}
			if set&t != 0 {
				return 0, errAt(p.Index(i), "duplicate type %q", quote.V(it.Str))
			}
			set |= t
		}
		return set, nil
	}
	return 0, errAt(p, "expected a type name or an array of them")
}

func stringSet(v *strictjson.Value, p strictjson.Path) ([]string, error) {
	if v.Kind != strictjson.Array {
		return nil, errAt(p, "expected an array of strings")
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(v.Items))
	for i, it := range v.Items {
		if it.Kind != strictjson.String {
			return nil, errAt(p.Index(i), "expected a string")
		}
		if seen[it.Str] {
			return nil, errAt(p.Index(i), "duplicate %q", quote.V(it.Str))
		}
		seen[it.Str] = true
		out = append(out, it.Str)
	}
	return out, nil
}

func count(v *strictjson.Value, p strictjson.Path) (int, error) {
	n, ok := v.Int()
	if !ok || n < 0 || n > math.MaxInt32 {
		return 0, errAt(p, "expected a non-negative integer")
	}
	return int(n), nil
}

func numberOf(v *strictjson.Value, p strictjson.Path) (*number, error) {
	if v.Kind != strictjson.Number {
		return nil, errAt(p, "expected a number, found %s", v.Kind)
	}
	n := parseNumber(v.Str)
	return &n, nil
}

func parseNumber(s string) number {
	n := number{text: s}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		n.i, n.isInt, n.f = i, true, float64(i)
		return n
	}
	// Out-of-range literals become ±Inf, which still compare correctly.
	n.f, _ = strconv.ParseFloat(s, 64)
	if n.f == math.Trunc(n.f) && math.Abs(n.f) < 1<<62 {
		n.i, n.isInt = int64(n.f), true
	}
	return n
}

func compilePattern(s string, p strictjson.Path) (*regexp.Regexp, error) {
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, unsupported(p, "pattern %q is not valid RE2 syntax: %v", quote.V(s), err)
	}
	return re, nil
}

// canonical encodes a value so that equal JSON values (numbers compared by
// value, object keys in any order) have equal encodings; it backs enum,
// const and uniqueItems.
func canonical(v *strictjson.Value) string {
	var b strings.Builder
	writeCanonical(&b, v)
	return b.String()
}

func writeCanonical(b *strings.Builder, v *strictjson.Value) {
	switch v.Kind {
	case strictjson.Null:
		b.WriteByte('n')
	case strictjson.Bool:
		if v.Bool {
			b.WriteByte('t')
		} else {
			b.WriteByte('f')
		}
	case strictjson.Number:
		n := parseNumber(v.Str)
		b.WriteByte('#')
		if n.isInt {
			b.WriteString(strconv.FormatInt(n.i, 10))
		} else {
			b.WriteString(strconv.FormatFloat(n.f, 'g', -1, 64))
		}
		b.WriteByte(';')
	case strictjson.String:
		writeStr(b, v.Str)
	case strictjson.Array:
		b.WriteByte('[')
		for _, it := range v.Items {
			writeCanonical(b, it)
		}
		b.WriteByte(']')
	case strictjson.Object:
		ms := make([]strictjson.Member, len(v.Members))
		copy(ms, v.Members)
		sort.Slice(ms, func(i, j int) bool { return ms[i].Key < ms[j].Key })
		b.WriteByte('{')
		for _, m := range ms {
			writeStr(b, m.Key)
			writeCanonical(b, m.Value)
		}
		b.WriteByte('}')
	}
}

func writeStr(b *strings.Builder, s string) {
	b.WriteByte('s')
	b.WriteString(strconv.Itoa(len(s)))
	b.WriteByte(':')
	b.WriteString(s)
}

// text renders a small value for a message.
func text(v *strictjson.Value) string {
	switch v.Kind {
	case strictjson.Null:
		return "null"
	case strictjson.Bool:
		return strconv.FormatBool(v.Bool)
	case strictjson.Number:
		return v.Str
	case strictjson.String:
		return strconv.Quote(v.Str)
	case strictjson.Array:
		return "an array"
	}
	return "an object"
}

// checkCycles refuses a loop of in-place applicators ($ref, allOf, anyOf,
// oneOf, not): validating it would never descend into the instance and so
// never end.
func checkCycles(root *node) error {
	const (
		white = iota
		grey
		black
	)
	color := map[*node]int{}
	var visit func(n *node) error
	var descend func(n *node) error
	seenAll := map[*node]bool{}
	visit = func(n *node) error {
		switch color[n] {
		case grey:
			return unsupported(strictjson.Root, "the schema refers to itself without descending into the value ($ref loop)")
		case black:
			return nil
		}
		color[n] = grey
		for _, c := range inPlace(n) {
			if err := visit(c); err != nil {
				return err
			}
		}
		color[n] = black
		return nil
	}
	// descend walks every node once so that loops reachable only below a
	// property or an item are found too.
	descend = func(n *node) error {
		if seenAll[n] {
			return nil
		}
		seenAll[n] = true
		if err := visit(n); err != nil {
			return err
		}
		for _, c := range children(n) {
			if err := descend(c); err != nil {
				return err
			}
		}
		return nil
	}
	return descend(root)
}

func inPlace(n *node) []*node {
	var out []*node
	out = append(out, n.allOf...)
	out = append(out, n.anyOf...)
	out = append(out, n.oneOf...)
	if n.not != nil {
		out = append(out, n.not)
	}
	if n.ref != nil {
		out = append(out, n.ref)
	}
	return out
}

func children(n *node) []*node {
	out := inPlace(n)
	for _, name := range n.propNames {
		out = append(out, n.props[name])
	}
	for _, pp := range n.patProps {
		out = append(out, pp.schema)
	}
	if n.additional != nil {
		out = append(out, n.additional)
	}
	if n.items != nil {
		out = append(out, n.items)
	}
	return out
}
