package mcp

// The client against servers of every revision it speaks
// (docs/reference/mcp.md, "Protocol revisions": 2024-11-05, 2025-03-26,
// 2025-06-18, 2025-11-25 and 2026-07-28): the negotiation each way, the
// features an older revision lacks left unused, resumption of SSE streams
// with Last-Event-ID after the server's retry time, and the batch rule
// (only a server of 2025-03-26 may send batches).

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"agent/mcp/jsonrpc"
)

// sessionRevisions are the revisions with the initialize handshake,
// newest first.
var sessionRevisions = []string{Version20251125, Version20250618, Version20250326, Version20241105}

// pipeListener is an in-memory network for an httptest server inside a
// synctest bubble: net.Pipe blocks on channels, which the bubble sees as
// durably blocked, so fake time advances while an exchange waits.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	c, s := net.Pipe()
	select {
	case l.conns <- s:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// connectPipeHTTP connects a client to srv over Streamable HTTP on an
// in-memory network; call it inside a bubble.
func connectPipeHTTP(t *testing.T, srv http.Handler, opts ClientOptions, hopts HTTPOptions) (*Client, error) {
	t.Helper()
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener.Close() // the real socket it opened is not used
	ln := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	tr := &http.Transport{DialContext: ln.dial}
	t.Cleanup(tr.CloseIdleConnections)
	hopts.URL = hs.URL + "/mcp"
	hopts.Client = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	ht, err := NewHTTPTransport(hopts)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Connect(context.Background(), ht, opts)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

// TestNegotiationEachRevision: each revision asked by the client of a
// server that speaks them all, each revision a server speaks alone asked
// by a client that offers them all, and a client that offers one revision
// to a server that speaks only another, over stdio and Streamable HTTP.
// The session works afterwards with the fields of the revision agreed (the
// HTTP test server refuses an MCP-Protocol-Version header before
// 2025-06-18 and requires it from then on).
func TestNegotiationEachRevision(t *testing.T) {
	type row struct {
		name          string
		offer, serves []string
		version       string // agreed; "" when the client must refuse
		chosen        string // VersionError.Chosen when it refuses
	}
	var rows []row
	for _, v := range SupportedVersions() {
		rows = append(rows,
			row{name: "client offers all, server speaks only " + v, serves: []string{v}, version: v},
			row{name: "client offers only " + v + ", server speaks all", offer: []string{v}, version: v})
	}
	for _, c := range sessionRevisions {
		for _, s := range sessionRevisions {
			if c != s {
				rows = append(rows, row{name: "client offers only " + c + ", server speaks only " + s, offer: []string{c}, serves: []string{s}, chosen: s})
			}
		}
	}
	for _, transport := range []string{"stdio", "http"} {
		for _, tc := range rows {
			t.Run(transport+"/"+tc.name, func(t *testing.T) {
				cfg := fakeConfig{versions: tc.serves, sse: true}
				opts := ClientOptions{Versions: tc.offer}
				var c *Client
				var srv *fakeServer
				var err error
				if transport == "stdio" {
					var p *pipeSetup
					p, err = connectPipes(t, cfg, opts)
					c, srv = p.c, p.srv
				} else {
					var s *httpSetup
					s, err = connectHTTP(t, cfg, opts, HTTPOptions{})
					c, srv = s.c, s.srv
				}
				if tc.version == "" {
					var ve *VersionError
					if !errors.As(err, &ve) || ve.Chosen != tc.chosen || !errors.Is(err, ErrUnsupportedVersion) {
						t.Fatalf("err = %v, want a VersionError naming %s", err, tc.chosen)
					}
					return
				}
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				if got := c.ProtocolVersion(); got != tc.version {
					t.Fatalf("agreed %q, want %q", got, tc.version)
				}
				ctx := context.Background()
				if _, err := c.ListTools(ctx); err != nil {
					t.Fatalf("tools/list: %v", err)
				}
				var steps []Progress
				res, err := c.CallTool(ctx, "progress", nil, CallOptions{Progress: func(p Progress) { steps = append(steps, p) }})
				if err != nil || res.Content[0].Text != "done" || len(steps) != 3 {
					t.Fatalf("tools/call = %+v, %v, progress %v", res, err, steps)
				}
				if transport != "http" || modern(tc.version) {
					return
				}
				// Every request after initialize carries the header exactly
				// when the revision has it.
				hs := srv.postHeaders()
				init := slices.IndexFunc(hs, func(h http.Header) bool { return h.Get("Mcp-Session-Id") == "" && h.Get("Mcp-Method") == "" })
				for _, h := range hs[init+1:] {
					if got := h.Get("MCP-Protocol-Version"); (got != "") != versionHeader(tc.version) || (got != "" && got != tc.version) {
						t.Errorf("MCP-Protocol-Version %q on a request of %s", got, tc.version)
					}
				}
				c.Close()
				srv.mu.Lock()
				del := srv.delHeader
				srv.mu.Unlock()
				if del == nil || (del.Get("MCP-Protocol-Version") != "") != versionHeader(tc.version) {
					t.Errorf("DELETE headers %v", del)
				}
			})
		}
	}
}

// TestHTTPResumesWithLastEventIDAfterRetry: a POST's SSE stream that ends
// after its priming event, before the response, is resumed with a GET that
// carries Last-Event-ID, after the server's retry time (capped at
// MaxRetryDelay; RetryDelay when the server sets none), for every
// session-based revision (2025-03-26 transports "Resumability and
// Redelivery"; 2025-11-25 adds that the client MUST respect retry).
func TestHTTPResumesWithLastEventIDAfterRetry(t *testing.T) {
	type row struct {
		name    string
		version string
		retry   time.Duration // the server's retry field; 0: none
		hopts   HTTPOptions
		wait    time.Duration
	}
	var rows []row
	for _, v := range sessionRevisions {
		rows = append(rows, row{name: v + " retry 7s", version: v, retry: 7 * time.Second, wait: 7 * time.Second})
	}
	rows = append(rows,
		row{name: "no retry field waits RetryDelay", version: Version20250326, hopts: HTTPOptions{RetryDelay: 3 * time.Second}, wait: 3 * time.Second},
		row{name: "no retry field waits 1s by default", version: Version20241105, wait: time.Second},
		row{name: "retry above MaxRetryDelay waits the cap", version: Version20250326, retry: time.Hour, hopts: HTTPOptions{MaxRetryDelay: 90 * time.Second}, wait: 90 * time.Second},
		row{name: "retry above the default cap waits 60s", version: Version20251125, retry: time.Hour, wait: time.Minute},
	)
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newFakeServer(fakeConfig{versions: []string{tc.version}, dropPrimed: true, retry: tc.retry, noGet: true})
				c, err := connectPipeHTTP(t, srv, ClientOptions{}, tc.hopts)
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "resumed"}, CallOptions{})
				if err != nil || res.Content[0].Text != "resumed" {
					t.Fatalf("call = %+v, %v", res, err)
				}
				// Fake time: the stream ended at start, so the wait is exact.
				if d := time.Since(start); d != tc.wait {
					t.Errorf("resumed after %v, want %v", d, tc.wait)
				}
				srv.mu.Lock()
				gets := slices.Clone(srv.gets)
				srv.mu.Unlock()
				var resumes []string
				for _, g := range gets {
					if g != "" {
						resumes = append(resumes, g)
					}
				}
				if len(resumes) != 1 || !strings.HasPrefix(resumes[0], "prime-") {
					t.Errorf("GETs with Last-Event-ID %q, want the priming event's id once", resumes)
				}
			})
		})
	}
}

// TestHTTPListenStreamResumesAfterRetry: the GET stream for the server's
// own messages, dropped after an event, is reopened after the retry time
// with Last-Event-ID, and carries notifications again.
func TestHTTPListenStreamResumesAfterRetry(t *testing.T) {
	for _, v := range sessionRevisions {
		t.Run(v, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				changed := make(chan []Tool, 1)
				srv := newFakeServer(fakeConfig{versions: []string{v}, dropGet: true, retry: 4 * time.Second, listChanged: true})
				c, err := connectPipeHTTP(t, srv, ClientOptions{OnToolsChanged: func(t []Tool) { changed <- t }}, HTTPOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.ListTools(context.Background()); err != nil {
					t.Fatal(err)
				}
				time.Sleep(4 * time.Second)
				synctest.Wait()
				srv.mu.Lock()
				gets, at := slices.Clone(srv.gets), slices.Clone(srv.getTimes)
				srv.mu.Unlock()
				if !slices.Equal(gets, []string{"", "g-drop"}) || at[1].Sub(at[0]) != 4*time.Second {
					t.Fatalf("GETs %q at %v, want a resume with g-drop 4s after the first", gets, at)
				}
				srv.addTool(`{"name":"late","inputSchema":{"type":"object"}}`)
				srv.announce()
				if tools := <-changed; !slices.ContainsFunc(tools, func(t Tool) bool { return t.Name == "late" }) {
					t.Fatalf("tools after the change: %v", tools)
				}
			})
		})
	}
}

// TestHTTPResumptionIsBounded: reconnections that bring nothing new end
// after MaxResumes of them, each after the retry time, with ErrStreamLost.
func TestHTTPResumptionIsBounded(t *testing.T) {
	for _, v := range []string{Version20250326, Version20251125} {
		t.Run(v, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newFakeServer(fakeConfig{versions: []string{v}, dropPrimed: true, stallResume: true, retry: 2 * time.Second, noGet: true})
				c, err := connectPipeHTTP(t, srv, ClientOptions{}, HTTPOptions{MaxResumes: 3})
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				_, err = c.CallTool(context.Background(), "echo", nil, CallOptions{})
				if !errors.Is(err, ErrStreamLost) {
					t.Fatalf("err = %v, want ErrStreamLost", err)
				}
				if d := time.Since(start); d != 6*time.Second {
					t.Errorf("gave up after %v, want 3 × 2s", d)
				}
				srv.mu.Lock()
				n := 0
				for _, g := range srv.gets {
					if strings.HasPrefix(g, "prime-") {
						n++
					}
				}
				srv.mu.Unlock()
				if n != 3 {
					t.Errorf("%d reconnections, want 3", n)
				}
			})
		})
	}
}

// TestClientTakesBatchesOnlyFrom20250326: a server of 2025-03-26 may send
// its messages as JSON-RPC batches, which that revision requires the
// client to accept (basic/index "Batching"): in a JSON body, in an SSE
// event (the progress notifications and the response together) and on a
// stdio line. From a server of any other revision a batch is refused.
func TestClientTakesBatchesOnlyFrom20250326(t *testing.T) {
	for _, transport := range []string{"stdio", "http json", "http sse"} {
		for _, v := range sessionRevisions {
			t.Run(transport+"/"+v, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					cfg := fakeConfig{versions: []string{v}, batch: true, sse: transport == "http sse", noGet: true}
					var diags []error
					var mu sync.Mutex
					opts := ClientOptions{Timeout: 10 * time.Second, OnDiagnostic: func(err error) {
						mu.Lock()
						diags = append(diags, err)
						mu.Unlock()
					}}
					var c *Client
					var err error
					if transport == "stdio" {
						var p *pipeSetup
						p, err = connectPipes(t, cfg, opts)
						if p.srvConn != nil {
							defer p.srvConn.Close()
						}
						c = p.c
					} else {
						c, err = connectPipeHTTP(t, newFakeServer(cfg), opts, HTTPOptions{})
					}
					if err != nil {
						t.Fatalf("Connect: %v", err)
					}
					defer c.Close()
					var steps []Progress
					res, err := c.CallTool(context.Background(), "progress", nil, CallOptions{Progress: func(p Progress) { steps = append(steps, p) }})
					mu.Lock()
					refused := slices.ContainsFunc(diags, func(e error) bool { return errors.Is(e, jsonrpc.ErrBatch) })
					mu.Unlock()
					if v == Version20250326 {
						wantSteps := 3
						if transport == "http json" {
							wantSteps = 0 // a JSON body holds the response only
						}
						if err != nil || res.Content[0].Text != "done" || len(steps) != wantSteps || refused {
							t.Fatalf("call = %+v, %v, progress %v, diagnostics %v", res, err, steps, diags)
						}
						return
					}
					if err == nil || !(refused || errors.Is(err, jsonrpc.ErrBatch)) {
						t.Fatalf("a batch from a server of %s: call = %+v, %v, diagnostics %v", v, res, err, diags)
					}
				})
			})
		}
	}
}
