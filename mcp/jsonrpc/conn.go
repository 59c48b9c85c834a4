package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// ErrClosed is wrapped by errors from a Stream or Conn that was closed, by
// Close or because the peer went away.
var ErrClosed = errors.New("jsonrpc: connection closed")

// Stream carries whole messages in both directions.
//
// Read is called by one goroutine at a time; it blocks until a message
// arrives and returns an error wrapping ErrClosed after Close. A
// *DecodeError from Read means one refused message; the stream goes on.
// Any other error ends the stream. Write is safe for concurrent use; ctx
// bounds it and, on transports where a request opens its own exchange (MCP
// Streamable HTTP), that exchange. Close is idempotent and unblocks Read.
type Stream interface {
	Read() (*Message, error)
	Write(ctx context.Context, m *Message) error
	Close() error
}

// NewStream returns a Stream over a byte stream with newline framing (MCP
// stdio). Close closes r and w when they implement io.Closer, which is what
// unblocks a pending Read.
func NewStream(r io.Reader, w io.Writer, opts ReaderOptions) Stream {
	return &ioStream{r: NewReader(r, opts), w: NewWriter(w), rc: r, wc: w, done: make(chan struct{})}
}

type ioStream struct {
	r      *Reader
	w      *Writer
	rc, wc any
	once   sync.Once
	done   chan struct{}
}

func (s *ioStream) Read() (*Message, error) {
	m, err := s.r.Read()
	if err != nil && !IsDecodeError(err) {
		select {
		case <-s.done:
			return nil, fmt.Errorf("%w: %w", ErrClosed, err)
		default:
		}
	}
	return m, err
}

func (s *ioStream) Write(ctx context.Context, m *Message) error {
	if err := s.writable(ctx); err != nil {
		return err
	}
	return s.w.Write(m)
}

// writable refuses a write to a closed stream or under a context that has
// ended.
func (s *ioStream) writable(ctx context.Context) error {
	select {
	case <-s.done:
		return ErrClosed
	default:
	}
	return ctx.Err()
}

func (s *ioStream) Close() error {
	var err error
	s.once.Do(func() {
		close(s.done)
		if c, ok := s.wc.(io.Closer); ok {
			err = c.Close()
		}
		if c, ok := s.rc.(io.Closer); ok && s.rc != s.wc {
			if cerr := c.Close(); err == nil {
				err = cerr
			}
		}
	})
	return err
}

// Handler answers the peer's requests and receives its notifications.
//
// For a request, Handle returns the result (encoded with encoding/json; it
// must encode to an object) or an error; a *Error is sent as it is, any
// other error as an internal error without its text. Requests are handled
// on their own goroutines, at most ConnOptions.MaxConcurrent at a time.
// Notifications are handled one at a time on the connection's reading
// goroutine, in arrival order (progress must reach the caller before the
// response it precedes); Handle must return quickly for them and must not
// wait for a response on the same Conn. ctx ends when the Conn closes and,
// for a request, when Conn.CancelRequest names it.
type Handler interface {
	Handle(ctx context.Context, m *Message) (result any, err error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, m *Message) (any, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, m *Message) (any, error) { return f(ctx, m) }

// ConnOptions configures a Conn. The zero value answers every request with
// "method not found", drops notifications and handles 16 requests at once.
type ConnOptions struct {
	Handler       Handler
	MaxConcurrent int
	// OnCancel runs when Call returns because its ctx ended before the
	// response arrived, with the id and method of the abandoned request.
	// MCP sends notifications/cancelled from here. It must not block.
	OnCancel func(id ID, method string)
	// OnError receives problems that do not end the connection: messages
	// that were refused, and responses nobody waits for.
	OnError func(error)
	// SkipTooLarge keeps the connection after a message over the size
	// bound (ErrTooLarge): it is reported to OnError and reading goes on
	// with the next one. A server wants this (one oversized request must
	// not end the session); a client does not, since the lost message may
	// be the answer a call waits for, so by default the connection ends.
	SkipTooLarge bool
}

// Conn is one end of a JSON-RPC connection: it numbers outgoing requests,
// matches responses to them by id, and dispatches the peer's requests and
// notifications to the Handler. Its methods are safe for concurrent use.
type Conn struct {
	s    Stream
	opts ConnOptions

	nextID atomic.Int64

	mu       sync.Mutex
	pending  map[ID]*pendingCall
	incoming map[ID]context.CancelFunc // requests being handled
	closed   bool
	err      error // why the connection ended

	done    chan struct{} // closed when the connection has ended
	ctx     context.Context
	cancel  context.CancelFunc
	sem     chan struct{}
	workers sync.WaitGroup
	reader  chan struct{} // closed when the reading goroutine has exited
	once    sync.Once
}

type pendingCall struct {
	method string
	ch     chan callResult // buffered: the reader never blocks on it
}

type callResult struct {
	result json.RawMessage
	err    error
}

// NewConn starts a connection over s. Its reading goroutine runs until the
// stream ends or Close is called.
func NewConn(s Stream, opts ConnOptions) *Conn {
	n := opts.MaxConcurrent
	if n <= 0 {
		n = 16
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Conn{
		s:        s,
		opts:     opts,
		pending:  make(map[ID]*pendingCall),
		incoming: make(map[ID]context.CancelFunc),
		done:     make(chan struct{}),
		ctx:      ctx,
		cancel:   cancel,
		sem:      make(chan struct{}, n),
		reader:   make(chan struct{}),
	}
	go c.read()
	return c
}

// Done is closed when the connection has ended; Err then says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended (nil while it is open).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// NextID reserves a fresh request id.
func (c *Conn) NextID() ID { return Int64ID(c.nextID.Add(1)) }

// Call sends a request with a fresh id and waits for its response. It
// returns the result, a *Error for an error response, an error wrapping
// ErrClosed when the connection ends first, or, when ctx ends first, the
// context's error after running ConnOptions.OnCancel.
func (c *Conn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	m, err := NewRequest(c.NextID(), method, params)
	if err != nil {
		return nil, err
	}
	return c.CallMessage(ctx, m)
}

// CallMessage is Call for a request the caller built (with an id from
// NextID).
func (c *Conn) CallMessage(ctx context.Context, m *Message) (json.RawMessage, error) {
	if m.Kind() != KindRequest {
		return nil, fmt.Errorf("%w: CallMessage needs a request", ErrEncode)
	}
	pc := &pendingCall{method: m.Method, ch: make(chan callResult, 1)}
	c.mu.Lock()
	if c.closed {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	if _, dup := c.pending[m.ID]; dup {
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: id %v is already in use", ErrEncode, m.ID)
	}
	c.pending[m.ID] = pc
	c.mu.Unlock()

	if err := c.s.Write(ctx, m); err != nil {
		stillPending := c.forget(m.ID)
		// A result may have raced the failure (a transport that delivers
		// the response while writing); prefer it.
		select {
		case r := <-pc.ch:
			return r.result, r.err
		default:
		}
		if cerr := c.Err(); cerr != nil {
			return nil, cerr
		}
		if ctx.Err() != nil {
			// The request may have reached the peer before ctx ended (an
			// HTTP request whose answer had not started): tell it too.
			if stillPending && c.opts.OnCancel != nil {
				c.opts.OnCancel(m.ID, m.Method)
			}
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	select {
	case r := <-pc.ch:
		return r.result, r.err
	case <-ctx.Done():
		if c.forget(m.ID) && c.opts.OnCancel != nil {
			c.opts.OnCancel(m.ID, m.Method)
		}
		select {
		case r := <-pc.ch: // answered while we were giving up
			return r.result, r.err
		default:
		}
		return nil, context.Cause(ctx)
	case <-c.done:
		select {
		case r := <-pc.ch:
			return r.result, r.err
		default:
		}
		return nil, c.Err()
	}
}

// forget removes a pending call; it reports whether the call was still
// pending.
func (c *Conn) forget(id ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.pending[id]
	delete(c.pending, id)
	return ok
}

// Fail ends the pending call with id with err, for transports that learn
// locally that a request was lost. It reports whether a call was waiting.
func (c *Conn) Fail(id ID, err error) bool {
	return c.resolve(id, callResult{err: err})
}

func (c *Conn) resolve(id ID, r callResult) bool {
	c.mu.Lock()
	pc, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ok {
		pc.ch <- r
	}
	return ok
}

// CancelRequest ends the context of the peer's request id while its handler
// runs (MCP: on notifications/cancelled). It reports whether such a
// request was being handled.
func (c *Conn) CancelRequest(id ID) bool {
	c.mu.Lock()
	cancel, ok := c.incoming[id]
	c.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}

// Notify sends a notification.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	m, err := NewNotification(method, params)
	if err != nil {
		return err
	}
	return c.Send(ctx, m)
}

// Send writes any message as it is.
func (c *Conn) Send(ctx context.Context, m *Message) error {
	select {
	case <-c.done:
		return c.Err()
	default:
	}
	return c.s.Write(ctx, m)
}

// Close ends the connection: pending calls fail with ErrClosed, the stream
// is closed, and Close waits for the reading goroutine and the request
// handlers to return. It is idempotent.
func (c *Conn) Close() error {
	err := c.shutdown(ErrClosed)
	<-c.reader
	c.workers.Wait()
	return err
}

// shutdown records why the connection ended (the first reason wins), fails
// every pending call, and closes the stream.
func (c *Conn) shutdown(reason error) error {
	var err error
	c.once.Do(func() {
		if !errors.Is(reason, ErrClosed) {
			reason = fmt.Errorf("%w: %w", ErrClosed, reason)
		}
		c.mu.Lock()
		c.closed = true
		c.err = reason
		pending := c.pending
		c.pending = nil
		c.mu.Unlock()
		for _, pc := range pending {
			pc.ch <- callResult{err: reason}
		}
		c.cancel()
		close(c.done)
		err = c.s.Close()
	})
	return err
}

func (c *Conn) read() {
	defer close(c.reader)
	for {
		m, err := c.s.Read()
		if err != nil {
			var de *DecodeError
			// An oversized message whose id is known is refused alone: the
			// call it answered fails, or the request it was gets an error.
			if errors.As(err, &de) && (!errors.Is(err, ErrTooLarge) || c.opts.SkipTooLarge || de.ID.IsValid()) {
				c.refused(de)
				continue
			}
			if err == io.EOF {
				err = fmt.Errorf("%w: the peer closed the stream", ErrClosed)
			}
			c.shutdown(err)
			return
		}
		switch m.Kind() {
		case KindResponse:
			r := callResult{result: m.Result}
			if m.Error != nil {
				r = callResult{err: m.Error}
			}
			if !c.resolve(m.ID, r) {
				c.report(fmt.Errorf("jsonrpc: response to unknown or abandoned request %v", m.ID))
			}
		case KindNotification:
			if c.opts.Handler != nil {
				c.opts.Handler.Handle(c.ctx, m) //nolint:errcheck // notifications have no answer
			}
		case KindRequest:
			select {
			case c.sem <- struct{}{}:
			case <-c.done:
				return
			}
			// Registered here, before the next message is read, so that a
			// notifications/cancelled right behind the request finds it.
			ctx, cancel := context.WithCancel(c.ctx)
			c.mu.Lock()
			c.incoming[m.ID] = cancel
			c.mu.Unlock()
			c.workers.Add(1)
			go c.serve(ctx, cancel, m)
		}
	}
}

// refused handles a message that did not decode: a request with a
// readable id gets an error response; a response with one fails the call
// it answered, which would otherwise wait forever.
func (c *Conn) refused(de *DecodeError) {
	c.report(de)
	if !de.ID.IsValid() {
		return
	}
	if de.Response {
		c.Fail(de.ID, fmt.Errorf("jsonrpc: the response was refused: %w", de))
		return
	}
	resp := NewErrorResponse(de.ID, &Error{Code: de.Code(), Message: de.Error()})
	if err := c.s.Write(c.ctx, resp); err != nil {
		c.report(err)
	}
}

func (c *Conn) report(err error) {
	if c.opts.OnError != nil {
		c.opts.OnError(err)
	}
}

func (c *Conn) serve(ctx context.Context, cancel context.CancelFunc, m *Message) {
	defer func() {
		c.mu.Lock()
		delete(c.incoming, m.ID)
		c.mu.Unlock()
		cancel()
		<-c.sem
		c.workers.Done()
	}()
	var resp *Message
	if c.opts.Handler == nil {
		resp = NewErrorResponse(m.ID, &Error{Code: CodeMethodNotFound, Message: "method not found: " + m.Method})
	} else {
		result, err := c.opts.Handler.Handle(ctx, m)
		resp = responseFor(m.ID, result, err)
	}
	if err := c.s.Write(c.ctx, resp); err != nil {
		c.report(fmt.Errorf("jsonrpc: answering %s: %w", m.Method, err))
	}
}

func responseFor(id ID, result any, err error) *Message {
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return NewErrorResponse(id, e)
		}
		return NewErrorResponse(id, &Error{Code: CodeInternalError, Message: "internal error"})
	}
	resp, err := NewResponse(id, result)
	if err != nil {
		return NewErrorResponse(id, &Error{Code: CodeInternalError, Message: "internal error"})
	}
	if t := firstByte(resp.Result); t != '{' {
		return NewErrorResponse(id, &Error{Code: CodeInternalError, Message: "internal error: result is not an object"})
	}
	return resp
}

func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}
