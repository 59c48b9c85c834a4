// Package elicit is MCP elicitation as the agent handles it
// (docs/reference/mcp.md, "Elicitation"): the request a server sends and
// the answer it gets, and the form mode's restricted schema, parsed into
// fields that a terminal asks one by one, with the conversion of typed text
// into values and the check of a whole answer before it is sent.
//
// The schema subset is the one of the MCP revisions 2025-06-18 and
// 2025-11-25 (client/elicitation "Requested Schema"): a flat object whose
// properties are strings (formats email, uri, date, date-time), numbers,
// integers, booleans, single-select enums (enum, enum with enumNames, or
// oneOf of const and title) and multi-select enums (an array whose items
// are an enum or anyOf of const and title). Anything else is a schema the
// agent cannot render; the request is declined with the reason ParseSchema
// gives. A property with format "password" (or writeOnly) is asked masked.
//
// It is shared by the MCP client (mcp), which parses the server's request,
// and the terminal UI (tui), which asks the fields.
//
// Imports: the standard library, internal/strictjson and internal/quote.
package elicit

import (
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"agent/internal/quote"
	"agent/internal/strictjson"
)

// Mode is how a server asks: a form the client renders, or a URL the user
// opens in a browser (2025-11-25 client/elicitation).
type Mode string

// The modes.
const (
	ModeForm Mode = "form"
	ModeURL  Mode = "url"
)

// Request is one elicitation/create of a server.
type Request struct {
	// Server is the name of the server that asks (set by the caller that
	// knows it; a UI must say which server asks).
	Server  string
	Mode    Mode
	Message string
	// Form is the parsed requestedSchema (ModeForm).
	Form *Form
	// URL and ID are the URL to open and the elicitationId (ModeURL).
	URL string
	ID  string
}

// Action is the user's answer (2025-11-25 client/elicitation "Response
// Actions").
type Action string

// The actions: accept (submitted, or agreed to open the URL), decline (an
// explicit no), cancel (dismissed without a choice).
const (
	Accept  Action = "accept"
	Decline Action = "decline"
	Cancel  Action = "cancel"
)

// Result is the answer to a Request. Content holds the values of an
// accepted form, by field name: string, float64 (number), int64
// (integer), bool or []string (multi-select).
type Result struct {
	Action  Action
	Content map[string]any
}

// Kind is a field's type.
type Kind uint8

// The kinds of field.
const (
	String Kind = iota
	Number
	Integer
	Boolean
	Choice      // a single-select enum
	MultiChoice // a multi-select enum
)

func (k Kind) String() string {
	return [...]string{"string", "number", "integer", "boolean", "choice", "multiple choice"}[k]
}

// Option is one value of an enum and the label shown for it.
type Option struct{ Value, Title string }

// Field is one property of a form. The bounds are -1 (or nil) when the
// schema sets none.
type Field struct {
	Name        string
	Title       string // "" when the schema has none
	Description string
	Kind        Kind
	Required    bool
	Format      string // String: email, uri, date, date-time, or ""
	Secret      bool   // asked masked, never shown back
	MinLength   int    // String, in characters
	MaxLength   int
	Minimum     *float64 // Number, Integer
	Maximum     *float64
	MinItems    int // MultiChoice
	MaxItems    int
	Options     []Option // Choice, MultiChoice
	Default     any      // a valid value of the field, or nil
	pattern     *regexp.Regexp
}

// Form is a parsed requestedSchema: its fields in the schema's order.
type Form struct {
	Fields []Field
}

// Limits on a schema the agent renders. A server asking for more is
// declined with the reason.
const (
	MaxFields  = 64
	MaxOptions = 256
	maxSchema  = 256 << 10
	maxText    = 4 << 10 // a message, title or description shown; longer ones are cut
	maxLines   = 40      // and taller ones
)

// SchemaError says why a requestedSchema cannot be rendered; Field is the
// property at fault ("" for the schema as a whole).
type SchemaError struct {
	Field string
	Msg   string
}

func (e *SchemaError) Error() string {
	if e.Field == "" {
		return "the requested schema " + e.Msg
	}
	return "property " + quote.Q(e.Field) + " of the requested schema " + e.Msg
}

// ParseSchema parses a requestedSchema into a Form, or says why the agent
// cannot render it.
func ParseSchema(raw []byte) (*Form, error) {
	v, err := strictjson.Parse(raw, strictjson.Options{MaxBytes: maxSchema, MaxDepth: 16})
	if err != nil {
		return nil, &SchemaError{Msg: "is not valid JSON: " + err.Error()}
	}
	if v.Kind != strictjson.Object {
		return nil, &SchemaError{Msg: "is not an object"}
	}
	if t := v.Get("type"); t == nil || t.Kind != strictjson.String || t.Str != "object" {
		return nil, &SchemaError{Msg: `does not have type "object"`}
	}
	for _, m := range v.Members {
		switch m.Key {
		case "type", "properties", "required", "$schema", "title", "description", "additionalProperties":
		default:
			return nil, &SchemaError{Msg: "uses " + quote.Q(m.Key) + ", which a flat form of primitive fields cannot honour"}
		}
	}
	f := &Form{}
	props := v.Get("properties")
	if props != nil && props.Kind != strictjson.Object {
		return nil, &SchemaError{Msg: "has properties that are not an object"}
	}
	if props != nil {
		if len(props.Members) > MaxFields {
			return nil, &SchemaError{Msg: fmt.Sprintf("has %d properties; at most %d are asked", len(props.Members), MaxFields)}
		}
		for _, m := range props.Members {
			fld, err := parseField(m.Key, m.Value)
			if err != nil {
				return nil, err
			}
			f.Fields = append(f.Fields, fld)
		}
	}
	if req := v.Get("required"); req != nil {
		if req.Kind != strictjson.Array {
			return nil, &SchemaError{Msg: "has a required list that is not an array"}
		}
		for _, it := range req.Items {
			if it.Kind != strictjson.String {
				return nil, &SchemaError{Msg: "has a required entry that is not a string"}
			}
			i := f.index(it.Str)
			if i < 0 {
				return nil, &SchemaError{Field: it.Str, Msg: "is required but not defined"}
			}
			f.Fields[i].Required = true
		}
	}
	return f, nil
}

func (f *Form) index(name string) int {
	return slices.IndexFunc(f.Fields, func(x Field) bool { return x.Name == name })
}

// fieldKeys are the keywords a property may use; others are refused, so
// that no constraint the server relies on is silently dropped. Annotations
// that constrain nothing (examples, $comment, deprecated, readOnly) pass.
var fieldKeys = map[string]bool{
	"type": true, "title": true, "description": true, "default": true,
	"format": true, "minLength": true, "maxLength": true, "pattern": true,
	"minimum": true, "maximum": true, "enum": true, "enumNames": true, "oneOf": true,
	"minItems": true, "maxItems": true, "items": true,
	"examples": true, "$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

func parseField(name string, v *strictjson.Value) (Field, error) {
	bad := func(format string, args ...any) (Field, error) {
		return Field{}, &SchemaError{Field: name, Msg: fmt.Sprintf(format, args...)}
	}
	if v.Kind != strictjson.Object {
		return bad("is not a schema object")
	}
	for _, m := range v.Members {
		if !fieldKeys[m.Key] {
			return bad("uses %s, which is outside the elicitation schema subset", quote.Q(m.Key))
		}
	}
	fld := Field{Name: name, MinLength: -1, MaxLength: -1, MinItems: -1, MaxItems: -1}
	var err error
	if fld.Title, err = text(v, "title"); err != nil {
		return bad("%v", err)
	}
	if fld.Description, err = text(v, "description"); err != nil {
		return bad("%v", err)
	}
	if w := v.Get("writeOnly"); w != nil && w.Kind == strictjson.Bool && w.Bool {
		fld.Secret = true
	}
	t := v.Get("type")
	if t == nil || t.Kind != strictjson.String {
		return bad("has no type (a string: string, number, integer, boolean or array)")
	}
	switch t.Str {
	case "string":
		err = fld.parseString(v)
	case "number", "integer":
		fld.Kind = Number
		if t.Str == "integer" {
			fld.Kind = Integer
		}
		err = fld.parseNumber(v)
	case "boolean":
		fld.Kind = Boolean
	case "array":
		fld.Kind = MultiChoice
		err = fld.parseMulti(v)
	default:
		return bad("has type %s; only string, number, integer, boolean and arrays of enum values can be asked", quote.Q(t.Str))
	}
	if err != nil {
		return bad("%v", err)
	}
	if d := v.Get("default"); d != nil {
		// A default that does not fit the field is ignored: the user is
		// asked without one.
		if val, ok := jsonValue(d); ok && fld.Check(val) == nil {
			fld.Default = val
		}
	}
	return fld, nil
}

func text(v *strictjson.Value, key string) (string, error) {
	x := v.Get(key)
	if x == nil {
		return "", nil
	}
	if x.Kind != strictjson.String {
		return "", fmt.Errorf("has a %s that is not a string", key)
	}
	return CutText(x.Str), nil
}

// CutText is a server's text as a question shows it: at most maxText
// bytes and maxLines lines, with "…" where it was cut, so that a tall
// message cannot push the line naming the server off the screen.
func CutText(s string) string {
	cut := quote.PrefixN(s, maxText)
	lines := 0
	for i := 0; i < len(cut); i++ {
		if cut[i] == '\n' {
			if lines++; lines == maxLines {
				cut = cut[:i]
				break
			}
		}
	}
	if len(cut) < len(s) {
		cut += "…"
	}
	return cut
}

func count(v *strictjson.Value, key string) (int, error) {
	x := v.Get(key)
	if x == nil {
		return -1, nil
	}
	n, ok := x.Int()
	if !ok || n < 0 || n > math.MaxInt32 {
		return 0, fmt.Errorf("has a %s that is not a non-negative integer", key)
	}
	return int(n), nil
}

func (f *Field) parseString(v *strictjson.Value) error {
	f.Kind = String
	var err error
	if f.MinLength, err = count(v, "minLength"); err != nil {
		return err
	}
	if f.MaxLength, err = count(v, "maxLength"); err != nil {
		return err
	}
	if fm := v.Get("format"); fm != nil {
		if fm.Kind != strictjson.String {
			return fmt.Errorf("has a format that is not a string")
		}
		switch fm.Str {
		case "email", "uri", "date", "date-time":
			f.Format = fm.Str
		case "password":
			f.Secret = true
		default:
			return fmt.Errorf("has format %s; the formats are email, uri, date and date-time", quote.Q(fm.Str))
		}
	}
	if p := v.Get("pattern"); p != nil {
		if p.Kind != strictjson.String {
			return fmt.Errorf("has a pattern that is not a string")
		}
		re, err := regexp.Compile(p.Str)
		if err != nil {
			return fmt.Errorf("has a pattern this client cannot check: %v", err)
		}
		f.pattern = re
	}
	opts, err := options(v)
	if err != nil {
		return err
	}
	if opts != nil {
		f.Kind, f.Options = Choice, opts
	}
	return nil
}

// options reads a single-select enum: enum (with enumNames, the legacy
// titles) or oneOf of {const, title}. It returns nil for a plain string.
func options(v *strictjson.Value) ([]Option, error) {
	enum, oneOf := v.Get("enum"), v.Get("oneOf")
	switch {
	case enum != nil && oneOf != nil:
		return nil, fmt.Errorf("has both enum and oneOf")
	case enum != nil:
		return enumOptions(enum, v.Get("enumNames"))
	case oneOf != nil:
		return constOptions(oneOf, "oneOf")
	}
	if v.Get("enumNames") != nil {
		return nil, fmt.Errorf("has enumNames without enum")
	}
	return nil, nil
}

func enumOptions(enum, names *strictjson.Value) ([]Option, error) {
	if enum.Kind != strictjson.Array || len(enum.Items) == 0 {
		return nil, fmt.Errorf("has an enum that is not a non-empty array")
	}
	if len(enum.Items) > MaxOptions {
		return nil, fmt.Errorf("has %d enum values; at most %d are offered", len(enum.Items), MaxOptions)
	}
	if names != nil && (names.Kind != strictjson.Array || len(names.Items) != len(enum.Items)) {
		return nil, fmt.Errorf("has enumNames that do not match its enum one for one")
	}
	out := make([]Option, 0, len(enum.Items))
	for i, it := range enum.Items {
		if it.Kind != strictjson.String {
			return nil, fmt.Errorf("has an enum value that is not a string")
		}
		o := Option{Value: it.Str, Title: it.Str}
		if names != nil {
			if names.Items[i].Kind != strictjson.String {
				return nil, fmt.Errorf("has an enumNames entry that is not a string")
			}
			o.Title = names.Items[i].Str
		}
		out = append(out, o)
	}
	return uniqueOptions(out)
}

func constOptions(list *strictjson.Value, key string) ([]Option, error) {
	if list.Kind != strictjson.Array || len(list.Items) == 0 {
		return nil, fmt.Errorf("has a %s that is not a non-empty array", key)
	}
	if len(list.Items) > MaxOptions {
		return nil, fmt.Errorf("has %d %s entries; at most %d are offered", len(list.Items), key, MaxOptions)
	}
	out := make([]Option, 0, len(list.Items))
	for _, it := range list.Items {
		c := it.Get("const")
		if it.Kind != strictjson.Object || c == nil || c.Kind != strictjson.String {
			return nil, fmt.Errorf("has a %s entry without a string const", key)
		}
		for _, m := range it.Members {
			if m.Key != "const" && m.Key != "title" && m.Key != "description" {
				return nil, fmt.Errorf("has a %s entry with %s besides const and title", key, quote.Q(m.Key))
			}
		}
		o := Option{Value: c.Str, Title: c.Str}
		if t := it.Get("title"); t != nil {
			if t.Kind != strictjson.String {
				return nil, fmt.Errorf("has a %s entry whose title is not a string", key)
			}
			o.Title = t.Str
		}
		out = append(out, o)
	}
	return uniqueOptions(out)
}

func uniqueOptions(opts []Option) ([]Option, error) {
	seen := make(map[string]bool, len(opts))
	for _, o := range opts {
		if seen[o.Value] {
			return nil, fmt.Errorf("offers the value %s twice", quote.Q(o.Value))
		}
		seen[o.Value] = true
	}
	return opts, nil
}

func (f *Field) parseNumber(v *strictjson.Value) error {
	for _, k := range []struct {
		key string
		dst **float64
	}{{"minimum", &f.Minimum}, {"maximum", &f.Maximum}} {
		x := v.Get(k.key)
		if x == nil {
			continue
		}
		n, ok := x.Float()
		if !ok {
			return fmt.Errorf("has a %s that is not a number", k.key)
		}
		*k.dst = &n
	}
	if f.Minimum != nil && f.Maximum != nil && *f.Minimum > *f.Maximum {
		return fmt.Errorf("has a minimum above its maximum")
	}
	return nil
}

func (f *Field) parseMulti(v *strictjson.Value) error {
	var err error
	if f.MinItems, err = count(v, "minItems"); err != nil {
		return err
	}
	if f.MaxItems, err = count(v, "maxItems"); err != nil {
		return err
	}
	items := v.Get("items")
	if items == nil || items.Kind != strictjson.Object {
		return fmt.Errorf("is an array without an items schema of enum values")
	}
	for _, m := range items.Members {
		switch m.Key {
		case "type", "enum", "anyOf", "enumNames":
		default:
			return fmt.Errorf("has items with %s; only an enum of strings is offered", quote.Q(m.Key))
		}
	}
	if t := items.Get("type"); t != nil && (t.Kind != strictjson.String || t.Str != "string") {
		return fmt.Errorf("has items that are not strings")
	}
	enum, anyOf := items.Get("enum"), items.Get("anyOf")
	switch {
	case enum != nil && anyOf == nil:
		f.Options, err = enumOptions(enum, items.Get("enumNames"))
	case anyOf != nil && enum == nil:
		f.Options, err = constOptions(anyOf, "anyOf")
	default:
		return fmt.Errorf("has items without exactly one of enum and anyOf")
	}
	if err != nil {
		return err
	}
	if f.MaxItems >= 0 && f.MinItems > f.MaxItems {
		return fmt.Errorf("has minItems above maxItems")
	}
	return nil
}

// jsonValue turns a parsed JSON default into the Go value a field holds.
func jsonValue(v *strictjson.Value) (any, bool) {
	switch v.Kind {
	case strictjson.String:
		return v.Str, true
	case strictjson.Bool:
		return v.Bool, true
	case strictjson.Number:
		if n, ok := v.Int(); ok {
			return n, true
		}
		n, ok := v.Float()
		return n, ok
	case strictjson.Array:
		out := make([]string, 0, len(v.Items))
		for _, it := range v.Items {
			if it.Kind != strictjson.String {
				return nil, false
			}
			out = append(out, it.Str)
		}
		return out, true
	}
	return nil, false
}

// Label is how the field is named to the user: its title, else its name.
func (f *Field) Label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// Check reports whether v is a valid value of the field: the Go type of
// its kind (an int64 is accepted for a number, a whole float64 for an
// integer) within the schema's bounds.
func (f *Field) Check(v any) error {
	switch f.Kind {
	case String, Choice:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s must be text", f.Label())
		}
		return f.checkString(s)
	case Number, Integer:
		n, ok := number(v)
		if !ok {
			return fmt.Errorf("%s must be a number", f.Label())
		}
		return f.checkNumber(n)
	case Boolean:
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s must be yes or no", f.Label())
		}
		return nil
	case MultiChoice:
		vs, ok := v.([]string)
		if !ok {
			return fmt.Errorf("%s must be a list of choices", f.Label())
		}
		return f.checkMulti(vs)
	}
	return fmt.Errorf("%s has an unknown kind", f.Label())
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	}
	return 0, false
}

func (f *Field) checkString(s string) error {
	if f.Kind == Choice {
		if !slices.ContainsFunc(f.Options, func(o Option) bool { return o.Value == s }) {
			return fmt.Errorf("%s must be one of the choices offered", f.Label())
		}
		return nil
	}
	n := utf8.RuneCountInString(s)
	switch {
	case f.MinLength >= 0 && n < f.MinLength:
		return fmt.Errorf("%s needs at least %d characters", f.Label(), f.MinLength)
	case f.MaxLength >= 0 && n > f.MaxLength:
		return fmt.Errorf("%s takes at most %d characters", f.Label(), f.MaxLength)
	case f.pattern != nil && !f.pattern.MatchString(s):
		return fmt.Errorf("%s does not have the form the server asks for", f.Label())
	}
	switch f.Format {
	case "email":
		a, err := mail.ParseAddress(s)
		if err != nil || a.Address != s || a.Name != "" {
			return fmt.Errorf("%s must be an email address (name@example.com)", f.Label())
		}
	case "uri":
		u, err := url.Parse(s)
		if err != nil || u.Scheme == "" || strings.ContainsAny(s, " \t\n") {
			return fmt.Errorf("%s must be an absolute URI (https://example.com/…)", f.Label())
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return fmt.Errorf("%s must be a date (YYYY-MM-DD)", f.Label())
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return fmt.Errorf("%s must be a date and time (YYYY-MM-DDTHH:MM:SSZ)", f.Label())
		}
	}
	return nil
}

func (f *Field) checkNumber(n float64) error {
	if f.Kind == Integer && n != math.Trunc(n) {
		return fmt.Errorf("%s must be a whole number", f.Label())
	}
	switch {
	case f.Minimum != nil && n < *f.Minimum:
		return fmt.Errorf("%s must be at least %s", f.Label(), formatNumber(*f.Minimum))
	case f.Maximum != nil && n > *f.Maximum:
		return fmt.Errorf("%s must be at most %s", f.Label(), formatNumber(*f.Maximum))
	}
	return nil
}

func (f *Field) checkMulti(vs []string) error {
	seen := map[string]bool{}
	for _, v := range vs {
		if seen[v] || !slices.ContainsFunc(f.Options, func(o Option) bool { return o.Value == v }) {
			return fmt.Errorf("%s must be distinct choices among those offered", f.Label())
		}
		seen[v] = true
	}
	switch {
	case f.MinItems >= 0 && len(vs) < f.MinItems:
		return fmt.Errorf("%s needs at least %d choices", f.Label(), f.MinItems)
	case f.MaxItems >= 0 && len(vs) > f.MaxItems:
		return fmt.Errorf("%s takes at most %d choices", f.Label(), f.MaxItems)
	}
	return nil
}

func formatNumber(n float64) string { return strconv.FormatFloat(n, 'g', -1, 64) }

// Parse turns what the user typed into the field's value and checks it.
// Booleans take yes/no, true/false, y/n; a choice takes its value, its
// title (case ignored) or its number in the list; a multiple choice takes
// such entries separated by commas.
func (f *Field) Parse(text string) (any, error) {
	text = strings.TrimSpace(text)
	var v any
	switch f.Kind {
	case String:
		v = text
	case Number:
		n, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			return nil, fmt.Errorf("%s must be a number", f.Label())
		}
		v = n
	case Integer:
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s must be a whole number", f.Label())
		}
		v = n
	case Boolean:
		switch strings.ToLower(text) {
		case "yes", "y", "true":
			v = true
		case "no", "n", "false":
			v = false
		default:
			return nil, fmt.Errorf("%s must be yes or no", f.Label())
		}
	case Choice:
		o, ok := f.option(text)
		if !ok {
			return nil, fmt.Errorf("%s must be one of the choices offered", f.Label())
		}
		v = o
	case MultiChoice:
		var out []string
		if text != "" {
			for part := range strings.SplitSeq(text, ",") {
				o, ok := f.option(strings.TrimSpace(part))
				if !ok {
					return nil, fmt.Errorf("%s: %s is not among the choices offered", f.Label(), quote.Q(strings.TrimSpace(part)))
				}
				out = append(out, o)
			}
		}
		if out == nil {
			out = []string{}
		}
		v = out
	}
	if err := f.Check(v); err != nil {
		return nil, err
	}
	return v, nil
}

func (f *Field) option(s string) (string, bool) {
	for _, o := range f.Options {
		if o.Value == s {
			return o.Value, true
		}
	}
	for _, o := range f.Options {
		if strings.EqualFold(o.Title, s) {
			return o.Value, true
		}
	}
	if i, err := strconv.Atoi(s); err == nil && i >= 1 && i <= len(f.Options) {
		return f.Options[i-1].Value, true
	}
	return "", false
}

// Show is a value as the user reads it back: a secret as bullets, a
// choice by its title.
func (f *Field) Show(v any) string {
	if f.Secret {
		return "••••••••"
	}
	title := func(s string) string {
		for _, o := range f.Options {
			if o.Value == s {
				return o.Title
			}
		}
		return s
	}
	switch x := v.(type) {
	case nil:
		return "(empty)"
	case string:
		if f.Kind == Choice {
			return title(x)
		}
		return x
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case []string:
		out := make([]string, len(x))
		for i, s := range x {
			out[i] = title(s)
		}
		return strings.Join(out, ", ")
	case float64:
		return formatNumber(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return fmt.Sprint(v)
}

// Defaults are the fields' default values, by name (the answer of a user
// who accepts every pre-filled value).
func (f *Form) Defaults() map[string]any {
	out := map[string]any{}
	for i := range f.Fields {
		if d := f.Fields[i].Default; d != nil {
			out[f.Fields[i].Name] = d
		}
	}
	return out
}

// Validate checks an answer: every required field present, every value
// valid for its field, no value for a field the form does not have.
func (f *Form) Validate(content map[string]any) error {
	for name := range content {
		if f.index(name) < 0 {
			return fmt.Errorf("the answer has %s, which the form does not ask", quote.Q(name))
		}
	}
	for i := range f.Fields {
		fld := &f.Fields[i]
		v, ok := content[fld.Name]
		if !ok {
			if fld.Required {
				return fmt.Errorf("%s is required", fld.Label())
			}
			continue
		}
		if err := fld.Check(v); err != nil {
			return err
		}
	}
	return nil
}
