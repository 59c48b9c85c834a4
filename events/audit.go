package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// Outcomes of a request, as audited.
const (
	OutcomeAdmitted    = "admitted"    // 202
	OutcomeRefused     = "refused"     // 4xx but throttling
	OutcomeThrottled   = "throttled"   // 429 from the failure throttle
	OutcomeUnavailable = "unavailable" // 503
)

// Record is one audited decision (docs/reference/events.md, "Audit log"):
// the time, the grant, the outcome and the status, with the refusal's
// reason, the client's address and the turn id. It never holds the token,
// the content, the conversation id or the claimed name.
type Record struct {
	Time    time.Time `json:"time"`
	Grant   string    `json:"grant,omitempty"` // "" when the path named no grant
	Outcome string    `json:"outcome"`
	Status  int       `json:"status"`
	Reason  string    `json:"reason,omitempty"` // a fixed phrase, never request text
	Addr    string    `json:"addr,omitempty"`
	TurnID  string    `json:"turnId,omitempty"`
}

// Auditor receives a Record for every request the endpoint decides, except
// that a throttled address is recorded once per throttled stretch. Audit
// is called from request goroutines concurrently and must not block for
// long.
type Auditor interface {
	Audit(Record)
}

// AuditFunc adapts a function to Auditor.
type AuditFunc func(Record)

// Audit calls f.
func (f AuditFunc) Audit(r Record) { f(r) }

// DefaultAuditMaxBytes bounds an AuditLog whose options leave it at zero.
const DefaultAuditMaxBytes = 4 << 20

// AuditLogOptions configures an AuditLog. The zero value is the default.
type AuditLogOptions struct {
	// MaxBytes is the size at which the log is moved to PATH.1 (replacing
	// the previous one) and started afresh, so that the two files together
	// stay under twice MaxBytes; 0 means DefaultAuditMaxBytes.
	MaxBytes int64
}

// AuditLog is an Auditor that appends JSON lines to a file of mode 0600,
// bounded by rotation. It is safe for concurrent use.
type AuditLog struct {
	path string
	max  int64

	mu     sync.Mutex
	f      *os.File
	size   int64
	err    error // the first write failure, kept for Err
	closed bool
}

// OpenAuditLog opens (creating with mode 0600) the log at path for
// appending. A file that others can access, or that is not a regular file,
// is refused: the log tells who tried to reach the session. Symbolic links
// are not followed.
func OpenAuditLog(path string, opts AuditLogOptions) (*AuditLog, error) {
	l := &AuditLog{path: path, max: opts.MaxBytes}
	if l.max <= 0 {
		l.max = DefaultAuditMaxBytes
	}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *AuditLog) open() error {
	// O_NONBLOCK: opening a FIFO for writing would wait for a reader; it
	// fails or is refused below instead (docs/reference/events.md, "Audit
	// log").
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && (!fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0) {
		err = fmt.Errorf("%s: not a regular file of mode 0600", l.path)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("audit log: %w", err)
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// Audit appends r as one line. A failure is kept for Err and the record
// dropped: auditing never stops the endpoint.
func (l *AuditLog) Audit(r Record) {
	line, err := json.Marshal(r)
	if err != nil {
		return
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.f == nil {
		return
	}
	if l.size+int64(len(line)) > l.max && l.size > 0 {
		l.rotateLocked()
		if l.f == nil {
			return
		}
	}
	n, err := l.f.Write(line)
	l.size += int64(n)
	if err != nil && l.err == nil {
		l.err = fmt.Errorf("audit log: %w", err)
	}
}

func (l *AuditLog) rotateLocked() {
	l.f.Close()
	l.f = nil
	err := os.Rename(l.path, l.path+".1")
	if err == nil {
		err = l.open()
	}
	if err != nil && l.err == nil {
		l.err = fmt.Errorf("audit log: rotating: %w", err)
	}
}

// Err returns the first failure to write, or nil.
func (l *AuditLog) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Close closes the file. It is idempotent; records after it are dropped.
func (l *AuditLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if errors.Is(err, os.ErrClosed) {
		err = nil
	}
	return err
}
