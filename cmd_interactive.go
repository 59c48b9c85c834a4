package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"agent/agent"
	"agent/config"
	"agent/events"
	"agent/internal/securefile"
	"agent/mcp"
	"agent/mcp/oauth"
	"agent/providers"
	"agent/providers/builtin"
	"agent/tui"
	"agent/tui/keymap"
	"agent/tui/term"
)

// activeTTY is the terminal the interactive session has in raw mode, so
// that main's last-resort exit on a second signal can restore it.
var activeTTY atomic.Pointer[term.TTY]

// restoreTerminal leaves raw mode and the UI's terminal modes, if any;
// safe to call at any time.
func restoreTerminal() {
	if t := activeTTY.Load(); t != nil {
		t.Restore()
	}
}

// looksLikeCommand: a lone lower-case word is taken for a mistyped command
// (a usage error), not a prompt; "agent -- WORD" sends it as a prompt.
func looksLikeCommand(args []string) bool {
	if len(args) != 1 || args[0] == "" || args[0][0] < 'a' || args[0][0] > 'z' {
		return false
	}
	for _, r := range args[0] {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// interactiveCommand is "agent [flags] [PROMPT]": the interactive session
// (docs/reference/cli.md, "The interactive session"). It has no words of
// its own: run chooses it when no command matches.
func interactiveCommand() *command {
	return &command{
		path:     "",
		synopsis: "[flags] [PROMPT]",
		summary:  "interactive terminal session in the current directory",
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			sf := &sessionFlags{}
			sf.registerRoot(f)
			return func(ctx context.Context, e *env, ops []string) error { return interactive(ctx, e, sf, f, ops) }
		},
	}
}

func interactive(ctx context.Context, e *env, sf *sessionFlags, f *flagSet, ops []string) error {
	if err := checkEventFlags("", sf); err != nil {
		return err
	}
	if sf.outputFormat != "" {
		return usagef("", "--output-format applies to print mode only (-p)")
	}
	if err := checkModelFlags("", sf); err != nil {
		return err
	}
	if err := checkAgentsFlag("", sf.agentsJSON); err != nil {
		return err
	}
	if len(ops) > 1 {
		return usagef("", "the interactive session takes one PROMPT (quote it), got %d arguments", len(ops))
	}
	// Invalid grants refuse the start, before anything runs
	// (docs/reference/events.md, "Starting a session with grants").
	grants, err := loadGrants(sf)
	if err != nil {
		return err
	}
	prompt := ""
	if len(ops) == 1 {
		prompt = ops[0]
	}
	out, _ := e.out.(*os.File)
	if out == nil || !term.IsTerminal(out) || e.getenv("TERM") == "dumb" {
		return plainSession(ctx, e, sf, f, prompt, grants)
	}
	if in, ok := e.in.(*os.File); ok && prompt == "" && !term.IsTerminal(in) {
		// A prompt piped to stdin (the terminal UI reads keys from /dev/tty).
		b, err := io.ReadAll(io.LimitReader(in, 16<<20))
		if err != nil {
			return fmt.Errorf("reading the prompt from stdin: %w", err)
		}
		prompt = strings.TrimRight(string(b), "\n")
	}
	return terminalSession(ctx, e, sf, f, prompt, grants)
}

// commandRunner runs the slash commands that need the session: /mcp …,
// /events …, /memory, /context, /init and /keybindings (docs/reference/cli.md, "In-session
// commands").
func commandRunner(home string, live func() (*agent.WorkspaceSession, *eventEndpoint)) tui.CommandRunner {
	return func(ctx context.Context, words []string) (string, error) {
		c, ep := live()
		switch words[0] {
		case "/events":
			return ep.command(words[1:])
		case "/keybindings":
			path, created, err := keymap.Create(home)
			if err != nil {
				return "", err
			}
			if created {
				return "Created " + path + "\n", nil
			}
			return path + " exists; edit it there (changes apply while the session runs).\n", nil
		}
		if c == nil {
			return "", errors.New("the session has not started")
		}
		if run, ok := sessionCommands[words[0]]; ok {
			return run(ctx, c, words[1:])
		}
		if agent.IsMCPPromptCommand(words[0]) {
			// An MCP prompt: fetched with its arguments and sent as a
			// turn (docs/reference/mcp.md, "Prompts").
			req, err := c.MCPPromptRequest(ctx, words)
			if err != nil {
				return "", err
			}
			return "", runTurn(ctx, c, req)
		}
		// A custom command or a skill: its turn, shown as it runs
		// (docs/reference/runtime.md, "Subagents, commands and skills").
		req, ok, err := c.CommandTurn(ctx, words[0], strings.Join(words[1:], " "))
		if !ok {
			return "", fmt.Errorf("%w: unknown command %s", agent.ErrUsage, words[0])
		}
		if err != nil {
			return "", err
		}
		return "", runTurn(ctx, c, req)
	}
}

// sessionCommands are the slash commands that act on the live session.
var sessionCommands = map[string]func(ctx context.Context, c *agent.WorkspaceSession, args []string) (string, error){
	"/mcp": func(ctx context.Context, c *agent.WorkspaceSession, args []string) (string, error) {
		return c.MCPCommand(ctx, args)
	},
	"/hooks": func(_ context.Context, c *agent.WorkspaceSession, args []string) (string, error) {
		return c.HooksCommand(args)
	},
	"/memory": func(_ context.Context, c *agent.WorkspaceSession, args []string) (string, error) {
		return c.MemoryCommand(args)
	},
	"/context": func(_ context.Context, c *agent.WorkspaceSession, _ []string) (string, error) {
		return c.ContextReport(), nil
	},
	"/agents": func(_ context.Context, c *agent.WorkspaceSession, _ []string) (string, error) {
		return c.AgentsCommand(), nil
	},
	// A turn of its own, after the running one; the UI shows its progress
	// and its line (docs/reference/runtime.md, "Context management").
	"/compact": func(ctx context.Context, c *agent.WorkspaceSession, args []string) (string, error) {
		return "", runTurn(ctx, c, agent.CompactRequest(strings.Join(args, " ")))
	},
	"/init": func(ctx context.Context, c *agent.WorkspaceSession, _ []string) (string, error) {
		return "", runTurn(ctx, c, agent.InitRequest())
	},
	"/todos": func(_ context.Context, c *agent.WorkspaceSession, _ []string) (string, error) {
		return c.Session.TodosCommand(), nil
	},
	"/cost": func(_ context.Context, c *agent.WorkspaceSession, _ []string) (string, error) {
		return c.CostReport(), nil
	},
	// The terminal UI runs /rewind itself; plain line mode has no menus
	// (docs/reference/cli.md, "In-session commands").
	"/rewind": func(context.Context, *agent.WorkspaceSession, []string) (string, error) {
		return "", errors.New("needs the terminal UI; 'agent session rewind ID CHECKPOINT' rewinds a stored session")
	},
}

// runTurn submits a command's turn and waits for it: the turn shows
// itself as it runs, and the command ends with it, so that plain line mode
// reads its next line only then.
func runTurn(ctx context.Context, c *agent.WorkspaceSession, req agent.TurnRequest) error {
	turn, err := c.Session.Submit(req)
	if err != nil {
		return err
	}
	_, err = turn.Wait(ctx)
	return err
}

// plainSession is the fallback when stdout is not a terminal or
// TERM=dumb: the prompt from the argument, then stdin lines.
func plainSession(ctx context.Context, e *env, sf *sessionFlags, f *flagSet, prompt string, grants []events.Grant) error {
	opts := e.startOptions(sf, f, interactiveFront)
	c, err := agent.Start(ctx, opts)
	if err != nil {
		return err
	}
	var live liveSession
	defer live.close()
	ep, err := startEvents(c, sf, grants)
	live.set(c, ep)
	if err != nil {
		return err
	}
	if !c.Trusted {
		fmt.Fprintf(e.err, "agent: the workspace %s is not trusted: running with user settings only ('agent trust' trusts it)\n", c.Workspace)
	}
	// /clear: a new session in place of the running one, as in the
	// terminal UI.
	newConversation := func(ctx context.Context) (tui.Session, error) {
		o := opts
		o.Source = "clear"
		nc, err := agent.Start(ctx, o)
		if err != nil {
			return nil, err
		}
		old, ep := live.get()
		ep.retarget(nc)
		live.set(nc, ep)
		old.EndReason = "clear"
		old.Close()
		return tui.FromAgent(nc.Session), nil
	}
	code, err := tui.RunPlain(ctx, tui.FromAgent(c.Session), tui.PlainOptions{
		In: e.in, Out: e.out, Err: e.err, Commands: commandRunner(e.home, live.get), NewConversation: newConversation,
		Extra: func() []agent.SlashCommand {
			if c, _ := live.get(); c != nil {
				return c.SlashCommands()
			}
			return nil
		},
	}, prompt)
	if err != nil {
		return err
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// terminalSession runs the terminal UI on /dev/tty.
func terminalSession(ctx context.Context, e *env, sf *sessionFlags, f *flagSet, prompt string, grants []events.Grant) (err error) {
	catchFatalSignals() // before the terminal goes raw
	tty, err := term.Open()
	if err != nil {
		return err
	}
	activeTTY.Store(tty)
	defer func() {
		activeTTY.Store(nil)
		tty.Close()
	}()
	// A panic anywhere below leaves the terminal usable before it
	// propagates.
	defer func() {
		if p := recover(); p != nil {
			tty.Restore()
			panic(p)
		}
	}()
	if err := tty.Raw(); err != nil {
		return err
	}
	if err := tty.Enter(); err != nil {
		return err
	}
	ws, err := e.workspace()
	if err != nil {
		return err
	}
	u := &interactiveUI{e: e, sf: sf, f: f, ws: ws, grants: grants}
	u.transports = &sessionTransports{live: &u.live, runDir: agent.RunDir(e.home, os.LookupEnv)}
	defer u.live.close()
	defer u.transports.Close()
	watcher, first := keymap.Watch(ctx, keymap.Path(e.home), keymap.Options{})
	defer watcher.Close()
	notices := first.Notices
	ui, uerr := tui.LoadUISettings(e.home)
	if uerr != nil {
		notices = append(notices, uerr.Error())
	}
	u.app = tui.New(tui.Options{
		Terminal: tty, Resize: tty.Resize(), EnableKitty: tty.EnableKitty,
		Keymap: first.Keymap, KeymapUpdates: watcher.Updates(), Notices: notices,
		NoColor:  e.getenv("NO_COLOR") != "",
		Commands: commandRunner(e.home, u.live.get),
		Hooks:    u.hooks(), UI: ui,
		Editor: func(ctx context.Context, cmd *exec.Cmd) error { return runEditor(tty, cmd) },
	})
	defer u.app.Close()
	if err := u.askTrust(ctx); err != nil {
		return err
	}
	c, err := u.start(ctx)
	if err != nil {
		return err
	}
	code, err := u.app.Run(ctx, tui.FromAgent(c.Session), sessionStatus(c), prompt)
	u.app.Close()
	tty.Restore()
	c, _ = u.live.get()
	if ctx.Err() == nil {
		c.EndReason = "prompt_input_exit" // the user ended it (SessionEnd's reason)
	}
	fmt.Fprintf(e.err, "agent: session %s (continue it with 'agent --resume %s')\n", c.Session.ID(), c.Session.ID())
	if err != nil {
		return err
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// interactiveUI joins one terminal UI to its session: its methods are the
// UI's hooks (tui.Hooks, hooks below), so that the UI imports neither
// providers nor mcp (docs/design.md, "The terminal UI reaches the rest
// through hooks"); it owns the live session, which /resume replaces, and
// the loopback transport of /settings.
type interactiveUI struct {
	e          *env
	sf         *sessionFlags
	f          *flagSet
	ws         string // the workspace's real path
	grants     []events.Grant
	app        *tui.App
	live       liveSession
	transports *sessionTransports
	notices    onceNotices
}

// hooks are the UI's operations on the session and the machine.
func (u *interactiveUI) hooks() tui.Hooks {
	return tui.Hooks{
		Workspace:       u.ws,
		Providers:       providerModels(),
		Sessions:        u.sessions,
		SwitchSession:   u.switchSession,
		NewConversation: u.newConversation,
		Commands:        u.customCommands,
		SetModel:        u.setModel,
		SetMode:         u.setMode,
		PendingMCP:      u.pendingMCP,
		Tasks:           u.tasks,
		History:         u.history,
		Background:      u.background,
		SaveUI:          func(ui tui.UISettings) error { return tui.SaveUISettings(u.e.home, ui) },
		Transports:      u.transports,
		Attach:          u.attach,
		Todos:           u.todos,
		Checkpoints:     u.checkpoints,
		Rewind:          u.rewind,
		OpenURL:         oauth.OpenBrowser,
		MCPPrompts:      u.mcpPrompts,
		MCPMentions:     u.mcpMentions,
	}
}

// mcpPrompts lists the connected servers' prompts for the slash menu.
func (u *interactiveUI) mcpPrompts() []agent.PromptCommand {
	c, _ := u.live.get()
	if c == nil || c.MCP == nil {
		return nil
	}
	return c.MCPPromptCommands()
}

// mcpMentions lists the @server:uri of the connected servers' resources
// and templates for the composer's completion.
func (u *interactiveUI) mcpMentions() []tui.Mention {
	c, _ := u.live.get()
	if c == nil || c.MCP == nil {
		return nil
	}
	res, tmpl := c.MCP.Resources()
	out := make([]tui.Mention, 0, len(res)+len(tmpl))
	for _, r := range res {
		help := r.Name
		if r.Description != "" {
			help += " — " + r.Description
		}
		out = append(out, tui.Mention{Text: "@" + r.Server + ":" + r.URI, Help: help})
	}
	for _, t := range tmpl {
		out = append(out, tui.Mention{Text: "@" + t.Server + ":" + t.URITemplate, Help: t.Name + " (template)"})
	}
	return out
}

// startOptions are the session's options with the UI as the prompter, the
// notice sink and the sign-in conversation.
func (u *interactiveUI) startOptions() agent.StartOptions {
	o := u.e.startOptions(u.sf, u.f, interactiveFront)
	o.Prompter, o.Notice, o.SignInUI, o.Elicitor = u.app, u.notice, signInUI{u.app}, u.app
	return o
}

// notice shows a session's notice (onceNotices.show).
func (u *interactiveUI) notice(line string) { u.notices.show(line, u.app.Notice) }

// onceNotices shows an instruction file's diagnostic once in the UI,
// although /resume starts another session that reads the files again;
// other notices are shown as they come.
type onceNotices struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (o *onceNotices) show(line string, show func(string)) {
	if strings.HasPrefix(line, agent.InstructionsNotice) {
		o.mu.Lock()
		seen := o.seen[line]
		if o.seen == nil {
			o.seen = map[string]bool{}
		}
		o.seen[line] = true
		o.mu.Unlock()
		if seen {
			return
		}
	}
	show(line)
}

// askTrust asks whether to trust a workspace that is not trusted yet; a no
// runs the session with the user settings only (docs/reference/cli.md, "The
// interactive session").
func (u *interactiveUI) askTrust(ctx context.Context) error {
	trusted, err := config.IsTrusted(u.e.home, u.ws)
	if err != nil || trusted {
		return nil
	}
	yes, err := u.app.Confirm(ctx, "Trust this workspace?",
		u.ws+"\nIts settings (.agent/ and .compat/) can define MCP servers, permission rules and providers. Without trust the session runs with your user settings only.")
	switch {
	case errors.Is(err, tui.ErrExit):
		return &exitError{code: tui.ExitInterrupted}
	case err != nil:
		return err
	case yes:
		if _, err := config.Trust(u.e.home, u.ws, time.Now()); err != nil {
			u.app.Notice("could not record the trust: " + err.Error())
		}
	default:
		u.app.Notice("The workspace is not trusted: running with your user settings only.")
	}
	return nil
}

// start starts the session, after the first-run setup when no provider is
// configured, and its event endpoint.
func (u *interactiveUI) start(ctx context.Context) (*agent.WorkspaceSession, error) {
	opts := u.startOptions()
	c, err := agent.Start(ctx, opts)
	if errors.Is(err, agent.ErrNoModel) && u.sf.provider == "" {
		var key keyForSession
		if key, err = firstRunSetup(ctx, u.e, u.app); err != nil {
			return nil, err
		}
		opts.LookupEnv = key.lookup
		c, err = agent.Start(ctx, opts)
	}
	if err != nil {
		return nil, err
	}
	ep, err := startEvents(c, u.sf, u.grants)
	u.live.set(c, ep)
	return c, err
}

// signInUI carries /mcp login's conversation in the terminal UI: progress
// as notices, the browser question as a confirm prompt, the pasted redirect
// address in a masked text prompt (docs/reference/mcp.md, "Sign-in").
type signInUI struct{ app *tui.App }

func (u signInUI) Show(line string) { u.app.Notice(line) }

func (u signInUI) Confirm(ctx context.Context, q string) (bool, error) {
	return u.app.Confirm(ctx, "MCP sign-in", q)
}

func (u signInUI) ReadSecret(ctx context.Context, prompt string) (string, error) {
	v, ok, err := u.app.AskText(ctx, prompt, true)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", context.Canceled
	}
	return v, nil
}

// liveSession is the running session of the terminal UI: /resume replaces it
// while command goroutines read it, so it sits behind a lock.
type liveSession struct {
	mu sync.Mutex
	c  *agent.WorkspaceSession
	ep *eventEndpoint
}

func (l *liveSession) get() (*agent.WorkspaceSession, *eventEndpoint) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c, l.ep
}

func (l *liveSession) set(c *agent.WorkspaceSession, ep *eventEndpoint) {
	l.mu.Lock()
	l.c, l.ep = c, ep
	l.mu.Unlock()
}

// close ends the current session; idempotent.
func (l *liveSession) close() {
	l.mu.Lock()
	c, ep := l.c, l.ep
	l.c, l.ep = nil, nil
	l.mu.Unlock()
	ep.Close()
	if c != nil {
		c.Close()
	}
}

func sessionStatus(c *agent.WorkspaceSession) tui.Status {
	p, m := c.Session.Model()
	sb := c.Sandbox()
	sandbox := sb.Mode
	if sb.Banner != "" {
		sandbox = "unavailable" // the banner said why, among the notices
	}
	return tui.Status{Provider: p, Model: m, Mode: c.Permissions.Mode(), Sandbox: sandbox, SessionID: c.Session.ID()}
}

// Bounds of what the list screens read from the stored transcripts.
const (
	maxResumeList      = 50
	maxHistorySessions = 200
	maxHistoryPrompt   = 4 << 10
)

// userPrompts returns the texts the user typed in a stored conversation
// (external events, From != "", are not the user's prompts).
func userPrompts(l *agent.Loaded) []string {
	var out []string
	for _, m := range l.Messages {
		if m.From != "" || m.Message.Role != providers.RoleUser {
			continue
		}
		for _, p := range m.Message.Content {
			if t, ok := p.(providers.Text); ok && t.Text != "" && !agent.IsAttachment(t.Text) {
				if cmd, ok := agent.ShellCommandOf(t.Text); ok {
					out = append(out, "!"+cmd) // as typed
					continue
				}
				out = append(out, t.Text)
			}
		}
	}
	return out
}

// replay converts a stored conversation for the transcript on screen.
func replay(l *agent.Loaded) []tui.ReplayMessage {
	var out []tui.ReplayMessage
	for _, m := range l.Messages {
		for _, p := range m.Message.Content {
			switch p := p.(type) {
			case providers.Text:
				if agent.IsAttachment(p.Text) {
					continue // an @ mention's file: the prompt names it
				}
				if cmd, ok := agent.ShellCommandOf(p.Text); ok {
					// A "!" command: as typed, then the Bash call it ran.
					args, _ := json.Marshal(map[string]string{"command": cmd})
					out = append(out, tui.ReplayMessage{Turn: m.Turn, User: true, Text: "!" + cmd},
						tui.ReplayMessage{Turn: m.Turn, Tool: "Bash", ToolArgs: args})
					continue
				}
				out = append(out, tui.ReplayMessage{Turn: m.Turn, User: m.Message.Role == providers.RoleUser, From: m.From, Text: p.Text})
			case providers.ToolCall:
				out = append(out, tui.ReplayMessage{Turn: m.Turn, Tool: p.Name, ToolArgs: p.Arguments})
			}
		}
	}
	return out
}

// providerModels lists the built-in providers and their models for
// /model and the first-run setup.
func providerModels() []tui.ProviderModels {
	var provs []tui.ProviderModels
	for _, d := range builtin.DefaultDefinitions() {
		pm := tui.ProviderModels{ID: d.ID, Label: d.DisplayName}
		for _, m := range d.Models {
			pm.Models = append(pm.Models, m.ID)
		}
		provs = append(provs, pm)
	}
	return provs
}

// errNotStarted answers a hook called before the session runs.
var errNotStarted = errors.New("the session has not started")

// sessions lists the stored sessions of this workspace for /resume, newest
// first, the current one left out.
func (u *interactiveUI) sessions(ctx context.Context) ([]tui.SessionSummary, error) {
	infos, err := agent.ListTranscripts(u.e.home)
	if err != nil {
		return nil, err
	}
	c, _ := u.live.get()
	var out []tui.SessionSummary
	for _, in := range infos {
		if len(out) >= maxResumeList || ctx.Err() != nil {
			break
		}
		if in.Workspace != u.ws || (c != nil && in.ID == c.Session.ID()) {
			continue
		}
		sum := tui.SessionSummary{ID: in.ID, Modified: in.Modified}
		if l, err := agent.LoadTranscript(u.e.home, in.ID); err == nil {
			if ps := userPrompts(l); len(ps) > 0 {
				sum.Title = ps[0]
			}
		}
		out = append(out, sum)
	}
	return out, nil
}

// switchSession resumes a stored session in place of the running one.
func (u *interactiveUI) switchSession(ctx context.Context, id string) (tui.Switched, error) {
	return u.replaceSession(ctx, id)
}

// newConversation is /clear: a new session in this workspace in place of
// the running one, which stays stored for /resume.
func (u *interactiveUI) newConversation(ctx context.Context) (tui.Switched, error) {
	return u.replaceSession(ctx, "")
}

// replaceSession starts a session (resuming id, or a new one) and puts it
// in place of the running one.
func (u *interactiveUI) replaceSession(ctx context.Context, id string) (tui.Switched, error) {
	opts := u.startOptions()
	opts.Resume = id
	if id == "" {
		opts.Source = "clear" // SessionStart's source (docs/reference/runtime.md, "Hooks")
	}
	nc, err := agent.Start(ctx, opts)
	if err != nil {
		return tui.Switched{}, err
	}
	// The event endpoint belongs to the process, not to one session: it
	// keeps its grants' revocations, spent tokens and rate windows, and
	// only its later turns go to the new session.
	old, ep := u.live.get()
	ep.retarget(nc)
	u.live.set(nc, ep)
	if old != nil {
		if id == "" {
			old.EndReason = "clear"
		}
		old.Close()
	}
	sw := tui.Switched{Session: tui.FromAgent(nc.Session), Status: sessionStatus(nc)}
	if nc.Resumed != nil {
		sw.Messages = replay(nc.Resumed)
	}
	return sw, nil
}

// customCommands are the live session's custom commands and skills.
func (u *interactiveUI) customCommands() []agent.SlashCommand {
	if c, _ := u.live.get(); c != nil {
		return c.SlashCommands()
	}
	return nil
}

// setModel switches provider and model for the following turns.
func (u *interactiveUI) setModel(ctx context.Context, provider, model string) (tui.Status, error) {
	c, _ := u.live.get()
	if c == nil {
		return tui.Status{}, errNotStarted
	}
	choice, err := agent.ResolveModel(agent.ModelFlags{Provider: provider, Model: model}, c.Settings)
	if err != nil {
		return tui.Status{}, err
	}
	p, err := agent.NewProvider(choice, agent.ProviderEnv{Lookup: os.LookupEnv})
	if err != nil {
		return tui.Status{}, err // a missing key names its variable
	}
	c.SetModel(choice, p)
	return sessionStatus(c), nil
}

// setMode switches the permission mode.
func (u *interactiveUI) setMode(mode string) (tui.Status, error) {
	c, _ := u.live.get()
	if c == nil {
		return tui.Status{}, errNotStarted
	}
	if err := c.Permissions.SetMode(mode); err != nil {
		return tui.Status{}, err
	}
	_, model := c.Session.Model()
	c.Instructions.SetModelAndMode(model, c.Permissions.Mode())
	return sessionStatus(c), nil
}

// pendingMCP names the MCP servers waiting for approval.
func (u *interactiveUI) pendingMCP(ctx context.Context) ([]string, error) {
	c, _ := u.live.get()
	if c == nil || c.MCP == nil {
		return nil, nil
	}
	var names []string
	for _, l := range c.MCP.Status() {
		if l.State == mcp.Pending {
			names = append(names, l.Name)
		}
	}
	return names, nil
}

// tasks lists the session's background tasks.
func (u *interactiveUI) tasks() []agent.TaskInfo {
	c, _ := u.live.get()
	if c == nil {
		return nil
	}
	return c.Tasks.List()
}

// history is the prompt history of Ctrl+R: the user's prompts of the
// stored sessions, newest first, bounded.
func (u *interactiveUI) history(ctx context.Context) ([]tui.HistoryPrompt, error) {
	infos, err := agent.ListTranscripts(u.e.home)
	if err != nil {
		return nil, err
	}
	var out []tui.HistoryPrompt
	for i, in := range infos {
		if i >= maxHistorySessions || len(out) >= tui.MaxHistoryPrompts || ctx.Err() != nil {
			break
		}
		l, err := agent.LoadTranscript(u.e.home, in.ID)
		if err != nil {
			continue
		}
		ps := userPrompts(l)
		for j := len(ps) - 1; j >= 0 && len(out) < tui.MaxHistoryPrompts; j-- {
			t := ps[j]
			if len(t) > maxHistoryPrompt {
				t = t[:maxHistoryPrompt]
			}
			out = append(out, tui.HistoryPrompt{Text: t, Session: in.ID, Workspace: l.Header.Workspace, Time: in.Modified})
		}
	}
	return out, nil
}

// background lists the live background sessions (the workspace switcher).
func (u *interactiveUI) background(ctx context.Context) ([]agent.BackgroundInfo, error) {
	return agent.ListBackground(ctx, agent.RunDir(u.e.home, os.LookupEnv))
}

// attach attaches to a background session (Ctrl+B, a); its questions come
// to this terminal while attached (docs/reference/runtime.md, "Background
// sessions").
func (u *interactiveUI) attach(ctx context.Context, id string) (tui.Session, tui.Status, error) {
	a, err := agent.Attach(ctx, agent.RunDir(u.e.home, os.LookupEnv), id, u.app)
	if err != nil {
		return nil, tui.Status{}, err
	}
	in := a.Info()
	return a, tui.Status{Provider: in.Provider, Model: in.Model, Mode: "background", SessionID: in.ID}, nil
}

// keyForSession is an API key typed during setup: it answers for its
// environment variable in this process's provider lookup only; it is never
// written to a file nor put in the environment that tools inherit.
type keyForSession struct{ name, value string }

func (k keyForSession) lookup(name string) (string, bool) {
	if k.name != "" && name == k.name {
		return k.value, true
	}
	return os.LookupEnv(name)
}

// firstRunSetup asks for a provider, its base URL and model when none is
// configured, and writes defaultModel and providers.<id> to
// ~/.agent/settings.json (existing keys kept; a file that does not parse is
// not touched). The key is never stored: when its environment variable is
// unset it is asked in a masked prompt and used for this session only, and
// the user is told which variable to set (docs/reference/cli.md, "The
// interactive session" and "Environment").
func firstRunSetup(ctx context.Context, e *env, app *tui.App) (keyForSession, error) {
	defs := builtin.DefaultDefinitions()
	var names []string
	for _, d := range defs {
		names = append(names, d.ID+" — "+d.DisplayName)
	}
	i, ok, err := app.Choose(ctx, "No provider is configured. Choose one:", names)
	if err != nil {
		return keyForSession{}, setupErr(err)
	}
	if !ok {
		return keyForSession{}, fmt.Errorf("%w: setup cancelled", agent.ErrNoModel)
	}
	d := defs[i]
	base, ok, err := app.AskText(ctx, "Base URL (empty: "+orDefault(d.DefaultBaseURL, "the provider's default")+")", false)
	if err != nil {
		return keyForSession{}, setupErr(err)
	}
	if !ok {
		return keyForSession{}, fmt.Errorf("%w: setup cancelled", agent.ErrNoModel)
	}
	model := ""
	if len(d.Models) > 0 {
		items := []string{}
		for _, m := range d.Models {
			items = append(items, m.ID)
		}
		items = append(items, "Other…")
		j, ok, err := app.Choose(ctx, "Model", items)
		if err != nil {
			return keyForSession{}, setupErr(err)
		}
		if !ok {
			return keyForSession{}, fmt.Errorf("%w: setup cancelled", agent.ErrNoModel)
		}
		if j < len(d.Models) {
			model = d.Models[j].ID
		}
	}
	if model == "" {
		v, ok, err := app.AskText(ctx, "Model slug (empty: "+orDefault(d.DefaultModel, "the server's")+")", false)
		if err != nil {
			return keyForSession{}, setupErr(err)
		}
		if !ok {
			return keyForSession{}, fmt.Errorf("%w: setup cancelled", agent.ErrNoModel)
		}
		model = strings.TrimSpace(v)
	}
	path, err := writeSetup(e.home, d.ID, strings.TrimSpace(base), model)
	if err != nil {
		return keyForSession{}, err
	}
	app.Notice("Saved the provider " + d.ID + " to " + path + ".")
	if d.KeyEnv == "" {
		return keyForSession{}, nil
	}
	if v, ok := os.LookupEnv(d.KeyEnv); ok && v != "" {
		return keyForSession{}, nil
	}
	v, ok, err := app.AskText(ctx, "API key for "+d.ID+" (used for this session only; set "+d.KeyEnv+" to keep it)", true)
	if err != nil {
		return keyForSession{}, setupErr(err)
	}
	if !ok || strings.TrimSpace(v) == "" {
		return keyForSession{}, fmt.Errorf("set %s to your API key and start again (the key is never stored in settings)", d.KeyEnv)
	}
	app.Notice("The key is kept for this session only: set " + d.KeyEnv + " to keep it for the next one.")
	return keyForSession{name: d.KeyEnv, value: strings.TrimSpace(v)}, nil
}

func setupErr(err error) error {
	if errors.Is(err, tui.ErrExit) {
		return &exitError{code: tui.ExitInterrupted}
	}
	return err
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// writeSetup records the setup's choice in the user settings file with
// the one settings writer (config.UpdateSettingsFile): defaultModel, and
// the provider's baseURL and model, each changed in place; every other
// key, its order and the file's formatting stay as they were.
func writeSetup(home, provider, baseURL, model string) (string, error) {
	path := filepath.Join(home, ".agent", "settings.json")
	dm := config.Object{{Key: "provider", Value: provider}}
	if model != "" {
		dm = append(dm, config.Field{Key: "model", Value: model})
	}
	changes := []config.SettingsChange{config.Set(dm, "defaultModel")}
	if baseURL != "" {
		changes = append(changes, config.Set(baseURL, "providers", provider, "baseURL"))
	}
	if model != "" {
		changes = append(changes, config.Set(model, "providers", provider, "model"))
	}
	if err := securefile.EnsureDir(filepath.Dir(path)); err != nil {
		return path, err
	}
	_, err := config.UpdateSettingsFile(path, config.OwnerOnly, changes...)
	switch {
	case errors.Is(err, config.ErrNotJSON):
		return path, fmt.Errorf("%s does not parse as a JSON object, so setup leaves it alone: fix it or set defaultModel there yourself (%w)", path, err)
	case errors.Is(err, config.ErrSettingsShape):
		return path, fmt.Errorf("setup leaves the file alone: %w", err)
	}
	return path, err
}
