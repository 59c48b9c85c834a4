// Package tui is the interactive terminal application (architecture.md,
// "The terminal renderer"; decisions.md §1.6): one event loop that owns
// all UI state, fed by the terminal's key events (decoded by tui/keys and
// resolved through the live keybindings of each context), the session's
// events, permission questions, keybinding file updates, window resizes
// and timers; it redraws once per coalesced burst of events through
// tui/screen, one write per frame. Signals and other goroutines only post
// requests to the loop.
//
// The screens: the transcript (streaming markdown, collapsed tool output,
// edit diffs), the composer (chat-input) with prompt history, the
// slash-command autocomplete menu, queued prompts, thinking with abort,
// recovery with retry, and the confirm, permission and text prompts, with
// a status line and footer hints drawn from the live bindings. RunPlain is
// the line-oriented fallback for a stdout that is not a terminal.
//
// Imports: agent, config, tui/* and the standard library (architecture.md,
// import direction); never golang.org/x/term directly (tui/term owns the
// tty).
package tui
