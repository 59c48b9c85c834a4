package strictjson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+3`, `-12.25E-2`, `""`,
		`{"a":1,"b":[1,2,{"c":null}]}`,
		`"\u00e9\ud83d\ude00\n\t\"\\\/"`,
		" \r\n\t{ \"a\" : \"b\" } \n",
		`{"a":1,"A":2}`, // keys differ by case: distinct keys
	} {
		if _, err := Parse([]byte(in), Options{}); err != nil {
			t.Errorf("Parse(%q): %v", in, err)
		}
		// Everything we accept, encoding/json accepts too.
		if !json.Valid([]byte(in)) {
			t.Errorf("encoding/json rejects %q, which Parse accepted", in)
		}
	}
}

func TestParseInvalid(t *testing.T) {
	cases := []struct {
		name      string
		in        string
		line, col int
		msg       string
	}{
		{"empty", ``, 1, 1, "empty document"},
		{"only white space", `   `, 1, 4, "empty document"},
		{"duplicate key", `{"a":1,"a":2}`, 1, 8, `duplicate key "a"`},
		{"duplicate key in a nested object on line 3", "{\n  \"x\": {\"k\": 1,\n  \"k\": 2}}", 3, 3, `duplicate key "k"`},
		{"data after the value", `{"a":1} x`, 1, 9, "unexpected data after the top-level value"},
		{"a second value", `{"a":1}{}`, 1, 8, "unexpected data"},
		{"trailing comma in an object", `{"a":1,}`, 1, 8, "expected a string key"},
		{"trailing comma in an array", `[1,]`, 1, 4, "unexpected character"},
		{"missing comma", `[1 2]`, 1, 4, "expected ',' or ']'"},
		{"missing colon", `{"a" 1}`, 1, 6, "expected ':'"},
		{"single-quoted key", `{'a':1}`, 1, 2, "expected a string key"},
		{"leading zero", `01`, 1, 2, "unexpected data"},
		{"no fraction digits", `1.`, 1, 3, "digits expected after '.'"},
		{"no exponent digits", `1e`, 1, 3, "digits expected in exponent"},
		{"minus alone", `-`, 1, 2, "invalid number"},
		{"plus sign", `+1`, 1, 1, "unexpected character"},
		{"truncated true", `tru`, 1, 1, "invalid literal"},
		{"truncated null", `nul`, 1, 1, "invalid literal"},
		{"NaN", `NaN`, 1, 1, "unexpected character"},
		{"control character", "\"a\x01\"", 1, 3, "control character"},
		{"raw newline in a string", "\"a\nb\"", 1, 3, "control character"},
		{"invalid escape", `"\x"`, 1, 2, "invalid escape"},
		{"bad hex digit", `"\u12G4"`, 1, 2, "invalid \\u escape"},
		{"lone high surrogate", `"\ud800"`, 1, 8, "unpaired surrogate"},
		{"lone low surrogate", `"\udc00"`, 1, 8, "unpaired surrogate"},
		{"high surrogate before a non-surrogate", `"\ud800\u0041"`, 1, 8, "unpaired surrogate"},
		{"invalid UTF-8", "\"\xff\"", 1, 2, "invalid UTF-8"},
		{"unterminated string", `"abc`, 1, 5, "unterminated string"},
		{"end inside an object", `{"a":`, 1, 6, "unexpected end of input"},
		{"end inside an array", `[`, 1, 2, "unexpected end of input"},
		{"byte order mark", "\xef\xbb\xbf{}", 1, 1, "unexpected character"},
		{"comment", `/* c */ {}`, 1, 1, "unexpected character"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.in), Options{})
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Errorf("Parse(%q) = %v, want a SyntaxError", c.in, err)
				return
			}
			if se.Line != c.line || se.Col != c.col || !strings.Contains(se.Msg, c.msg) {
				t.Errorf("Parse(%q) = %v, want line %d column %d with %q", c.in, err, c.line, c.col, c.msg)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	big := `"` + strings.Repeat("a", 100) + `"`
	if _, err := Parse([]byte(big), Options{MaxBytes: 50}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversize: got %v, want ErrTooLarge", err)
	}
	deep := strings.Repeat("[", 10) + strings.Repeat("]", 10)
	if _, err := Parse([]byte(deep), Options{MaxDepth: 10}); err != nil {
		t.Fatalf("depth 10 with limit 10: %v", err)
	}
	if _, err := Parse([]byte("["+deep+"]"), Options{MaxDepth: 10}); err == nil || !strings.Contains(err.Error(), "nesting deeper") {
		t.Fatalf("depth 11 with limit 10: got %v", err)
	}
	// The default depth bound stops a stack-exhaustion document.
	bomb := strings.Repeat("[", 100000)
	if _, err := Parse([]byte(bomb), Options{}); err == nil {
		t.Fatal("deep nesting bomb accepted")
	}
}

func TestManyKeysDuplicate(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 40 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":1`)
	}
	b.WriteString(`,"kbb":2}`)
	if _, err := Parse([]byte(b.String()), Options{}); err == nil || !strings.Contains(err.Error(), "duplicate key") {
		t.Fatalf("duplicate after many keys: got %v", err)
	}
}

type inner struct {
	Port int `json:"port"`
}

type target struct {
	Name    string            `json:"name"`
	Aud     []string          `json:"aud,omitempty"`
	Count   int64             `json:"count"`
	Ratio   float64           `json:"ratio"`
	On      bool              `json:"on"`
	Inner   *inner            `json:"inner"`
	Env     map[string]string `json:"env"`
	Raw     json.RawMessage   `json:"raw"`
	Any     any               `json:"any"`
	Skipped string            `json:"-"`
	inner2
}

type inner2 struct {
	Flat string `json:"flat"`
}

func TestUnmarshal(t *testing.T) {
	var v target
	in := `{"name":"x","aud":["a","b"],"count":3,"ratio":0.5,"on":true,"inner":{"port":8},
		"env":{"A":"1"},"raw":{"any":[1,{"x":2}]},"any":[true],"flat":"f"}`
	if err := Unmarshal([]byte(in), &v, Options{}); err != nil {
		t.Fatal(err)
	}
	if v.Name != "x" || len(v.Aud) != 2 || v.Count != 3 || v.Inner.Port != 8 || v.Env["A"] != "1" || v.Flat != "f" {
		t.Fatalf("decoded %+v", v)
	}
}

func TestUnmarshalRefusals(t *testing.T) {
	cases := []struct {
		name     string
		in, want string
	}{
		{"a field name capitalized", `{"Name":"x"}`, `$.Name: unknown field`},
		{"a field name in upper case", `{"NAME":"x"}`, `$.NAME: unknown field`},
		{"duplicate key", `{"name":"x","name":"y"}`, `duplicate key "name"`},
		{"unknown field", `{"extra":1}`, `$.extra: unknown field`},
		{"unknown field in a nested object", `{"inner":{"Port":1}}`, `$.inner.Port: unknown field`},
		{"number for a string", `{"name":1}`, `$.name: expected a string, found number`},
		{"fraction for an integer", `{"count":1.5}`, `$.count: expected an integer within range`},
		{"string for an integer", `{"count":"1"}`, `$.count: expected an integer, found string`},
		{"integer out of range", `{"count":99999999999999999999}`, `$.count: expected an integer within range`},
		{"string for a boolean", `{"on":"true"}`, `$.on: expected a boolean`},
		{"string for an array", `{"aud":"a"}`, `$.aud: expected an array, found string`},
		{"number in a string array", `{"aud":[1]}`, `$.aud[0]: expected a string`},
		{"number in a string map", `{"env":{"A":1}}`, `$.env.A: expected a string`},
		{"map key that needs quoting in the path", `{"env":{"a b":1}}`, `$.env["a b"]: expected a string`},
		{"null for a string", `{"name":null}`, `$.name: expected a string, found null`},
		{"float out of range", `{"ratio":1e400}`, `$.ratio: number out of range`},
		{"array for the object", `[]`, `$: expected an object, found array`},
		{"field tagged - by its lower-case name", `{"skipped":"x"}`, `$.skipped: unknown field`},
		{"field tagged - by its Go name", `{"Skipped":"x"}`, `$.Skipped: unknown field`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var v target
			err := Unmarshal([]byte(c.in), &v, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Unmarshal(%s) = %v, want %q", c.in, err, c.want)
			}
		})
	}
}

func TestUnmarshalNeedsPointer(t *testing.T) {
	var v target
	if err := Unmarshal([]byte(`{}`), v, Options{}); err == nil {
		t.Fatal("non-pointer accepted")
	}
}

func TestPath(t *testing.T) {
	cases := []struct {
		name string
		path Path
		want Path
	}{
		{"dot notation", Root.Key("bindings").Key("chat-input").Key("submit").Index(1), "$.bindings.chat-input.submit[1]"},
		{"bracket form", Root.Key("a.b").Key(""), `$["a.b"][""]`},
		{"a key at the quote limit stays whole", Root.Key(strings.Repeat("k", 80)), Path("$." + strings.Repeat("k", 80))},
		{"a longer key is cut", Root.Key(strings.Repeat("k", 300_000)).Key("x"), Path(`$["` + strings.Repeat("k", 80) + `"… (300000 bytes)].x`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.path != tc.want {
				t.Errorf("%.200s, want %.200s", tc.path, tc.want)
			}
		})
	}
}

func TestValueHelpers(t *testing.T) {
	v, err := Parse([]byte(`{"i":42,"f":1.5,"e":1e2,"s":"x"}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := v.Get("i").Int(); !ok || n != 42 {
		t.Fatal("Int")
	}
	if _, ok := v.Get("f").Int(); ok {
		t.Fatal("1.5 is not an integer")
	}
	if n, ok := v.Get("e").Int(); !ok || n != 100 {
		t.Fatal("1e2 is the integer 100")
	}
	if _, ok := v.Get("s").Int(); ok {
		t.Fatal("string is not a number")
	}
	if v.Get("missing") != nil || v.Get("s").Get("x") != nil {
		t.Fatal("Get")
	}
}

// FuzzParse checks that Parse never panics, that everything it accepts is
// valid JSON to encoding/json, and that it never accepts a document with a
// duplicate key.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":null}]}`, `{"a":1,"a":2}`, `"\ud83d\ude00"`, `[1e5,-0.5,true]`, "{\n\"x\":\"\\u0000\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data, Options{MaxBytes: 1 << 16})
		if err != nil {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("Parse accepted %q, encoding/json rejects it", data)
		}
		var walk func(*Value)
		walk = func(v *Value) {
			seen := map[string]bool{}
			for _, m := range v.Members {
				if seen[m.Key] {
					t.Fatalf("duplicate key %q accepted", m.Key)
				}
				seen[m.Key] = true
				walk(m.Value)
			}
			for _, it := range v.Items {
				walk(it)
			}
		}
		walk(v)
	})
}

func BenchmarkParse(b *testing.B) {
	doc := []byte(`{"mcpServers":{"a":{"type":"http","url":"https://example.invalid/mcp","headers":{"X":"y"}},"b":{"type":"stdio","command":"srv","args":["--x","1"]}},"permissions":{"allow":["Read","Bash(go test *)"]}}`)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := Parse(doc, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// A settings file as people write it: indented, one member a line, so that
// white space and line counting are a real part of the work.
func BenchmarkParseIndented(b *testing.B) {
	doc := []byte(`{
  "mcpServers": {
    "a": {
      "type": "http",
      "url": "https://example.invalid/mcp",
      "headers": {"X": "y"}
    },
    "b": {
      "type": "stdio",
      "command": "srv",
      "args": ["--x", "1", "caf\u00e9"]
    }
  },
  "permissions": {
    "allow": ["Read", "Bash(go test *)"],
    "deny": ["Bash(rm -rf *)"]
  },
  "timeout": 1.5e3
}
`)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := Parse(doc, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
