package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"agent/mcp/jsonrpc"
)

// ServeStream serves one client over s, newline-delimited JSON-RPC on
// stdio (2025-11-25 basic/transports "stdio"; 2026-07-28 the same framing
// with per-request metadata). Both kinds of client are served on the one
// stream: a request that carries the stateless revision's _meta (or is
// server/discover, the probe of 2026-07-28 stdio "Backward Compatibility")
// is answered statelessly; everything else belongs to the initialize
// session. It returns nil when the client closes the stream, or ctx's
// cause when ctx ends first; either way s is closed and every running
// call has returned.
func (s *Server) ServeStream(ctx context.Context, st jsonrpc.Stream) error {
	sc := &serverConn{}
	var conn *jsonrpc.Conn
	ready := make(chan struct{})
	h := jsonrpc.HandlerFunc(func(hctx context.Context, m *jsonrpc.Message) (any, error) {
		<-ready
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

// ServeStdio serves one client on r and w (the process's stdin and
// stdout), with messages bounded by jsonrpc.DefaultMaxMessage.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	return s.ServeStream(ctx, jsonrpc.NewStream(r, w, jsonrpc.ReaderOptions{}))
}
