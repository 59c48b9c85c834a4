package keys

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"agent/internal/quote"
	"agent/internal/strictjson"
)

// MaxFileSize bounds the keybindings file; a sparse overrides file is a
// few hundred bytes.
const MaxFileSize = 1 << 20

// Problem is one problem of a keybindings file, located by the JSONPath of
// the offending value (or of the object that lacks a field) and by its
// line and column.
type Problem struct {
	Path    strictjson.Path
	Line    int
	Col     int
	Msg     string
	Warning bool // a warning does not make the file invalid
}

// String returns "JSONPATH: message", or "JSONPATH: warning: message".
func (p Problem) String() string {
	if p.Warning {
		return string(p.Path) + ": warning: " + p.Msg
	}
	return string(p.Path) + ": " + p.Msg
}

// Format returns the line shown to the user (docs/reference/keybindings.md,
// "Location and loading"; docs/reference/cli.md, "Keybindings check"):
// "FILE: JSONPATH: message".
func (p Problem) Format(file string) string { return file + ": " + p.String() }

// HasErrors reports whether any of the problems is an error.
func HasErrors(problems []Problem) bool {
	return slices.ContainsFunc(problems, func(p Problem) bool { return !p.Warning })
}

// ParseFile validates a keybindings overrides file
// (docs/reference/keybindings.md, "File format", "Key strings" and
// "Validity rules") and applies it on top of the defaults ("Meaning of a
// binding" and "Defaults"). It returns every problem in document order; the
// keymap is nil when any of them is an error, and the resolved bindings
// otherwise (warnings do not prevent it).
func ParseFile(data []byte) (*Keymap, []Problem) {
	v := &validator{}
	root, err := strictjson.Parse(data, strictjson.Options{MaxBytes: MaxFileSize})
	if err != nil {
		if root = v.recover(data, err); root == nil {
			return nil, v.problems
		}
	}
	v.file(root)
	bound := v.resolve()
	sort.SliceStable(v.problems, func(i, j int) bool {
		a, b := v.problems[i], v.problems[j]
		return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col
	})
	if HasErrors(v.problems) {
		return nil, v.problems
	}
	return newKeymap(bound), v.problems
}

// item is one key string of an override that passed every per-key rule.
type item struct {
	seq    Sequence
	raw    string
	path   strictjson.Path
	action int
	line   int
	col    int
}

type validator struct {
	problems []Problem
	set      [numContexts]map[int]bool // actions the file names, by index
	items    [numContexts][]item       // their valid keys, in document order
}

func (v *validator) add(at *strictjson.Value, path strictjson.Path, warning bool, format string, args ...any) {
	v.problems = append(v.problems, Problem{Path: path, Line: at.Line, Col: at.Col, Msg: fmt.Sprintf(format, args...), Warning: warning})
}

func (v *validator) errorf(at *strictjson.Value, path strictjson.Path, format string, args ...any) {
	v.add(at, path, false, format, args...)
}

// errorKey reports a problem with an object key, at the key's position.
func (v *validator) errorKey(m *strictjson.Member, path strictjson.Path, format string, args ...any) {
	v.problems = append(v.problems, Problem{Path: path, Line: m.Line, Col: m.Col, Msg: fmt.Sprintf(format, args...)})
}

// article gives "an object", "a string" for messages.
func article(k strictjson.Kind) string {
	switch k {
	case strictjson.Array, strictjson.Object:
		return "an " + k.String()
	case strictjson.Null:
		return "null"
	}
	return "a " + k.String()
}

// file checks the top-level object (docs/reference/keybindings.md, "File
// format").
func (v *validator) file(root *strictjson.Value) {
	if root.Kind != strictjson.Object {
		v.errorf(root, strictjson.Root, "expected a JSON object with version and bindings, found %s", article(root.Kind))
		return
	}
	var version, bindings bool
	for i := range root.Members {
		m := &root.Members[i]
		path := strictjson.Root.Key(m.Key)
		switch m.Key {
		case "$schema":
			if m.Value.Kind != strictjson.String {
				v.errorf(m.Value, path, "expected a string, found %s", article(m.Value.Kind))
			}
		case "version":
			version = true
			switch {
			case m.Value.Kind != strictjson.Number:
				v.errorf(m.Value, path, "expected the number 1, found %s", article(m.Value.Kind))
			case !isOne(m.Value.Str):
				v.errorf(m.Value, path, "unsupported version %s: the only version is 1", m.Value.Str)
			}
		case "bindings":
			bindings = true
			v.bindings(m.Value, path)
		default:
			v.errorKey(m, path, "unknown field %q (allowed: $schema, version, bindings)", quote.V(m.Key))
		}
	}
	if !version {
		v.errorf(root, strictjson.Root, `missing required field "version" (add "version": 1)`)
	}
	if !bindings {
		v.errorf(root, strictjson.Root, `missing required field "bindings"`)
	}
}

// isOne reports whether a JSON number equals 1 exactly
// (docs/reference/keybindings.md, "File format": the number 1), in any
// spelling: 1, 1.0, 1e0, 0.1e1, 10E-1. Exactly, not as a float64:
// 1.0000000000000001 rounds to 1 but is not 1.
func isOne(num string) bool {
	mant, exp, _ := strings.Cut(strings.ToLower(num), "e")
	if strings.HasPrefix(mant, "-") {
		return false
	}
	e := 0
	if exp != "" {
		n, err := strconv.Atoi(exp)
		if err != nil {
			return false // beyond int: no mantissa a 1 MiB file holds brings it back to 1
		}
		e = n
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	// The value is digits × 10^(e - len(frac) - trailing zeros dropped).
	trimmed := strings.TrimRight(digits, "0")
	e += len(digits) - len(trimmed) - len(frac)
	return trimmed == "1" && e == 0
}

func (v *validator) bindings(val *strictjson.Value, path strictjson.Path) {
	if val.Kind != strictjson.Object {
		v.errorf(val, path, "expected an object of contexts, found %s", article(val.Kind))
		return
	}
	for i := range val.Members {
		m := &val.Members[i]
		cpath := path.Key(m.Key)
		c, ok := ParseContext(m.Key)
		if !ok {
			v.errorKey(m, cpath, "unknown context %q%s", quote.V(m.Key), suggest(m.Key, contextNames()))
			continue
		}
		if m.Value.Kind != strictjson.Object {
			v.errorf(m.Value, cpath, "expected an object of actions, found %s", article(m.Value.Kind))
			continue
		}
		for j := range m.Value.Members {
			am := &m.Value.Members[j]
			apath := cpath.Key(am.Key)
			idx := c.actionIndex(Action(am.Key))
			if idx < 0 {
				v.errorKey(am, apath, "unknown action %q in %s (actions: %s)%s", quote.V(am.Key), c, actionList(c), suggest(am.Key, actionNames(c)))
				continue
			}
			v.binding(c, idx, am.Value, apath)
		}
	}
}

// binding checks one action's value (docs/reference/keybindings.md, "File
// format"): a non-empty string, a non-empty array of unique non-empty
// strings, or null.
func (v *validator) binding(c Context, idx int, val *strictjson.Value, path strictjson.Path) {
	if v.set[c] == nil {
		v.set[c] = make(map[int]bool)
	}
	v.set[c][idx] = true
	switch val.Kind {
	case strictjson.Null:
		// Unbinds the action (docs/reference/keybindings.md, "Meaning of a
		// binding").
	case strictjson.String:
		if val.Str == "" {
			v.errorf(val, path, "empty key string (to unbind the action use null)")
			return
		}
		if it, ok := v.key(c, idx, val, path); ok {
			v.items[c] = append(v.items[c], it)
		}
	case strictjson.Array:
		if len(val.Items) == 0 {
			v.errorf(val, path, "empty array (to unbind the action use null)")
			return
		}
		// Maps, not scans: a hostile file may hold a long array.
		raw := make(map[string]int, len(val.Items))
		accepted := make(map[Sequence]item, len(val.Items))
		for i, it := range val.Items {
			ipath := path.Index(i)
			switch {
			case it.Kind != strictjson.String:
				v.errorf(it, ipath, "expected a key string, found %s", article(it.Kind))
				continue
			case it.Str == "":
				v.errorf(it, ipath, "empty key string")
				continue
			}
			if j, dup := raw[it.Str]; dup {
				v.errorf(it, ipath, "duplicate item %q (also at %s)", quote.V(it.Str), path.Index(j))
				continue
			}
			raw[it.Str] = i
			k, ok := v.key(c, idx, it, ipath)
			if !ok {
				continue
			}
			if prev, dup := accepted[k.seq]; dup {
				v.errorf(it, ipath, "duplicate item: %q is the same key as %q at %s", quote.V(it.Str), quote.V(prev.raw), prev.path)
				continue
			}
			accepted[k.seq] = k
			v.items[c] = append(v.items[c], k)
		}
	default:
		v.errorf(val, path, "expected a key string, an array of key strings or null, found %s", article(val.Kind))
	}
}

var ctrlB = Stroke{Key: 'b', Mod: ModCtrl}

// key checks one key string against the rules of
// docs/reference/keybindings.md, "Key strings" and "Validity rules", that
// concern it alone and returns it when it passes.
func (v *validator) key(c Context, idx int, val *strictjson.Value, path strictjson.Path) (item, bool) {
	q, err := ParseSequence(val.Str)
	if err != nil {
		var ke *KeyError
		if errors.As(err, &ke) {
			v.errorf(val, path, "invalid key string %q: %s", quote.V(val.Str), ke.Msg)
		} else {
			v.errorf(val, path, "%v", err)
		}
		return item{}, false
	}
	ok := true
	strokes := []Stroke{q.First}
	if q.IsChord() {
		strokes = append(strokes, q.Second)
	}
	if slices.Contains(strokes, ctrlC) {
		v.errorf(val, path, "%q cannot be bound: ctrl+c is reserved for interrupt and exit", quote.V(val.Str))
		ok = false
	}
	if q.IsChord() && slices.Contains(strokes, escapeStroke) {
		v.errorf(val, path, "%q: escape cannot be part of a chord (it cancels a pending chord)", quote.V(val.Str))
		ok = false
	}
	if q.IsChord() && c.TextEntry() && q.First.Types() {
		v.errorf(val, path, "%q: in %s, where typing inserts text, a chord cannot begin with %q, which types text; add a modifier", quote.V(val.Str), c, quote.V(q.First.String()))
		ok = false
	}
	if slices.Contains(strokes, ctrlB) && !slices.Contains(defaultSeqs(c, idx), q) {
		v.add(val, path, true, "%q: ctrl+b is the prefix key of terminal multiplexers such as tmux, which may not pass it on", quote.V(val.Str))
	}
	// As written: ctrl+shift+m is a letter here, though it resolves to
	// shift+enter.
	written, _ := parseWritten(val.Str)
	for _, s := range [...]Stroke{written.First, written.Second} {
		if s.Mod&(ModCtrl|ModShift) == ModCtrl|ModShift && !s.Key.IsNamed() && unicode.IsLetter(rune(s.Key)) {
			v.add(val, path, true, "%q: many terminals cannot deliver %s (ctrl+shift with a letter)", quote.V(val.Str), s)
			break
		}
	}
	if !ok {
		return item{}, false
	}
	return item{seq: q, raw: val.Str, path: path, action: idx, line: val.Line, col: val.Col}, true
}

// resolve applies the overrides on top of the defaults and checks the rules
// that concern a whole context (docs/reference/keybindings.md, "Validity
// rules"): one key sequence per action, and no stroke both alone and as the
// start of a chord. The defaults obey both, so every conflict involves an
// override, reported at that override.
func (v *validator) resolve() *[numContexts][][]Sequence {
	bound := new([numContexts][][]Sequence)
	for c := range numContexts {
		n := len(spec[c].actions)
		bound[c] = make([][]Sequence, n)
		var all []item
		for i := range n {
			if !v.set[c][i] {
				for _, q := range defaultSeqs(c, i) {
					all = append(all, item{seq: q, action: i})
				}
				bound[c][i] = defaultSeqs(c, i)
			}
		}
		all = append(all, v.items[c]...)
		for _, it := range v.items[c] {
			bound[c][it.action] = append(bound[c][it.action], it.seq)
		}
		v.conflicts(c, all)
	}
	return bound
}

func (v *validator) conflicts(c Context, all []item) {
	owner := make(map[Sequence]item, len(all))
	single := make(map[Stroke]item)
	chordStart := make(map[Stroke]item)
	for _, it := range all {
		at := &strictjson.Value{Line: it.line, Col: it.col}
		if prev, ok := owner[it.seq]; ok {
			if prev.action != it.action {
				v.errorf(at, it.path, "%q is already bound to %s%s", quote.V(it.raw), spec[c].actions[prev.action].action, where(c, prev))
			}
			continue
		}
		owner[it.seq] = it
		if it.seq.IsChord() {
			if prev, ok := single[it.seq.First]; ok {
				v.errorf(at, it.path, "the chord %q begins with %q, which is bound alone to %s%s; a stroke cannot be both", quote.V(it.raw), quote.V(it.seq.First.String()), spec[c].actions[prev.action].action, where(c, prev))
			}
			if _, ok := chordStart[it.seq.First]; !ok {
				chordStart[it.seq.First] = it
			}
			continue
		}
		if prev, ok := chordStart[it.seq.First]; ok {
			v.errorf(at, it.path, "%q also begins the chord %q of %s%s; a stroke cannot be both", quote.V(it.raw), quote.V(prev.seq.String()), spec[c].actions[prev.action].action, where(c, prev))
		}
		single[it.seq.First] = it
	}
}

// where names the place of an earlier binding in a conflict message.
func where(c Context, it item) string {
	if it.path == "" {
		return fmt.Sprintf(" by default (rebind %[1]s, or unbind it with null, to free the key)", spec[c].actions[it.action].action)
	}
	return " at " + string(it.path)
}

func contextNames() []string {
	out := make([]string, numContexts)
	for c := range numContexts {
		out[c] = spec[c].name
	}
	return out
}

func actionNames(c Context) []string {
	out := make([]string, len(spec[c].actions))
	for i, a := range spec[c].actions {
		out[i] = string(a.action)
	}
	return out
}

func actionList(c Context) string { return strings.Join(actionNames(c), ", ") }

// suggest returns "; did you mean X?" for the closest name within two
// edits, or "".
func suggest(got string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(strings.ToLower(got), n, bestD); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + strconv.Quote(best) + "?"
}

// editDistance is the Levenshtein distance, or limit when it is at least
// limit (names are short; long inputs stop early).
func editDistance(a, b string, limit int) int {
	if len(a)-len(b) >= limit || len(b)-len(a) >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

// recover reports a document strictjson refused. When the document is
// well-formed JSON whose only trouble is duplicate keys or unpaired
// surrogate escapes, it parses the document again keeping the duplicates,
// reports each of those problems at its JSONPath and returns the tree, so
// that the other problems are reported too (docs/reference/keybindings.md,
// "Validity rules": every problem). Anything else is reported as strictjson
// found it.
func (v *validator) recover(data []byte, err error) *strictjson.Value {
	var se *strictjson.SyntaxError
	if errors.As(err, &se) && utf8.Valid(data) {
		if root, found, terr := tolerantParse(data); terr == nil && len(found) > 0 {
			v.problems = append(v.problems, found...)
			return root
		}
	}
	p := Problem{Path: strictjson.Root, Line: 1, Col: 1}
	switch {
	case errors.As(err, &se):
		p.Line, p.Col = se.Line, se.Col
		p.Msg = "not valid JSON: " + se.Error()
	case errors.Is(err, strictjson.ErrTooLarge):
		p.Msg = fmt.Sprintf("file larger than %d bytes", MaxFileSize)
	default:
		p.Msg = err.Error()
	}
	v.problems = append(v.problems, p)
	return nil
}

// tolerantParse builds a tree like strictjson.Parse but keeps duplicate
// keys, and reports each of them and each string with an unpaired
// surrogate escape (which encoding/json turns into U+FFFD where strictjson
// refuses it). It relies on encoding/json for the syntax, and is used only
// on UTF-8 input that strictjson refused; nesting is bounded as strictjson
// bounds it.
func tolerantParse(data []byte) (*strictjson.Value, []Problem, error) {
	t := &tolerant{data: data, dec: json.NewDecoder(bytes.NewReader(data)), line: 1}
	t.dec.UseNumber()
	root, err := t.value(0, strictjson.Root)
	if err != nil {
		return nil, nil, err
	}
	if _, err := t.dec.Token(); err != io.EOF {
		return nil, nil, errors.New("trailing data")
	}
	return root, t.found, nil
}

type tolerant struct {
	data      []byte
	dec       *json.Decoder
	found     []Problem
	off       int // offsets below are counted into line and lineStart
	line      int
	lineStart int
}

// checkString reports a string token whose raw text, data[start:] up to
// the decoder's offset, escapes half of a surrogate pair alone.
func (t *tolerant) checkString(start int, path strictjson.Path, line, col int) {
	raw := t.data[start:min(int(t.dec.InputOffset()), len(t.data))]
	if unpairedSurrogate(raw) {
		t.found = append(t.found, Problem{Path: path, Line: line, Col: col, Msg: "not valid JSON: unpaired surrogate in a \\u escape"})
	}
}

// unpairedSurrogate scans a JSON string literal that encoding/json
// accepted (so every escape is well-formed) for a \uD800–\uDFFF escape
// that is not a high surrogate followed by a low one.
func unpairedSurrogate(raw []byte) bool {
	hex := func(i int) rune {
		if i+4 > len(raw) {
			return -1
		}
		n, err := strconv.ParseUint(string(raw[i:i+4]), 16, 32)
		if err != nil {
			return -1
		}
		return rune(n)
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++
		if i >= len(raw) || raw[i] != 'u' {
			continue
		}
		r := hex(i + 1)
		i += 4
		switch {
		case r >= 0xDC00 && r < 0xE000:
			return true
		case r >= 0xD800 && r < 0xDC00:
			if i+2 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
				if r2 := hex(i + 3); r2 >= 0xDC00 && r2 < 0xE000 {
					i += 6
					continue
				}
			}
			return true
		}
	}
	return false
}

var errTooDeep = errors.New("nesting too deep")

// pos returns the line and column of the next token, and its offset.
func (t *tolerant) pos() (line, col, offset int) {
	off := int(t.dec.InputOffset())
	for off < len(t.data) && strings.IndexByte(" \t\r\n,:", t.data[off]) >= 0 {
		off++
	}
	for ; t.off < off; t.off++ {
		if t.data[t.off] == '\n' {
			t.line++
			t.lineStart = t.off + 1
		}
	}
	return t.line, off - t.lineStart + 1, off
}

func (t *tolerant) value(depth int, path strictjson.Path) (*strictjson.Value, error) {
	line, col, off := t.pos()
	tok, err := t.dec.Token()
	if err != nil {
		return nil, err
	}
	v := &strictjson.Value{Line: line, Col: col}
	switch tok := tok.(type) {
	case json.Delim:
		if depth >= strictjson.DefaultMaxDepth {
			return nil, errTooDeep
		}
		if tok == '[' {
			v.Kind = strictjson.Array
			for i := 0; t.dec.More(); i++ {
				it, err := t.value(depth+1, path.Index(i))
				if err != nil {
					return nil, err
				}
				v.Items = append(v.Items, it)
			}
		} else {
			v.Kind = strictjson.Object
			first := map[string]int{}
			for t.dec.More() {
				kl, kc, koff := t.pos()
				kt, err := t.dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				t.checkString(koff, path.Key(key), kl, kc)
				if l, dup := first[key]; dup {
					t.found = append(t.found, Problem{Path: path.Key(key), Line: kl, Col: kc, Msg: fmt.Sprintf("duplicate key %q (first at line %d)", quote.V(key), l)})
				} else {
					first[key] = kl
				}
				mv, err := t.value(depth+1, path.Key(key))
				if err != nil {
					return nil, err
				}
				v.Members = append(v.Members, strictjson.Member{Key: key, Line: kl, Col: kc, Value: mv})
			}
		}
		if _, err := t.dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
	case string:
		v.Kind, v.Str = strictjson.String, tok
		t.checkString(off, path, line, col)
	case json.Number:
		v.Kind, v.Str = strictjson.Number, tok.String()
	case bool:
		v.Kind, v.Bool = strictjson.Bool, tok
	case nil:
		v.Kind = strictjson.Null
	}
	return v, nil
}
