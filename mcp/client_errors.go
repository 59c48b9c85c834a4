package mcp

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"agent/internal/quote"
	"agent/mcp/jsonrpc"
)

// Errors callers branch on with errors.Is. A server's error response is a
// *ProtocolError (errors.As) carrying its code.
var (
	// ErrClosed: the connection ended (Close, the server process exited,
	// the stream broke). It is jsonrpc.ErrClosed, so either name matches.
	ErrClosed = jsonrpc.ErrClosed
	// ErrTimeout: a request ran past ClientOptions.Timeout (the server
	// definition's timeout). The request was cancelled on the wire.
	ErrTimeout = errors.New("mcp: request timed out")
	// ErrUnsupportedVersion: the server speaks no revision in common with
	// the client; a *VersionError gives the details.
	ErrUnsupportedVersion = errors.New("mcp: no protocol version in common with the server")
	// ErrSessionExpired: a Streamable HTTP server answered 404 to a request
	// carrying the session id (2025-11-25 transports "Session
	// Management"); the client starts a new session and retries once.
	ErrSessionExpired = errors.New("mcp: the server ended the session")
	// ErrStreamLost: an SSE response stream ended before the response and
	// could not be resumed. The request may or may not have run.
	ErrStreamLost = errors.New("mcp: the response stream ended before the response")
	// ErrInputRequired: a stateless server answered with an
	// input_required result (multi round-trip request) for input this
	// client declares no capability to provide.
	ErrInputRequired = errors.New("mcp: the server asks for input this client cannot provide")
	// ErrInvalidResult: a result that does not have the shape the method
	// requires.
	ErrInvalidResult = errors.New("mcp: invalid result")
	// ErrBadResponse: an HTTP response that is not one the transport
	// defines (wrong content type, a 202 to a request, an oversized body).
	ErrBadResponse = errors.New("mcp: unexpected HTTP response")
)

// ProtocolError is an error response from the server (a JSON-RPC error
// object): Code is a JSON-RPC or MCP code (Code* constants).
type ProtocolError = jsonrpc.Error

// VersionError details ErrUnsupportedVersion.
type VersionError struct {
	Offered   []string // what the client offered
	Supported []string // what the server said it supports, when it said
	Chosen    string   // a version the server chose that the client does not speak
}

func (e *VersionError) Error() string {
	switch {
	case e.Chosen != "":
		return fmt.Sprintf("%v: the server chose %q; the client speaks %s", ErrUnsupportedVersion, quote.V(e.Chosen), strings.Join(e.Offered, ", "))
	case len(e.Supported) > 0:
		return fmt.Sprintf("%v: the server supports %s; the client speaks %s", ErrUnsupportedVersion, strings.Join(e.Supported, ", "), strings.Join(e.Offered, ", "))
	}
	return fmt.Sprintf("%v: the client speaks %s", ErrUnsupportedVersion, strings.Join(e.Offered, ", "))
}

func (e *VersionError) Unwrap() error { return ErrUnsupportedVersion }

// HTTPStatusError is an HTTP answer the transport cannot use: a status
// outside 2xx without a JSON-RPC error body. Authenticate holds the
// WWW-Authenticate values of a 401 or 403 for the sign-in code. Body is
// the start of the response body, for diagnostics only.
type HTTPStatusError struct {
	Method       string // the HTTP method
	StatusCode   int
	Authenticate []string
	Body         string
}

func (e *HTTPStatusError) Error() string {
	return fmt.Sprintf("mcp: HTTP %s answered %d %s", e.Method, e.StatusCode, http.StatusText(e.StatusCode))
}

// TransportError wraps a failure to reach the server (a failed dial, a
// broken connection), without the URL: URLs may carry credentials and are
// masked by the caller (docs/reference/settings.md, "Templates").
type TransportError struct {
	Op  string // "POST tools/call", "GET", "DELETE"
	Err error
}

func (e *TransportError) Error() string { return "mcp: " + e.Op + ": " + e.Err.Error() }
func (e *TransportError) Unwrap() error { return e.Err }
