package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"agent/mcp/jsonrpc"
)

// ServeStream serves one client over s, newline-delimited JSON-RPC on
// stdio (2025-11-25 basic/transports "stdio"; 2026-07-28 the same framing
// with per-request metadata). Both kinds of client are served on the one
// stream: a request that carries the stateless revision's _meta (or is
// server/discover, the probe of 2026-07-28 stdio "Backward Compatibility")
// is answered statelessly; everything else belongs to the initialize
// session. A client that negotiated 2025-03-26 may send JSON-RPC batches,
// which that revision requires a receiver to accept (basic/index
// "Batching"): a batch line is answered with one array line of the
// responses; with any other revision, or before initialize, a batch is
// refused with an error response. It returns nil when the client closes
// the stream, or ctx's cause when ctx ends first; either way s is closed
// and every running call has returned.
func (s *Server) ServeStream(ctx context.Context, st jsonrpc.Stream) error {
	sc := &serverConn{}
	st = jsonrpc.NewBatchStream(st, jsonrpc.BatchOptions{Allow: func() bool { return batches(sc.negotiated()) }})
	st = &drainingStream{Stream: st, idle: make(chan struct{}, 1), closed: make(chan struct{})}
	var conn *jsonrpc.Conn
	ready := make(chan struct{})
	h := jsonrpc.HandlerFunc(func(hctx context.Context, m *jsonrpc.Message) (any, error) {
		<-ready
		hctx = withNotifier(hctx, func(method string, params any) {
			conn.Notify(hctx, method, params) //nolint:errcheck // a client that went away reads nothing
		})
		if m.Kind() == jsonrpc.KindNotification {
			if m.Method == "notifications/cancelled" {
				// basic/utilities/cancellation: stop the named request.
				var p cancelledParams
				if json.Unmarshal(m.Params, &p) == nil && p.RequestID.IsValid() {
					conn.CancelRequest(p.RequestID)
				}
				return nil, nil
			}
			return s.handleLegacy(hctx, sc, m)
		}
		if isStatelessRequest(m, "") {
			return s.handleStateless(hctx, m)
		}
		return s.handleLegacy(hctx, sc, m)
	})
	conn = jsonrpc.NewConn(st, jsonrpc.ConnOptions{
		Handler: h,
		// agent_submit blocks for a whole turn and the session queues 32
		// prompts; leave room for tools/list and ping meanwhile.
		MaxConcurrent: 64,
		OnError:       func(err error) { s.notice("mcp serve: " + err.Error()) },
		// A line over the bound is answered with a parse error (id null,
		// by drainingStream) and skipped; the session goes on.
		SkipTooLarge: true,
	})
	close(ready)
	select {
	case <-conn.Done():
		conn.Close()
		err := conn.Err()
		if errors.Is(err, io.EOF) || errors.Is(err, jsonrpc.ErrClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
		conn.Close()
		return context.Cause(ctx)
	}
}

// drainingStream holds back the end of input until every request read so
// far has been answered: a client that writes its requests and closes
// stdin (a pipeline) still gets every answer (2025-11-25 lifecycle
// "Shutdown": closing stdin is how a client ends the connection; a client
// in a hurry follows with SIGTERM, which ends the calls).
type drainingStream struct {
	jsonrpc.Stream
	mu      sync.Mutex
	pending map[jsonrpc.ID]bool
	idle    chan struct{} // signalled when pending becomes empty
	once    sync.Once
	closed  chan struct{}
	// gate is closed when the answer to the last initialize is out: the
	// next message is read only then, so that a client that pipelines
	// its first requests behind initialize finds the session set up
	// (requests are otherwise handled concurrently).
	gate   chan struct{}
	gateID jsonrpc.ID
}

func (d *drainingStream) Read() (*jsonrpc.Message, error) {
	d.mu.Lock()
	gate := d.gate
	d.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-d.closed:
		}
	}
	m, err := d.Stream.Read()
	var de *jsonrpc.DecodeError
	if errors.As(err, &de) && !de.ID.IsValid() && !de.Response {
		// JSON-RPC 2.0 §5: a message whose id cannot be read is answered
		// with id null (the connection answers those with an id).
		d.Stream.Write(context.Background(), jsonrpc.NewErrorResponse(jsonrpc.ID{}, &jsonrpc.Error{Code: de.Code(), Message: de.Error()})) //nolint:errcheck // a closed stdout ends the connection anyway
	}
	if err == nil && m.Kind() == jsonrpc.KindRequest {
		d.mu.Lock()
		if d.pending == nil {
			d.pending = map[jsonrpc.ID]bool{}
		}
		d.pending[m.ID] = true
		if m.Method == "initialize" {
			d.gate, d.gateID = make(chan struct{}), m.ID
		}
		d.mu.Unlock()
	}
	if err != nil && errors.Is(err, io.EOF) {
		for {
			d.mu.Lock()
			n := len(d.pending)
			d.mu.Unlock()
			if n == 0 {
				break
			}
			select {
			case <-d.idle:
			case <-d.closed:
				return nil, err
			}
		}
	}
	return m, err
}

func (d *drainingStream) Write(ctx context.Context, m *jsonrpc.Message) error {
	err := d.Stream.Write(ctx, m)
	if m.Kind() == jsonrpc.KindResponse {
		d.mu.Lock()
		delete(d.pending, m.ID)
		if d.gate != nil && d.gateID == m.ID {
			close(d.gate)
			d.gate = nil
		}
		empty := len(d.pending) == 0
		d.mu.Unlock()
		if empty {
			select {
			case d.idle <- struct{}{}:
			default:
			}
		}
	}
	return err
}

func (d *drainingStream) Close() error {
	d.once.Do(func() { close(d.closed) })
	return d.Stream.Close()
}

// ServeStdio serves one client on r and w (the process's stdin and
// stdout), with messages bounded by jsonrpc.DefaultMaxMessage.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	return s.ServeStream(ctx, jsonrpc.NewStream(r, w, jsonrpc.ReaderOptions{}))
}
