package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"agent/internal/quote"
	"agent/internal/securefile"
	"agent/mcp"
	"agent/tui"
)

// The interactive session's serving transports (/settings, the
// transport-settings context; docs/reference/mcp.md, "The /settings
// transport"): the session served as `agent mcp serve` serves it over
// loopback HTTP with a bearer token file (docs/reference/mcp.md, "Loopback
// HTTP mode"), turned on and off while the session runs. stdio is not one
// of them: the terminal owns this process's stdin and stdout.

// liveTarget serves whichever session the UI runs now (/resume replaces
// it).
type liveTarget struct{ live *liveSession }

func (t liveTarget) target() (*sessionTarget, error) {
	c, _ := t.live.get()
	if c == nil {
		return nil, errors.New("the session has ended")
	}
	return &sessionTarget{s: c.Session}, nil
}

func (t liveTarget) Tools() []mcp.ServedTool {
	st, err := t.target()
	if err != nil {
		return nil
	}
	return st.Tools()
}

func (t liveTarget) CallTool(ctx context.Context, name string, args json.RawMessage) (mcp.ServedResult, error) {
	st, err := t.target()
	if err != nil {
		return mcp.ServedResult{}, err
	}
	return st.CallTool(ctx, name, args)
}

func (t liveTarget) Submit(ctx context.Context, prompt string) (mcp.ServedResult, error) {
	st, err := t.target()
	if err != nil {
		return mcp.ServedResult{}, err
	}
	return st.Submit(ctx, prompt)
}

// sessionTransports implements tui.Transports.
type sessionTransports struct {
	live   *liveSession
	runDir string

	mu        sync.Mutex
	on        bool
	url       string
	tokenPath string
	stop      context.CancelFunc
	done      chan struct{}
	remove    func()
	unhook    func()
}

const httpTransport = "http"

func (st *sessionTransports) Transports() []tui.TransportState {
	st.mu.Lock()
	defer st.mu.Unlock()
	detail := "loopback HTTP with a bearer token file (off)"
	if st.on {
		detail = st.url + ", bearer token in " + st.tokenPath
	}
	return []tui.TransportState{{Name: httpTransport, Detail: detail, On: st.on}}
}

func (st *sessionTransports) SetTransport(name string, on bool) error {
	if name != httpTransport {
		return fmt.Errorf("no transport %q", quote.V(name))
	}
	if on {
		return st.start()
	}
	st.Close()
	return nil
}

// start serves the session on 127.0.0.1 at a free port; the token goes to
// <run dir>/<session id>.mcp-token (0600, created exclusively, removed
// when the transport stops or the process ends).
func (st *sessionTransports) start() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.on {
		return nil
	}
	c, _ := st.live.get()
	if c == nil {
		return errors.New("the session has not started")
	}
	srv, err := mcp.NewServer(liveTarget{st.live}, mcp.ServerOptions{Info: mcp.Implementation{Name: "agent", Version: strings.Fields(versionLine())[1]}})
	if err != nil {
		return err
	}
	if err := securefile.EnsureDir(st.runDir); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening on 127.0.0.1: %w", err)
	}
	token, err := mcp.NewServeToken()
	if err != nil {
		ln.Close()
		return err
	}
	path := filepath.Join(st.runDir, c.Session.ID()+".mcp-token")
	os.Remove(path) // a file left by a process that died; ours are removed
	remove, err := createTokenFile(path, token)
	if err != nil {
		ln.Close()
		return err
	}
	bearer, err := mcp.NewBearerAuth(token)
	if err != nil {
		ln.Close()
		remove()
		return err
	}
	p := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	h := srv.HTTPHandler(mcp.HTTPServeOptions{
		Path:    "/mcp",
		Hosts:   []string{"127.0.0.1:" + p, "localhost:" + p},
		Origins: []string{"http://127.0.0.1:" + p, "http://localhost:" + p},
		Auth:    bearer,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		runHTTP(ctx, ln, h, loopbackLimits)
	}()
	st.on, st.url, st.tokenPath = true, "http://127.0.0.1:"+p+"/mcp", path
	st.stop, st.done, st.remove = cancel, done, remove
	st.unhook = onExit(remove)
	return nil
}

// Close stops the transport and removes its token file; idempotent.
func (st *sessionTransports) Close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.on {
		return
	}
	st.stop()
	<-st.done
	st.remove()
	st.unhook()
	st.on = false
}

var _ tui.Transports = (*sessionTransports)(nil)
