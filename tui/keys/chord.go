package keys

import (
	"slices"
	"time"
)

// ChordTimeout is how long the second stroke of a chord may take
// (docs/reference/keybindings.md, "Chords").
const ChordTimeout = 1000 * time.Millisecond

// Outcome says what a stroke did in the Matcher.
type Outcome uint8

// The outcomes of Matcher.Press.
const (
	// Unbound: no binding; the UI handles the stroke itself (it types
	// Event.Rune in a text context, ctrl+c interrupts).
	Unbound Outcome = iota
	// Matched: the stroke completed a binding; Match.Action is set.
	Matched
	// Started: the stroke began a chord; the matcher waits for the
	// second stroke until Deadline.
	Started
	// Cancelled: a pending chord ended without an action (Escape, or a
	// second stroke the chord does not continue with). The stroke is
	// consumed.
	Cancelled
)

// Match is the result of one stroke.
type Match struct {
	Outcome Outcome
	Action  Action  // when Matched
	Context Context // the context that had the binding (Matched, Started)
}

// Matcher resolves strokes to actions, chords included
// (docs/reference/keybindings.md, "Chords": the second stroke within 1000
// ms; Escape cancels a pending chord). It is a pure state machine: the
// caller passes the time of each stroke, and arms a timer for Deadline to
// call Expire. Not safe for concurrent use; the zero value uses the default
// keymap.
type Matcher struct {
	km      *Keymap
	pending bool
	first   Stroke
	ctx     Context
	at      time.Time
}

// NewMatcher returns a matcher over km (nil means Defaults()).
func NewMatcher(km *Keymap) *Matcher {
	m := &Matcher{}
	m.SetKeymap(km)
	return m
}

// SetKeymap switches to new bindings, dropping a pending chord (it may not
// exist any more). nil means Defaults().
func (m *Matcher) SetKeymap(km *Keymap) {
	m.km = km
	m.pending = false
}

func (m *Matcher) keymap() *Keymap {
	if m.km == nil {
		m.km = Defaults()
	}
	return m.km
}

var escapeStroke = Stroke{Key: KeyEscape}
var ctrlC = Stroke{Key: 'c', Mod: ModCtrl}

// Press resolves a stroke pressed at now in the given contexts, the
// focused one first: the first context that binds the stroke (alone or as
// the start of a chord) wins. A pending chord started in a context that is
// no longer listed, or more than ChordTimeout ago, is dropped first.
func (m *Matcher) Press(now time.Time, s Stroke, contexts ...Context) Match {
	km := m.keymap()
	if m.pending {
		if now.Sub(m.at) >= ChordTimeout || !slices.Contains(contexts, m.ctx) {
			m.pending = false
		} else {
			m.pending = false
			switch s {
			case escapeStroke:
				return Match{Outcome: Cancelled, Context: m.ctx}
			case ctrlC:
				// Reserved for interrupt (docs/reference/keybindings.md,
				// "Chords"): never swallowed by a chord.
				return Match{Outcome: Unbound}
			}
			if a, ok := km.LookupChord(m.ctx, m.first, s); ok {
				return Match{Outcome: Matched, Action: a, Context: m.ctx}
			}
			return Match{Outcome: Cancelled, Context: m.ctx}
		}
	}
	for _, c := range contexts {
		if a, ok := km.Lookup(c, s); ok {
			return Match{Outcome: Matched, Action: a, Context: c}
		}
		if km.IsPrefix(c, s) {
			m.pending, m.first, m.ctx, m.at = true, s, c, now
			return Match{Outcome: Started, Context: c}
		}
	}
	return Match{Outcome: Unbound}
}

// Pending returns the first stroke of a pending chord (for an indicator
// such as "Ctrl+X …").
func (m *Matcher) Pending() (Stroke, bool) { return m.first, m.pending }

// Deadline returns when a pending chord times out.
func (m *Matcher) Deadline() (time.Time, bool) {
	return m.at.Add(ChordTimeout), m.pending
}

// Expire drops a pending chord whose time is up at now, and reports
// whether it did.
func (m *Matcher) Expire(now time.Time) bool {
	if m.pending && now.Sub(m.at) >= ChordTimeout {
		m.pending = false
		return true
	}
	return false
}

// Cancel drops a pending chord (for example when the screen changes).
func (m *Matcher) Cancel() { m.pending = false }
