package config

// The one writer of settings files. A settings file is the user's: the
// program changes it as text, so every other key, their order, the
// indentation, the line endings and every byte it does not change stay as
// they were. Each change is a splice at the place strictjson reports;
// the result is parsed again before it is written, and the write is
// atomic (internal/securefile.ReplaceFile). A file that is not valid JSON,
// or whose shape cannot take a change, is never touched.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"agent/internal/securefile"
	"agent/internal/strictjson"
)

// ErrSettingsShape is wrapped when a settings file is valid JSON but
// cannot take a change (the root, or an object on the change's path, has
// another type); the file is left untouched.
var ErrSettingsShape = errors.New("unexpected settings shape")

// ErrNotJSON is wrapped when a settings file is not valid JSON; the file
// is left untouched and the error gives the line and column.
var ErrNotJSON = errors.New("not valid JSON")

// Field is one member of an Object.
type Field struct {
	Key   string
	Value any
}

// Object is a JSON object whose members keep this order when written
// (a map's are sorted).
type Object []Field

// SettingsChange is one change to a settings document: Set (a value at a
// path of object keys) or AppendUnique (a string to an array at a path).
type SettingsChange struct {
	path   []string
	value  any
	append bool
}

// Set puts value (anything encoding/json encodes, or an Object) at path,
// replacing what is there; objects missing on the way are created.
func Set(value any, path ...string) SettingsChange {
	return SettingsChange{path: path, value: value}
}

// AppendUnique adds s to the array at path unless it holds s already;
// a missing array (and objects on the way) is created.
func AppendUnique(s string, path ...string) SettingsChange {
	return SettingsChange{path: path, value: s, append: true}
}

func (c SettingsChange) String() string { return strings.Join(c.path, ".") }

// EditSettings applies changes to a settings document and reports whether
// anything changed. It is pure (tests and fuzzing use it directly).
func EditSettings(data []byte, changes ...SettingsChange) ([]byte, bool, error) {
	out, changed := data, false
	for _, c := range changes {
		if len(c.path) == 0 {
			return nil, false, errors.New("a settings change needs a path")
		}
		next, did, err := applyChange(out, c)
		if err != nil {
			return nil, false, err
		}
		if did {
			out, changed = next, true
		}
	}
	if !changed {
		return data, false, nil
	}
	// Re-read what is about to be written: a slip in the text edit must
	// never reach the user's file.
	check, err := strictjson.Parse(out, strictjson.Options{MaxBytes: len(out) + 1})
	if err != nil {
		return nil, false, fmt.Errorf("internal error editing the file: %w", err)
	}
	for _, c := range changes {
		if !holds(check, c) {
			return nil, false, fmt.Errorf("internal error editing the file: %s is not as set after the edit", c)
		}
	}
	return out, true, nil
}

// Perm is the mode UpdateSettingsFile gives the file it writes.
type Perm int

const (
	// KeepPerm gives a new file 0600 and keeps an existing file's mode
	// (a project's files, which the user may share with a team).
	KeepPerm Perm = iota
	// OwnerOnly makes the file 0600 every time (user settings, which may
	// hold keys).
	OwnerOnly
)

// UpdateSettingsFile applies changes to the settings file at path. A
// missing file is created (its folder 0700). A file that is not valid
// JSON, or not a regular file (a symbolic link is not followed), is
// refused and left as it was; the error names the file.
func UpdateSettingsFile(path string, perm Perm, changes ...SettingsChange) (changed bool, err error) {
	dir := filepath.Dir(path)
	if fi, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, fmt.Errorf("creating %s: %w", dir, err)
		}
	} else if err != nil {
		return false, err
	} else if !fi.IsDir() {
		return false, fmt.Errorf("%s: not a folder (a symbolic link is not followed)", dir)
	}
	data := []byte("{}\n")
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fi = nil
	case err != nil:
		return false, err
	case !fi.Mode().IsRegular():
		return false, fmt.Errorf("%s: not a regular file (a symbolic link is not followed); not changed", path)
	default:
		if data, err = securefile.ReadFile(path, MaxSettingsFile); err != nil {
			return false, err
		}
	}
	out, changed, err := EditSettings(data, changes...)
	if err != nil {
		return false, fmt.Errorf("%s: %w; not changed", path, err)
	}
	if !changed && fi != nil {
		return false, nil
	}
	if perm == OwnerOnly {
		return true, securefile.WriteFile(path, out)
	}
	return true, securefile.ReplaceFile(path, out, 0o600)
}

// applyChange makes one change by one splice.
func applyChange(data []byte, c SettingsChange) ([]byte, bool, error) {
	root, err := strictjson.Parse(data, strictjson.Options{MaxBytes: MaxSettingsFile})
	if err != nil {
		return nil, false, fmt.Errorf("%w (%w)", ErrNotJSON, err)
	}
	if root.Kind != strictjson.Object {
		return nil, false, fmt.Errorf("%w: the root is %s, not an object", ErrSettingsShape, root.Kind)
	}
	d := newTextDoc(data)
	unit := "  "
	if len(root.Members) > 0 {
		if ind, own := d.indent(d.memberOffset(root.Members[0])); own && ind != "" {
			unit = ind
		}
	}
	obj, isRoot, ownIndent := root, true, ""
	for i, key := range c.path {
		last := i == len(c.path)-1
		v := obj.Get(key)
		if v == nil {
			// Build what is missing from here on, innermost first.
			var val any = c.value
			if c.append {
				val = []any{c.value}
			}
			for j := len(c.path) - 1; j > i; j-- {
				val = Object{{c.path[j], val}}
			}
			return d.addMember(obj, isRoot, unit, ownIndent, key, val), true, nil
		}
		if !last {
			if v.Kind != strictjson.Object {
				return nil, false, fmt.Errorf("%w: %s is %s, not an object", ErrSettingsShape, strings.Join(c.path[:i+1], "."), v.Kind)
			}
			ownIndent = d.keyIndent(obj, key)
			obj, isRoot = v, false
			continue
		}
		at := d.valueOffset(v)
		if c.append {
			if v.Kind != strictjson.Array {
				return nil, false, fmt.Errorf("%w: %s is %s, not an array", ErrSettingsShape, c, v.Kind)
			}
			for _, it := range v.Items {
				if it.Kind == strictjson.String && it.Str == c.value {
					return data, false, nil
				}
			}
			return d.addItem(v, unit, d.keyIndent(obj, key), c.value), true, nil
		}
		if same(v, c.value) {
			return data, false, nil
		}
		ind, _ := d.indent(d.memberOffset(memberOf(obj, key)))
		multi := strings.Contains(string(data[at:d.end(at)]), "\n") || d.multiLine(obj)
		return d.splice(at, d.end(at), render(c.value, ind, unit, multi)), true, nil
	}
	return data, false, nil
}

func memberOf(obj *strictjson.Value, key string) strictjson.Member {
	for _, m := range obj.Members {
		if m.Key == key {
			return m
		}
	}
	return strictjson.Member{}
}

// holds reports whether the parsed document satisfies c.
func holds(root *strictjson.Value, c SettingsChange) bool {
	v := root
	for _, k := range c.path {
		if v = v.Get(k); v == nil {
			return false
		}
	}
	if c.append {
		for _, it := range v.Items {
			if it.Kind == strictjson.String && it.Str == c.value {
				return true
			}
		}
		return false
	}
	return same(v, c.value)
}

// same reports whether the parsed value v equals value as encoded.
func same(v *strictjson.Value, value any) bool {
	want, err := strictjson.Parse([]byte(render(value, "", "", false)), strictjson.Options{})
	return err == nil && equalValues(v, want)
}

func equalValues(a, b *strictjson.Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case strictjson.Object:
		if len(a.Members) != len(b.Members) {
			return false
		}
		for _, m := range a.Members {
			o := b.Get(m.Key)
			if o == nil || !equalValues(m.Value, o) {
				return false
			}
		}
		return true
	case strictjson.Array:
		if len(a.Items) != len(b.Items) {
			return false
		}
		for i := range a.Items {
			if !equalValues(a.Items[i], b.Items[i]) {
				return false
			}
		}
		return true
	case strictjson.String, strictjson.Number:
		return a.Str == b.Str // a number compares as written
	case strictjson.Bool:
		return a.Bool == b.Bool
	}
	return true // null
}

// render writes value as JSON. multi lays objects and arrays out one
// entry per line, each line starting with ind plus unit per level.
func render(value any, ind, unit string, multi bool) string {
	switch v := value.(type) {
	case Object:
		if len(v) == 0 {
			return "{}"
		}
		parts := make([]string, len(v))
		for i, f := range v {
			parts[i] = QuoteJSON(f.Key) + ": " + render(f.Value, ind+unit, unit, multi)
		}
		return layout("{", "}", parts, ind, unit, multi)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := make(Object, len(keys))
		for i, k := range keys {
			o[i] = Field{k, v[k]}
		}
		return render(o, ind, unit, multi)
	case map[string]string:
		o := map[string]any{}
		for k, s := range v {
			o[k] = s
		}
		return render(o, ind, unit, multi)
	case []any:
		if len(v) == 0 {
			return "[]"
		}
		parts := make([]string, len(v))
		for i, it := range v {
			parts[i] = render(it, ind+unit, unit, multi)
		}
		return layout("[", "]", parts, ind, unit, multi)
	case []string:
		items := make([]any, len(v))
		for i, s := range v {
			items[i] = s
		}
		return render(items, ind, unit, multi)
	case string:
		return QuoteJSON(v)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(value); err != nil {
		return "null"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func layout(open, close string, parts []string, ind, unit string, multi bool) string {
	if !multi {
		return open + strings.Join(parts, ", ") + close
	}
	return open + "\n" + ind + unit + strings.Join(parts, ",\n"+ind+unit) + "\n" + ind + close
}

// QuoteJSON quotes s as a JSON string, leaving <, > and & readable (a
// rule such as Bash(a > b) reads as the user would write it).
func QuoteJSON(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// textDoc locates values of a parsed document in its bytes.
type textDoc struct {
	data       []byte
	lineStarts []int
	crlf       bool // the file ends its lines with CR LF; inserted lines do too
}

func newTextDoc(data []byte) *textDoc {
	d := &textDoc{data: data, crlf: bytes.Contains(data, []byte("\r\n")), lineStarts: []int{0}}
	for i, c := range data {
		if c == '\n' {
			d.lineStarts = append(d.lineStarts, i+1)
		}
	}
	return d
}

func (d *textDoc) offset(line, col int) int { return d.lineStarts[line-1] + col - 1 }

func (d *textDoc) valueOffset(v *strictjson.Value) int { return d.offset(v.Line, v.Col) }

func (d *textDoc) memberOffset(m strictjson.Member) int { return d.offset(m.Line, m.Col) }

// indent returns the white space that starts the line of off and whether
// nothing but that white space precedes off on its line.
func (d *textDoc) indent(off int) (string, bool) {
	start := off
	for start > 0 && d.data[start-1] != '\n' {
		start--
	}
	i := start
	for i < off && (d.data[i] == ' ' || d.data[i] == '\t') {
		i++
	}
	return string(d.data[start:i]), i == off
}

// keyIndent is the indentation of the line holding key in obj, or "" when
// the key shares its line with what comes before it.
func (d *textDoc) keyIndent(obj *strictjson.Value, key string) string {
	for _, m := range obj.Members {
		if m.Key == key {
			ind, _ := d.indent(d.memberOffset(m))
			return ind
		}
	}
	return ""
}

// multiLine reports whether obj lays its members out one per line.
func (d *textDoc) multiLine(obj *strictjson.Value) bool {
	if len(obj.Members) == 0 {
		return false
	}
	_, own := d.indent(d.memberOffset(obj.Members[0]))
	return own
}

// end returns the offset just past the value starting at off, in a
// document already known to be valid.
func (d *textDoc) end(off int) int {
	data := d.data
	switch data[off] {
	case '"':
		for i := off + 1; i < len(data); i++ {
			switch data[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
	case '{', '[':
		depth, inStr := 0, false
		for i := off; i < len(data); i++ {
			c := data[i]
			if inStr {
				if c == '\\' {
					i++
				} else if c == '"' {
					inStr = false
				}
				continue
			}
			switch c {
			case '"':
				inStr = true
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	default:
		i := off
		for i < len(data) && bytes.IndexByte([]byte(",]} \t\r\n"), data[i]) < 0 {
			i++
		}
		return i
	}
	return len(data)
}

// splice replaces data[at:upto] with s.
func (d *textDoc) splice(at, upto int, s string) []byte {
	if d.crlf {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	out := make([]byte, 0, len(d.data)+len(s))
	out = append(out, d.data[:at]...)
	out = append(out, s...)
	return append(out, d.data[upto:]...)
}

// addMember inserts key with value as the last member of obj. ownIndent is
// the indentation of the line holding obj's key ("" for the root).
func (d *textDoc) addMember(obj *strictjson.Value, isRoot bool, unit, ownIndent, key string, value any) []byte {
	member := QuoteJSON(key) + ": "
	if n := len(obj.Members); n > 0 {
		ind, multi := d.indent(d.memberOffset(obj.Members[0]))
		at := d.end(d.valueOffset(obj.Members[n-1].Value))
		if !multi {
			return d.splice(at, at, ", "+member+render(value, "", unit, false))
		}
		return d.splice(at, at, ",\n"+ind+member+render(value, ind, unit, true))
	}
	// An empty object: lay it out on lines when it is the root or its key
	// starts a line; keep it on one line inside a one-line document.
	start := d.valueOffset(obj)
	end := d.end(start)
	if isRoot || d.ownLineKey(start) {
		ind := ownIndent + unit
		return d.splice(start, end, "{\n"+ind+member+render(value, ind, unit, true)+"\n"+ownIndent+"}")
	}
	return d.splice(start, end, "{"+member+render(value, "", unit, false)+"}")
}

// addItem appends the string s to the array arr. ownIndent is the
// indentation of the line holding the array's key.
func (d *textDoc) addItem(arr *strictjson.Value, unit, ownIndent string, s any) []byte {
	q := render(s, "", unit, false)
	if n := len(arr.Items); n > 0 {
		last := arr.Items[n-1]
		lo := d.valueOffset(last)
		at := d.end(lo)
		if ind, own := d.indent(lo); own {
			return d.splice(at, at, ",\n"+ind+q)
		}
		return d.splice(at, at, ", "+q)
	}
	start := d.valueOffset(arr)
	end := d.end(start)
	if d.ownLineKey(start) {
		return d.splice(start, end, "[\n"+ownIndent+unit+q+"\n"+ownIndent+"]")
	}
	return d.splice(start, end, "["+q+"]")
}

// ownLineKey reports whether the value at off follows a key that starts
// its line (`  "allow": []`), so the value can be laid out on lines.
func (d *textDoc) ownLineKey(off int) bool {
	start := off
	for start > 0 && d.data[start-1] != '\n' {
		start--
	}
	line := bytes.TrimLeft(d.data[start:off], " \t")
	return len(line) > 0 && line[0] == '"' && bytes.Count(line, []byte(`"`)) == 2
}
