package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"agent/agent/tools"
	"agent/internal/quote"
	"agent/providers"
)

// Attaching to a background session (the workspace switcher's attach;
// docs/reference/runtime.md, "Background sessions"): on its control
// connection a client sends {"op":"attach"} and from then on receives one
// JSON line per session event ({"event": …}) and per permission question
// ({"ask": {"id": N, "request": …}}), and answers questions with
// {"op":"answer","args":{"id":N,"answer":A}} on the same connection. A
// background session with nobody attached denies every question
// (docs/reference/runtime.md, "Permission prompts"); with several attached,
// the latest asks.

// ErrNobodyAttached answers a permission question of a background session
// that nobody is attached to.
var ErrNobodyAttached = errors.New("nobody is attached to this background session to answer")

// attachQueue bounds the events waiting for a slow attached client; a
// client that falls further behind is detached rather than slowing the
// session.
const attachQueue = 4096

// Attachments is the Prompter of a background session: it forwards
// questions to the attached clients. Safe for concurrent use.
type Attachments struct {
	mu      sync.Mutex
	clients []*attachClient
	nextID  int64
}

// NewAttachments returns the prompter to pass to the session
// (StartOptions.Prompter) and to ServeBackground (BackgroundOptions.Attach).
func NewAttachments() *Attachments { return &Attachments{} }

type attachClient struct {
	send    chan []byte // lines to write
	gone    chan struct{}
	once    sync.Once
	mu      sync.Mutex
	pending map[int64]chan Answer
}

func (c *attachClient) close() { c.once.Do(func() { close(c.gone) }) }

// post queues a line; a full queue detaches the client.
func (c *attachClient) post(line []byte) {
	select {
	case c.send <- line:
	case <-c.gone:
	default:
		c.close()
	}
}

// AskPermission implements Prompter: the question goes to the latest
// attached client; with nobody attached it is denied.
func (a *Attachments) AskPermission(ctx context.Context, req PermissionRequest) (Answer, error) {
	a.mu.Lock()
	var c *attachClient
	if n := len(a.clients); n > 0 {
		c = a.clients[n-1]
	}
	a.nextID++
	id := a.nextID
	a.mu.Unlock()
	if c == nil {
		return DenyOnce, ErrNobodyAttached
	}
	ch := make(chan Answer, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	line, _ := json.Marshal(map[string]any{"ask": map[string]any{"id": id, "request": req}})
	c.post(line)
	select {
	case ans := <-ch:
		return ans, nil
	case <-c.gone:
		return DenyOnce, ErrNobodyAttached
	case <-ctx.Done():
		return DenyOnce, ctx.Err()
	}
}

func (a *Attachments) add(c *attachClient) {
	a.mu.Lock()
	a.clients = append(a.clients, c)
	a.mu.Unlock()
}

func (a *Attachments) remove(c *attachClient) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, x := range a.clients {
		if x == c {
			a.clients = append(a.clients[:i], a.clients[i+1:]...)
			return
		}
	}
}

// wireEvent is an Event on the attach stream (errors as text).
type wireEvent struct {
	Kind       EventKind          `json:"kind"`
	Session    string             `json:"session,omitempty"`
	Turn       string             `json:"turn,omitempty"`
	Text       string             `json:"text,omitempty"`
	Tool       *ToolEvent         `json:"tool,omitempty"`
	Permission *PermissionRequest `json:"permission,omitempty"`
	Usage      *providers.Usage   `json:"usage,omitempty"`
	Result     *wireResult        `json:"result,omitempty"`
	Err        string             `json:"err,omitempty"`
	Todos      []tools.Todo       `json:"todos,omitempty"`
}

type wireResult struct {
	Turn       string          `json:"turn"`
	Status     Status          `json:"status"`
	Text       string          `json:"text,omitempty"`
	StopReason string          `json:"stopReason,omitempty"`
	Usage      providers.Usage `json:"usage"`
	Err        string          `json:"err,omitempty"`
}

func toWire(ev Event) wireEvent {
	w := wireEvent{Kind: ev.Kind, Session: ev.Session, Turn: ev.Turn, Text: ev.Text, Tool: ev.Tool, Permission: ev.Permission, Usage: ev.Usage, Todos: ev.Todos}
	if ev.Err != nil {
		w.Err = ev.Err.Error()
	}
	if r := ev.Result; r != nil {
		w.Result = &wireResult{Turn: r.Turn, Status: r.Status, Text: r.Text, StopReason: r.StopReason, Usage: r.Usage}
		if r.Err != nil {
			w.Result.Err = r.Err.Error()
		}
	}
	return w
}

func (w wireEvent) event() Event {
	ev := Event{Kind: w.Kind, Session: w.Session, Turn: w.Turn, Text: w.Text, Tool: w.Tool, Permission: w.Permission, Usage: w.Usage, Todos: w.Todos}
	if w.Err != "" {
		ev.Err = errors.New(w.Err)
	}
	if r := w.Result; r != nil {
		ev.Result = &TurnResult{Turn: r.Turn, Status: r.Status, Text: r.Text, StopReason: r.StopReason, Usage: r.Usage}
		if r.Err != "" {
			ev.Result.Err = errors.New(r.Err)
		}
	}
	return ev
}

// attach serves an attach request on connection c: events and questions
// out, answers in, until the client goes or the background closes.
func (b *Background) attach(c net.Conn, r *bufio.Reader) {
	a := b.opts.Attach
	cl := &attachClient{send: make(chan []byte, attachQueue), gone: make(chan struct{}), pending: map[int64]chan Answer{}}
	in := b.Info()
	hello, _ := json.Marshal(ControlResponse{OK: true, Info: &in})
	cl.send <- hello
	unsub := b.opts.Session.Subscribe(func(ev Event) {
		line, err := json.Marshal(map[string]any{"event": toWire(ev)})
		if err == nil {
			cl.post(line)
		}
	})
	if a != nil {
		a.add(cl)
	}
	defer func() {
		unsub()
		if a != nil {
			a.remove(cl)
		}
		cl.close()
	}()
	// The writer: one goroutine owns the connection's writes.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case line := <-cl.send:
				c.SetWriteDeadline(time.Now().Add(30 * time.Second))
				if _, err := c.Write(append(line, '\n')); err != nil {
					cl.close()
					c.Close()
					return
				}
			case <-cl.gone:
				c.Close()
				return
			case <-b.ctx.Done():
				c.Close()
				return
			}
		}
	}()
	for {
		line, err := readControlLine(r, maxControlLine)
		if err != nil {
			break
		}
		var req ControlRequest
		if json.Unmarshal(line, &req) != nil || req.Op != "answer" {
			continue // only answers are read on an attached connection
		}
		var ans struct {
			ID     int64  `json:"id"`
			Answer Answer `json:"answer"`
		}
		if json.Unmarshal(req.Args, &ans) != nil || ans.Answer < AllowOnce || ans.Answer > DenyOnce {
			continue
		}
		cl.mu.Lock()
		ch := cl.pending[ans.ID]
		cl.mu.Unlock()
		if ch != nil {
			select {
			case ch <- ans.Answer:
			default:
			}
		}
	}
	cl.close()
	<-done
}

// Attached is a client's view of a background session it attached to: the
// session's events, its questions answered by the given Prompter, and
// prompts submitted over the control socket. It satisfies the terminal
// UI's session interface.
type Attached struct {
	dir, id string
	info    BackgroundInfo
	conn    net.Conn
	prompt  Prompter

	mu     sync.Mutex
	obs    map[int]func(Event)
	next   int
	wmu    sync.Mutex
	done   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
}

// Attach attaches to background session id; p answers its permission
// questions (nil: every question is denied here).
func Attach(ctx context.Context, dir, id string, p Prompter) (*Attached, error) {
	if !validID(id) {
		return nil, fmt.Errorf("%w: %q", ErrNoBackground, quote.V(id))
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", SocketPath(dir, id))
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNoBackground, id)
	}
	b, _ := json.Marshal(ControlRequest{Op: "attach"})
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(append(b, '\n')); err != nil {
		c.Close()
		return nil, err
	}
	r := bufio.NewReaderSize(c, 64<<10)
	line, err := readControlLine(r, maxControlLine)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("background session %s: no answer: %w", id, err)
	}
	var resp ControlResponse
	if json.Unmarshal(line, &resp) != nil || !resp.OK || resp.Info == nil {
		c.Close()
		return nil, fmt.Errorf("background session %s refused to attach: %s", id, resp.Error)
	}
	c.SetDeadline(time.Time{})
	actx, cancel := context.WithCancel(context.Background())
	a := &Attached{dir: dir, id: id, info: *resp.Info, conn: c, prompt: p, obs: map[int]func(Event){}, done: make(chan struct{}), ctx: actx, cancel: cancel}
	go a.read(r)
	return a, nil
}

// Info describes the session as it was when attached.
func (a *Attached) Info() BackgroundInfo { return a.info }

// Done is closed when the connection ends (the session stopped, or Close).
func (a *Attached) Done() <-chan struct{} { return a.done }

func (a *Attached) read(r *bufio.Reader) {
	defer close(a.done)
	defer a.cancel()
	for {
		line, err := readControlLine(r, maxControlLine)
		if err != nil {
			return
		}
		var m struct {
			Event *wireEvent `json:"event"`
			Ask   *struct {
				ID      int64             `json:"id"`
				Request PermissionRequest `json:"request"`
			} `json:"ask"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch {
		case m.Event != nil:
			ev := m.Event.event()
			a.mu.Lock()
			fns := make([]func(Event), 0, len(a.obs))
			for i := 0; i < a.next; i++ {
				if fn, ok := a.obs[i]; ok {
					fns = append(fns, fn)
				}
			}
			a.mu.Unlock()
			for _, fn := range fns {
				fn(ev)
			}
		case m.Ask != nil:
			go a.answer(m.Ask.ID, m.Ask.Request)
		}
	}
}

func (a *Attached) answer(id int64, req PermissionRequest) {
	ans := DenyOnce
	if a.prompt != nil {
		if x, err := a.prompt.AskPermission(a.ctx, req); err == nil {
			ans = x
		}
	}
	args, _ := json.Marshal(map[string]any{"id": id, "answer": ans})
	b, _ := json.Marshal(ControlRequest{Op: "answer", Args: args})
	a.wmu.Lock()
	a.conn.Write(append(b, '\n'))
	a.wmu.Unlock()
}

// Subscribe registers an observer of the session's events.
func (a *Attached) Subscribe(fn func(Event)) func() {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := a.next
	a.next++
	a.obs[id] = fn
	return func() {
		a.mu.Lock()
		delete(a.obs, id)
		a.mu.Unlock()
	}
}

func (a *Attached) call(req ControlRequest) (ControlResponse, error) {
	ctx, cancel := context.WithTimeout(a.ctx, 10*time.Second)
	defer cancel()
	resp, err := ControlCall(ctx, a.dir, a.id, req)
	if err != nil {
		return resp, err
	}
	if !resp.OK {
		return resp, errors.New(resp.Error)
	}
	return resp, nil
}

// Submit queues a prompt in the background session.
func (a *Attached) Submit(prompt string) (string, error) {
	resp, err := a.call(ControlRequest{Op: "submit", Prompt: prompt})
	return resp.Turn, err
}

// Abort ends the session's running turn.
func (a *Attached) Abort() bool {
	_, err := a.call(ControlRequest{Op: "abort"})
	return err == nil
}

// CancelQueued withdraws a queued prompt.
func (a *Attached) CancelQueued(turn string) bool {
	args, _ := json.Marshal(map[string]string{"turn": turn})
	_, err := a.call(ControlRequest{Op: "cancel", Args: args})
	return err == nil
}

// Close detaches; the session goes on. Idempotent.
func (a *Attached) Close() error {
	a.cancel()
	err := a.conn.Close()
	<-a.done
	return err
}
