package keys

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// keyStringCases: one row per rule of docs/reference/keybindings.md, "Key
// strings". want is the canonical String(), display the footer form; err a
// fragment of the error.
var keyStringCases = []struct {
	in, want, display, err string
}{
	// Strokes and modifiers.
	{in: "a", want: "a", display: "a"},
	{in: "ctrl+r", want: "ctrl+r", display: "Ctrl+R"},
	{in: "shift+alt+meta+ctrl+x", want: "ctrl+alt+meta+shift+x", display: "Ctrl+Alt+Meta+Shift+X"},
	{in: "control+option+cmd+k", want: "ctrl+alt+meta+k", display: "Ctrl+Alt+Meta+K"},
	{in: "command+j", want: "meta+j", display: "Meta+J"},
	{in: "CTRL+Shift+Tab", want: "ctrl+shift+tab", display: "Ctrl+Shift+Tab"},
	// Named keys, aliases, case-insensitive names.
	{in: "enter", want: "enter", display: "Enter"},
	{in: "Return", want: "enter", display: "Enter"},
	{in: "ESC", want: "escape", display: "Esc"},
	{in: "escape", want: "escape", display: "Esc"},
	{in: "tab", want: "tab", display: "Tab"},
	{in: "space", want: "space", display: "Space"},
	{in: "up", want: "up", display: "↑"},
	{in: "down", want: "down", display: "↓"},
	{in: "left", want: "left", display: "←"},
	{in: "right", want: "right", display: "→"},
	{in: "backspace", want: "backspace", display: "Backspace"},
	{in: "delete", want: "delete", display: "Del"},
	{in: "home", want: "home", display: "Home"},
	{in: "end", want: "end", display: "End"},
	{in: "PageUp", want: "pageup", display: "PgUp"},
	{in: "pagedown", want: "pagedown", display: "PgDn"},
	{in: "f1", want: "f1", display: "F1"},
	{in: "F12", want: "f12", display: "F12"},
	{in: "alt+f5", want: "alt+f5", display: "Alt+F5"},
	{in: "plus", want: "plus", display: "+"},
	{in: "ctrl+plus", want: "ctrl+plus", display: "Ctrl+Plus"},
	// Characters; upper case means shift.
	{in: "A", want: "shift+a", display: "Shift+A"},
	{in: "ctrl+A", want: "ctrl+shift+a", display: "Ctrl+Shift+A"},
	{in: "shift+a", want: "shift+a", display: "Shift+A"},
	{in: "shift+A", want: "shift+a", display: "Shift+A"},
	{in: "É", want: "shift+é", display: "Shift+É"},
	{in: "alt+ü", want: "alt+ü", display: "Alt+Ü"},
	{in: "?", want: "?", display: "?"},
	{in: "ctrl+/", want: "ctrl+/", display: "Ctrl+/"},
	{in: "界", want: "界", display: "界"},
	{in: "\ufffd", want: "\ufffd", display: "\ufffd"}, // the character itself is printable; only a broken byte is refused
	// Terminal equivalences.
	{in: "ctrl+m", want: "enter", display: "Enter"},
	{in: "ctrl+i", want: "tab", display: "Tab"},
	{in: "ctrl+[", want: "escape", display: "Esc"},
	{in: "ctrl+alt+m", want: "alt+enter", display: "Alt+Enter"},
	{in: "ctrl+M", want: "shift+enter", display: "Shift+Enter"},
	// Chords.
	{in: "ctrl+x ctrl+s", want: "ctrl+x ctrl+s", display: "Ctrl+X Ctrl+S"},
	{in: "g g", want: "g g", display: "g g"},
	{in: "ctrl+x ctrl+m", want: "ctrl+x enter", display: "Ctrl+X Enter"},
	// Errors.
	{in: "", err: "empty"},
	{in: "ctrl+", err: `missing key after "+"`},
	{in: "+", err: "empty name"},
	{in: "ctrl++", err: "the + key is written plus"},
	{in: "ctrl+ctrl+x", err: "given twice"},
	{in: "alt+option+x", err: "given twice"},
	{in: "hyper+x", err: `unknown modifier "hyper"`},
	{in: "ctrl", err: "is a modifier"},
	{in: "shift", err: "is a modifier"},
	{in: "enterr", err: `unknown key "enterr"`},
	{in: "ab", err: `unknown key "ab"`},
	{in: "insert", err: `unknown key "insert"`},
	{in: "f0", err: `unknown key`},
	{in: " ", err: "single space"},
	{in: "a ", err: "single space"},
	{in: "a  b", err: "at most two strokes"},
	{in: "a b c", err: "at most two strokes"},
	{in: "\t", err: "printable"},
	{in: "ctrl+\x01", err: "printable"},
	{in: "\u00a0", err: "printable"},
	{in: "\xff", err: "invalid UTF-8"},
	{in: "ctrl+k\u212a", err: "unknown key"}, // Kelvin sign is no letter k
	{in: strings.Repeat("ctrl+", 60) + "x", err: "longer than"},
}

func TestKeyStrings(t *testing.T) {
	for _, c := range keyStringCases {
		// A row is named by the key string it parses, as a Go literal.
		t.Run(rowName(c.in), func(t *testing.T) {
			q, err := ParseSequence(c.in)
			if c.err != "" {
				var ke *KeyError
				if err == nil || !errors.As(err, &ke) || !strings.Contains(err.Error(), c.err) {
					t.Errorf("ParseSequence(%q) = %v, %v; want error containing %q", c.in, q, err, c.err)
				}
				return
			}
			if err != nil {
				t.Errorf("ParseSequence(%q): %v", c.in, err)
				return
			}
			if got := q.String(); got != c.want {
				t.Errorf("ParseSequence(%q).String() = %q, want %q", c.in, got, c.want)
			}
			if got := q.Display(); got != c.display {
				t.Errorf("ParseSequence(%q).Display() = %q, want %q", c.in, got, c.display)
			}
			// The canonical form parses back to the same sequence.
			if r, err := ParseSequence(q.String()); err != nil || r != q {
				t.Errorf("round trip of %q: %v, %v", q.String(), r, err)
			}
			if q.First.Canonical() != q.First || q.Second.Canonical() != q.Second {
				t.Errorf("ParseSequence(%q) is not canonical: %+v", c.in, q)
			}
		})
	}
}

// rowName is a table row's name for a key string: the string quoted, cut
// to 40 bytes.
func rowName(in string) string {
	q := strconv.Quote(in)
	if len(q) > 40 {
		q = q[:37] + "..."
	}
	return q
}

func TestParseStroke(t *testing.T) {
	s, err := ParseStroke("Ctrl+Shift+F3")
	if err != nil || s != (Stroke{Key: KeyF3, Mod: ModCtrl | ModShift}) {
		t.Errorf("ParseStroke = %+v, %v", s, err)
	}
	if _, err := ParseStroke("a b"); err == nil {
		t.Error("ParseStroke accepted a chord")
	}
}

func TestEquivalencesCollide(t *testing.T) {
	for _, pair := range [][2]string{
		{"enter", "ctrl+m"}, {"tab", "ctrl+i"}, {"escape", "ctrl+["},
		{"A", "shift+a"}, {"ctrl+A", "ctrl+shift+a"}, {"esc", "Escape"},
		{"alt+enter", "ctrl+alt+m"}, {"ctrl+x ctrl+m", "ctrl+x enter"},
	} {
		a, err1 := ParseSequence(pair[0])
		b, err2 := ParseSequence(pair[1])
		if err1 != nil || err2 != nil || a != b {
			t.Errorf("%q and %q: %v %v, equal %v", pair[0], pair[1], err1, err2, a == b)
		}
	}
}

func TestStrokeTypes(t *testing.T) {
	for in, want := range map[string]bool{
		"a": true, "A": true, "space": true, "?": true, "é": true,
		"ctrl+a": false, "alt+a": false, "enter": false, "tab": false, "up": false, "shift+up": false,
	} {
		s, err := ParseStroke(in)
		if err != nil {
			t.Fatal(err)
		}
		if s.Types() != want {
			t.Errorf("%q.Types() = %v", in, !want)
		}
	}
}
