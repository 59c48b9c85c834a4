package keys

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func mustStroke(t testing.TB, s string) Stroke {
	t.Helper()
	st, err := ParseStroke(s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func mustFile(t testing.TB, src string) *Keymap {
	t.Helper()
	km, problems := ParseFile([]byte(src))
	if km == nil {
		t.Fatalf("file refused: %v", problems)
	}
	return km
}

// TestDefaultsTable checks the defaults against
// docs/reference/keybindings.md, "Defaults", through lookups, and that they
// obey its "Validity rules": a file restating every default is valid,
// warning-free, and resolves to the same bindings.
func TestDefaultsTable(t *testing.T) {
	km := Defaults()
	for _, c := range []struct {
		name   string
		ctx    Context
		key    string
		action Action
	}{
		{"ctrl+b opens the workspace switcher", App, "ctrl+b", ActOpenWorkspaceSwitcher},
		{"escape aborts the turn", Thinking, "escape", ActAbort},
		{"escape returns from a background session", BackgroundDetail, "escape", ActReturnToMain},
		{"enter retries after a failure", Recovery, "enter", ActRetry},
		{"enter submits", ChatInput, "enter", ActSubmit},
		{"up recalls the previous prompt", ChatInput, "up", ActHistoryPrevious},
		{"ctrl+r searches the history", ChatInput, "ctrl+r", ActHistorySearch},
		{"delete deletes backward", ChatInput, "delete", ActDeleteBackward},
		{"ctrl+u deletes the line", ChatInput, "ctrl+u", ActDeleteLine},
		{"down moves the cursor in a text input", TextInput, "down", ActCursorDown},
		{"tab accepts a completion", AutocompleteMenu, "tab", ActAccept},
		{"backspace cancels a queued prompt", QueuedPrompt, "backspace", ActCancel},
		{"up moves to the previous choice", ConfirmPrompt, "up", ActPrevious},
		{"y answers yes", ConfirmPrompt, "y", ActChooseYes},
		{"a allows for the session", PermissionPrompt, "a", ActAllowSession},
		{"d denies", PermissionPrompt, "d", ActDeny},
		{"escape cancels a text prompt", TextPrompt, "escape", ActCancel},
		{"space toggles a choice", MultiSelect, "space", ActToggle},
		{"ctrl+b closes the workspace switcher", WorkspaceSwitcher, "ctrl+b", ActClose},
		{"a attaches to a workspace", WorkspaceSwitcher, "a", ActAttach},
		{"enter closes the transport settings", TransportSettings, "enter", ActClose},
		{"ctrl+r finds the next match", HistorySearch, "ctrl+r", ActNext},
		{"tab inserts the match", HistorySearch, "tab", ActInsert},
		{"ctrl+e runs the match", HistorySearch, "ctrl+e", ActExecute},
		{"m toggles motion in the theme picker", ThemePicker, "m", ActToggleMotion},
		{"ctrl+m is enter to a terminal", ChatInput, "ctrl+m", ActSubmit},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, ok := km.Lookup(c.ctx, mustStroke(t, c.key)); !ok || got != c.action {
				t.Errorf("%s %s = %q, %v; want %q", c.ctx, c.key, got, ok, c.action)
			}
		})
	}
	if a, ok := km.Lookup(PermissionPrompt, Stroke{Key: KeyEscape}); ok {
		t.Errorf("escape in permission-prompt triggers %q; it must do nothing", a)
	}

	file := map[string]any{"version": 1}
	bindings := map[string]any{}
	for c := range Context(NumContexts) {
		acts := map[string]any{}
		for i, as := range spec[c].actions {
			acts[string(as.action)] = spec[c].actions[i].keys
		}
		bindings[c.String()] = acts
	}
	file["bindings"] = bindings
	data, _ := json.Marshal(file)
	restated, problems := ParseFile(data)
	if restated == nil || len(problems) != 0 {
		t.Fatalf("the defaults restated as a file: %v", problems)
	}
	for c := range Context(NumContexts) {
		for _, a := range c.Actions() {
			if !slices.Equal(restated.Keys(c, a), km.Keys(c, a)) || restated.Hint(c, a) != km.Hint(c, a) {
				t.Errorf("%s.%s: restated %v, defaults %v", c, a, restated.Keys(c, a), km.Keys(c, a))
			}
		}
	}
}

func TestContexts(t *testing.T) {
	if NumContexts != 19 {
		t.Errorf("%d contexts, docs/reference/keybindings.md lists 19", NumContexts)
	}
	for c := range Context(NumContexts) {
		if got, ok := ParseContext(c.String()); !ok || got != c {
			t.Errorf("ParseContext(%q) = %v, %v", c.String(), got, ok)
		}
	}
	var text []string
	for c := range Context(NumContexts) {
		if c.TextEntry() {
			text = append(text, c.String())
		}
	}
	if !slices.Equal(text, []string{"chat-input", "text-input", "text-prompt", "history-search"}) {
		t.Errorf("text-entry contexts: %v", text)
	}
	if _, ok := ParseContext("nope"); ok || Context(200).String() != "context(200)" || Context(200).TextEntry() {
		t.Error("unknown contexts")
	}
}

func TestHints(t *testing.T) {
	km := Defaults()
	for _, c := range []struct {
		name   string
		ctx    Context
		action Action
		want   string
	}{
		{"a control key", ChatInput, ActHistorySearch, "Ctrl+R"},
		{"two keys joined by a slash", ChatInput, ActDeleteBackward, "Backspace/Del"},
		{"arrows as symbols", ConfirmPrompt, ActPrevious, "←/↑"},
		{"the other arrows", ConfirmPrompt, ActNext, "→/↓"},
		{"escape is Esc", Thinking, ActAbort, "Esc"},
		{"space is Space", MultiSelect, ActToggle, "Space"},
		{"letters stay lower case", PermissionPrompt, ActAllowSession, "s/a"},
		{"an unknown action has no hint", ChatInput, "no-such-action", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := km.Hint(c.ctx, c.action); got != c.want {
				t.Errorf("Hint(%s, %s) = %q, want %q", c.ctx, c.action, got, c.want)
			}
		})
	}
}

func TestOverridesApplied(t *testing.T) {
	km := mustFile(t, `{"version": 1, "bindings": {
		"chat-input": {"submit": ["ctrl+s", "alt+enter"], "delete-word": null, "history-search": "ctrl+x ctrl+r"},
		"thinking": {"abort": null}
	}}`)
	look := func(c Context, key string) Action {
		a, _ := km.Lookup(c, mustStroke(t, key))
		return a
	}
	if look(ChatInput, "ctrl+s") != ActSubmit || look(ChatInput, "alt+enter") != ActSubmit {
		t.Error("an array replaces the keys")
	}
	if look(ChatInput, "enter") != "" {
		t.Error("the replaced default still triggers")
	}
	if look(ChatInput, "ctrl+w") != "" || km.Hint(ChatInput, ActDeleteWord) != "" || km.Keys(ChatInput, ActDeleteWord) != nil {
		t.Error("null must unbind and hide the hint")
	}
	if look(Thinking, "escape") != "" {
		t.Error("null must unbind")
	}
	if look(ChatInput, "up") != ActHistoryPrevious {
		t.Error("untouched actions keep their defaults")
	}
	if look(ChatInput, "ctrl+x") != "" || !km.IsPrefix(ChatInput, mustStroke(t, "ctrl+x")) {
		t.Error("a chord's first stroke is a prefix, not a binding")
	}
	if a, ok := km.LookupChord(ChatInput, mustStroke(t, "ctrl+x"), mustStroke(t, "ctrl+r")); !ok || a != ActHistorySearch {
		t.Error("chord lookup")
	}
	if km.Hint(ChatInput, ActHistorySearch) != "Ctrl+X Ctrl+R" || km.Hint(ChatInput, ActSubmit) != "Ctrl+S/Alt+Enter" {
		t.Errorf("hints %q %q", km.Hint(ChatInput, ActHistorySearch), km.Hint(ChatInput, ActSubmit))
	}
	if _, ok := km.Lookup(Context(99), Stroke{Key: 'a'}); ok || km.IsPrefix(Context(99), Stroke{Key: 'a'}) {
		t.Error("unknown context")
	}
}

func TestMatcher(t *testing.T) {
	km := mustFile(t, `{"version": 1, "bindings": {
		"list-picker": {"select": "ctrl+x ctrl+s", "cancel": ["escape", "ctrl+x k"], "next": ["down", "g g"]},
		"app": {"open-workspace-switcher": ["ctrl+b", "ctrl+o ctrl+w"]}
	}}`)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		after   time.Duration // since t0
		key     string
		outcome Outcome
		action  Action
	}
	cases := []struct {
		name  string
		ctxs  []Context
		steps []step
	}{
		{"single stroke", []Context{ListPicker}, []step{{0, "down", Matched, ActNext}}},
		{"unbound", []Context{ListPicker}, []step{{0, "q", Unbound, ""}}},
		{"chord", []Context{ListPicker}, []step{{0, "ctrl+x", Started, ""}, {500 * time.Millisecond, "ctrl+s", Matched, ActSelect}}},
		{"chord just in time", []Context{ListPicker}, []step{{0, "g", Started, ""}, {999 * time.Millisecond, "g", Matched, ActNext}}},
		{"chord too late", []Context{ListPicker}, []step{{0, "g", Started, ""}, {1000 * time.Millisecond, "down", Matched, ActNext}}},
		{"chord too late starts again", []Context{ListPicker}, []step{{0, "g", Started, ""}, {1500 * time.Millisecond, "g", Started, ""}, {1600 * time.Millisecond, "g", Matched, ActNext}}},
		{"escape cancels", []Context{ListPicker}, []step{{0, "ctrl+x", Started, ""}, {10, "escape", Cancelled, ""}, {20, "escape", Matched, ActCancel}}},
		{"wrong second stroke cancels", []Context{ListPicker}, []step{{0, "ctrl+x", Started, ""}, {10, "down", Cancelled, ""}, {20, "down", Matched, ActNext}}},
		{"ctrl+c passes through", []Context{ListPicker}, []step{{0, "ctrl+x", Started, ""}, {10, "ctrl+c", Unbound, ""}, {20, "ctrl+s", Unbound, ""}}},
		{"two chords share a prefix", []Context{ListPicker}, []step{{0, "ctrl+x", Started, ""}, {10, "k", Matched, ActCancel}}},
		{"focused context first", []Context{ListPicker, App}, []step{{0, "ctrl+b", Matched, ActOpenWorkspaceSwitcher}, {10, "down", Matched, ActNext}}},
		{"chord in the outer context", []Context{ListPicker, App}, []step{{0, "ctrl+o", Started, ""}, {10, "ctrl+w", Matched, ActOpenWorkspaceSwitcher}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := NewMatcher(km)
			for i, s := range c.steps {
				got := m.Press(t0.Add(s.after), mustStroke(t, s.key), c.ctxs...)
				if got.Outcome != s.outcome || got.Action != s.action {
					t.Errorf("step %d (%s): %+v, want outcome %d action %q", i, s.key, got, s.outcome, s.action)
				}
			}
		})
	}
}

func TestMatcherTimerAndContextChange(t *testing.T) {
	m := NewMatcher(mustFile(t, `{"version": 1, "bindings": {"list-picker": {"select": "ctrl+x ctrl+s"}}}`))
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	ctrlX := mustStroke(t, "ctrl+x")
	if _, ok := m.Deadline(); ok {
		t.Error("deadline without a pending chord")
	}
	m.Press(t0, ctrlX, ListPicker)
	if s, ok := m.Pending(); !ok || s != ctrlX {
		t.Error("Pending after the first stroke")
	}
	if d, ok := m.Deadline(); !ok || !d.Equal(t0.Add(ChordTimeout)) {
		t.Errorf("Deadline = %v, %v", d, ok)
	}
	if m.Expire(t0.Add(999 * time.Millisecond)) {
		t.Error("expired early")
	}
	if !m.Expire(t0.Add(ChordTimeout)) || m.Expire(t0.Add(2*ChordTimeout)) {
		t.Error("Expire must drop the chord once")
	}
	// A chord started in one context does not complete in another.
	m.Press(t0, ctrlX, ListPicker)
	if got := m.Press(t0.Add(10), mustStroke(t, "ctrl+s"), MenuSelect); got.Outcome != Unbound {
		t.Errorf("after a context change: %+v", got)
	}
	// New bindings drop a pending chord.
	m.Press(t0, ctrlX, ListPicker)
	m.SetKeymap(nil)
	if _, ok := m.Pending(); ok {
		t.Error("SetKeymap kept the pending chord")
	}
	m.Press(t0, mustStroke(t, "enter"), ListPicker)
	m.Cancel()
	var zero Matcher // the zero value uses the defaults
	if got := zero.Press(t0, mustStroke(t, "enter"), ListPicker); got.Outcome != Matched || got.Action != ActSelect {
		t.Errorf("zero Matcher: %+v", got)
	}
}

// contextActions are the contexts and their actions, row by row, in the
// order of docs/reference/keybindings.md, "Defaults" (written apart from
// the keys, so that a context or action that goes missing is named).
var contextActions = [][2]string{
	{"app", "open-workspace-switcher"},
	{"thinking", "abort"},
	{"background-detail", "return-to-main"},
	{"recovery", "retry"},
	{"chat-input", "submit, history-previous, history-next, history-search, cursor-left, cursor-right, delete-backward, delete-word, delete-line"},
	{"text-input", "submit, cursor-left, cursor-right, cursor-up, cursor-down, delete-backward, delete-word, delete-line"},
	{"autocomplete-menu", "previous, next, close, accept, execute"},
	{"queued-prompt", "cancel"},
	{"confirm-prompt", "previous, next, confirm, choose-yes, choose-no"},
	{"permission-prompt", "previous, next, confirm, allow-once, allow-session, allow-project, deny"},
	{"text-prompt", "submit, cancel, delete-backward"},
	{"list-picker", "previous, next, select, cancel"},
	{"menu-select", "previous, next, select, back"},
	{"multi-select", "previous, next, toggle, confirm, cancel"},
	{"workspace-switcher", "previous, next, select, close, attach"},
	{"background-list", "previous, next, open, close"},
	{"transport-settings", "previous, next, toggle, close"},
	{"history-search", "previous, next, cycle-scope, insert, execute, cancel"},
	{"theme-picker", "previous, next, select, toggle-syntax, toggle-motion, cancel"},
}

// docDefaults is the table of default keys of
// docs/reference/keybindings.md, "Defaults", row by row, as written there.
var docDefaults = map[string]string{
	"app":                "open-workspace-switcher: ctrl+b",
	"thinking":           "abort: escape",
	"background-detail":  "return-to-main: escape",
	"recovery":           "retry: enter",
	"chat-input":         "submit: enter; history-previous: up; history-next: down; history-search: ctrl+r; cursor-left: left; cursor-right: right; delete-backward: backspace, delete; delete-word: ctrl+w; delete-line: ctrl+u",
	"text-input":         "submit: enter; cursor-left: left; cursor-right: right; cursor-up: up; cursor-down: down; delete-backward: backspace, delete; delete-word: ctrl+w; delete-line: ctrl+u",
	"autocomplete-menu":  "previous: up; next: down; close: escape; accept: tab; execute: enter",
	"queued-prompt":      "cancel: backspace, delete",
	"confirm-prompt":     "previous: left, up; next: right, down; confirm: enter; choose-yes: y; choose-no: n",
	"permission-prompt":  "previous: left, up; next: right, down; confirm: enter; allow-once: y; allow-session: s, a; allow-project: p; deny: n, d",
	"text-prompt":        "submit: enter; cancel: escape; delete-backward: backspace, delete",
	"list-picker":        "previous: up; next: down; select: enter; cancel: escape",
	"menu-select":        "previous: up; next: down; select: enter; back: escape",
	"multi-select":       "previous: up; next: down; toggle: space; confirm: enter; cancel: escape",
	"workspace-switcher": "previous: up; next: down; select: enter; close: ctrl+b, escape; attach: a",
	"background-list":    "previous: up; next: down; open: enter; close: escape",
	"transport-settings": "previous: up; next: down; toggle: space; close: enter, escape",
	"history-search":     "previous: up; next: down, ctrl+r; cycle-scope: ctrl+s; insert: enter, tab; execute: ctrl+e; cancel: escape",
	"theme-picker":       "previous: up; next: down; select: enter; toggle-syntax: s; toggle-motion: m; cancel: escape",
}

// TestSpecTables compares the contexts, their actions and every default
// key, entry by entry and in order, with the two tables above, both of
// docs/reference/keybindings.md, "Defaults".
func TestSpecTables(t *testing.T) {
	if len(contextActions) != NumContexts || len(docDefaults) != NumContexts {
		t.Fatalf("%d contexts; the tables list %d and %d", NumContexts, len(contextActions), len(docDefaults))
	}
	km := Defaults()
	for i, row := range contextActions {
		c := Context(i)
		if c.String() != row[0] {
			t.Errorf("context %d is %q, the table's row %d is %q", i, c, i, row[0])
			continue
		}
		var acts []string
		for _, a := range c.Actions() {
			acts = append(acts, string(a))
		}
		if got := strings.Join(acts, ", "); got != row[1] {
			t.Errorf("%s actions:\n got  %s\n want %s", c, got, row[1])
		}
		entries := strings.Split(docDefaults[row[0]], "; ")
		if len(entries) != len(acts) {
			t.Errorf("%s: %d actions, %d defaults", c, len(acts), len(entries))
		}
		for _, e := range entries {
			action, list, ok := strings.Cut(e, ": ")
			if !ok {
				t.Fatalf("%s: malformed entry %q", c, e)
			}
			var want []Sequence
			var display []string
			for _, k := range strings.Split(list, ", ") {
				q, err := ParseSequence(k)
				if err != nil {
					t.Fatalf("%s.%s: %v", c, action, err)
				}
				want = append(want, q)
				display = append(display, q.Display())
				if got, ok := km.Lookup(c, q.First); !ok || got != Action(action) {
					t.Errorf("%s: %s triggers %q, want %s", c, k, got, action)
				}
			}
			if got := km.Keys(c, Action(action)); !slices.Equal(got, want) {
				t.Errorf("%s.%s: default keys %v, want %v", c, action, got, want)
			}
			if got := km.Hint(c, Action(action)); got != strings.Join(display, "/") {
				t.Errorf("%s.%s: hint %q", c, action, got)
			}
		}
		// Nothing else is bound by default: no chords, and exactly the
		// listed strokes.
		n := 0
		for _, a := range c.Actions() {
			n += len(km.Keys(c, a))
		}
		if got := len(km.ctx[c].single); got != n || len(km.ctx[c].chord) != 0 || len(km.ctx[c].prefix) != 0 {
			t.Errorf("%s: %d single strokes bound, %d chords, want %d and none", c, got, len(km.ctx[c].chord), n)
		}
	}
}
