package jsonschema

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"agent/internal/strictjson"
)

// submitSchema is the input schema of agent_submit (docs/reference/mcp.md,
// "Served tools and agent_submit").
const submitSchema = `{"type":"object","properties":{"prompt":{"type":"string","minLength":1}},"required":["prompt"],"additionalProperties":false}`

const editSchema = `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "minLength": 1, "description": "path"},
    "old_string": {"type": "string"},
    "new_string": {"type": "string"},
    "replace_all": {"type": "boolean", "default": false}
  },
  "required": ["file_path", "old_string", "new_string"],
  "additionalProperties": false
}`

func problems(t *testing.T, schema, doc string) []string {
	t.Helper()
	s, err := Compile([]byte(schema), Options{})
	if err != nil {
		t.Fatalf("compile %s: %v", schema, err)
	}
	err = s.Validate([]byte(doc))
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("validate %s: %v", doc, err)
	}
	out := make([]string, len(ve.Problems))
	for i, p := range ve.Problems {
		out[i] = p.String()
	}
	return out
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name, schema, doc string
		want              []string
	}{
		{"submit ok", submitSchema, `{"prompt":"hi"}`, nil},
		{"submit empty", submitSchema, `{"prompt":""}`, []string{"$.prompt: must be at least 1 characters long, found 0"}},
		{"submit missing", submitSchema, `{}`, []string{"$.prompt: required property is missing"}},
		{"submit extra", submitSchema, `{"prompt":"x","model":"y"}`, []string{"$.model: unknown property (known: prompt)"}},
		{"submit wrong type", submitSchema, `{"prompt":3}`, []string{"$.prompt: expected a string, found the number 3"}},
		{"submit not object", submitSchema, `[]`, []string{"$: expected an object, found an array"}},
		{"edit every problem", editSchema, `{"file_path":"","old_string":1,"replace_all":"yes","x":null}`, []string{
			"$.new_string: required property is missing",
			"$.file_path: must be at least 1 characters long, found 0",
			"$.old_string: expected a string, found the number 1",
			"$.replace_all: expected a boolean, found a string",
			"$.x: unknown property (known: file_path, new_string, old_string, replace_all)",
		}},
		{"type array", `{"type":["string","null"]}`, `null`, nil},
		{"type array bad", `{"type":["string","null"]}`, `1`, []string{"$: expected null or a string, found the number 1"}},
		{"integer ok", `{"type":"integer"}`, `3`, nil},
		{"integer with zero fraction", `{"type":"integer"}`, `3.0`, nil},
		{"integer exponent", `{"type":"integer"}`, `1e3`, nil},
		{"integer fraction", `{"type":"integer"}`, `3.5`, []string{"$: expected an integer, found the number 3.5"}},
		{"number accepts integer", `{"type":"number"}`, `3`, nil},
		{"enum ok", `{"enum":["content","count"]}`, `"count"`, nil},
		{"enum bad", `{"enum":["content","count",1]}`, `"x"`, []string{`$: must be one of "content", "count", 1`}},
		{"enum numbers by value", `{"enum":[1,2]}`, `1.0`, nil},
		{"enum objects any order", `{"enum":[{"a":1,"b":[true,null]}]}`, `{"b":[true,null],"a":1}`, nil},
		{"const", `{"const":"x"}`, `"y"`, []string{`$: must be "x"`}},
		{"const ok", `{"const":{"k":[1]}}`, `{"k":[1.0]}`, nil},
		{"maxLength runes", `{"maxLength":2}`, `"éé"`, nil},
		{"maxLength", `{"maxLength":2}`, `"abc"`, []string{"$: must be at most 2 characters long, found 3"}},
		{"length ignores non-strings", `{"minLength":2}`, `1`, nil},
		{"minimum", `{"minimum":1}`, `0`, []string{"$: must be at least 1, found 0"}},
		{"maximum", `{"maximum":600000}`, `600001`, []string{"$: must be at most 600000, found 600001"}},
		{"exclusive min", `{"exclusiveMinimum":0}`, `0`, []string{"$: must be greater than 0, found 0"}},
		{"exclusive max", `{"exclusiveMaximum":1.5}`, `1.5`, []string{"$: must be less than 1.5, found 1.5"}},
		{"bounds ok", `{"minimum":-1,"maximum":1,"exclusiveMaximum":2}`, `0.5`, nil},
		{"big integers exact", `{"maximum":9007199254740993}`, `9007199254740994`, []string{"$: must be at most 9007199254740993, found 9007199254740994"}},
		{"huge literal", `{"maximum":10}`, `1e400`, []string{"$: must be at most 10, found 1e400"}},
		{"multipleOf int", `{"multipleOf":3}`, `10`, []string{"$: must be a multiple of 3, found 10"}},
		{"multipleOf decimal", `{"multipleOf":0.01}`, `1.23`, nil},
		{"multipleOf decimal bad", `{"multipleOf":0.01}`, `1.234`, []string{"$: must be a multiple of 0.01, found 1.234"}},
		{"items", `{"type":"array","items":{"type":"string"}}`, `["a",1,"b",false]`, []string{
			"$[1]: expected a string, found the number 1", "$[3]: expected a string, found a boolean"}},
		{"min max items", `{"minItems":2,"maxItems":3}`, `[1]`, []string{"$: must have at least 2 items, found 1"}},
		{"max items", `{"maxItems":1}`, `[1,2]`, []string{"$: must have at most 1 items, found 2"}},
		{"unique", `{"uniqueItems":true}`, `[1,"1",1.0,{"a":1},{"a":1}]`, []string{
			"$[2]: duplicates item 0 (items must be unique)", "$[4]: duplicates item 3 (items must be unique)"}},
		{"unique false", `{"uniqueItems":false}`, `[1,1]`, nil},
		{"pattern unanchored", `{"pattern":"b+"}`, `"abbbc"`, nil},
		{"pattern", `{"pattern":"^[a-z]+$"}`, `"ab1"`, []string{`$: must match the pattern "^[a-z]+$"`}},
		{"anyOf ok", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `2`, nil},
		{"anyOf bad", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `true`, []string{
			"$: must match at least one of 2 alternatives (1: $: expected a string, found a boolean; 2: $: expected an integer, found a boolean)"}},
		{"oneOf one", `{"oneOf":[{"type":"string"},{"type":"number"}]}`, `2`, nil},
		{"oneOf two", `{"oneOf":[{"type":"integer"},{"type":"number"}]}`, `2`, []string{"$: must match exactly one of 2 alternatives, matches 1, 2"}},
		{"oneOf none", `{"oneOf":[{"type":"integer"},{"type":"null"}]}`, `"x"`, []string{
			"$: must match exactly one of 2 alternatives, matches none (1: $: expected an integer, found a string; 2: $: expected null, found a string)"}},
		{"allOf", `{"allOf":[{"minLength":2},{"pattern":"^a"}]}`, `"b"`, []string{
			"$: must be at least 2 characters long, found 1", `$: must match the pattern "^a"`}},
		{"not", `{"not":{"type":"null"}}`, `null`, []string{`$: must not match the schema given under "not"`}},
		{"not ok", `{"not":{"type":"null"}}`, `1`, nil},
		{"false schema", `false`, `1`, []string{"$: no value is allowed here"}},
		{"true schema", `true`, `{"a":[1]}`, nil},
		{"additional schema", `{"properties":{"a":{}},"additionalProperties":{"type":"integer"}}`, `{"a":"x","b":1,"c":"y"}`, []string{
			"$.c: expected an integer, found a string"}},
		{"pattern properties", `{"patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false}`, `{"x-a":"1","x-b":2,"y":0}`, []string{
			"$.x-b: expected a string, found the number 2", "$.y: unknown property"}},
		{"properties count", `{"minProperties":1,"maxProperties":1}`, `{}`, []string{"$: must have at least 1 properties, found 0"}},
		{"quoted path", `{"properties":{"a b":{"type":"string"}}}`, `{"a b":1}`, []string{`$["a b"]: expected a string, found the number 1`}},
		{"defs and ref", `{"$defs":{"p":{"type":"string","minLength":1}},"type":"object","properties":{"a":{"$ref":"#/$defs/p"},"b":{"$ref":"#/$defs/p"}}}`,
			`{"a":"","b":2}`, []string{"$.a: must be at least 1 characters long, found 0", "$.b: expected a string, found the number 2"}},
		{"definitions", `{"definitions":{"n":{"type":"null"}},"$ref":"#/definitions/n"}`, `0`, []string{"$: expected null, found the number 0"}},
		{"ref with siblings", `{"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s","maxLength":1}`, `"ab"`, []string{"$: must be at most 1 characters long, found 2"}},
		{"recursive ref", `{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}},"additionalProperties":false}`,
			`{"name":"a","children":[{"name":"b","children":[{"name":3}]}]}`, []string{"$.children[0].children[0].name: expected a string, found the number 3"}},
		{"pointer escapes", `{"$defs":{"a/b":{"type":"null"},"c~d":{"type":"null"}},"properties":{"x":{"$ref":"#/$defs/a~1b"},"y":{"$ref":"#/$defs/c~0d"}}}`,
			`{"x":1,"y":null}`, []string{"$.x: expected null, found the number 1"}},
		{"annotations ignored", `{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"t","description":"d","default":1,"examples":[1],"$comment":"c","format":"uri","deprecated":false,"readOnly":true}`, `"not a uri"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problems(t, tt.schema, tt.doc)
			if !slices.Equal(got, tt.want) {
				t.Errorf("problems:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestCompileRefusals(t *testing.T) {
	tests := []struct {
		name, schema, want string
		unsupported        bool
	}{
		{"unknown keyword", `{"type":"string","nullable":true}`, `schema $.nullable: keyword "nullable" is not supported`, true},
		{"if then else", `{"if":{}}`, `schema $.if: keyword "if" is not supported`, true},
		{"nested unknown", `{"properties":{"a":{"prefixItems":[]}}}`, `schema $.properties.a.prefixItems: keyword "prefixItems" is not supported`, true},
		{"tuple items", `{"items":[{}]}`, `schema $.items: the array form of items (tuples) is not supported`, true},
		{"draft4 exclusive", `{"exclusiveMinimum":true}`, `schema $.exclusiveMinimum: the boolean form (draft 4) is not supported; give the bound as a number`, true},
		{"remote ref", `{"$ref":"https://example.com/s.json"}`, `schema $.$ref: only local references (#/...) are supported, found "https://example.com/s.json"`, true},
		{"anchor ref", `{"$ref":"#foo"}`, `schema $.$ref: anchors are not supported, found "#foo"`, true},
		{"dangling ref", `{"$ref":"#/$defs/x"}`, `schema $.$ref: reference "#/$defs/x" points to nothing`, false},
		{"ref loop", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`, `schema $: the schema refers to itself without descending into the value ($ref loop)`, true},
		{"self ref", `{"anyOf":[{"$ref":"#"}]}`, `schema $: the schema refers to itself without descending into the value ($ref loop)`, true},
		{"ref loop below a property", `{"properties":{"a":{"$ref":"#/properties/a"}}}`, `schema $: the schema refers to itself without descending into the value ($ref loop)`, true},
		{"bad regex", `{"pattern":"(?=x)"}`, "", true},
		{"bad type", `{"type":"text"}`, `schema $.type: unknown type "text"`, false},
		{"duplicate type", `{"type":["string","string"]}`, `schema $.type[1]: duplicate type "string"`, false},
		{"empty type list", `{"type":[]}`, `schema $.type: expected at least one type`, false},
		{"required not strings", `{"required":[1]}`, `schema $.required[0]: expected a string`, false},
		{"required duplicate", `{"required":["a","a"]}`, `schema $.required[1]: duplicate "a"`, false},
		{"negative minLength", `{"minLength":-1}`, `schema $.minLength: expected a non-negative integer`, false},
		{"fraction maxItems", `{"maxItems":1.5}`, `schema $.maxItems: expected a non-negative integer`, false},
		{"multipleOf zero", `{"multipleOf":0}`, `schema $.multipleOf: must be greater than 0`, false},
		{"empty enum", `{"enum":[]}`, `schema $.enum: expected a non-empty array`, false},
		{"empty anyOf", `{"anyOf":[]}`, `schema $.anyOf: expected a non-empty array of schemas`, false},
		{"not a schema", `{"properties":{"a":1}}`, `schema $.properties.a: a schema must be an object or a boolean, found number`, false},
		{"nested $schema", `{"properties":{"a":{"$schema":"x"}}}`, `schema $.properties.a.$schema: $schema is supported only at the root`, true},
		{"not json", `{"type":`, "", false},
		{"duplicate keys", `{"type":"string","type":"number"}`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile([]byte(tt.schema), Options{})
			if err == nil {
				t.Fatal("compiled")
			}
			if tt.want != "" && err.Error() != tt.want {
				t.Errorf("error %q, want %q", err, tt.want)
			}
			if errors.Is(err, ErrUnsupported) != tt.unsupported {
				t.Errorf("errors.Is(ErrUnsupported) = %v, want %v (%v)", !tt.unsupported, tt.unsupported, err)
			}
		})
	}
}

func TestValidateNotJSON(t *testing.T) {
	s := MustCompile(submitSchema)
	for _, doc := range []string{``, `{"prompt":"a"`, `{"prompt":"a","prompt":"b"}`, `{"prompt":"a"} x`} {
		if err := s.Validate([]byte(doc)); !errors.Is(err, ErrNotJSON) {
			t.Errorf("%q: %v, want ErrNotJSON", doc, err)
		}
	}
}

func TestLimits(t *testing.T) {
	// A schema whose branches double at every level: 2^40 applications
	// without the step budget.
	var b strings.Builder
	b.WriteString(`{"$defs":{"d0":{"type":"null"}`)
	for i := 1; i <= 40; i++ {
		b.WriteString(`,"d` + strconv.Itoa(i) + `":{"anyOf":[{"$ref":"#/$defs/d` + strconv.Itoa(i-1) + `"},{"$ref":"#/$defs/d` + strconv.Itoa(i-1) + `"}]}`)
	}
	b.WriteString(`},"$ref":"#/$defs/d40"}`)
	s, err := Compile([]byte(b.String()), Options{MaxSteps: 10000})
	if err != nil {
		t.Fatal(err)
	}
	ps := s.ValidateValue(&strictjson.Value{Kind: strictjson.Bool})
	if len(ps) == 0 || !strings.Contains(ps[len(ps)-1].Msg, "validation stopped after 10000 steps") {
		t.Errorf("problems %v, want the step budget reported", ps)
	}
	// Even a valid document fails when the budget runs out.
	if ps := s.ValidateValue(&strictjson.Value{Kind: strictjson.Null}); len(ps) == 0 {
		t.Error("an unfinished validation passed")
	}

	// MaxProblems caps the report.
	s = MustCompile(`{"items":{"type":"string"}}`)
	s.opts.MaxProblems = 3
	if ps := s.ValidateValue(mustParse(t, `[1,2,3,4,5]`)); len(ps) != 3 {
		t.Errorf("%d problems, want 3", len(ps))
	}

	// MaxDepth stops deep recursion through $ref.
	s, err = Compile([]byte(`{"items":{"$ref":"#"}}`), Options{MaxDepth: 5})
	if err != nil {
		t.Fatal(err)
	}
	ps = s.ValidateValue(mustParse(t, `[[[[[[[[[[]]]]]]]]]]`))
	if len(ps) != 1 || !strings.Contains(ps[0].Msg, "nests deeper than 5") {
		t.Errorf("problems %v", ps)
	}

	// MaxBytes applies to documents.
	s, _ = Compile([]byte(`{}`), Options{MaxBytes: 8})
	if err := s.Validate([]byte(`"0123456789"`)); !errors.Is(err, ErrNotJSON) || !errors.Is(err, strictjson.ErrTooLarge) {
		t.Errorf("oversized document: %v", err)
	}
}

func mustParse(t testing.TB, s string) *strictjson.Value {
	t.Helper()
	v, err := strictjson.Parse([]byte(s), strictjson.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestConcurrentUse(t *testing.T) {
	s := MustCompile(editSchema)
	done := make(chan bool)
	for range 4 {
		go func() {
			for range 100 {
				if s.Validate([]byte(`{"file_path":"a","old_string":"b","new_string":"c"}`)) != nil {
					done <- false
					return
				}
			}
			done <- true
		}()
	}
	for range 4 {
		if !<-done {
			t.Error("validation failed")
		}
	}
}

func FuzzValidate(f *testing.F) {
	seeds := [][2]string{
		{submitSchema, `{"prompt":"hi"}`},
		{editSchema, `{"file_path":"a","old_string":"b","new_string":"c","replace_all":true}`},
		{`{"anyOf":[{"type":"string"},{"type":"integer","multipleOf":3}]}`, `9`},
		{`{"items":{"$ref":"#"},"uniqueItems":true}`, `[[],[[]],[]]`},
		{`{"patternProperties":{"^a":{"const":1}},"not":{"enum":[{}]}}`, `{"ab":1.0}`},
		{`{"oneOf":[{"minimum":1e308},{"exclusiveMaximum":-1e-308}]}`, `1e999`},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, schema, doc string) {
		s, err := Compile([]byte(schema), Options{MaxSteps: 20000})
		if err != nil {
			return
		}
		err1 := s.Validate([]byte(doc))
		err2 := s.Validate([]byte(doc))
		if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
			t.Fatalf("validation is not deterministic: %v vs %v", err1, err2)
		}
		var ve *ValidationError
		if errors.As(err1, &ve) {
			if len(ve.Problems) == 0 || len(ve.Problems) > DefaultMaxProblems+1 {
				t.Fatalf("%d problems", len(ve.Problems))
			}
			for _, p := range ve.Problems {
				if !strings.HasPrefix(string(p.Path), "$") {
					t.Fatalf("problem path %q", p.Path)
				}
			}
		}
		// The schema true accepts every parseable document.
		if err := MustCompile(`true`).Validate([]byte(doc)); err != nil && !errors.Is(err, ErrNotJSON) {
			t.Fatalf("true schema refused %q: %v", doc, err)
		}
	})
}

func BenchmarkValidateToolCall(b *testing.B) {
	s := MustCompile(editSchema)
	doc := []byte(`{"file_path":"internal/jsonschema/validate.go","old_string":"func (r *run) apply(","new_string":"func (r *run) applyNode(","replace_all":false}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateParsed(b *testing.B) {
	s := MustCompile(editSchema)
	v := mustParse(b, `{"file_path":"internal/jsonschema/validate.go","old_string":"func (r *run) apply(","new_string":"func (r *run) applyNode(","replace_all":false}`)
	b.ReportAllocs()
	for b.Loop() {
		if ps := s.ValidateValue(v); ps != nil {
			b.Fatal(ps)
		}
	}
}
