// Package quote cuts a value from outside to a readable length before a
// diagnostic quotes it: an error that echoes a 1 MB argument, line or
// JSON-RPC id would otherwise flood the terminal, the log or the answer
// that carries it. A quoted value keeps its first Max bytes (on a UTF-8
// boundary) and says how long it was.
//
// Imports: standard library only.
package quote

import (
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// Max is how much of a value a diagnostic shows.
const Max = 80

// Q is strconv.Quote of s cut to Max bytes: `"abc…" (1048576 bytes)`.
func Q(s string) string {
	if len(s) <= Max {
		return strconv.Quote(s)
	}
	return strconv.Quote(Prefix(s)) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// Cut is s cut to Max bytes, unquoted, with the same note.
func Cut(s string) string {
	if len(s) <= Max {
		return s
	}
	return Prefix(s) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// Prefix is the longest prefix of s of at most Max bytes that does not
// split a UTF-8 sequence.
func Prefix(s string) string { return PrefixN(s, Max) }

// PrefixN is the longest prefix of s of at most n bytes that does not
// split a UTF-8 sequence.
func PrefixN(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := max(n, 0)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// V wraps x for a format verb: strings, byte slices, errors and
// fmt.Stringers are cut (%q quotes, as Q; other verbs as Cut); anything
// else is formatted as fmt would.
func V(x any) fmt.Formatter { return value{x} }

type value struct{ x any }

func (v value) Format(f fmt.State, verb rune) {
	var s string
	switch x := v.x.(type) {
	case string:
		s = x
	case []byte:
		s = string(x)
	case error:
		s = x.Error()
	case fmt.Stringer:
		s = x.String()
	default:
		fmt.Fprintf(f, fmt.FormatString(f, verb), v.x)
		return
	}
	if verb == 'q' {
		io.WriteString(f, Q(s))
		return
	}
	io.WriteString(f, Cut(s))
}
