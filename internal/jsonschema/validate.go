package jsonschema

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"agent/internal/quote"
	"agent/internal/strictjson"
)

// Problem is one way a document fails its schema.
type Problem struct {
	Path strictjson.Path // where in the document, e.g. $.file_path
	Msg  string
}

func (p Problem) String() string { return string(p.Path) + ": " + p.Msg }

// ValidationError lists every problem of a document (up to
// Options.MaxProblems).
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return strings.Join(parts, "; ")
}

// ErrNotJSON is wrapped by Validate's error for a document that does not
// parse (strict JSON: duplicate keys and trailing data are refused too).
var ErrNotJSON = errors.New("not valid JSON")

// Validate parses doc as strict JSON and checks it. It returns nil, an
// error wrapping ErrNotJSON, or a *ValidationError.
func (s *Schema) Validate(doc []byte) error {
	v, err := strictjson.Parse(doc, strictjson.Options{MaxBytes: s.opts.MaxBytes})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotJSON, err)
	}
	if ps := s.ValidateValue(v); ps != nil {
		return &ValidationError{Problems: ps}
	}
	return nil
}

// ValidateValue checks a parsed document and returns its problems, nil
// when it is valid.
func (s *Schema) ValidateValue(v *strictjson.Value) []Problem {
	r := run{opts: s.opts}
	k := sink{max: s.opts.MaxProblems}
	r.apply(s.root, v, strictjson.Root, 0, &k)
	if r.stopped {
		// Never let an unfinished check pass a document.
		k.list = append(k.list, Problem{strictjson.Root, fmt.Sprintf("validation stopped after %d steps; the schema is too costly for this value", s.opts.MaxSteps)})
	}
	return k.list
}

type run struct {
	opts    Options
	steps   int
	stopped bool
}

type sink struct {
	list []Problem
	max  int
}

func (k *sink) add(p strictjson.Path, format string, args ...any) {
	if len(k.list) < k.max {
		k.list = append(k.list, Problem{p, fmt.Sprintf(format, args...)})
	}
}

func (k *sink) full() bool { return len(k.list) >= k.max }

func (r *run) apply(n *node, v *strictjson.Value, p strictjson.Path, depth int, k *sink) {
	if k.full() || r.stopped {
		return
	}
	r.steps++
	if r.steps > r.opts.MaxSteps {
		r.stopped = true
		return
	}
	if depth > r.opts.MaxDepth {
		k.add(p, "the schema nests deeper than %d levels here", r.opts.MaxDepth)
		return
	}
	if n.boolean != nil {
		if !*n.boolean {
			k.add(p, "no value is allowed here")
		}
		return
	}
	if n.ref != nil {
		r.apply(n.ref, v, p, depth+1, k)
	}
	if n.types != 0 && !typeOK(n.types, v) {
		// The other keywords would only repeat the mismatch.
		k.add(p, "expected %s, found %s", describeTypes(n.types), describeValue(v))
		return
	}
	if n.enum != nil && !n.enum[canonical(v)] {
		k.add(p, "must be one of %s", list(n.enumText, 10))
	}
	if n.constVal != nil && canonical(v) != *n.constVal {
		k.add(p, "must be %s", n.constText)
	}
	switch v.Kind {
	case strictjson.String:
		r.str(n, v, p, k)
	case strictjson.Number:
		r.num(n, v, p, k)
	case strictjson.Object:
		r.object(n, v, p, depth, k)
	case strictjson.Array:
		r.array(n, v, p, depth, k)
	}
	for _, sub := range n.allOf {
		r.apply(sub, v, p, depth+1, k)
	}
	if n.anyOf != nil {
		valid, firsts := r.branches(n.anyOf, v, p, depth)
		if len(valid) == 0 {
			k.add(p, "must match at least one of %d alternatives (%s)", len(n.anyOf), strings.Join(firsts, "; "))
		}
	}
	if n.oneOf != nil {
		valid, firsts := r.branches(n.oneOf, v, p, depth)
		switch {
		case len(valid) == 0:
			k.add(p, "must match exactly one of %d alternatives, matches none (%s)", len(n.oneOf), strings.Join(firsts, "; "))
		case len(valid) > 1:
			k.add(p, "must match exactly one of %d alternatives, matches %s", len(n.oneOf), list(valid, 10))
		}
	}
	if n.not != nil {
		sub := sink{max: 1}
		r.apply(n.not, v, p, depth+1, &sub)
		if len(sub.list) == 0 {
			k.add(p, "must not match the schema given under \"not\"")
		}
	}
}

// branches applies each alternative on its own. It returns the numbers
// (1-based) of the alternatives that hold and, for messages, the first
// problem of the first few that fail.
func (r *run) branches(alts []*node, v *strictjson.Value, p strictjson.Path, depth int) (valid, firsts []string) {
	for i, alt := range alts {
		sub := sink{max: 1}
		r.apply(alt, v, p, depth+1, &sub)
		if len(sub.list) == 0 {
			valid = append(valid, fmt.Sprint(i+1))
		} else if len(firsts) < 4 {
			firsts = append(firsts, fmt.Sprintf("%d: %s", i+1, sub.list[0]))
		}
	}
	return valid, firsts
}

func (r *run) str(n *node, v *strictjson.Value, p strictjson.Path, k *sink) {
	if n.minLength > 0 || n.maxLength >= 0 {
		l := utf8.RuneCountInString(v.Str)
		if l < n.minLength {
			k.add(p, "must be at least %d characters long, found %d", n.minLength, l)
		}
		if n.maxLength >= 0 && l > n.maxLength {
			k.add(p, "must be at most %d characters long, found %d", n.maxLength, l)
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(v.Str) {
		k.add(p, "must match the pattern %q", quote.V(n.pattern.String()))
	}
}

func cmp(a, b number) int {
	if a.isInt && b.isInt {
		switch {
		case a.i < b.i:
			return -1
		case a.i > b.i:
			return 1
		}
		return 0
	}
	switch {
	case a.f < b.f:
		return -1
	case a.f > b.f:
		return 1
	}
	return 0
}

func (r *run) num(n *node, v *strictjson.Value, p strictjson.Path, k *sink) {
	if n.minimum == nil && n.maximum == nil && n.exclMin == nil && n.exclMax == nil && n.multipleOf == nil {
		return
	}
	x := parseNumber(v.Str)
	if n.minimum != nil && cmp(x, *n.minimum) < 0 {
		k.add(p, "must be at least %s, found %s", n.minimum.text, v.Str)
	}
	if n.maximum != nil && cmp(x, *n.maximum) > 0 {
		k.add(p, "must be at most %s, found %s", n.maximum.text, v.Str)
	}
	if n.exclMin != nil && cmp(x, *n.exclMin) <= 0 {
		k.add(p, "must be greater than %s, found %s", n.exclMin.text, v.Str)
	}
	if n.exclMax != nil && cmp(x, *n.exclMax) >= 0 {
		k.add(p, "must be less than %s, found %s", n.exclMax.text, v.Str)
	}
	if m := n.multipleOf; m != nil && !multiple(x, *m) {
		k.add(p, "must be a multiple of %s, found %s", m.text, v.Str)
	}
}

func multiple(x, m number) bool {
	if x.isInt && m.isInt && m.i != 0 {
		return x.i%m.i == 0
	}
	q := x.f / m.f
	if math.IsInf(q, 0) || math.IsNaN(q) {
		return false
	}
	// Decimal steps such as 0.01 are not exact in binary: allow rounding
	// error relative to the quotient.
	return math.Abs(q-math.Round(q)) <= 1e-9*math.Max(1, math.Abs(q))
}

func (r *run) object(n *node, v *strictjson.Value, p strictjson.Path, depth int, k *sink) {
	for _, name := range n.required {
		if v.Get(name) == nil {
			k.add(p.Key(name), "required property is missing")
		}
	}
	if len(v.Members) < n.minProps {
		k.add(p, "must have at least %d properties, found %d", n.minProps, len(v.Members))
	}
	if n.maxProps >= 0 && len(v.Members) > n.maxProps {
		k.add(p, "must have at most %d properties, found %d", n.maxProps, len(v.Members))
	}
	for _, m := range v.Members {
		if k.full() || r.stopped {
			return
		}
		matched := false
		if sub, ok := n.props[m.Key]; ok {
			matched = true
			r.apply(sub, m.Value, p.Key(m.Key), depth+1, k)
		}
		for _, pp := range n.patProps {
			if pp.re.MatchString(m.Key) {
				matched = true
				r.apply(pp.schema, m.Value, p.Key(m.Key), depth+1, k)
			}
		}
		if matched || n.additional == nil {
			continue
		}
		if b := n.additional.boolean; b != nil && !*b {
			if len(n.propNames) > 0 {
				k.add(p.Key(m.Key), "unknown property (known: %s)", list(n.propNames, 20))
			} else {
				k.add(p.Key(m.Key), "unknown property")
			}
			continue
		}
		r.apply(n.additional, m.Value, p.Key(m.Key), depth+1, k)
	}
}

func (r *run) array(n *node, v *strictjson.Value, p strictjson.Path, depth int, k *sink) {
	if len(v.Items) < n.minItems {
		k.add(p, "must have at least %d items, found %d", n.minItems, len(v.Items))
	}
	if n.maxItems >= 0 && len(v.Items) > n.maxItems {
		k.add(p, "must have at most %d items, found %d", n.maxItems, len(v.Items))
	}
	if n.uniqueItems {
		// Canonical encodings keep this linear in the array's size.
		seen := make(map[string]int, len(v.Items))
		for i, it := range v.Items {
			c := canonical(it)
			if j, dup := seen[c]; dup {
				k.add(p.Index(i), "duplicates item %d (items must be unique)", j)
				continue
			}
			seen[c] = i
		}
	}
	if n.items != nil {
		for i, it := range v.Items {
			if k.full() || r.stopped {
				return
			}
			r.apply(n.items, it, p.Index(i), depth+1, k)
		}
	}
}

func typeOK(t typeSet, v *strictjson.Value) bool {
	switch v.Kind {
	case strictjson.Null:
		return t&tNull != 0
	case strictjson.Bool:
		return t&tBool != 0
	case strictjson.String:
		return t&tString != 0
	case strictjson.Array:
		return t&tArray != 0
	case strictjson.Object:
		return t&tObject != 0
	case strictjson.Number:
		if t&tNumber != 0 {
			return true
		}
		if t&tInteger != 0 {
			x := parseNumber(v.Str)
			return x.isInt || x.f == math.Trunc(x.f)
		}
	}
	return false
}

var articles = map[typeSet]string{
	tNull: "null", tBool: "a boolean", tObject: "an object", tArray: "an array",
	tNumber: "a number", tString: "a string", tInteger: "an integer",
}

func describeTypes(t typeSet) string {
	var names []string
	for _, tn := range typeNames {
		if t&tn.t != 0 {
			names = append(names, articles[tn.t])
		}
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func describeValue(v *strictjson.Value) string {
	switch v.Kind {
	case strictjson.Number:
		return "the number " + v.Str
	case strictjson.Null:
		return "null"
	case strictjson.Bool:
		return "a boolean"
	case strictjson.String:
		return "a string"
	case strictjson.Array:
		return "an array"
	}
	return "an object"
}

// list joins up to max items for a message.
func list(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:max], ", ") + fmt.Sprintf(" and %d more", len(items)-max)
}
