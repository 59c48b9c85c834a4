package keys

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkEvents verifies what every decoded event promises.
func checkEvents(t *testing.T, evs []Event) {
	t.Helper()
	for _, e := range evs {
		switch e.Kind {
		case EventKey:
			if e.Stroke.Canonical() != e.Stroke || e.Stroke.Key == 0 {
				t.Fatalf("non-canonical stroke %+v", e.Stroke)
			}
			if e.Rune != 0 && (!utf8.ValidRune(e.Rune) || e.Rune < 0x20 || e.Stroke.Mod&^ModShift != 0) {
				t.Fatalf("bad rune %U on %s", e.Rune, e.Stroke)
			}
		case EventPaste:
			if !utf8.ValidString(e.Text) {
				t.Fatalf("paste not UTF-8: %q", e.Text)
			}
			for _, r := range e.Text {
				if r < 0x20 && r != '\t' && r != '\n' || r >= 0x7f && r < 0xa0 {
					t.Fatalf("control %U in paste %q", r, e.Text)
				}
			}
		case EventKittyFlags, EventDeviceAttributes:
		default:
			t.Fatalf("internal event kind %d leaked", e.Kind)
		}
	}
}

func FuzzDecoder(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(strings.Join(c.in, "")), uint16(len(c.in[0])/2), uint16(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, s1, s2 uint16) {
		var d Decoder
		want := d.Flush(d.Feed(nil, data))
		checkEvents(t, want)
		if d.Pending() {
			t.Fatal("pending after Flush")
		}
		i := int(s1) % (len(data) + 1)
		j := i + int(s2)%(len(data)-i+1)
		var e Decoder
		var got []Event
		for _, chunk := range [][]byte{data[:i], data[i:j], data[j:]} {
			got = e.Feed(got, chunk)
			if len(e.pend) > maxPend || len(e.paste) > e.maxPaste() {
				t.Fatalf("held %d bytes", len(e.pend))
			}
		}
		got = e.Flush(got)
		if !slices.Equal(describeAll(got), describeAll(want)) {
			t.Fatalf("split at %d,%d:\n got  %q\n want %q", i, j, describeAll(got), describeAll(want))
		}
	})
}

func FuzzParseSequence(f *testing.F) {
	for _, c := range keyStringCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseSequence(s)
		if err != nil {
			var ke *KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		if q.First.Canonical() != q.First || q.Second.Canonical() != q.Second || q.First == (Stroke{}) {
			t.Fatalf("%q: not canonical: %+v", s, q)
		}
		r, err := ParseSequence(q.String())
		if err != nil || r != q {
			t.Fatalf("%q: canonical %q parses to %+v, %v", s, q.String(), r, err)
		}
		if q.Display() == "" {
			t.Fatalf("%q: empty display form", s)
		}
	})
}

func FuzzParseFile(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "files", "*.json"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		km, problems := ParseFile(data)
		if (km != nil) == HasErrors(problems) {
			t.Fatalf("keymap %v with problems %v", km != nil, problems)
		}
		for i, p := range problems {
			if !strings.HasPrefix(string(p.Path), "$") || p.Msg == "" || p.Line < 1 || p.Col < 1 {
				t.Fatalf("problem without location or message: %+v", p)
			}
			if i > 0 && (p.Line < problems[i-1].Line || p.Line == problems[i-1].Line && p.Col < problems[i-1].Col) {
				t.Fatalf("problems out of order: %v", problems)
			}
		}
		_, again := ParseFile(data)
		if !slices.Equal(again, problems) {
			t.Fatal("not deterministic")
		}
		if km == nil {
			return
		}
		// Every bound key resolves to its action, and no single stroke is
		// also a chord prefix (docs/reference/keybindings.md, "Validity
		// rules").
		for c := range Context(NumContexts) {
			for _, a := range c.Actions() {
				for _, q := range km.Keys(c, a) {
					var got Action
					var ok bool
					if q.IsChord() {
						got, ok = km.LookupChord(c, q.First, q.Second)
					} else {
						got, ok = km.Lookup(c, q.First)
						if km.IsPrefix(c, q.First) {
							t.Fatalf("%s: %s is bound alone and as a prefix", c, q)
						}
					}
					if !ok || got != a {
						t.Fatalf("%s.%s: %s resolves to %q, %v", c, a, q, got, ok)
					}
				}
			}
		}
	})
}
