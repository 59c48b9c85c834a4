// Package term is the terminal: whether a file is a terminal, and (for the
// interactive UI) raw mode, size and reads with deadlines. It is the only
// package that imports golang.org/x/term (architecture.md).
//
// Imports: the standard library, golang.org/x/term and golang.org/x/sys.
package term

import (
	"os"

	"golang.org/x/term"
)

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	return f != nil && term.IsTerminal(int(f.Fd()))
}
