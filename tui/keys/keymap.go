package keys

import (
	"strings"
	"sync"
)

// Keymap is the resolved bindings of every context: the defaults with the
// file's overrides applied (docs/reference/keybindings.md, "Meaning of a
// binding"). It is immutable and safe for concurrent use; a new file yields
// a new Keymap.
type Keymap struct {
	ctx [numContexts]ctxMap
}

type ctxMap struct {
	single map[Stroke]Action   // one-stroke bindings
	chord  map[Sequence]Action // two-stroke bindings
	prefix map[Stroke]struct{} // first strokes of chords
	keys   [][]Sequence        // by action index: the bound keys, nil when unbound
	hints  []string            // by action index: the display form
}

// newKeymap builds a keymap from each context's keys per action index. The
// keys must already satisfy the rules of docs/reference/keybindings.md,
// "Validity rules" (ParseFile checks them; the defaults satisfy them by
// test).
func newKeymap(bound *[numContexts][][]Sequence) *Keymap {
	m := &Keymap{}
	for c := range numContexts {
		cm := &m.ctx[c]
		cm.single = make(map[Stroke]Action)
		cm.chord = make(map[Sequence]Action)
		cm.prefix = make(map[Stroke]struct{})
		n := len(spec[c].actions)
		cm.keys = make([][]Sequence, n)
		cm.hints = make([]string, n)
		for i, as := range spec[c].actions {
			seqs := bound[c][i]
			cm.keys[i] = seqs
			cm.hints[i] = displayAll(seqs)
			for _, q := range seqs {
				if q.IsChord() {
					cm.chord[q] = as.action
					cm.prefix[q.First] = struct{}{}
				} else {
					cm.single[q.First] = as.action
				}
			}
		}
	}
	return m
}

// displayAll joins the display forms of alternatives with "/" (Ctrl+R,
// Backspace/Del, ↑/←).
func displayAll(seqs []Sequence) string {
	var b strings.Builder
	for i, q := range seqs {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(q.Display())
	}
	return b.String()
}

var (
	defaultsOnce sync.Once
	defaultKeys  [numContexts][][]Sequence
	defaultMap   *Keymap
)

func loadDefaults() {
	for c := range numContexts {
		defaultKeys[c] = make([][]Sequence, len(spec[c].actions))
		for i, as := range spec[c].actions {
			for _, s := range as.keys {
				q, err := ParseSequence(s)
				if err != nil {
					panic("keys: default " + s + ": " + err.Error()) // a bug in the table, caught by tests
				}
				defaultKeys[c][i] = append(defaultKeys[c][i], q)
			}
		}
	}
	defaultMap = newKeymap(&defaultKeys)
}

// Defaults returns the keymap of docs/reference/keybindings.md, "Defaults",
// in force when there is no overrides file.
func Defaults() *Keymap {
	defaultsOnce.Do(loadDefaults)
	return defaultMap
}

// defaultSeqs returns the default keys of action index i in context c.
func defaultSeqs(c Context, i int) []Sequence {
	defaultsOnce.Do(loadDefaults)
	return defaultKeys[c][i]
}

// Lookup returns the action a single stroke triggers in a context. The
// stroke must be canonical, as the Decoder and the parsers produce it. A
// stroke that begins a chord is not found here; the Matcher handles chords.
func (m *Keymap) Lookup(c Context, s Stroke) (Action, bool) {
	if c >= numContexts {
		return "", false
	}
	a, ok := m.ctx[c].single[s]
	return a, ok
}

// LookupChord returns the action of a two-stroke chord in a context.
func (m *Keymap) LookupChord(c Context, first, second Stroke) (Action, bool) {
	if c >= numContexts {
		return "", false
	}
	a, ok := m.ctx[c].chord[Sequence{first, second}]
	return a, ok
}

// IsPrefix reports whether the stroke begins a chord in the context.
func (m *Keymap) IsPrefix(c Context, s Stroke) bool {
	if c >= numContexts {
		return false
	}
	_, ok := m.ctx[c].prefix[s]
	return ok
}

// Keys returns the keys bound to an action, in the order the file (or the
// defaults) lists them; none when the action is unbound or unknown. The
// slice is a copy.
func (m *Keymap) Keys(c Context, a Action) []Sequence {
	i := c.actionIndex(a)
	if i < 0 {
		return nil
	}
	return append([]Sequence(nil), m.ctx[c].keys[i]...)
}

// Hint returns the display form of an action's keys for the footer
// (docs/reference/keybindings.md, "Meaning of a binding"): alternatives
// joined with "/", "" when the action is unbound, which hides its hint.
func (m *Keymap) Hint(c Context, a Action) string {
	i := c.actionIndex(a)
	if i < 0 {
		return ""
	}
	return m.ctx[c].hints[i]
}
