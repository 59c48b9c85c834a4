package main

// `agent mcp serve` (docs/reference/mcp.md, "agent mcp serve"): one agent
// session of this workspace served as an MCP server over stdio, loopback
// HTTP with a token file, or as a remote OAuth resource server. This file
// checks the flags, starts the session, adapts it to mcp.ServeTarget, and
// owns the listener and the token file.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"agent/agent"
	"agent/agent/tools"
	"agent/internal/httpguard"
	"agent/internal/quote"
	"agent/mcp"
)

// serveFlags are the serve flags of docs/reference/mcp.md, "agent mcp
// serve".
type serveFlags struct {
	tokenFile, port, host               string
	publicURL, issuer, scopes, subjects string
	proxies                             []string
	session                             sessionFlags // the model flags
}

func mcpServeCommand() *command {
	sf := &serveFlags{}
	return &command{
		path:     "mcp serve",
		synopsis: "[flags]",
		summary:  "serve this workspace's agent session as an MCP server (stdio, loopback HTTP or remote)",
		help: `Without HTTP flags the server speaks MCP on stdin and stdout; stdout carries only
MCP frames and every notice goes to stderr. --http-token-file serves
http://127.0.0.1:PORT/mcp and writes a fresh bearer token to that new file
(removed on exit). The four remote flags together serve an OAuth-protected
endpoint at the path of --http-public-url. The tools offered are the
session's tools under their own names plus agent_submit, which runs a turn.
A call that would need a permission prompt fails as a tool error naming the
rule that would allow it. The workspace must be trusted (agent trust --yes).`,
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			f.stringVar(&sf.tokenFile, "http-token-file", "PATH", "loopback HTTP: write the bearer token to this new file (absolute path)")
			f.stringVar(&sf.port, "http-port", "PORT", "HTTP port (default: chosen by the system)")
			f.stringVar(&sf.host, "http-host", "IP", "bind address (default 127.0.0.1; any other needs the remote flags)")
			f.stringVar(&sf.publicURL, "http-public-url", "URL", "remote: the https URL clients use; its path is the endpoint")
			f.stringVar(&sf.issuer, "oauth-issuer", "URL", "remote: the authorization server whose tokens are accepted")
			f.stringVar(&sf.scopes, "oauth-scopes", "A,B", "remote: scopes every token must carry")
			f.stringVar(&sf.subjects, "oauth-allowed-subjects", "A,B", "remote: token subjects admitted to the one shared session")
			f.stringsVar(&sf.proxies, "trusted-proxy", "IP", "remote: believe X-Forwarded-For from this proxy (repeatable)")
			sf.session.registerModel(f)
			return func(ctx context.Context, e *env, args []string) error {
				if err := noOperands("mcp serve", args); err != nil {
					return err
				}
				return serve(ctx, e, sf, f)
			}
		},
	}
}

// serveMode is what the flags ask for.
type serveMode int

const (
	serveStdio serveMode = iota
	serveLoopback
	serveRemote
)

// servePlan is the checked command line.
type servePlan struct {
	mode     serveMode
	bind     string // host:port
	endpoint string // loopback: /mcp
	proxies  []netip.Addr
	scopes   []string
	subjects []string
}

// splitList splits a comma-separated flag value, refusing empty entries.
func splitList(flag, v string) ([]string, error) {
	var out []string
	for part := range strings.SplitSeq(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("%s: an empty entry in %q", flag, quote.V(v))
		}
		out = append(out, part)
	}
	return out, nil
}

// checkServeFlags applies the flag rules of docs/reference/mcp.md, "agent
// mcp serve". Usage errors (exit 2) are for values that do not parse;
// refused starts (exit 1) for combinations the modes forbid, each with its
// remedy.
func checkServeFlags(sf *serveFlags, f *flagSet) (*servePlan, error) {
	p := &servePlan{}
	if err := checkModelFlags("mcp serve", &sf.session); err != nil {
		return nil, err
	}
	if err := checkAgentsFlag("mcp serve", sf.session.agentsJSON); err != nil {
		return nil, err
	}
	port := 0
	if f.isSet("http-port") {
		n, err := strconv.Atoi(sf.port)
		if err != nil || n < 0 || n > 65535 {
			return nil, usagef("mcp serve", "--http-port must be a port number from 0 to 65535, not %q", quote.V(sf.port))
		}
		port = n
	}
	host := netip.MustParseAddr("127.0.0.1")
	if f.isSet("http-host") {
		a, err := netip.ParseAddr(sf.host)
		if err != nil || a.Zone() != "" {
			return nil, usagef("mcp serve", "--http-host must be a literal IP address, not %q", quote.V(sf.host))
		}
		host = a
	}
	for _, v := range sf.proxies {
		a, err := netip.ParseAddr(v)
		if err != nil || a.Zone() != "" {
			return nil, usagef("mcp serve", "--trusted-proxy must be a literal IP address, not %q", quote.V(v))
		}
		p.proxies = append(p.proxies, a.Unmap())
	}
	remote := 0
	for _, name := range []string{"http-public-url", "oauth-issuer", "oauth-scopes", "oauth-allowed-subjects"} {
		if f.isSet(name) {
			remote++
		}
	}
	switch {
	case remote > 0 && remote < 4:
		// Refused, with the remedy (docs/reference/mcp.md, "agent mcp
		// serve").
		return nil, mcp.ErrRemoteFlags
	case remote == 4 && f.isSet("http-token-file"):
		return nil, errors.New("remote mode never uses a token file: drop --http-token-file, or drop the four remote flags for loopback mode")
	case remote == 4:
		p.mode = serveRemote
		var err error
		if p.scopes, err = splitList("--oauth-scopes", sf.scopes); err != nil {
			return nil, err
		}
		if p.subjects, err = splitList("--oauth-allowed-subjects", sf.subjects); err != nil {
			return nil, err
		}
	case f.isSet("http-token-file"):
		p.mode = serveLoopback
		p.endpoint = "/mcp"
		if !filepath.IsAbs(sf.tokenFile) {
			return nil, fmt.Errorf("--http-token-file must be an absolute path, not %q", quote.V(sf.tokenFile))
		}
	}
	if p.mode != serveRemote {
		switch {
		case f.isSet("http-host") && host != netip.MustParseAddr("127.0.0.1"):
			return nil, fmt.Errorf("--http-host %s: binding anything but 127.0.0.1 needs remote mode: %w", host, mcp.ErrRemoteFlags)
		case len(p.proxies) > 0:
			return nil, fmt.Errorf("--trusted-proxy applies to remote mode only: %w", mcp.ErrRemoteFlags)
		}
	}
	if p.mode == serveStdio && (f.isSet("http-port") || f.isSet("http-host")) {
		return nil, errors.New("--http-port and --http-host need --http-token-file (loopback HTTP) or the four remote flags")
	}
	p.bind = net.JoinHostPort(host.String(), strconv.Itoa(port))
	return p, nil
}

func serve(ctx context.Context, e *env, sf *serveFlags, f *flagSet) error {
	plan, err := checkServeFlags(sf, f)
	if err != nil {
		return err
	}
	var auth *mcp.RemoteAuth
	if plan.mode == serveRemote {
		// Checked before the session starts, so a bad URL costs nothing.
		auth, err = mcp.NewRemoteAuth(mcp.RemoteAuthOptions{
			PublicURL: sf.publicURL, Issuer: sf.issuer, Scopes: plan.scopes, Subjects: plan.subjects,
			TrustedProxies: plan.proxies,
			OnRefusal: func(addr string, status int, err error) {
				msg := fmt.Sprintf("agent mcp serve: refused a request from %s with %d", addr, status)
				if err != nil {
					msg += ": " + err.Error()
				}
				fmt.Fprintln(e.err, sanitizeLine(msg))
			},
		})
		if err != nil {
			return err
		}
	}
	if plan.mode == serveLoopback {
		// Fail before the session starts when the file cannot be ours
		// (it is created, exclusively, once the port is known).
		if _, err := os.Lstat(sf.tokenFile); err == nil {
			return fmt.Errorf("--http-token-file %s already exists: name a new file", sf.tokenFile)
		}
		if st, err := os.Stat(filepath.Dir(sf.tokenFile)); err != nil || !st.IsDir() {
			return fmt.Errorf("--http-token-file %s: its folder does not exist", sf.tokenFile)
		}
	}

	opts := e.startOptions(&sf.session, f, serveFront)
	if plan.mode == serveLoopback {
		// The token is the server's door: no command it runs reads it.
		opts.SandboxDenyRead = []string{sf.tokenFile}
	}
	c, err := agent.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer c.Close()

	srv, err := mcp.NewServer(&sessionTarget{s: c.Session}, mcp.ServerOptions{
		Info:   mcp.Implementation{Name: "agent", Version: strings.TrimPrefix(strings.Fields(versionLine())[1], "v")},
		Notice: func(s string) { fmt.Fprintln(e.err, "agent: "+sanitizeLine(s)) },
	})
	if err != nil {
		return err
	}
	switch plan.mode {
	case serveStdio:
		err = srv.ServeStdio(ctx, e.in, e.out)
	case serveLoopback:
		err = serveLoopbackHTTP(ctx, e, srv, plan, sf.tokenFile)
	case serveRemote:
		err = serveRemoteHTTP(ctx, e, srv, plan, auth)
	}
	if ctx.Err() != nil {
		return ctx.Err() // SIGINT or SIGTERM: exit 130
	}
	return err
}

// serveLoopbackHTTP listens on 127.0.0.1, then creates the token file
// (O_EXCL, 0600, the token only) and removes it on every way out.
func serveLoopbackHTTP(ctx context.Context, e *env, srv *mcp.Server, plan *servePlan, tokenFile string) error {
	ln, err := net.Listen("tcp", plan.bind)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", plan.bind, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	token, err := mcp.NewServeToken()
	if err != nil {
		ln.Close()
		return err
	}
	remove, err := createTokenFile(tokenFile, token)
	if err != nil {
		ln.Close()
		return err
	}
	defer remove()
	defer onExit(remove)() // a second Ctrl-C exits at once: the file goes too
	bearer, err := mcp.NewBearerAuth(token)
	if err != nil {
		ln.Close()
		return err
	}
	p := strconv.Itoa(port)
	h := srv.HTTPHandler(mcp.HTTPServeOptions{
		Path:    plan.endpoint,
		Hosts:   []string{"127.0.0.1:" + p, "localhost:" + p},
		Origins: []string{"http://127.0.0.1:" + p, "http://localhost:" + p},
		Auth:    bearer,
	})
	fmt.Fprintf(e.err, "agent mcp serve: listening on http://127.0.0.1:%d%s\n", port, plan.endpoint)
	fmt.Fprintf(e.err, "agent mcp serve: bearer token in %s\n", tokenFile)
	return runHTTP(ctx, ln, h, loopbackLimits)
}

// createTokenFile writes token to a new file, exclusively and owner-only,
// and returns the function that removes it, only while it is still the
// file written here.
func createTokenFile(path, token string) (func(), error) {
	catchFatalSignals() // before the file exists
	fd, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("--http-token-file %s already exists: name a new file", path)
		}
		return nil, fmt.Errorf("--http-token-file: creating %s: %w", path, errors.Unwrap(err))
	}
	// The mode given to OpenFile passes through the umask; make it exact.
	if err := fd.Chmod(0o600); err == nil {
		_, err = io.WriteString(fd, token)
		if err == nil {
			err = fd.Sync()
		}
		if cerr := fd.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			st, serr := os.Lstat(path)
			id, ok := fileID{}, false
			if serr == nil {
				id, ok = idOf(st)
			}
			if !ok {
				os.Remove(path)
				return nil, fmt.Errorf("--http-token-file %s: cannot identify the file just written", path)
			}
			// The cleanup child removes the file if this process dies
			// in a way it cannot clean up after (cleanup.go). Without
			// one, the signal handlers and deferred removals remain.
			childDone, cerr := startCleanupChild(path, id)
			if cerr != nil {
				childDone = func() {}
			}
			return func() {
				removeIfSame(path, id)
				childDone()
			}, nil
		}
	} else {
		fd.Close()
	}
	os.Remove(path)
	return nil, fmt.Errorf("--http-token-file: writing %s failed", path)
}

func serveRemoteHTTP(ctx context.Context, e *env, srv *mcp.Server, plan *servePlan, auth *mcp.RemoteAuth) error {
	ln, err := net.Listen("tcp", plan.bind)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", plan.bind, err)
	}
	h := srv.HTTPHandler(mcp.HTTPServeOptions{
		Path:         auth.Endpoint(),
		Hosts:        []string{auth.Host()},
		Origins:      []string{auth.Origin()},
		Auth:         auth,
		MetadataPath: auth.MetadataPath(),
		Metadata:     auth,
	})
	fmt.Fprintf(e.err, "agent mcp serve: listening on %s (endpoint %s, metadata %s)\n", ln.Addr(), auth.Endpoint(), auth.MetadataURL())
	return runHTTP(ctx, ln, h, httpguard.Limits{MaxConns: serveMaxConns, MaxPerAddr: serveMaxConnsPerAddr, Exempt: plan.proxies})
}

// Connection limits of the HTTP modes (docs/design.md, "Connection limits
// and refusals in front of every HTTP server"): enough for many clients at
// once, few enough that a flood of idle connections costs a few megabytes,
// not the process's descriptors.
const (
	serveMaxConns        = 512
	serveMaxConnsPerAddr = 64
)

// loopbackLimits: every loopback client is 127.0.0.1, so one limit holds
// for all of them.
var loopbackLimits = httpguard.Limits{MaxConns: serveMaxConns, MaxPerAddr: serveMaxConns}

// runHTTP serves until ctx ends, with the server timeouts of
// docs/reference/mcp.md, "Connection limits and timeouts": headers and body
// must arrive promptly; responses have no write deadline because a turn's
// answer may take minutes (the stream carries keep-alives). The guard
// bounds the connections and lets refusals go out without waiting for a
// body (internal/httpguard).
func runHTTP(ctx context.Context, ln net.Listener, h *mcp.HTTPHandler, lim httpguard.Limits) error {
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(io.Discard, "", 0), // stderr is the operator's, not every client's
	}
	guard := httpguard.New(lim)
	errc := make(chan error, 1)
	go func() { errc <- guard.Serve(hs, ln) }()
	select {
	case err := <-errc:
		h.Close()
		return err
	case <-ctx.Done():
	}
	h.Close() // running calls end, so Shutdown need not wait for turns
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	<-errc
	return nil
}

// sessionTarget adapts the agent session to mcp.ServeTarget.
type sessionTarget struct {
	s *agent.Session
}

func (t *sessionTarget) Tools() []mcp.ServedTool {
	specs := t.s.ToolSpecs()
	out := make([]mcp.ServedTool, 0, len(specs))
	for _, sp := range specs {
		out = append(out, mcp.ServedTool{Name: sp.Name, Description: sp.Description, InputSchema: sp.Schema, ReadOnly: sp.Risk == tools.RiskInspect})
	}
	return out
}

func (t *sessionTarget) CallTool(ctx context.Context, name string, args json.RawMessage) (mcp.ServedResult, error) {
	known := false
	for _, sp := range t.s.ToolSpecs() {
		if sp.Name == name {
			known = true
			break
		}
	}
	if !known {
		return mcp.ServedResult{}, mcp.ErrUnknownTool
	}
	r := t.s.CallTool(ctx, name, args)
	return mcp.ServedResult{Text: r.Content, IsError: r.IsError}, nil
}

func (t *sessionTarget) Submit(ctx context.Context, prompt string) (mcp.ServedResult, error) {
	// A client that asked for progress hears of the turn's steps.
	res, err := t.s.RunWatched(ctx, prompt, func(ev agent.Event) {
		switch ev.Kind {
		case agent.EventQueued:
			mcp.ReportProgress(ctx, "queued behind the running turn")
		case agent.EventTurnStart:
			mcp.ReportProgress(ctx, "the turn started")
		case agent.EventToolStart:
			mcp.ReportProgress(ctx, "running "+ev.Tool.Name)
		case agent.EventToolEnd:
			if ev.Tool.Denied {
				mcp.ReportProgress(ctx, ev.Tool.Name+" was denied")
			}
		}
	})
	if err != nil && res.Status == "" {
		return mcp.ServedResult{}, err
	}
	switch res.Status {
	case agent.StatusComplete:
		return mcp.ServedResult{Text: res.Text}, nil
	case agent.StatusError:
		msg := "the turn failed"
		if res.Err != nil {
			msg += ": " + res.Err.Error()
		}
		return mcp.ServedResult{Text: msg, IsError: true}, nil
	}
	return mcp.ServedResult{Text: "the turn was " + string(res.Status), IsError: true}, nil
}
