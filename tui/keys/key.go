package keys

import (
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Mod is a set of modifiers.
type Mod uint8

// The modifiers, in their canonical order (docs/reference/keybindings.md,
// "Key strings"). Terminals report super, hyper and meta; all three are
// ModMeta here, which the key strings name meta, cmd or command.
const (
	ModCtrl Mod = 1 << iota
	ModAlt
	ModMeta
	ModShift
)

// Key is one key: a printable character is its own rune, the named keys
// sit above the Unicode range so that no character can equal them.
type Key rune

// The named keys of docs/reference/keybindings.md, "Key strings". KeySpace
// is the character ' '. KeyInsert is decoded from the terminal but has no
// key-string name, so it cannot be bound.
const (
	KeySpace Key = ' '

	KeyEnter Key = unicode.MaxRune + 1 + iota
	KeyEscape
	KeyTab
	KeyUp
	KeyDown
	KeyLeft
	KeyRight
	KeyBackspace
	KeyDelete
	KeyHome
	KeyEnd
	KeyPageUp
	KeyPageDown
	KeyInsert
	KeyF1
	KeyF2
	KeyF3
	KeyF4
	KeyF5
	KeyF6
	KeyF7
	KeyF8
	KeyF9
	KeyF10
	KeyF11
	KeyF12
	keyLast
)

// named is indexed by Key-KeyEnter: the canonical name and the display form.
var named = [keyLast - KeyEnter][2]string{
	{"enter", "Enter"}, {"escape", "Esc"}, {"tab", "Tab"},
	{"up", "↑"}, {"down", "↓"}, {"left", "←"}, {"right", "→"},
	{"backspace", "Backspace"}, {"delete", "Del"}, {"home", "Home"}, {"end", "End"},
	{"pageup", "PgUp"}, {"pagedown", "PgDn"}, {"insert", "Ins"},
	{"f1", "F1"}, {"f2", "F2"}, {"f3", "F3"}, {"f4", "F4"}, {"f5", "F5"}, {"f6", "F6"},
	{"f7", "F7"}, {"f8", "F8"}, {"f9", "F9"}, {"f10", "F10"}, {"f11", "F11"}, {"f12", "F12"},
}

// keyNames maps every accepted key name (lower case) to its key, aliases
// included (docs/reference/keybindings.md, "Key strings"). "insert" is
// absent on purpose. Made on first use, as modNames (docs/performance.md,
// "Startup").
var keyNames = sync.OnceValue(func() map[string]Key {
	m := map[string]Key{"return": KeyEnter, "esc": KeyEscape, "space": KeySpace, "plus": '+'}
	for k := KeyEnter; k < keyLast; k++ {
		if k != KeyInsert {
			m[named[k-KeyEnter][0]] = k
		}
	}
	return m
})

var modNames = sync.OnceValue(func() map[string]Mod {
	return map[string]Mod{
		"ctrl": ModCtrl, "control": ModCtrl,
		"alt": ModAlt, "option": ModAlt,
		"meta": ModMeta, "cmd": ModMeta, "command": ModMeta,
		"shift": ModShift,
	}
})

// IsNamed reports whether k is a named key (not a character).
func (k Key) IsNamed() bool { return k >= KeyEnter && k < keyLast }

// String returns the key's canonical name: the named key's name, "space",
// "plus", or the character itself.
func (k Key) String() string {
	switch {
	case k.IsNamed():
		return named[k-KeyEnter][0]
	case k == KeySpace:
		return "space"
	case k == '+':
		return "plus"
	case k > 0 && k <= unicode.MaxRune && unicode.IsPrint(rune(k)):
		return string(rune(k))
	}
	return "U+" + strings.ToUpper(strconv.FormatInt(int64(k), 16))
}

// Stroke is one key press: a key and its modifiers. Strokes compare with ==
// once canonical (see Canonical); the parser and the decoder only produce
// canonical strokes.
type Stroke struct {
	Key Key
	Mod Mod
}

// Canonical applies the equivalences of docs/reference/keybindings.md, "Key
// strings": an upper-case letter is shift plus the lower-case letter, and
// the terminal equivalences ctrl+m = enter, ctrl+i = tab, ctrl+[ = escape
// (a legacy terminal sends the same byte for both, so they cannot be told
// apart). Other modifiers are kept: ctrl+alt+m is alt+enter.
func (s Stroke) Canonical() Stroke { return s.shiftCase().terminal() }

// shiftCase writes an upper-case letter as shift plus the lower-case one.
func (s Stroke) shiftCase() Stroke {
	if r := rune(s.Key); s.Key > 0 && s.Key <= unicode.MaxRune && unicode.IsUpper(r) {
		if l := unicode.ToLower(r); l != r {
			s.Key, s.Mod = Key(l), s.Mod|ModShift
		}
	}
	return s
}

// terminal applies the terminal equivalences to a shift-cased stroke.
func (s Stroke) terminal() Stroke {
	if s.Mod&ModCtrl != 0 {
		switch s.Key {
		case 'm':
			s.Key, s.Mod = KeyEnter, s.Mod&^ModCtrl
		case 'i':
			s.Key, s.Mod = KeyTab, s.Mod&^ModCtrl
		case '[':
			s.Key, s.Mod = KeyEscape, s.Mod&^ModCtrl
		}
	}
	return s
}

// Types reports whether the stroke types text: a character or space with no
// modifier but shift. Such a stroke may not start a chord in the text-entry
// contexts (docs/reference/keybindings.md, "Validity rules").
func (s Stroke) Types() bool {
	return s.Mod&^ModShift == 0 && !s.Key.IsNamed() && s.Key > 0
}

// String returns the canonical key string: modifiers in the order ctrl,
// alt, meta, shift, then the key, joined by "+" (ctrl+shift+a, alt+enter).
func (s Stroke) String() string {
	var b strings.Builder
	s.appendString(&b)
	return b.String()
}

func (s Stroke) appendString(b *strings.Builder) {
	for _, m := range [...]struct {
		m    Mod
		name string
	}{{ModCtrl, "ctrl+"}, {ModAlt, "alt+"}, {ModMeta, "meta+"}, {ModShift, "shift+"}} {
		if s.Mod&m.m != 0 {
			b.WriteString(m.name)
		}
	}
	b.WriteString(s.Key.String())
}

// Display returns the form shown in footer hints
// (docs/reference/keybindings.md, "Key strings"): Ctrl+R, Esc, ↑,
// Shift+Tab. A letter is upper case when a modifier is held and as typed
// otherwise (y, n).
func (s Stroke) Display() string {
	var b strings.Builder
	s.appendDisplay(&b)
	return b.String()
}

func (s Stroke) appendDisplay(b *strings.Builder) {
	for _, m := range [...]struct {
		m    Mod
		name string
	}{{ModCtrl, "Ctrl+"}, {ModAlt, "Alt+"}, {ModMeta, "Meta+"}, {ModShift, "Shift+"}} {
		if s.Mod&m.m != 0 {
			b.WriteString(m.name)
		}
	}
	switch {
	case s.Key.IsNamed():
		b.WriteString(named[s.Key-KeyEnter][1])
	case s.Key == KeySpace:
		b.WriteString("Space")
	case s.Key == '+' && s.Mod != 0:
		b.WriteString("Plus") // "Ctrl++" would read badly
	case s.Key == '+':
		b.WriteByte('+')
	case s.Mod != 0 && s.Key > 0 && s.Key <= unicode.MaxRune:
		b.WriteRune(unicode.ToUpper(rune(s.Key)))
	default:
		b.WriteString(s.Key.String())
	}
}

// Sequence is what one key string names: a single stroke, or a chord of two
// strokes when Second is set (docs/reference/keybindings.md, "Key
// strings"). The zero Stroke is "none". Sequences compare with ==.
type Sequence struct {
	First, Second Stroke
}

// IsChord reports whether the sequence has two strokes.
func (q Sequence) IsChord() bool { return q.Second != Stroke{} }

// String returns the canonical key string (ctrl+x ctrl+s).
func (q Sequence) String() string {
	var b strings.Builder
	q.First.appendString(&b)
	if q.IsChord() {
		b.WriteByte(' ')
		q.Second.appendString(&b)
	}
	return b.String()
}

// Display returns the footer form (Ctrl+X Ctrl+S).
func (q Sequence) Display() string {
	var b strings.Builder
	q.First.appendDisplay(&b)
	if q.IsChord() {
		b.WriteByte(' ')
		q.Second.appendDisplay(&b)
	}
	return b.String()
}

// KeyError reports a key string that does not parse.
type KeyError struct {
	Input string
	Msg   string
}

func (e *KeyError) Error() string {
	return "invalid key string " + strconv.Quote(e.Input) + ": " + e.Msg
}

// maxKeyString bounds the key strings ParseSequence looks at; the longest
// valid one (four long modifiers and a chord) is far shorter.
const maxKeyString = 256

// ParseSequence parses a key string: one stroke, or two separated by a
// single space (docs/reference/keybindings.md, "Key strings"). The result
// is canonical.
func ParseSequence(s string) (Sequence, error) {
	q, err := parseWritten(s)
	if err != nil {
		return Sequence{}, err
	}
	return Sequence{q.First.terminal(), q.Second.terminal()}, nil
}

// parseWritten parses a key string into the strokes as written: upper
// case as shift, but without the terminal equivalences (ctrl+shift+m
// stays itself rather than becoming shift+enter), for the warnings about
// what the user wrote.
func parseWritten(s string) (Sequence, error) {
	if len(s) > maxKeyString {
		return Sequence{}, &KeyError{s[:32] + "…", "longer than " + strconv.Itoa(maxKeyString) + " bytes"}
	}
	if s == "" {
		return Sequence{}, &KeyError{s, "empty"}
	}
	first, rest, chord := strings.Cut(s, " ")
	if chord && (first == "" || rest == "" || strings.Contains(rest, " ")) {
		if first == "" || rest == "" {
			return Sequence{}, &KeyError{s, "strokes of a chord are separated by a single space, with none before or after"}
		}
		return Sequence{}, &KeyError{s, "a chord has at most two strokes, separated by a single space"}
	}
	a, err := parseStroke(first)
	if err != nil {
		return Sequence{}, &KeyError{s, err.Error()}
	}
	q := Sequence{First: a}
	if chord {
		if q.Second, err = parseStroke(rest); err != nil {
			return Sequence{}, &KeyError{s, err.Error()}
		}
	}
	return q, nil
}

// ParseStroke parses a key string of exactly one stroke.
func ParseStroke(s string) (Stroke, error) {
	if len(s) > maxKeyString {
		return Stroke{}, &KeyError{s[:32] + "…", "longer than " + strconv.Itoa(maxKeyString) + " bytes"}
	}
	st, err := parseStroke(s)
	if err != nil {
		return Stroke{}, &KeyError{s, err.Error()}
	}
	return st.terminal(), nil
}

type parseError string

func (e parseError) Error() string { return string(e) }

func parseStroke(s string) (Stroke, error) {
	if s == "" {
		return Stroke{}, parseError("empty stroke")
	}
	parts := strings.Split(s, "+")
	keyPart := parts[len(parts)-1]
	var st Stroke
	for _, p := range parts[:len(parts)-1] {
		if p == "" {
			return Stroke{}, parseError(`empty name around "+" (the + key is written plus)`)
		}
		m, ok := modNames()[asciiLower(p)]
		if !ok {
			return Stroke{}, parseError("unknown modifier " + strconv.Quote(p) + " (modifiers: ctrl, alt, meta, shift)")
		}
		if st.Mod&m != 0 {
			return Stroke{}, parseError("modifier " + strconv.Quote(p) + " given twice")
		}
		st.Mod |= m
	}
	switch {
	case keyPart == "" && len(parts) == 1:
		return Stroke{}, parseError("empty stroke")
	case keyPart == "":
		return Stroke{}, parseError(`missing key after "+" (the + key is written plus)`)
	}
	lower := asciiLower(keyPart)
	if k, ok := keyNames()[lower]; ok {
		st.Key = k
		return st, nil
	}
	if _, ok := modNames()[lower]; ok {
		return Stroke{}, parseError(strconv.Quote(keyPart) + " is a modifier; a key must follow it")
	}
	r, size := utf8.DecodeRuneInString(keyPart)
	switch {
	case size != len(keyPart):
		return Stroke{}, parseError("unknown key " + strconv.Quote(keyPart))
	case r == utf8.RuneError && size == 1:
		return Stroke{}, parseError("invalid UTF-8")
	case r == ' ' || !unicode.IsPrint(r):
		return Stroke{}, parseError("a key is a named key or one printable, non-space character")
	}
	st.Key = Key(r)
	return st.shiftCase(), nil
}

// asciiLower folds only A–Z: names are ASCII, and Unicode folding would let
// look-alikes (the Kelvin sign) match them.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
