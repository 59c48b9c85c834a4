package keys

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fileCases has one row per file under testdata/files: the problems the
// file must produce, in order, or nil for a valid file without warnings.
// File names say the rule each file exercises (valid-, warn-, invalid-).
var fileCases = []struct {
	file string
	want []string
}{
	{"invalid-action-of-other-context.json", []string{
		"$.bindings.chat-input.cursor-up: unknown action \"cursor-up\" in chat-input (actions: submit, history-previous, history-next, history-search, cursor-left, cursor-right, delete-backward, delete-word, delete-line)",
	}},
	{"invalid-array-duplicate-alias.json", []string{
		"$.bindings.list-picker.cancel[1]: duplicate item: \"Escape\" is the same key as \"esc\" at $.bindings.list-picker.cancel[0]",
	}},
	{"invalid-array-duplicate-ctrl-bracket.json", []string{
		"$.bindings.thinking.abort[1]: duplicate item: \"ctrl+[\" is the same key as \"escape\" at $.bindings.thinking.abort[0]",
	}},
	{"invalid-array-duplicate-ctrl-i.json", []string{
		"$.bindings.autocomplete-menu.accept[1]: duplicate item: \"ctrl+i\" is the same key as \"tab\" at $.bindings.autocomplete-menu.accept[0]",
	}},
	{"invalid-array-duplicate-ctrl-m.json", []string{
		"$.bindings.chat-input.submit[1]: duplicate item: \"ctrl+m\" is the same key as \"enter\" at $.bindings.chat-input.submit[0]",
	}},
	{"invalid-array-duplicate-return.json", []string{
		"$.bindings.list-picker.select[1]: duplicate item: \"Return\" is the same key as \"enter\" at $.bindings.list-picker.select[0]",
	}},
	{"invalid-array-duplicate-uppercase.json", []string{
		"$.bindings.theme-picker.toggle-syntax[1]: duplicate item: \"shift+s\" is the same key as \"S\" at $.bindings.theme-picker.toggle-syntax[0]",
	}},
	{"invalid-array-duplicate.json", []string{
		"$.bindings.chat-input.submit[2]: duplicate item \"enter\" (also at $.bindings.chat-input.submit[0])",
	}},
	{"invalid-array-item-types.json", []string{
		"$.bindings.chat-input.submit[1]: expected a key string, found a number",
		"$.bindings.chat-input.submit[2]: expected a key string, found null",
		"$.bindings.chat-input.submit[3]: empty key string",
	}},
	{"invalid-binding-boolean.json", []string{
		"$.bindings.chat-input.submit: expected a key string, an array of key strings or null, found a boolean",
	}},
	{"invalid-binding-number.json", []string{
		"$.bindings.chat-input.submit: expected a key string, an array of key strings or null, found a number",
	}},
	{"invalid-binding-object.json", []string{
		"$.bindings.chat-input.submit: expected a key string, an array of key strings or null, found an object",
	}},
	{"invalid-bindings-array.json", []string{
		"$.bindings: expected an object of contexts, found an array",
	}},
	{"invalid-bindings-null.json", []string{
		"$.bindings: expected an object of contexts, found null",
	}},
	{"invalid-byte-order-mark.json", []string{
		"$: not valid JSON: line 1, column 1: unexpected character 0xef",
	}},
	{"invalid-collision-between-overrides.json", []string{
		"$.bindings.list-picker.cancel[1]: \"ctrl+o\" is already bound to select at $.bindings.list-picker.select",
	}},
	{"invalid-collision-by-equivalence.json", []string{
		"$.bindings.autocomplete-menu.execute: \"ctrl+i\" is already bound to accept by default (rebind accept, or unbind it with null, to free the key)",
	}},
	{"invalid-collision-chords.json", []string{
		"$.bindings.list-picker.next: \"ctrl+x shift+s\" is already bound to cancel at $.bindings.list-picker.cancel",
	}},
	{"invalid-collision-uppercase.json", []string{
		"$.bindings.theme-picker.cancel: \"shift+s\" is already bound to select at $.bindings.theme-picker.select",
	}},
	{"invalid-collision-with-default.json", []string{
		"$.bindings.chat-input.submit: \"ctrl+w\" is already bound to delete-word by default (rebind delete-word, or unbind it with null, to free the key)",
	}},
	{"invalid-context-name-case.json", []string{
		"$.bindings.Chat-Input: unknown context \"Chat-Input\"; did you mean \"chat-input\"?",
	}},
	{"invalid-context-not-object.json", []string{
		"$.bindings.chat-input: expected an object of actions, found a string",
	}},
	{"invalid-ctrl-bracket-starts-chord.json", []string{
		"$.bindings.list-picker.cancel: \"ctrl+[ q\": escape cannot be part of a chord (it cancels a pending chord)",
	}},
	{"invalid-ctrl-c-in-chord.json", []string{
		"$.bindings.list-picker.cancel: \"ctrl+x ctrl+c\" cannot be bound: ctrl+c is reserved for interrupt and exit",
	}},
	{"invalid-ctrl-c-spelled-otherwise.json", []string{
		"$.bindings.list-picker.cancel[1]: \"Control+c\" cannot be bound: ctrl+c is reserved for interrupt and exit",
	}},
	{"invalid-ctrl-c.json", []string{
		"$.bindings.chat-input.submit: \"ctrl+c\" cannot be bound: ctrl+c is reserved for interrupt and exit",
	}},
	{"invalid-duplicate-action-and-more.json", []string{
		"$.bindings.chat-input.submit: duplicate key \"submit\" (first at line 5)",
		"$.bindings.chat-input.submit: \"ctrl+c\" cannot be bound: ctrl+c is reserved for interrupt and exit",
		"$.bindings.chat: unknown context \"chat\"",
	}},
	{"invalid-duplicate-context.json", []string{
		"$.bindings.app: duplicate key \"app\" (first at line 1)",
	}},
	{"invalid-duplicate-top-key.json", []string{
		"$.version: duplicate key \"version\" (first at line 1)",
	}},
	{"invalid-empty-array.json", []string{
		"$.bindings.chat-input.submit: empty array (to unbind the action use null)",
	}},
	{"invalid-empty-file.json", []string{
		"$: not valid JSON: line 1, column 1: empty document",
	}},
	{"invalid-empty-string.json", []string{
		"$.bindings.chat-input.submit: empty key string (to unbind the action use null)",
	}},
	{"invalid-escape-in-chord.json", []string{
		"$.bindings.list-picker.cancel: \"ctrl+x escape\": escape cannot be part of a chord (it cancels a pending chord)",
	}},
	{"invalid-key-double-space.json", []string{
		"$.bindings.chat-input.submit: invalid key string \"ctrl+x  ctrl+s\": a chord has at most two strokes, separated by a single space",
	}},
	{"invalid-key-f13.json", []string{
		"$.bindings.chat-input.submit: invalid key string \"f13\": unknown key \"f13\"",
	}},
	{"invalid-key-insert-not-bindable.json", []string{
		"$.bindings.chat-input.submit: invalid key string \"insert\": unknown key \"insert\"",
	}},
	{"invalid-key-leading-space.json", []string{
		"$.bindings.chat-input.submit: invalid key string \" enter\": strokes of a chord are separated by a single space, with none before or after",
	}},
	{"invalid-key-modifier-only.json", []string{
		"$.bindings.chat-input.submit: invalid key string \"ctrl\": \"ctrl\" is a modifier; a key must follow it",
	}},
	{"invalid-key-plus-character.json", []string{
		"$.bindings.chat-input.submit: invalid key string \"ctrl++\": empty name around \"+\" (the + key is written plus)",
	}},
	{"invalid-key-repeated-modifier.json", []string{
		"$.bindings.chat-input.submit: invalid key string \"ctrl+control+x\": modifier \"control\" given twice",
	}},
	{"invalid-key-tab-character.json", []string{
		"$.bindings.chat-input.submit: invalid key string \"\\t\": a key is a named key or one printable, non-space character",
	}},
	{"invalid-key-three-strokes.json", []string{
		"$.bindings.chat-input.submit: invalid key string \"ctrl+x ctrl+y ctrl+z\": a chord has at most two strokes, separated by a single space",
	}},
	{"invalid-key-trailing-plus.json", []string{
		"$.bindings.chat-input.submit: invalid key string \"ctrl+\": missing key after \"+\" (the + key is written plus)",
	}},
	{"invalid-key-unknown-modifier.json", []string{
		"$.bindings.chat-input.submit: invalid key string \"super+x\": unknown modifier \"super\" (modifiers: ctrl, alt, meta, shift)",
	}},
	{"invalid-key-unknown-name.json", []string{
		"$.bindings.chat-input.submit: invalid key string \"ctrl+foo\": unknown key \"foo\"",
	}},
	{"invalid-many-problems.json", []string{
		"$.version: unsupported version 3: the only version is 1",
		"$.extra: unknown field \"extra\" (allowed: $schema, version, bindings)",
		"$.bindings.chat-input.submit: \"ctrl+c\" cannot be bound: ctrl+c is reserved for interrupt and exit",
		"$.bindings.chat-input.nope: unknown action \"nope\" in chat-input (actions: submit, history-previous, history-next, history-search, cursor-left, cursor-right, delete-backward, delete-word, delete-line)",
		"$.bindings.chat-input.delete-word[1]: duplicate item \"ctrl+w\" (also at $.bindings.chat-input.delete-word[0])",
		"$.bindings.thinking.abort: \"ctrl+x escape\": escape cannot be part of a chord (it cancels a pending chord)",
		"$.bindings.galaxy: unknown context \"galaxy\"",
		"$.bindings.list-picker.select: warning: \"ctrl+shift+z\": many terminals cannot deliver ctrl+shift+z (ctrl+shift with a letter)",
		"$.bindings.list-picker.next: invalid key string \"ctrl+\": missing key after \"+\" (the + key is written plus)",
	}},
	{"invalid-missing-bindings.json", []string{
		"$: missing required field \"bindings\"",
	}},
	{"invalid-missing-both.json", []string{
		"$: missing required field \"version\" (add \"version\": 1)",
		"$: missing required field \"bindings\"",
	}},
	{"invalid-missing-version.json", []string{
		"$: missing required field \"version\" (add \"version\": 1)",
	}},
	{"invalid-not-object.json", []string{
		"$: expected a JSON object with version and bindings, found an array",
	}},
	{"invalid-null-document.json", []string{
		"$: expected a JSON object with version and bindings, found null",
	}},
	{"invalid-prefix-between-overrides.json", []string{
		"$.bindings.list-picker.cancel: the chord \"ctrl+x ctrl+s\" begins with \"ctrl+x\", which is bound alone to select at $.bindings.list-picker.select; a stroke cannot be both",
	}},
	{"invalid-prefix-of-default.json", []string{
		"$.bindings.chat-input.delete-line: the chord \"ctrl+w x\" begins with \"ctrl+w\", which is bound alone to delete-word by default (rebind delete-word, or unbind it with null, to free the key); a stroke cannot be both",
	}},
	{"invalid-prefix-within-one-action.json", []string{
		"$.bindings.list-picker.select[1]: the chord \"ctrl+x a\" begins with \"ctrl+x\", which is bound alone to select at $.bindings.list-picker.select[0]; a stroke cannot be both",
	}},
	{"invalid-schema-not-string.json", []string{
		"$.$schema: expected a string, found a number",
	}},
	{"invalid-syntax-missing-comma.json", []string{
		"$: not valid JSON: line 2, column 2: expected ',' or '}' in object, found '\"'",
	}},
	{"invalid-text-entry-chord-letter.json", []string{
		"$.bindings.chat-input.history-search: \"g g\": in chat-input, where typing inserts text, a chord cannot begin with \"g\", which types text; add a modifier",
	}},
	{"invalid-text-entry-chord-shifted.json", []string{
		"$.bindings.text-prompt.cancel: \"Q x\": in text-prompt, where typing inserts text, a chord cannot begin with \"shift+q\", which types text; add a modifier",
	}},
	{"invalid-text-entry-chord-space.json", []string{
		"$.bindings.history-search.cycle-scope: \"space s\": in history-search, where typing inserts text, a chord cannot begin with \"space\", which types text; add a modifier",
	}},
	{"invalid-text-entry-chord-symbol.json", []string{
		"$.bindings.text-input.submit: \"; w\": in text-input, where typing inserts text, a chord cannot begin with \";\", which types text; add a modifier",
	}},
	{"invalid-too-deep.json", []string{
		"$: not valid JSON: line 1, column 100: nesting deeper than 64",
	}},
	{"invalid-trailing-data.json", []string{
		"$: not valid JSON: line 1, column 32: unexpected data after the top-level value",
	}},
	{"invalid-unknown-action.json", []string{
		"$.bindings.chat-input.send: unknown action \"send\" in chat-input (actions: submit, history-previous, history-next, history-search, cursor-left, cursor-right, delete-backward, delete-word, delete-line)",
	}},
	{"invalid-unknown-context.json", []string{
		"$.bindings.chat-inptu: unknown context \"chat-inptu\"; did you mean \"chat-input\"?",
	}},
	{"invalid-unknown-top-field.json", []string{
		"$.keybindings: unknown field \"keybindings\" (allowed: $schema, version, bindings)",
	}},
	{"invalid-unpaired-surrogate.json", []string{
		"$.bindings.chat-input.submit: not valid JSON: unpaired surrogate in a \\u escape",
		"$.extra: unknown field \"extra\" (allowed: $schema, version, bindings)",
	}},
	{"invalid-unpaired-surrogate-and-duplicate.json", []string{
		"$.bindings.chat-input.submit: not valid JSON: unpaired surrogate in a \\u escape",
		"$.bindings.chat-input.submit: duplicate key \"submit\" (first at line 4)",
	}},
	{"invalid-utf8.json", []string{
		"$: not valid JSON: line 1, column 52: invalid UTF-8 in string",
	}},
	{"invalid-version-2.json", []string{
		"$.version: unsupported version 2: the only version is 1",
	}},
	{"invalid-version-almost-one.json", []string{
		"$.version: unsupported version 1.0000000000000001: the only version is 1",
	}},
	{"invalid-version-fraction.json", []string{
		"$.version: unsupported version 1.5: the only version is 1",
	}},
	{"invalid-version-string.json", []string{
		"$.version: expected the number 1, found a string",
	}},
	{"valid-alt-enter.json", nil},
	{"valid-array-replaces.json", nil},
	{"valid-case-insensitive-names.json", nil},
	{"valid-chord-text-entry-modified-start.json", nil},
	{"valid-chord.json", nil},
	{"valid-chords-share-prefix.json", nil},
	{"valid-ctrl-b-in-default-place.json", nil},
	{"valid-empty-context.json", nil},
	{"valid-escape-in-permission-prompt.json", nil},
	{"valid-every-context.json", nil},
	{"valid-function-keys.json", nil},
	{"valid-minimal.json", nil},
	{"valid-modifier-aliases.json", nil},
	{"valid-move-default-key.json", nil},
	{"valid-null-unbinds.json", nil},
	{"valid-plus-key.json", nil},
	{"valid-printable-chord-outside-text-entry.json", nil},
	{"valid-same-key-two-contexts.json", nil},
	{"valid-schema-free-string.json", nil},
	{"valid-shift-tab.json", nil},
	{"valid-space-toggle.json", nil},
	{"valid-string-replaces.json", nil},
	{"valid-swap-keys.json", nil},
	{"valid-template.json", nil},
	{"valid-unbind-then-reuse.json", nil},
	{"valid-unicode-character.json", nil},
	{"valid-uppercase-letter.json", nil},
	{"valid-version-as-float.json", nil},
	{"valid-whitespace-crlf.json", nil},
	{"warn-ctrl-b-elsewhere.json", []string{
		"$.bindings.chat-input.history-search: warning: \"ctrl+b\": ctrl+b is the prefix key of terminal multiplexers such as tmux, which may not pass it on",
	}},
	{"warn-ctrl-b-in-chord.json", []string{
		"$.bindings.list-picker.select: warning: \"ctrl+b s\": ctrl+b is the prefix key of terminal multiplexers such as tmux, which may not pass it on",
	}},
	{"warn-ctrl-shift-m-is-shift-enter.json", []string{
		"$.bindings.chat-input.submit[1]: warning: \"ctrl+shift+m\": many terminals cannot deliver ctrl+shift+m (ctrl+shift with a letter)",
	}},
	{"warn-ctrl-shift-letter.json", []string{
		"$.bindings.list-picker.select: warning: \"ctrl+shift+k\": many terminals cannot deliver ctrl+shift+k (ctrl+shift with a letter)",
	}},
	{"warn-ctrl-uppercase-letter.json", []string{
		"$.bindings.list-picker.select[1]: warning: \"ctrl+K\": many terminals cannot deliver ctrl+shift+k (ctrl+shift with a letter)",
	}},
}

func TestFileTable(t *testing.T) {
	listed := map[string]bool{}
	for _, c := range fileCases {
		listed[c.file] = true
		t.Run(strings.TrimSuffix(c.file, ".json"), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "files", c.file))
			if err != nil {
				t.Fatal(err)
			}
			km, problems := ParseFile(data)
			var got []string
			for _, p := range problems {
				got = append(got, p.String())
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("problems:\n got %q\nwant %q", got, c.want)
			}
			valid := !strings.HasPrefix(c.file, "invalid-")
			if (km != nil) != valid {
				t.Errorf("keymap returned: %v, want %v", km != nil, valid)
			}
			if HasErrors(problems) == valid {
				t.Errorf("HasErrors = %v for a file named %s", !valid, c.file)
			}
			if strings.HasPrefix(c.file, "warn-") && len(problems) == 0 {
				t.Errorf("a warn- file must warn")
			}
			for _, p := range problems {
				if !strings.HasPrefix(string(p.Path), "$") || p.Line < 1 || p.Col < 1 {
					t.Errorf("problem without a location: %+v", p)
				}
			}
		})
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "files", "*.json"))
	if len(files) < 60 {
		t.Errorf("%d test files, want at least 60", len(files))
	}
	for _, f := range files {
		if !listed[filepath.Base(f)] {
			t.Errorf("%s has no row in fileCases", f)
		}
	}
}

func TestVersionIsExactlyOne(t *testing.T) {
	for num, want := range map[string]bool{
		"1": true, "1.0": true, "1.000": true, "1e0": true, "1E+0": true, "0.1e1": true, "10e-1": true,
		"100e-2": true, "0.01e2": true, "0001": true,
		"2": false, "0": false, "-1": false, "1.5": false, "0.1": false, "10": false, "1e1": false,
		"1.0000000000000001": false, "0.99999999999999999": false, "1e99999999999999999999": false, "11e-1": false,
	} {
		if got := isOne(num); got != want {
			t.Errorf("isOne(%s) = %v", num, got)
		}
		_, problems := ParseFile([]byte(`{"version": ` + num + `, "bindings": {}}`))
		if num == "0001" {
			continue // not JSON; the parser refuses it first
		}
		if HasErrors(problems) == want {
			t.Errorf("version %s: problems %v", num, problems)
		}
	}
}

func TestFileTooLarge(t *testing.T) {
	data := []byte(`{"version": 1, "bindings": {}}` + strings.Repeat(" ", MaxFileSize))
	km, problems := ParseFile(data)
	want := []string{"$: file larger than 1048576 bytes"}
	if km != nil || !slices.Equal(describeProblems(problems), want) {
		t.Errorf("ParseFile of %d bytes: %v, %q", len(data), km != nil, describeProblems(problems))
	}
	if km, problems := ParseFile(data[:MaxFileSize]); km == nil || len(problems) != 0 {
		t.Errorf("a file of exactly MaxFileSize bytes: %v", problems)
	}
}

func describeProblems(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}
