package jsonlex

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// scanned is the outcome of one scan, the same for string and []byte
// input.
type scanned struct {
	end int
	c   Content
	f   Fault
}

func scanString(in string, r Rules) scanned {
	end, c, f := String(in, 0, r)
	if e2, c2, f2 := String([]byte(in), 0, r); e2 != end || c2 != c || f2 != f {
		panic("string and []byte disagree on " + in)
	}
	return scanned{end, c, f}
}

func TestString(t *testing.T) {
	strict := CheckUTF8 | PairSurrogates
	cases := []struct {
		name  string
		in    string
		rules Rules
		want  scanned
	}{
		{"empty", `""`, strict, scanned{2, 0, None}},
		{"ends at the closing quote", `"abc" x`, strict, scanned{5, 0, None}},
		{"escaped quote", `"a\"b"`, strict, scanned{6, Escaped, None}},
		{"short escapes", `"\/\\\b\f\n\r\t"`, strict, scanned{16, Escaped, None}},
		{"non-ASCII", `"é"`, strict, scanned{4, NonASCII, None}},
		{"unicode escapes and a surrogate pair", `"\u00e9\ud83d\ude00"`, strict, scanned{20, Escaped, None}},
		{"DEL is no control character", "\"\x7f\"", strict, scanned{3, 0, None}},
		{"unterminated", `"abc`, strict, scanned{4, 0, Unterminated}},
		{"lone quote", `"`, strict, scanned{1, 0, Unterminated}},
		{"unterminated escape", `"ab\`, strict, scanned{3, Escaped, UnterminatedEscape}},
		{"control character", "\"a\x01\"", strict, scanned{2, 0, ControlChar}},
		{"raw newline", "\"a\nb\"", strict, scanned{2, 0, ControlChar}},
		{"bad escape", `"\x"`, strict, scanned{1, Escaped, BadEscape}},
		{"bad hex digit", `"\u12G4"`, strict, scanned{1, Escaped, BadHex}},
		{"short hex", `"\u12"`, strict, scanned{1, Escaped, BadHex}},
		{"lone high surrogate", `"\ud800"`, strict, scanned{7, Escaped, LoneSurrogate}},
		{"lone low surrogate", `"\udc00"`, strict, scanned{7, Escaped, LoneSurrogate}},
		{"high surrogate before a non-surrogate", `"\ud800\u0041"`, strict, scanned{7, Escaped, LoneSurrogate}},
		{"two high surrogates", `"\ud800\ud800"`, strict, scanned{7, Escaped, LoneSurrogate}},
		{"bad hex after a high surrogate", `"\ud800\u12"`, strict, scanned{7, Escaped, BadLowHex}},
		{"bad escape after a high surrogate", `"\ud800\x"`, strict, scanned{7, Escaped, LoneSurrogate}},
		{"invalid UTF-8", "\"a\xff\"", strict, scanned{2, NonASCII, BadUTF8}},
		{"encoded surrogate", "\"\xed\xa0\x80\"", strict, scanned{1, NonASCII, BadUTF8}},
		// Without rules surrogates and invalid UTF-8 pass; the grammar
		// still holds.
		{"no rules: lone surrogate passes", `"\ud800"`, 0, scanned{8, Escaped, None}},
		{"no rules: bad hex is still a fault", `"\ud800\u12"`, 0, scanned{7, Escaped, BadHex}},
		{"no rules: invalid UTF-8 passes", "\"a\xff\"", 0, scanned{4, NonASCII, None}},
		{"no rules: control character is still a fault", "\"a\xff\x01\"", 0, scanned{3, NonASCII, ControlChar}},
		{"surrogate rule alone: invalid UTF-8 passes, bad escape caught", "\"\xff\\x\"", PairSurrogates, scanned{2, NonASCII | Escaped, BadEscape}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := scanString(c.in, c.rules); got != c.want {
				t.Errorf("String(%q, %d) = %+v, want %+v", c.in, c.rules, got, c.want)
			}
			checkPlain(t, c.in)
		})
	}
}

// checkPlain: PlainString decides a string exactly when String finds it
// well-formed with nothing to decode or check.
func checkPlain(t *testing.T, in string) {
	end, c, f := String(in, 0, CheckUTF8|PairSurrogates)
	want := -1
	if f == None && c == 0 {
		want = end
	}
	if got := PlainString(in, 0); got != want || PlainString([]byte(in), 0) != want {
		t.Errorf("PlainString(%q) = %d, want %d", in, got, want)
	}
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		``:                     "",
		`abc`:                  "abc",
		`a\"b\\c\/d`:           `a"b\c/d`,
		`\b\f\n\r\t`:           "\b\f\n\r\t",
		`\u0041\u00e9\u20ac`:   "Aé€",
		`x\ud83d\ude00y`:       "x😀y",
		`\ud800`:               "\uFFFD",
		`\udc00\ud800`:         "\uFFFD\uFFFD",
		`\ud800\u0041`:         "\uFFFDA",
		`\ud800\ud83d\ude00`:   "\uFFFD😀",
		"caf\xc3\xa9 \\n \xff": "café \n \xff", // bytes pass as they are
	} {
		if got := Unescape(in); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
		if got := Unescape([]byte(in)); got != want {
			t.Errorf("Unescape([]byte(%q)) = %q, want %q", in, got, want)
		}
	}
}

func TestNumber(t *testing.T) {
	cases := []struct {
		name string
		in   string
		end  int
		f    Fault
	}{
		{"zero", `0`, 1, None},
		{"negative zero", `-0`, 2, None},
		{"ends before a comma", `12,`, 2, None},
		{"fraction and signed exponent", `1.5e+3]`, 6, None},
		{"capital E and negative exponent", `-12.25E-2`, 9, None},
		{"leading zero ends the number", `01`, 1, None}, // the number is 0; what follows is the reader's business
		{"minus alone", `-`, 1, NoDigits},
		{"minus then a letter", `-a`, 1, NoDigits},
		{"plus sign", `+1`, 0, NoDigits},
		{"no integer part", `.5`, 0, NoDigits},
		{"dot at the end", `1.`, 2, NoFractionDigits},
		{"dot then exponent", `1.e3`, 2, NoFractionDigits},
		{"e at the end", `1e`, 2, NoExponentDigits},
		{"exponent sign alone", `1e+`, 3, NoExponentDigits},
		{"exponent sign then a letter", `1.5E-x`, 5, NoExponentDigits},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			end, f := Number(c.in, 0)
			if end != c.end || f != c.f {
				t.Errorf("Number(%q) = %d, %v; want %d, %v", c.in, end, f, c.end, c.f)
			}
			if e2, f2 := Number([]byte(c.in), 0); e2 != end || f2 != f {
				t.Errorf("Number([]byte(%q)) differs", c.in)
			}
		})
	}
}

func TestLiteralSpaceNext(t *testing.T) {
	for in, want := range map[string]int{`true`: 4, `false,`: 5, `null]`: 4, `tru`: -1, `nul`: -1, `trUe`: -1, `x`: -1, ``: -1} {
		end, f := Literal(in, 0)
		if (f == None) != (want >= 0) || f == None && end != want || f != None && (f != BadLiteral || end != 0) {
			t.Errorf("Literal(%q) = %d, %v; want %d", in, end, f, want)
		}
	}
	if got := Space(" \t\r\n x", 0); got != 5 {
		t.Errorf("Space = %d", got)
	}
	if got := Space("\f", 0); got != 0 {
		t.Errorf("form feed is not JSON white space: %d", got)
	}
	for _, c := range []struct {
		name string
		in   string
		end  int
		more bool
		f    Fault
	}{
		{"comma: more follows", " ,1", 2, true, None},
		{"the close: nothing more", "\n]", 2, false, None},
		{"the wrong close", "}", 0, false, Unexpected},
		{"end of input", "  ", 2, false, EndOfInput},
		{"stray character", " x", 1, false, Unexpected},
	} {
		t.Run(c.name, func(t *testing.T) {
			end, more, f := Next([]byte(c.in), 0, ']')
			if end != c.end || more != c.more || f != c.f {
				t.Errorf("Next(%q) = %d, %v, %v; want %d, %v, %v", c.in, end, more, f, c.end, c.more, c.f)
			}
		})
	}
	for in, want := range map[string]struct {
		end   int
		empty bool
	}{"[]": {2, true}, "[ \n ] ": {5, true}, "[1]": {1, false}, "[ x": {2, false}, "[": {1, false}, "[  ": {3, false}} {
		if end, empty := Open(in, 0, ']'); end != want.end || empty != want.empty {
			t.Errorf("Open(%q) = %d, %v; want %+v", in, end, empty, want)
		}
	}
	if None.String() != "no fault" || Fault(200).String() != "unknown fault" || BadLowHex.String() != LoneSurrogate.String() {
		t.Error("Fault.String")
	}
}

// The readers' hot paths depend on these: scanning allocates nothing and
// decoding allocates the result only.
func TestAllocs(t *testing.T) {
	s := `"{\"path\": \"a\\tb\", \"x\": \"caf\u00e9 \ud83d\ude00\"}"`
	b := []byte(s)
	if n := testing.AllocsPerRun(100, func() {
		String(s, 0, 0)
		String(b, 0, CheckUTF8|PairSurrogates)
		Number(b, 0)
		Literal(s, 0)
		Space(b, 0)
	}); n != 0 {
		t.Errorf("scanning: %v allocations", n)
	}
	for _, in := range []any{s[1 : len(s)-1], b[1 : len(b)-1]} {
		var n float64
		switch in := in.(type) {
		case string:
			n = testing.AllocsPerRun(100, func() { Unescape(in) })
		case []byte:
			n = testing.AllocsPerRun(100, func() { Unescape(in) })
		}
		if n != 1 {
			t.Errorf("Unescape(%T): %v allocations, want 1", in, n)
		}
	}
}

// FuzzString holds String and Unescape to encoding/json where their
// contracts meet, and PlainString to String. Without rules a string is
// accepted exactly when encoding/json reads it, and decodes to the same
// text once invalid UTF-8 is replaced (encoding/json writes U+FFFD for
// each invalid byte, strings.ToValidUTF8 one for each run; runs of U+FFFD
// are compared as one). With both rules a string is accepted only when the
// plain reading accepts it and it is valid UTF-8, and always when in
// addition it decodes without U+FFFD (no surrogate left unpaired).
func FuzzString(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b\\c"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\ud800\u12"`, "\"\xff\"", `"\x"`, `"abc`, `"\`, "\"\x01\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !strings.HasPrefix(s, `"`) {
			s = `"` + s
		}
		checkPlain(t, s)
		end, c, fault := String(s, 0, 0)
		strictEnd, _, strictFault := String(s, 0, CheckUTF8|PairSurrogates)
		if fault != None {
			if json.Valid([]byte(s)) {
				t.Fatalf("%q: %v at %d, encoding/json reads it", s, fault, end)
			}
			if strictFault == None {
				t.Fatalf("%q: strict reading accepts what the plain one refuses (%v)", s, fault)
			}
			return
		}
		var want string
		if err := json.Unmarshal([]byte(s[:end]), &want); err != nil {
			t.Fatalf("%q: accepted %d bytes, encoding/json: %v", s, end, err)
		}
		raw := s[1 : end-1]
		got := raw
		if c&Escaped != 0 {
			got = Unescape(raw)
		} else if strings.IndexByte(raw, '\\') >= 0 {
			t.Fatalf("%q: escape not reported", s)
		}
		if c&NonASCII == 0 && !isASCII(raw) {
			t.Fatalf("%q: non-ASCII not reported", s)
		}
		if collapse(strings.ToValidUTF8(got, "\uFFFD")) != collapse(want) {
			t.Fatalf("%q: decoded %q, encoding/json %q", s, got, want)
		}
		valid := utf8.ValidString(raw)
		switch {
		case strictFault == None && (strictEnd != end || !valid):
			t.Fatalf("%q: strict reading accepted %d bytes (plain %d), valid UTF-8 %v", s, strictEnd, end, valid)
		case strictFault != None && valid && !strings.ContainsRune(got, utf8.RuneError):
			t.Fatalf("%q: strict reading refused good text: %v at %d", s, strictFault, strictEnd)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// collapse writes each run of U+FFFD as one.
func collapse(s string) string {
	var b strings.Builder
	prev := false
	for _, r := range s {
		if r != utf8.RuneError || !prev {
			b.WriteRune(r)
		}
		prev = r == utf8.RuneError
	}
	return b.String()
}
