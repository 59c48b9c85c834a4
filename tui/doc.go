// Package tui is the interactive terminal application
// (docs/reference/cli.md, "The interactive session"; one screen per context
// of docs/reference/keybindings.md, "Contexts"): one event loop that owns
// all UI state, fed by the terminal's key events (decoded by tui/keys and
// resolved through the live keybindings of each context), the session's
// events, permission questions, keybinding file updates, window resizes and
// timers; it redraws once per coalesced burst of events through tui/screen,
// one write per frame. Signals and other goroutines only post requests to
// the loop.
//
// The screens: the transcript (streaming markdown, collapsed tool output,
// edit diffs), the composer (chat-input, text-input) with prompt history
// and its reverse search, the slash-command autocomplete menu, queued
// prompts, thinking with abort, recovery with retry, the confirm,
// permission and text prompts, the list pickers and menus (/resume, /model,
// /permissions, /mcp approve), the background tasks, the workspace switcher
// with attaching to background sessions, the transport settings and the
// theme picker, with a status line and footer hints drawn from the live
// bindings. What the screens need from outside the allowed imports comes in
// through Hooks (docs/design.md, "The terminal UI reaches the rest through
// hooks"). RunPlain is the line-oriented fallback for a stdout that is not
// a terminal.
//
// Imports: agent, config, tui/*, internal/* and the standard library
// (README.md, "A walk through the code"); never golang.org/x/term directly
// (tui/term owns the tty).
package tui
