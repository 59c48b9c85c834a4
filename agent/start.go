package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"agent/agent/extend"
	"agent/agent/hooks"
	"agent/agent/tools"
	"agent/config"
	"agent/internal/netguard"
	"agent/internal/quote"
	"agent/mcp"
	"agent/mcp/oauth"
	"agent/providers"
)

// startSource is the SessionStart source of a start.
func startSource(opts StartOptions) string {
	switch {
	case opts.Source != "":
		return opts.Source
	case opts.Resume != "":
		return "resume"
	}
	return "startup"
}

// promptChoice is what replaces the static system prompt and what is
// appended to it: --system-prompt, else the systemPrompt setting; then
// --append-system-prompt, else the appendSystemPrompt setting (flags win;
// docs/reference/runtime.md, "System prompt and instruction files").
func promptChoice(opts StartOptions, s *config.Settings) (replace *string, appendText string) {
	switch {
	case opts.SystemPrompt != nil:
		replace = opts.SystemPrompt
	case s.Prompt.SystemPrompt != nil:
		v := s.Prompt.SystemPrompt.Value
		replace = &v
	}
	switch {
	case opts.AppendSystemPrompt != nil:
		appendText = *opts.AppendSystemPrompt
	case s.Prompt.AppendSystemPrompt != nil:
		appendText = s.Prompt.AppendSystemPrompt.Value
	}
	return replace, appendText
}

// DefaultSystemPrompt is a one-line system message for a session made
// with NewSession alone (the Agent API's callers, benchmarks). A
// workspace session sends the full framing instead: prompt.Static, the
// environment block and the context message.
const DefaultSystemPrompt = `You are agent, a coding assistant working in the user's terminal, in the workspace directory. Use the tools to read, search and change files and to run commands; keep answers short and exact.`

// UntrustedError refuses a headless start in a workspace that is not
// trusted (docs/reference/runtime.md, "Starting a session";
// docs/reference/cli.md, "Trust").
type UntrustedError struct{ Workspace string }

func (e *UntrustedError) Error() string {
	return fmt.Sprintf("the workspace %s is not trusted: run 'agent trust --yes' there first", e.Workspace)
}

// StartOptions are what a front end decides when it starts a workspace
// session. The zero value starts a session in the working directory with
// $HOME's settings, the provider of defaultModel, and nobody to answer
// permission prompts.
type StartOptions struct {
	Workspace string                      // "": the working directory
	Home      string                      // "": $HOME
	LookupEnv func(string) (string, bool) // nil: os.LookupEnv

	// The session flags (docs/reference/cli.md, "Session flags"). Invalid
	// values are errors; a caller that wants usage errors (exit 2) checks
	// them first.
	Provider, Model, BaseURL string
	PermissionMode           string  // "": settings' permissions.defaultMode, else default
	SystemPrompt             *string // --system-prompt; nil: the setting, else prompt.Static
	AppendSystemPrompt       *string // --append-system-prompt; nil: the setting, else nothing

	// Headless refuses an untrusted workspace instead of running with user
	// settings only (print mode, background sessions and mcp serve are
	// headless; docs/reference/runtime.md, "Starting a session").
	Headless bool
	// Prompter answers permission prompts; nil denies them naming the
	// rule that would allow the call.
	Prompter Prompter
	// Resume continues the stored session with this id: its conversation
	// is sent again and new turns append to its transcript.
	Resume string
	// Notice receives the startup diagnostics and later MCP notices, one
	// line each, unsanitised (the front end sanitises for its output). It
	// may be called from several goroutines. nil drops them.
	Notice func(string)

	// MCPApprovalStore keeps MCP approvals beyond the process (the
	// embedder's store; docs/reference/mcp.md, "What connects and when",
	// rule 3); nil keeps them in memory, for this session (rule 1).
	MCPApprovalStore mcp.ApprovalStore
	// MCPStdioAuthorities let named stdio servers start (rule 3); the
	// executable passes none.
	MCPStdioAuthorities map[string]mcp.StdioAuthority
	// NoMCPHandoff keeps every MCP call in its turn (print mode;
	// docs/reference/settings.md, "mcp").
	NoMCPHandoff bool
	// NoAutoCompact turns proactive compaction off (--no-auto-compact);
	// the settings' autoCompact: false does too.
	NoAutoCompact bool
	// SandboxMode overrides the settings' sandbox mode for this run
	// (--sandbox; docs/sandbox.md, "Modes"); "": the settings'.
	SandboxMode string
	// SandboxDenyRead are paths no confined command reads, besides the
	// settings' denyRead (mcp serve's token file).
	SandboxDenyRead []string
	// Agents are subagent definitions for this session only (--agents),
	// beside those of the folders.
	Agents []*extend.Agent
	// Source is why the session starts, for the SessionStart hooks:
	// "clear" for the new conversation of /clear; "" is "resume" with
	// Resume set, else "startup".
	Source string
	// SignInUI carries /mcp login's conversation (the URL, the browser
	// question, the masked paste); nil: /mcp login is refused.
	SignInUI oauth.UI
	// Elicitor asks the user the questions of MCP servers (elicitation);
	// nil declines them, as a headless session must
	// (docs/reference/mcp.md, "Elicitation").
	Elicitor Elicitor

	// Overrides replace parts the runtime otherwise builds itself. Front
	// ends leave them zero; tests and special deployments set them.
	Overrides StartOverrides
}

// StartOverrides are the parts of a start that tests and special
// deployments (a private certificate authority, a one-shot embedder)
// replace; each zero value is what the command line uses.
type StartOverrides struct {
	// NoTranscript runs without recording (tests, one-shot embedders).
	NoTranscript bool
	// HTTPClient carries provider requests; nil: the default client.
	HTTPClient *http.Client
	// MCPOAuthTransport attaches a signed-in server's token; nil: the
	// credentials /mcp login stored, refreshed at the recorded endpoint.
	MCPOAuthTransport func(d *config.ServerDef, base http.RoundTripper) (http.RoundTripper, error)
	// MCPHTTPTransport replaces the address-policy transport under MCP
	// connections (tests with a TLS test server); nil: the policy's.
	MCPHTTPTransport http.RoundTripper
	// MCPRootCAs replaces the system roots for MCP servers and their
	// authorization servers (tests with a TLS test server); nil: the
	// system roots.
	MCPRootCAs *x509.CertPool
}

// WorkspaceSession is a Session started in a workspace together with
// everything the workspace configures around it: its settings (trust
// gated), the model choice, the permission checker, the MCP servers and
// their background tasks, and the transcript. Every front end (print mode,
// a background session, mcp serve, the terminal UI, an embedder) drives
// one. Close ends the session and everything it started.
type WorkspaceSession struct {
	Session     *Session
	Settings    *config.Settings
	Workspace   string // the workspace's real path
	Home        string
	Trusted     bool
	Model       ModelChoice
	Permissions *Checker
	// Resumed is the stored conversation when StartOptions.Resume was set.
	Resumed *Loaded
	// Instructions are the instruction files and the other parts of what
	// the model is told before the conversation (/memory, /context).
	Instructions *Instructions
	// MCP holds the session's MCP connections and the /mcp commands.
	MCP *mcp.Manager
	// Hooks are the settings' hooks with their approval states (/hooks).
	Hooks *hooks.Set
	// EndReason is told to the SessionEnd hooks at Close: "clear",
	// "logout", "prompt_input_exit"; "" is "other".
	EndReason string
	// Tasks are the session's background tasks (MCP calls handed off
	// after mcp.autoBackgroundMs).
	Tasks *Tasks

	transcript *Transcript
	agents     *agentTool
	// Catalog holds the subagent definitions, custom commands and skills
	// of the workspace and the user (docs/reference/runtime.md,
	// "Subagents, commands and skills").
	Catalog    *extend.Catalog
	debug      *debugLog
	httpClient *http.Client // the providers' (nil: the default client)
	asking     sync.Mutex   // one question to a local server at a time
	mcpTools   *mcpTools
	sandbox    *sessionSandbox
	stopLife   context.CancelFunc
	credStore  *oauth.Store
	oauthNet   oauth.NetOptions
	signInUI   oauth.UI
}

// Start starts a workspace session the way the command line does: the
// settings of the workspace with trust gating, the trust check for headless
// starts, the provider and model (docs/reference/cli.md, "Provider
// resolution"), the built-in tools under the permission rules, the
// transcript and the MCP servers (docs/reference/runtime.md, "Starting a
// session"). It is the one entry point of front ends and embedders, and the
// one through which an embedder supplies the approval store and the stdio
// authorities (docs/reference/mcp.md, "What connects and when", rule 3;
// docs/design.md, "Every front end starts its session through
// `agent.Start`").
func Start(ctx context.Context, opts StartOptions) (*WorkspaceSession, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	home, from := opts.Home, "the home folder"
	if home == "" {
		home, from = "", "HOME"
		if home, _ = lookup("HOME"); home == "" {
			return nil, errors.New("HOME is not set: the user directory ~/.agent cannot be found")
		}
	}
	if !filepath.IsAbs(home) {
		// ~/.agent would be under the working directory: the workspace
		// could then write the user's grants and settings.
		return nil, fmt.Errorf("%s is %q, not an absolute path: the user directory ~/.agent cannot be found", from, quote.V(home))
	}
	ws := opts.Workspace
	if ws == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("the working directory: %w", err)
		}
		ws = wd
	}
	ws, err := config.RealPath(ws)
	if err != nil {
		return nil, fmt.Errorf("the workspace: %w", err)
	}
	trusted, terr := config.IsTrusted(home, ws)
	trusted = trusted && terr == nil
	if opts.Headless && !trusted {
		return nil, &UntrustedError{Workspace: ws}
	}
	s := config.Load(config.Options{Home: home, Workspace: ws, Trusted: trusted, Lookup: lookup})
	if opts.Notice != nil {
		if terr != nil {
			opts.Notice(fmt.Sprintf("%v; the workspace is treated as untrusted", terr))
		}
		for _, d := range s.Diagnostics {
			opts.Notice(d.String())
		}
	}
	mode := opts.PermissionMode
	if mode == "" {
		mode = s.Permissions.DefaultMode
	}
	if mode == "" {
		mode = config.ModeDefault
	}
	if !config.ValidMode(mode) {
		return nil, fmt.Errorf("permission mode %q: use default, plan, acceptEdits or bypassPermissions", quote.V(mode))
	}
	choice, err := ResolveModel(ModelFlags{Provider: opts.Provider, Model: opts.Model, BaseURL: opts.BaseURL}, s)
	if err != nil {
		return nil, err
	}
	prov, err := NewProvider(choice, ProviderEnv{Lookup: lookup, HTTPClient: opts.Overrides.HTTPClient})
	if err != nil {
		return nil, err
	}
	replace, appendText := promptChoice(opts, s)
	ss, err := openSandbox(opts, s, ws, home)
	if err != nil {
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			ss.close()
		}
	}()
	checker := NewChecker(CheckerOptions{Mode: mode, Allow: s.Permissions.Allow, Deny: s.Permissions.Deny, Workspace: ws, Home: home,
		AutoAllowSandboxed: ss.autoAllow(), OnEscalation: ss.onEscalation(opts.Prompter == nil)})

	c := &WorkspaceSession{Settings: s, Workspace: ws, Home: home, Trusted: trusted, Model: choice, Permissions: checker, sandbox: ss}
	id := NewID()
	var turns int
	if opts.Resume != "" {
		l, err := LoadTranscript(home, opts.Resume)
		if err != nil {
			return nil, fmt.Errorf("resuming session %s: %w", opts.Resume, err)
		}
		if filepath.Clean(l.Header.Workspace) != ws {
			return nil, fmt.Errorf("resuming session %s: it belongs to the workspace %s, not %s", opts.Resume, l.Header.Workspace, ws)
		}
		c.Resumed, id, turns = l, l.Header.ID, l.Turns
		if opts.Notice != nil {
			for _, n := range l.Notes {
				opts.Notice("resuming session " + id + ": " + n)
			}
		}
	}
	if !opts.Overrides.NoTranscript {
		if c.Resumed != nil {
			c.transcript, err = OpenTranscript(home, id)
		} else {
			c.transcript, err = CreateTranscript(home, Header{ID: id, Workspace: ws, Provider: choice.ProviderID, Model: choice.Model})
		}
		if err != nil {
			return nil, err
		}
		ss.transcript.Store(c.transcript)
	}
	c.Hooks = startHooks(s, ws, home, opts)
	if opts.Overrides.NoTranscript {
		c.debug = newDebugLog("", id)
	} else {
		c.debug = newDebugLog(home, id)
	}
	c.Instructions = newInstructions(ctx, instructionOptions{
		workspace: ws, home: home, trusted: trusted, maxBytes: s.Prompt.InstructionsMaxBytes,
		replace: replace, append: appendText, model: choice.Model, mode: mode, notice: opts.Notice,
		sandboxMode: ss.state.Mode,
	})
	c.Catalog = extend.Discover(extend.Options{Workspace: ws, Home: home, Trusted: trusted})
	for _, a := range opts.Agents {
		// A definition of --agents wins over the folders' of its name.
		for _, prev := range c.Catalog.Agents {
			if prev.Name == a.Name && prev.Shadowed == "" {
				prev.Shadowed = "--agents"
			}
		}
		c.Catalog.Agents = append(c.Catalog.Agents, a)
	}
	if opts.Notice != nil {
		for _, p := range catalogProblems(c.Catalog) {
			opts.Notice(p)
		}
	}
	c.Instructions.skills = skillsSection(c.Catalog)
	c.agents = &agentTool{c: c, catalog: c.Catalog, sem: make(chan struct{}, maxChildren)}
	builtinTools := append(tools.Builtin(tools.Options{Workspace: ws, Home: home, Network: netguard.Policy{Allowed: s.AllowedNetworks},
		Env: ss.env(), Sandbox: ss.bash()}), c.agents)
	if skills := usableSkills(c.Catalog); len(skills) > 0 {
		builtinTools = append(builtinTools, &skillTool{c: c})
	}
	so := SessionOptions{
		ID: id, Provider: prov, ProviderID: choice.ProviderID, Model: choice.Model,
		Framing: c.Instructions.framing(), Attach: c.Instructions.attach,
		Context: ContextOptions{
			Limits:              ModelLimits(choice, s),
			NoAutoCompact:       opts.NoAutoCompact || s.Context.AutoCompact != nil && !*s.Context.AutoCompact,
			AutoCompactAt:       s.Context.AutoCompactAt,
			Reload:              func() { c.Instructions.Reload() },
			SummaryInstructions: c.Instructions.CompactInstructions,
		},
		Tools:       builtinTools,
		Permissions: checker, Prompter: ss.prompter(opts.Prompter),
		Hooks: c.Hooks, Guard: c.guard, StartSource: startSource(opts),
		Workspace: ws, Transcript: c.transcript, TurnsBefore: turns,
		TodoWrite: true,
		Expand: func(ctx context.Context, prompt string) []providers.Part {
			if c.MCP == nil {
				return nil
			}
			return c.expandMentions(ctx, prompt)
		},
	}
	if c.Resumed != nil {
		so.History, so.Resumed = c.Resumed.History, c.Resumed
	}
	c.Session, err = NewSession(so)
	if err != nil {
		c.Close()
		return nil, err
	}
	c.Instructions.bind(c.Session)
	c.httpClient = opts.Overrides.HTTPClient
	c.askLocalWindow()
	c.startMCP(ctx, opts)
	started = true
	return c, nil
}

// startMCP builds the session's MCP manager and connects the approved
// servers that may connect at startup (docs/reference/mcp.md, "What
// connects and when").
func (c *WorkspaceSession) startMCP(ctx context.Context, opts StartOptions) {
	s := c.Settings
	life, stop := context.WithCancel(context.Background())
	c.stopLife = stop
	c.Tasks = &Tasks{}
	mt := &mcpTools{opts: MCPToolOptions{
		AutoBackground: s.MCP.AutoBackground, CallTimeout: s.MCP.CallTimeout,
		Report: c.Session.ReportBackground, Life: life, Tasks: c.Tasks,
	}}
	if opts.NoMCPHandoff {
		mt.opts.AutoBackground = 0
	}
	notice := opts.Notice
	if notice == nil {
		notice = func(string) {}
	}
	c.mcpTools = mt
	policy := netguard.Policy{Allowed: s.AllowedNetworks}
	c.credStore = oauth.NewStore(config.UserDir(c.Home))
	ov := opts.Overrides
	c.oauthNet = oauth.NetOptions{Policy: policy, RootCAs: ov.MCPRootCAs}
	c.signInUI = opts.SignInUI
	base := ov.MCPHTTPTransport
	if base == nil && ov.MCPRootCAs != nil {
		t := policy.Transport(netguard.ClientOptions{})
		t.TLSClientConfig = &tls.Config{RootCAs: ov.MCPRootCAs, MinVersion: tls.VersionTLS12}
		base = t
	}
	oauthT := ov.MCPOAuthTransport
	if oauthT == nil {
		oauthT = c.oauthTransport
	}
	ask := (&elicitation{asker: opts.Elicitor, notice: notice, one: make(chan struct{}, 1)}).elicit
	c.MCP = mcp.NewManager(mcp.ManagerOptions{
		Settings: s, Workspace: c.Workspace,
		ApprovalStore: opts.MCPApprovalStore, StdioAuthorities: opts.MCPStdioAuthorities,
		Credentials:    c.credStore,
		OAuthTransport: oauthT, HTTPTransport: base,
		Policy:  policy,
		Helpers: mcp.HelperOptions{Allowed: s.HeaderHelpers, Dir: c.Workspace, Sandbox: c.sandbox.mcpSandbox()},
		Sandbox: c.sandbox.mcpSandbox(),
		OnChange: func() {
			// A running turn keeps the tools it started with
			// (docs/reference/mcp.md, "Lists that change").
			c.Session.SetToolsBetweenTurns("mcp", mt.list())
			var res []tools.Tool
			if len(c.MCP.ResourceServers()) > 0 {
				res = []tools.Tool{listResourcesTool{c.MCP}, readResourceTool{c.MCP}}
			}
			c.Session.SetToolsBetweenTurns("mcp-resources", res)
			c.Instructions.setMCP(c.MCP.ServerInstructions())
		},
		OnDiagnostic: notice,
		Elicit:       ask,
		OnLog:        c.logMCP,
	})
	mt.m, mt.elicit = c.MCP, ask
	if len(s.Servers) > 0 {
		c.Session.SetTools("mcp-status", []tools.Tool{mcpStatusTool{c.MCP}})
	}
	c.MCP.ConnectApproved(ctx)
}

// oauthTransport attaches the stored token of a signed-in server (and
// refreshes it at the recorded endpoint, docs/reference/mcp.md,
// "Credentials").
func (c *WorkspaceSession) oauthTransport(d *config.ServerDef, base http.RoundTripper) (http.RoundTripper, error) {
	id := oauth.IdentityOf(d)
	st, err := c.credStore.State(id, time.Now())
	if err != nil {
		return nil, fmt.Errorf("the stored credentials of %s: %w", d.Name, err)
	}
	if st == oauth.SignedOut || st == oauth.SignInRequired {
		return nil, fmt.Errorf("sign-in required: run /mcp login %s", d.Name)
	}
	src := oauth.NewSource(c.credStore, id, oauth.SourceOptions{Net: c.oauthNet})
	return &oauth.Transport{Source: src, Base: base}, nil
}

// Close ends the session, its background tasks and its MCP servers (a
// stdio server: stdin closed, then SIGTERM, then SIGKILL), and closes the
// transcript; idempotent.
func (c *WorkspaceSession) Close() error {
	if c.Session != nil {
		reason := c.EndReason
		if reason == "" {
			reason = "other"
		}
		c.Session.closeWithReason(reason)
	}
	if c.stopLife != nil {
		c.stopLife()
		c.mcpTools.wg.Wait()
	}
	var err error
	if c.MCP != nil {
		err = c.MCP.Close()
	}
	c.sandbox.close()
	if c.transcript != nil {
		err = errors.Join(err, c.transcript.Close())
	}
	return errors.Join(err, c.debug.Close())
}
