package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"agent/internal/quote"
	"agent/internal/securefile"
)

// Background sessions (`agent session …`, docs/reference/cli.md,
// "Background sessions"; docs/reference/runtime.md, "Background sessions"):
// a session runs in a detached process and answers on a control socket, one
// per session, in the run directory (0700; the socket 0600). The protocol
// is one JSON object per line each way: a ControlRequest, then its
// ControlResponse.

// RunDir is where control sockets live: $XDG_RUNTIME_DIR/agent when set,
// else ~/.agent/run (docs/reference/cli.md, "Files").
func RunDir(home string, lookup func(string) (string, bool)) string {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if d, ok := lookup("XDG_RUNTIME_DIR"); ok && filepath.IsAbs(d) {
		return filepath.Join(d, "agent")
	}
	return filepath.Join(home, ".agent", "run")
}

// maxControlLine bounds one request or response line.
const maxControlLine = 1 << 20

// ErrNoBackground is returned for an id that names no live session.
var ErrNoBackground = errors.New("no such background session")

// BackgroundInfo describes a live background session.
type BackgroundInfo struct {
	ID        string    `json:"id"`
	Name      string    `json:"name,omitempty"`
	Workspace string    `json:"workspace"`
	Started   time.Time `json:"started"`
	PID       int       `json:"pid"`
	Provider  string    `json:"provider,omitempty"`
	Model     string    `json:"model,omitempty"`
	Busy      bool      `json:"busy"`
	Queued    int       `json:"queued"`
}

// ControlRequest is one request on a control socket.
type ControlRequest struct {
	Op     string          `json:"op"`               // info, stop, submit, or an extension op
	Prompt string          `json:"prompt,omitempty"` // submit
	Wait   bool            `json:"wait,omitempty"`   // submit: answer when the turn ends
	Args   json.RawMessage `json:"args,omitempty"`   // extension ops
}

// ControlResponse answers a ControlRequest.
type ControlResponse struct {
	OK     bool            `json:"ok"`
	Error  string          `json:"error,omitempty"`
	Info   *BackgroundInfo `json:"info,omitempty"`
	Turn   string          `json:"turn,omitempty"`
	Status Status          `json:"status,omitempty"`
	Text   string          `json:"text,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"` // extension ops
}

// ControlHandler answers an extension op (for example the event-grant ops
// of docs/reference/events.md, "Revocation").
type ControlHandler func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)

// BackgroundOptions configure ServeBackground.
type BackgroundOptions struct {
	Dir     string // the run directory (RunDir)
	Name    string // shown by `agent session list`
	Session *Session
	// Workspace is shown by `agent session list`.
	Workspace string
	// Handlers answer extension ops by name.
	Handlers map[string]ControlHandler
	// Attach is the session's Prompter, forwarding questions to attached
	// clients; nil: attaching streams events but questions stay denied.
	Attach *Attachments
}

// Background serves a session's control socket.
type Background struct {
	opts    BackgroundOptions
	info    BackgroundInfo
	ln      *net.UnixListener
	path    string
	stop    chan struct{} // closed on a stop request
	once    sync.Once
	closing sync.Once
	wg      sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc

	mu    sync.Mutex
	conns map[net.Conn]bool
}

// SocketPath is the control socket of a session.
func SocketPath(dir, id string) string { return filepath.Join(dir, id+".sock") }

// ServeBackground listens on the session's control socket and answers
// requests until Close. Stop requests close Stopped; the owner then ends
// the session and calls Close.
func ServeBackground(opts BackgroundOptions) (*Background, error) {
	if opts.Session == nil {
		return nil, ErrNoProvider
	}
	if err := securefile.EnsureDir(opts.Dir); err != nil {
		return nil, err
	}
	id := opts.Session.ID()
	path := SocketPath(opts.Dir, id)
	if len(path) >= 104 { // sun_path is 104 bytes on some systems, 108 on Linux
		return nil, fmt.Errorf("the control socket path %s is too long; set XDG_RUNTIME_DIR to a shorter directory", path)
	}
	// The directory is 0700, so nobody else can reach the socket between
	// its creation and the chmod.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	prov, model := opts.Session.Model()
	ctx, cancel := context.WithCancel(context.Background())
	b := &Background{
		opts: opts, ln: ln, path: path, stop: make(chan struct{}), ctx: ctx, cancel: cancel,
		conns: map[net.Conn]bool{},
		info:  BackgroundInfo{ID: id, Name: opts.Name, Workspace: opts.Workspace, Started: time.Now().UTC(), PID: os.Getpid(), Provider: prov, Model: model},
	}
	b.wg.Add(1)
	go b.accept()
	return b, nil
}

// Stopped is closed when a stop request arrives.
func (b *Background) Stopped() <-chan struct{} { return b.stop }

// Info describes the session now.
func (b *Background) Info() BackgroundInfo {
	in := b.info
	in.Provider, in.Model = b.opts.Session.Model()
	in.Busy = b.opts.Session.Busy()
	in.Queued = len(b.opts.Session.Queued())
	return in
}

// Close stops listening, removes the socket, ends open connections and
// waits for their goroutines; idempotent.
func (b *Background) Close() error {
	b.closing.Do(func() {
		b.cancel()
		b.ln.Close()
		b.mu.Lock()
		for c := range b.conns {
			c.Close()
		}
		b.mu.Unlock()
		b.wg.Wait()
	})
	return nil
}

func (b *Background) accept() {
	defer b.wg.Done()
	for {
		c, err := b.ln.AcceptUnix()
		if err != nil {
			return
		}
		if !samePeer(c) {
			c.Close() // another user cannot drive this session
			continue
		}
		b.mu.Lock()
		if b.ctx.Err() != nil {
			b.mu.Unlock()
			c.Close()
			return
		}
		b.conns[c] = true
		b.mu.Unlock()
		b.wg.Add(1)
		go b.serve(c)
	}
}

func (b *Background) serve(c net.Conn) {
	defer b.wg.Done()
	defer func() {
		b.mu.Lock()
		delete(b.conns, c)
		b.mu.Unlock()
		c.Close()
	}()
	r := bufio.NewReaderSize(c, 4096)
	enc := json.NewEncoder(c)
	for {
		line, err := readControlLine(r, maxControlLine)
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				enc.Encode(ControlResponse{Error: "request too large"})
			}
			return
		}
		var req ControlRequest
		var resp ControlResponse
		if err := json.Unmarshal(line, &req); err != nil {
			resp = ControlResponse{Error: "malformed request: " + err.Error()}
		} else if req.Op == "attach" {
			b.attach(c, r)
			return
		} else {
			resp = b.handle(req)
		}
		if err := enc.Encode(resp); err != nil {
			return
		}
		if req.Op == "stop" && resp.OK {
			return
		}
	}
}

func (b *Background) handle(req ControlRequest) ControlResponse {
	switch req.Op {
	case "info":
		in := b.Info()
		return ControlResponse{OK: true, Info: &in}
	case "stop":
		b.once.Do(func() { close(b.stop) })
		return ControlResponse{OK: true}
	case "abort":
		if !b.opts.Session.Abort() {
			return ControlResponse{Error: "no turn is running"}
		}
		return ControlResponse{OK: true}
	case "cancel":
		var a struct {
			Turn string `json:"turn"`
		}
		if json.Unmarshal(req.Args, &a) != nil || !b.opts.Session.CancelQueued(a.Turn) {
			return ControlResponse{Error: "no such queued prompt"}
		}
		return ControlResponse{OK: true}
	case "submit":
		if strings.TrimSpace(req.Prompt) == "" {
			return ControlResponse{Error: "submit needs a prompt"}
		}
		t, err := b.opts.Session.Submit(UserPrompt(req.Prompt)) // typed in an attached terminal UI
		if err != nil {
			return ControlResponse{Error: err.Error()}
		}
		if !req.Wait {
			return ControlResponse{OK: true, Turn: t.ID}
		}
		res, err := t.Wait(b.ctx)
		if err != nil {
			return ControlResponse{Error: err.Error(), Turn: t.ID}
		}
		resp := ControlResponse{OK: true, Turn: t.ID, Status: res.Status, Text: res.Text}
		if res.Err != nil {
			resp.Error = res.Err.Error()
		}
		return resp
	}
	if h := b.opts.Handlers[req.Op]; h != nil {
		data, err := h(b.ctx, req.Args)
		if err != nil {
			return ControlResponse{Error: err.Error()}
		}
		return ControlResponse{OK: true, Data: data}
	}
	return ControlResponse{Error: fmt.Sprintf("unknown op %q", quote.V(req.Op))}
}

var errLineTooLong = errors.New("line too long")

// readControlLine reads one newline-terminated line of at most max bytes.
func readControlLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(line)+len(frag) > max {
			return nil, errLineTooLong
		}
		line = append(line, frag...)
		if err == nil {
			return line[:len(line)-1], nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err // EOF before the newline is not a request
		}
	}
}

// ControlCall sends one request to a background session and reads the
// answer. ErrNoBackground: nothing listens for that id.
func ControlCall(ctx context.Context, dir, id string, req ControlRequest) (ControlResponse, error) {
	if !validID(id) {
		return ControlResponse{}, fmt.Errorf("%w: %q", ErrNoBackground, quote.V(id))
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", SocketPath(dir, id))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
			return ControlResponse{}, fmt.Errorf("%w: %s", ErrNoBackground, id)
		}
		return ControlResponse{}, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	b, _ := json.Marshal(req)
	if _, err := c.Write(append(b, '\n')); err != nil {
		return ControlResponse{}, fmt.Errorf("background session %s: %w", id, err)
	}
	line, err := readControlLine(bufio.NewReader(c), maxControlLine)
	if err != nil {
		if ctx.Err() != nil {
			return ControlResponse{}, ctx.Err()
		}
		return ControlResponse{}, fmt.Errorf("background session %s: no answer: %w", id, err)
	}
	var resp ControlResponse
	if err := json.Unmarshal(line, &resp); err != nil {
		return ControlResponse{}, fmt.Errorf("background session %s: malformed answer: %w", id, err)
	}
	return resp, nil
}

// ListBackground asks every socket in dir for its session's description.
// A socket nobody answers on is left by a process that died: it is
// removed.
func ListBackground(ctx context.Context, dir string) ([]BackgroundInfo, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []BackgroundInfo
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".sock")
		if !ok || e.Type()&os.ModeSocket == 0 || !validID(id) {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := ControlCall(cctx, dir, id, ControlRequest{Op: "info"})
		cancel()
		if errors.Is(err, ErrNoBackground) {
			os.Remove(SocketPath(dir, id)) // stale
			continue
		}
		if err != nil || !resp.OK || resp.Info == nil {
			continue // alive but not answering: leave it
		}
		out = append(out, *resp.Info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out, nil
}

func validID(id string) bool {
	return id != "" && id[0] != '.' && !strings.ContainsAny(id, "/\\\x00") && len(id) <= 128
}
