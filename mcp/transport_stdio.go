package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	"agent/mcp/jsonrpc"
)

// StdioOptions describes the server process exactly as the caller (the
// stdio authority of the session, docs/reference/mcp.md, "What connects and
// when", rule 3) gave it. Nothing is added: no shell, no inherited
// environment.
type StdioOptions struct {
	// Command is the executable; without a slash it is looked up in this
	// process's PATH (exec.LookPath).
	Command string
	// Args are the arguments after the command name.
	Args []string
	// Env is the complete environment of the process. nil means an empty
	// environment, not this process's: what runs is exactly what the
	// authority names.
	Env []string
	// Dir is the working directory; "" means this process's.
	Dir string
	// StderrLimit bounds how much of the server's stderr is kept (the
	// latest bytes, for diagnostics); 0 means 64 KiB.
	StderrLimit int
	// MaxMessage bounds one message line; 0 means 16 MiB.
	MaxMessage int
	// ShutdownWait bounds each wait of the shutdown sequence (after closing
	// stdin, then after SIGTERM, then after SIGKILL); 0 means 2 s.
	ShutdownWait time.Duration
	// Start starts the process (the sandbox's: docs/sandbox.md); build
	// makes the command and may be called more than once. nil: the
	// command as built, unconfined.
	Start func(build func() *exec.Cmd) (*exec.Cmd, error)
	// Exited, when set, is told how the process ended, once it was waited
	// for (the sandbox records the spawn then).
	Exited func(*os.ProcessState)
}

// StdioTransport runs an MCP server as a child process and talks to it on
// its stdin and stdout (MCP transports "stdio"). stderr is kept apart:
// captured, bounded, never parsed as messages.
type StdioTransport struct {
	cmd    *exec.Cmd
	stdin  *os.File // our end of the child's stdin
	stdout *os.File // our end of the child's stdout
	r      *jsonrpc.Reader
	w      *jsonrpc.Writer
	stderr *tailBuffer
	wait   time.Duration

	exited  chan struct{} // closed when the process has been reaped
	exitErr error

	closing   chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// StartStdio starts the server process. The process gets its own process
// group, so that the shutdown signals reach what it started too and a
// terminal's Ctrl-C is not delivered to it directly: the session decides
// when its servers end.
func StartStdio(opts StdioOptions) (*StdioTransport, error) {
	if opts.Command == "" {
		return nil, errors.New("mcp: stdio: no command")
	}
	// Pipes of our own rather than StdinPipe/StdoutPipe: Wait closes those
	// when the process exits, which could drop the last messages still
	// buffered; with our own pipes the reader sees every byte, then EOF.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("mcp: stdio: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("mcp: stdio: %w", err)
	}
	limit := opts.StderrLimit
	if limit <= 0 {
		limit = 64 << 10
	}
	wait := opts.ShutdownWait
	if wait <= 0 {
		wait = 2 * time.Second
	}
	t := &StdioTransport{
		stdin:   inW,
		stdout:  outR,
		r:       jsonrpc.NewReader(outR, jsonrpc.ReaderOptions{MaxMessage: opts.MaxMessage}),
		w:       jsonrpc.NewWriter(inW),
		stderr:  &tailBuffer{limit: limit},
		wait:    wait,
		exited:  make(chan struct{}),
		closing: make(chan struct{}),
	}
	build := func() *exec.Cmd {
		cmd := exec.Command(opts.Command, opts.Args...)
		cmd.Env = opts.Env
		if cmd.Env == nil {
			cmd.Env = []string{}
		}
		cmd.Dir = opts.Dir
		setProcessGroup(cmd)
		cmd.Stdin = inR
		cmd.Stdout = outW
		cmd.Stderr = t.stderr
		// A grandchild that keeps stderr open must not hold Wait forever.
		cmd.WaitDelay = wait
		return cmd
	}
	var cmd *exec.Cmd
	if opts.Start != nil {
		cmd, err = opts.Start(build)
	} else {
		cmd = build()
		err = cmd.Start()
	}
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("mcp: stdio: starting %s: %w", opts.Command, err)
	}
	t.cmd = cmd
	// The child has its copies; ours would keep the pipes open forever.
	inR.Close()
	outW.Close()
	go func() {
		t.exitErr = cmd.Wait()
		if opts.Exited != nil {
			opts.Exited(cmd.ProcessState)
		}
		close(t.exited)
	}()
	return t, nil
}

// Read returns the next message from the server's stdout. When the stream
// ends, the error wraps ErrClosed and says how the process ended.
func (t *StdioTransport) Read() (*jsonrpc.Message, error) {
	m, err := t.r.Read()
	if err == nil || jsonrpc.IsDecodeError(err) && !errors.Is(err, jsonrpc.ErrTooLarge) {
		return m, err
	}
	select {
	case <-t.closing:
		return nil, fmt.Errorf("%w: %w", ErrClosed, err)
	default:
	}
	if errors.Is(err, jsonrpc.ErrTooLarge) {
		return nil, err
	}
	// The server closed its stdout: say how the process ended, if it did
	// promptly.
	select {
	case <-t.exited:
		if t.exitErr != nil {
			return nil, fmt.Errorf("%w: the server process ended: %v", ErrClosed, t.exitErr)
		}
		return nil, fmt.Errorf("%w: the server process exited", ErrClosed)
	case <-time.After(100 * time.Millisecond):
		return nil, fmt.Errorf("%w: the server closed its stdout", ErrClosed)
	}
}

// Write sends one message on the server's stdin.
func (t *StdioTransport) Write(ctx context.Context, m *jsonrpc.Message) error {
	select {
	case <-t.closing:
		return ErrClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := t.w.Write(m); err != nil {
		if errors.Is(err, jsonrpc.ErrEncode) {
			return err
		}
		return fmt.Errorf("%w: writing to the server: %v", ErrClosed, err)
	}
	return nil
}

// Close shuts the server down the way MCP stdio "Shutdown" describes:
// close its stdin, wait; then SIGTERM, wait; then SIGKILL, wait; each wait
// bounded by ShutdownWait. It returns when the process has been reaped (or
// the last wait ran out) and is idempotent.
func (t *StdioTransport) Close() error {
	t.closeOnce.Do(func() {
		close(t.closing)
		t.stdin.Close()
		if !t.waitExit(t.wait) {
			signalGroup(t.cmd, sigTerm)
			if !t.waitExit(t.wait) {
				signalGroup(t.cmd, sigKill)
				if !t.waitExit(t.wait) {
					t.closeErr = fmt.Errorf("mcp: stdio: server process %d did not end after SIGKILL", t.cmd.Process.Pid)
				}
			}
		}
		t.stdout.Close()
	})
	return t.closeErr
}

func (t *StdioTransport) waitExit(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-t.exited:
		return true
	case <-timer.C:
		return false
	}
}

// Stderr returns the latest bytes the server wrote to stderr (at most
// StdioOptions.StderrLimit, after a line saying that earlier output was
// dropped when it was). It is the server's text, unsanitised: callers
// sanitise and mask it before showing it.
func (t *StdioTransport) Stderr() string { return t.stderr.String() }

// Exited is closed once the process has ended; ExitErr then reports how.
func (t *StdioTransport) Exited() <-chan struct{} { return t.exited }

// ExitErr is the process's exit status (nil for a clean exit) once Exited
// is closed, nil before.
func (t *StdioTransport) ExitErr() error {
	select {
	case <-t.exited:
		return t.exitErr
	default:
		return nil
	}
}

// Pid is the server process id.
func (t *StdioTransport) Pid() int { return t.cmd.Process.Pid }

// tailBuffer keeps the last limit bytes written to it.
type tailBuffer struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped bool
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if len(p) >= b.limit {
		b.buf = append(b.buf[:0], p[len(p)-b.limit:]...)
		b.dropped = true
		return n, nil
	}
	if over := len(b.buf) + len(p) - b.limit; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.dropped = true
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped {
		return "[earlier stderr output dropped]\n" + string(b.buf)
	}
	return string(b.buf)
}
