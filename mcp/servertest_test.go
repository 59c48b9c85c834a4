package mcp

// An in-memory MCP server for the client's tests: it speaks the
// session-based revisions (initialize) and the stateless one (per-request
// _meta, server/discover), over a jsonrpc.Stream (in-memory pipes, or a
// child process's stdio) and over Streamable HTTP (httptest), with the
// behaviours the client must cope with: sessions and 404 after expiry, SSE
// responses, a stream closed after its priming event and resumed with
// Last-Event-ID, the GET stream, header checks, pagination, progress and
// cancellation.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"agent/internal/sse"
	"agent/mcp/jsonrpc"
)

type fakeConfig struct {
	versions    []string // supported revisions; nil: all three
	pageSize    int      // tools per tools/list page; 0: all at once
	listChanged bool     // declare tools.listChanged
	// content declares resources and prompts (with listChanged as above)
	// and serves the fixed ones of contentRequest.
	content    bool
	extraTools []string // raw tool definitions appended to the standard ones
	// failPage2 answers the second page of resources/list with an error.
	failPage2 bool

	// Legacy servers and server/discover: "" answers method not found,
	// "silent" never answers, "empty" answers an empty result.
	legacyProbe string

	// HTTP behaviour.
	sse         bool          // answer requests with SSE instead of JSON
	dropPrimed  bool          // tools/call: send the priming event, close, answer on resume
	retry       time.Duration // retry field of priming events
	noSessions  bool          // legacy HTTP without Mcp-Session-Id
	noGet       bool          // answer GET without Last-Event-ID with 405
	noResumeIDs bool          // dropPrimed without an event id (cannot resume)
	// initVersion overrides the version initialize answers with.
	initVersion string
	// batch sends the server's messages as JSON-RPC batches, as a server
	// of 2025-03-26 may: JSON answers and stdio lines as one-element
	// arrays, an SSE answer as one event holding the request's
	// notifications and its response.
	batch bool
	// dropGet closes the listening GET stream after one event with an id
	// and the retry field; a GET that resumes it listens again.
	dropGet bool
	// stallResume answers a GET that resumes a tools/call stream with an
	// empty stream that ends at once (nothing new, ever).
	stallResume bool
	// rejectNext refuses that many stateless requests with
	// UnsupportedProtocolVersion although their version is supported.
	rejectNext int
}

type fakeServer struct {
	cfg fakeConfig

	mu        sync.Mutex
	log       []string          // "method" or "method name" per request and notification
	version   string            // negotiated on the stream (stdio), once initialized
	chosen    string            // answered to initialize on the stream
	getTimes  []time.Time       // when each GET arrived
	delHeader http.Header       // of the last DELETE
	headers   []http.Header     // per HTTP POST
	cancelled []string          // requestIds of notifications/cancelled
	stopped   []string          // tools whose run ended by cancellation
	sessions  map[string]string // session id → negotiated version
	nextSess  int
	listeners map[chan *jsonrpc.Message]bool // GET streams
	pending   map[string]chan *jsonrpc.Message
	gets      []string // Last-Event-ID of each GET ("" for none)
	deletes   int
	extra     []json.RawMessage // tools added at run time
}

func newFakeServer(cfg fakeConfig) *fakeServer {
	if cfg.versions == nil {
		cfg.versions = SupportedVersions()
	}
	return &fakeServer{
		cfg:       cfg,
		sessions:  map[string]string{},
		listeners: map[chan *jsonrpc.Message]bool{},
		pending:   map[string]chan *jsonrpc.Message{},
	}
}

func (s *fakeServer) record(entry string) {
	s.mu.Lock()
	s.log = append(s.log, entry)
	s.mu.Unlock()
}

func (s *fakeServer) methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

func (s *fakeServer) supports(v string) bool {
	for _, x := range s.cfg.versions {
		if x == v {
			return true
		}
	}
	return false
}

// stateless reports whether the server speaks a stateless revision (and so
// implements server/discover).
func (s *fakeServer) stateless() bool {
	for _, v := range s.cfg.versions {
		if modern(v) {
			return true
		}
	}
	return false
}

func (s *fakeServer) legacyVersions() []string {
	var out []string
	for _, v := range s.cfg.versions {
		if !modern(v) {
			out = append(out, v)
		}
	}
	return out
}

const fakeSchema = `{"type":"object","properties":{"text":{"type":"string"}}}`

func (s *fakeServer) toolList() []json.RawMessage {
	tools := []json.RawMessage{
		json.RawMessage(`{"name":"echo","description":"Echoes text","inputSchema":` + fakeSchema + `}`),
		json.RawMessage(`{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}}`),
		json.RawMessage(`{"name":"progress","inputSchema":{"type":"object","properties":{"steps":{"type":"integer"}}}}`),
		json.RawMessage(`{"name":"block","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"fail","inputSchema":{"type":"object"}}`),
	}
	for _, t := range s.cfg.extraTools {
		tools = append(tools, json.RawMessage(t))
	}
	s.mu.Lock()
	tools = append(tools, s.extra...)
	s.mu.Unlock()
	return tools
}

// addTool adds a tool; the caller announces it with list_changed.
func (s *fakeServer) addTool(def string) {
	s.mu.Lock()
	s.extra = append(s.extra, json.RawMessage(def))
	s.mu.Unlock()
}

type rpcErr = jsonrpc.Error

// request handles one request. notify sends a notification related to it
// (progress); ctx ends when the client cancels.
func (s *fakeServer) request(ctx context.Context, m *jsonrpc.Message, stateless bool, notify func(*jsonrpc.Message)) (any, error) {
	var p struct {
		Name      string          `json:"name"`
		Cursor    string          `json:"cursor"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      struct {
			ProgressToken      json.RawMessage `json:"progressToken"`
			ProtocolVersion    string          `json:"io.modelcontextprotocol/protocolVersion"`
			ClientCapabilities json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
		// initialize
		ProtocolVersion string `json:"protocolVersion"`
	}
	if m.Params != nil {
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return nil, &rpcErr{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
	}
	if m.Method == "tools/call" {
		s.record(m.Method + " " + p.Name)
	} else {
		s.record(m.Method)
	}
	complete := func(r map[string]any) map[string]any {
		if stateless {
			r["resultType"] = "complete"
		}
		return r
	}
	if stateless {
		v := p.Meta.ProtocolVersion
		if p.Meta.ClientCapabilities == nil || v == "" {
			return nil, &rpcErr{Code: jsonrpc.CodeInvalidParams, Message: "missing _meta keys"}
		}
		s.mu.Lock()
		reject := s.cfg.rejectNext > 0
		if reject {
			s.cfg.rejectNext--
		}
		s.mu.Unlock()
		if !s.supports(v) || reject {
			data, _ := json.Marshal(map[string]any{"supported": s.cfg.versions, "requested": v})
			return nil, &rpcErr{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version", Data: data}
		}
	}
	if s.cfg.content && (strings.HasPrefix(m.Method, "resources/") || strings.HasPrefix(m.Method, "prompts/")) {
		r, err := s.contentRequest(m.Method, p.Cursor, m.Params)
		if err != nil {
			return nil, err
		}
		return complete(r), nil
	}
	switch m.Method {
	case "server/discover":
		return complete(map[string]any{
			"supportedVersions": s.cfg.versions,
			"capabilities":      s.capabilities(),
			"serverInfo":        map[string]any{"name": "fake", "version": "1"},
		}), nil
	case "initialize":
		v := p.ProtocolVersion
		if legacy := s.legacyVersions(); len(legacy) == 0 {
			return nil, &rpcErr{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version"}
		} else if !s.supports(v) || modern(v) {
			v = legacy[0]
		}
		if s.cfg.initVersion != "" {
			v = s.cfg.initVersion
		}
		return map[string]any{
			"protocolVersion": v,
			"capabilities":    s.capabilities(),
			"serverInfo":      map[string]any{"name": "fake", "version": "1"},
			"instructions":    "be nice",
		}, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		all := s.toolList()
		start := 0
		if p.Cursor != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(p.Cursor, "c"))
			if err != nil || n < 0 || n > len(all) {
				return nil, &rpcErr{Code: jsonrpc.CodeInvalidParams, Message: "bad cursor"}
			}
			start = n
		}
		end := len(all)
		if s.cfg.pageSize > 0 && start+s.cfg.pageSize < end {
			end = start + s.cfg.pageSize
		}
		r := map[string]any{"tools": all[start:end]}
		if end < len(all) {
			r["nextCursor"] = "c" + strconv.Itoa(end)
		}
		if stateless {
			r["ttlMs"], r["cacheScope"] = 0, "private"
		}
		return complete(r), nil
	case "tools/call":
		var args map[string]any
		json.Unmarshal(p.Arguments, &args) //nolint:errcheck // tools tolerate missing arguments
		text := func(s string) map[string]any {
			return complete(map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}})
		}
		switch p.Name {
		case "echo":
			t, _ := args["text"].(string)
			return text(t), nil
		case "add":
			a, _ := args["a"].(float64)
			b, _ := args["b"].(float64)
			return text(strconv.FormatFloat(a+b, 'f', -1, 64)), nil
		case "progress":
			steps := 3
			if n, ok := args["steps"].(float64); ok {
				steps = int(n)
			}
			if tok := p.Meta.ProgressToken; tok != nil {
				for i := 1; i <= steps; i++ {
					n, _ := jsonrpc.NewNotification("notifications/progress", map[string]any{
						"progressToken": tok, "progress": i, "total": steps, "message": "step " + strconv.Itoa(i),
					})
					notify(n)
				}
			}
			return text("done"), nil
		case "block":
			<-ctx.Done()
			s.mu.Lock()
			s.stopped = append(s.stopped, p.Name)
			s.mu.Unlock()
			return nil, ctx.Err()
		case "fail":
			r := text("it failed")
			r["isError"] = true
			return r, nil
		default:
			for _, raw := range s.toolList() {
				var t struct{ Name string }
				json.Unmarshal(raw, &t) //nolint:errcheck // our own definitions
				if t.Name == p.Name {
					return text("called " + p.Name), nil
				}
			}
			return nil, &rpcErr{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool " + p.Name}
		}
	case "subscriptions/listen":
		ack, _ := jsonrpc.NewNotification("notifications/subscriptions/acknowledged", map[string]any{
			"_meta":         map[string]any{metaSubscriptionID: m.ID},
			"notifications": map[string]any{"toolsListChanged": true},
		})
		notify(ack)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return nil, &rpcErr{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + m.Method}
}

func (s *fakeServer) capabilities() map[string]any {
	caps := map[string]any{"tools": map[string]any{"listChanged": s.cfg.listChanged}}
	if s.cfg.content {
		caps["resources"] = map[string]any{"listChanged": s.cfg.listChanged}
		caps["prompts"] = map[string]any{"listChanged": s.cfg.listChanged}
	}
	return caps
}

// contentRequest serves the resources and prompts of a content server:
// two resources in two pages, one template, a text and a blob to read, and
// a prompt with a required argument.
func (s *fakeServer) contentRequest(method, cursor string, params json.RawMessage) (map[string]any, error) {
	var p struct {
		URI       string            `json:"uri"`
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	json.Unmarshal(params, &p) //nolint:errcheck // test server
	switch method {
	case "resources/list":
		if cursor == "" {
			return map[string]any{"resources": []any{map[string]any{"uri": "file:///notes.txt", "name": "notes", "mimeType": "text/plain"}}, "nextCursor": "r2"}, nil
		}
		if s.cfg.failPage2 {
			return nil, &rpcErr{Code: -32603, Message: "the second page is lost"}
		}
		return map[string]any{"resources": []any{map[string]any{"uri": "mem://logo", "name": "logo", "mimeType": "image/png"}, map[string]any{"name": "no uri"}}}, nil
	case "resources/templates/list":
		return map[string]any{"resourceTemplates": []any{map[string]any{"uriTemplate": "mem://item/{id}", "name": "item"}}}, nil
	case "resources/read":
		switch {
		case p.URI == "file:///notes.txt":
			return map[string]any{"contents": []any{map[string]any{"uri": p.URI, "mimeType": "text/plain", "text": "remember the milk"}}}, nil
		case p.URI == "mem://logo":
			return map[string]any{"contents": []any{map[string]any{"uri": p.URI, "mimeType": "image/png", "blob": "iVBORw0K"}}}, nil
		case strings.HasPrefix(p.URI, "mem://item/"):
			return map[string]any{"contents": []any{map[string]any{"uri": p.URI, "text": "item " + strings.TrimPrefix(p.URI, "mem://item/")}}}, nil
		case p.URI == "mem://bad":
			return map[string]any{"contents": []any{map[string]any{"uri": p.URI}}}, nil
		}
		return nil, &rpcErr{Code: CodeResourceNotFound, Message: "Resource not found"}
	case "prompts/list":
		return map[string]any{"prompts": []any{
			map[string]any{"name": "review", "description": "Review a file", "arguments": []any{
				map[string]any{"name": "file", "required": true}, map[string]any{"name": "focus"}}},
			map[string]any{"name": "hello"},
		}}, nil
	case "prompts/get":
		switch p.Name {
		case "review":
			if p.Arguments["file"] == "" {
				return nil, &rpcErr{Code: jsonrpc.CodeInvalidParams, Message: "file is required"}
			}
			return map[string]any{"description": "Review", "messages": []any{
				map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Review " + p.Arguments["file"] + " for " + p.Arguments["focus"]}},
			}}, nil
		case "hello":
			return map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "hello"}}}}, nil
		}
		return nil, &rpcErr{Code: jsonrpc.CodeInvalidParams, Message: "unknown prompt"}
	}
	return nil, &rpcErr{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method}
}

// isStateless: a request of the stateless revision carries its version in
// _meta. A byte search is exact enough for a test server and keeps it out
// of the benchmarks' way.
func isStateless(m *jsonrpc.Message) bool {
	return bytes.Contains(m.Params, []byte(`"`+metaProtocolVersion+`"`))
}

// ---- over a jsonrpc.Stream ----

// serveStream serves one client over s until it ends. list_changed
// announcements go out through the returned notify function.
func (s *fakeServer) serveStream(st jsonrpc.Stream) (conn *jsonrpc.Conn, announce func()) {
	var c *jsonrpc.Conn
	ready := make(chan struct{})
	h := jsonrpc.HandlerFunc(func(ctx context.Context, m *jsonrpc.Message) (any, error) {
		<-ready
		if m.Kind() == jsonrpc.KindNotification {
			s.record(m.Method)
			if m.Method == "notifications/initialized" {
				s.mu.Lock()
				s.version = s.chosen
				s.mu.Unlock()
			}
			if m.Method == "notifications/cancelled" {
				var p cancelledParams
				json.Unmarshal(m.Params, &p) //nolint:errcheck // test server
				s.mu.Lock()
				s.cancelled = append(s.cancelled, p.RequestID.String())
				s.mu.Unlock()
				c.CancelRequest(p.RequestID)
			}
			return nil, nil
		}
		stateless := isStateless(m)
		if m.Method == "server/discover" && !s.stateless() {
			s.record(m.Method)
			switch s.cfg.legacyProbe {
			case "silent":
				<-ctx.Done()
				return nil, ctx.Err()
			case "empty":
				return map[string]any{}, nil
			}
			return nil, &rpcErr{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
		}
		res, err := s.request(ctx, m, stateless, func(n *jsonrpc.Message) { c.Send(ctx, n) }) //nolint:errcheck // test server
		if m.Method == "initialize" && err == nil {
			s.mu.Lock()
			s.chosen = res.(map[string]any)["protocolVersion"].(string)
			s.mu.Unlock()
		}
		return res, err
	})
	if s.cfg.batch {
		st = batchingStream{st, s}
	}
	c = jsonrpc.NewConn(st, jsonrpc.ConnOptions{Handler: h, MaxConcurrent: 64})
	close(ready)
	return c, func() {
		c.Notify(context.Background(), "notifications/tools/list_changed", nil) //nolint:errcheck // test server
	}
}

// batchingStream writes every message after the handshake as a batch of
// one, as a stdio server of 2025-03-26 may.
type batchingStream struct {
	jsonrpc.Stream
	s *fakeServer
}

func (b batchingStream) Write(ctx context.Context, m *jsonrpc.Message) error {
	b.s.mu.Lock()
	ready := b.s.version != ""
	b.s.mu.Unlock()
	if !ready {
		return b.Stream.Write(ctx, m)
	}
	return b.Stream.(jsonrpc.BatchWriter).WriteBatch(ctx, []*jsonrpc.Message{m})
}

// ---- over Streamable HTTP ----

func writeJSON(w http.ResponseWriter, status int, m *jsonrpc.Message) {
	b, _ := jsonrpc.Encode(m)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b) //nolint:errcheck // test server
}

// writeBatchJSON answers with a JSON body holding a batch of one.
func writeBatchJSON(w http.ResponseWriter, status int, m *jsonrpc.Message) {
	b, _ := jsonrpc.AppendBatch(nil, []*jsonrpc.Message{m})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b) //nolint:errcheck // test server
}

func (s *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		s.post(w, r)
	case http.MethodGet:
		s.get(w, r)
	case http.MethodDelete:
		s.mu.Lock()
		s.deletes++
		s.delHeader = r.Header.Clone()
		delete(s.sessions, r.Header.Get("Mcp-Session-Id"))
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

// expireSessions forgets every session: later requests with one get 404.
func (s *fakeServer) expireSessions() {
	s.mu.Lock()
	s.sessions = map[string]string{}
	s.mu.Unlock()
}

// announce sends list_changed on every GET stream.
func (s *fakeServer) announce() {
	n, _ := jsonrpc.NewNotification("notifications/tools/list_changed", nil)
	s.broadcast(n)
}

// broadcast sends m on every GET stream.
func (s *fakeServer) broadcast(n *jsonrpc.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.listeners {
		select {
		case ch <- n:
		default:
		}
	}
}

func (s *fakeServer) post(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	s.mu.Lock()
	s.headers = append(s.headers, r.Header.Clone())
	s.mu.Unlock()
	m, err := jsonrpc.Decode(body)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, jsonrpc.NewErrorResponse(jsonrpc.ID{}, &rpcErr{Code: jsonrpc.CodeParseError, Message: err.Error()}))
		return
	}
	if !strings.Contains(r.Header.Get("Accept"), "application/json") || !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	stateless := m.Kind() == jsonrpc.KindRequest && isStateless(m)
	if stateless {
		if !s.stateless() {
			// A session-based server meets a stateless request: it wants a
			// session first (as server-everything does).
			s.record(m.Method)
			writeJSON(w, http.StatusBadRequest, jsonrpc.NewErrorResponse(m.ID, &rpcErr{Code: -32000, Message: "Bad Request: No valid session ID provided"}))
			return
		}
		if err := checkStatelessHeaders(r, m); err != nil {
			writeJSON(w, http.StatusBadRequest, jsonrpc.NewErrorResponse(m.ID, &rpcErr{Code: CodeHeaderMismatch, Message: err.Error()}))
			return
		}
		s.answer(w, r, m, true)
		return
	}
	// Session-based.
	if m.Method == "initialize" {
		res, err := s.request(r.Context(), m, false, nil)
		if err != nil {
			writeJSON(w, http.StatusOK, jsonrpc.NewErrorResponse(m.ID, err.(*rpcErr)))
			return
		}
		if !s.cfg.noSessions {
			s.mu.Lock()
			s.nextSess++
			sid := "sess-" + strconv.Itoa(s.nextSess)
			s.sessions[sid] = res.(map[string]any)["protocolVersion"].(string)
			s.mu.Unlock()
			w.Header().Set("Mcp-Session-Id", sid)
		}
		resp, _ := jsonrpc.NewResponse(m.ID, res)
		writeJSON(w, http.StatusOK, resp)
		return
	}
	if !s.checkSession(w, r) {
		return
	}
	switch m.Kind() {
	case jsonrpc.KindNotification:
		s.record(m.Method)
		if m.Method == "notifications/cancelled" {
			var p cancelledParams
			json.Unmarshal(m.Params, &p) //nolint:errcheck // test server
			s.mu.Lock()
			s.cancelled = append(s.cancelled, p.RequestID.String())
			s.mu.Unlock()
		}
		w.WriteHeader(http.StatusAccepted)
	case jsonrpc.KindResponse:
		b, _ := jsonrpc.Encode(m)
		s.record("response " + string(b))
		w.WriteHeader(http.StatusAccepted)
	default:
		s.answer(w, r, m, false)
	}
}

// checkSession enforces the session of the session-based revisions.
func (s *fakeServer) checkSession(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.noSessions {
		return true
	}
	sid := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	v, ok := s.sessions[sid]
	s.mu.Unlock()
	switch {
	case sid == "":
		writeJSON(w, http.StatusBadRequest, jsonrpc.NewErrorResponse(jsonrpc.ID{}, &rpcErr{Code: -32000, Message: "no session"}))
		return false
	case !ok:
		w.WriteHeader(http.StatusNotFound)
		return false
	case versionHeader(v) && r.Header.Get("MCP-Protocol-Version") != v:
		writeJSON(w, http.StatusBadRequest, jsonrpc.NewErrorResponse(jsonrpc.ID{}, &rpcErr{Code: -32000, Message: "bad MCP-Protocol-Version"}))
		return false
	case !versionHeader(v) && len(r.Header.Values("MCP-Protocol-Version")) > 0:
		// The revisions before 2025-06-18 have no such header; a client
		// that sends one uses a feature its peer lacks.
		writeJSON(w, http.StatusBadRequest, jsonrpc.NewErrorResponse(jsonrpc.ID{}, &rpcErr{Code: -32000, Message: "MCP-Protocol-Version sent to a server of " + v}))
		return false
	}
	return true
}

func decodeHeaderValue(v string) string {
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") {
		b, err := base64.StdEncoding.DecodeString(v[9 : len(v)-2])
		if err == nil {
			return string(b)
		}
	}
	return v
}

// checkStatelessHeaders is the server validation of 2026-07-28
// streamable-http "Server Validation".
func checkStatelessHeaders(r *http.Request, m *jsonrpc.Message) error {
	var p struct {
		Name string                     `json:"name"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	json.Unmarshal(m.Params, &p) //nolint:errcheck // checked by the caller
	var v string
	json.Unmarshal(p.Meta[metaProtocolVersion], &v) //nolint:errcheck // compared below
	switch {
	case r.Header.Get("MCP-Protocol-Version") != v:
		return fmt.Errorf("MCP-Protocol-Version %q does not match _meta %q", r.Header.Get("MCP-Protocol-Version"), v)
	case r.Header.Get("Mcp-Method") != m.Method:
		return fmt.Errorf("Mcp-Method %q does not match %q", r.Header.Get("Mcp-Method"), m.Method)
	case m.Method == "tools/call" && decodeHeaderValue(r.Header.Get("Mcp-Name")) != p.Name:
		return fmt.Errorf("Mcp-Name %q does not match %q", r.Header.Get("Mcp-Name"), p.Name)
	}
	return nil
}

// answer runs a request and writes its answer as JSON or SSE.
func (s *fakeServer) answer(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message, stateless bool) {
	if m.Method == "subscriptions/listen" && stateless {
		s.subscription(w, r, m)
		return
	}
	if m.Method == "tools/call" && s.cfg.dropPrimed && !stateless {
		s.answerLater(w, r, m)
		return
	}
	if !s.cfg.sse {
		res, err := s.request(r.Context(), m, stateless, func(*jsonrpc.Message) {})
		resp := responseMessage(m.ID, res, err)
		status := http.StatusOK
		if stateless && resp.Error != nil && resp.Error.Code == CodeUnsupportedProtocolVersion {
			status = http.StatusBadRequest
		}
		if s.cfg.batch {
			writeBatchJSON(w, status, resp)
			return
		}
		writeJSON(w, status, resp)
		return
	}
	if s.cfg.batch {
		// The request's notifications and its response in one event.
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		var batch []*jsonrpc.Message
		res, err := s.request(r.Context(), m, stateless, func(n *jsonrpc.Message) { batch = append(batch, n) })
		b, _ := jsonrpc.AppendBatch(nil, append(batch, responseMessage(m.ID, res, err)))
		sse.Write(w, sse.Event{ID: "b1", Data: string(b)}) //nolint:errcheck // test server
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fl.Flush()
	var mu sync.Mutex
	n := 0
	send := func(msg *jsonrpc.Message) {
		b, _ := jsonrpc.Encode(msg)
		mu.Lock()
		defer mu.Unlock()
		n++
		ev := sse.Event{Data: string(b)}
		if !stateless {
			ev.ID = "e" + strconv.Itoa(n)
		}
		sse.Write(w, ev) //nolint:errcheck // test server
		fl.Flush()
	}
	res, err := s.request(r.Context(), m, stateless, send)
	if r.Context().Err() != nil {
		return
	}
	send(responseMessage(m.ID, res, err))
}

func responseMessage(id jsonrpc.ID, res any, err error) *jsonrpc.Message {
	if err != nil {
		var e *rpcErr
		if !errors.As(err, &e) {
			e = &rpcErr{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		return jsonrpc.NewErrorResponse(id, e)
	}
	resp, _ := jsonrpc.NewResponse(id, res)
	return resp
}

// answerLater sends the priming event (an id and a retry, no data), closes
// the connection, and keeps the response for the GET that resumes the
// stream (2025-11-25 transports: the server "MAY close the connection ...
// The client SHOULD then poll").
func (s *fakeServer) answerLater(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	primeID := "prime-" + m.ID.String()
	ch := make(chan *jsonrpc.Message, 1)
	s.mu.Lock()
	s.pending[primeID] = ch
	s.mu.Unlock()
	if s.cfg.noResumeIDs {
		io.WriteString(w, "retry: "+strconv.Itoa(int(s.cfg.retry/time.Millisecond))+"\ndata: \n\n") //nolint:errcheck // test server
	} else {
		sse.WriteRetry(w, sse.Event{ID: primeID}, s.cfg.retry) //nolint:errcheck // test server
	}
	w.(http.Flusher).Flush()
	go func() {
		res, err := s.request(context.Background(), m, false, func(*jsonrpc.Message) {})
		ch <- responseMessage(m.ID, res, err)
	}()
}

func (s *fakeServer) get(w http.ResponseWriter, r *http.Request) {
	last := r.Header.Get("Last-Event-ID")
	s.mu.Lock()
	s.gets = append(s.gets, last)
	s.getTimes = append(s.getTimes, time.Now())
	s.mu.Unlock()
	if s.cfg.noGet && last == "" {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	if !s.checkSession(w, r) {
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	if last != "" && !strings.HasPrefix(last, "g") {
		if s.cfg.stallResume {
			return
		}
		s.mu.Lock()
		ch := s.pending[last]
		delete(s.pending, last)
		s.mu.Unlock()
		if ch == nil {
			return
		}
		select {
		case msg := <-ch:
			b, _ := jsonrpc.Encode(msg)
			sse.Write(w, sse.Event{ID: last + "-r", Data: string(b)}) //nolint:errcheck // test server
			fl.Flush()
		case <-r.Context().Done():
		}
		return
	}
	// The listening stream.
	ch := make(chan *jsonrpc.Message, 8)
	s.mu.Lock()
	s.listeners[ch] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ch)
		s.mu.Unlock()
	}()
	fl.Flush()
	n := 0
	if s.cfg.dropGet && last == "" {
		// One event with an id and the retry field, then the connection
		// ends without ending the stream (2025-11-25 transports "Listening
		// for Messages from the Server").
		sse.WriteRetry(w, sse.Event{ID: "g-drop"}, s.cfg.retry) //nolint:errcheck // test server
		return
	}
	for {
		select {
		case msg := <-ch:
			b, _ := jsonrpc.Encode(msg)
			n++
			sse.Write(w, sse.Event{ID: "g" + strconv.Itoa(n), Data: string(b)}) //nolint:errcheck // test server
			fl.Flush()
		case <-r.Context().Done():
			return
		}
	}
}

// subscription serves subscriptions/listen on Streamable HTTP: an SSE
// stream with the acknowledgment, then the change notifications, each
// tagged with the subscription id (2026-07-28 patterns/subscriptions).
func (s *fakeServer) subscription(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
	s.record(m.Method)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	tag := map[string]any{metaSubscriptionID: m.ID}
	ack, _ := jsonrpc.NewNotification("notifications/subscriptions/acknowledged", map[string]any{"_meta": tag, "notifications": map[string]any{"toolsListChanged": true}})
	b, _ := jsonrpc.Encode(ack)
	sse.Write(w, sse.Event{Data: string(b)}) //nolint:errcheck // test server
	fl.Flush()
	ch := make(chan *jsonrpc.Message, 8)
	s.mu.Lock()
	s.listeners[ch] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ch)
		s.mu.Unlock()
	}()
	for {
		select {
		case <-ch:
			n, _ := jsonrpc.NewNotification("notifications/tools/list_changed", map[string]any{"_meta": tag})
			b, _ := jsonrpc.Encode(n)
			sse.Write(w, sse.Event{Data: string(b)}) //nolint:errcheck // test server
			fl.Flush()
		case <-r.Context().Done():
			return
		}
	}
}

// listenerCount reports the open GET streams.
func (s *fakeServer) listenerCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.listeners)
}
