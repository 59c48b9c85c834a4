// Package term is the terminal: whether a file is a terminal, and for the
// interactive UI the tty itself (README.md, "A walk through the code";
// docs/reference/cli.md, "The interactive session"): /dev/tty opened for
// reading and writing, so that stdin can still carry a piped prompt; raw
// mode entered and left through SyscallConn().Control, never Fd(), which
// would put the file in blocking mode and disable read deadlines; the
// window size and its changes (SIGWINCH) as a channel; reads with a
// deadline, which tell a lone Escape from the start of an escape sequence;
// the terminal modes the UI turns on (alternate screen, bracketed paste,
// the kitty keyboard protocol); and a Restore that undoes all of it,
// idempotent, for every exit path.
//
// It is the only package that imports golang.org/x/term (enforced by
// deps_test.go).
//
// Imports: the standard library and golang.org/x/term.
package term

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

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

// Mode sequences (xterm control sequences; kitty keyboard protocol,
// "progressive enhancement").
const (
	altScreenOn       = "\x1b[?1049h"
	altScreenOff      = "\x1b[?1049l"
	pasteOn           = "\x1b[?2004h"
	pasteOff          = "\x1b[?2004l"
	cursorShow        = "\x1b[?25h"
	sgrReset          = "\x1b[0m"
	kittyPop          = "\x1b[<u"
	syncOff           = "\x1b[?2026l"
	KittyQuery        = "\x1b[?u\x1b[c" // the flags in force, then primary device attributes
	KittyDisambiguate = 1               // flag 1: disambiguate escape codes
)

// ErrClosed is returned by operations on a closed TTY.
var ErrClosed = errors.New("the terminal is closed")

// TTY is the controlling terminal, opened for the interactive UI. Read,
// Write and SetReadDeadline may be used from different goroutines (one
// reader, one writer); Restore and Close from any.
type TTY struct {
	f *os.File

	mu       sync.Mutex
	state    *term.State // the mode before MakeRaw; nil when not raw
	undo     string      // sequences that undo the modes turned on, in order
	restored bool
	closed   bool

	winch  chan os.Signal
	resize chan struct{}
	stop   chan struct{}
	done   chan struct{}
}

// Open opens the controlling terminal, /dev/tty.
func Open() (*TTY, error) { return OpenPath("/dev/tty") }

// OpenPath opens the terminal device at path (a pty in tests). The file
// is opened by name so that the runtime's poller owns it: reads honour
// deadlines.
func OpenPath(path string) (*TTY, error) {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the terminal %s: %w", path, err)
	}
	t := &TTY{f: f, resize: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		winch: make(chan os.Signal, 1)}
	ok := false
	if err := t.control(func(fd int) error {
		ok = term.IsTerminal(fd)
		return nil
	}); err != nil || !ok {
		f.Close()
		return nil, fmt.Errorf("%s is not a terminal", path)
	}
	signal.Notify(t.winch, syscall.SIGWINCH)
	go t.watchResize()
	return t, nil
}

// watchResize turns SIGWINCH into a coalescing notification: the UI reads
// the size when it redraws, so one pending notice is enough.
func (t *TTY) watchResize() {
	defer close(t.done)
	for {
		select {
		case <-t.stop:
			return
		case <-t.winch:
			select {
			case t.resize <- struct{}{}:
			default:
			}
		}
	}
}

// control runs fn with the file descriptor without taking it out of the
// poller (Fd would make the file blocking and disable deadlines).
func (t *TTY) control(fn func(fd int) error) error {
	sc, err := t.f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := sc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// Raw puts the terminal in raw mode: no echo, no line editing, no signal
// keys (Ctrl-C arrives as a byte, which the UI handles as
// docs/reference/cli.md, "The interactive session", says), no output
// processing.
func (t *TTY) Raw() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	if t.state != nil {
		return nil
	}
	return t.control(func(fd int) error {
		st, err := term.MakeRaw(fd)
		if err != nil {
			return fmt.Errorf("entering raw mode: %w", err)
		}
		t.state = st
		t.restored = false
		return nil
	})
}

// Size returns the window's columns and rows.
func (t *TTY) Size() (w, h int, err error) {
	err = t.control(func(fd int) error {
		w, h, err = term.GetSize(fd)
		return err
	})
	return w, h, err
}

// Resize delivers a notice after the window size changed (SIGWINCH);
// notices coalesce.
func (t *TTY) Resize() <-chan struct{} { return t.resize }

// Read reads input bytes; with a deadline set it returns an error
// satisfying errors.Is(err, os.ErrDeadlineExceeded) when nothing came.
func (t *TTY) Read(p []byte) (int, error) { return t.f.Read(p) }

// SetReadDeadline bounds the next reads (the zero time: no deadline).
func (t *TTY) SetReadDeadline(d time.Time) error { return t.f.SetReadDeadline(d) }

// Write writes output bytes.
func (t *TTY) Write(p []byte) (int, error) { return t.f.Write(p) }

// Enter switches to the alternate screen and turns on bracketed paste,
// recording how to undo both for Restore.
func (t *TTY) Enter() error {
	return t.enable(altScreenOn+pasteOn, pasteOff+altScreenOff)
}

// EnableKitty pushes kitty keyboard protocol flags (after the terminal
// answered KittyQuery), popped again by Restore.
func (t *TTY) EnableKitty(flags int) error {
	return t.enable(fmt.Sprintf("\x1b[>%du", flags), kittyPop)
}

func (t *TTY) enable(on, off string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	// Undo runs in reverse order of enabling.
	t.undo = off + t.undo
	t.restored = false
	_, err := t.f.WriteString(on)
	return err
}

// Restore leaves every mode the UI turned on and the raw mode, shows the
// cursor, and resets colours. It is idempotent and safe to call from a
// deferred function during a panic or after a signal; the TTY stays open
// (Raw and Enter may be used again).
func (t *TTY) Restore() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.restoreLocked()
}

func (t *TTY) restoreLocked() error {
	if t.restored || t.closed {
		return nil
	}
	t.restored = true
	var errs []error
	if _, err := t.f.WriteString(syncOff + sgrReset + cursorShow + t.undo); err != nil {
		errs = append(errs, err)
	}
	t.undo = ""
	if t.state != nil {
		st := t.state
		t.state = nil
		errs = append(errs, t.control(func(fd int) error { return term.Restore(fd, st) }))
	}
	return errors.Join(errs...)
}

// Close restores the terminal, stops watching the window size and closes
// the device. It is idempotent.
func (t *TTY) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	err := t.restoreLocked()
	t.closed = true
	t.mu.Unlock()
	signal.Stop(t.winch)
	close(t.stop)
	<-t.done
	return errors.Join(err, t.f.Close())
}
