// Package term is the terminal: whether a file is a terminal, and (for the
// interactive UI) raw mode, size and reads with deadlines. It is the only
// package that imports golang.org/x/term (architecture.md).
//
// Imports: the standard library, golang.org/x/term and golang.org/x/sys.
package term

import (
	"context"
	"os"

	"golang.org/x/term"
)

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	return f != nil && term.IsTerminal(int(f.Fd()))
}

// ReadPassword reads one line from the terminal f without echo (a client
// secret, a pasted redirect address that carries an authorization code).
// When ctx ends first, the terminal's state is restored (echo back on) and
// ctx's cause is returned; the read itself ends with the process.
func ReadPassword(ctx context.Context, f *os.File) ([]byte, error) {
	fd := int(f.Fd())
	saved, err := term.GetState(fd)
	if err != nil {
		return nil, err
	}
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := term.ReadPassword(fd)
		ch <- result{b, err}
	}()
	select {
	case r := <-ch:
		return r.b, r.err
	case <-ctx.Done():
		term.Restore(fd, saved) //nolint:errcheck // best effort on the way out
		return nil, context.Cause(ctx)
	}
}
