package responses

import (
	"encoding/json"
	"strings"
	"testing"
)

// Table of strict-mode rewrites (the strictTools option): every property
// required, optional ones nullable, no additional properties, at every
// depth; numbers and unknown keywords kept as written.
func TestStrictSchema(t *testing.T) {
	cases := []struct{ name, in, want, errSub string }{
		{"empty", ``, `{"additionalProperties":false,"properties":{},"required":[],"type":"object"}`, ""},
		{"object without properties", `{"type":"object"}`, `{"additionalProperties":false,"properties":{},"required":[],"type":"object"}`, ""},
		{"all required already", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
			`{"additionalProperties":false,"properties":{"a":{"type":"string"}},"required":["a"],"type":"object"}`, ""},
		{"optional becomes nullable", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer","minimum":1.50}},"required":["a"]}`,
			`{"additionalProperties":false,"properties":{"a":{"type":"string"},"b":{"minimum":1.50,"type":["integer","null"]}},"required":["a","b"],"type":"object"}`, ""},
		{"type list gains null once", `{"type":"object","properties":{"a":{"type":["string","number"]},"b":{"type":["string","null"]}}}`,
			`{"additionalProperties":false,"properties":{"a":{"type":["string","number","null"]},"b":{"type":["string","null"]}},"required":["a","b"],"type":"object"}`, ""},
		{"enum gains null", `{"type":"object","properties":{"mode":{"type":"string","enum":["a","b"]}}}`,
			`{"additionalProperties":false,"properties":{"mode":{"enum":["a","b",null],"type":["string","null"]}},"required":["mode"],"type":"object"}`, ""},
		{"untyped optional wrapped in anyOf", `{"type":"object","properties":{"x":{"$ref":"#/$defs/X"}},"$defs":{"X":{"type":"object","properties":{"n":{"type":"number"}}}}}`,
			`{"$defs":{"X":{"additionalProperties":false,"properties":{"n":{"type":["number","null"]}},"required":["n"],"type":"object"}},"additionalProperties":false,"properties":{"x":{"anyOf":[{"$ref":"#/$defs/X"},{"type":"null"}]}},"required":["x"],"type":"object"}`, ""},
		{"nested objects and arrays", `{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}},"additionalProperties":true}}},"required":["items"]}`,
			`{"additionalProperties":false,"properties":{"items":{"items":{"additionalProperties":false,"properties":{"k":{"type":["string","null"]}},"required":["k"],"type":"object"},"type":"array"}},"required":["items"],"type":"object"}`, ""},
		{"anyOf branches", `{"type":"object","properties":{"v":{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"string"}]}},"required":["v"]}`,
			`{"additionalProperties":false,"properties":{"v":{"anyOf":[{"additionalProperties":false,"properties":{"a":{"type":["string","null"]}},"required":["a"],"type":"object"},{"type":"string"}]}},"required":["v"],"type":"object"}`, ""},
		{"properties without type", `{"properties":{"a":{"type":"boolean"}}}`,
			`{"additionalProperties":false,"properties":{"a":{"type":["boolean","null"]}},"required":["a"]}`, ""},
		{"not an object", `[1]`, "", "not a JSON object"},
		{"trailing data", `{} {}`, "", "data after"},
		{"malformed", `{"type":`, "", "strict schema"},
		{"too deep", strings.Repeat(`{"type":"object","properties":{"a":`, 70) + `{}` + strings.Repeat(`}}`, 70), "", "nested too deeply"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := StrictSchema(json.RawMessage(c.in))
			if c.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), c.errSub) {
					t.Errorf("err %v, want one naming %q", err, c.errSub)
				}
				return
			}
			if err != nil || string(got) != c.want {
				t.Errorf("\n got %s %v\nwant %s", got, err, c.want)
			}
		})
	}
}

func FuzzStrictSchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"string","enum":["x",{"o":1}]}}}`))
	f.Add([]byte(`{"properties":{"a":true,"b":{"anyOf":[{"type":"object"}]}},"required":[1,"a"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := StrictSchema(data)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid output %s", out)
		}
		// The rewrite is idempotent.
		again, err := StrictSchema(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not idempotent:\n%s\n%s %v", out, again, err)
		}
	})
}
