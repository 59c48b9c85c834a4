// Package screen is the pure half of the terminal renderer (README.md, "A
// walk through the code"): display width from an East Asian width table,
// sanitising of outside text, styles with a NO_COLOR switch, a frame buffer
// of styled cells, line-diff rendering of frames into one byte slice per
// frame inside synchronized output (DEC 2026), and the layout of transcript
// text: wrapping, a streaming-safe subset of markdown, and unified diffs.
//
// Nothing here does I/O or keeps a clock: the caller writes the bytes
// Render returns to the terminal (tui/term) and decides when to redraw.
//
// Imports: the standard library only; never os, syscall or net (README.md,
// "A walk through the code"; enforced by deps_test.go).
package screen
