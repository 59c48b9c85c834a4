package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// decodeCases is shared by the table test, the framing test and the fuzz
// seeds.
var decodeCases = []struct {
	name string
	in   string
	kind Kind   // when valid
	err  error  // sentinel when refused
	id   string // ID.String() of the result, or of a DecodeError
}{
	{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, KindRequest, nil, "1"},
	{"request string id", `{"jsonrpc":"2.0","id":"a-1","method":"ping","params":{}}`, KindRequest, nil, `"a-1"`},
	{"request negative id", `{"jsonrpc":"2.0","id":-7,"method":"ping"}`, KindRequest, nil, "-7"},
	{"request id zero", `{"jsonrpc":"2.0","id":0,"method":"ping"}`, KindRequest, nil, "0"},
	{"request escaped method", `{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`, KindRequest, nil, "1"},
	{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, KindNotification, nil, "null"},
	{"notification null params", `{"jsonrpc":"2.0","method":"n","params":null}`, KindNotification, nil, "null"},
	{"result", `{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}`, KindResponse, nil, "3"},
	{"error", `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope","data":[1]}}`, KindResponse, nil, "3"},
	{"error null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`, KindResponse, nil, "null"},
	{"error without id", `{"jsonrpc":"2.0","error":{"code":-32000,"message":"bad"}}`, KindResponse, nil, "null"},
	{"unknown member ignored", `{"jsonrpc":"2.0","id":1,"method":"m","extra":{"x":1}}`, KindRequest, nil, "1"},
	{"white space around", " \t{\"jsonrpc\" : \"2.0\", \"method\" : \"m\"}\r ", KindNotification, nil, "null"},
	{"member order", `{"method":"m","id":2,"jsonrpc":"2.0"}`, KindRequest, nil, "2"},
	{"unicode id", `{"jsonrpc":"2.0","id":"\u00e9\ud83d\ude00","method":"m"}`, KindRequest, nil, `"é😀"`},
	{"big id", `{"jsonrpc":"2.0","id":9223372036854775807,"method":"m"}`, KindRequest, nil, "9223372036854775807"},

	{"batch", `[{"jsonrpc":"2.0","id":1,"method":"m"}]`, 0, ErrBatch, "null"},
	{"empty batch", `[]`, 0, ErrBatch, "null"},
	{"bad batch", `[1,`, 0, ErrParse, "null"},
	{"not an object", `"hello"`, 0, ErrInvalid, "null"},
	{"empty", ``, 0, ErrParse, "null"},
	{"blank", `   `, 0, ErrParse, "null"},
	{"truncated", `{"jsonrpc":"2.0","id":1`, 0, ErrParse, "null"},
	{"trailing data", `{"jsonrpc":"2.0","method":"m"} {}`, 0, ErrParse, "null"},
	{"trailing comma", `{"jsonrpc":"2.0","method":"m",}`, 0, ErrParse, "null"},
	{"duplicate key", `{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`, 0, ErrParse, "null"},
	{"duplicate key other case", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"A":2}}`, 0, ErrParse, "null"},
	{"duplicate key escaped", `{"jsonrpc":"2.0","method":"m","params":{"a":1,"\u0061":2}}`, 0, ErrParse, "null"},
	{"duplicate key kelvin", `{"jsonrpc":"2.0","method":"m","params":{"k":1,"\u212a":2}}`, 0, ErrParse, "null"},
	{"duplicate nested deep", `{"jsonrpc":"2.0","method":"m","params":{"a":[{"b":{"c":1,"c":2}}]}}`, 0, ErrParse, "null"},
	{"invalid utf8", "{\"jsonrpc\":\"2.0\",\"method\":\"m\xff\"}", 0, ErrParse, "null"},
	{"lone surrogate", `{"jsonrpc":"2.0","method":"\ud800"}`, 0, ErrParse, "null"},
	{"control char", "{\"jsonrpc\":\"2.0\",\"method\":\"a\tb\"}", 0, ErrParse, "null"},
	{"bad escape", `{"jsonrpc":"2.0","method":"\x"}`, 0, ErrParse, "null"},
	{"bad number", `{"jsonrpc":"2.0","id":01,"method":"m"}`, 0, ErrParse, "null"},
	{"bad literal", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":tru}}`, 0, ErrParse, "null"},
	{"missing version", `{"id":1,"method":"m"}`, 0, ErrInvalid, "1"},
	{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"m"}`, 0, ErrInvalid, "1"},
	{"number version", `{"jsonrpc":2.0,"id":1,"method":"m"}`, 0, ErrInvalid, "1"},
	{"version case", `{"JSONRPC":"2.0","id":1,"method":"m"}`, 0, ErrInvalid, "1"},
	{"null request id", `{"jsonrpc":"2.0","id":null,"method":"m"}`, 0, ErrInvalid, "null"},
	{"fraction id", `{"jsonrpc":"2.0","id":1.5,"method":"m"}`, 0, ErrInvalid, "null"},
	{"exponent id", `{"jsonrpc":"2.0","id":1e3,"method":"m"}`, 0, ErrInvalid, "null"},
	{"bool id", `{"jsonrpc":"2.0","id":true,"method":"m"}`, 0, ErrInvalid, "null"},
	{"object id", `{"jsonrpc":"2.0","id":{},"method":"m"}`, 0, ErrInvalid, "null"},
	{"huge id", `{"jsonrpc":"2.0","id":9223372036854775808,"method":"m"}`, 0, ErrInvalid, "null"},
	{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, 0, ErrInvalid, "1"},
	{"number method", `{"jsonrpc":"2.0","id":1,"method":5}`, 0, ErrInvalid, "1"},
	{"array params", `{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}`, 0, ErrInvalid, "1"},
	{"string params", `{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}`, 0, ErrInvalid, "1"},
	{"method and result", `{"jsonrpc":"2.0","id":1,"method":"m","result":{}}`, 0, ErrInvalid, "1"},
	{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, 0, ErrInvalid, "1"},
	{"nothing", `{"jsonrpc":"2.0","id":1}`, 0, ErrInvalid, "1"},
	{"result without id", `{"jsonrpc":"2.0","result":{}}`, 0, ErrInvalid, "null"},
	{"result null id", `{"jsonrpc":"2.0","id":null,"result":{}}`, 0, ErrInvalid, "null"},
	{"array result", `{"jsonrpc":"2.0","id":1,"result":[]}`, 0, ErrInvalid, "1"},
	{"null result", `{"jsonrpc":"2.0","id":1,"result":null}`, 0, ErrInvalid, "1"},
	{"response params", `{"jsonrpc":"2.0","id":1,"result":{},"params":{}}`, 0, ErrInvalid, "1"},
	{"error no code", `{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}`, 0, ErrInvalid, "1"},
	{"error fraction code", `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}`, 0, ErrInvalid, "1"},
	{"error no message", `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, 0, ErrInvalid, "1"},
	{"error string", `{"jsonrpc":"2.0","id":1,"error":"x"}`, 0, ErrInvalid, "1"},
	{"error duplicate", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"code":2,"message":"x"}}`, 0, ErrParse, "null"},
	{"too deep", `{"jsonrpc":"2.0","method":"m","params":{"a":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}}`, 0, ErrParse, "null"},
}

func TestDecode(t *testing.T) {
	for _, c := range decodeCases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Decode([]byte(c.in))
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
				var de *DecodeError
				if !errors.As(err, &de) {
					t.Fatalf("err %T is not a *DecodeError", err)
				}
				if got := de.ID.String(); got != c.id {
					t.Errorf("DecodeError.ID = %s, want %s", got, c.id)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if m.Kind() != c.kind {
				t.Errorf("kind = %v, want %v", m.Kind(), c.kind)
			}
			if got := m.ID.String(); got != c.id {
				t.Errorf("id = %s, want %s", got, c.id)
			}
			// Re-encoding gives one line that decodes to the same message.
			enc, err := Encode(m)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if bytes.ContainsAny(enc, "\r\n") {
				t.Errorf("encoding spans lines: %s", enc)
			}
			m2, err := Decode(enc)
			if err != nil {
				t.Fatalf("decoding %s: %v", enc, err)
			}
			if !sameMessage(m, m2) {
				t.Errorf("round trip changed the message:\n%+v\n%+v", m, m2)
			}
		})
	}
}

func sameMessage(a, b *Message) bool {
	if a.ID != b.ID || a.Method != b.Method || !jsonEqual(a.Params, b.Params) || !jsonEqual(a.Result, b.Result) {
		return false
	}
	if (a.Error == nil) != (b.Error == nil) {
		return false
	}
	if a.Error != nil {
		return a.Error.Code == b.Error.Code && a.Error.Message == b.Error.Message && jsonEqual(a.Error.Data, b.Error.Data)
	}
	return true
}

func jsonEqual(a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return false
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}

func TestDecodeFields(t *testing.T) {
	m, err := Decode([]byte(`{"jsonrpc":"2.0","id":4,"error":{"code":-32022,"message":"Unsupported \"v\"","data":{"supported":["2026-07-28"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Error.Code != -32022 || m.Error.Message != `Unsupported "v"` || string(m.Error.Data) != `{"supported":["2026-07-28"]}` {
		t.Errorf("error = %+v", m.Error)
	}
	m, err = Decode([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := m.ID.Str(); !ok || s != "x" || m.Method != "tools/call" || string(m.Params) != `{"name":"a"}` {
		t.Errorf("message = %+v", m)
	}
}

func TestDecodeTooLarge(t *testing.T) {
	in := []byte(`{"jsonrpc":"2.0","method":"m","params":{"a":"` + strings.Repeat("x", 100) + `"}}`)
	if _, err := DecodeWith(in, DecodeOptions{MaxMessage: 50}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if _, err := DecodeWith(in, DecodeOptions{MaxMessage: len(in)}); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
}

func TestDuplicateKeysManyMembers(t *testing.T) {
	// Past foldLinearMax the map path must still catch a case variant.
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","method":"m","params":{`)
	for i := 0; i < 40; i++ {
		b.WriteString(`"k` + strings.Repeat("x", i) + `":1,`)
	}
	ok := b.String() + `"last":1}}`
	if _, err := Decode([]byte(ok)); err != nil {
		t.Fatalf("distinct keys: %v", err)
	}
	dup := b.String() + `"KXXX":1}}`
	if _, err := Decode([]byte(dup)); !errors.Is(err, ErrParse) {
		t.Fatalf("case variant past the linear bound: err = %v", err)
	}
}

func TestFoldKey(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b string
	}{
		{"ASCII letters", "abc", "ABC"},
		{"Kelvin sign", "k", "\u212a"},
		{"long s", "s", "\u017f"},
		{"sharp s and SS", "straße", "STRASSE"},
		{"accented letter", "é", "É"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if (foldKey(c.a) == foldKey(c.b)) != strings.EqualFold(c.a, c.b) {
				t.Errorf("foldKey disagrees with EqualFold for %q, %q", c.a, c.b)
			}
		})
	}
}

func TestIDJSON(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		ok   bool
	}{
		{"integer", `1`, true},
		{"string", `"x"`, true},
		{"white space around a number", ` -3 `, true},
		{"null", `null`, false},
		{"fraction", `1.0`, false},
		{"boolean", `true`, false},
		{"unterminated string", `"a`, false},
		{"two values", `1 2`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var id ID
			err := json.Unmarshal([]byte(c.in), &id)
			if (err == nil) != c.ok {
				t.Errorf("Unmarshal(%s): err = %v, want ok=%v", c.in, err, c.ok)
			}
		})
	}
	b, _ := json.Marshal(struct {
		A ID `json:"a"`
		B ID `json:"b"`
		C ID `json:"c"`
	}{Int64ID(5), StringID("q\""), ID{}})
	if string(b) != `{"a":5,"b":"q\"","c":null}` {
		t.Errorf("Marshal = %s", b)
	}
}

func TestEncode(t *testing.T) {
	cases := []struct {
		name string
		m    *Message
		want string
		err  bool
	}{
		{"request", &Message{ID: Int64ID(1), Method: "tools/list", Params: json.RawMessage(`{"cursor":"c"}`)}, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}}`, false},
		{"notification", &Message{Method: "notifications/initialized"}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, false},
		{"result", &Message{ID: StringID("a"), Result: json.RawMessage(`{}`)}, `{"jsonrpc":"2.0","id":"a","result":{}}`, false},
		{"error", &Message{ID: Int64ID(2), Error: &Error{Code: -32601, Message: "no\n\"such\""}}, `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no\n\"such\""}}`, false},
		{"error null id", &Message{Error: &Error{Code: -32700, Message: "x", Data: json.RawMessage(`"d"`)}}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x","data":"d"}}`, false},
		{"indented params compacted", &Message{Method: "m", Params: json.RawMessage("{\n  \"a\": \"b\\nc\"\n}")}, `{"jsonrpc":"2.0","method":"m","params":{"a":"b\nc"}}`, false},
		{"control chars in method", &Message{Method: "a\x01b\u2028"}, `{"jsonrpc":"2.0","method":"a\u0001b\u2028"}`, false},
		{"html and invalid utf-8 in an error message", &Message{ID: Int64ID(1), Error: &Error{Code: -1, Message: "<a>&\xff"}}, `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"\u003ca\u003e\u0026\ufffd"}}`, false},
		{"array params", &Message{Method: "m", Params: json.RawMessage(`[1]`)}, "", true},
		{"invalid params", &Message{Method: "m", Params: json.RawMessage(`{"a":}`)}, "", true},
		{"result without id", &Message{Result: json.RawMessage(`{}`)}, "", true},
		{"method and result", &Message{ID: Int64ID(1), Method: "m", Result: json.RawMessage(`{}`)}, "", true},
		{"empty", &Message{}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Encode(c.m)
			if c.err {
				if !errors.Is(err, ErrEncode) {
					t.Fatalf("err = %v, want ErrEncode", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
			if _, err := Decode(got); err != nil {
				t.Errorf("own output does not decode: %v", err)
			}
		})
	}
}

func TestConstructors(t *testing.T) {
	m, err := NewRequest(Int64ID(9), "tools/call", map[string]any{"name": "x"})
	if err != nil || string(m.Params) != `{"name":"x"}` || m.Kind() != KindRequest {
		t.Fatalf("NewRequest = %+v, %v", m, err)
	}
	n, err := NewNotification("n", nil)
	if err != nil || n.Params != nil || n.Kind() != KindNotification {
		t.Fatalf("NewNotification = %+v, %v", n, err)
	}
	r, err := NewResponse(Int64ID(9), struct{}{})
	if err != nil || string(r.Result) != `{}` || r.Kind() != KindResponse {
		t.Fatalf("NewResponse = %+v, %v", r, err)
	}
	if _, err := NewRequest(Int64ID(1), "m", func() {}); err == nil {
		t.Fatal("unencodable params accepted")
	}
}
