package quote

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

type stringer string

func (s stringer) String() string { return string(s) }

func TestQuotesAreCut(t *testing.T) {
	long := strings.Repeat("a", 1<<20)
	cases := []struct {
		name string
		got  string
		want string
	}{
		{"short string", Q("hi\n"), `"hi\n"`},
		{"exactly Max", Q(strings.Repeat("b", Max)), `"` + strings.Repeat("b", Max) + `"`},
		{"1 MiB", Q(long), `"` + strings.Repeat("a", Max) + `"… (1048576 bytes)`},
		{"cut on a rune boundary", Q(strings.Repeat("a", Max-1) + "é" + "tail"), `"` + strings.Repeat("a", Max-1) + `"… (85 bytes)`},
		{"unquoted", Cut(long), strings.Repeat("a", Max) + "… (1048576 bytes)"},
		{"V with %q", fmt.Sprintf("%q", V(long)), Q(long)},
		{"V with %s", fmt.Sprintf("%s", V(long)), Cut(long)},
		{"V of bytes", fmt.Sprintf("%q", V([]byte("x"))), `"x"`},
		{"V of an error", fmt.Sprintf("%v", V(errors.New(long))), Cut(long)},
		{"V of a Stringer", fmt.Sprintf("%q", V(stringer(long))), Q(long)},
		{"V of a byte keeps %q as a character", fmt.Sprintf("%q", V(byte('x'))), `'x'`},
		{"V of an int", fmt.Sprintf("%d", V(42)), "42"},
		{"V with width", fmt.Sprintf("%5d", V(42)), "   42"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("%s, want %s", c.got, c.want)
			}
		})
	}
}

// TestPrefixN: a prefix of at most n bytes that never splits a character.
func TestPrefixN(t *testing.T) {
	cases := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"short", "abc", 5, "abc"},
		{"exact", "abc", 3, "abc"},
		{"cut", "abcdef", 4, "abcd"},
		{"before a two-byte character", "ab\u00e9", 3, "ab"},
		{"after it", "ab\u00e9c", 4, "ab\u00e9"},
		{"inside a four-byte character", "a\U0001F600", 3, "a"},
		{"nothing", "abc", 0, ""},
		{"below nothing", "abc", -1, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := PrefixN(c.s, c.n); got != c.want {
				t.Errorf("PrefixN(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
			}
		})
	}
}
