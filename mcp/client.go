package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"agent/internal/elicit"
	"agent/internal/quote"
	"agent/mcp/jsonrpc"
)

// ClientOptions configures a Client. The zero value offers every supported
// revision, names the client "agent", and bounds no request beyond the
// caller's context.
type ClientOptions struct {
	// ClientInfo names this client to servers; a zero value means
	// {Name: "agent", Version: "dev"}.
	ClientInfo Implementation
	// Versions restricts the revisions offered (a subset of
	// SupportedVersions, newest first); nil offers them all.
	Versions []string
	// Timeout bounds each request (the server definition's `timeout`);
	// 0 means no bound beyond ctx. A request that runs out is cancelled on
	// the wire and fails with ErrTimeout.
	Timeout time.Duration
	// DiscoverTimeout bounds the server/discover probe on stdio, after
	// which a silent server is taken for a session-based one (2026-07-28
	// stdio "Backward Compatibility"); 0 means 5 s.
	DiscoverTimeout time.Duration
	// OnToolsChanged is called, on a goroutine of the client, after the
	// server announced a change of its tools and the list was fetched
	// again; tools is the new list (also returned by Tools from then on).
	OnToolsChanged func(tools []Tool)
	// OnResourcesChanged and OnPromptsChanged are called the same way
	// after resources/list_changed (with the resources and templates
	// fetched again) and prompts/list_changed.
	OnResourcesChanged func(resources []Resource, templates []ResourceTemplate)
	OnPromptsChanged   func(prompts []Prompt)
	// ListChangedDelay is the least time between two refreshes of the
	// lists after list_changed notifications: a refresh waits until the
	// notifications pause for a tenth of it (or for twice it after the
	// first), and fetches every list announced meanwhile once, so that a
	// server that floods notifications costs at most one refresh per
	// delay (docs/reference/mcp.md, "Lists that change"). 0 means 1 s.
	ListChangedDelay time.Duration
	// Roots are the roots offered to the server (roots/list); nil declares
	// no roots capability.
	Roots []Root
	// Elicit answers the server's elicitation/create (form and URL mode,
	// docs/reference/mcp.md, "Elicitation"); nil declares no elicitation
	// capability. It runs on a goroutine of its own and may block until
	// the user answers or ctx ends (the server cancelled, or the
	// connection closed).
	Elicit func(ctx context.Context, req elicit.Request) (elicit.Result, error)
	// OnLog receives the server's notifications/message, on the
	// connection's reading goroutine: it must return quickly.
	OnLog func(LogMessage)
	// OnElicitationComplete is told of notifications/elicitation/complete
	// for a URL elicitation this client accepted; others are ignored.
	OnElicitationComplete func(id string)
	// OnDiagnostic receives problems that fail no call: refused messages,
	// tool definitions left out, a failed background refresh. It may be
	// called from several goroutines.
	OnDiagnostic func(error)
}

// CallOptions adjusts one tools/call.
type CallOptions struct {
	// Progress, when set, asks for progress notifications (a progressToken
	// in _meta) and receives them in order, before the call returns. It
	// runs on the connection's reading goroutine: it must return quickly
	// and must not call the Client.
	Progress func(Progress)
}

// Client is a connection to one MCP server. Its methods are safe for
// concurrent use.
type Client struct {
	t        Transport
	http     httpSession // nil unless t is Streamable HTTP
	conn     *jsonrpc.Conn
	opts     ClientOptions
	info     Implementation
	versions []string

	ctx    context.Context // the client's lifetime, for background work
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.Mutex
	closed     bool
	ready      bool // negotiation finished
	version    string
	stateless  bool
	gen        int // bumped by every new session (re-initialisation)
	server     ServerInfo
	tools      []Tool
	toolsValid bool
	headerMaps map[string][]paramHeader // x-mcp-header paths per tool
	progress   map[jsonrpc.ID]func(Progress)
	nextToken  int64
	listenID   jsonrpc.ID
	dirty      listKind            // lists announced changed, not fetched yet
	windowOpen time.Time           // the first announcement of those
	lastNote   time.Time           // the latest one
	urlElicits map[string]struct{} // accepted URL elicitations, for their completion

	reinitMu  sync.Mutex
	refresh   chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// errTimeoutCause marks the contexts of Timeout, to tell them from the
// caller's own deadline.
var errTimeoutCause = errors.New("mcp: client timeout")

// Connect opens a session with the server on t: it negotiates the newest
// revision both sides speak and performs the handshake that revision
// needs. Connect owns t from then on: Close closes it, and so does a failed
// Connect.
func Connect(ctx context.Context, t Transport, opts ClientOptions) (*Client, error) {
	versions := opts.Versions
	if versions == nil {
		versions = SupportedVersions()
	}
	for _, v := range versions {
		if !knownVersion(v) {
			t.Close()
			return nil, fmt.Errorf("mcp: revision %q is not supported by this client", quote.V(v))
		}
	}
	info := opts.ClientInfo
	if info.Name == "" {
		info = Implementation{Name: "agent", Version: "dev"}
	}
	c := &Client{
		t:          t,
		opts:       opts,
		info:       info,
		versions:   slices.Clone(versions),
		progress:   make(map[jsonrpc.ID]func(Progress)),
		headerMaps: make(map[string][]paramHeader),
		urlElicits: make(map[string]struct{}),
		refresh:    make(chan struct{}, 1),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	var st jsonrpc.Stream = t
	hs, isHTTP := t.(httpSession)
	if !isHTTP {
		// A server of 2025-03-26 may send JSON-RPC batches, which that
		// revision requires the client to accept (basic/index "Batching");
		// the HTTP transport splits them itself, as it must see the
		// response to each request.
		st = jsonrpc.NewBatchStream(t, jsonrpc.BatchOptions{Allow: func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return batches(c.version)
		}})
	}
	c.conn = jsonrpc.NewConn(st, jsonrpc.ConnOptions{
		Handler:  jsonrpc.HandlerFunc(c.handle),
		OnCancel: c.onCancel,
		OnError:  c.diag,
	})
	if isHTTP {
		c.http = hs
		hs.setLost(func(id jsonrpc.ID, err error) { c.conn.Fail(id, err) })
	}
	if err := c.negotiate(ctx); err != nil {
		c.Close()
		return nil, err
	}
	c.mu.Lock()
	c.ready = true
	listen := c.stateless && c.server.Capabilities.announces() != 0
	c.mu.Unlock()
	c.wg.Add(1)
	go c.refresher()
	if listen {
		c.wg.Add(1)
		go c.listen()
	}
	return c, nil
}

// ServerInfo returns what the server said about itself while connecting.
func (c *Client) ServerInfo() ServerInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.server
}

// ProtocolVersion returns the negotiated revision.
func (c *Client) ProtocolVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// Done is closed when the connection has ended (Close, or the server went
// away); Err then says why.
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// Err returns why the connection ended, nil while it is open.
func (c *Client) Err() error { return c.conn.Err() }

// Close ends the session: background work stops, and the transport closes
// (a stdio server is shut down, an HTTP session is deleted). It waits for
// the client's goroutines and is idempotent.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.cancel()
		c.closeErr = c.conn.Close()
		c.wg.Wait()
	})
	return c.closeErr
}

func (c *Client) diag(err error) {
	if c.opts.OnDiagnostic != nil {
		c.opts.OnDiagnostic(err)
	}
}

// goOwned runs f on a goroutine the client waits for on Close, unless the
// client is closing.
func (c *Client) goOwned(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
}

func (c *Client) setProtocol(version string, stateless bool) {
	c.mu.Lock()
	c.version, c.stateless = version, stateless
	c.mu.Unlock()
	if c.http != nil {
		c.http.setProtocol(version, stateless)
	}
}

// negotiate picks the revision (2026-07-28 basic/versioning): with a
// stateless revision on offer it probes with server/discover; a server
// that answers with a DiscoverResult or a recognised modern error is
// stateless, anything else is taken for a session-based server, which gets
// the initialize handshake of the revisions 2024-11-05 to 2025-11-25.
func (c *Client) negotiate(ctx context.Context) error {
	var modernVs, legacyVs []string
	for _, v := range c.versions {
		if modern(v) {
			modernVs = append(modernVs, v)
		} else {
			legacyVs = append(legacyVs, v)
		}
	}
	if len(modernVs) > 0 {
		done, err := c.discover(ctx, modernVs, legacyVs)
		if done || err != nil {
			return err
		}
	}
	if len(legacyVs) == 0 {
		return &VersionError{Offered: c.versions}
	}
	return c.initialize(ctx, legacyVs)
}

// discover runs the server/discover probe. It returns done when the
// session is set up with a stateless revision, and neither done nor an
// error when the client should fall back to initialize.
func (c *Client) discover(ctx context.Context, modernVs, legacyVs []string) (done bool, err error) {
	version := modernVs[0]
	for attempt := 0; attempt < 2; attempt++ {
		c.setProtocol(version, true)
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if c.http == nil {
			d := c.opts.DiscoverTimeout
			if d <= 0 {
				d = 5 * time.Second
			}
			pctx, cancel = context.WithTimeout(ctx, d)
		} else if c.opts.Timeout > 0 {
			pctx, cancel = context.WithTimeoutCause(ctx, c.opts.Timeout, errTimeoutCause)
		}
		raw, err := c.conn.Call(withRequestHeaders(pctx, &requestHeaders{}), "server/discover", metaOnlyParams{Meta: c.modernMeta(version, nil)})
		cancel()
		if err == nil {
			var res discoverResult
			if json.Unmarshal(raw, &res) != nil || res.SupportedVersions == nil || checkResultType(res.ResultType) != nil {
				// Not a DiscoverResult: a server that answers anything with
				// an empty result is not stateless.
				return c.fallBack(legacyVs, fmt.Errorf("%w: server/discover", ErrInvalidResult))
			}
			if v := newestCommon(modernVs, res.SupportedVersions); v != "" {
				c.setProtocol(v, true)
				c.mu.Lock()
				c.server = ServerInfo{ProtocolVersion: v, Implementation: res.ServerInfo, Capabilities: parseCapabilities(res.Capabilities), Instructions: res.Instructions}
				c.mu.Unlock()
				return true, nil
			}
			if newestCommon(legacyVs, res.SupportedVersions) != "" {
				return false, nil
			}
			return false, &VersionError{Offered: c.versions, Supported: res.SupportedVersions}
		}
		if ctx.Err() != nil {
			return false, context.Cause(ctx)
		}
		if errors.Is(err, errTimeoutCause) || errors.Is(context.Cause(pctx), errTimeoutCause) {
			return false, fmt.Errorf("%w: server/discover", ErrTimeout)
		}
		var pe *ProtocolError
		var he *HTTPStatusError
		switch {
		case errors.As(err, &pe) && pe.Code == CodeUnsupportedProtocolVersion:
			var data unsupportedVersionData
			json.Unmarshal(pe.Data, &data) //nolint:errcheck // missing data means no list
			// "The client SHOULD select a mutually supported version from
			// the supported list and retry the request" (2026-07-28
			// basic/versioning), once, even when the list names the version
			// just refused.
			if v := newestCommon(modernVs, data.Supported); v != "" && attempt == 0 {
				version = v
				continue
			}
			if newestCommon(legacyVs, data.Supported) != "" {
				return false, nil
			}
			return false, &VersionError{Offered: c.versions, Supported: data.Supported}
		case errors.As(err, &pe) && (pe.Code == CodeHeaderMismatch || pe.Code == CodeMissingRequiredClientCapability):
			// A stateless server that refused the request itself.
			return false, fmt.Errorf("mcp: server/discover: %w", err)
		case errors.As(err, &he) && (he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden):
			return false, fmt.Errorf("mcp: server/discover: %w", err)
		case errors.Is(err, ErrClosed), errors.As(err, new(*TransportError)):
			return false, fmt.Errorf("mcp: server/discover: %w", err)
		}
		// Any other error, a non-modern HTTP refusal, or silence on stdio:
		// a session-based server.
		return c.fallBack(legacyVs, err)
	}
	return false, &VersionError{Offered: c.versions}
}

func (c *Client) fallBack(legacyVs []string, cause error) (bool, error) {
	if len(legacyVs) == 0 {
		return false, fmt.Errorf("%w: the server does not answer server/discover as a stateless server: %w", ErrUnsupportedVersion, cause)
	}
	return false, nil
}

// initialize runs the handshake of the session-based revisions (2025-11-25
// basic/lifecycle "Initialization", the same since 2024-11-05): offer the
// newest, accept the server's choice when the client speaks it (an older
// one included: the server "MUST respond with another protocol version it
// supports"), then notifications/initialized.
func (c *Client) initialize(ctx context.Context, legacyVs []string) error {
	c.setProtocol("", false)
	ictx, cancel := ctx, context.CancelFunc(func() {})
	if c.opts.Timeout > 0 {
		ictx, cancel = context.WithTimeoutCause(ctx, c.opts.Timeout, errTimeoutCause)
	}
	defer cancel()
	raw, err := c.conn.Call(ictx, "initialize", initializeParams{ProtocolVersion: legacyVs[0], ClientInfo: c.info, Capabilities: c.capabilities()})
	if err != nil {
		if errors.Is(context.Cause(ictx), errTimeoutCause) && ctx.Err() == nil {
			return fmt.Errorf("%w: initialize", ErrTimeout)
		}
		return fmt.Errorf("mcp: initialize: %w", err)
	}
	var res initializeResult
	if err := json.Unmarshal(raw, &res); err != nil || res.ProtocolVersion == "" {
		return fmt.Errorf("%w: initialize result without a protocol version", ErrInvalidResult)
	}
	if !slices.Contains(legacyVs, res.ProtocolVersion) {
		// "If the client does not support the version in the server's
		// response, it SHOULD disconnect."
		return &VersionError{Offered: c.versions, Chosen: res.ProtocolVersion}
	}
	c.setProtocol(res.ProtocolVersion, false)
	c.mu.Lock()
	c.server = ServerInfo{ProtocolVersion: res.ProtocolVersion, Implementation: res.ServerInfo, Capabilities: parseCapabilities(res.Capabilities), Instructions: res.Instructions}
	c.mu.Unlock()
	if err := c.conn.Notify(ictx, "notifications/initialized", nil); err != nil {
		return fmt.Errorf("mcp: notifications/initialized: %w", err)
	}
	if c.http != nil {
		c.http.sessionStarted()
	}
	return nil
}

// reinitialize starts a new session after a 404 (2025-11-25 transports
// "Session Management" item 4), once for all the requests that met it.
func (c *Client) reinitialize(ctx context.Context, gen int) error {
	c.reinitMu.Lock()
	defer c.reinitMu.Unlock()
	c.mu.Lock()
	current := c.gen
	hadTools := c.toolsValid
	c.mu.Unlock()
	if current != gen {
		return nil // another request already did it
	}
	c.http.resetSession()
	var legacyVs []string
	for _, v := range c.versions {
		if !modern(v) {
			legacyVs = append(legacyVs, v)
		}
	}
	if err := c.initialize(ctx, legacyVs); err != nil {
		return fmt.Errorf("mcp: starting a new session after the server ended the old one: %w", err)
	}
	c.mu.Lock()
	c.gen++
	c.toolsValid = false
	c.mu.Unlock()
	if hadTools {
		// The new session's lists may differ from the old one's.
		c.listChanged(listTools | listResources | listPrompts)
	}
	return nil
}

func parseCapabilities(raw json.RawMessage) ServerCapabilities {
	var caps ServerCapabilities
	json.Unmarshal(raw, &caps) //nolint:errcheck // an unreadable object declares nothing
	caps.Raw = raw
	return caps
}

func newestCommon(ours, theirs []string) string {
	for _, v := range ours {
		if slices.Contains(theirs, v) {
			return v
		}
	}
	return ""
}

func checkResultType(rt string) error {
	switch rt {
	case "", "complete":
		// Earlier revisions send no resultType: "complete" (2026-07-28
		// basic/index "ResultType").
		return nil
	case "input_required":
		return ErrInputRequired
	}
	return fmt.Errorf("%w: unknown resultType %q", ErrInvalidResult, quote.V(rt))
}

// modernMeta is the _meta every stateless request carries.
func (c *Client) modernMeta(version string, token *jsonrpc.ID) *requestMeta {
	return &requestMeta{ProgressToken: token, ProtocolVersion: version, ClientInfo: &c.info, ClientCapabilities: &struct{}{}}
}

type callState struct {
	version   string
	stateless bool
	gen       int
}

func (c *Client) state() callState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return callState{c.version, c.stateless, c.gen}
}

// metaParams are request params with a _meta the client fills in.
type metaParams interface{ setMeta(*requestMeta) }

func (p *listParams) setMeta(m *requestMeta)      { p.Meta = m }
func (p *callToolParams) setMeta(m *requestMeta)  { p.Meta = m }
func (p *uriParams) setMeta(m *requestMeta)       { p.Meta = m }
func (p *getPromptParams) setMeta(m *requestMeta) { p.Meta = m }

// callOpts adjusts call.
type callOpts struct {
	progress func(Progress)
	// headers computes the per-request HTTP headers (stateless HTTP).
	headers func() *requestHeaders
	// onHeaderMismatch runs before the one retry of a request refused with
	// HeaderMismatch (2026-07-28: "the client SHOULD call tools/list to
	// check for changes to the tool's inputSchema, then retry").
	onHeaderMismatch func(context.Context) error
	// idempotent requests are re-issued once when a stateless server's
	// stream broke (2026-07-28 changelog item 9).
	idempotent bool
}

// call sends one request with the metadata the revision needs and returns
// its raw result. It retries once after a 404 session loss (new session),
// an UnsupportedProtocolVersion naming another stateless revision, a
// HeaderMismatch, or a lost stream of an idempotent request.
func (c *Client) call(ctx context.Context, method string, p metaParams, o callOpts) (json.RawMessage, error) {
	for attempt := 0; ; attempt++ {
		st := c.state()
		var token *jsonrpc.ID
		if o.progress != nil {
			c.mu.Lock()
			c.nextToken++
			id := jsonrpc.Int64ID(c.nextToken)
			token = &id
			c.progress[id] = o.progress
			c.mu.Unlock()
		}
		switch {
		case st.stateless:
			p.setMeta(c.modernMeta(st.version, token))
		case token != nil:
			p.setMeta(&requestMeta{ProgressToken: token})
		default:
			p.setMeta(nil)
		}
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if c.opts.Timeout > 0 {
			cctx, cancel = context.WithTimeoutCause(ctx, c.opts.Timeout, errTimeoutCause)
		}
		if st.stateless && o.headers != nil {
			cctx = withRequestHeaders(cctx, o.headers())
		}
		raw, err := c.conn.Call(cctx, method, p)
		timedOut := errors.Is(context.Cause(cctx), errTimeoutCause)
		cancel()
		if token != nil {
			c.mu.Lock()
			delete(c.progress, *token)
			c.mu.Unlock()
		}
		if err == nil {
			return raw, nil
		}
		if timedOut && ctx.Err() == nil {
			return nil, fmt.Errorf("%w after %v: %s", ErrTimeout, c.opts.Timeout, method)
		}
		var pe *ProtocolError
		if st.stateless && attempt > 0 && errors.As(err, &pe) && pe.Code == CodeUnsupportedProtocolVersion {
			var data unsupportedVersionData
			json.Unmarshal(pe.Data, &data) //nolint:errcheck // missing data means no list
			return nil, &VersionError{Offered: c.versions, Supported: data.Supported}
		}
		if attempt > 0 || ctx.Err() != nil {
			return nil, err
		}
		switch {
		case errors.Is(err, ErrSessionExpired) && !st.stateless && c.http != nil:
			if rerr := c.reinitialize(ctx, st.gen); rerr != nil {
				return nil, rerr
			}
			continue
		case st.stateless && errors.As(err, &pe) && pe.Code == CodeUnsupportedProtocolVersion:
			var data unsupportedVersionData
			json.Unmarshal(pe.Data, &data) //nolint:errcheck // missing data means no list
			var modernVs []string
			for _, v := range c.versions {
				if modern(v) {
					modernVs = append(modernVs, v)
				}
			}
			v := newestCommon(modernVs, data.Supported)
			if v == "" {
				return nil, &VersionError{Offered: c.versions, Supported: data.Supported}
			}
			c.setProtocol(v, true)
			continue
		case st.stateless && errors.As(err, &pe) && pe.Code == CodeHeaderMismatch && o.onHeaderMismatch != nil:
			if rerr := o.onHeaderMismatch(ctx); rerr != nil {
				return nil, err
			}
			continue
		case st.stateless && o.idempotent && errors.Is(err, ErrStreamLost):
			continue
		}
		return nil, err
	}
}

// onCancel tells the server that the client gave up on a request
// (basic/utilities/cancellation): notifications/cancelled on stdio and on
// session-based HTTP; on stateless HTTP closing the request's stream, which
// ending its context already did, is the signal. initialize is never
// cancelled, nor the probe that precedes it (a session-based server may
// accept nothing before initialize).
func (c *Client) onCancel(id jsonrpc.ID, method string) {
	c.mu.Lock()
	ready, stateless := c.ready, c.stateless
	c.mu.Unlock()
	if method == "initialize" || !ready || (stateless && c.http != nil) {
		return
	}
	c.goOwned(func() {
		ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
		defer cancel()
		if err := c.conn.Notify(ctx, "notifications/cancelled", cancelledParams{RequestID: id, Reason: "the client gave up on the request"}); err != nil && c.ctx.Err() == nil {
			c.diag(fmt.Errorf("mcp: sending notifications/cancelled: %w", err))
		}
	})
}

// handle answers the server's requests and takes its notifications.
func (c *Client) handle(ctx context.Context, m *jsonrpc.Message) (any, error) {
	if m.Kind() == jsonrpc.KindRequest {
		switch m.Method {
		case "ping":
			return struct{}{}, nil // basic/utilities/ping: an empty result
		case "roots/list":
			return c.listRoots()
		case "elicitation/create":
			return c.elicit(ctx, m.Params)
		case "sampling/createMessage":
			return nil, errSamplingRefused
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not supported by this client: " + m.Method}
	}
	switch m.Method {
	case "notifications/progress":
		var p progressParams
		if err := json.Unmarshal(m.Params, &p); err != nil || !p.ProgressToken.IsValid() {
			c.diag(fmt.Errorf("mcp: malformed notifications/progress"))
			return nil, nil
		}
		c.mu.Lock()
		f := c.progress[p.ProgressToken]
		c.mu.Unlock()
		// A token this client never issued (or no longer waits for) is
		// ignored.
		if f != nil {
			pr := Progress{Progress: p.Progress, Message: p.Message}
			if p.Total != nil {
				pr.Total = *p.Total
			}
			f(pr)
		}
	case "notifications/tools/list_changed":
		c.listChanged(listTools)
	case "notifications/resources/list_changed":
		c.listChanged(listResources)
	case "notifications/prompts/list_changed":
		c.listChanged(listPrompts)
	case "notifications/message":
		c.logMessage(m.Params)
	case "notifications/elicitation/complete":
		c.elicitationComplete(m.Params)
	case "notifications/cancelled":
		// A stateless server tears down a subscriptions/listen stream
		// this way (2026-07-28 patterns/subscriptions "Cancellation").
		var p cancelledParams
		if json.Unmarshal(m.Params, &p) == nil {
			c.mu.Lock()
			listen := c.listenID
			c.mu.Unlock()
			if listen.IsValid() && p.RequestID == listen {
				c.conn.Fail(listen, errors.New("mcp: the server ended the subscription"))
			}
		}
	}
	return nil, nil
}

// listen holds a subscriptions/listen stream open for the list changes the
// server announces (2026-07-28 patterns/subscriptions), reopening it with a backoff when it
// ends, until the client closes or the server does not offer it.
func (c *Client) listen() {
	defer c.wg.Done()
	backoff := time.Second
	for {
		st := c.state()
		var p listenParams
		c.mu.Lock()
		kinds := c.server.Capabilities.announces()
		c.mu.Unlock()
		p.Notifications.ToolsListChanged = kinds&listTools != 0
		p.Notifications.ResourcesListChanged = kinds&listResources != 0
		p.Notifications.PromptsListChanged = kinds&listPrompts != 0
		p.Meta = c.modernMeta(st.version, nil)
		m, err := jsonrpc.NewRequest(c.conn.NextID(), "subscriptions/listen", p)
		if err != nil {
			return
		}
		c.mu.Lock()
		c.listenID = m.ID
		c.mu.Unlock()
		started := time.Now()
		_, err = c.conn.CallMessage(withRequestHeaders(c.ctx, &requestHeaders{}), m)
		if c.ctx.Err() != nil || errors.Is(err, ErrClosed) {
			return
		}
		var pe *ProtocolError
		if errors.As(err, &pe) && (pe.Code == jsonrpc.CodeMethodNotFound || pe.Code == jsonrpc.CodeInvalidParams) {
			c.diag(fmt.Errorf("mcp: the server offers no subscriptions/listen: %w", err))
			return
		}
		if err != nil {
			c.diag(fmt.Errorf("mcp: subscriptions/listen ended: %w", err))
		}
		if time.Since(started) > time.Minute {
			backoff = time.Second
		}
		if !sleepCtx(c.ctx, backoff) {
			return
		}
		backoff = min(2*backoff, time.Minute)
	}
}
