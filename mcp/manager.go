package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"agent/config"
	"agent/internal/elicit"
	"agent/internal/netguard"
	"agent/internal/quote"
	"agent/mcp/oauth"
)

// The connection manager: which servers of the settings connect, and when
// (docs/reference/mcp.md, "What connects and when"), their tools under the
// names the model sees (docs/reference/mcp.md, "Tool naming"), the /mcp
// commands, and the end of every connection with the session.

// StdioAuthority lets an embedder start one stdio server
// (docs/reference/mcp.md, "What connects and when", rule 3): the definition
// must name exactly this command, these arguments, this environment and
// this working directory, after template expansion. A definition cannot
// give itself the right to spawn a process: the authority comes from code,
// never from settings.
type StdioAuthority struct {
	Command string
	Args    []string
	Env     map[string]string // the complete environment of the process
	Cwd     string            // "" matches a definition without cwd
}

// Allows reports whether d is exactly what the authority names.
func (a StdioAuthority) Allows(d *config.ServerDef) bool {
	if d.Type != "stdio" || d.Refused() || d.Untrusted {
		return false
	}
	if d.Command.Value != a.Command || d.Cwd.Value != a.Cwd || len(d.Args) != len(a.Args) || len(d.Env) != len(a.Env) {
		return false
	}
	for i, t := range d.Args {
		if t.Value != a.Args[i] {
			return false
		}
	}
	for _, nv := range d.Env {
		if v, ok := a.Env[nv.Name]; !ok || v != nv.Value.Value {
			return false
		}
	}
	return true
}

// maskedError shows an error with the parts of a definition that came from
// credential-shaped variables masked (docs/reference/settings.md,
// "Templates"), and still unwraps to it.
type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

// secretsOf lists what must never be shown of a definition: each expanded
// value whose display form differs (it holds a credential), with its
// escaped forms as a URL may print them, mapped to the display form.
func secretsOf(d *config.ServerDef) [][2]string {
	var out [][2]string
	pair := func(secret, shown string) {
		out = append(out, [2]string{secret, shown})
		for _, esc := range []string{url.QueryEscape(secret), url.PathEscape(secret)} {
			if esc != secret {
				out = append(out, [2]string{esc, shown})
			}
		}
	}
	add := func(t config.Template) {
		if t.Value == "" || t.Value == t.Display {
			return
		}
		pair(t.Value, t.Display)
		// The variable values themselves, for a message that shows one
		// without the rest.
		for _, sec := range secretParts(t.Value, t.Display) {
			pair(sec, config.Mask)
		}
	}
	add(d.Command)
	add(d.URL)
	add(d.Cwd)
	for _, a := range d.Args {
		add(a)
	}
	for _, nv := range d.Env {
		add(nv.Value)
	}
	for _, nv := range d.Headers {
		add(nv.Value)
	}
	return out
}

// secretParts recovers the masked parts of value: display is value with
// each of them replaced by config.Mask.
func secretParts(value, display string) []string {
	pieces := strings.Split(display, config.Mask)
	if len(pieces) < 2 || !strings.HasPrefix(value, pieces[0]) {
		return nil
	}
	var out []string
	pos := len(pieces[0])
	for i, p := range pieces[1:] {
		var at int
		if i == len(pieces)-2 {
			if !strings.HasSuffix(value, p) || len(value)-len(p) < pos {
				return out
			}
			at = len(value) - len(p)
		} else {
			k := strings.Index(value[pos:], p)
			if k < 0 || p == "" {
				return out
			}
			at = pos + k
		}
		if sec := value[pos:at]; len(sec) >= 4 { // shorter ones would mask ordinary text
			out = append(out, sec)
		}
		pos = at + len(p)
	}
	return out
}

// mask hides a definition's secrets in err.
func mask(d *config.ServerDef, err error) error {
	if err == nil || d == nil {
		return err
	}
	msg := err.Error()
	masked := msg
	for _, p := range secretsOf(d) {
		masked = strings.ReplaceAll(masked, p[0], p[1])
	}
	if masked == msg {
		return err
	}
	return &maskedError{msg: masked, err: err}
}

// ErrCannotConnect wraps every reason a server is not connected.
var ErrCannotConnect = errors.New("cannot connect")

// ManagerOptions configure a Manager.
type ManagerOptions struct {
	Settings  *config.Settings
	Workspace string // the workspace's real path (approval fingerprints, stdio cwd)
	// ApprovalStore keeps decisions beyond the process (an embedder's
	// approval store); nil keeps them in memory (docs/reference/mcp.md,
	// "What connects and when", rule 1).
	ApprovalStore ApprovalStore
	// StdioAuthorities by server name (an embedder's mcpStdioAuthorities).
	StdioAuthorities map[string]StdioAuthority
	// Credentials is the OAuth credential store; nil: no server is
	// signed in.
	Credentials *oauth.Store
	// OAuthTransport wraps base with the bearer token of a signed-in
	// server (refreshing it); nil: OAuth servers cannot connect.
	OAuthTransport func(d *config.ServerDef, base http.RoundTripper) (http.RoundTripper, error)
	// Policy is the outbound address policy (docs/reference/mcp.md,
	// "Address policy"), applied at dial time to every remote connection.
	Policy netguard.Policy
	// HTTPTransport replaces the policy-checked base transport (tests
	// with a TLS test server); nil: netguard's.
	HTTPTransport http.RoundTripper
	// Helpers runs header helpers.
	Helpers HelperOptions
	// Sandbox confines stdio servers (and, through Helpers, header
	// helpers); nil runs them unconfined (docs/reference/mcp.md,
	// "Sandbox").
	Sandbox *Sandbox
	// ClientInfo names this client to servers.
	ClientInfo Implementation
	// ConnectTimeout bounds one connection attempt; 0 means 30 s.
	ConnectTimeout time.Duration
	// OnChange is called after the set of tools, resources or prompts
	// changed (a server connected, dropped, or announced new lists). It
	// may be called from several goroutines; it must not block.
	OnChange func()
	// Elicit answers a server's elicitation/create, with Request.Server
	// set (docs/reference/mcp.md, "Elicitation"); nil: servers are not
	// offered elicitation.
	Elicit func(ctx context.Context, req elicit.Request) (elicit.Result, error)
	// OnLog receives the servers' log messages (notifications/message),
	// which belong in the debug log, never the transcript; nil drops them.
	OnLog func(server string, m LogMessage)
	// ListChangedDelay is each client's ClientOptions.ListChangedDelay.
	ListChangedDelay time.Duration
	// OnDiagnostic receives problems worth telling the user, already free
	// of secrets (no value of a header, an environment variable or a
	// secret; docs/reference/mcp.md, "Status lines"). It may be called from
	// several goroutines.
	OnDiagnostic func(string)
	// Now is the clock for sign-in states; nil: time.Now.
	Now func() time.Time
}

// Manager owns the MCP connections of one session. Safe for concurrent
// use.
type Manager struct {
	opts      ManagerOptions
	approvals *Approvals

	mu      sync.Mutex
	conns   map[string]*managedConn // connected servers by name
	named   map[string]ServerTool   // model name → tool
	order   []string                // model names, sorted
	prompts []ServerPrompt          // by command name
	closed  bool
	pending map[string]bool // connecting now
}

type managedConn struct {
	client    *Client
	tools     []Tool
	resources []Resource
	templates []ResourceTemplate
	prompts   []Prompt
}

// ServerTool is one server tool as the model sees it.
type ServerTool struct {
	Name   string // the model's name, <server>__<tool> (docs/reference/mcp.md, "Tool naming")
	Server string
	Tool   Tool
}

// NewManager returns a manager; nothing connects until ConnectApproved
// or Connect.
func NewManager(opts ManagerOptions) *Manager {
	if opts.Settings == nil {
		opts.Settings = &config.Settings{}
	}
	return &Manager{
		opts:      opts,
		approvals: NewApprovals(opts.Workspace, opts.ApprovalStore),
		conns:     map[string]*managedConn{},
		named:     map[string]ServerTool{},
		pending:   map[string]bool{},
	}
}

// Approvals is the approval state machine the manager consults.
func (m *Manager) Approvals() *Approvals { return m.approvals }

func (m *Manager) diag(format string, args ...any) {
	if m.opts.OnDiagnostic != nil {
		m.opts.OnDiagnostic(fmt.Sprintf(format, args...))
	}
}

func (m *Manager) def(name string) (*config.ServerDef, error) {
	d := m.opts.Settings.Servers[name]
	if d == nil {
		return nil, fmt.Errorf("no MCP server named %q (see /mcp)", quote.V(name))
	}
	return d, nil
}

// Status is the /mcp status (docs/reference/mcp.md, "Status lines"): one
// line per server, as `agent mcp list` prints them; a connected server's
// reason says how many tools it brought.
func (m *Manager) Status() []StatusLine {
	now := time.Now()
	if m.opts.Now != nil {
		now = m.opts.Now()
	}
	lines := Status(m.opts.Settings, StatusOptions{
		Approvals: m.approvals, Credentials: m.opts.Credentials, Policy: m.opts.Policy, Now: now,
		StdioAuthorized: func(d *config.ServerDef) bool {
			a, ok := m.opts.StdioAuthorities[d.Name]
			return ok && a.Allows(d)
		},
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, l := range lines {
		if c := m.conns[l.Name]; c != nil {
			n := 0
			for _, t := range m.named {
				if t.Server == l.Name {
					n++
				}
			}
			lines[i].Reason = fmt.Sprintf("connected, %s, %s, %s, %s, protocol %s", counted(n, "tool"), counted(len(c.resources), "resource"),
				counted(len(c.templates), "resource template"), counted(len(c.prompts), "prompt"), c.client.ProtocolVersion())
		}
	}
	return lines
}

// counted is "1 tool", "3 tools".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Approve approves a server for this session (/mcp approve). It does not
// connect it (docs/reference/mcp.md, "What connects and when", rule 2).
func (m *Manager) Approve(name string) error {
	d, err := m.def(name)
	if err != nil {
		return err
	}
	return m.approvals.Approve(d)
}

// Reject refuses a server; a connected one is disconnected.
func (m *Manager) Reject(name string) error {
	d, err := m.def(name)
	if err != nil {
		return err
	}
	if err := m.approvals.Reject(d); err != nil {
		return err
	}
	m.disconnect(name)
	return nil
}

// Revoke withdraws an approval; a connected server is disconnected and
// its tools leave the model's list.
func (m *Manager) Revoke(name string) error {
	d, err := m.def(name)
	if err != nil {
		return err
	}
	if err := m.approvals.Revoke(d); err != nil {
		return err
	}
	m.disconnect(name)
	return nil
}

// ConnectApproved connects, concurrently, every approved server that can
// connect at startup: with an approval store or stdio authorities from an
// embedder (docs/reference/mcp.md, "What connects and when", rule 3).
// Failures are diagnostics; the session starts regardless.
func (m *Manager) ConnectApproved(ctx context.Context) {
	var wg sync.WaitGroup
	for _, name := range m.opts.Settings.ServerNames() {
		d := m.opts.Settings.Servers[name]
		if m.approvals.State(d) != Approved {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Connect(ctx, name); err != nil {
				m.diag("MCP server %s: %v", name, err)
			}
		}()
	}
	wg.Wait()
}

// Connect connects one approved server and offers its tools. It is the only
// way a server connects inside a running session, after an OAuth sign-in
// (docs/reference/mcp.md, "What connects and when", rule 2), or at startup
// for an embedder.
func (m *Manager) Connect(ctx context.Context, name string) error {
	d, err := m.def(name)
	if err != nil {
		return err
	}
	return mask(d, m.connect(ctx, d))
}

func (m *Manager) connect(ctx context.Context, d *config.ServerDef) error {
	name := d.Name
	if st := m.approvals.State(d); st != Approved {
		return fmt.Errorf("%w: %s is %s; approve it first with /mcp approve %s", ErrCannotConnect, name, st, name)
	}
	m.mu.Lock()
	switch {
	case m.closed:
		m.mu.Unlock()
		return fmt.Errorf("%w: the session is ending", ErrCannotConnect)
	case m.conns[name] != nil:
		m.mu.Unlock()
		return nil
	case m.pending[name]:
		m.mu.Unlock()
		return fmt.Errorf("%w: %s is connecting already", ErrCannotConnect, name)
	}
	m.pending[name] = true
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.pending, name)
		m.mu.Unlock()
	}()

	t, err := m.transport(ctx, d)
	if err != nil {
		return err
	}
	timeout := m.opts.ConnectTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var c *Client
	// update applies a refreshed list to the connection, if it is still
	// this client's.
	update := func(f func(sc *managedConn)) {
		m.mu.Lock()
		if sc := m.conns[name]; sc != nil && sc.client == c {
			f(sc)
			m.renameLocked()
		}
		m.mu.Unlock()
		m.changed()
	}
	co := ClientOptions{
		ClientInfo: m.opts.ClientInfo,
		Timeout:    d.Timeout,
		OnToolsChanged: func(tools []Tool) {
			update(func(sc *managedConn) { sc.tools = tools })
		},
		OnResourcesChanged: func(res []Resource, tmpl []ResourceTemplate) {
			update(func(sc *managedConn) { sc.resources, sc.templates = res, tmpl })
		},
		OnPromptsChanged: func(prompts []Prompt) {
			update(func(sc *managedConn) { sc.prompts = prompts })
		},
		ListChangedDelay: m.opts.ListChangedDelay,
		OnDiagnostic:     func(err error) { m.diag("MCP server %s: %v", name, mask(d, err)) },
		Roots:            workspaceRoots(m.opts.Workspace),
	}
	if m.opts.Elicit != nil {
		co.Elicit = func(ctx context.Context, req elicit.Request) (elicit.Result, error) {
			req.Server = name
			return m.opts.Elicit(ctx, req)
		}
	}
	if m.opts.OnLog != nil {
		co.OnLog = func(l LogMessage) { m.opts.OnLog(name, l) }
	}
	c, err = Connect(cctx, t, co)
	if err != nil {
		return fmt.Errorf("connecting %s: %w", name, err)
	}
	tools, err := c.Tools(cctx)
	if err != nil {
		c.Close()
		return fmt.Errorf("listing the tools of %s: %w", name, err)
	}
	sc := &managedConn{client: c, tools: tools}
	m.listContent(cctx, sc)
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		c.Close()
		return fmt.Errorf("%w: the session is ending", ErrCannotConnect)
	}
	m.conns[name] = sc
	m.renameLocked()
	m.mu.Unlock()
	m.changed()
	// A server that goes away takes its tools with it.
	go func() {
		<-c.Done()
		m.mu.Lock()
		if sc := m.conns[name]; sc != nil && sc.client == c {
			delete(m.conns, name)
			m.renameLocked()
			closed := m.closed
			m.mu.Unlock()
			if !closed {
				m.diag("MCP server %s disconnected: %v", name, mask(d, c.Err()))
				m.changed()
			}
			return
		}
		m.mu.Unlock()
	}()
	return nil
}

// listContent fetches the resources, templates and prompts of a server
// that offers them. A failure is a diagnostic: the server's tools stay.
func (m *Manager) listContent(ctx context.Context, sc *managedConn) {
	c := sc.client
	caps := c.ServerInfo().Capabilities
	var err error
	if caps.Resources != nil {
		if sc.resources, err = c.ListResources(ctx); err == nil {
			sc.templates, err = c.ListResourceTemplates(ctx)
		}
		if err != nil {
			c.diag(fmt.Errorf("listing the resources: %w", err))
		}
	}
	if caps.Prompts != nil {
		if sc.prompts, err = c.ListPrompts(ctx); err != nil {
			c.diag(fmt.Errorf("listing the prompts: %w", err))
		}
	}
}

// workspaceRoots is the one root a server is offered: the workspace
// (docs/reference/mcp.md, "What a server may ask"). No workspace, no root.
func workspaceRoots(ws string) []Root {
	if ws == "" {
		return []Root{}
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(ws)}
	return []Root{{URI: u.String(), Name: filepath.Base(ws)}}
}

// transport builds the connection for a definition, or says why there is
// none (docs/reference/mcp.md, "What connects and when").
func (m *Manager) transport(ctx context.Context, d *config.ServerDef) (Transport, error) {
	switch d.Type {
	case "stdio":
		a, ok := m.opts.StdioAuthorities[d.Name]
		if !ok || !a.Allows(d) {
			return nil, fmt.Errorf("%w: %s", ErrCannotConnect, ReasonMissingAuthority)
		}
		env := make([]string, 0, len(a.Env))
		for _, k := range slices.Sorted(maps.Keys(a.Env)) {
			env = append(env, k+"="+a.Env[k])
		}
		dir := a.Cwd
		if dir == "" {
			dir = m.opts.Workspace
		}
		so := StdioOptions{Command: a.Command, Args: a.Args, Env: env, Dir: dir}
		if m.opts.Sandbox != nil {
			m.opts.Sandbox.confine(d, &so)
		}
		t, err := StartStdio(so)
		if err != nil {
			return nil, fmt.Errorf("%w: starting %s: %v", ErrCannotConnect, d.Name, err)
		}
		return t, nil
	case "http":
		if d.OAuth == nil {
			return nil, fmt.Errorf("%w: %s", ErrCannotConnect, ReasonNoOAuth)
		}
		if reason := addressReason(d, m.opts.Policy); reason != "" {
			return nil, fmt.Errorf("%w: %s", ErrCannotConnect, reason)
		}
		if m.opts.OAuthTransport == nil {
			return nil, fmt.Errorf("%w: sign-in required: run /mcp login %s", ErrCannotConnect, d.Name)
		}
		base := m.opts.HTTPTransport
		if base == nil {
			base = m.opts.Policy.Transport(netguard.ClientOptions{})
		}
		rt, err := m.opts.OAuthTransport(d, base)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCannotConnect, err)
		}
		h := http.Header{}
		for _, nv := range d.Headers {
			h.Set(nv.Name, nv.Value.Value)
		}
		if d.HeadersHelper != nil {
			hh, err := RunHeaderHelper(ctx, d, m.opts.Helpers)
			if err != nil {
				return nil, fmt.Errorf("%w: header helper: %v", ErrCannotConnect, err)
			}
			for k, v := range hh {
				h[k] = v
			}
		}
		client := &http.Client{Transport: rt, CheckRedirect: netguard.NoRedirects}
		t, err := NewHTTPTransport(HTTPOptions{URL: d.URL.Value, Header: h, Client: client})
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCannotConnect, err)
		}
		return t, nil
	case "sse", "ws":
		return nil, fmt.Errorf("%w: %s", ErrCannotConnect, ReasonTransport)
	}
	return nil, fmt.Errorf("%w: %s", ErrCannotConnect, ReasonInvalid)
}

// renameLocked recomputes the model's names over every connected server
// (collisions are settled across servers, docs/reference/mcp.md, "Tool
// naming").
func (m *Manager) renameLocked() {
	named, byRef := nameAllLocked(m, func(sc *managedConn) []Tool { return sc.tools }, func(t Tool) string { return t.Name })
	m.named = make(map[string]ServerTool, len(named))
	m.order = m.order[:0]
	for _, n := range named {
		m.named[n.Name] = ServerTool{Name: n.Name, Server: n.Server, Tool: byRef[n.ToolRef]}
		m.order = append(m.order, n.Name)
	}
	sort.Strings(m.order)
	m.namePromptsLocked()
}

// nameAllLocked names the items (tools, prompts) of every connected
// server as NameTools does, reports the collisions, and maps each name's
// reference back to its item.
func nameAllLocked[T any](m *Manager, items func(*managedConn) []T, name func(T) string) ([]NamedTool, map[ToolRef]T) {
	var refs []ToolRef
	byRef := map[ToolRef]T{}
	for server, sc := range m.conns {
		for _, it := range items(sc) {
			r := ToolRef{Server: server, Tool: name(it)}
			refs = append(refs, r)
			byRef[r] = it
		}
	}
	named, diags := NameTools(refs)
	for _, d := range diags {
		m.diag("%s", d)
	}
	return named, byRef
}

func (m *Manager) changed() {
	if m.opts.OnChange != nil {
		m.opts.OnChange()
	}
}

// ServerInstructions are the instructions the connected servers sent in
// their initialize results, by server name (docs/reference/runtime.md,
// "System prompt and instruction files"). Servers that sent none are left
// out.
func (m *Manager) ServerInstructions() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for name, sc := range m.conns {
		if text := sc.client.ServerInfo().Instructions; text != "" {
			out[name] = text
		}
	}
	return out
}

// Tools lists the connected servers' tools by model name, sorted.
func (m *Manager) Tools() []ServerTool {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ServerTool, 0, len(m.order))
	for _, n := range m.order {
		out = append(out, m.named[n])
	}
	return out
}

// Call calls a tool by its model name.
func (m *Manager) Call(ctx context.Context, name string, args json.RawMessage, opts CallOptions) (*CallToolResult, error) {
	m.mu.Lock()
	t, ok := m.named[name]
	var c *Client
	if ok {
		if sc := m.conns[t.Server]; sc != nil {
			c = sc.client
		}
	}
	m.mu.Unlock()
	if c == nil {
		return nil, fmt.Errorf("%w: the tool %s is no longer available", ErrCannotConnect, name)
	}
	d := m.opts.Settings.Servers[t.Server]
	call := func() (*CallToolResult, error) { return c.CallTool(ctx, t.Tool.Name, args, opts) }
	var r *CallToolResult
	var err error
	if m.opts.Sandbox.writesWorkspace(d) {
		// Landlock cannot refuse a change below the workspace: look
		// around each call (docs/sandbox.md, "Protected paths").
		r, err = m.opts.Sandbox.guardCall(t.Server, call)
	} else {
		r, err = call()
	}
	return r, mask(d, err)
}

// Disconnect ends one server's connection and withdraws its tools (a
// sign-out, or a new sign-in that replaces its token).
func (m *Manager) Disconnect(name string) { m.disconnect(name) }

func (m *Manager) disconnect(name string) {
	m.mu.Lock()
	sc := m.conns[name]
	delete(m.conns, name)
	if sc != nil {
		m.renameLocked()
	}
	m.mu.Unlock()
	if sc != nil {
		sc.client.Close()
		m.changed()
	}
}

// Close ends every connection: a stdio server's stdin is closed, then it
// gets SIGTERM, then SIGKILL, each after a wait. Idempotent.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	conns := m.conns
	m.conns = map[string]*managedConn{}
	m.named = map[string]ServerTool{}
	m.order = nil
	m.prompts = nil
	m.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, 0, len(conns))
	var emu sync.Mutex
	for name, sc := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := sc.client.Close(); err != nil {
				emu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
				emu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// StatusText renders status lines as /mcp prints them.
func StatusText(lines []StatusLine) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.String())
		b.WriteByte('\n')
	}
	return b.String()
}
