package main

// agent sandbox check and agent sandbox run (docs/reference/cli.md,
// "Sandbox"; docs/sandbox.md): what this machine offers the sandbox, and
// one command run confined, for the user to try.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"agent/agent"
	"agent/config"
	"agent/internal/quote"
	sbox "agent/internal/sandbox"
	"agent/internal/strictjson"
)

// Exit codes of agent sandbox run besides the command's own
// (docs/reference/cli.md, "Sandbox").
const (
	exitSetupFailed = 125 // the sandbox could not be set up: nothing ran
	exitNotRunnable = 126 // the command exists but cannot be run
	exitNotFound    = 127 // no such command
)

// sandboxSettings loads the workspace's settings (trust gated, as a
// session would) and returns its sandbox keys with mode applied, and the
// diagnostics of the sandbox keys.
func (e *env) sandboxSettings(mode string) (ws string, s config.SandboxSettings, diags []string, err error) {
	ws, err = e.workspace()
	if err != nil {
		return "", s, nil, err
	}
	trusted, terr := config.IsTrusted(e.home, ws)
	if terr != nil {
		// The project's settings, and so its sandbox keys, are not read.
		diags = append(diags, fmt.Sprintf("%v; the workspace is treated as untrusted", terr))
	}
	loaded := config.Load(config.Options{Home: e.home, Workspace: ws, Trusted: trusted && terr == nil})
	for _, d := range loaded.Diagnostics {
		// What concerns the sandbox's keys, and every file skipped whole
		// (its sandbox keys with it).
		if d.Path == "" || d.Path == strictjson.Root || strings.HasPrefix(string(d.Path), "$.sandbox") || strings.Contains(string(d.Path), ".sandbox") {
			diags = append(diags, d.String())
		}
	}
	s, err = agent.SandboxSettings(loaded.Sandbox, mode)
	return ws, s, diags, err
}

func sandboxCheckCommand() *command {
	return &command{
		path:    "sandbox check",
		summary: "print what this machine offers the sandbox and the workspace's sandbox settings",
		help: `Reports the Landlock ABI, seccomp, namespaces and the resulting tier, after confining a
probe for real, then the sandbox mode and network of this workspace's settings. Exit 0
when commands get file-system confinement here, 1 when they would run unconfined.`,
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			return func(_ context.Context, e *env, args []string) error {
				if err := noOperands("sandbox check", args); err != nil {
					return err
				}
				return sandboxCheck(e)
			}
		},
	}
}

func sandboxCheck(e *env) error {
	ws, s, diags, err := e.sandboxSettings("")
	if err != nil {
		return err
	}
	box, err := sbox.New(sbox.Options{Home: e.home, Workspace: ws, ID: fmt.Sprintf("check-%d", os.Getpid())})
	if err != nil {
		return err
	}
	defer box.Close()
	sup, perr := box.Probe()
	for _, d := range diags {
		fmt.Fprintln(e.out, "diagnostic: "+sanitizeLine(d))
	}
	if sup.ABI > 0 {
		abi := fmt.Sprintf("ABI %d", sup.ABI)
		if sup.ABI != sup.KernelABI {
			abi += fmt.Sprintf(" (the kernel's is %d; capped for testing)", sup.KernelABI)
		}
		fmt.Fprintf(e.out, "landlock: %s: %s\n", abi, sbox.Features(sup.ABI))
	} else {
		fmt.Fprintln(e.out, "landlock: not available: commands get no file-system confinement")
	}
	yesNo := map[bool]string{true: "yes", false: "no"}
	fmt.Fprintf(e.out, "seccomp: %s (%s)\n", yesNo[sup.Seccomp], sup.Arch)
	if sup.Namespaces {
		if sbox.NoUserNamespace() {
			fmt.Fprintln(e.out, "namespaces: yes (mount, network; as root, no user namespace)")
		} else {
			fmt.Fprintln(e.out, "namespaces: yes (user, mount, network)")
		}
	} else {
		fmt.Fprintf(e.out, "namespaces: no (%s)\n", sup.NamespaceErr)
	}
	fmt.Fprintln(e.out, "tier: "+sup.Tier())
	p := agent.BashProfile(s)
	fmt.Fprintf(e.out, "mode: %s (network %s)\n", s.ModeName(), p.Network)
	switch {
	case perr != nil:
		fmt.Fprintln(e.out, "probe: failed: "+sanitizeLine(perr.Error()))
		return &exitError{code: 1}
	case !sup.Filesystem():
		fmt.Fprintln(e.out, "probe: commands would run unconfined")
		return &exitError{code: 1}
	}
	fmt.Fprintln(e.out, "probe: ok")
	return nil
}

func sandboxRunCommand() *command {
	return &command{
		path:         "sandbox run",
		signalsLater: true,
		synopsis:     "[--mode MODE] -- COMMAND [ARGS...]",
		summary:      "run one command confined, as the Bash tool would",
		help: `Runs COMMAND in this workspace with the sandbox of its settings (or --mode), its
standard streams connected, and prints what the sandbox refused and restored on stderr.
The exit code is the command's; 125 when the sandbox could not be set up (the command
did not run), 126 when it cannot be run, 127 when it is not found.`,
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			var mode string
			f.stringVar(&mode, "mode", "MODE", sbox.ModeNames)
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) == 0 {
					return usagef("sandbox run", "no command: give it after --")
				}
				if _, ok := sbox.ParseMode(mode); mode != "" && !ok {
					return usagef("sandbox run", "--mode must be %s, not %q", sbox.ModeNames, quote.V(mode))
				}
				return sandboxRun(ctx, e, mode, args)
			}
		},
	}
}

func sandboxRun(ctx context.Context, e *env, mode string, args []string) error {
	// The helper was started while the agent initialised (package early):
	// adopted here, it waits for its policy.
	tail := &tailWriter{max: 64 << 10}
	stderr := io.MultiWriter(e.err, tail)
	early := sbox.AdoptEarly(ctx, stderr)
	defer early.Close()
	ws, s, diags, err := e.sandboxSettings(mode)
	if err != nil {
		return err
	}
	for _, d := range diags {
		fmt.Fprintln(e.err, "agent: "+sanitizeLine(d))
	}
	prof := agent.BashProfile(s)
	box, err := sbox.New(sbox.Options{Home: e.home, Workspace: ws, ID: fmt.Sprintf("run-%d", os.Getpid()),
		Protected: prof.Protected, RunDirs: []string{agent.RunDir(e.home, os.LookupEnv)},
		Notice: func(l string) { fmt.Fprintln(e.err, "agent: "+l) }})
	if err != nil {
		return err
	}
	defer box.Close()
	if prof.Confines() && !box.Support().Filesystem() {
		if s.FailIfUnavailable {
			return errors.New("the sandbox is unavailable here (no Landlock) and failIfUnavailable is set: the command was not run")
		}
		fmt.Fprintln(e.err, "agent: sandbox unavailable: this kernel gives no file-system confinement (no Landlock); the command runs unconfined")
	}
	build := func() *exec.Cmd {
		cmd := sandboxCmd(ctx, e, args, stderr)
		keys := make([]string, 0, len(config.APIKeyEnv))
		for _, k := range config.APIKeyEnv {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		cmd.Env = box.Env(os.Environ(), keys)
		return cmd
	}
	<-signalsReady // a Ctrl-C from now on reaches the command, not an agent gone
	if ctx.Err() != nil {
		return ctx.Err() // interrupted while setting up: the command does not start
	}
	run, err := box.Start(build, sbox.Request{Label: "sandbox run", Command: strings.Join(args, " "), Profile: prof,
		Guard: prof.Mode == sbox.WorkspaceWrite, Early: early})
	if err != nil {
		return sandboxStartError(e, args[0], err)
	}
	werr := run.Wait()
	for _, l := range run.Finish(run.State(), tail.String()).Lines() {
		fmt.Fprintln(e.err, "agent: "+sanitizeLine(l))
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if st := run.State(); st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return &exitError{code: 128 + int(ws.Signal())}
		}
		if st.ExitCode() != 0 {
			return &exitError{code: st.ExitCode()}
		}
		return nil
	}
	return werr
}

// sandboxCmd is the command of agent sandbox run (its environment is the
// box's): the standard streams of the agent, stderr also kept (its end)
// to recognise refusals. A helper started at init has the same streams,
// and ctx ends its command the same way (sbox.AdoptEarly).
func sandboxCmd(ctx context.Context, e *env, args []string, stderr io.Writer) *exec.Cmd {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = e.cwd
	cmd.Stdin, cmd.Stdout = e.in, e.out
	cmd.Stderr = stderr
	// The command has a session of its own: a Ctrl-C reaches the agent,
	// which passes it on to the command's group.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// sandboxStartError reports a command that did not start.
func sandboxStartError(e *env, name string, err error) error {
	var setup *sbox.SetupError
	if errors.As(err, &setup) {
		fmt.Fprintf(e.err, "agent sandbox run: %v\n", sanitizeLine(setup.Error()))
		return &exitError{code: exitSetupFailed}
	}
	code := exitNotRunnable
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, syscall.ENOENT) {
		code = exitNotFound
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, name+": ") {
		msg = name + ": " + msg // the helper's lookup names the command already
	}
	fmt.Fprintf(e.err, "agent sandbox run: %v\n", sanitizeLine(msg))
	return &exitError{code: code}
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) > t.max {
		return string(t.buf[len(t.buf)-t.max:])
	}
	return string(t.buf)
}
