package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzDecode: Decode never panics; what it accepts re-encodes to one line
// that decodes to the same message, is valid JSON for encoding/json, and
// has no duplicate keys.
func FuzzDecode(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeWith(data, DecodeOptions{MaxMessage: 1 << 16, MaxDepth: 32})
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError", err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		enc, err := Encode(m)
		if err != nil {
			t.Fatalf("accepted message does not encode: %v", err)
		}
		if bytes.ContainsAny(enc, "\r\n") {
			t.Fatalf("encoding spans lines: %q", enc)
		}
		m2, err := Decode(enc)
		if err != nil {
			t.Fatalf("own encoding %q does not decode: %v", enc, err)
		}
		if !sameMessage(m, m2) {
			t.Fatalf("round trip changed %q into %q", data, enc)
		}
	})
}

// FuzzReader: framing never panics, never returns more than the bound,
// and gives the same messages whatever the chunking of the input.
func FuzzReader(f *testing.F) {
	for _, c := range frameCases {
		f.Add([]byte(c.in), uint8(3))
	}
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\n\r\n{"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		const max = 256
		read := func(r io.Reader) []string {
			fr := NewReader(r, ReaderOptions{MaxMessage: max})
			var out []string
			for i := 0; i < len(data)+2; i++ {
				line, err := fr.ReadLine()
				if err == io.EOF {
					return out
				}
				if err != nil {
					if !errors.Is(err, ErrTooLarge) {
						t.Fatalf("unexpected error %v", err)
					}
					out = append(out, "too large")
					continue
				}
				if len(line) > max {
					t.Fatalf("line of %d bytes over the bound %d", len(line), max)
				}
				if bytes.IndexByte(line, '\n') >= 0 {
					t.Fatalf("line contains a newline: %q", line)
				}
				m, err := DecodeWith(line, DecodeOptions{MaxMessage: max})
				out = append(out, summarize(m, err))
			}
			t.Fatal("reader does not reach EOF")
			return nil
		}
		whole := read(bytes.NewReader(data))
		n := int(chunk%16) + 1
		var chunks [][]byte
		for rest := data; len(rest) > 0; {
			k := min(n, len(rest))
			chunks = append(chunks, bytes.Clone(rest[:k]))
			rest = rest[k:]
		}
		split := read(&splitReader{chunks: chunks})
		if strings.Join(whole, "|") != strings.Join(split, "|") {
			t.Fatalf("chunking changed the result:\n%q\n%q", whole, split)
		}
	})
}
