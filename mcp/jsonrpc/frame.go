package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ReaderOptions bounds a Reader. The zero value uses the package defaults.
type ReaderOptions struct {
	MaxMessage int // longest line accepted, terminator excluded
	MaxDepth   int
}

// Reader reads newline-delimited messages (MCP stdio framing). A line may
// end in LF or CRLF; lines holding only white space are skipped; a final
// line without a terminator still counts. A line longer than MaxMessage is
// reported as ErrTooLarge after the rest of it has been skipped, so memory
// stays bounded whatever the peer sends and the next call starts at the
// following line. Reader is not safe for concurrent use.
type Reader struct {
	br    *bufio.Reader
	opts  DecodeOptions
	multi []byte // reused accumulator for lines longer than the buffer
}

// readerBuffer is the bufio size: most messages fit, longer ones are
// assembled in Reader.multi.
const readerBuffer = 64 << 10

// NewReader returns a Reader of r.
func NewReader(r io.Reader, opts ReaderOptions) *Reader {
	return &Reader{
		br:   bufio.NewReaderSize(r, readerBuffer),
		opts: DecodeOptions(opts),
	}
}

func (r *Reader) max() int {
	if r.opts.MaxMessage <= 0 {
		return DefaultMaxMessage
	}
	return r.opts.MaxMessage
}

// ReadLine returns the next non-blank line without its terminator, in a
// new slice the caller owns. At the end of input it returns io.EOF.
func (r *Reader) ReadLine() ([]byte, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return line, nil
		}
	}
}

func (r *Reader) readLine() ([]byte, error) {
	max := r.max()
	frag, err := r.br.ReadSlice('\n')
	if err == nil || (err == io.EOF && len(frag) > 0) {
		// The common case: the whole line was in the buffer.
		line := trimEOL(frag)
		if len(line) > max {
			return nil, tooLarge(max, line, line)
		}
		return bytes.Clone(line), nil
	}
	if err != bufio.ErrBufferFull {
		return nil, err
	}
	acc := append(r.multi[:0], frag...)
	defer func() {
		// Keep a modest accumulator for the next long line, not a huge one.
		if cap(acc) <= 1<<20 {
			r.multi = acc[:0]
		}
	}()
	for {
		if len(acc) > max+2 { // +2: the terminator may still follow
			tail, err := r.skipLine(acc)
			if err != nil && err != io.EOF {
				return nil, err
			}
			return nil, tooLarge(max, acc, tail)
		}
		frag, err = r.br.ReadSlice('\n')
		acc = append(acc, frag...)
		switch {
		case err == nil, err == io.EOF && len(acc) > 0:
			line := trimEOL(acc)
			if len(line) > max {
				return nil, tooLarge(max, line, line)
			}
			return bytes.Clone(line), nil
		case err == bufio.ErrBufferFull:
		default:
			return nil, err
		}
	}
}

// skipLine discards input up to and including the next newline. It
// returns the last bytes of the line (at most oversizeWindow), read so
// far beginning with seen.
func (r *Reader) skipLine(seen []byte) ([]byte, error) {
	tail := lastBytes(nil, seen)
	for {
		frag, err := r.br.ReadSlice('\n')
		tail = lastBytes(tail, frag)
		if err != bufio.ErrBufferFull {
			return tail, err
		}
	}
}

// lastBytes keeps the last oversizeWindow bytes of tail followed by b.
func lastBytes(tail, b []byte) []byte {
	if len(b) >= oversizeWindow {
		return append(tail[:0], b[len(b)-oversizeWindow:]...)
	}
	if over := len(tail) + len(b) - oversizeWindow; over > 0 {
		tail = append(tail[:0], tail[over:]...)
	}
	return append(tail, b...)
}

// tooLarge reports a line over max bytes, with the id and kind its first
// and last bytes tell (oversize.go).
// A message whose start shows no method but whose id is found is taken
// for a response: requests name their method early, and the layouts that
// put the id last are those of results.
func tooLarge(limit int, head, tail []byte) *DecodeError {
	head = head[:min(len(head), oversizeWindow)]
	tail = trimEOL(tail[max(len(tail)-oversizeWindow-2, 0):])
	id, response, known := oversizedID(head, tail)
	return &DecodeError{Err: ErrTooLarge, Msg: fmt.Sprintf("line over %d bytes", limit), ID: id, Response: response || !known}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

// Read returns the next message. A line that does not decode is returned
// as a *DecodeError and the stream stays usable; other errors (io.EOF at
// the end, read errors) end it.
func (r *Reader) Read() (*Message, error) {
	line, err := r.ReadLine()
	if err != nil {
		return nil, err
	}
	return DecodeWith(line, r.opts)
}

// Writer writes newline-delimited messages. Each message goes out in one
// Write call of the underlying writer, so concurrent messages never
// interleave. Writer is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write encodes m and writes it followed by a newline.
func (w *Writer) Write(m *Message) error {
	return w.writeLine(func(buf []byte) ([]byte, error) { return AppendMessage(buf, m) })
}

// writeLine encodes one line with appendTo and writes it, with its
// newline, in one Write call. The buffer is kept for the next line unless
// it grew past 1 MiB.
func (w *Writer) writeLine(appendTo func([]byte) ([]byte, error)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	buf, err := appendTo(w.buf[:0])
	if err != nil {
		return err
	}
	buf = append(buf, '\n')
	_, err = w.w.Write(buf)
	if cap(buf) <= 1<<20 {
		w.buf = buf[:0]
	} else {
		w.buf = nil
	}
	return err
}

// IsDecodeError reports whether err is a refused message (as opposed to an
// error of the underlying stream).
func IsDecodeError(err error) bool {
	var de *DecodeError
	return errors.As(err, &de)
}
