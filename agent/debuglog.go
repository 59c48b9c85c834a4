package agent

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"agent/internal/quote"
	"agent/internal/securefile"
)

// The session's debug log (docs/reference/runtime.md, "The debug log"):
// what servers and the runtime log for whoever investigates, never shown
// in the transcript or to the model. It is the file
// ~/.agent/sessions/<id>.debug.log (0600), created with its first line and
// bounded: past maxDebugLog bytes one line says so and the rest is
// dropped.

// maxDebugLog bounds a session's debug log (across its resumptions), and
// maxDebugLine one line's message.
const (
	maxDebugLog  = 4 << 20
	maxDebugLine = 4 << 10
)

// DebugLogPath is where the session id's debug log is.
func DebugLogPath(home, id string) string { return filepath.Join(SessionsDir(home), id+".debug.log") }

// debugLog appends lines to a writer it opens on the first line.
type debugLog struct {
	mu      sync.Mutex
	open    func() (io.WriteCloser, error)
	w       io.WriteCloser
	written int
	failed  bool // opening failed, or the bound was reached: lines are dropped
	now     func() time.Time
}

// newDebugLog returns the log of session id under home; an empty home
// keeps no log (a session without transcript).
func newDebugLog(home, id string) *debugLog {
	l := &debugLog{now: time.Now}
	if home == "" {
		l.failed = true
		return l
	}
	l.open = func() (io.WriteCloser, error) {
		if err := securefile.EnsureDir(SessionsDir(home)); err != nil {
			return nil, err
		}
		return os.OpenFile(DebugLogPath(home, id), os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	}
	return l
}

// Logf appends one line: the time, the source, and the message with its
// control characters escaped (a line never breaks the file's format).
func (l *debugLog) Logf(source, format string, args ...any) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed {
		return // nothing formatted for a log that keeps nothing
	}
	text := fmt.Sprintf(format, args...)
	if len(text) > maxDebugLine {
		text = quote.PrefixN(text, maxDebugLine) + "…"
	}
	msg := strconv.Quote(text)
	line := l.now().UTC().Format(time.RFC3339Nano) + " " + source + " " + msg[1:len(msg)-1] + "\n"
	if l.w == nil {
		w, err := l.open()
		if err != nil {
			l.failed = true
			return
		}
		l.w = w
		// A resumed session appends: the bound counts what is there.
		if f, ok := w.(interface{ Stat() (os.FileInfo, error) }); ok {
			if fi, err := f.Stat(); err == nil {
				l.written = int(fi.Size())
			}
		}
	}
	if l.written+len(line) > maxDebugLog {
		if l.written >= maxDebugLog {
			// Full already (a resumed session's log that said so once).
			l.failed = true
			return
		}
		io.WriteString(l.w, l.now().UTC().Format(time.RFC3339Nano)+" agent the debug log reached its bound; later lines are dropped\n") //nolint:errcheck // best effort
		l.failed = true
		return
	}
	n, err := io.WriteString(l.w, line)
	l.written += n
	if err != nil {
		l.failed = true
	}
}

// Close closes the file, if it was opened.
func (l *debugLog) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failed = true
	if l.w == nil {
		return nil
	}
	return l.w.Close()
}
