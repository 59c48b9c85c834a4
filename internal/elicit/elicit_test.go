package elicit

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseSchemaSubset(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   []Field // compared on Name, Kind, Required, Format, Secret, Options, Default
		err    string  // a part of the error; "" for success
	}{
		{name: "empty form", schema: `{"type":"object","properties":{}}`, want: nil},
		{name: "no properties at all", schema: `{"type":"object"}`, want: nil},
		{
			name:   "string with required",
			schema: `{"type":"object","properties":{"name":{"type":"string","title":"Name"}},"required":["name"]}`,
			want:   []Field{{Name: "name", Kind: String, Required: true}},
		},
		{
			name:   "order of the schema is kept",
			schema: `{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"boolean"},"m":{"type":"number"}}}`,
			want:   []Field{{Name: "z", Kind: String}, {Name: "a", Kind: Boolean}, {Name: "m", Kind: Number}},
		},
		{
			name:   "formats",
			schema: `{"type":"object","properties":{"e":{"type":"string","format":"email"},"u":{"type":"string","format":"uri"},"d":{"type":"string","format":"date"},"t":{"type":"string","format":"date-time"}}}`,
			want:   []Field{{Name: "e", Format: "email"}, {Name: "u", Format: "uri"}, {Name: "d", Format: "date"}, {Name: "t", Format: "date-time"}},
		},
		{
			name:   "password format is masked",
			schema: `{"type":"object","properties":{"p":{"type":"string","format":"password"}}}`,
			want:   []Field{{Name: "p", Secret: true}},
		},
		{
			name:   "writeOnly is masked",
			schema: `{"type":"object","properties":{"p":{"type":"string","writeOnly":true}}}`,
			want:   []Field{{Name: "p", Secret: true}},
		},
		{
			name:   "integer and defaults",
			schema: `{"type":"object","properties":{"age":{"type":"integer","default":30},"score":{"type":"number","default":95.5},"ok":{"type":"boolean","default":true},"n":{"type":"string","default":"John Doe"}}}`,
			want: []Field{{Name: "age", Kind: Integer, Default: int64(30)}, {Name: "score", Kind: Number, Default: 95.5},
				{Name: "ok", Kind: Boolean, Default: true}, {Name: "n", Kind: String, Default: "John Doe"}},
		},
		{
			name:   "a default that does not fit is ignored",
			schema: `{"type":"object","properties":{"age":{"type":"integer","minimum":0,"default":-3},"c":{"type":"string","enum":["a"],"default":"b"}}}`,
			want:   []Field{{Name: "age", Kind: Integer}, {Name: "c", Kind: Choice, Options: []Option{{"a", "a"}}}},
		},
		{
			name:   "enum without titles",
			schema: `{"type":"object","properties":{"s":{"type":"string","enum":["active","inactive"],"default":"active"}}}`,
			want:   []Field{{Name: "s", Kind: Choice, Options: []Option{{"active", "active"}, {"inactive", "inactive"}}, Default: "active"}},
		},
		{
			name:   "legacy enumNames",
			schema: `{"type":"object","properties":{"s":{"type":"string","enum":["r","g"],"enumNames":["Red","Green"]}}}`,
			want:   []Field{{Name: "s", Kind: Choice, Options: []Option{{"r", "Red"}, {"g", "Green"}}}},
		},
		{
			name:   "titled oneOf",
			schema: `{"type":"object","properties":{"c":{"type":"string","oneOf":[{"const":"#f00","title":"Red"},{"const":"#0f0","title":"Green"}]}}}`,
			want:   []Field{{Name: "c", Kind: Choice, Options: []Option{{"#f00", "Red"}, {"#0f0", "Green"}}}},
		},
		{
			name:   "multi-select enum",
			schema: `{"type":"object","properties":{"c":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"string","enum":["a","b","c"]},"default":["a"]}}}`,
			want:   []Field{{Name: "c", Kind: MultiChoice, Options: []Option{{"a", "a"}, {"b", "b"}, {"c", "c"}}, Default: []string{"a"}}},
		},
		{
			name:   "titled multi-select",
			schema: `{"type":"object","properties":{"c":{"type":"array","items":{"anyOf":[{"const":"x","title":"Ex"}]}}}}`,
			want:   []Field{{Name: "c", Kind: MultiChoice, Options: []Option{{"x", "Ex"}}}},
		},
		{name: "not an object", schema: `[1]`, err: "is not an object"},
		{name: "not JSON", schema: `{"type":`, err: "is not valid JSON"},
		{name: "duplicate keys", schema: `{"type":"object","type":"object"}`, err: "is not valid JSON"},
		{name: "wrong top type", schema: `{"type":"array"}`, err: `does not have type "object"`},
		{name: "unknown top keyword", schema: `{"type":"object","allOf":[]}`, err: `"allOf"`},
		{name: "nested object", schema: `{"type":"object","properties":{"o":{"type":"object"}}}`, err: `property "o"`},
		{name: "array of objects", schema: `{"type":"object","properties":{"a":{"type":"array","items":{"type":"object"}}}}`, err: "items that are not strings"},
		{name: "property without type", schema: `{"type":"object","properties":{"x":{"title":"X"}}}`, err: "has no type"},
		{name: "unknown format", schema: `{"type":"object","properties":{"x":{"type":"string","format":"ipv4"}}}`, err: `format "ipv4"`},
		{name: "unknown property keyword", schema: `{"type":"object","properties":{"x":{"type":"string","const":"a"}}}`, err: `"const"`},
		{name: "required names a missing field", schema: `{"type":"object","properties":{},"required":["x"]}`, err: "is required but not defined"},
		{name: "enum of numbers", schema: `{"type":"object","properties":{"x":{"type":"string","enum":[1,2]}}}`, err: "not a string"},
		{name: "duplicate enum value", schema: `{"type":"object","properties":{"x":{"type":"string","enum":["a","a"]}}}`, err: "twice"},
		{name: "enumNames of another length", schema: `{"type":"object","properties":{"x":{"type":"string","enum":["a","b"],"enumNames":["A"]}}}`, err: "one for one"},
		{name: "minimum above maximum", schema: `{"type":"object","properties":{"x":{"type":"number","minimum":5,"maximum":1}}}`, err: "minimum above"},
		{name: "negative maxLength", schema: `{"type":"object","properties":{"x":{"type":"string","maxLength":-1}}}`, err: "non-negative"},
		{name: "pattern Go cannot compile", schema: `{"type":"object","properties":{"x":{"type":"string","pattern":"(?<=a)b"}}}`, err: "cannot check"},
		{name: "too many fields", schema: manyFields(MaxFields + 1), err: "at most 64"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseSchema([]byte(tc.schema))
			if tc.err != "" {
				var se *SchemaError
				if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want a SchemaError containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Fields) != len(tc.want) {
				t.Fatalf("fields %+v, want %d", f.Fields, len(tc.want))
			}
			for i, w := range tc.want {
				g := f.Fields[i]
				if g.Name != w.Name || g.Kind != w.Kind || g.Required != w.Required || g.Format != w.Format || g.Secret != w.Secret ||
					!reflect.DeepEqual(g.Options, w.Options) || !reflect.DeepEqual(g.Default, w.Default) {
					t.Errorf("field %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func manyFields(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"f` + strings.Repeat("x", i) + `":{"type":"string"}`)
	}
	b.WriteString(`}}`)
	return b.String()
}

func field(t *testing.T, prop string) *Field {
	t.Helper()
	f, err := ParseSchema([]byte(`{"type":"object","properties":{"x":` + prop + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	return &f.Fields[0]
}

func TestFieldParse(t *testing.T) {
	tests := []struct {
		name  string
		prop  string
		input string
		want  any
		err   string
	}{
		{name: "text", prop: `{"type":"string"}`, input: " hello ", want: "hello"},
		{name: "text too short", prop: `{"type":"string","minLength":3}`, input: "ab", err: "at least 3"},
		{name: "text too long counts characters", prop: `{"type":"string","maxLength":2}`, input: "éé", want: "éé"},
		{name: "pattern", prop: `{"type":"string","pattern":"^[a-z]+$"}`, input: "Abc", err: "form the server asks"},
		{name: "email", prop: `{"type":"string","format":"email"}`, input: "a@example.com", want: "a@example.com"},
		{name: "not an email", prop: `{"type":"string","format":"email"}`, input: "Bob <a@example.com>", err: "email address"},
		{name: "uri", prop: `{"type":"string","format":"uri"}`, input: "https://example.com/x", want: "https://example.com/x"},
		{name: "relative uri", prop: `{"type":"string","format":"uri"}`, input: "/x", err: "absolute URI"},
		{name: "date", prop: `{"type":"string","format":"date"}`, input: "2024-02-29", want: "2024-02-29"},
		{name: "not a date", prop: `{"type":"string","format":"date"}`, input: "2023-02-29", err: "YYYY-MM-DD"},
		{name: "date-time", prop: `{"type":"string","format":"date-time"}`, input: "2024-03-15T14:30:00Z", want: "2024-03-15T14:30:00Z"},
		{name: "number", prop: `{"type":"number","minimum":0,"maximum":1}`, input: "0.5", want: 0.5},
		{name: "number over maximum", prop: `{"type":"number","maximum":1}`, input: "2", err: "at most 1"},
		{name: "NaN refused", prop: `{"type":"number"}`, input: "NaN", err: "must be a number"},
		{name: "integer", prop: `{"type":"integer"}`, input: "42", want: int64(42)},
		{name: "integer refuses fractions", prop: `{"type":"integer"}`, input: "4.2", err: "whole number"},
		{name: "boolean yes", prop: `{"type":"boolean"}`, input: "Yes", want: true},
		{name: "boolean n", prop: `{"type":"boolean"}`, input: "n", want: false},
		{name: "boolean other", prop: `{"type":"boolean"}`, input: "maybe", err: "yes or no"},
		{name: "choice by value", prop: `{"type":"string","enum":["r","g"],"enumNames":["Red","Green"]}`, input: "g", want: "g"},
		{name: "choice by title", prop: `{"type":"string","enum":["r","g"],"enumNames":["Red","Green"]}`, input: "green", want: "g"},
		{name: "choice by number", prop: `{"type":"string","enum":["r","g"]}`, input: "2", want: "g"},
		{name: "choice unknown", prop: `{"type":"string","enum":["r","g"]}`, input: "b", err: "choices offered"},
		{name: "multi", prop: `{"type":"array","items":{"enum":["a","b","c"]}}`, input: "a, c", want: []string{"a", "c"}},
		{name: "multi empty", prop: `{"type":"array","items":{"enum":["a"]}}`, input: "", want: []string{}},
		{name: "multi too few", prop: `{"type":"array","minItems":2,"items":{"enum":["a","b"]}}`, input: "a", err: "at least 2"},
		{name: "multi twice", prop: `{"type":"array","items":{"enum":["a","b"]}}`, input: "a,a", err: "distinct"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := field(t, tc.prop)
			got, err := f.Parse(tc.input)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse(%q) = %v, %v; want an error containing %q", tc.input, got, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Parse(%q) = %#v, %v; want %#v", tc.input, got, err, tc.want)
			}
		})
	}
}

func TestFormValidateAndDefaults(t *testing.T) {
	f, err := ParseSchema([]byte(`{"type":"object","properties":{
		"name":{"type":"string","default":"John Doe"},
		"age":{"type":"integer","default":30},
		"secret":{"type":"string","format":"password"},
		"status":{"type":"string","enum":["active","inactive"],"default":"active"}},
		"required":["name","secret"]}`))
	if err != nil {
		t.Fatal(err)
	}
	d := f.Defaults()
	if want := map[string]any{"name": "John Doe", "age": int64(30), "status": "active"}; !reflect.DeepEqual(d, want) {
		t.Fatalf("Defaults = %v, want %v", d, want)
	}
	tests := []struct {
		name    string
		content map[string]any
		err     string
	}{
		{name: "complete", content: map[string]any{"name": "a", "secret": "s", "age": int64(3)}},
		{name: "a float integer is fine", content: map[string]any{"name": "a", "secret": "s", "age": 3.0}},
		{name: "required missing", content: map[string]any{"name": "a"}, err: "is required"},
		{name: "wrong type", content: map[string]any{"name": 3, "secret": "s"}, err: "must be text"},
		{name: "unknown field", content: map[string]any{"name": "a", "secret": "s", "x": "y"}, err: `"x"`},
		{name: "not a choice", content: map[string]any{"name": "a", "secret": "s", "status": "gone"}, err: "choices offered"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := f.Validate(tc.content)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("Validate = %v, want %q", err, tc.err)
			}
		})
	}
	sec := f.Fields[f.index("secret")]
	if got := sec.Show("hunter2"); strings.Contains(got, "hunter2") {
		t.Errorf("a secret is shown back: %q", got)
	}
}

// FuzzParseSchema: whatever a server sends as requestedSchema, parsing
// ends with a form or a SchemaError, and a parsed form's defaults pass
// its own validation.
func FuzzParseSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"string","default":"x"}},"required":["a"]}`,
		`{"type":"object","properties":{"c":{"type":"array","items":{"anyOf":[{"const":"x","title":"X"}]},"default":["x"]}}}`,
		`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":3,"default":2}}}`,
		`{"type":"object","properties":{"s":{"type":"string","oneOf":[{"const":"a","title":"A"}],"pattern":"^a$"}}}`,
		`{}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		form, err := ParseSchema(data)
		if err != nil {
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("error of another type: %v", err)
			}
			return
		}
		d := form.Defaults()
		for i := range form.Fields {
			fld := &form.Fields[i]
			if v, ok := d[fld.Name]; ok {
				if err := fld.Check(v); err != nil {
					t.Fatalf("default of %s fails its own check: %v", fld.Name, err)
				}
			}
		}
		if _, err := json.Marshal(d); err != nil {
			t.Fatalf("defaults do not encode: %v", err)
		}
	})
}

// TestCutText: a server's text is cut to 4 KiB and 40 lines, on a
// character boundary, and says so; a title over 4 KiB keeps its 4 KiB.
func TestCutText(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string
	}{
		{"short", "hello\nworld", "hello\nworld"},
		{"long", strings.Repeat("é", 3000), strings.Repeat("é", 2048) + "…"},
		{"tall", strings.Repeat("x\n", 100), strings.TrimSuffix(strings.Repeat("x\n", 40), "\n") + "…"},
		{"forty lines", strings.Repeat("x\n", 39) + "x", strings.Repeat("x\n", 39) + "x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := CutText(c.in); got != c.want {
				t.Errorf("CutText: %d bytes %q…, want %d bytes", len(got), got[:min(40, len(got))], len(c.want))
			}
		})
	}
	f, err := ParseSchema([]byte(`{"type":"object","properties":{"a":{"type":"string","title":"` + strings.Repeat("t", 5000) + `"}}}`))
	if err != nil || len(f.Fields[0].Title) != 4096+len("…") {
		t.Fatalf("title of %d bytes, %v", len(f.Fields[0].Title), err)
	}
}
