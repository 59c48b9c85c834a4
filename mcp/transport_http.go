package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"agent/internal/quote"
	"agent/internal/sse"
	"agent/mcp/jsonrpc"
)

// HTTPOptions configures a Streamable HTTP transport. The zero value of
// every field but URL is the documented default.
type HTTPOptions struct {
	// URL is the MCP endpoint.
	URL string
	// Header is sent with every request: static headers of the definition
	// and a header helper's output. The headers the transport owns
	// (Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version,
	// Last-Event-ID, Mcp-Method, Mcp-Name, Mcp-Param-*) are dropped from
	// it: a definition cannot choose a session or forge request metadata.
	Header http.Header
	// Client sends the requests. The caller wraps it with the address
	// policy and the OAuth transport. nil means a client that uses no
	// proxy and never follows redirects.
	Client *http.Client
	// MaxMessage bounds one JSON body or SSE event; 0 means 16 MiB.
	MaxMessage int
	// RetryDelay is how long to wait before resuming a broken SSE stream
	// when the server set no retry field; 0 means 1 s.
	RetryDelay time.Duration
	// MaxRetryDelay caps the server's retry field; 0 means 60 s.
	MaxRetryDelay time.Duration
	// MaxResumes bounds reconnection attempts in a row that bring no new
	// event; 0 means 5.
	MaxResumes int
}

// HTTPTransport is the Streamable HTTP transport (2025-03-26, 2025-06-18
// and 2025-11-25 transports "Streamable HTTP"; 2026-07-28
// basic/transports/streamable-http). Each message is a POST; a request's
// answer is a JSON body or an SSE stream. With the session-based revisions
// it keeps the Mcp-Session-Id, listens on the optional GET stream and
// resumes broken streams with Last-Event-ID after the server's retry time;
// with 2026-07-28 it sends the request metadata headers instead and does
// none of that. The MCP-Protocol-Version header goes out only with the
// revisions that define it (2025-06-18 and later), and a body or event
// holding a JSON-RPC batch is taken only from a server of 2025-03-26, the
// one revision with batches. A server that answered initialize with
// 2024-11-05 over this transport is treated by the rules of 2025-03-26, the
// first revision of Streamable HTTP; the older HTTP+SSE transport of
// 2024-11-05 is not spoken (docs/reference/mcp.md, "What connects and
// when": 'sse' definitions are listed, never connected).
type HTTPTransport struct {
	url        string
	header     http.Header
	client     *http.Client
	max        int
	retry      time.Duration
	maxRetry   time.Duration
	maxResumes int

	ctx      context.Context // the transport's lifetime; Close cancels it
	cancel   context.CancelFunc
	incoming chan incomingItem
	wg       sync.WaitGroup

	mu        sync.Mutex
	session   string
	version   string
	stateless bool
	lost      func(jsonrpc.ID, error)
	getStop   context.CancelFunc
	closed    bool
	closeOnce sync.Once
}

type incomingItem struct {
	m   *jsonrpc.Message
	err error
}

// errorBodyLimit bounds how much of an error response is read.
const errorBodyLimit = 64 << 10

// NewHTTPTransport returns a transport for the endpoint opts.URL. It does
// not connect until the first message.
func NewHTTPTransport(opts HTTPOptions) (*HTTPTransport, error) {
	u, err := url.Parse(opts.URL)
	if err != nil {
		return nil, errors.New("mcp: the server URL does not parse")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("mcp: the server URL must be an absolute http or https URL")
	}
	client := opts.Client
	if client == nil {
		client = &http.Client{
			Transport: &http.Transport{
				Proxy:               nil,
				ForceAttemptHTTP2:   true,
				MaxIdleConnsPerHost: 16,
				IdleConnTimeout:     90 * time.Second,
				TLSHandshakeTimeout: 10 * time.Second,
			},
			// Redirects are never followed (docs/reference/mcp.md, "Address
			// policy"); a 3xx is reported as an HTTPStatusError.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	header := http.Header{}
	for k, v := range opts.Header {
		if !reservedHeader(k) {
			header[http.CanonicalHeaderKey(k)] = slices.Clone(v)
		}
	}
	t := &HTTPTransport{
		url:        u.String(),
		header:     header,
		client:     client,
		max:        opts.MaxMessage,
		retry:      opts.RetryDelay,
		maxRetry:   opts.MaxRetryDelay,
		maxResumes: opts.MaxResumes,
		incoming:   make(chan incomingItem, 64),
	}
	if t.max <= 0 {
		t.max = jsonrpc.DefaultMaxMessage
	}
	if t.retry <= 0 {
		t.retry = time.Second
	}
	if t.maxRetry <= 0 {
		t.maxRetry = time.Minute
	}
	if t.maxResumes <= 0 {
		t.maxResumes = 5
	}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	return t, nil
}

// SessionID returns the current Mcp-Session-Id ("" when there is none).
func (t *HTTPTransport) SessionID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.session
}

func (t *HTTPTransport) setProtocol(version string, stateless bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.version, t.stateless = version, stateless
}

func (t *HTTPTransport) setLost(f func(jsonrpc.ID, error)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lost = f
}

func (t *HTTPTransport) sessionStarted() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.stateless || t.getStop != nil {
		return
	}
	ctx, stop := context.WithCancel(t.ctx)
	t.getStop = stop
	t.wg.Add(1)
	opened := make(chan struct{})
	go t.listen(ctx, opened)
	t.mu.Unlock()
	// Wait (briefly) until the server has answered the GET, so that the
	// stream is in place before the next request: a server may then route
	// messages to it, and they must not depend on a race.
	timer := time.NewTimer(2 * time.Second)
	select {
	case <-opened:
	case <-timer.C:
	}
	timer.Stop()
	t.mu.Lock()
}

func (t *HTTPTransport) resetSession() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.session = ""
	if t.getStop != nil {
		t.getStop()
		t.getStop = nil
	}
}

// Read returns the next message from any of the open response streams.
func (t *HTTPTransport) Read() (*jsonrpc.Message, error) {
	select {
	case it := <-t.incoming:
		return it.m, it.err
	case <-t.ctx.Done():
		return nil, fmt.Errorf("%w: transport closed", ErrClosed)
	}
}

func (t *HTTPTransport) deliver(m *jsonrpc.Message, err error) {
	select {
	case t.incoming <- incomingItem{m, err}:
	case <-t.ctx.Done():
	}
}

func (t *HTTPTransport) fail(id jsonrpc.ID, err error) {
	t.mu.Lock()
	lost := t.lost
	t.mu.Unlock()
	if lost != nil {
		lost(id, err)
	}
}

// Write POSTs one message (2025-11-25 transports "Sending Messages to the
// Server"). For a request, the answer is delivered through Read: a JSON
// body before Write returns, an SSE stream from a goroutine that lives as
// long as ctx, the stream, or the transport.
func (t *HTTPTransport) Write(ctx context.Context, m *jsonrpc.Message) error {
	body, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	t.mu.Lock()
	closed, session, version, stateless := t.closed, t.session, t.version, t.stateless
	t.mu.Unlock()
	if closed {
		return fmt.Errorf("%w: transport closed", ErrClosed)
	}
	kind := m.Kind()
	op := "POST " + m.Method
	if kind == jsonrpc.KindResponse {
		op = "POST response"
	}

	// The request lives as long as the caller's ctx allows and the
	// transport is open; ending it closes the response stream.
	reqCtx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(t.ctx, cancel)
	release := func() { stop(); cancel() }

	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		release()
		return &TransportError{Op: op, Err: err}
	}
	h := req.Header
	for k, v := range t.header {
		h[k] = v
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if versionHeader(version) {
		h.Set("MCP-Protocol-Version", version)
	}
	if session != "" && !stateless {
		h.Set("Mcp-Session-Id", session)
	}
	if stateless && kind != jsonrpc.KindResponse {
		// 2026-07-28 streamable-http "Standard Request Headers".
		h.Set("Mcp-Method", m.Method)
		if rh := requestHeadersFrom(ctx); rh != nil {
			if rh.name != "" {
				h.Set("Mcp-Name", rh.name)
			}
			for _, p := range rh.params {
				h.Set("Mcp-Param-"+p[0], p[1])
			}
		}
	}

	resp, err := t.client.Do(req)
	if err != nil {
		release()
		if t.isClosed() {
			return fmt.Errorf("%w: transport closed", ErrClosed)
		}
		return &TransportError{Op: op, Err: unwrapURLError(err)}
	}
	status := resp.StatusCode

	if status >= 200 && status < 300 && kind == jsonrpc.KindRequest && m.Method == "initialize" && !stateless {
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			if !validSessionID(sid) {
				drainClose(resp.Body)
				release()
				return fmt.Errorf("%w: the Mcp-Session-Id is not visible ASCII of at most 1024 bytes", ErrBadResponse)
			}
			t.mu.Lock()
			t.session = sid
			t.mu.Unlock()
		}
	}

	switch {
	case status >= 200 && status < 300 && kind != jsonrpc.KindRequest:
		// A notification or response: 202 Accepted, nothing to read.
		drainClose(resp.Body)
		release()
		return nil
	case status >= 200 && status < 300:
		return t.answer(reqCtx, release, resp, m)
	case status == http.StatusNotFound && session != "" && !stateless:
		drainClose(resp.Body)
		release()
		return ErrSessionExpired
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
	resp.Body.Close()
	release()
	// A JSON-RPC error in the body is the answer to the request: MCP
	// servers send -32600-style refusals and the 2026-07-28 errors
	// (UnsupportedProtocolVersion, HeaderMismatch, method not found) with
	// 4xx statuses.
	if kind == jsonrpc.KindRequest {
		if em, err := jsonrpc.DecodeWith(data, jsonrpc.DecodeOptions{MaxMessage: errorBodyLimit}); err == nil &&
			em.Error != nil && (!em.ID.IsValid() || em.ID == m.ID) {
			em.ID = m.ID
			t.deliver(em, nil)
			return nil
		}
	}
	return &HTTPStatusError{
		Method:       http.MethodPost,
		StatusCode:   status,
		Authenticate: resp.Header.Values("WWW-Authenticate"),
		Body:         string(bytes.ToValidUTF8(data[:min(len(data), 512)], nil)),
	}
}

// answer handles a 2xx answer to a request: one JSON object, or an SSE
// stream read on its own goroutine.
func (t *HTTPTransport) answer(ctx context.Context, release func(), resp *http.Response, m *jsonrpc.Message) error {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		defer release()
		data, err := io.ReadAll(io.LimitReader(resp.Body, int64(t.max)+1))
		resp.Body.Close()
		if err != nil {
			return &TransportError{Op: "POST " + m.Method, Err: err}
		}
		if len(data) > t.max {
			return fmt.Errorf("%w: response body over %d bytes: %w", ErrBadResponse, t.max, jsonrpc.ErrTooLarge)
		}
		rm, err := jsonrpc.DecodeWith(data, jsonrpc.DecodeOptions{MaxMessage: t.max})
		if batch, ok := t.splitBatch(err); ok {
			for _, bm := range batch {
				t.deliver(bm, nil)
				if bm.Kind() == jsonrpc.KindResponse && bm.ID == m.ID {
					rm = bm
				}
			}
			if rm == nil {
				return fmt.Errorf("%w: the batch in the JSON body holds no response to request %v", ErrBadResponse, m.ID)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("mcp: response to %s: %w", m.Method, err)
		}
		if rm.Kind() != jsonrpc.KindResponse || (rm.ID.IsValid() && rm.ID != m.ID) || (!rm.ID.IsValid() && rm.Error == nil) {
			return fmt.Errorf("%w: the JSON body is not the response to request %v", ErrBadResponse, m.ID)
		}
		rm.ID = m.ID // an error response may come with a null id
		t.deliver(rm, nil)
		return nil
	case "text/event-stream":
		t.mu.Lock()
		if t.closed {
			// Close may already be waiting for the goroutines; start none.
			t.mu.Unlock()
			resp.Body.Close()
			release()
			return fmt.Errorf("%w: transport closed", ErrClosed)
		}
		resumable := !t.stateless
		t.wg.Add(1)
		t.mu.Unlock()
		go t.stream(ctx, release, resp.Body, m.ID, resumable)
		return nil
	}
	drainClose(resp.Body)
	release()
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		return fmt.Errorf("%w: %d without a response to request %s", ErrBadResponse, resp.StatusCode, m.Method)
	}
	return fmt.Errorf("%w: content type %q", ErrBadResponse, quote.V(ct))
}

// stream reads the SSE answer to request id until its response arrives.
// When the stream ends first, a session-based server's stream is resumed
// with GET and Last-Event-ID after the retry time (2025-11-25 transports
// "Resumability and Redelivery"; the server may close the connection to
// make the client poll). A stateless server's stream is not resumable
// (2026-07-28 changelog item 9): the request is reported lost.
func (t *HTTPTransport) stream(ctx context.Context, release func(), body io.ReadCloser, id jsonrpc.ID, resumable bool) {
	defer t.wg.Done()
	defer release()
	st := streamState{retry: t.retry}
	misses := 0
	var cause error
	for {
		if body != nil {
			responded, progressed, err := t.consume(body, id, &st)
			body.Close()
			body = nil
			if responded {
				return
			}
			cause = err
			if progressed {
				misses = 0
			} else {
				misses++
			}
		} else {
			misses++
		}
		if ctx.Err() != nil || t.isClosed() {
			return
		}
		if !resumable {
			t.fail(id, fmt.Errorf("%w (%v)", ErrStreamLost, orEOF(cause)))
			return
		}
		if st.lastID == "" {
			t.fail(id, fmt.Errorf("%w: the server gave no event id to resume from (%v)", ErrStreamLost, orEOF(cause)))
			return
		}
		if misses >= t.maxResumes {
			// MaxResumes reconnections in a row brought nothing new.
			t.fail(id, fmt.Errorf("%w: %d reconnections brought nothing (%v)", ErrStreamLost, misses, orEOF(cause)))
			return
		}
		if !sleepCtx(ctx, st.retry) {
			return
		}
		b, err := t.get(ctx, st.lastID)
		if err != nil {
			var he *HTTPStatusError
			if errors.Is(err, ErrSessionExpired) || errors.As(err, &he) && (he.StatusCode == http.StatusMethodNotAllowed || he.StatusCode == http.StatusNotFound) || errors.Is(err, ErrBadResponse) {
				t.fail(id, fmt.Errorf("%w: resuming: %w", ErrStreamLost, err))
				return
			}
			cause = err
			continue
		}
		body = b
	}
}

func orEOF(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}

// streamState carries what survives from one connection of a stream to
// the next: the last event id and the retry time.
type streamState struct {
	lastID string
	retry  time.Duration
}

// consume delivers the messages of one SSE connection. It returns when the
// response to id arrived (responded), or when the connection ended, with
// whether it brought anything new.
func (t *HTTPTransport) consume(body io.Reader, id jsonrpc.ID, st *streamState) (responded, progressed bool, err error) {
	r := sse.NewReader(body, sse.Options{MaxLine: t.max})
	note := func() {
		if lid := r.LastEventID(); lid != "" && lid != st.lastID {
			st.lastID = lid
			progressed = true
		}
		if d, ok := r.Retry(); ok {
			st.retry = min(d, t.maxRetry)
		}
	}
	for {
		ev, err := r.Next()
		note()
		if err != nil {
			return false, progressed, err
		}
		progressed = true
		if ev.Type != "" && ev.Type != "message" {
			continue
		}
		m, derr := jsonrpc.DecodeWith([]byte(ev.Data), jsonrpc.DecodeOptions{MaxMessage: t.max})
		if batch, ok := t.splitBatch(derr); ok {
			for _, bm := range batch {
				t.deliver(bm, nil)
				responded = responded || id.IsValid() && bm.Kind() == jsonrpc.KindResponse && bm.ID == id
			}
			if responded {
				return true, true, nil
			}
			continue
		}
		if derr != nil {
			t.deliver(nil, derr)
			continue
		}
		t.deliver(m, nil)
		if id.IsValid() && m.Kind() == jsonrpc.KindResponse && m.ID == id {
			return true, true, nil
		}
	}
}

// splitBatch takes apart a JSON-RPC batch that decoding refused with err,
// when the server negotiated 2025-03-26: that revision lets a server batch
// the messages of a stream or body and requires the client to accept them
// (2025-03-26 basic/index "Batching", transports "Sending Messages to the
// Server" item 6). Elements that are not valid messages are delivered as
// refused ones. ok is false when err is not such a batch.
func (t *HTTPTransport) splitBatch(err error) (batch []*jsonrpc.Message, ok bool) {
	var de *jsonrpc.DecodeError
	if err == nil || !errors.As(err, &de) || !errors.Is(err, jsonrpc.ErrBatch) {
		return nil, false
	}
	t.mu.Lock()
	version := t.version
	t.mu.Unlock()
	if !batches(version) {
		return nil, false
	}
	items, err := jsonrpc.DecodeBatch(de.Batch, jsonrpc.DecodeOptions{MaxMessage: t.max})
	if err != nil {
		t.deliver(nil, err)
		return nil, true
	}
	for _, it := range items {
		if it.Err != nil {
			t.deliver(nil, it.Err)
			continue
		}
		batch = append(batch, it.Msg)
	}
	return batch, true
}

// get opens a GET stream (2025-11-25 transports "Listening for Messages
// from the Server"), resuming after lastID when it is set.
func (t *HTTPTransport) get(ctx context.Context, lastID string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.url, nil)
	if err != nil {
		return nil, &TransportError{Op: "GET", Err: err}
	}
	t.mu.Lock()
	session, version := t.session, t.version
	t.mu.Unlock()
	h := req.Header
	for k, v := range t.header {
		h[k] = v
	}
	h.Set("Accept", "text/event-stream")
	if versionHeader(version) {
		h.Set("MCP-Protocol-Version", version)
	}
	if session != "" {
		h.Set("Mcp-Session-Id", session)
	}
	if lastID != "" {
		h.Set("Last-Event-ID", lastID)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, &TransportError{Op: "GET", Err: unwrapURLError(err)}
	}
	switch ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); {
	case resp.StatusCode == http.StatusNotFound && session != "":
		drainClose(resp.Body)
		return nil, ErrSessionExpired
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		drainClose(resp.Body)
		return nil, &HTTPStatusError{Method: http.MethodGet, StatusCode: resp.StatusCode, Authenticate: resp.Header.Values("WWW-Authenticate")}
	case ct != "text/event-stream":
		drainClose(resp.Body)
		return nil, fmt.Errorf("%w: GET answered with content type %q", ErrBadResponse, quote.V(ct))
	}
	return resp.Body, nil
}

// listen keeps the optional GET stream open for the server's own requests
// and notifications (e.g. notifications/tools/list_changed), reconnecting
// after the server's retry time or with a backoff, and giving up when the
// server offers no stream (405), ends the session (404) or keeps failing.
func (t *HTTPTransport) listen(ctx context.Context, opened chan struct{}) {
	defer t.wg.Done()
	st := streamState{}
	failures := 0
	for {
		body, err := t.get(ctx, st.lastID)
		if opened != nil {
			close(opened)
			opened = nil
		}
		if err == nil {
			_, progressed, _ := t.consume(body, jsonrpc.ID{}, &st)
			body.Close()
			if progressed {
				failures = 0
			} else {
				failures++
			}
		} else {
			var he *HTTPStatusError
			if ctx.Err() != nil || errors.Is(err, ErrSessionExpired) || errors.As(err, &he) && he.StatusCode == http.StatusMethodNotAllowed {
				return
			}
			failures++
		}
		if ctx.Err() != nil || failures > t.maxResumes {
			return
		}
		delay := st.retry
		if delay == 0 {
			delay = min(t.retry<<min(failures, 5), 30*time.Second)
		}
		if !sleepCtx(ctx, delay) {
			return
		}
	}
}

func (t *HTTPTransport) isClosed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// Close ends every open request and stream and, for a session-based
// server, ends the session with DELETE (2025-11-25 transports "Session
// Management"; a 405 answer is fine). It waits for the transport's
// goroutines and is idempotent.
func (t *HTTPTransport) Close() error {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.closed = true
		session, version, stateless := t.session, t.version, t.stateless
		t.mu.Unlock()
		t.cancel()
		t.wg.Wait()
		if session == "" || stateless {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, t.url, nil)
		if err != nil {
			return
		}
		for k, v := range t.header {
			req.Header[k] = v
		}
		req.Header.Set("Mcp-Session-Id", session)
		if versionHeader(version) {
			req.Header.Set("MCP-Protocol-Version", version)
		}
		if resp, err := t.client.Do(req); err == nil {
			drainClose(resp.Body)
		}
	})
	return nil
}

func reservedHeader(name string) bool {
	switch k := http.CanonicalHeaderKey(name); k {
	case "Content-Type", "Accept", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id", "Mcp-Method", "Mcp-Name":
		return true
	default:
		return strings.HasPrefix(k, "Mcp-Param-")
	}
}

// validSessionID: "The session ID MUST only contain visible ASCII
// characters (ranging from 0x21 to 0x7E)"; the length bound is ours.
func validSessionID(s string) bool {
	if len(s) == 0 || len(s) > 1024 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7E {
			return false
		}
	}
	return true
}

func drainClose(body io.ReadCloser) {
	io.Copy(io.Discard, io.LimitReader(body, 4<<10)) //nolint:errcheck // only to reuse the connection
	body.Close()
}

// unwrapURLError drops the URL that net/http puts into its errors: it may
// carry credentials, and the caller names the server itself.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// headerValue encodes a value for Mcp-Name or Mcp-Param-*: as it is when it
// is plain visible ASCII (spaces and tabs inside allowed), else the base64
// sentinel form =?base64?...?= of its UTF-8 bytes (2026-07-28
// streamable-http "Value Encoding"). A plain value that looks like the
// sentinel is encoded too.
func headerValue(s string) string {
	plain := s != "" && s[0] != ' ' && s[0] != '\t' && s[len(s)-1] != ' ' && s[len(s)-1] != '\t'
	for i := 0; plain && i < len(s); i++ {
		c := s[i]
		plain = c == ' ' || c == '\t' || (c >= 0x21 && c <= 0x7E)
	}
	if plain && !(len(s) >= len("=?base64?")+len("?=") && s[:9] == "=?base64?" && s[len(s)-2:] == "?=") {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}
