package mcp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"agent/internal/sse"
	"agent/mcp/jsonrpc"
)

// Defaults of HTTPServeOptions (docs/reference/mcp.md, "Loopback HTTP
// mode", fixes the body limit).
const (
	DefaultServeMaxBody     = 1 << 20
	DefaultServeSessionIdle = 30 * time.Minute
	DefaultServeMaxSessions = 256
	DefaultServeKeepAlive   = 15 * time.Second
)

// Refusal is an HTTP refusal: a status, headers (a WWW-Authenticate
// challenge, Retry-After) and an empty body (docs/reference/mcp.md,
// "Loopback HTTP mode": refusals have empty bodies).
type Refusal struct {
	Status int
	Header http.Header
}

// Authenticator admits or refuses a request to the MCP endpoint from its
// headers alone: it runs before the body is read (docs/reference/mcp.md,
// "Loopback HTTP mode"). Admit may be called concurrently; it returns nil
// to admit.
type Authenticator interface {
	Admit(r *http.Request) *Refusal
}

// HTTPServeOptions configures Server.HTTPHandler. The zero value serves
// /mcp to every Host and Origin without authentication (for tests); the
// serve command always sets Hosts, Origins and Auth.
type HTTPServeOptions struct {
	// Path is the MCP endpoint; "" means "/mcp". Other paths get 404.
	Path string
	// Hosts lists the accepted Host header values (compared without
	// regard to case); nil accepts any. Origins lists the accepted Origin
	// values when a request has one; nil accepts any. Both are checked
	// first, on every path, against DNS rebinding (2025-11-25 transports
	// "Security Warning": 403 for an invalid Origin).
	Hosts   []string
	Origins []string
	// Auth admits requests to the endpoint; nil admits all.
	Auth Authenticator
	// MetadataPath, when set, is served by Metadata without
	// authentication (RFC 9728 protected-resource metadata).
	MetadataPath string
	Metadata     http.Handler
	// MaxBody bounds a request body (413 above); 0 means 1 MiB.
	MaxBody int64
	// SessionIdle ends a session-based client's session after this long
	// without a request (its next request gets 404, 2025-11-25
	// transports "Session Management"); 0 means 30 min.
	SessionIdle time.Duration
	// MaxSessions bounds the live sessions; when full, the one idle the
	// longest is ended. 0 means 256.
	MaxSessions int
	// KeepAlive is the interval of SSE comments on a long tools/call
	// stream, so that proxies do not cut an idle turn; 0 means 15 s.
	KeepAlive time.Duration
	// ReplayWindow is how long a session's finished SSE answer can still
	// be resumed with Last-Event-ID (server_resume.go); 0 means 2 min.
	ReplayWindow time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// HTTPHandler is the Streamable HTTP transport of the server (2025-03-26,
// 2025-06-18 and 2025-11-25 basic/transports "Streamable HTTP"; 2026-07-28
// basic/transports/streamable-http). A session that negotiated 2024-11-05
// is served by the rules of 2025-03-26, the first revision of this
// transport (the HTTP+SSE transport of 2024-11-05 is not offered). The
// MCP-Protocol-Version header is optional in a session (the revisions
// before 2025-06-18 do not send it, and the session knows its revision),
// but one that names another revision is refused with 400. A JSON-RPC
// batch is accepted only in a session of 2025-03-26 (batchInSession).
// Close ends every running call.
type HTTPHandler struct {
	srv  *Server
	opts HTTPServeOptions

	ctx    context.Context // ends running calls on Close
	cancel context.CancelFunc
	calls  sync.WaitGroup // the calls of resumable streams, which outlive their request

	mu       sync.Mutex
	sessions map[string]*serveSession
	closed   bool // set by Close: no stream call joins calls after it (its Wait)
}

// serveSession is one session of a session-based client. Its context
// ends with the session (DELETE, expiry, eviction) and with the handler;
// the calls of its streams run under it.
type serveSession struct {
	conn       serverConn
	ctx        context.Context
	cancel     context.CancelFunc
	lastUsed   time.Time
	active     int                               // requests and stream calls running
	calls      map[jsonrpc.ID]context.CancelFunc // for notifications/cancelled
	streams    map[int]*eventStream              // resumable answers, by number
	nextStream int
}

func (h *HTTPHandler) newSession() *serveSession {
	s := &serveSession{calls: map[jsonrpc.ID]context.CancelFunc{}, streams: map[int]*eventStream{}}
	s.ctx, s.cancel = context.WithCancel(h.ctx)
	return s
}

// endLocked removes a session and cancels what runs in it.
func (h *HTTPHandler) endLocked(id string) {
	if s := h.sessions[id]; s != nil {
		s.cancel()
		delete(h.sessions, id)
	}
}

// HTTPHandler returns the transport for s.
func (s *Server) HTTPHandler(opts HTTPServeOptions) *HTTPHandler {
	if opts.Path == "" {
		opts.Path = "/mcp"
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultServeMaxBody
	}
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = DefaultServeSessionIdle
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultServeMaxSessions
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = DefaultServeKeepAlive
	}
	if opts.ReplayWindow <= 0 {
		opts.ReplayWindow = DefaultReplayWindow
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	h := &HTTPHandler{srv: s, opts: opts, sessions: map[string]*serveSession{}}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	return h
}

// Close cancels every running call (their answers go out as errors, or
// not at all when the client is gone). Idempotent.
func (h *HTTPHandler) Close() error {
	// The HTTP server may still take requests: a stream started from now
	// on runs its calls (cancelled at once) without joining calls, whose
	// Add must not race the Wait below.
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.cancel()
	// The calls of resumable streams run apart from their request, which
	// the HTTP server's shutdown waits for: wait for them here (they have
	// been cancelled), a while at the most.
	done := make(chan struct{})
	go func() {
		h.calls.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(closeWait):
	}
	return nil
}

// closeWait bounds how long Close waits for cancelled calls to return.
const closeWait = 5 * time.Second

// Sessions returns the number of live sessions (for tests and status).
func (h *HTTPHandler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

func refuse(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(status)
}

func oneOf(v string, allowed []string) bool {
	for _, a := range allowed {
		if strings.EqualFold(v, a) {
			return true
		}
	}
	return false
}

// ServeHTTP checks Host and Origin, routes, authenticates, and only then
// reads the body.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.opts.Hosts != nil && !oneOf(r.Host, h.opts.Hosts) {
		refuse(w, http.StatusForbidden)
		return
	}
	if origin := r.Header.Values("Origin"); h.opts.Origins != nil && len(origin) > 0 && (len(origin) > 1 || !oneOf(origin[0], h.opts.Origins)) {
		refuse(w, http.StatusForbidden)
		return
	}
	if h.opts.MetadataPath != "" && r.URL.Path == h.opts.MetadataPath && h.opts.Metadata != nil {
		h.opts.Metadata.ServeHTTP(w, r)
		return
	}
	if r.URL.Path != h.opts.Path {
		refuse(w, http.StatusNotFound)
		return
	}
	if h.opts.Auth != nil {
		if ref := h.opts.Auth.Admit(r); ref != nil {
			for k, v := range ref.Header {
				w.Header()[k] = v
			}
			refuse(w, ref.Status)
			return
		}
	}
	switch {
	case r.Method == http.MethodPost:
		h.post(w, r)
	case r.Method == http.MethodDelete:
		h.delete(w, r)
	case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "":
		h.resume(w, r, r.Header.Get("Last-Event-ID"))
	default:
		// A GET without Last-Event-ID would open a stream for messages
		// the server starts; this server starts none, which the transport
		// allows to say with 405 (2025-11-25 "Listening for Messages from
		// the Server"). GET with Last-Event-ID resumes an answer.
		w.Header().Set("Allow", "GET, POST, DELETE")
		refuse(w, http.StatusMethodNotAllowed)
	}
}

func (h *HTTPHandler) delete(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		refuse(w, http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	_, ok := h.sessions[sid]
	h.endLocked(sid)
	h.mu.Unlock()
	if !ok {
		refuse(w, http.StatusNotFound)
		return
	}
	refuse(w, http.StatusNoContent)
}

// accepts reports whether the Accept header allows JSON (absent, */*,
// application/* or application/json); streams reports whether it allows
// an event stream.
func acceptance(r *http.Request) (json, stream bool) {
	vals := r.Header.Values("Accept")
	if len(vals) == 0 {
		return true, false
	}
	for _, v := range vals {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			switch mt {
			case "*/*":
				json, stream = true, true
			case "application/*", "application/json":
				json = true
			case "text/*", "text/event-stream":
				stream = true
			}
		}
	}
	return json, stream
}

func (h *HTTPHandler) post(w http.ResponseWriter, r *http.Request) {
	if ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/json" {
		refuse(w, http.StatusUnsupportedMediaType)
		return
	}
	okJSON, okStream := acceptance(r)
	if !okJSON && !okStream {
		refuse(w, http.StatusNotAcceptable)
		return
	}
	if r.ContentLength > h.opts.MaxBody {
		refuse(w, http.StatusRequestEntityTooLarge)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			refuse(w, http.StatusRequestEntityTooLarge)
			return
		}
		refuse(w, http.StatusBadRequest)
		return
	}
	hv := strings.TrimSpace(r.Header.Get("Mcp-Protocol-Version"))
	m, err := jsonrpc.DecodeWith(body, jsonrpc.DecodeOptions{MaxMessage: int(h.opts.MaxBody)})
	if err != nil {
		var de *jsonrpc.DecodeError
		id := jsonrpc.ID{}
		code := int64(jsonrpc.CodeParseError)
		if errors.As(err, &de) {
			id, code = de.ID, de.Code()
		}
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" && errors.Is(err, jsonrpc.ErrBatch) {
			h.batchInSession(w, r, sid, hv, de.Batch, okStream)
			return
		}
		h.writeJSON(w, http.StatusBadRequest, jsonrpc.NewErrorResponse(id, &jsonrpc.Error{Code: code, Message: err.Error()}))
		return
	}
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		h.inSession(w, r, sid, hv, m, okStream)
		return
	}
	switch {
	case isStatelessRequest(m, hv):
		h.stateless(w, r, hv, m, okStream)
	case m.Kind() == jsonrpc.KindRequest && m.Method == "initialize":
		h.startSession(w, r, m)
	case m.Kind() != jsonrpc.KindRequest && hv != "" && modern(hv):
		// A stateless client's notification (cancellation is closing
		// the stream) or a stray response: nothing to do.
		refuse(w, http.StatusAccepted)
	default:
		id := m.ID
		h.writeJSON(w, http.StatusBadRequest, jsonrpc.NewErrorResponse(id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "Bad Request: send initialize first (no Mcp-Session-Id), or use revision " + Version20260728 + " with _meta"}))
	}
}

// callContext ends when the client goes away or the handler closes.
func (h *HTTPHandler) callContext(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(h.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

func newSessionID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// startSession runs initialize and, when it succeeds, starts the session
// whose id goes out in Mcp-Session-Id.
func (h *HTTPHandler) startSession(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
	sess := h.newSession()
	res, err := h.srv.handleLegacy(r.Context(), &sess.conn, m)
	if err != nil {
		sess.cancel()
		h.writeJSON(w, http.StatusOK, serveResponse(m.ID, nil, err))
		return
	}
	sid := newSessionID()
	now := h.opts.Now()
	sess.lastUsed = now
	h.mu.Lock()
	h.sweepLocked(now)
	if len(h.sessions) >= h.opts.MaxSessions {
		h.evictLocked()
	}
	h.sessions[sid] = sess
	h.mu.Unlock()
	w.Header().Set("Mcp-Session-Id", sid)
	h.writeJSON(w, http.StatusOK, serveResponse(m.ID, res, nil))
}

// sweepLocked ends the sessions idle longer than SessionIdle.
func (h *HTTPHandler) sweepLocked(now time.Time) {
	for id, s := range h.sessions {
		if s.active == 0 && now.Sub(s.lastUsed) > h.opts.SessionIdle {
			h.endLocked(id)
		}
	}
}

// evictLocked ends the session idle the longest (one with no running
// request when there is one).
func (h *HTTPHandler) evictLocked() {
	var oldest string
	var at time.Time
	for id, s := range h.sessions {
		if s.active > 0 {
			continue
		}
		if oldest == "" || s.lastUsed.Before(at) {
			oldest, at = id, s.lastUsed
		}
	}
	if oldest != "" {
		h.endLocked(oldest)
	}
}

// acquire finds a live session and marks a request running in it.
func (h *HTTPHandler) acquire(sid string) *serveSession {
	now := h.opts.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessions[sid]
	if s == nil {
		return nil
	}
	if s.active == 0 && now.Sub(s.lastUsed) > h.opts.SessionIdle {
		h.endLocked(sid)
		return nil
	}
	s.active++
	s.lastUsed = now
	return s
}

func (h *HTTPHandler) release(s *serveSession) {
	now := h.opts.Now()
	h.mu.Lock()
	s.active--
	s.lastUsed = now
	h.mu.Unlock()
}

func (h *HTTPHandler) inSession(w http.ResponseWriter, r *http.Request, sid, hv string, m *jsonrpc.Message, okStream bool) {
	s := h.acquire(sid)
	if s == nil {
		// An unknown or expired session: 404 tells the client to
		// initialize again (2025-11-25 "Session Management" item 3).
		refuse(w, http.StatusNotFound)
		return
	}
	defer h.release(s)
	if v := s.conn.negotiated(); !h.sessionHeader(hv, v) {
		h.writeJSON(w, http.StatusBadRequest, jsonrpc.NewErrorResponse(m.ID, badProtocolHeader(hv, v)))
		return
	}
	switch m.Kind() {
	case jsonrpc.KindNotification:
		h.sessionNotification(r.Context(), s, m)
		refuse(w, http.StatusAccepted)
		return
	case jsonrpc.KindResponse:
		refuse(w, http.StatusAccepted) // the server sends no requests
		return
	}
	run := func(ctx context.Context, m *jsonrpc.Message) (any, error) { return h.srv.handleLegacy(ctx, &s.conn, m) }
	if fl, canFlush := w.(http.Flusher); m.Method == "tools/call" && okStream && canFlush {
		// A resumable stream: the call runs on its own, and the
		// connection only carries its events (server_resume.go).
		h.follow(r.Context(), w, fl, h.startStream(s, []*jsonrpc.Message{m}, nil, run), -1)
		return
	}
	ctx, cancel := h.callContext(r)
	defer cancel()
	h.mu.Lock()
	s.calls[m.ID] = cancel
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(s.calls, m.ID)
		h.mu.Unlock()
	}()
	h.answer(w, ctx, m, false, http.StatusOK, func(ctx context.Context) (any, error) { return run(ctx, m) })
}

// sessionNotification takes a notification of a session-based client.
func (h *HTTPHandler) sessionNotification(ctx context.Context, s *serveSession, m *jsonrpc.Message) {
	if m.Method == "notifications/cancelled" {
		var p cancelledParams
		if json.Unmarshal(m.Params, &p) == nil {
			h.mu.Lock()
			cancel := s.calls[p.RequestID]
			h.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
		return
	}
	h.srv.handleLegacy(ctx, &s.conn, m) //nolint:errcheck // notifications have no answer
}

// batchInSession serves a JSON-RPC batch in a session. Only 2025-03-26 has
// batches, and it requires the receiver to accept them (basic/index
// "Batching"); any other revision gets the refusal a batch got before
// (400, an error response without id). The answer follows 2025-03-26
// transports "Sending Messages to the Server": notifications and
// responses only get 202 Accepted and no body; with requests, an SSE
// stream that carries one response per request (the choice for a batch
// with a tools/call, which may run for minutes, when the client accepts a
// stream), else one JSON array of the responses (JSON-RPC 2.0 §6).
// Elements that are not valid messages, and requests whose id is in use,
// are answered with error responses among them; a batch of only those is
// refused with 400 and that array.
func (h *HTTPHandler) batchInSession(w http.ResponseWriter, r *http.Request, sid, hv string, raw []byte, okStream bool) {
	s := h.acquire(sid)
	if s == nil {
		refuse(w, http.StatusNotFound)
		return
	}
	defer h.release(s)
	v := s.conn.negotiated()
	if !h.sessionHeader(hv, v) {
		h.writeJSON(w, http.StatusBadRequest, jsonrpc.NewErrorResponse(jsonrpc.ID{}, badProtocolHeader(hv, v)))
		return
	}
	if !batches(v) {
		h.writeJSON(w, http.StatusBadRequest, jsonrpc.NewErrorResponse(jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: jsonrpc.ErrBatch.Error()}))
		return
	}
	items, err := jsonrpc.DecodeBatch(raw, jsonrpc.DecodeOptions{MaxMessage: int(h.opts.MaxBody)})
	if err != nil {
		var de *jsonrpc.DecodeError
		code := int64(jsonrpc.CodeInvalidRequest)
		if errors.As(err, &de) {
			code = de.Code()
		}
		h.writeJSON(w, http.StatusBadRequest, jsonrpc.NewErrorResponse(jsonrpc.ID{}, &jsonrpc.Error{Code: code, Message: err.Error()}))
		return
	}
	var reqs, refused []*jsonrpc.Message
	seen := map[jsonrpc.ID]bool{}
	for _, it := range items {
		if it.Err != nil {
			var de *jsonrpc.DecodeError
			if errors.As(it.Err, &de) && !de.Response {
				refused = append(refused, jsonrpc.NewErrorResponse(de.ID, &jsonrpc.Error{Code: de.Code(), Message: de.Error()}))
			}
			continue
		}
		m := it.Msg
		switch m.Kind() {
		case jsonrpc.KindNotification:
			h.sessionNotification(r.Context(), s, m)
		case jsonrpc.KindRequest:
			h.mu.Lock()
			_, running := s.calls[m.ID]
			h.mu.Unlock()
			if running || seen[m.ID] {
				refused = append(refused, jsonrpc.NewErrorResponse(m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "request id " + m.ID.String() + " is already in use"}))
				continue
			}
			seen[m.ID] = true
			reqs = append(reqs, m)
		}
	}
	switch {
	case len(reqs) == 0 && len(refused) == 0:
		refuse(w, http.StatusAccepted)
		return
	case len(reqs) == 0:
		h.writeBatch(w, http.StatusBadRequest, refused)
		return
	}
	fl, canFlush := w.(http.Flusher)
	long := slices.ContainsFunc(reqs, func(m *jsonrpc.Message) bool { return m.Method == "tools/call" })
	if long && okStream && canFlush {
		h.follow(r.Context(), w, fl, h.startStream(s, reqs, refused, func(ctx context.Context, m *jsonrpc.Message) (any, error) {
			return h.srv.handleLegacy(ctx, &s.conn, m)
		}), -1)
		return
	}
	ctx, cancel := h.callContext(r)
	defer cancel()
	run := func(ctx context.Context, m *jsonrpc.Message) (any, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		h.mu.Lock()
		s.calls[m.ID] = cancel
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			delete(s.calls, m.ID)
			h.mu.Unlock()
		}()
		return h.srv.handleLegacy(ctx, &s.conn, m)
	}
	out := make([]*jsonrpc.Message, len(reqs))
	var wg sync.WaitGroup
	for i, m := range reqs {
		wg.Go(func() {
			res, err := run(ctx, m)
			out[i] = serveResponse(m.ID, res, err)
		})
	}
	wg.Wait()
	if ctx.Err() != nil && h.ctx.Err() == nil {
		return // the client went away
	}
	h.writeBatch(w, http.StatusOK, append(refused, out...))
}

// stateless serves a request of 2026-07-28: the standard headers must
// agree with the body (streamable-http "Server Validation"), and errors
// get the statuses of that revision.
func (h *HTTPHandler) stateless(w http.ResponseWriter, r *http.Request, hv string, m *jsonrpc.Message, okStream bool) {
	// The order of the refusals: the required _meta keys (-32602), then
	// the headers against the body (-32020), then the revision (-32022),
	// so that a header that disagrees with _meta is reported as such.
	v, err := statelessVersion(m)
	if err == nil {
		err = checkStandardHeaders(r, hv, m)
	}
	if err == nil {
		err = h.srv.servesStateless(v)
	}
	if err != nil {
		h.writeJSON(w, http.StatusBadRequest, serveResponse(m.ID, nil, err))
		return
	}
	ctx, cancel := h.callContext(r)
	defer cancel()
	h.answer(w, ctx, m, okStream, 0, func(ctx context.Context) (any, error) {
		return h.srv.handleStateless(ctx, m)
	})
}

// checkStandardHeaders compares MCP-Protocol-Version, Mcp-Method and, for
// tools/call, Mcp-Name with the body (2026-07-28 streamable-http
// "Standard Request Headers"): names case-insensitive, values exact after
// trimming optional white space, Mcp-Name possibly in the base64 form.
func checkStandardHeaders(r *http.Request, hv string, m *jsonrpc.Message) error {
	meta, _ := parseStatelessMeta(m.Params)
	mismatch := func(msg string) error {
		return &jsonrpc.Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + msg}
	}
	if hv != meta.version {
		return mismatch("MCP-Protocol-Version does not match _meta")
	}
	if got := strings.TrimSpace(r.Header.Get("Mcp-Method")); got != m.Method {
		return mismatch("Mcp-Method does not match the method")
	}
	if m.Method == "tools/call" {
		p, err := parseCallParams(m.Params)
		if err != nil {
			return err
		}
		name, ok := decodeParamHeader(strings.TrimSpace(r.Header.Get("Mcp-Name")))
		if !ok || name != p.Name {
			return mismatch("Mcp-Name does not match params.name")
		}
	}
	return nil
}

// decodeParamHeader reverses headerValue: the =?base64?...?= form holds
// the UTF-8 bytes in standard base64; anything else is literal.
func decodeParamHeader(v string) (string, bool) {
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		b, err := base64.StdEncoding.Strict().DecodeString(v[len("=?base64?") : len(v)-2])
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	return v, true
}

// errorStatus is the HTTP status of a stateless error response
// (2026-07-28 streamable-http "Error Handling"): 404 for an unknown
// method, 400 for the protocol-level refusals, else 200.
func errorStatus(err error) int {
	var e *jsonrpc.Error
	if !errors.As(err, &e) {
		return http.StatusOK
	}
	switch e.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, CodeUnsupportedProtocolVersion, CodeHeaderMismatch, CodeMissingRequiredClientCapability:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// answer runs one request and writes its response: an SSE stream for a
// tools/call when the client accepts one (a turn may take minutes; the
// stream carries keep-alive comments meanwhile), JSON otherwise. status 0
// chooses the stateless revision's status by the error.
func (h *HTTPHandler) answer(w http.ResponseWriter, ctx context.Context, m *jsonrpc.Message, okStream bool, status int, run func(context.Context) (any, error)) {
	fl, canFlush := w.(http.Flusher)
	if m.Method == "tools/call" && okStream && canFlush {
		h.stream(ctx, w, fl, []*jsonrpc.Message{m}, nil, func(ctx context.Context, _ *jsonrpc.Message) (any, error) { return run(ctx) })
		return
	}
	res, err := run(ctx)
	if ctx.Err() != nil && h.ctx.Err() == nil && err != nil {
		return // the client went away
	}
	st := status
	if st == 0 {
		st = http.StatusOK
		if err != nil {
			st = errorStatus(err)
		}
	}
	h.writeJSON(w, st, serveResponse(m.ID, res, err))
}

// stream runs reqs, each on its own goroutine, and answers them on one SSE
// stream: first the responses in first (refusals that needed no handler),
// then each request's progress notifications and its response as they
// come, with keep-alive comments meanwhile; it returns when every request
// has returned.
func (h *HTTPHandler) stream(ctx context.Context, w http.ResponseWriter, fl http.Flusher, reqs, first []*jsonrpc.Message, run func(context.Context, *jsonrpc.Message) (any, error)) {
	type outcome struct {
		id  jsonrpc.ID
		res any
		err error
	}
	done := make(chan outcome, len(reqs))
	notes := make(chan []byte, maxProgressQueue)
	nctx := withNotifier(ctx, func(method string, params any) {
		m, err := jsonrpc.NewNotification(method, params)
		if err != nil {
			return
		}
		b, err := jsonrpc.Encode(m)
		if err != nil {
			return
		}
		select {
		case notes <- b:
		case <-ctx.Done():
		}
	})
	for _, m := range reqs {
		go func() {
			res, err := run(nctx, m)
			done <- outcome{m.ID, res, err}
		}()
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for _, m := range first {
		if b, err := jsonrpc.Encode(m); err == nil {
			sse.Write(w, sse.Event{Data: string(b)}) //nolint:errcheck // as below
		}
	}
	fl.Flush()
	tick := time.NewTicker(h.opts.KeepAlive)
	defer tick.Stop()
	for left := len(reqs); left > 0; {
		select {
		case o := <-done:
			left--
			// Reports made before the answer go before it.
			for len(notes) > 0 {
				sse.Write(w, sse.Event{Data: string(<-notes)}) //nolint:errcheck // as below
			}
			b, err := jsonrpc.Encode(serveResponse(o.id, o.res, o.err))
			if err != nil {
				continue
			}
			sse.Write(w, sse.Event{Data: string(b)}) //nolint:errcheck // a client that went away reads nothing
			fl.Flush()
		case b := <-notes:
			sse.Write(w, sse.Event{Data: string(b)}) //nolint:errcheck // a client that went away reads nothing
			fl.Flush()
		case <-tick.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				// ctx has ended with the connection; wait for the calls.
				for ; left > 0; left-- {
					<-done
				}
				return
			}
			fl.Flush()
		}
	}
}

// serveResponse builds the response to id: err as a JSON-RPC error (a
// *jsonrpc.Error as it is, anything else as an internal error without its
// text).
func serveResponse(id jsonrpc.ID, res any, err error) *jsonrpc.Message {
	if err != nil {
		var e *jsonrpc.Error
		if !errors.As(err, &e) {
			e = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
		}
		return jsonrpc.NewErrorResponse(id, e)
	}
	resp, merr := jsonrpc.NewResponse(id, res)
	if merr != nil {
		return jsonrpc.NewErrorResponse(id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"})
	}
	return resp
}

// writeBatch writes ms as one JSON array (JSON-RPC 2.0 §6).
func (h *HTTPHandler) writeBatch(w http.ResponseWriter, status int, ms []*jsonrpc.Message) {
	b, err := jsonrpc.AppendBatch(nil, ms)
	if err != nil {
		refuse(w, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b) //nolint:errcheck // a client that went away reads nothing
}

func (h *HTTPHandler) writeJSON(w http.ResponseWriter, status int, m *jsonrpc.Message) {
	b, err := jsonrpc.Encode(m)
	if err != nil {
		refuse(w, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b) //nolint:errcheck // a client that went away reads nothing
}
