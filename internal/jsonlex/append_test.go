package jsonlex

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAppendString(t *testing.T) {
	cases := []struct{ name, in string }{
		{"empty", ""},
		{"plain ASCII", "hello, world"},
		{"quote and backslash", `say "hi" \ there`},
		{"newline, return, tab", "a\nb\rc\td"},
		{"other control characters", "\x00\x01\x1f\x7f"},
		{"backspace and form feed", "\b\f"},
		{"HTML characters", "<script>&</script>"},
		{"multi-byte UTF-8", "héllo, 世界, 🎉"},
		{"line and paragraph separators", "a\u2028b\u2029c"},
		{"invalid UTF-8", "a\xffb\xc3"},
		{"a cut multi-byte character at the end", "ok\xe4\xb8"},
		{"long plain text", strings.Repeat("output line of a tool\n", 100)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, _ := json.Marshal(c.in)
			if got := AppendString(nil, c.in); string(got) != string(want) {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}

// FuzzAppendString: the same bytes as encoding/json, for any input.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\x00", "<&>", "\u2028", "\xff", "世界"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString([]byte("x"), s); string(got[1:]) != string(want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got[1:], want)
		}
	})
}

func BenchmarkAppendString(b *testing.B) {
	s := strings.Repeat("     1\tline of file 0 with some words in it\n", 2000)
	buf := make([]byte, 0, 2*len(s))
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = AppendString(buf[:0], s)
	}
}

func BenchmarkMarshalString(b *testing.B) {
	s := strings.Repeat("     1\tline of file 0 with some words in it\n", 2000)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		json.Marshal(s)
	}
}
