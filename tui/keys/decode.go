package keys

import (
	"bytes"
	"sync"
	"unicode"
	"unicode/utf8"
)

// EventKind says what an Event carries.
type EventKind uint8

// The kinds of events.
const (
	// EventKey is a key press: Stroke, and Rune when the key types text.
	EventKey EventKind = iota + 1
	// EventPaste is bracketed-paste text (Text, More), never keys.
	EventPaste
	// EventKittyFlags is the terminal's answer to the kitty keyboard
	// query CSI ? u: the flags in force (Flags). Its arrival means the
	// terminal speaks the protocol.
	EventKittyFlags
	// EventDeviceAttributes is the answer to the primary device
	// attributes query CSI c, which every terminal answers: sent after
	// CSI ? u, it marks the end of the wait for a kitty answer.
	EventDeviceAttributes

	// Internal kinds, never returned.
	evPasteStart // CSI 200 ~
	evSkipCSI    // an overlong CSI: skip to its final byte
	evSkipString // an overlong string: skip to its terminator
)

// Event is one decoded input event.
type Event struct {
	Kind EventKind
	// Stroke is the canonical stroke of an EventKey.
	Stroke Stroke
	// Rune is the character an EventKey types, or 0: set for characters
	// and space pressed with no modifier but shift ('A' for shift+a).
	Rune rune
	// Text is an EventPaste's text: valid UTF-8, line ends as "\n", and no
	// control characters but tab and newline.
	Text string
	// More is set on an EventPaste when more of the same paste follows in
	// a later event: only a paste longer than DecoderOptions.MaxPaste is
	// cut.
	More bool
	// Flags is the kitty flag set of an EventKittyFlags.
	Flags int
}

// DefaultMaxPaste is the largest paste event when DecoderOptions leaves
// MaxPaste at zero.
const DefaultMaxPaste = 4 << 20

// Bounds on what the decoder holds while a sequence is incomplete. No
// terminal sends a key sequence longer than a few dozen bytes; the
// answers the UI may ask for (OSC colours, version strings) fit in 1 KiB.
const (
	maxCSI    = 128  // parameter and intermediate bytes of one CSI or SS3
	maxString = 1024 // body of one OSC, DCS, APC, PM or SOS string
	maxParams = 8    // parameters looked at; more are ignored
	maxSub    = 4    // sub-parameters looked at per parameter
)

// DecoderOptions configures a Decoder. The zero value is the default.
type DecoderOptions struct {
	// MaxPaste bounds the text of one paste event, in bytes; 0 means
	// DefaultMaxPaste. A paste arrives as one event; a longer one arrives
	// as several, each of at most MaxPaste bytes, split between
	// characters, all but the last with More set.
	MaxPaste int
}

// Decoder turns terminal input into events. It recognises the legacy
// xterm/VT sequences (CSI and SS3, with modifier parameters), the rxvt and
// Linux console variants, xterm's modifyOtherKeys (CSI 27;m;k ~), the
// kitty keyboard protocol (CSI … u), bracketed paste, UTF-8 split across
// reads, Alt sent as an ESC prefix, control characters, and backspace as
// both 0x7f and 0x08. Mouse reports, focus events, unknown sequences and
// strings (OSC, DCS, APC, PM, SOS) are skipped.
//
// A lone ESC cannot be told from the start of a sequence by the bytes
// alone: when Pending reports true, the caller waits its escape timeout for
// more input and calls Flush if none came. Feed's results do not depend on
// how the input is split into calls, nor, within a bracketed paste, on
// pauses: a paste is one event however slowly it arrives.
//
// Memory is bounded: an incomplete sequence holds at most a few KiB, an
// overlong one is skipped to its end, and a paste holds at most MaxPaste
// bytes before it is emitted. A Decoder is not safe for concurrent use; the
// zero value is ready and uses the defaults.
type Decoder struct {
	opts DecoderOptions

	pend []byte // an incomplete sequence carried to the next Feed
	skip skipState

	inPaste  bool
	paste    []byte // paste text not yet emitted
	pasteCR  bool   // the last paste byte was CR: a following LF is dropped
	pasteUTF []byte // an incomplete UTF-8 sequence at the end of the last chunk
}

type skipState uint8

const (
	skipNone      skipState = iota
	skipCSI                 // in an overlong CSI
	skipString              // in an overlong string
	skipStringEsc           // in an overlong string, after an ESC
)

// maxPend bounds the carried sequence: a CSI or a string at their limits,
// plus an ESC prefix.
const maxPend = maxString + 8

// NewDecoder returns a decoder with the given options.
func NewDecoder(opts DecoderOptions) *Decoder { return &Decoder{opts: opts} }

func (d *Decoder) maxPaste() int {
	if d.opts.MaxPaste <= 0 {
		return DefaultMaxPaste
	}
	return d.opts.MaxPaste
}

// Pending reports whether the decoder holds input that a pause resolves:
// a lone ESC or an incomplete sequence. Inside a bracketed paste nothing
// is pending: the paste waits for its end marker (or MaxPaste), so that it
// arrives as one event even when it comes in several reads.
func (d *Decoder) Pending() bool {
	return !d.inPaste && (len(d.pend) > 0 || d.skip != skipNone)
}

// Reset forgets all state, including a paste in progress.
func (d *Decoder) Reset() {
	*d = Decoder{opts: d.opts, pend: d.pend[:0], paste: d.paste[:0]}
}

// Flush tells the decoder that no more input arrived within the escape
// timeout and appends what that resolves: a held ESC becomes Escape, an
// incomplete sequence becomes Alt plus its second byte followed by the
// rest as keys. A paste in progress is left alone: it continues with the
// next Feed.
func (d *Decoder) Flush(dst []Event) []Event {
	if d.inPaste {
		return dst
	}
	d.skip = skipNone
	buf := d.pend
	d.pend = nil
	for b := buf; len(b) > 0; {
		ev, n := decodeOne(b, true)
		dst = d.emit(dst, ev)
		b = b[n:]
		if d.inPaste || d.skip != skipNone {
			// Not reachable with what decodeOne holds back (an incomplete
			// sequence contains no complete one), kept for safety.
			return d.Feed(dst, append([]byte(nil), b...))
		}
	}
	d.pend = buf[:0]
	return dst
}

// Feed decodes p, appends the complete events to dst and returns it. Bytes
// that may begin a longer sequence are kept for the next Feed or Flush.
func (d *Decoder) Feed(dst []Event, p []byte) []Event {
	for len(p) > 0 {
		if d.inPaste {
			var n int
			dst, n = d.feedPaste(dst, p)
			p = p[n:]
			continue
		}
		if d.skip != skipNone {
			p = d.skipBytes(p)
			continue
		}
		if len(d.pend) > 0 {
			// Complete the held sequence with as much of p as it can use.
			old := len(d.pend)
			k := min(len(p), maxPend-old)
			d.pend = append(d.pend, p[:k]...)
			ev, n := decodeOne(d.pend, false)
			if n == 0 {
				if len(d.pend) >= maxPend {
					// Cannot happen: decodeOne turns an overlong
					// sequence into a skip before maxPend bytes.
					d.pend = d.pend[:0]
				} else {
					d.pend = d.pend[:old+k]
				}
				p = p[k:]
				continue
			}
			dst = d.emit(dst, ev)
			if n >= old {
				p = p[n-old:]
				d.pend = d.pend[:0]
			} else {
				// The event used only held bytes: decode the rest of
				// them before p.
				rest := append([]byte(nil), d.pend[n:old]...)
				d.pend = d.pend[:0]
				dst = d.Feed(dst, rest)
			}
			continue
		}
		// Fast path: printable ASCII needs no sequence logic.
		i := 0
		ascii := asciiEvents()
		for i < len(p) && p[i] >= 0x20 && p[i] < 0x7f {
			dst = append(dst, ascii[p[i]])
			i++
		}
		p = p[i:]
		if len(p) == 0 {
			break
		}
		ev, n := decodeOne(p, false)
		if n == 0 {
			d.pend = append(d.pend[:0], p...)
			break
		}
		dst = d.emit(dst, ev)
		p = p[n:]
	}
	return dst
}

// emit appends ev, or applies it when it is internal.
func (d *Decoder) emit(dst []Event, ev Event) []Event {
	switch ev.Kind {
	case 0:
		return dst
	case evSkipCSI:
		d.skip = skipCSI
		return dst
	case evSkipString:
		d.skip = skipString
		return dst
	case evPasteStart:
		d.inPaste = true
		d.paste = d.paste[:0]
		d.pasteCR = false
		d.pasteUTF = d.pasteUTF[:0]
		return dst
	}
	return append(dst, ev)
}

// skipBytes consumes the rest of an overlong sequence and returns what
// follows it.
func (d *Decoder) skipBytes(p []byte) []byte {
	for i, c := range p {
		switch d.skip {
		case skipCSI:
			if c >= 0x20 && c <= 0x3f {
				continue
			}
			d.skip = skipNone
			if c >= 0x40 && c <= 0x7e {
				return p[i+1:]
			}
			return p[i:] // not part of a CSI: decode it
		case skipString:
			if c == bel {
				d.skip = skipNone
				return p[i+1:]
			}
			if c == esc {
				d.skip = skipStringEsc
			}
		case skipStringEsc:
			d.skip = skipNone
			if c == '\\' {
				return p[i+1:]
			}
			return p[i:] // ESC ended the string; what follows is input
		}
	}
	return nil
}

const (
	esc = 0x1b
	bel = 0x07
)

// asciiEvents is made on first use, not when the package initialises:
// commands that read no keys (most of the command line) do not pay for it
// (docs/performance.md, "Startup").
var asciiEvents = sync.OnceValue(func() *[0x80]Event {
	var t [0x80]Event
	for c := 0x20; c < 0x7f; c++ {
		t[c] = Event{Kind: EventKey, Stroke: Stroke{Key: Key(c)}.Canonical(), Rune: rune(c)}
	}
	return &t
})

func keyEvent(k Key, m Mod) Event {
	return Event{Kind: EventKey, Stroke: Stroke{Key: k, Mod: m}.Canonical()}
}

// decodeOne decodes the event at the start of b and reports how many bytes
// it used. An event of Kind 0 with n > 0 means the bytes are skipped. n == 0
// means b is an incomplete sequence and more input may complete it; with
// flush set, it always uses at least one byte.
func decodeOne(b []byte, flush bool) (Event, int) {
	c := b[0]
	switch {
	case c >= 0x20 && c < 0x7f:
		return asciiEvents()[c], 1
	case c == esc:
		return decodeEsc(b, flush)
	case c < 0x20:
		return controlEvent(c), 1
	case c == 0x7f:
		return keyEvent(KeyBackspace, 0), 1
	}
	if !utf8.FullRune(b) {
		if flush {
			return Event{}, 1 // a truncated character: drop its bytes one by one
		}
		return Event{}, 0
	}
	r, size := utf8.DecodeRune(b)
	if r == utf8.RuneError && size == 1 || r < 0xa0 {
		return Event{}, size // invalid UTF-8, or a C1 control
	}
	return Event{Kind: EventKey, Stroke: Stroke{Key: Key(r)}.Canonical(), Rune: r}, size
}

// controlEvent maps a C0 byte other than ESC to its key: 0x08 is
// backspace (many terminals send it for the backspace key), 0x09 tab,
// 0x0d enter, 0x00 ctrl+space, and the rest ctrl plus the letter or
// symbol whose code the terminal cleared bits of.
func controlEvent(c byte) Event {
	switch c {
	case 0x00:
		return keyEvent(KeySpace, ModCtrl)
	case 0x08:
		return keyEvent(KeyBackspace, 0)
	case 0x09:
		return keyEvent(KeyTab, 0)
	case 0x0d:
		return keyEvent(KeyEnter, 0)
	}
	if c <= 0x1a {
		return keyEvent(Key('a'+c-1), ModCtrl)
	}
	return keyEvent(Key(c+0x40), ModCtrl) // 0x1c–0x1f: ctrl+\ ] ^ _
}

func isStringIntro(c byte) bool {
	return c == ']' || c == 'P' || c == '_' || c == '^' || c == 'X'
}

// decodeEsc decodes input that starts with ESC.
func decodeEsc(b []byte, flush bool) (Event, int) {
	if len(b) == 1 {
		if flush {
			return keyEvent(KeyEscape, 0), 1
		}
		return Event{}, 0
	}
	var ev Event
	var n int
	switch c := b[1]; {
	case c == '[':
		ev, n = decodeCSI(b)
	case c == 'O':
		ev, n = decodeSS3(b)
	case isStringIntro(c):
		ev, n = decodeString(b)
	case c == esc:
		// ESC ESC: Alt plus Escape, or Alt plus a sequence (some terminals
		// send ESC ESC [ A for alt+up).
		if len(b) == 2 {
			if flush {
				return keyEvent(KeyEscape, ModAlt), 2
			}
			return Event{}, 0
		}
		if b[2] == '[' || b[2] == 'O' {
			inner, m := decodeEsc(b[1:], false)
			switch {
			case m == 0 && !flush:
				return Event{}, 0
			case m == 0:
				// Incomplete: alt+escape, and the rest are keys.
			case inner.Kind == EventKey:
				inner.Stroke.Mod |= ModAlt
				inner.Rune = 0
				return inner, m + 1
			default:
				return inner, m + 1 // skips, replies and pastes keep their meaning
			}
		}
		return keyEvent(KeyEscape, ModAlt), 2
	default:
		// Alt as an ESC prefix: ESC then a character or a control byte.
		inner, m := decodeOne(b[1:], flush)
		switch {
		case m == 0:
			return Event{}, 0
		case inner.Kind != EventKey:
			// ESC before an invalid byte: the ESC stands alone.
			return keyEvent(KeyEscape, 0), 1
		}
		inner.Stroke.Mod |= ModAlt
		inner.Stroke = inner.Stroke.Canonical()
		inner.Rune = 0
		return inner, m + 1
	}
	if n == 0 && flush {
		// An incomplete sequence with no more input: it was Alt plus the
		// introducer typed by hand (alt+[ , alt+O); the rest are keys.
		return keyEvent(Key(b[1]), ModAlt), 2
	}
	return ev, n
}

// decodeString skips an OSC, DCS, APC, PM or SOS string, which ends at BEL
// or ST (ESC \). A string longer than maxString is skipped in parts (the
// caller continues with skipString).
func decodeString(b []byte) (Event, int) {
	for i := 2; i < len(b); i++ {
		if i-2 >= maxString {
			return Event{Kind: evSkipString}, i
		}
		switch b[i] {
		case bel:
			return Event{}, i + 1
		case esc:
			if i+1 == len(b) {
				return Event{}, 0
			}
			if b[i+1] == '\\' {
				return Event{}, i + 2
			}
			return Event{}, i // ESC aborts the string; decode from it
		}
	}
	return Event{}, 0
}

// decodeSS3 decodes ESC O [digits ;] final: application-mode cursor keys,
// F1–F4 and the keypad, with an optional modifier parameter.
func decodeSS3(b []byte) (Event, int) {
	i := 2
	for i < len(b) && (b[i] >= '0' && b[i] <= '9' || b[i] == ';') {
		i++
		if i-2 > 16 {
			return Event{}, i // not an SS3 key; drop what was looked at
		}
	}
	if i == len(b) {
		return Event{}, 0
	}
	final := b[i]
	if final < 0x40 || final > 0x7e {
		return Event{}, i // broken sequence
	}
	var ps params
	ps.parse(b[2:i])
	// ESC O 5 P (old xterm) and ESC O 1;5 P both carry the modifier last.
	mod := modsFrom(ps.last())
	if mod.release {
		return Event{}, i + 1
	}
	var k Key
	switch final {
	case 'A':
		k = KeyUp
	case 'B':
		k = KeyDown
	case 'C':
		k = KeyRight
	case 'D':
		k = KeyLeft
	case 'H':
		k = KeyHome
	case 'F':
		k = KeyEnd
	case 'P', 'Q', 'R', 'S':
		k = KeyF1 + Key(final-'P')
	case 'M':
		k = KeyEnter // keypad enter
	case 'I':
		k = KeyTab
	case 'a', 'b', 'c', 'd': // rxvt ctrl+arrows
		return keyEvent([4]Key{KeyUp, KeyDown, KeyRight, KeyLeft}[final-'a'], ModCtrl|mod.m), i + 1
	default:
		// Application keypad: ESC O j … y and X are the keypad's
		// characters.
		if r, ok := keypadRune(final); ok {
			ev := keyEvent(Key(r), mod.m)
			if mod.m&^ModShift == 0 {
				ev.Rune = r
			}
			return ev, i + 1
		}
		return Event{}, i + 1
	}
	return keyEvent(k, mod.m), i + 1
}

func keypadRune(c byte) (rune, bool) {
	switch {
	case c >= 'p' && c <= 'y':
		return rune('0' + c - 'p'), true
	case c == 'j':
		return '*', true
	case c == 'k':
		return '+', true
	case c == 'l':
		return ',', true
	case c == 'm':
		return '-', true
	case c == 'n':
		return '.', true
	case c == 'o':
		return '/', true
	case c == 'X':
		return '=', true
	}
	return 0, false
}

// params holds the numeric parameters of a CSI: up to maxParams, each with
// up to maxSub colon-separated sub-parameters. -1 marks an absent value.
type params struct {
	n   int
	v   [maxParams][maxSub]int
	sub [maxParams]int // number of sub-parameters seen
}

const paramCap = 1 << 22 // larger numbers are clamped: no key code exceeds it

func (ps *params) parse(b []byte) {
	ps.n = 0
	if len(b) == 0 {
		return
	}
	ps.n = 1
	p, s := 0, 0
	ps.v[0][0] = -1
	ps.sub[0] = 1
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			if p < maxParams && s < maxSub {
				v := ps.v[p][s]
				if v < 0 {
					v = 0
				}
				if v = v*10 + int(c-'0'); v > paramCap {
					v = paramCap
				}
				ps.v[p][s] = v
			}
		case c == ';':
			p++
			s = 0
			if p < maxParams {
				ps.n = p + 1
				ps.v[p][0] = -1
				ps.sub[p] = 1
			}
		case c == ':':
			s++
			if p < maxParams && s < maxSub {
				ps.v[p][s] = -1
				ps.sub[p] = s + 1
			}
		}
	}
}

// get returns parameter i's sub-parameter j, or def when absent.
func (ps *params) get(i, j, def int) int {
	if i >= ps.n || j >= ps.sub[i] || ps.v[i][j] < 0 {
		return def
	}
	return ps.v[i][j]
}

// last returns the last parameter with its sub-parameters as a one-
// parameter set, for modifier lookups.
func (ps *params) last() (m, event int) {
	if ps.n == 0 {
		return 1, 1
	}
	return ps.get(ps.n-1, 0, 1), ps.get(ps.n-1, 1, 1)
}

type mods struct {
	m       Mod
	release bool
}

// modsFrom decodes a modifier parameter (1 + a bit set: shift 1, alt 2,
// ctrl 4, super 8, hyper 16, meta 32, caps lock 64, num lock 128 — xterm
// uses the first four, the kitty protocol all eight) and the kitty event
// type (1 press, 2 repeat, 3 release).
func modsFrom(param, event int) mods {
	var r mods
	if param > 1 {
		bits := param - 1
		if bits&1 != 0 {
			r.m |= ModShift
		}
		if bits&2 != 0 {
			r.m |= ModAlt
		}
		if bits&4 != 0 {
			r.m |= ModCtrl
		}
		if bits&(8|16|32) != 0 {
			r.m |= ModMeta
		}
	}
	r.release = event == 3
	return r
}

// decodeCSI decodes ESC [ params intermediates final.
func decodeCSI(b []byte) (Event, int) {
	i := 2
	if i < len(b) && b[i] == '[' {
		// Linux console F1–F5: ESC [ [ A … E.
		if i+1 >= len(b) {
			return Event{}, 0
		}
		if c := b[i+1]; c >= 'A' && c <= 'E' {
			return keyEvent(KeyF1+Key(c-'A'), 0), 4
		}
		return Event{}, 3
	}
	start := i
	inter := false
	for ; i < len(b); i++ {
		c := b[i]
		if c >= 0x40 && c <= 0x7e {
			break
		}
		if c < 0x20 || c > 0x3f {
			// Not a CSI byte: the sequence is broken. Drop what came
			// before and decode from this byte.
			return Event{}, i
		}
		if c == '$' && !inter && i > start && allDigits(b[start:i]) {
			// rxvt ends its shifted editing keys with $ (CSI 3 $ is
			// shift+delete) where ECMA-48 has an intermediate byte. No
			// reply a terminal sends has this shape: DECRPM carries two
			// parameters (CSI 2026 ; 2 $ y).
			var ps params
			ps.parse(b[start:i])
			if k := tildeKey(ps.get(0, 0, -1)); k != 0 {
				return keyEvent(k, ModShift), i + 1
			}
		}
		if c <= 0x2f {
			inter = true
		}
		if i-start >= maxCSI {
			return Event{Kind: evSkipCSI}, i // overlong: skip the rest too
		}
	}
	if i == len(b) {
		return Event{}, 0
	}
	final := b[i]
	body := b[start:i]
	n := i + 1
	if final == 'M' && len(body) == 0 {
		// X10 mouse: three raw bytes follow.
		if len(b) < n+3 {
			return Event{}, 0
		}
		return Event{}, n + 3
	}
	if inter {
		return Event{}, n // replies such as DECRPM (CSI ? 2026 ; 2 $ y)
	}
	if len(body) > 0 && body[0] >= '<' && body[0] <= '?' {
		var ps params
		ps.parse(body[1:])
		switch {
		case body[0] == '?' && final == 'u':
			return Event{Kind: EventKittyFlags, Flags: ps.get(0, 0, 0)}, n
		case body[0] == '?' && final == 'c':
			return Event{Kind: EventDeviceAttributes}, n
		}
		return Event{}, n // SGR mouse and other private reports
	}
	var ps params
	ps.parse(body)
	return csiKey(&ps, final), n
}

// csiKey interprets a CSI without private marker or intermediates.
func csiKey(ps *params, final byte) Event {
	var k Key
	m := modsFrom(ps.get(1, 0, 1), ps.get(1, 1, 1))
	switch final {
	case 'A':
		k = KeyUp
	case 'B':
		k = KeyDown
	case 'C':
		k = KeyRight
	case 'D':
		k = KeyLeft
	case 'H':
		k = KeyHome
	case 'F':
		k = KeyEnd
	case 'P', 'Q', 'S':
		k = KeyF1 + Key(final-'P')
	case 'R':
		// F3 in xterm's CSI 1;m R form. A cursor position report has the
		// same shape; the UI never asks for one.
		if ps.get(0, 0, 1) != 1 {
			return Event{}
		}
		k = KeyF3
	case 'Z':
		k = KeyTab
		m.m |= ModShift
	case 'a', 'b', 'c', 'd': // rxvt shift+arrows
		if ps.n != 0 {
			return Event{}
		}
		k = [4]Key{KeyUp, KeyDown, KeyRight, KeyLeft}[final-'a']
		m.m |= ModShift
	case '~', '^', '@':
		code := ps.get(0, 0, -1)
		if final == '~' {
			switch code {
			case 200:
				return Event{Kind: evPasteStart}
			case 27:
				// xterm modifyOtherKeys: CSI 27 ; m ; code ~, where
				// code is the character the key types (shift applied).
				code := ps.get(2, 0, -1)
				return kittyKey(code, code, m, -1)
			}
		} else {
			// rxvt: ^ adds ctrl, @ ctrl and shift.
			m.m |= ModCtrl
			if final == '@' {
				m.m |= ModShift
			}
		}
		k = tildeKey(code)
		if k == 0 {
			return Event{}
		}
	case 'u':
		return kittyKey(ps.get(0, 0, -1), ps.get(0, 1, -1), m, ps.get(2, 0, -1))
	default:
		return Event{}
	}
	if m.release {
		return Event{}
	}
	return keyEvent(k, m.m)
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// tildeKey maps the number of a CSI number ~ key (VT220 and rxvt).
func tildeKey(code int) Key {
	switch code {
	case 1, 7:
		return KeyHome
	case 2:
		return KeyInsert
	case 3:
		return KeyDelete
	case 4, 8:
		return KeyEnd
	case 5:
		return KeyPageUp
	case 6:
		return KeyPageDown
	case 11, 12, 13, 14, 15:
		return KeyF1 + Key(code-11)
	case 17, 18, 19, 20, 21:
		return KeyF6 + Key(code-17)
	case 23, 24:
		return KeyF11 + Key(code-23)
	}
	return 0
}

// kittyKey builds the event of a kitty CSI code[:shifted] ; mods u (or
// xterm's CSI 27 ; mods ; code ~). text is the first code point of the
// associated text, when the terminal reports it.
func kittyKey(code, shifted int, m mods, text int) Event {
	if m.release || code < 0 {
		return Event{}
	}
	var k Key
	switch {
	case code == 9:
		k = KeyTab
	case code == 13:
		k = KeyEnter
	case code == 27:
		k = KeyEscape
	case code == 127 || code == 8:
		k = KeyBackspace
	case code >= 57399 && code <= 57426:
		// The keypad, in the protocol's private-use range.
		k = kittyKeypad[code-57399]
	case code < 0x20 || code >= 0x7f && code < 0xa0 || code > unicode.MaxRune ||
		code >= 0xe000 && code <= 0xf8ff || code >= 0xd800 && code <= 0xdfff:
		// Controls, surrogates and the private-use keys (modifier keys,
		// media keys, F13 and up): nothing a binding can name.
		return Event{}
	default:
		k = Key(code)
	}
	ev := Event{Kind: EventKey, Stroke: Stroke{Key: k, Mod: m.m}.Canonical()}
	if k.IsNamed() || m.m&^ModShift != 0 {
		return ev
	}
	// A key that types text is the stroke of that text, as a legacy
	// terminal sends it: shift+a types "A" (shift+a), shift+1 types "!"
	// (the key "!"). When the shifted character is unknown (no alternate
	// key reported), the key types nothing.
	r := rune(k)
	if m.m&ModShift != 0 {
		switch {
		case validText(shifted):
			r = rune(shifted)
		case k == KeySpace:
		case unicode.ToUpper(r) != r:
			r = unicode.ToUpper(r)
		default:
			r = 0
		}
	}
	if validText(text) {
		r = rune(text)
	}
	if r != 0 {
		ev.Rune = r
		ev.Stroke = Stroke{Key: Key(r)}.Canonical()
	}
	return ev
}

func validText(c int) bool {
	return c >= 0x20 && c <= unicode.MaxRune && unicode.IsPrint(rune(c))
}

var kittyKeypad = [...]Key{
	'0', '1', '2', '3', '4', '5', '6', '7', '8', '9',
	'.', '/', '*', '-', '+', KeyEnter, '=', ',',
	KeyLeft, KeyRight, KeyUp, KeyDown, KeyPageUp, KeyPageDown, KeyHome, KeyEnd, KeyInsert, KeyDelete,
}

// feedPaste consumes paste input up to and including the end marker
// CSI 201 ~ and returns how much of p it used.
func (d *Decoder) feedPaste(dst []Event, p []byte) ([]Event, int) {
	if len(d.pend) > 0 {
		// A possible start of the end marker was held back.
		need := len(pasteEnd) - len(d.pend)
		k := min(need, len(p))
		if bytes.Equal(p[:k], pasteEnd[len(d.pend):len(d.pend)+k]) {
			if k < need {
				d.pend = append(d.pend, p[:k]...)
				return dst, k
			}
			d.pend = d.pend[:0]
			return d.endPaste(dst), k
		}
		// Not the marker: the held bytes were paste text.
		held := d.pend
		d.pend = nil
		dst = d.appendPaste(dst, held)
		d.pend = held[:0]
		return dst, 0
	}
	i := bytes.IndexByte(p, esc)
	if i < 0 {
		return d.appendPaste(dst, p), len(p)
	}
	dst = d.appendPaste(dst, p[:i])
	rest := p[i:]
	switch {
	case bytes.HasPrefix(rest, pasteEnd):
		return d.endPaste(dst), i + len(pasteEnd)
	case bytes.HasPrefix(pasteEnd, rest):
		d.pend = append(d.pend[:0], rest...)
		return dst, len(p)
	}
	// An ESC inside the paste is content (and dropped as a control).
	return d.appendPaste(dst, rest[:1]), i + 1
}

var pasteEnd = []byte("\x1b[201~")

func (d *Decoder) endPaste(dst []Event) []Event {
	if len(d.pasteUTF) > 0 {
		d.paste = utf8.AppendRune(d.paste, utf8.RuneError) // truncated character
		d.pasteUTF = d.pasteUTF[:0]
	}
	d.inPaste = false
	dst = append(dst, Event{Kind: EventPaste, Text: string(d.paste)})
	d.paste = d.paste[:0]
	return dst
}

// appendPaste adds raw paste bytes to the text: CR LF and CR become LF,
// controls other than tab and newline, DEL and C1 are dropped, and invalid
// UTF-8 becomes U+FFFD, so the UI receives plain text. The text is emitted
// whenever it reaches MaxPaste.
func (d *Decoder) appendPaste(dst []Event, b []byte) []Event {
	limit := d.maxPaste()
	if len(d.pasteUTF) > 0 {
		// Complete the character split by the previous chunk.
		k := min(utf8.UTFMax-len(d.pasteUTF), len(b))
		tmp := append(d.pasteUTF[:len(d.pasteUTF):len(d.pasteUTF)], b[:k]...)
		if !utf8.FullRune(tmp) {
			d.pasteUTF = append(d.pasteUTF, b[:k]...)
			return dst
		}
		var held [utf8.UTFMax]byte
		n := copy(held[:], d.pasteUTF)
		d.pasteUTF = d.pasteUTF[:0]
		d.pasteCR = false
		r, size := utf8.DecodeRune(tmp)
		if size > n {
			dst = d.pasteChar(dst, r, tmp[:size], limit)
			b = b[size-n:]
		} else {
			// The next byte did not continue the character: decode the
			// held bytes as if they had arrived with b, one invalid byte
			// at a time.
			dst = d.pasteRune(dst, utf8.RuneError, limit)
			dst = d.appendPaste(dst, held[1:n])
		}
	}
	for len(b) > 0 {
		// Runs of printable ASCII go in at once.
		i := 0
		for i < len(b) && b[i] >= 0x20 && b[i] < 0x7f {
			i++
		}
		if i > 0 {
			d.pasteCR = false
			dst = d.pasteBytes(dst, b[:i], limit)
			b = b[i:]
			continue
		}
		c := b[0]
		if c < 0x80 {
			switch c {
			case '\r':
				dst = d.pasteRune(dst, '\n', limit)
				d.pasteCR = true
			case '\n':
				if !d.pasteCR {
					dst = d.pasteRune(dst, '\n', limit)
				}
				d.pasteCR = false
			case '\t':
				dst = d.pasteRune(dst, '\t', limit)
				d.pasteCR = false
			default:
				d.pasteCR = false
			}
			b = b[1:]
			continue
		}
		d.pasteCR = false
		if !utf8.FullRune(b) {
			d.pasteUTF = append(d.pasteUTF[:0], b...)
			return dst
		}
		r, size := utf8.DecodeRune(b)
		dst = d.pasteChar(dst, r, b[:size], limit)
		b = b[size:]
	}
	return dst
}

// pasteChar adds one decoded non-ASCII character: U+FFFD for invalid
// bytes, nothing for a C1 control.
func (d *Decoder) pasteChar(dst []Event, r rune, raw []byte, limit int) []Event {
	switch {
	case r == utf8.RuneError && len(raw) == 1:
		return d.pasteRune(dst, utf8.RuneError, limit)
	case r < 0xa0:
		return dst
	}
	return d.pasteBytes(dst, raw, limit)
}

func (d *Decoder) pasteRune(dst []Event, r rune, limit int) []Event {
	var buf [utf8.UTFMax]byte
	return d.pasteBytes(dst, utf8.AppendRune(buf[:0], r), limit)
}

// pasteBytes appends valid text, emitting a full event first when the text
// would pass the limit. b is ASCII or one whole character, so cutting it
// at the limit (ASCII) or before it (a character) splits between
// characters.
func (d *Decoder) pasteBytes(dst []Event, b []byte, limit int) []Event {
	for len(d.paste)+len(b) > limit {
		room := limit - len(d.paste)
		if room > 0 && b[0] < 0x80 {
			d.paste = append(d.paste, b[:room]...)
			b = b[room:]
		}
		if len(d.paste) == 0 {
			break // one character larger than the limit (limit < 4): let it through
		}
		dst = append(dst, Event{Kind: EventPaste, Text: string(d.paste), More: true})
		d.paste = d.paste[:0]
	}
	d.paste = append(d.paste, b...)
	return dst
}
