package mcp

// The server side of `agent mcp serve` (docs/reference/mcp.md, "agent mcp
// serve"): one agent session's tools, plus agent_submit, offered to an MCP
// client over stdio (server_stdio.go) or Streamable HTTP (server_http.go,
// server_auth.go). This file is the protocol: revision negotiation for the
// session-based revisions 2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25
// (initialize) and the stateless 2026-07-28 (per-request _meta,
// server/discover), and the methods a server of tools answers, each without
// the fields the negotiated revision lacks (docs/reference/mcp.md,
// "Protocol revisions").

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"agent/internal/quote"
	"agent/mcp/jsonrpc"
)

// ServedTool is one tool the served session offers, as tools/list shows it.
type ServedTool struct {
	Name        string
	Description string
	InputSchema json.RawMessage // a JSON Schema object
	ReadOnly    bool            // the readOnlyHint annotation
}

// ServedResult is the outcome of a served call: the text the client gets,
// and whether it is a tool error (isError: true, MCP server/tools "Error
// Handling": a failure the model should see, not a protocol error).
type ServedResult struct {
	Text    string
	IsError bool
}

// ErrUnknownTool is returned by ServeTarget.CallTool for a name it does not
// offer; the client gets the protocol error "Unknown tool" (-32602).
var ErrUnknownTool = errors.New("mcp: unknown tool")

// ServeTarget is what the server serves: one agent session. The server
// owns the agent_submit tool and calls Submit for it.
//
// Every method is called concurrently from the connections' goroutines.
// CallTool and Submit block until the call or turn ends or ctx is done
// (the client cancelled, or the server is shutting down); any error other
// than ErrUnknownTool becomes a tool error with the error's text.
type ServeTarget interface {
	Tools() []ServedTool
	CallTool(ctx context.Context, name string, args json.RawMessage) (ServedResult, error)
	// Submit runs prompt as a turn of its own (concurrent submits queue
	// in the session) and returns its answer.
	Submit(ctx context.Context, prompt string) (ServedResult, error)
}

// SubmitTool is the name of the tool that runs a turn
// (docs/reference/mcp.md, "Served tools and agent_submit").
const SubmitTool = "agent_submit"

// submitSchema is agent_submit's input schema, exactly as
// docs/reference/mcp.md, "Served tools and agent_submit", gives it.
const submitSchema = `{"type":"object","properties":{"prompt":{"type":"string","minLength":1}},"required":["prompt"],"additionalProperties":false}`

// ServerOptions configures a Server. The zero value serves as
// {Name: "agent", Version: "dev"} with no instructions.
type ServerOptions struct {
	Info         Implementation
	Instructions string
	// Versions restricts the revisions served (a subset of
	// SupportedVersions, newest first); nil serves them all.
	Versions []string
	// Notice receives problems that fail no request (a refused message, a
	// write to a client that went away), one line each; nil drops them.
	// It may be called from several goroutines.
	Notice func(string)
}

// Server answers MCP requests for one ServeTarget. It holds no connection
// state of its own: each stdio connection and each HTTP session keeps a
// serverConn. It is safe for concurrent use.
type Server struct {
	target       ServeTarget
	info         Implementation
	instructions string
	versions     []string // newest first
	legacy       []string // the session-based ones among them, newest first
	notice       func(string)
}

// NewServer returns a server of target.
func NewServer(target ServeTarget, opts ServerOptions) (*Server, error) {
	if target == nil {
		return nil, errors.New("mcp: NewServer needs a target")
	}
	info := opts.Info
	if info.Name == "" {
		info = Implementation{Name: "agent", Version: "dev"}
	}
	versions := opts.Versions
	if versions == nil {
		versions = SupportedVersions()
	}
	s := &Server{target: target, info: info, instructions: opts.Instructions, notice: opts.Notice}
	if s.notice == nil {
		s.notice = func(string) {}
	}
	for _, v := range versions {
		if !knownVersion(v) {
			return nil, fmt.Errorf("mcp: revision %q is not supported by this server", quote.V(v))
		}
		s.versions = append(s.versions, v)
		if !modern(v) {
			s.legacy = append(s.legacy, v)
		}
	}
	if len(s.versions) == 0 {
		return nil, errors.New("mcp: NewServer needs at least one revision")
	}
	return s, nil
}

// Log levels of MCP server/utilities/logging (RFC 5424 severities).
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// serverConn is the state of one session-based conversation: a stdio
// connection or one HTTP session. Stateless requests need none.
type serverConn struct {
	mu          sync.Mutex
	version     string // negotiated by initialize; "" before
	initialized bool   // notifications/initialized arrived
	logLevel    string
}

func (c *serverConn) negotiated() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// requestMeta of a stateless request (2026-07-28 basic/index "Per-request
// protocol fields"). Present reports which keys were there.
type statelessMeta struct {
	version    string
	hasVersion bool
	hasCaps    bool
	hasMeta    bool
}

// parseStatelessMeta reads params._meta. It does not judge: the caller
// decides which missing keys are errors.
func parseStatelessMeta(params json.RawMessage) (statelessMeta, error) {
	var out statelessMeta
	if len(params) == 0 {
		return out, nil
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return out, invalidParams("params: %v", err)
	}
	if p.Meta == nil {
		return out, nil
	}
	out.hasMeta = true
	if raw, ok := p.Meta[metaProtocolVersion]; ok {
		if err := json.Unmarshal(raw, &out.version); err != nil || out.version == "" {
			return out, invalidParams("_meta[%q] must be a non-empty string", quote.V(metaProtocolVersion))
		}
		out.hasVersion = true
	}
	if raw, ok := p.Meta[metaClientCapabilities]; ok {
		if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
			out.hasCaps = true
		} else {
			return out, invalidParams("_meta[%q] must be an object", quote.V(metaClientCapabilities))
		}
	}
	return out, nil
}

// IsStatelessRequest reports whether m is a request of the stateless
// revision: server/discover (which exists only there), or a request whose
// _meta names a protocol version. headerVersion is the MCP-Protocol-Version
// header on HTTP ("" on stdio): a request without _meta that names the
// stateless revision in the header is one too, and gets refused for its
// missing _meta.
func isStatelessRequest(m *jsonrpc.Message, headerVersion string) bool {
	if m.Kind() != jsonrpc.KindRequest {
		return false
	}
	if m.Method == "server/discover" || (headerVersion != "" && modern(headerVersion)) {
		return true
	}
	// A byte search first: most session-based requests have no _meta.
	if !bytes.Contains(m.Params, []byte(metaProtocolVersion)) {
		return false
	}
	meta, err := parseStatelessMeta(m.Params)
	return err != nil || meta.hasVersion
}

func invalidParams(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

func methodNotFound(method string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + method}
}

// unsupportedVersion is UnsupportedProtocolVersionError (2026-07-28
// basic/versioning): the versions served and the one requested.
func (s *Server) unsupportedVersion(requested string) *jsonrpc.Error {
	data, _ := json.Marshal(unsupportedVersionData{Supported: s.versions, Requested: requested})
	return &jsonrpc.Error{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version: " + requested, Data: data}
}

// checkStateless validates a stateless request's _meta: both required keys
// present (-32602 otherwise), and a revision served (-32022 otherwise).
// clientInfo is optional. It returns the revision.
func (s *Server) checkStateless(m *jsonrpc.Message) (string, error) {
	v, err := statelessVersion(m)
	if err != nil {
		return "", err
	}
	return v, s.servesStateless(v)
}

// statelessVersion checks that _meta carries the required keys and
// returns the revision it names.
func statelessVersion(m *jsonrpc.Message) (string, error) {
	meta, err := parseStatelessMeta(m.Params)
	if err != nil {
		return "", err
	}
	switch {
	case !meta.hasMeta:
		return "", invalidParams("a request of revision %s carries _meta with %s and %s", Version20260728, metaProtocolVersion, metaClientCapabilities)
	case !meta.hasVersion:
		return "", invalidParams("_meta lacks %s", metaProtocolVersion)
	case !meta.hasCaps:
		return "", invalidParams("_meta lacks %s", metaClientCapabilities)
	}
	return meta.version, nil
}

// servesStateless refuses a revision the server does not serve
// statelessly.
func (s *Server) servesStateless(v string) error {
	if !modern(v) || !slices.Contains(s.versions, v) {
		return s.unsupportedVersion(v)
	}
	return nil
}

// handleStateless answers one request of the stateless revision.
func (s *Server) handleStateless(ctx context.Context, m *jsonrpc.Message) (any, error) {
	if _, err := s.checkStateless(m); err != nil {
		return nil, err
	}
	switch m.Method {
	case "server/discover":
		res := map[string]any{
			"resultType":        "complete",
			"supportedVersions": s.versions,
			"capabilities":      s.capabilities(true),
			// serverInfo in the body for clients of the first drafts, and
			// in _meta where the revision puts it now.
			"serverInfo": s.info,
			"_meta":      map[string]any{"io.modelcontextprotocol/serverInfo": s.info},
		}
		if s.instructions != "" {
			res["instructions"] = s.instructions
		}
		return res, nil
	case "tools/list":
		res, err := s.listTools(Version20260728, m.Params)
		if err != nil {
			return nil, err
		}
		// Cache hints (2026-07-28 server/utilities/caching): the list is
		// the session's and may change with the settings, so private and
		// not cached.
		res["resultType"], res["ttlMs"], res["cacheScope"] = "complete", 0, "private"
		return res, nil
	case "tools/call":
		res, err := s.callTool(ctx, Version20260728, m.Params)
		if err != nil {
			return nil, err
		}
		res["resultType"] = "complete"
		return res, nil
	}
	// initialize, ping and logging/setLevel are gone from 2026-07-28;
	// subscriptions/listen needs a listChanged capability this server does
	// not declare.
	return nil, methodNotFound(m.Method)
}

// capabilities declares tools (the list does not change while the server
// runs) and, for the session-based revisions, logging. Resources and
// prompts are not advertised (docs/reference/mcp.md, "Served tools and
// agent_submit").
func (s *Server) capabilities(stateless bool) map[string]any {
	caps := map[string]any{"tools": map[string]any{"listChanged": false}}
	if !stateless {
		caps["logging"] = map[string]any{}
	}
	return caps
}

// handleLegacy answers one message of a session-based conversation.
func (s *Server) handleLegacy(ctx context.Context, c *serverConn, m *jsonrpc.Message) (any, error) {
	if m.Kind() == jsonrpc.KindNotification {
		if m.Method == "notifications/initialized" {
			c.mu.Lock()
			c.initialized = c.version != ""
			c.mu.Unlock()
		}
		return nil, nil
	}
	switch m.Method {
	case "initialize":
		return s.initialize(c, m.Params)
	case "ping":
		// basic/utilities/ping: an empty result, at any time.
		return struct{}{}, nil
	}
	v := c.negotiated()
	if v == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "the session is not initialized: send initialize first"}
	}
	switch m.Method {
	case "tools/list":
		return s.listTools(v, m.Params)
	case "tools/call":
		return s.callTool(ctx, v, m.Params)
	case "logging/setLevel":
		var p struct {
			Level string `json:"level"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil || !slices.Contains(logLevels, p.Level) {
			return nil, invalidParams("level must be one of %v", logLevels)
		}
		c.mu.Lock()
		c.logLevel = p.Level
		c.mu.Unlock()
		return struct{}{}, nil
	}
	return nil, methodNotFound(m.Method)
}

// initialize negotiates (2025-11-25 basic/lifecycle "Version
// Negotiation", the same rule since 2024-11-05): the client's version when
// the server speaks it, 2024-11-05 and 2025-03-26 included, else the newest
// session-based revision the server speaks.
func (s *Server) initialize(c *serverConn, params json.RawMessage) (any, error) {
	var p struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      json.RawMessage `json:"clientInfo"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.ProtocolVersion == "" {
		return nil, invalidParams("initialize needs params with a protocolVersion string")
	}
	if len(s.legacy) == 0 {
		return nil, s.unsupportedVersion(p.ProtocolVersion)
	}
	v := s.legacy[0]
	if slices.Contains(s.legacy, p.ProtocolVersion) {
		v = p.ProtocolVersion
	}
	c.mu.Lock()
	if c.version != "" && c.version != v {
		c.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "the session is already initialized with " + c.version}
	}
	c.version = v
	c.mu.Unlock()
	info := s.info
	if !titles(v) {
		info.Title = ""
	}
	res := map[string]any{
		"protocolVersion": v,
		"capabilities":    s.capabilities(false),
		"serverInfo":      info,
	}
	if s.instructions != "" {
		res["instructions"] = s.instructions
	}
	return res, nil
}

// listTools answers tools/list: every tool in one page, agent_submit
// first, in a stable order (2026-07-28 asks for a deterministic order).
// Revision v decides the optional fields: titles from 2025-06-18,
// annotations from 2025-03-26.
func (s *Server) listTools(v string, params json.RawMessage) (map[string]any, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalidParams("params: %v", err)
		}
	}
	if p.Cursor != nil {
		// No page ever names a next cursor, so no cursor is valid
		// (server/utilities/pagination: invalid cursor is -32602).
		return nil, invalidParams("invalid cursor")
	}
	tools := []map[string]any{{
		"name":        SubmitTool,
		"description": "Run one turn of the agent session with this prompt and return the answer. Concurrent submits each get their own turn, in order.",
		"inputSchema": json.RawMessage(submitSchema),
	}}
	if titles(v) {
		tools[0]["title"] = "Submit a prompt"
	}
	for _, t := range s.target.Tools() {
		if t.Name == SubmitTool {
			continue
		}
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		desc := t.Description
		if desc == "" {
			desc = t.Name
		}
		tool := map[string]any{"name": t.Name, "description": desc, "inputSchema": schema}
		if t.ReadOnly && annotations(v) {
			tool["annotations"] = map[string]any{"readOnlyHint": true}
		}
		tools = append(tools, tool)
	}
	return map[string]any{"tools": tools}, nil
}

// callParams is tools/call's params.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func parseCallParams(params json.RawMessage) (callParams, error) {
	var p callParams
	if err := json.Unmarshal(params, &p); err != nil {
		return p, invalidParams("params: %v", err)
	}
	if p.Name == "" {
		return p, invalidParams("tools/call needs a tool name")
	}
	if a := bytes.TrimSpace(p.Arguments); len(a) == 0 || string(a) == "null" {
		p.Arguments = json.RawMessage("{}")
	} else if a[0] != '{' {
		return p, invalidParams("arguments must be an object")
	}
	return p, nil
}

// callTool answers tools/call. An unknown tool is a protocol error
// (-32602, MCP server/tools "Error Handling"); everything that happens in
// a known tool, including invalid arguments and a denied permission, is a
// tool error the model can read. v is the revision of the request.
func (s *Server) callTool(ctx context.Context, v string, params json.RawMessage) (map[string]any, error) {
	p, err := parseCallParams(params)
	if err != nil {
		return nil, err
	}
	ctx, stopProgress := startProgress(ctx, params, annotations(v))
	defer stopProgress()
	var res ServedResult
	if p.Name == SubmitTool {
		prompt, perr := submitPrompt(p.Arguments)
		if perr != nil {
			return toolResult(ServedResult{Text: "Invalid arguments for agent_submit: " + perr.Error(), IsError: true}), nil
		}
		res, err = s.target.Submit(ctx, prompt)
	} else {
		res, err = s.target.CallTool(ctx, p.Name, p.Arguments)
	}
	switch {
	case errors.Is(err, ErrUnknownTool):
		return nil, invalidParams("Unknown tool: %s", p.Name)
	case err != nil:
		res = ServedResult{Text: err.Error(), IsError: true}
	}
	return toolResult(res), nil
}

func toolResult(r ServedResult) map[string]any {
	res := map[string]any{"content": []map[string]any{{"type": "text", "text": r.Text}}}
	if r.IsError {
		res["isError"] = true
	}
	return res
}

// submitPrompt checks agent_submit's arguments against its schema: an
// object with exactly a non-empty string prompt.
func submitPrompt(args json.RawMessage) (string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		return "", errors.New("the arguments must be an object")
	}
	for k := range fields {
		if k != "prompt" {
			return "", fmt.Errorf("unexpected property %q (only prompt is allowed)", quote.V(k))
		}
	}
	raw, ok := fields["prompt"]
	if !ok {
		return "", errors.New("prompt is required")
	}
	var prompt string
	if err := json.Unmarshal(raw, &prompt); err != nil {
		return "", errors.New("prompt must be a string")
	}
	if prompt == "" {
		return "", errors.New("prompt must not be empty")
	}
	return prompt, nil
}
