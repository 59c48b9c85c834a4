package keys

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// describe renders an event compactly for the tables: the stroke, then
// "|" and the typed character when there is one; paste("…") and
// paste+("…") when more follows; kitty(N); da.
func describe(e Event) string {
	switch e.Kind {
	case EventKey:
		if e.Rune != 0 {
			return e.Stroke.String() + "|" + string(e.Rune)
		}
		return e.Stroke.String()
	case EventPaste:
		if e.More {
			return fmt.Sprintf("paste+(%q)", e.Text)
		}
		return fmt.Sprintf("paste(%q)", e.Text)
	case EventKittyFlags:
		return fmt.Sprintf("kitty(%d)", e.Flags)
	case EventDeviceAttributes:
		return "da"
	}
	return fmt.Sprintf("kind%d", e.Kind)
}

func describeAll(evs []Event) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, describe(e))
	}
	return out
}

// decodeCases: the input is a list of bursts; after each burst the escape
// timeout passes (Flush). want is the events of the whole input.
var decodeCases = []struct {
	name string
	in   []string
	want []string
}{
	// Characters and control bytes.
	{"ascii", []string{"abc"}, []string{"a|a", "b|b", "c|c"}},
	{"upper case is shift", []string{"A"}, []string{"shift+a|A"}},
	{"space", []string{" "}, []string{"space| "}},
	{"ctrl letters", []string{"\x01\x02\x1a"}, []string{"ctrl+a", "ctrl+b", "ctrl+z"}},
	{"ctrl+c is a key here", []string{"\x03"}, []string{"ctrl+c"}},
	{"nul is ctrl+space", []string{"\x00"}, []string{"ctrl+space"}},
	{"cr is enter", []string{"\r"}, []string{"enter"}},
	{"lf is ctrl+j", []string{"\n"}, []string{"ctrl+j"}},
	{"ht is tab", []string{"\t"}, []string{"tab"}},
	{"del is backspace", []string{"\x7f"}, []string{"backspace"}},
	{"bs is backspace", []string{"\x08"}, []string{"backspace"}},
	{"ctrl symbols", []string{"\x1c\x1d\x1e\x1f"}, []string{`ctrl+\`, "ctrl+]", "ctrl+^", "ctrl+_"}},
	// UTF-8.
	{"two-byte character", []string{"é"}, []string{"é|é"}},
	{"upper-case accented", []string{"É"}, []string{"shift+é|É"}},
	{"three-byte character", []string{"界"}, []string{"界|界"}},
	{"four-byte character", []string{"😀"}, []string{"😀|😀"}},
	{"zero-width joiner is typed", []string{"\u200d"}, []string{"U+200D|\u200d"}},
	{"invalid byte skipped", []string{"\xffa"}, []string{"a|a"}},
	{"truncated character dropped at timeout", []string{"\xe7\x95", "a"}, []string{"a|a"}},
	{"broken character", []string{"\xc3a"}, []string{"a|a"}},
	{"c1 control dropped", []string{"\xc2\x85x"}, []string{"x|x"}},
	// Escape and Alt.
	{"lone escape", []string{"\x1b"}, []string{"escape"}},
	{"escape then key after timeout", []string{"\x1b", "a"}, []string{"escape", "a|a"}},
	{"two escapes after timeouts", []string{"\x1b", "\x1b"}, []string{"escape", "escape"}},
	{"alt letter", []string{"\x1ba"}, []string{"alt+a"}},
	{"alt upper", []string{"\x1bA"}, []string{"alt+shift+a"}},
	{"alt ctrl", []string{"\x1b\x01"}, []string{"ctrl+alt+a"}},
	{"alt enter", []string{"\x1b\r"}, []string{"alt+enter"}},
	{"alt backspace", []string{"\x1b\x7f"}, []string{"alt+backspace"}},
	{"alt utf-8", []string{"\x1bé"}, []string{"alt+é"}},
	{"alt escape", []string{"\x1b\x1b"}, []string{"alt+escape"}},
	{"alt escape then key", []string{"\x1b\x1bx"}, []string{"alt+escape", "x|x"}},
	{"alt arrow as esc prefix", []string{"\x1b\x1b[A"}, []string{"alt+up"}},
	{"alt ss3 as esc prefix", []string{"\x1b\x1bOB"}, []string{"alt+down"}},
	{"alt [ by timeout", []string{"\x1b["}, []string{"alt+["}},
	{"alt O by timeout", []string{"\x1bO"}, []string{"alt+shift+o"}},
	{"incomplete csi by timeout", []string{"\x1b[1;"}, []string{"alt+[", "1|1", ";|;"}},
	{"alt ] by timeout", []string{"\x1b]"}, []string{"alt+]"}},
	{"alt P by timeout", []string{"\x1bP"}, []string{"alt+shift+p"}},
	{"escape before invalid byte", []string{"\x1b\xff"}, []string{"escape"}},
	{"escape escape [ by timeout", []string{"\x1b\x1b["}, []string{"alt+escape", "[|["}},
	// CSI cursor and editing keys, with modifiers.
	{"arrows", []string{"\x1b[A\x1b[B\x1b[C\x1b[D"}, []string{"up", "down", "right", "left"}},
	{"home end", []string{"\x1b[H\x1b[F"}, []string{"home", "end"}},
	{"modified arrows", []string{"\x1b[1;2A\x1b[1;3B\x1b[1;5C\x1b[1;9D\x1b[1;6A\x1b[1;8H"},
		[]string{"shift+up", "alt+down", "ctrl+right", "meta+left", "ctrl+shift+up", "ctrl+alt+shift+home"}},
	{"backtab", []string{"\x1b[Z"}, []string{"shift+tab"}},
	{"tilde keys", []string{"\x1b[1~\x1b[2~\x1b[3~\x1b[4~\x1b[5~\x1b[6~\x1b[7~\x1b[8~"},
		[]string{"home", "insert", "delete", "end", "pageup", "pagedown", "home", "end"}},
	{"modified tilde", []string{"\x1b[3;5~\x1b[5;3~"}, []string{"ctrl+delete", "alt+pageup"}},
	{"function keys ss3", []string{"\x1bOP\x1bOQ\x1bOR\x1bOS"}, []string{"f1", "f2", "f3", "f4"}},
	{"function keys csi", []string{"\x1b[11~\x1b[12~\x1b[13~\x1b[14~\x1b[15~\x1b[17~\x1b[18~\x1b[19~\x1b[20~\x1b[21~\x1b[23~\x1b[24~"},
		[]string{"f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11", "f12"}},
	{"modified function keys", []string{"\x1b[1;5P\x1b[1;2R\x1b[15;3~"}, []string{"ctrl+f1", "shift+f3", "alt+f5"}},
	{"cursor position report skipped", []string{"\x1b[12;40Rx"}, []string{"x|x"}},
	{"linux console f-keys", []string{"\x1b[[A\x1b[[E"}, []string{"f1", "f5"}},
	{"linux console unknown", []string{"\x1b[[Zx"}, []string{"shift+z|Z", "x|x"}},
	// SS3 (application mode) and the keypad.
	{"ss3 arrows", []string{"\x1bOA\x1bOD\x1bOH\x1bOF"}, []string{"up", "left", "home", "end"}},
	{"ss3 keypad enter", []string{"\x1bOM"}, []string{"enter"}},
	{"ss3 modifier old style", []string{"\x1bO5P\x1bO1;2Q"}, []string{"ctrl+f1", "shift+f2"}},
	{"ss3 keypad digits", []string{"\x1bOp\x1bOy\x1bOk\x1bOX"}, []string{"0|0", "9|9", "plus|+", "=|="}},
	{"ss3 unknown skipped", []string{"\x1bOzx"}, []string{"x|x"}},
	{"rxvt ctrl arrows", []string{"\x1bOa\x1bOd"}, []string{"ctrl+up", "ctrl+left"}},
	{"rxvt shift arrows", []string{"\x1b[a\x1b[c"}, []string{"shift+up", "shift+right"}},
	{"rxvt ctrl and ctrl+shift", []string{"\x1b[3^\x1b[5@"}, []string{"ctrl+delete", "ctrl+shift+pageup"}},
	{"rxvt shifted editing keys", []string{"\x1b[3$\x1b[7$x\x1b[2$"}, []string{"shift+delete", "shift+home", "x|x", "shift+insert"}},
	{"dollar after two parameters is an intermediate", []string{"\x1b[3;2$yx\x1b[99$x"}, []string{"x|x"}},
	// xterm modifyOtherKeys.
	{"modify other keys", []string{"\x1b[27;5;13~\x1b[27;2;65~\x1b[27;6;65~\x1b[27;2;33~"},
		[]string{"ctrl+enter", "shift+a|A", "ctrl+shift+a", "!|!"}},
	// The kitty keyboard protocol.
	{"kitty plain", []string{"\x1b[97u"}, []string{"a|a"}},
	{"kitty ctrl", []string{"\x1b[97;5u"}, []string{"ctrl+a"}},
	{"kitty shift letter", []string{"\x1b[97;2u\x1b[97:65;2u"}, []string{"shift+a|A", "shift+a|A"}},
	{"kitty shifted symbol", []string{"\x1b[49:33;2u"}, []string{"!|!"}},
	{"kitty shifted symbol unknown", []string{"\x1b[49;2u"}, []string{"shift+1"}},
	{"kitty functional", []string{"\x1b[13u\x1b[13;2u\x1b[27u\x1b[127u\x1b[9;2u\x1b[32;5u\x1b[32;2u"},
		[]string{"enter", "shift+enter", "escape", "backspace", "shift+tab", "ctrl+space", "space| "}},
	{"kitty equivalence ctrl+m", []string{"\x1b[109;5u\x1b[105;5u\x1b[91;5u"}, []string{"enter", "tab", "escape"}},
	{"kitty super hyper meta", []string{"\x1b[97;9u\x1b[97;17u\x1b[97;33u\x1b[97;7u"}, []string{"meta+a", "meta+a", "meta+a", "ctrl+alt+a"}},
	{"kitty lock modifiers ignored", []string{"\x1b[97;65u\x1b[97;129u"}, []string{"a|a", "a|a"}},
	{"kitty event types", []string{"\x1b[97;1:1u\x1b[97;1:2u\x1b[97;1:3u\x1b[1;5:3A\x1b[3;1:3~"}, []string{"a|a", "a|a"}},
	{"kitty associated text", []string{"\x1b[97;2;65u"}, []string{"shift+a|A"}},
	{"kitty keypad", []string{"\x1b[57399u\x1b[57413u\x1b[57414u\x1b[57419;5u"}, []string{"0|0", "plus|+", "enter", "ctrl+up"}},
	{"kitty private keys skipped", []string{"\x1b[57441u\x1b[57376u\x1b[57362ux"}, []string{"x|x"}},
	{"kitty control code skipped", []string{"\x1b[1u\x1b[150ux"}, []string{"x|x"}},
	{"kitty huge code skipped", []string{"\x1b[99999999999999uq"}, []string{"q|q"}},
	{"kitty flags reply", []string{"\x1b[?1u\x1b[?31u"}, []string{"kitty(1)", "kitty(31)"}},
	{"device attributes reply", []string{"\x1b[?62;22c"}, []string{"da"}},
	{"mode report skipped", []string{"\x1b[?2026;2$yx"}, []string{"x|x"}},
	// Mouse, focus and unknown sequences are skipped.
	{"sgr mouse", []string{"\x1b[<0;10;20M\x1b[<0;10;20mx"}, []string{"x|x"}},
	{"x10 mouse", []string{"\x1b[M !\"x"}, []string{"x|x"}},
	{"urxvt mouse", []string{"\x1b[32;10;20Mx"}, []string{"x|x"}},
	{"focus events", []string{"\x1b[I\x1b[Ox"}, []string{"x|x"}},
	{"unknown csi", []string{"\x1b[99z\x1b[1;2;3;4;5;6;7;8;9;10qx"}, []string{"x|x"}},
	{"broken csi", []string{"\x1b[1;\x03"}, []string{"ctrl+c"}},
	{"osc with bel", []string{"\x1b]11;rgb:0000/0000/0000\x07x"}, []string{"x|x"}},
	{"osc with st", []string{"\x1b]11;rgb:0/0/0\x1b\\x"}, []string{"x|x"}},
	{"dcs and apc", []string{"\x1bP>|term 1.0\x1b\\\x1b_Gi=1;OK\x1b\\x"}, []string{"x|x"}},
	{"osc cut by a sequence", []string{"\x1b]abc\x1b[A"}, []string{"up"}},
	{"incomplete osc by timeout", []string{"\x1b]ab"}, []string{"alt+]", "a|a", "b|b"}},
	// Bracketed paste.
	{"paste", []string{"\x1b[200~hello\x1b[201~"}, []string{`paste("hello")`}},
	{"paste line ends", []string{"\x1b[200~a\r\nb\rc\nd\r\x1b[201~"}, []string{`paste("a\nb\nc\nd\n")`}},
	{"paste is never keys", []string{"\x1b[200~\x03\x1b[Ab\x00\x7f\tc\x1b[201~"}, []string{`paste("[Ab\tc")`}},
	{"paste empty", []string{"\x1b[200~\x1b[201~"}, []string{`paste("")`}},
	{"paste invalid utf-8", []string{"\x1b[200~a\xffb\x1b[201~"}, []string{"paste(\"a\ufffdb\")"}},
	{"paste c1 dropped", []string{"\x1b[200~a\xc2\x85b\x1b[201~"}, []string{`paste("ab")`}},
	{"paste utf-8", []string{"\x1b[200~界😀é\x1b[201~"}, []string{`paste("界😀é")`}},
	{"paste truncated character at end", []string{"\x1b[200~a\xe7\x95\x1b[201~"}, []string{"paste(\"a\ufffd\")"}},
	{"paste broken character", []string{"\x1b[200~\xe7x\x1b[201~"}, []string{"paste(\"\ufffdx\")"}},
	{"paste broken longer character", []string{"\x1b[200~0\xe7\x950\x1b[201~"}, []string{"paste(\"0\ufffd\ufffd0\")"}},
	{"paste cut after an escape", []string{"\x1b[200~ab\x1b", "[201~"}, []string{`paste("ab")`}},
	{"paste unfinished", []string{"\x1b[200~ab"}, nil},
	{"paste then keys", []string{"\x1b[200~x\x1b[201~y"}, []string{`paste("x")`, "y|y"}},
	{"paste with marker look-alike", []string{"\x1b[200~\x1b[20x\x1b[2011~\x1b[201~"}, []string{`paste("[20x[2011~")`}},
	{"paste end marker outside paste", []string{"\x1b[201~x"}, []string{"x|x"}},
	{"paste after alt prefix", []string{"\x1b\x1b[200~x\x1b[201~"}, []string{`paste("x")`}},
	{"paste across pauses is one event", []string{"\x1b[200~abc", "d\x1b", "ef\x1b[201~"}, []string{`paste("abcdef")`}},
	{"paste marker across a pause", []string{"\x1b[200~abc\x1b[20", "1~"}, []string{`paste("abc")`}},
	{"paste cr lf across a pause", []string{"\x1b[200~a\r", "\nb\x1b[201~"}, []string{`paste("a\nb")`}},
	{"paste utf-8 across a pause", []string{"\x1b[200~\xe7\x95", "\x8c\x1b[201~"}, []string{`paste("界")`}},
	{"paste start by timeout is alt", []string{"\x1b[200"}, []string{"alt+[", "2|2", "0|0", "0|0"}},
}

// replay feeds the bursts, each split at the given offsets, flushing
// after each burst.
func replay(d *Decoder, bursts []string, split func(burst int, b []byte) [][]byte) []Event {
	var evs []Event
	for i, b := range bursts {
		for _, chunk := range split(i, []byte(b)) {
			evs = d.Feed(evs, chunk)
		}
		evs = d.Flush(evs)
	}
	return evs
}

func whole(_ int, b []byte) [][]byte { return [][]byte{b} }

func TestDecode(t *testing.T) {
	for _, c := range decodeCases {
		t.Run(c.name, func(t *testing.T) {
			var d Decoder
			got := describeAll(replay(&d, c.in, whole))
			if !slices.Equal(got, c.want) {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
			if d.Pending() {
				t.Errorf("still pending after the last flush")
			}
		})
	}
}

// TestDecodeEverySplit replays every case split at every offset of every
// burst, at every pair of offsets, and byte by byte: the events must not
// depend on how reads cut the input.
func TestDecodeEverySplit(t *testing.T) {
	for _, c := range decodeCases {
		want := c.want
		check := func(how string, split func(int, []byte) [][]byte) {
			t.Helper()
			var d Decoder
			if got := describeAll(replay(&d, c.in, split)); !slices.Equal(got, want) {
				t.Errorf("%s, %s:\n got  %q\n want %q", c.name, how, got, want)
			}
		}
		check("byte by byte", func(_ int, b []byte) [][]byte {
			var out [][]byte
			for i := range b {
				out = append(out, b[i:i+1])
			}
			return out
		})
		for bi, burst := range c.in {
			for i := 0; i <= len(burst); i++ {
				check(fmt.Sprintf("burst %d split at %d", bi, i), func(k int, b []byte) [][]byte {
					if k != bi {
						return [][]byte{b}
					}
					return [][]byte{b[:i], b[i:]}
				})
				for j := i; j <= len(burst) && len(burst) <= 48; j++ {
					check(fmt.Sprintf("burst %d split at %d and %d", bi, i, j), func(k int, b []byte) [][]byte {
						if k != bi {
							return [][]byte{b}
						}
						return [][]byte{b[:i], b[i:j], b[j:]}
					})
				}
			}
		}
	}
}

func TestDecodePending(t *testing.T) {
	var d Decoder
	for _, step := range []struct {
		in      string
		pending bool
	}{
		{"a", false}, {"\x1b", true}, {"[", true}, {"A", false},
		{"\xe7", true}, {"\x95\x8c", false},
		{"\x1b[200~", false}, {"abc", false}, {"\x1b[201~", false},
		{"\x1b[200~abc\x1b[2", false}, {"0", false},
	} {
		d.Feed(nil, []byte(step.in))
		if d.Pending() != step.pending {
			t.Errorf("after %q: Pending() = %v", step.in, !step.pending)
		}
	}
	// A pause inside a paste resolves nothing: the paste is one event.
	if got := describeAll(d.Flush(nil)); len(got) != 0 || d.Pending() {
		t.Errorf("flush in a paste: %q, pending %v", got, d.Pending())
	}
	if got := describeAll(d.Feed(nil, []byte("1~x"))); !slices.Equal(got, []string{`paste("abc")`, "x|x"}) {
		t.Errorf("end of the paste: %q", got)
	}
}

func TestDecodeReset(t *testing.T) {
	var d Decoder
	d.Feed(nil, []byte("\x1b[200~abc"))
	d.Reset()
	if got := describeAll(d.Feed(nil, []byte("x"))); !slices.Equal(got, []string{"x|x"}) {
		t.Errorf("after Reset: %q", got)
	}
}

// feedChunks feeds input in chunks of n bytes and checks the held state
// stays bounded throughout.
func feedChunks(t *testing.T, d *Decoder, input []byte, n int) []Event {
	t.Helper()
	var evs []Event
	for len(input) > 0 {
		k := min(n, len(input))
		evs = d.Feed(evs, input[:k])
		input = input[k:]
		if len(d.pend) > maxPend || cap(d.pend) > 2*maxPend+64 {
			t.Fatalf("pending sequence grew to %d bytes (cap %d)", len(d.pend), cap(d.pend))
		}
		if max := d.maxPaste(); len(d.paste) > max || len(d.pasteUTF) > utf8.UTFMax {
			t.Fatalf("paste buffer grew to %d bytes", len(d.paste))
		}
	}
	return evs
}

func TestDecodeBounded(t *testing.T) {
	endless := func(prefix, unit string, n int, suffix string) []byte {
		return []byte(prefix + strings.Repeat(unit, n) + suffix)
	}
	for _, c := range []struct {
		name  string
		input []byte
		alone bool // the whole sequence is skipped: x is the only event
	}{
		{"endless csi parameters", endless("\x1b[", "1;", 1<<19, "Ax"), true},
		{"endless csi intermediates", endless("\x1b[", " ", 1<<19, "Ax"), true},
		{"endless osc", endless("\x1b]", "a", 1<<20, "\x07x"), true},
		{"endless dcs ended by st", endless("\x1bP", "q", 1<<20, "\x1b\\x"), true},
		// An SS3 has no parameters to speak of: after a few digits it is
		// garbage, dropped, and the remaining digits are keys.
		{"endless ss3 digits", endless("\x1bO", "5", 1<<10, "x"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, n := range []int{1, 7, 4096, 1 << 20} {
				var d Decoder
				evs := feedChunks(t, &d, c.input, n)
				evs = d.Flush(evs)
				got := describeAll(evs)
				if len(got) == 0 || got[len(got)-1] != "x|x" || c.alone && len(got) != 1 {
					t.Errorf("in chunks of %d: %d events, last %q", n, len(got), got[max(0, len(got)-1):])
				}
			}
		})
	}
}

func TestDecodeLargePaste(t *testing.T) {
	const limit = 1 << 20
	body := bytes.Repeat([]byte("0123456789abcdé\n"), (10<<20)/17) // ~10 MiB
	input := append(append([]byte("\x1b[200~"), body...), "\x1b[201~z"...)
	for _, n := range []int{4096, 65536 + 3, 3 << 20} {
		d := NewDecoder(DecoderOptions{MaxPaste: limit})
		evs := feedChunks(t, d, input, n)
		var text strings.Builder
		for i, e := range evs[:len(evs)-1] {
			if e.Kind != EventPaste || len(e.Text) > limit || !utf8.ValidString(e.Text) {
				t.Fatalf("event %d: kind %d, %d bytes", i, e.Kind, len(e.Text))
			}
			if last := i == len(evs)-2; e.More == last {
				t.Fatalf("event %d of %d: More = %v", i, len(evs)-1, e.More)
			}
			if !e.More && i != len(evs)-2 || e.More && len(e.Text) < limit-utf8.UTFMax {
				t.Fatalf("event %d: a split before the limit (%d bytes)", i, len(e.Text))
			}
			text.WriteString(e.Text)
		}
		if text.String() != string(body) {
			t.Fatalf("chunks of %d: pasted text differs (%d bytes, want %d)", n, text.Len(), len(body))
		}
		if describe(evs[len(evs)-1]) != "z|z" {
			t.Fatalf("after the paste: %q", describe(evs[len(evs)-1]))
		}
	}
}

func TestDecodeGarbage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("\x1b[O]P;:0123456789~u?<>M\x07\\abcz\x00\x7f\xc3\xa9\xff")
	input := make([]byte, 1<<17)
	for i := range input {
		if r.IntN(4) == 0 {
			input[i] = byte(r.IntN(256))
		} else {
			input[i] = alphabet[r.IntN(len(alphabet))]
		}
	}
	var d Decoder
	want := describeAll(d.Flush(feedChunks(t, &d, input, len(input))))
	for _, n := range []int{1, 3, 1000} {
		var d Decoder
		if got := describeAll(d.Flush(feedChunks(t, &d, input, n))); !slices.Equal(got, want) {
			t.Fatalf("chunks of %d: %d events, want %d", n, len(got), len(want))
		}
	}
}
