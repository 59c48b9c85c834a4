package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"agent/config"
	"agent/internal/securefile"
	"agent/internal/strictjson"
)

// ErrSettingsShape is wrapped when the local settings file is valid JSON
// but cannot take the rule (the root, permissions or permissions.allow has
// the wrong type); the file is left untouched.
var ErrSettingsShape = errors.New("unexpected settings shape")

// AllowForProject records rule in permissions.allow of
// <workspace>/.agent/settings.local.json (config.LocalSettingsPath), the
// prompt answer "allow for this project" (decisions.md §6; the answer
// itself is the constant AllowProject, hence this function's name).
//
// The file is edited as text, so every other key, rule, comment-free
// formatting choice and byte stays as it was; the rule is inserted after
// the last entry, matching the indentation around it. A missing file (and
// .agent folder, mode 0700) is created with mode 0600; an existing file
// keeps its mode. The write is atomic (temporary file, fsync, rename). A
// rule already present is not added again. A file that is not valid JSON
// is never overwritten: the error names the file and the line and column.
// A symbolic link in place of the folder or the file is refused rather
// than followed out of the project.
func AllowForProject(workspace string, rule config.Rule) error {
	text := rule.String()
	if _, err := config.ParseRule(text); err != nil {
		return err
	}
	path := config.LocalSettingsPath(workspace)
	dir := filepath.Dir(path)
	if fi, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", dir, err)
		}
	} else if err != nil {
		return err
	} else if !fi.IsDir() {
		return fmt.Errorf("%s: not a folder (a symbolic link is not followed)", dir)
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return writeAtomic(path, newLocalSettings(text), 0o600)
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (a symbolic link is not followed); not changed", path)
	}
	data, err := securefile.ReadFile(path, config.MaxSettingsFile)
	if err != nil {
		return err
	}
	out, changed, err := addAllowRule(data, text)
	if err != nil {
		return fmt.Errorf("%s: %w; not changed", path, err)
	}
	if !changed {
		return nil
	}
	return writeAtomic(path, out, fi.Mode().Perm())
}

func newLocalSettings(rule string) []byte {
	return []byte("{\n  \"permissions\": {\n    \"allow\": [\n      " + jsonQuote(rule) + "\n    ]\n  }\n}\n")
}

// jsonQuote quotes s as a JSON string, leaving <, > and & readable.
func jsonQuote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// addAllowRule inserts rule into permissions.allow of a settings document
// and reports whether anything changed. It is pure, for tests and fuzzing.
func addAllowRule(data []byte, rule string) ([]byte, bool, error) {
	root, err := strictjson.Parse(data, strictjson.Options{MaxBytes: config.MaxSettingsFile})
	if err != nil {
		return nil, false, fmt.Errorf("not valid JSON (%w)", err)
	}
	if root.Kind != strictjson.Object {
		return nil, false, fmt.Errorf("%w: the root is %s, not an object", ErrSettingsShape, root.Kind)
	}
	d := settingsDoc{data: data}
	d.index()
	q := jsonQuote(rule)
	unit := "  "
	if len(root.Members) > 0 {
		if ind, own := d.indent(d.memberOffset(root.Members[0])); own && ind != "" {
			unit = ind
		}
	}
	var insert func() []byte
	perms := root.Get("permissions")
	switch {
	case perms == nil:
		insert = func() []byte {
			return d.addMember(root, true, unit, "", `"permissions": `, func(ind string, multi bool) string {
				if !multi {
					return `{"allow": [` + q + `]}`
				}
				return "{\n" + ind + unit + "\"allow\": [\n" + ind + unit + unit + q + "\n" + ind + unit + "]\n" + ind + "}"
			})
		}
	case perms.Kind != strictjson.Object:
		return nil, false, fmt.Errorf("%w: permissions is %s, not an object", ErrSettingsShape, perms.Kind)
	default:
		allow := perms.Get("allow")
		switch {
		case allow == nil:
			insert = func() []byte {
				return d.addMember(perms, false, unit, d.keyIndent(root, "permissions"), `"allow": `, func(ind string, multi bool) string {
					if !multi {
						return "[" + q + "]"
					}
					return "[\n" + ind + unit + q + "\n" + ind + "]"
				})
			}
		case allow.Kind != strictjson.Array:
			return nil, false, fmt.Errorf("%w: permissions.allow is %s, not an array", ErrSettingsShape, allow.Kind)
		default:
			for _, it := range allow.Items {
				if it.Kind == strictjson.String && it.Str == rule {
					return data, false, nil
				}
			}
			insert = func() []byte { return d.addItem(allow, unit, d.keyIndent(perms, "allow"), q) }
		}
	}
	out := insert()
	// Re-read what is about to be written: a slip in the text edit must
	// never reach the user's file.
	check, err := strictjson.Parse(out, strictjson.Options{MaxBytes: config.MaxSettingsFile + len(q) + 256})
	if err != nil {
		return nil, false, fmt.Errorf("internal error editing the file: %w", err)
	}
	found := false
	if a := check.Get("permissions").Get("allow"); a != nil {
		for _, it := range a.Items {
			found = found || (it.Kind == strictjson.String && it.Str == rule)
		}
	}
	if !found {
		return nil, false, errors.New("internal error editing the file: the rule is missing after the edit")
	}
	return out, true, nil
}

// settingsDoc locates values of a parsed document in its bytes.
type settingsDoc struct {
	data       []byte
	lineStarts []int
	crlf       bool // the file ends its lines with CR LF; inserted lines do too
}

func (d *settingsDoc) index() {
	d.crlf = bytes.Contains(d.data, []byte("\r\n"))
	d.lineStarts = []int{0}
	for i, c := range d.data {
		if c == '\n' {
			d.lineStarts = append(d.lineStarts, i+1)
		}
	}
}

func (d *settingsDoc) offset(line, col int) int { return d.lineStarts[line-1] + col - 1 }

func (d *settingsDoc) valueOffset(v *strictjson.Value) int { return d.offset(v.Line, v.Col) }

func (d *settingsDoc) memberOffset(m strictjson.Member) int { return d.offset(m.Line, m.Col) }

// indent returns the white space that starts the line of off and whether
// nothing but that white space precedes off on its line.
func (d *settingsDoc) indent(off int) (string, bool) {
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
func (d *settingsDoc) keyIndent(obj *strictjson.Value, key string) string {
	for _, m := range obj.Members {
		if m.Key == key {
			ind, _ := d.indent(d.memberOffset(m))
			return ind
		}
	}
	return ""
}

// end returns the offset just past the value starting at off, in a
// document already known to be valid.
func (d *settingsDoc) end(off int) int {
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
func (d *settingsDoc) splice(at, upto int, s string) []byte {
	if d.crlf {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	out := make([]byte, 0, len(d.data)+len(s))
	out = append(out, d.data[:at]...)
	out = append(out, s...)
	return append(out, d.data[upto:]...)
}

// addMember inserts `key value` as the last member of obj. ownIndent is
// the indentation of the line holding obj's key ("" for the root). value
// builds the member's value given the indentation of the member's line and
// whether it is laid out one entry per line.
func (d *settingsDoc) addMember(obj *strictjson.Value, isRoot bool, unit, ownIndent, key string, value func(ind string, multi bool) string) []byte {
	if n := len(obj.Members); n > 0 {
		ind, multi := d.indent(d.memberOffset(obj.Members[0]))
		at := d.end(d.valueOffset(obj.Members[n-1].Value))
		if !multi {
			return d.splice(at, at, ", "+key+value("", false))
		}
		return d.splice(at, at, ",\n"+ind+key+value(ind, true))
	}
	// An empty object: lay it out on lines when it is the root or its key
	// starts a line; keep it on one line inside a one-line document.
	start := d.valueOffset(obj)
	end := d.end(start)
	if isRoot || d.ownLineKey(start) {
		ind := ownIndent + unit
		return d.splice(start, end, "{\n"+ind+key+value(ind, true)+"\n"+ownIndent+"}")
	}
	return d.splice(start, end, "{"+key+value("", false)+"}")
}

// addItem appends the JSON string q to the array arr. ownIndent is the
// indentation of the line holding the array's key.
func (d *settingsDoc) addItem(arr *strictjson.Value, unit, ownIndent, q string) []byte {
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
// its line (`  "allow": []`), so the array can be laid out on lines.
func (d *settingsDoc) ownLineKey(off int) bool {
	start := off
	for start > 0 && d.data[start-1] != '\n' {
		start--
	}
	line := bytes.TrimLeft(d.data[start:off], " \t")
	return len(line) > 0 && line[0] == '"' && bytes.Count(line, []byte(`"`)) == 2
}
