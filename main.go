// Command agent is a terminal AI agent: an interactive session, print mode,
// an MCP client and server, and an endpoint for signed external events.
//
// This file only wires: it parses the command line, finds the command, runs
// it, and maps its error to an exit code in one place
// (docs/reference/cli.md, "Exit codes"). Each command's body lives in a
// cmd_*.go file of this package and calls into the subsystem packages; main
// is the only package that joins subsystems (CONTRIBUTING.md, "Import
// direction"; README.md, "A walk through the code").
//
// The sandbox helper never reaches main: started as /proc/self/exe in the
// helper mode, the binary confines itself and execs the command while
// package internal/sandbox/confine initialises (docs/design.md, "The
// sandbox helper is the agent's own binary").
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"agent/internal/quote"
	sbox "agent/internal/sandbox"
)

// version is set at link time (-ldflags "-X main.version=1.2.3"); otherwise
// the module version from the build info, or "dev".
var version = ""

// command is one entry of the command table. build registers the command's
// flags and returns the function that runs it with the operands.
type command struct {
	path     string // words after "agent", e.g. "mcp list"
	synopsis string // operands and flags after the path, for usage
	summary  string
	help     string // paragraphs shown by --help
	build    func(f *flagSet) func(ctx context.Context, e *env, args []string) error
	// signalsLater: the command waits for signalsReady itself, before it
	// starts anything a signal must reach; any other runs once the
	// signals are caught.
	signalsLater bool
}

// commands is the command table. Only commands that work are listed.
func commands() []*command {
	return []*command{
		versionCommand(),
		helpCommand(),
		trustCommand(),
		trustStatusCommand(),
		trustRevokeCommand(),
		mcpListCommand(),
		mcpLoginCommand(),
		mcpLogoutCommand(),
		mcpServeCommand(),
		sessionStartCommand(),
		sessionListCommand(),
		sessionStopCommand(),
		sessionCheckpointsCommand(),
		sessionRewindCommand(),
		sessionEventsListCommand(),
		sessionEventsRevokeCommand(),
		keybindingsCheckCommand(),
		hooksListCommand(),
		hooksApproveCommand(),
		sandboxCheckCommand(),
		sandboxRunCommand(),
	}
}

func main() {
	if os.Getenv(cleanupChildEnv) == "1" {
		os.Exit(runCleanupChild()) // cleanup.go: before anything else runs
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	// SIGINT, SIGTERM and SIGHUP (the terminal closed) end the command
	// as an interruption: it winds down and cleans up (exit 130).
	sigs := make(chan os.Signal, 1)
	ready := make(chan struct{})
	signalsReady = ready
	go func() {
		// Installed off the main goroutine: each signal is a round trip to
		// the runtime's signal thread, which agent sandbox run's start need
		// not wait for (it waits before its command starts); every other
		// command waits before it runs (run: signalsReady).
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		close(ready)
		<-sigs
		cancel(errInterrupted)
		// A second signal while shutting down exits at once, after the
		// last-resort cleanups (the terminal, a token file).
		<-sigs
		restoreTerminal()
		runExitHooks()
		os.Exit(130)
	}()
	code := runGuarded(ctx, os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr})
	cancel(nil)
	sbox.EndEarly() // a helper started for a command line that did not run
	os.Exit(code)
}

// signalsReady is closed once SIGINT, SIGTERM and SIGHUP are caught: a
// command that starts a child the agent must pass them on to waits for it.
// main replaces it before it runs a command; closed from the start, so
// that run called without main (the tests) does not wait.
var signalsReady = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// catchFatalSignals makes every other signal whose default is to end the
// process end it that way after the last-resort cleanups (a token file is
// removed on every exit path; SIGQUIT keeps its stack dump: docs/design.md,
// "A token file is removed however the process ends"). It is called before
// there is anything to clean up (a token file, the terminal in raw mode),
// not at start: each notified signal costs a round trip to the runtime's
// signal thread, which every command would pay (docs/performance.md,
// "Startup (main, config)").
var catchFatalSignals = sync.OnceFunc(func() {
	fatal := make(chan os.Signal, 1)
	signal.Notify(fatal, fatalSignals...)
	go func() {
		sig := <-fatal
		restoreTerminal()
		runExitHooks()
		signal.Reset(sig)
		syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		time.Sleep(time.Second) // the signal's default action ends the process
		os.Exit(128 + int(sig.(syscall.Signal)))
	}()
})

// runGuarded is run with the last-resort cleanups on a panic of the main
// goroutine; the panic then goes on with its original stack.
func runGuarded(ctx context.Context, args []string, s stdio) int {
	defer func() {
		if r := recover(); r != nil {
			restoreTerminal()
			runExitHooks()
			panic(r)
		}
	}()
	return run(ctx, args, s)
}

// run executes the command line args and returns the exit code. Every
// command, the interactive session and print mode included, goes through
// the same steps: flags, the HOME check, the command, and exitCode.
func run(ctx context.Context, args []string, s stdio) int {
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(s.err, "agent: cannot determine the working directory: %v\n", err)
		return 1
	}
	e := &env{stdio: s, getenv: os.Getenv, home: os.Getenv("HOME"), cwd: cwd}
	cmd, rest := findCommand(args)
	if cmd == nil {
		if code, done := rootWords(e, args); done {
			return code
		}
		cmd, rest = interactiveCommand(), args
		if hasPrintFlag(args) {
			cmd = printCommand()
		}
	}
	f := newFlagSet(cmd.path)
	runFn := cmd.build(f)
	operands, err := f.parse(rest)
	if err == nil {
		if herr := checkHome(e.home); herr != nil && cmd.path != "version" && cmd.path != "help" {
			err = herr
		} else {
			if !cmd.signalsLater {
				<-signalsReady
			}
			err = runFn(ctx, e, operands)
		}
	}
	return exitCode(ctx, e, cmd, f, err)
}

// checkHome refuses a HOME that cannot place ~/.agent: unset, or relative
// (which would put the user's settings, grants and tokens under whatever
// folder the agent runs in, the workspace included).
func checkHome(home string) error {
	switch {
	case home == "":
		return errors.New("HOME is not set: it decides where ~/.agent lives")
	case !filepath.IsAbs(home):
		return fmt.Errorf("HOME is %q, not an absolute path: it decides where ~/.agent lives", quote.V(home))
	}
	return nil
}

// findCommand finds the longest command path that prefixes args.
func findCommand(args []string) (*command, []string) {
	var best *command
	bestLen := 0
	for _, c := range commands() {
		words := strings.Fields(c.path)
		if len(words) > len(args) || len(words) <= bestLen {
			continue
		}
		match := true
		for i, w := range words {
			if args[i] != w {
				match = false
				break
			}
		}
		if match {
			best, bestLen = c, len(words)
		}
	}
	if best == nil {
		return nil, args
	}
	return best, args[bestLen:]
}

// groups are command words that only lead to subcommands.
var groups = map[string]string{
	"mcp":         "MCP servers: status, sign-in, serving",
	"keybindings": "the keybindings overrides file",
	"session":     "background and stored sessions",
	"hooks":       "hooks and their approval",
	"sandbox":     "the sandbox that confines the commands the model runs",
}

// rootWords answers the command lines that are neither a command nor a
// session: --help, --version, a group without its subcommand, and a lone
// word that looks like a mistyped command. done is false for a session.
func rootWords(e *env, args []string) (code int, done bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case "-h", "--help":
		fmt.Fprint(e.out, overview())
		return 0, true
	case "--version", "-v":
		fmt.Fprintln(e.out, versionLine())
		return 0, true
	}
	if hasPrintFlag(args) {
		return 0, false
	}
	if summary, ok := groups[args[0]]; ok {
		if len(args) > 1 && (args[1] == "--help" || args[1] == "-h") {
			fmt.Fprint(e.out, groupHelp(args[0], summary))
			return 0, true
		}
		if len(args) == 1 {
			fmt.Fprintf(e.err, "agent: %s needs a subcommand (see 'agent %s --help')\n", args[0], args[0])
		} else {
			fmt.Fprintf(e.err, "agent: unknown command %q (see 'agent %s --help')\n", quote.V(args[0]+" "+args[1]), args[0])
		}
		return 2, true
	}
	if looksLikeCommand(args) {
		fmt.Fprintf(e.err, "agent: unknown command %q (see 'agent --help'; 'agent -- %s' sends it as a prompt)\n", quote.V(args[0]), quote.Cut(args[0]))
		return 2, true
	}
	return 0, false
}

// exitCode is the one place where errors become exit codes
// (docs/reference/cli.md, "Exit codes").
func exitCode(ctx context.Context, e *env, cmd *command, f *flagSet, err error) int {
	var ue *usageError
	var xe *exitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errHelp):
		fmt.Fprint(e.out, commandHelp(cmd, f))
		return 0
	case errors.As(err, &ue):
		if cmd.path == "" {
			fmt.Fprintf(e.err, "agent: %s (see 'agent --help')\n", ue.msg)
		} else {
			fmt.Fprintf(e.err, "agent %s: %s (see 'agent %s --help')\n", cmd.path, ue.msg, cmd.path)
		}
		return 2
	case errors.Is(context.Cause(ctx), errInterrupted):
		fmt.Fprintln(e.err, "agent: interrupted")
		return 130
	case errors.As(err, &xe):
		return xe.code
	default:
		// The message may carry outside text (a server's error message).
		fmt.Fprintf(e.err, "%s: %s\n", strings.TrimSpace("agent "+cmd.path), sanitizeText(err.Error()))
		return 1
	}
}

// hasPrintFlag reports whether the command line asks for print mode.
func hasPrintFlag(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-p" || a == "--print" || strings.HasPrefix(a, "--print=") {
			return true
		}
	}
	return false
}

func versionLine() string {
	v := version
	if v == "" {
		v = "dev"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = strings.TrimPrefix(bi.Main.Version, "v")
		}
	}
	return fmt.Sprintf("agent %s (%s %s/%s)", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func overview() string {
	var b strings.Builder
	b.WriteString("agent: a terminal AI agent\n\nUsage:\n" +
		"  agent [flags] [PROMPT]        the interactive session in this directory\n" +
		"  agent -p [flags] [PROMPT|-]   print mode: one turn, the answer on stdout (\"-\" or no PROMPT: stdin)\n" +
		"  agent COMMAND [flags]\n\n")
	f := newFlagSet("")
	(&sessionFlags{}).registerRoot(f)
	b.WriteString("Session flags (interactive and print mode):\n")
	b.WriteString(strings.TrimPrefix(f.usage(), "\nFlags:\n"))
	b.WriteString("\nCommands:\n")
	cmds := commands()
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].path < cmds[j].path })
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.path))
	}
	for _, c := range cmds {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, c.path, c.summary)
	}
	b.WriteString("\nRun 'agent COMMAND --help' for a command's flags. 'agent --version' prints the version.\n")
	return b.String()
}

func groupHelp(group, summary string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "agent %s: %s\n\nCommands:\n", group, summary)
	for _, c := range commands() {
		if strings.HasPrefix(c.path, group+" ") {
			fmt.Fprintf(&b, "  agent %s %s\n      %s\n", c.path, c.synopsis, c.summary)
		}
	}
	return b.String()
}

func commandHelp(c *command, f *flagSet) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace("Usage: agent " + c.path))
	if c.synopsis != "" {
		b.WriteString(" " + c.synopsis)
	}
	b.WriteString("\n\n" + c.summary + "\n")
	if c.help != "" {
		b.WriteString("\n" + strings.TrimSpace(c.help) + "\n")
	}
	b.WriteString(f.usage())
	b.WriteString("  -h, --help  print this help\n")
	return b.String()
}

// noOperands refuses operands for commands that take none.
func noOperands(cmd string, args []string) error {
	if len(args) > 0 {
		return usagef(cmd, "unexpected argument %q", quote.V(args[0]))
	}
	return nil
}

func versionCommand() *command {
	return &command{
		path:    "version",
		summary: "print the version",
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			return func(_ context.Context, e *env, args []string) error {
				if err := noOperands("version", args); err != nil {
					return err
				}
				fmt.Fprintln(e.out, versionLine())
				return nil
			}
		},
	}
}

func helpCommand() *command {
	return &command{
		path:     "help",
		synopsis: "[COMMAND]",
		summary:  "print help for agent or for one command",
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			return func(_ context.Context, e *env, args []string) error {
				if len(args) == 0 {
					fmt.Fprint(e.out, overview())
					return nil
				}
				if summary, ok := groups[args[0]]; ok && len(args) == 1 {
					fmt.Fprint(e.out, groupHelp(args[0], summary))
					return nil
				}
				c, rest := findCommand(args)
				if c == nil || len(rest) > 0 {
					return usagef("help", "unknown command %q", quote.V(strings.Join(args, " ")))
				}
				cf := newFlagSet(c.path)
				c.build(cf)
				fmt.Fprint(e.out, commandHelp(c, cf))
				return nil
			}
		},
	}
}
