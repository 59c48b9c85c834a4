// Package keys turns terminal input into key events and key strings into
// strokes, and resolves the keybindings of the terminal UI.
//
//   - Decoder: bytes read from the terminal to Events (keys, pastes and the
//     terminal's replies), for xterm/VT, rxvt, the Linux console and the
//     kitty keyboard protocol, with every pending byte bounded.
//   - Stroke and Sequence: one key with modifiers, and one stroke or a
//     chord of two (docs/reference/keybindings.md, "Key strings"), parsed
//     from key strings, printed in canonical form by String and in display
//     form for footer hints.
//   - ParseFile: the keybindings overrides file
//     (docs/reference/keybindings.md, "File format", "Validity rules" and
//     "Defaults") validated into a Keymap plus every Problem with its
//     JSONPath.
//   - Keymap: the resolved bindings per context, and Matcher: the chord state
//     machine (1000 ms, Escape cancels) with the clock passed in.
//
// Everything here is pure: no I/O, no goroutines, no clock of its own.
// Reading the tty lives in tui/term, loading and watching the file in
// tui/keymap.
//
// Imports: the standard library, agent/internal/strictjson and
// agent/internal/quote only; never os, syscall or net (README.md, "A walk
// through the code"; docs/design.md, "Pure leaves may import
// `internal/strictjson` and `internal/quote`").
package keys
