package jsonrpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"agent/internal/jsonscan"
	"agent/internal/strictjson"
)

// FuzzReadersAgree holds the project's three JSON readers, which share
// internal/jsonlex for their tokens, to encoding/json and to each other
// where their contracts meet (docs/design.md). This package is the one
// that sees all three; the import of jsonscan is the test's only.
//
//   - jsonscan accepts exactly what encoding/json accepts, up to its
//     nesting bound.
//   - What strictjson accepts, jsonscan accepts; what this package's
//     scanner accepts, strictjson accepts.
//   - On valid UTF-8 without escaped surrogates, the strict readers refuse
//     only repeated keys: strictjson keys that are equal, the scanner keys
//     equal under case folding. With escaped surrogates, a document with
//     keys distinct under folding gets the same verdict from both.
//   - What strictjson accepts decodes as encoding/json decodes it.
//
// Repeated keys and the nesting depth come from encoding/json's tokens,
// not from the readers under test.
func FuzzReadersAgree(f *testing.F) {
	seeds := []string{`{"a":[1,2,{"b":null}]}`, `{"a":1,"A":2}`, `"\ud83d\ude00"`, `"\ud800"`, "\"\xff\"", `[1e5,-0.5,true,false,null]`, " {\"k\" :\n[\"\\u212a\", {}]} ", strings.Repeat("[", 64) + strings.Repeat("]", 64), strings.Repeat("[", 65) + strings.Repeat("]", 65)}
	for _, c := range decodeCases {
		seeds = append(seeds, c.in)
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	const depth = 64
	surrogateEscape := regexp.MustCompile(`(?i)\\ud[89a-f]`)
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := json.Valid(data)
		exact, folded, deepest := keysAndDepth(data)

		var sc jsonscan.Scanner
		sc.Reset(string(data))
		sc.Skip()
		scan := sc.Done() == nil

		tree, err := strictjson.Parse(data, strictjson.Options{MaxDepth: depth})
		strict := err == nil

		s := scanner{data: data, maxDepth: depth}
		rpc := s.value(0) == nil
		if rpc {
			s.skipSpace()
			rpc = s.pos == len(data)
		}

		switch {
		case scan != (valid && deepest <= depth):
			t.Fatalf("%q: jsonscan %v, encoding/json %v at depth %d", data, scan, valid, deepest)
		case strict && (!scan || exact):
			t.Fatalf("%q: strictjson accepts, jsonscan %v, repeated keys %v", data, scan, exact)
		case rpc && (!strict || folded):
			t.Fatalf("%q: the scanner accepts, strictjson %v, keys repeated under folding %v", data, strict, folded)
		case scan && utf8.Valid(data) && !surrogateEscape.Match(data) && (strict == exact || rpc == folded):
			t.Fatalf("%q: strictjson %v with repeated keys %v, the scanner %v with folded repeats %v", data, strict, exact, rpc, folded)
		case strict && !folded && !rpc:
			t.Fatalf("%q: strictjson accepts, the scanner refuses keys distinct under folding", data)
		}
		if !strict {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("%q: encoding/json: %v", data, err)
		}
		if got := tree.Interface(); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: strictjson decodes %#v, encoding/json %#v", data, got, want)
		}
	})
}

// keysAndDepth walks encoding/json's tokens: whether an object repeats a
// key exactly or under case folding, and the deepest nesting of arrays and
// objects. On malformed input it reports what it saw before the error.
func keysAndDepth(data []byte) (exact, folded bool, deepest int) {
	type frame struct {
		object  bool
		keys    []string
		wantKey bool
	}
	var stack []*frame
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return exact, folded, deepest
		}
		if n := len(stack); n > 0 && stack[n-1].wantKey {
			if k, ok := tok.(string); ok {
				top := stack[n-1]
				for _, seen := range top.keys {
					exact = exact || seen == k
					folded = folded || strings.EqualFold(seen, k)
				}
				top.keys = append(top.keys, k)
				top.wantKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			stack = append(stack, &frame{object: tok == json.Delim('{'), wantKey: tok == json.Delim('{')})
			deepest = max(deepest, len(stack))
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: the object around it wants its next key.
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
}
