package keys

import (
	"strconv"
	"sync"
)

// Context is a screen or widget of the terminal UI that has its own
// bindings (docs/reference/keybindings.md, "Contexts").
type Context uint8

// The contexts, in the order of docs/reference/keybindings.md, "Defaults".
const (
	App Context = iota
	Thinking
	BackgroundDetail
	Recovery
	ChatInput
	TextInput
	AutocompleteMenu
	QueuedPrompt
	ConfirmPrompt
	PermissionPrompt
	TextPrompt
	ListPicker
	MenuSelect
	MultiSelect
	WorkspaceSwitcher
	BackgroundList
	TransportSettings
	HistorySearch
	ThemePicker
	numContexts
)

// NumContexts is the number of contexts; they are 0 … NumContexts-1.
const NumContexts = int(numContexts)

// Action is the name of something a binding triggers, as the file spells
// it. The same name may exist in several contexts (previous, next).
type Action string

// The actions of the contexts (docs/reference/keybindings.md, "Defaults",
// lists every action with its keys).
const (
	ActOpenWorkspaceSwitcher Action = "open-workspace-switcher"
	ActAbort                 Action = "abort"
	ActReturnToMain          Action = "return-to-main"
	ActRetry                 Action = "retry"
	ActSubmit                Action = "submit"
	ActHistoryPrevious       Action = "history-previous"
	ActHistoryNext           Action = "history-next"
	ActHistorySearch         Action = "history-search"
	ActCursorLeft            Action = "cursor-left"
	ActCursorRight           Action = "cursor-right"
	ActCursorUp              Action = "cursor-up"
	ActCursorDown            Action = "cursor-down"
	ActDeleteBackward        Action = "delete-backward"
	ActDeleteWord            Action = "delete-word"
	ActDeleteLine            Action = "delete-line"
	ActPrevious              Action = "previous"
	ActNext                  Action = "next"
	ActClose                 Action = "close"
	ActAccept                Action = "accept"
	ActExecute               Action = "execute"
	ActCancel                Action = "cancel"
	ActConfirm               Action = "confirm"
	ActChooseYes             Action = "choose-yes"
	ActChooseNo              Action = "choose-no"
	ActAllowOnce             Action = "allow-once"
	ActAllowSession          Action = "allow-session"
	ActAllowProject          Action = "allow-project"
	ActDeny                  Action = "deny"
	ActSelect                Action = "select"
	ActBack                  Action = "back"
	ActToggle                Action = "toggle"
	ActAttach                Action = "attach"
	ActOpen                  Action = "open"
	ActCycleScope            Action = "cycle-scope"
	ActInsert                Action = "insert"
	ActToggleSyntax          Action = "toggle-syntax"
	ActToggleMotion          Action = "toggle-motion"
)

type actionSpec struct {
	action Action
	keys   []string // default key strings (docs/reference/keybindings.md, "Defaults")
}

type contextSpec struct {
	name      string
	textEntry bool // chords may not begin with a typing key (docs/reference/keybindings.md, "Validity rules")
	actions   []actionSpec
}

func a(action Action, keys ...string) actionSpec { return actionSpec{action, keys} }

// spec is the table of contexts and actions with their default keys
// (docs/reference/keybindings.md, "Contexts" and "Defaults").
var spec = [numContexts]contextSpec{
	App:              {"app", false, []actionSpec{a(ActOpenWorkspaceSwitcher, "ctrl+b")}},
	Thinking:         {"thinking", false, []actionSpec{a(ActAbort, "escape")}},
	BackgroundDetail: {"background-detail", false, []actionSpec{a(ActReturnToMain, "escape")}},
	Recovery:         {"recovery", false, []actionSpec{a(ActRetry, "enter")}},
	ChatInput: {"chat-input", true, []actionSpec{
		a(ActSubmit, "enter"), a(ActHistoryPrevious, "up"), a(ActHistoryNext, "down"),
		a(ActHistorySearch, "ctrl+r"), a(ActCursorLeft, "left"), a(ActCursorRight, "right"),
		a(ActDeleteBackward, "backspace", "delete"), a(ActDeleteWord, "ctrl+w"), a(ActDeleteLine, "ctrl+u"),
	}},
	TextInput: {"text-input", true, []actionSpec{
		a(ActSubmit, "enter"), a(ActCursorLeft, "left"), a(ActCursorRight, "right"),
		a(ActCursorUp, "up"), a(ActCursorDown, "down"),
		a(ActDeleteBackward, "backspace", "delete"), a(ActDeleteWord, "ctrl+w"), a(ActDeleteLine, "ctrl+u"),
	}},
	AutocompleteMenu: {"autocomplete-menu", false, []actionSpec{
		a(ActPrevious, "up"), a(ActNext, "down"), a(ActClose, "escape"), a(ActAccept, "tab"), a(ActExecute, "enter"),
	}},
	QueuedPrompt: {"queued-prompt", false, []actionSpec{a(ActCancel, "backspace", "delete")}},
	ConfirmPrompt: {"confirm-prompt", false, []actionSpec{
		a(ActPrevious, "left", "up"), a(ActNext, "right", "down"), a(ActConfirm, "enter"),
		a(ActChooseYes, "y"), a(ActChooseNo, "n"),
	}},
	// Escape does nothing in the permission prompt, on purpose
	// (docs/reference/keybindings.md, "Defaults"): a reflexive Escape must
	// not answer a permission question.
	PermissionPrompt: {"permission-prompt", false, []actionSpec{
		a(ActPrevious, "left", "up"), a(ActNext, "right", "down"), a(ActConfirm, "enter"),
		a(ActAllowOnce, "y"), a(ActAllowSession, "s", "a"), a(ActAllowProject, "p"), a(ActDeny, "n", "d"),
	}},
	TextPrompt: {"text-prompt", true, []actionSpec{
		a(ActSubmit, "enter"), a(ActCancel, "escape"), a(ActDeleteBackward, "backspace", "delete"),
	}},
	ListPicker: {"list-picker", false, []actionSpec{
		a(ActPrevious, "up"), a(ActNext, "down"), a(ActSelect, "enter"), a(ActCancel, "escape"),
	}},
	MenuSelect: {"menu-select", false, []actionSpec{
		a(ActPrevious, "up"), a(ActNext, "down"), a(ActSelect, "enter"), a(ActBack, "escape"),
	}},
	MultiSelect: {"multi-select", false, []actionSpec{
		a(ActPrevious, "up"), a(ActNext, "down"), a(ActToggle, "space"), a(ActConfirm, "enter"), a(ActCancel, "escape"),
	}},
	WorkspaceSwitcher: {"workspace-switcher", false, []actionSpec{
		a(ActPrevious, "up"), a(ActNext, "down"), a(ActSelect, "enter"), a(ActClose, "ctrl+b", "escape"), a(ActAttach, "a"),
	}},
	BackgroundList: {"background-list", false, []actionSpec{
		a(ActPrevious, "up"), a(ActNext, "down"), a(ActOpen, "enter"), a(ActClose, "escape"),
	}},
	TransportSettings: {"transport-settings", false, []actionSpec{
		a(ActPrevious, "up"), a(ActNext, "down"), a(ActToggle, "space"), a(ActClose, "enter", "escape"),
	}},
	HistorySearch: {"history-search", true, []actionSpec{
		a(ActPrevious, "up"), a(ActNext, "down", "ctrl+r"), a(ActCycleScope, "ctrl+s"),
		a(ActInsert, "enter", "tab"), a(ActExecute, "ctrl+e"), a(ActCancel, "escape"),
	}},
	ThemePicker: {"theme-picker", false, []actionSpec{
		a(ActPrevious, "up"), a(ActNext, "down"), a(ActSelect, "enter"),
		a(ActToggleSyntax, "s"), a(ActToggleMotion, "m"), a(ActCancel, "escape"),
	}},
}

var contextByName = sync.OnceValue(func() map[string]Context {
	m := make(map[string]Context, numContexts)
	for c := range numContexts {
		m[spec[c].name] = c
	}
	return m
})

// String returns the context's name as the file spells it (chat-input).
func (c Context) String() string {
	if c < numContexts {
		return spec[c].name
	}
	return "context(" + strconv.Itoa(int(c)) + ")"
}

// ParseContext returns the context with this name.
func ParseContext(name string) (Context, bool) {
	c, ok := contextByName()[name]
	return c, ok
}

// TextEntry reports whether typing in the context inserts text
// (chat-input, text-input, text-prompt, history-search).
func (c Context) TextEntry() bool { return c < numContexts && spec[c].textEntry }

// Actions returns the context's actions in the order of
// docs/reference/keybindings.md, "Defaults".
func (c Context) Actions() []Action {
	if c >= numContexts {
		return nil
	}
	out := make([]Action, len(spec[c].actions))
	for i, s := range spec[c].actions {
		out[i] = s.action
	}
	return out
}

// actionIndex returns the position of the action in the context's list.
func (c Context) actionIndex(a Action) int {
	if c >= numContexts {
		return -1
	}
	for i, s := range spec[c].actions {
		if s.action == a {
			return i
		}
	}
	return -1
}
