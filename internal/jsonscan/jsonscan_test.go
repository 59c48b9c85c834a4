package jsonscan

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func valid(s string) error {
	var sc Scanner
	sc.Reset(s)
	sc.Skip()
	return sc.Done()
}

func TestGrammar(t *testing.T) {
	good := []string{`{}`, `[]`, `null`, `true`, `false`, `0`, `-0.5e+10`, `"a\u00e9\ud83d\ude00\n"`, ` { "a" : [1, {"b": null}, "c"] } `, `[[[]]]`, `"\/"`}
	bad := []string{``, `{`, `{"a"}`, `{"a":1,}`, `[1,]`, `[1 2]`, `01`, `1.`, `-`, `1e`, `"abc`, `"\x"`, `"\u12"`, "\"a\x01\"", `nul`, `{"a":1}x`, `{1:2}`, `{null:2}`, `[,1]`, strings.Repeat("[", 65) + strings.Repeat("]", 65)}
	for _, s := range good {
		if err := valid(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range bad {
		if err := valid(s); !errors.Is(err, ErrSyntax) {
			t.Errorf("%q accepted", s)
		}
	}
	if err := valid(strings.Repeat("[", 64) + strings.Repeat("]", 64)); err != nil {
		t.Errorf("depth 64: %v", err)
	}
}

func TestWalk(t *testing.T) {
	var sc Scanner
	sc.Reset(`{"s":"x\"y","n":-12.7,"big":1e300,"z":null,"arr":[1,"two",{"k":[true]}],"o":{"in":"é"},"e":"\ud800"}`)
	got := map[string]any{}
	if !sc.Object() {
		t.Fatal(sc.Err())
	}
	for sc.More() {
		switch k := sc.Key(); k {
		case "s", "e":
			got[k] = sc.String()
		case "n", "big", "z":
			got[k] = sc.Int()
		case "arr":
			got[k] = sc.Raw()
		case "o":
			for sc.Object(); sc.More(); {
				sc.Key()
				got["in"] = sc.String()
			}
		}
	}
	if err := sc.Done(); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"s": `x"y`, "n": -12, "big": 1 << 62, "z": 0, "arr": `[1,"two",{"k":[true]}]`, "in": "é", "e": "\uFFFD"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	sc.Reset(`{"a":1}`)
	if sc.Array() || !errors.Is(sc.Err(), ErrSyntax) || sc.String() != "" || sc.More() {
		t.Error("after an error everything is zero")
	}
}

// A document without escapes decodes without allocating.
func TestNoAllocs(t *testing.T) {
	doc := `{"choices":[{"index":0,"delta":{"content":"hello"},"finish_reason":null}],"usage":null}`
	var sc Scanner
	n := testing.AllocsPerRun(100, func() {
		sc.Reset(doc)
		for sc.Object(); sc.More(); {
			sc.Key()
			sc.Skip()
		}
	})
	if n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func FuzzScanner(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":"c\u00e9"}]}`, `"\ud83d\ude00"`, `[1e5,-0.1,true,false,null]`, `{"a":"\n\t\\"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := valid(s)
		depthOK := strings.Count(s, "[")+strings.Count(s, "{") <= MaxDepth
		if err == nil && !json.Valid([]byte(s)) {
			t.Fatalf("accepted invalid %q", s)
		}
		if err != nil && depthOK && json.Valid([]byte(s)) {
			t.Fatalf("refused valid %q: %v", s, err)
		}
		// Strings decode as encoding/json decodes them.
		var want string
		if json.Unmarshal([]byte(s), &want) == nil {
			var sc Scanner
			sc.Reset(s)
			if got := sc.String(); sc.Done() != nil || got != want {
				t.Fatalf("%q: got %q want %q (%v)", s, got, want, sc.Err())
			}
		}
	})
}

// A chat-completion chunk as the providers' streams send it: the whole of
// it is walked and checked, strings come back as substrings.
const benchChunk = `{"id":"chatcmpl-9x2Yk7","object":"chat.completion.chunk","created":1700000000,"model":"model-name-1","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":12,"completion_tokens":-3,"ratio":0.25e-2}}`

// A tool-argument delta: a JSON text inside a string, so escapes on
// every quote.
const benchEscaped = `"{\"path\": \"internal/jsonscan/jsonscan.go\", \"old\": \"\\tsc.ws()\\n\", \"new\": \"\\tsc.ws() // caf\u00e9 \ud83d\ude00\\n\"}"`

func benchScan(b *testing.B, doc string, read func(*Scanner)) {
	var sc Scanner
	b.ReportAllocs()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		sc.Reset(doc)
		read(&sc)
		if sc.Done() != nil {
			b.Fatal(sc.Err())
		}
	}
}

func BenchmarkSkip(b *testing.B) { benchScan(b, benchChunk, (*Scanner).Skip) }

func BenchmarkStringEscaped(b *testing.B) {
	benchScan(b, benchEscaped, func(sc *Scanner) { _ = sc.String() })
}
