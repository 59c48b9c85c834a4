package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"agent/agent"
	"agent/config"
	"agent/events"
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

// interactiveRoot runs "agent [flags] [PROMPT]": the interactive session
// (cli.md).
func interactiveRoot(ctx context.Context, e *env, args []string) int {
	root := &command{path: "", synopsis: "[flags] [PROMPT]", summary: "interactive terminal session in the current directory"}
	sf, f, ops, err := rootFlags(args)
	if err == nil {
		if e.home == "" {
			err = errors.New("HOME is not set: it decides where ~/.agent lives")
		} else {
			err = interactive(ctx, e, sf, f, ops)
		}
	}
	return exitCode(ctx, e, root, f, err)
}

func interactive(ctx context.Context, e *env, sf *sessionFlags, f *flagSet, ops []string) error {
	if err := checkEventFlags("", sf); err != nil {
		return err
	}
	if sf.outputFormat != "" {
		return usagef("", "--output-format applies to print mode only (-p)")
	}
	if sf.mode != "" && !config.ValidMode(sf.mode) {
		return usagef("", "--permission-mode must be default, plan, acceptEdits or bypassPermissions, not %q", sf.mode)
	}
	if len(ops) > 1 {
		return usagef("", "the interactive session takes one PROMPT (quote it), got %d arguments", len(ops))
	}
	// Invalid grants refuse the start, before anything runs (decisions.md
	// §4).
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

// commandRunner runs the slash commands that need the session: /mcp …
// and /events … (seed-mcp-events.md §4.1) and /keybindings (decisions.md
// §1.1).
func commandRunner(home string, c **agent.CLI, ep **eventEndpoint) tui.CommandRunner {
	return func(ctx context.Context, words []string) (string, error) {
		switch words[0] {
		case "/mcp":
			if *c == nil {
				return "", errors.New("the session has not started")
			}
			return (*c).MCPCommand(ctx, words[1:])
		case "/events":
			return (*ep).command(words[1:])
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
		return "", fmt.Errorf("%w: unknown command %s", agent.ErrUsage, words[0])
	}
}

// plainSession is the fallback when stdout is not a terminal or
// TERM=dumb: the prompt from the argument, then stdin lines.
func plainSession(ctx context.Context, e *env, sf *sessionFlags, f *flagSet, prompt string, grants []events.Grant) error {
	opts := e.cliOptions(sf, f)
	opts.Headless = false // untrusted: user settings only (decisions.md §6)
	c, err := agent.StartCLI(ctx, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	ep, err := startEvents(c, sf, grants)
	if err != nil {
		return err
	}
	defer ep.Close()
	if !c.Trusted {
		fmt.Fprintf(e.err, "agent: the workspace %s is not trusted: running with user settings only ('agent trust' trusts it)\n", c.Workspace)
	}
	code, err := tui.RunPlain(ctx, tui.FromAgent(c.Session), tui.PlainOptions{
		In: e.in, Out: e.out, Err: e.err, Commands: commandRunner(e.home, &c, &ep),
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
	// SIGHUP (the terminal went away) ends the session like SIGTERM.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		select {
		case <-hup:
			cancel(errInterrupted)
		case <-ctx.Done():
		}
	}()

	if err := tty.Raw(); err != nil {
		return err
	}
	if err := tty.Enter(); err != nil {
		return err
	}
	watcher, first := keymap.Watch(ctx, keymap.Path(e.home), keymap.Options{})
	defer watcher.Close()
	var c *agent.CLI
	var ep *eventEndpoint
	app := tui.New(tui.Options{
		Terminal: tty, Resize: tty.Resize(), EnableKitty: tty.EnableKitty,
		Keymap: first.Keymap, KeymapUpdates: watcher.Updates(), Notices: first.Notices,
		NoColor:  e.getenv("NO_COLOR") != "",
		Commands: commandRunner(e.home, &c, &ep),
	})
	defer app.Close()

	ws, err := e.workspace()
	if err != nil {
		return err
	}
	if trusted, terr := config.IsTrusted(e.home, ws); terr == nil && !trusted {
		yes, err := app.Confirm(ctx, "Trust this workspace?",
			ws+"\nIts settings (.agent/ and .compat/) can define MCP servers, permission rules and providers. Without trust the session runs with your user settings only.")
		switch {
		case errors.Is(err, tui.ErrExit):
			return &exitError{code: tui.ExitInterrupted}
		case err != nil:
			return err
		case yes:
			if _, err := config.Trust(e.home, ws, time.Now()); err != nil {
				app.Notice("could not record the trust: " + err.Error())
			}
		default:
			app.Notice("The workspace is not trusted: running with your user settings only.")
		}
	}

	opts := e.cliOptions(sf, f)
	opts.Headless = false
	opts.Prompter = app
	opts.Notice = app.Notice
	opts.SignInUI = signInUI{app}
	c, err = agent.StartCLI(ctx, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	if ep, err = startEvents(c, sf, grants); err != nil {
		return err
	}
	defer ep.Close()
	code, err := app.Run(ctx, tui.FromAgent(c.Session), tui.Status{Provider: c.Model.ProviderID, Model: c.Model.Model, Mode: c.Permissions.Mode()}, prompt)
	app.Close()
	tty.Restore()
	fmt.Fprintf(e.err, "agent: session %s (continue it with 'agent --resume %s')\n", c.Session.ID(), c.Session.ID())
	if err != nil {
		return err
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// signInUI carries /mcp login's conversation in the terminal UI: progress
// as notices, the browser question as a confirm prompt, the pasted
// redirect address in a masked text prompt (seed-mcp-events.md §4.1).
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
