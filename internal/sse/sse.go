// Package sse reads and writes server-sent event streams (the WHATWG HTML
// "server-sent events" event stream format), as used by the model providers'
// streaming APIs and by MCP's Streamable HTTP transport.
//
// Lines end in CRLF, LF or a lone CR; comment lines (starting with ':') are
// ignored; several data lines join with '\n'; a blank line dispatches the
// event; an event cut off by the end of the stream is not dispatched. Every
// line is bounded (16 MiB by default; docs/providers.md, "Shared
// plumbing"), and so is the data of one event: a longer line is an error
// wrapping ErrLineTooLong, never a hang or unbounded growth.
//
// With Options.BareJSON the reader also returns JSON objects written
// outside the format (see Options), as Events with Bare set.
//
// Imports: standard library only.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxLine is the line bound of docs/providers.md, "Shared plumbing".
const DefaultMaxLine = 16 << 20

// ErrLineTooLong is wrapped by the error for a line, or an event's data,
// over the bound.
var ErrLineTooLong = errors.New("sse: line too long")

// Event is one dispatched event.
type Event struct {
	Type string // the "event" field; empty means "message"
	Data string // data lines joined with '\n'
	ID   string // the last event ID in force when dispatched
	// Bare marks a JSON object written outside the event format
	// (Options.BareJSON): Data holds it, its lines joined with '\n'.
	Bare bool
}

// Options bounds a Reader. The zero value uses DefaultMaxLine for both.
type Options struct {
	MaxLine  int // longest accepted line, terminator excluded
	MaxEvent int // most data bytes in one event or bare object; 0 means MaxLine
	// BareJSON returns a JSON object written without a field name as an
	// Event with Bare set, as soon as it is complete. Some APIs report an
	// error that occurs after the stream began this way, on one line or
	// pretty-printed over several (the genai API; the chat-completions
	// servers of some vendors); the format itself would ignore those lines
	// as unknown fields. An object begins with a line whose first
	// non-blank byte is '{' and takes the following lines (blank ones
	// skipped) until its brackets balance, counted outside strings, as the
	// vendor's own client does. It is bounded like an event's data
	// (MaxEvent). A line of the format (a data, event, id or retry field,
	// or a comment) before it balances abandons it: a JSON object cannot
	// hold such a line, so the stream goes on as the format reads it. An
	// object cut off by the end of the stream is discarded, like an event.
	BareJSON bool
}

// Reader decodes an event stream. It is not safe for concurrent use.
type Reader struct {
	r        io.Reader
	buf      []byte
	start    int // unread data is buf[start:end]
	end      int
	eof      bool
	err      error
	maxLine  int
	maxEvent int
	bomDone  bool
	bareJSON bool
	tail     bool // the line returned last was cut off by the end of the stream

	bare      []byte // the bare JSON object being read
	inBare    bool
	bareDepth int

	lastID   string
	typ      []byte
	typStr   string // the last dispatched type, reused while it repeats
	data     []byte
	hasDat   bool
	retry    time.Duration
	hasRetry bool
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader, opts Options) *Reader {
	if opts.MaxLine <= 0 {
		opts.MaxLine = DefaultMaxLine
	}
	if opts.MaxEvent <= 0 {
		opts.MaxEvent = opts.MaxLine
	}
	return &Reader{r: r, buf: make([]byte, 32<<10), maxLine: opts.MaxLine, maxEvent: opts.MaxEvent, bareJSON: opts.BareJSON}
}

// LastEventID is the last event ID seen on the stream, for resuming with
// Last-Event-ID.
func (r *Reader) LastEventID() string { return r.lastID }

// Retry is the reconnection time the stream last set with a retry field.
func (r *Reader) Retry() (time.Duration, bool) { return r.retry, r.hasRetry }

// Next returns the next event. At the end of the stream it returns io.EOF
// (an unterminated final event is discarded, as the format requires);
// read errors and bound violations are returned as they are. As the format
// requires, a block whose data is empty dispatches nothing, but its id and
// retry fields still take effect (MCP servers prime resumption that way).
func (r *Reader) Next() (Event, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			return Event{}, err
		}
		if r.bareJSON {
			took, done, err := r.bareLine(line)
			if err != nil {
				return Event{}, err
			}
			if done {
				ev := Event{Data: string(r.bare), Bare: true}
				r.bare, r.inBare = r.bare[:0], false
				return ev, nil
			}
			if took {
				continue
			}
		}
		if r.tail {
			// The stream ended inside a line of the format: that line and
			// its event are incomplete and are discarded.
			return Event{}, io.EOF
		}
		if len(line) == 0 {
			if len(r.data) == 0 {
				r.typ, r.hasDat = r.typ[:0], false
				continue
			}
			if string(r.typ) != r.typStr { // compared without a copy
				r.typStr = string(r.typ)
			}
			ev := Event{Type: r.typStr, Data: string(r.data), ID: r.lastID}
			r.typ, r.data, r.hasDat = r.typ[:0], r.data[:0], false
			return ev, nil
		}
		if err := r.field(line); err != nil {
			return Event{}, err
		}
	}
}

// bareLine feeds line to the bare JSON object being read, or starts one
// with it. It reports whether it took the line and whether the object is
// complete. A blank line is not taken: the object goes on after it, and
// the format still dispatches the event it ends, so that the events of
// the format come out as they would without BareJSON.
func (r *Reader) bareLine(line []byte) (took, done bool, err error) {
	switch {
	case !r.inBare:
		if !startsObject(line) {
			return false, false, nil
		}
		r.inBare, r.bareDepth, r.bare = true, 0, r.bare[:0]
	case len(line) == 0:
		return false, false, nil
	case formatLine(line):
		r.inBare, r.bare = false, r.bare[:0]
		return false, false, nil
	}
	n := len(line)
	if len(r.bare) > 0 {
		n++
	}
	if len(r.bare)+n > r.maxEvent {
		r.inBare, r.bare = false, r.bare[:0]
		return true, false, fmt.Errorf("%w: JSON object over %d bytes", ErrLineTooLong, r.maxEvent)
	}
	if len(r.bare) > 0 {
		r.bare = append(r.bare, '\n')
	}
	r.bare = append(r.bare, line...)
	r.bareDepth += depthChange(line)
	if r.bareDepth <= 0 {
		return true, true, nil
	}
	if r.tail {
		r.inBare, r.bare = false, r.bare[:0] // cut off by the end of the stream
	}
	return true, false, nil
}

// startsObject reports whether line begins a bare JSON object: its first
// byte that is not a space or tab is '{'.
func startsObject(line []byte) bool {
	s := bytes.TrimLeft(line, " \t")
	return len(s) > 0 && s[0] == '{'
}

// formatLine reports whether line is a line of the event format that no
// JSON text can continue with: a comment or a data, event, id or retry
// field.
func formatLine(line []byte) bool {
	if line[0] == ':' {
		return true
	}
	for _, f := range [...]string{"data", "event", "id", "retry"} {
		if rest, ok := bytes.CutPrefix(line, []byte(f)); ok && (len(rest) == 0 || rest[0] == ':') {
			return true
		}
	}
	return false
}

// depthChange is the change in bracket depth over line, counting brackets
// outside strings. A JSON string cannot span lines, so one left open ends
// with its line: a broken line does not turn the count of the next ones
// inside out.
func depthChange(line []byte) int {
	d, inStr, esc := 0, false, false
	for _, c := range line {
		switch {
		case esc:
			esc = false
		case inStr:
			switch c {
			case '\\':
				esc = true
			case '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			d++
		case c == '}' || c == ']':
			d--
		}
	}
	return d
}

// field processes one non-blank line.
func (r *Reader) field(line []byte) error {
	if line[0] == ':' {
		return nil // comment
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if r.hasDat {
			if len(r.data)+1+len(value) > r.maxEvent {
				return fmt.Errorf("%w: event data over %d bytes", ErrLineTooLong, r.maxEvent)
			}
			r.data = append(r.data, '\n')
		} else if len(value) > r.maxEvent {
			return fmt.Errorf("%w: event data over %d bytes", ErrLineTooLong, r.maxEvent)
		}
		r.data = append(r.data, value...)
		r.hasDat = true
	case "event":
		r.typ = append(r.typ[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 { // an id with NUL is ignored
			r.lastID = string(value)
		}
	case "retry":
		if n, err := strconv.ParseUint(string(value), 10, 31); err == nil && len(value) > 0 && value[0] != '+' {
			r.retry, r.hasRetry = time.Duration(n)*time.Millisecond, true
		}
	}
	return nil
}

// readLine returns the next line without its terminator. The slice is
// valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	if r.tail {
		return nil, io.EOF
	}
	scanned := 0 // bytes of buf[start:end] known to hold no terminator
	for {
		seg := r.buf[r.start+scanned : r.end]
		if i := indexEOL(seg); i >= 0 {
			i += scanned
			line := r.buf[r.start : r.start+i]
			if r.buf[r.start+i] == '\r' {
				if r.start+i+1 < r.end {
					if r.buf[r.start+i+1] == '\n' {
						r.start += i + 2
					} else {
						r.start += i + 1
					}
				} else if r.eof {
					r.start += i + 1
				} else {
					// A CR at the end of the buffer: the next byte decides
					// between CRLF and a lone CR.
					scanned = i
					if err := r.fill(); err != nil {
						return nil, err
					}
					continue
				}
			} else {
				r.start += i + 1
			}
			if len(line) > r.maxLine {
				return nil, fmt.Errorf("%w: over %d bytes", ErrLineTooLong, r.maxLine)
			}
			return r.stripBOM(line), nil
		}
		scanned = r.end - r.start
		if scanned > r.maxLine {
			return nil, fmt.Errorf("%w: over %d bytes", ErrLineTooLong, r.maxLine)
		}
		if r.eof {
			if r.err != nil {
				return nil, r.err
			}
			// The stream ended inside a line. For the format that line and
			// its event are incomplete and are discarded (Next), but it may
			// complete a bare JSON object: a server that reports an error
			// and closes need not end the line.
			if r.bareJSON && r.start < r.end {
				line := r.buf[r.start:r.end]
				r.start, r.tail = r.end, true
				return r.stripBOM(line), nil
			}
			r.start = r.end
			return nil, io.EOF
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

func (r *Reader) stripBOM(line []byte) []byte {
	if !r.bomDone {
		r.bomDone = true
		return bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
	}
	return line
}

// indexEOL finds the first CR or LF.
func indexEOL(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	var j int
	if i < 0 {
		j = bytes.IndexByte(b, '\r')
	} else {
		j = bytes.IndexByte(b[:i], '\r')
	}
	if j >= 0 {
		return j
	}
	return i
}

// fill reads more data, compacting or growing the buffer up to the bound.
func (r *Reader) fill() error {
	if r.start > 0 {
		n := copy(r.buf, r.buf[r.start:r.end])
		r.start, r.end = 0, n
	}
	if r.end == len(r.buf) {
		limit := r.maxLine + 2 // a full line plus CRLF
		if len(r.buf) >= limit {
			return fmt.Errorf("%w: over %d bytes", ErrLineTooLong, r.maxLine)
		}
		nb := make([]byte, min(len(r.buf)*2, limit))
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	for tries := 0; tries < 100; tries++ {
		n, err := r.r.Read(r.buf[r.end:])
		r.end += n
		if err != nil {
			r.eof = true
			if err != io.EOF {
				r.err = err
			}
			return nil
		}
		if n > 0 {
			return nil
		}
	}
	return io.ErrNoProgress
}

// Write writes ev in the event stream format: the event type and id when
// set, the data split into one data line per line, then a blank line. A
// type or id containing a line break, or an id containing NUL, is refused.
// An event with empty data is written with one empty data line: readers
// dispatch nothing for it, but take its id (a resumption point).
func Write(w io.Writer, ev Event) error { return write(w, ev, 0) }

// WriteRetry is Write with a retry field (the reconnection time, rounded to
// milliseconds) before the data.
func WriteRetry(w io.Writer, ev Event, retry time.Duration) error { return write(w, ev, retry) }

func write(w io.Writer, ev Event, retry time.Duration) error {
	var b strings.Builder
	if ev.Type != "" {
		if strings.ContainsAny(ev.Type, "\r\n") {
			return errors.New("sse: event type contains a line break")
		}
		b.WriteString("event: " + ev.Type + "\n")
	}
	if ev.ID != "" {
		if strings.ContainsAny(ev.ID, "\r\n\x00") {
			return errors.New("sse: event id contains a line break or NUL")
		}
		b.WriteString("id: " + ev.ID + "\n")
	}
	if retry > 0 {
		b.WriteString("retry: " + strconv.FormatInt(retry.Milliseconds(), 10) + "\n")
	}
	data := strings.ReplaceAll(strings.ReplaceAll(ev.Data, "\r\n", "\n"), "\r", "\n")
	for line := range strings.SplitSeq(data, "\n") {
		if line == "" {
			b.WriteString("data:\n")
		} else {
			b.WriteString("data: " + line + "\n")
		}
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
