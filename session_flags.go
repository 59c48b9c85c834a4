package main

// The session flags that the interactive session, print mode, background
// sessions and mcp serve share (docs/reference/cli.md, "Session flags"),
// their checks, and the one place where a front end's session options are
// built from them.

import (
	"fmt"
	"net/url"
	"os"

	"agent/agent"
	"agent/agent/extend"
	"agent/config"
	"agent/internal/quote"
	sbox "agent/internal/sandbox"
	"agent/providers"
)

// sessionFlags are the session flags of docs/reference/cli.md, "Session
// flags".
type sessionFlags struct {
	provider, model, baseURL, mode, systemPrompt, outputFormat, resume string
	appendSystemPrompt, sandbox, agentsJSON                            string
	print, noAutoCompact                                               bool
	eventGrants, eventProxies                                          []string
	eventPort                                                          string
}

// register adds the session flags, --resume included.
func (sf *sessionFlags) register(f *flagSet) {
	sf.registerModel(f)
	f.stringVar(&sf.resume, "resume", "ID", "continue the stored session ID (its conversation and transcript)")
}

// registerModel adds the flags that choose the model and the permission
// mode (mcp serve has these, not --resume).
func (sf *sessionFlags) registerModel(f *flagSet) {
	f.stringVar(&sf.provider, "provider", "ID", config.ProviderList())
	f.stringVar(&sf.model, "model", "SLUG", "model slug, passed to the endpoint verbatim")
	f.stringVar(&sf.baseURL, "base-url", "URL", "endpoint of the provider's API surface")
	f.stringVar(&sf.mode, "permission-mode", "MODE", "default, plan, acceptEdits or bypassPermissions")
	f.stringVar(&sf.systemPrompt, "system-prompt", "TEXT", "replaces the default system message")
	f.stringVar(&sf.appendSystemPrompt, "append-system-prompt", "TEXT", "added to the end of the system message")
	f.boolVar(&sf.noAutoCompact, "no-auto-compact", "", "no automatic compaction (a request the provider refuses as too long still compacts once)")
	f.stringVar(&sf.sandbox, "sandbox", "MODE", "the sandbox for this run: "+sbox.ModeNames)
	f.stringVar(&sf.agentsJSON, "agents", "JSON", `subagent definitions for this run: {"name": {"description", "prompt", "tools", ...}}`)
}

// registerRoot adds the flags of "agent [flags] [PROMPT]" and "agent -p".
func (sf *sessionFlags) registerRoot(f *flagSet) {
	f.boolVar(&sf.print, "print", "p", "print mode: run one turn, print the answer, exit")
	sf.register(f)
	f.stringVar(&sf.outputFormat, "output-format", "F", "print mode: text (default), json or stream-json")
	f.stringsVar(&sf.eventGrants, "external-event-grant", "FILE", "interactive only: admit events for this grant (repeatable)")
	f.stringVar(&sf.eventPort, "external-event-port", "PORT", "interactive only: the loopback port of the event endpoint")
	f.stringsVar(&sf.eventProxies, "external-event-trusted-proxy", "IP", "interactive only: believe X-Forwarded-For from this proxy (repeatable)")
}

// frontEnd is the kind of session a command starts.
type frontEnd int

const (
	// printFront: one turn, headless; an MCP call never moves to the
	// background (docs/reference/settings.md, "mcp").
	printFront frontEnd = iota
	// interactiveFront: the terminal UI or its plain fallback. Not
	// headless: an untrusted workspace runs with user settings only
	// (docs/reference/cli.md, "The interactive session"); the caller adds
	// its prompter and notices.
	interactiveFront
	// backgroundFront: a detached session, headless.
	backgroundFront
	// serveFront: a session served over MCP, headless.
	serveFront
)

// startOptions are the session options of every front end, from the session
// flags: the one place they are built. Headless starts refuse an untrusted
// workspace (docs/reference/runtime.md, "Starting a session").
func (e *env) startOptions(sf *sessionFlags, f *flagSet, fe frontEnd) agent.StartOptions {
	o := agent.StartOptions{
		Workspace: e.cwd, Home: e.home, LookupEnv: os.LookupEnv,
		Provider: sf.provider, Model: sf.model, BaseURL: sf.baseURL, PermissionMode: sf.mode,
		Headless: fe != interactiveFront, Resume: sf.resume,
		NoMCPHandoff: fe == printFront, NoAutoCompact: sf.noAutoCompact, SandboxMode: sf.sandbox,
		Notice: func(line string) { fmt.Fprintln(e.err, "agent: "+sanitizeLine(line)) },
	}
	if f.isSet("system-prompt") {
		o.SystemPrompt = &sf.systemPrompt
	}
	if f.isSet("append-system-prompt") {
		o.AppendSystemPrompt = &sf.appendSystemPrompt
	}
	o.Agents, _ = extend.ParseAgentsJSON(sf.agentsJSON) // checked by checkModelFlags
	return o
}

// checkModelFlags refuses as usage errors (exit 2; docs/reference/cli.md,
// "Exit codes" and "Session flags") the session flag values that cannot
// mean anything: a provider outside the six, a permission mode outside the
// four, a base URL that the settings would refuse too
// (config.ValidBaseURL), a sandbox mode outside the three. Caught here,
// before the trust check or any settings are read, they are named as the
// flag the user typed.
func checkModelFlags(cmd string, sf *sessionFlags) error {
	provider, baseURL, mode := sf.provider, sf.baseURL, sf.mode
	if _, ok := sbox.ParseMode(sf.sandbox); sf.sandbox != "" && !ok {
		return usagef(cmd, "--sandbox must be %s, not %q", sbox.ModeNames, quote.V(sf.sandbox))
	}
	if provider != "" && !config.ValidProvider(provider) {
		return usagef(cmd, "--provider must be %s, not %q", config.ProviderList(), quote.V(provider))
	}
	if baseURL != "" && !config.ValidBaseURL(baseURL) {
		if u, err := url.Parse(baseURL); err == nil && u.User != nil {
			// Never echo credentials (docs/reference/cli.md, "Session
			// flags").
			return usagef(cmd, "--base-url must not carry user credentials: put the key in the provider's environment variable")
		}
		// Echoed masked: a key may sit in its query or path
		// (docs/providers.md, "Endpoint paths and masked URLs").
		return usagef(cmd, "--base-url must be an absolute http or https URL with a host, not %q", quote.V(providers.RedactURL(baseURL)))
	}
	if mode != "" && !config.ValidMode(mode) {
		return usagef(cmd, "--permission-mode must be default, plan, acceptEdits or bypassPermissions, not %q", quote.V(mode))
	}
	return nil
}

// checkAgentsFlag refuses an --agents value that is not a valid set of
// definitions, as a usage error naming the flag.
func checkAgentsFlag(cmd, agentsJSON string) error {
	if agentsJSON == "" {
		return nil
	}
	if _, err := extend.ParseAgentsJSON(agentsJSON); err != nil {
		return usagef(cmd, "--agents: %v", err)
	}
	return nil
}
