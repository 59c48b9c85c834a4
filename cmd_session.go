package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"agent/agent"
)

// backgroundChildEnv marks the detached process that `agent session start
// --background` starts; the ready pipe is its fd 3. The variable is
// removed before anything else runs, so tools never see it.
const backgroundChildEnv = "AGENT_BACKGROUND_CHILD"

// readyTimeout bounds the wait for a background session to be ready.
const readyTimeout = 60 * time.Second

func sessionStartCommand() *command {
	return &command{
		path:     "session start",
		synopsis: "--background [--name NAME] [session flags] [event flags]",
		summary:  "start a background session; print its id once it is ready",
		help: `Starts a session in a detached process (its own process group) in the current
workspace, which must be trusted, and prints only its id on stdout once the session
is ready to take turns. Nobody is attached, so permission prompts are denied with
the rule that would allow the call. Control it with 'agent session list' and
'agent session stop ID'.`,
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			sf := &sessionFlags{}
			var background bool
			var name string
			f.boolVar(&background, "background", "", "run detached (required)")
			f.stringVar(&name, "name", "NAME", "a name shown by 'agent session list'")
			sf.register(f)
			f.stringsVar(&sf.eventGrants, "external-event-grant", "FILE", "admit events for this grant (repeatable)")
			f.stringVar(&sf.eventPort, "external-event-port", "PORT", "the loopback port of the event endpoint")
			f.stringsVar(&sf.eventProxies, "external-event-trusted-proxy", "IP", "believe X-Forwarded-For from this proxy (repeatable)")
			return func(ctx context.Context, e *env, args []string) error {
				if err := noOperands("session start", args); err != nil {
					return err
				}
				if !background {
					return usagef("session start", "only background sessions start this way: add --background")
				}
				if err := checkModelFlags("session start", sf); err != nil {
					return err
				}
				if err := checkAgentsFlag("session start", sf.agentsJSON); err != nil {
					return err
				}
				if strings.ContainsAny(name, "\t\n\r") || len(name) > 200 {
					return usagef("session start", "--name must be one line of at most 200 bytes")
				}
				if err := checkEventFlags("session start", sf); err != nil {
					return err
				}
				if fd, ok := os.LookupEnv(backgroundChildEnv); ok {
					os.Unsetenv(backgroundChildEnv)
					return backgroundChild(ctx, e, sf, f, name, fd)
				}
				// Invalid grants refuse the start here, before anything
				// runs (docs/reference/events.md, "Starting a session with
				// grants").
				if _, err := loadGrants(sf); err != nil {
					return err
				}
				return startBackground(ctx, e, sf, f, name)
			}
		},
	}
}

// startBackground starts the detached process and waits until it reports
// ready (its id), a failure, or its exit.
func startBackground(ctx context.Context, e *env, sf *sessionFlags, f *flagSet, name string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the agent executable: %w", err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer pr.Close()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		pw.Close()
		return err
	}
	defer null.Close()
	cmd := exec.Command(exe, backgroundArgs(sf, f, name)...)
	cmd.Dir = e.cwd
	cmd.Env = append(os.Environ(), backgroundChildEnv+"=3")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, null
	cmd.ExtraFiles = []*os.File{pw}
	// Its own session and process group: no terminal, and the signals of
	// this one (Ctrl-C) do not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		pw.Close()
		return fmt.Errorf("starting the background session: %w", err)
	}
	pw.Close()
	return awaitReady(ctx, e, cmd, pr)
}

// backgroundArgs is the command line of the detached process: the flags
// given here, grant files as absolute paths.
func backgroundArgs(sf *sessionFlags, f *flagSet, name string) []string {
	args := []string{"session", "start", "--background"}
	if name != "" {
		args = append(args, "--name", name)
	}
	for _, fl := range []struct{ flag, val string }{
		{"provider", sf.provider}, {"model", sf.model}, {"base-url", sf.baseURL},
		{"permission-mode", sf.mode}, {"system-prompt", sf.systemPrompt}, {"append-system-prompt", sf.appendSystemPrompt}, {"resume", sf.resume},
		{"external-event-port", sf.eventPort}, {"agents", sf.agentsJSON},
	} {
		if f.isSet(fl.flag) {
			args = append(args, "--"+fl.flag+"="+fl.val)
		}
	}
	if sf.noAutoCompact {
		args = append(args, "--no-auto-compact")
	}
	for _, g := range sf.eventGrants {
		// The child starts in the same directory; an absolute path keeps
		// the grant file it reads the one named here.
		if abs, err := filepath.Abs(g); err == nil {
			g = abs
		}
		args = append(args, "--external-event-grant="+g)
	}
	for _, p := range sf.eventProxies {
		args = append(args, "--external-event-trusted-proxy="+p)
	}
	return args
}

// awaitReady relays the detached process's notices until it reports
// ready (its id goes to stdout), an error, or its exit; a process not
// ready within readyTimeout, or a Ctrl-C meanwhile, is stopped.
func awaitReady(ctx context.Context, e *env, cmd *exec.Cmd, ready io.Reader) error {
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	type msg struct {
		kind, text string
	}
	lines := make(chan msg, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(io.LimitReader(ready, 1<<20))
		for sc.Scan() {
			kind, text, _ := strings.Cut(sc.Text(), " ")
			lines <- msg{kind, text}
		}
	}()
	timer := time.NewTimer(readyTimeout)
	defer timer.Stop()
	kill := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	for {
		select {
		case m, ok := <-lines:
			if !ok {
				// The pipe closed without "ready": the child failed.
				err := <-exited
				return fmt.Errorf("the background session exited before it was ready (%v)", err)
			}
			switch m.kind {
			case "notice":
				fmt.Fprintln(e.err, "agent: "+sanitizeLine(m.text))
			case "error":
				<-exited
				fmt.Fprintln(e.err, "agent: "+sanitizeLine(m.text))
				return &exitError{code: 1}
			case "ready":
				cmd.Process.Release()
				fmt.Fprintln(e.out, m.text)
				return nil
			}
		case <-timer.C:
			kill()
			return fmt.Errorf("the background session was not ready within %s; it was stopped", readyTimeout)
		case <-ctx.Done():
			kill()
			return ctx.Err()
		}
	}
}

// backgroundChild is the detached process: it starts the session, serves
// its control socket, reports ready on the pipe and runs until stopped.
func backgroundChild(ctx context.Context, e *env, sf *sessionFlags, f *flagSet, name, fd string) error {
	if fd != "3" {
		return fmt.Errorf("%s: unexpected value", backgroundChildEnv)
	}
	ready := os.NewFile(3, "ready")
	if ready == nil {
		return errors.New("the ready pipe is missing")
	}
	report := func(kind, text string) {
		fmt.Fprintf(ready, "%s %s\n", kind, strings.ReplaceAll(text, "\n", " "))
	}
	fail := func(err error) error {
		report("error", err.Error())
		ready.Close()
		return &exitError{code: 1}
	}
	grants, err := loadGrants(sf)
	if err != nil {
		return fail(err)
	}
	opts := e.startOptions(sf, f, backgroundFront)
	opts.Notice = func(line string) { report("notice", line) }
	// Questions go to an attached terminal UI; with nobody attached they
	// are denied (docs/reference/runtime.md, "Permission prompts").
	attach := agent.NewAttachments()
	opts.Prompter = attach
	c, err := agent.Start(ctx, opts)
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	ep, err := startEvents(c, sf, grants)
	if err != nil {
		return fail(err)
	}
	defer ep.Close()
	bg, err := agent.ServeBackground(agent.BackgroundOptions{
		Dir:     agent.RunDir(e.home, os.LookupEnv),
		Name:    name,
		Session: c.Session, Workspace: c.Workspace,
		Handlers: ep.controlHandlers(),
		Attach:   attach,
	})
	if err != nil {
		return fail(err)
	}
	defer bg.Close()
	report("ready", c.Session.ID())
	ready.Close()
	select {
	case <-bg.Stopped():
	case <-ctx.Done():
	}
	// No more events, then end the running turn and the session (its
	// transcript complete), then remove the socket: `session stop`
	// returns once it is gone.
	ep.Close()
	c.Close()
	bg.Close()
	return nil
}

func sessionListCommand() *command {
	return &command{
		path:    "session list",
		summary: "one line per live background session: id, name, workspace, started",
		help: `Output: one line per live background session, oldest first, as tab-separated
fields ID NAME WORKSPACE STARTED (NAME "-" when none; STARTED in RFC 3339, UTC).
Sockets left by a session that died are removed.`,
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			return func(ctx context.Context, e *env, args []string) error {
				if err := noOperands("session list", args); err != nil {
					return err
				}
				list, err := agent.ListBackground(ctx, agent.RunDir(e.home, os.LookupEnv))
				if err != nil {
					return err
				}
				var b strings.Builder
				for _, in := range list {
					name := in.Name
					if name == "" {
						name = "-"
					}
					fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", sanitizeLine(in.ID), sanitizeLine(name), sanitizeLine(in.Workspace), in.Started.UTC().Format(time.RFC3339))
				}
				_, err = io.WriteString(e.out, b.String())
				return err
			}
		},
	}
}

func sessionStopCommand() *command {
	return &command{
		path:     "session stop",
		synopsis: "ID",
		summary:  "stop a background session",
		help: `Aborts the session's running turn (its partial answer is kept in the transcript),
ends the session and waits until its process has let go of the control socket.`,
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) != 1 {
					return usagef("session stop", "needs exactly one ID; 'agent session list' shows them")
				}
				dir := agent.RunDir(e.home, os.LookupEnv)
				cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				resp, err := agent.ControlCall(cctx, dir, args[0], agent.ControlRequest{Op: "stop"})
				if err != nil {
					return err
				}
				if !resp.OK {
					return fmt.Errorf("background session %s: %s", args[0], resp.Error)
				}
				// Wait until the socket is gone: the session has ended.
				for {
					_, err := agent.ControlCall(cctx, dir, args[0], agent.ControlRequest{Op: "info"})
					if errors.Is(err, agent.ErrNoBackground) {
						return nil
					}
					select {
					case <-cctx.Done():
						if ctx.Err() != nil {
							return ctx.Err()
						}
						return fmt.Errorf("background session %s did not end within 10 s", args[0])
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
		},
	}
}
