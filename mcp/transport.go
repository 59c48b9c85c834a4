package mcp

import (
	"context"
	"io"

	"agent/mcp/jsonrpc"
)

// Transport carries JSON-RPC messages between the client and one server.
//
// Read is called by one goroutine at a time (the client's reader); it
// blocks until a message arrives, returns a *jsonrpc.DecodeError for a
// refused message (the transport goes on), and an error wrapping ErrClosed
// once the transport has ended or Close was called. Write is safe for
// concurrent use; ctx bounds it, and on Streamable HTTP the exchange a
// request opens (cancelling ctx closes that request's response stream,
// which is the 2026-07-28 cancellation signal). Close is idempotent and
// unblocks Read. It is the same contract as jsonrpc.Stream.
type Transport interface {
	Read() (*jsonrpc.Message, error)
	Write(ctx context.Context, m *jsonrpc.Message) error
	Close() error
}

// NewStreamTransport returns a Transport over a byte stream with the stdio
// framing (one message per line): an in-process server, a socket, or a
// process the caller started itself. Close closes r and w when they are
// io.Closers. maxMessage bounds one line (0: 16 MiB).
func NewStreamTransport(r io.Reader, w io.Writer, maxMessage int) Transport {
	return jsonrpc.NewStream(r, w, jsonrpc.ReaderOptions{MaxMessage: maxMessage})
}

// httpSession is what the client tells a Streamable HTTP transport about
// the protocol state, which the transport mirrors into headers and
// sessions. Only *HTTPTransport implements it.
type httpSession interface {
	// setProtocol sets the MCP-Protocol-Version header for later requests
	// ("" sends none) and whether the stateless revision is in use (no
	// session, no GET stream, no resumption).
	setProtocol(version string, stateless bool)
	// sessionStarted runs after a legacy initialize handshake: it opens the
	// optional GET stream for server messages.
	sessionStarted()
	// resetSession forgets the session id and stops the GET stream, before
	// a new initialize after a 404.
	resetSession()
	// setLost installs what the transport calls when a request's response
	// stream ended for good without the response.
	setLost(func(id jsonrpc.ID, err error))
}

// requestHeaders carries per-request HTTP header values from the client to
// the Streamable HTTP transport through the Write context (2026-07-28
// transports "Standard Request Headers" and "Custom Headers from Tool
// Parameters").
type requestHeaders struct {
	name   string // Mcp-Name, already encoded; "" for none
	params [][2]string
}

type requestHeadersKey struct{}

func withRequestHeaders(ctx context.Context, h *requestHeaders) context.Context {
	return context.WithValue(ctx, requestHeadersKey{}, h)
}

func requestHeadersFrom(ctx context.Context) *requestHeaders {
	h, _ := ctx.Value(requestHeadersKey{}).(*requestHeaders)
	return h
}
