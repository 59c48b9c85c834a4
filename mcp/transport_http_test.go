package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"agent/mcp/jsonrpc"
)

type httpSetup struct {
	c   *Client
	srv *fakeServer
	hs  *httptest.Server
	t   *HTTPTransport
}

func connectHTTP(t *testing.T, cfg fakeConfig, opts ClientOptions, hopts HTTPOptions) (*httpSetup, error) {
	t.Helper()
	srv := newFakeServer(cfg)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	hopts.URL = hs.URL + "/mcp"
	tr, err := NewHTTPTransport(hopts)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Connect(context.Background(), tr, opts)
	if err != nil {
		return &httpSetup{srv: srv, hs: hs, t: tr}, err
	}
	t.Cleanup(func() { c.Close() })
	return &httpSetup{c: c, srv: srv, hs: hs, t: tr}, nil
}

func mustHTTP(t *testing.T, cfg fakeConfig, opts ClientOptions, hopts HTTPOptions) *httpSetup {
	t.Helper()
	s, err := connectHTTP(t, cfg, opts, hopts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return s
}

func (s *fakeServer) postHeaders() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.headers)
}

func TestHTTPSessionServer(t *testing.T) {
	for _, useSSE := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "sse"}[useSSE], func(t *testing.T) {
			s := mustHTTP(t, fakeConfig{versions: legacyOnly, sse: useSSE}, ClientOptions{}, HTTPOptions{Header: http.Header{"Authorization": {"Bearer t"}, "Mcp-Session-Id": {"forged"}}})
			if s.c.ProtocolVersion() != Version20251125 {
				t.Fatalf("version %q", s.c.ProtocolVersion())
			}
			if s.t.SessionID() != "sess-1" {
				t.Fatalf("session %q", s.t.SessionID())
			}
			var got []Progress
			res, err := s.c.CallTool(context.Background(), "progress", nil, CallOptions{Progress: func(p Progress) { got = append(got, p) }})
			if err != nil || res.Content[0].Text != "done" {
				t.Fatalf("call = %+v, %v", res, err)
			}
			if useSSE && len(got) != 3 {
				t.Errorf("progress over SSE = %+v", got)
			}
			hs := s.srv.postHeaders()
			// probe, initialize, initialized, tools/call
			if len(hs) != 4 {
				t.Fatalf("%d POSTs", len(hs))
			}
			if hs[0].Get("MCP-Protocol-Version") != Version20260728 || hs[0].Get("Mcp-Method") != "server/discover" {
				t.Errorf("probe headers %v", hs[0])
			}
			if hs[1].Get("MCP-Protocol-Version") != "" || hs[1].Get("Mcp-Session-Id") != "" || hs[1].Get("Authorization") != "Bearer t" {
				// A reserved header of the caller is never sent.
				t.Errorf("initialize headers %v", hs[1])
			}
			for _, h := range hs[2:] {
				if h.Get("Mcp-Session-Id") != "sess-1" || h.Get("MCP-Protocol-Version") != Version20251125 || h.Get("Authorization") != "Bearer t" || h.Get("Mcp-Method") != "" {
					t.Errorf("session request headers %v", h)
				}
			}
			waitFor(t, func() bool { return s.srv.listenerCount() == 1 })
			s.c.Close()
			if s.srv.deletes != 1 {
				t.Errorf("%d DELETEs on close", s.srv.deletes)
			}
			waitFor(t, func() bool { return s.srv.listenerCount() == 0 })
		})
	}
}

func TestHTTPSessionExpiredReinitializes(t *testing.T) {
	s := mustHTTP(t, fakeConfig{versions: legacyOnly}, ClientOptions{}, HTTPOptions{})
	ctx := context.Background()
	if _, err := s.c.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	s.srv.expireSessions()
	res, err := s.c.CallTool(ctx, "echo", map[string]string{"text": "again"}, CallOptions{})
	if err != nil || res.Content[0].Text != "again" {
		t.Fatalf("call after expiry = %+v, %v", res, err)
	}
	if s.t.SessionID() != "sess-2" {
		t.Errorf("session %q, want sess-2", s.t.SessionID())
	}
	n := 0
	for _, m := range s.srv.methods() {
		if m == "initialize" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d initialize requests, want 2", n)
	}
}

func TestHTTPResumeAfterRetry(t *testing.T) {
	const retry = 150 * time.Millisecond
	s := mustHTTP(t, fakeConfig{versions: legacyOnly, dropPrimed: true, retry: retry, noGet: true}, ClientOptions{}, HTTPOptions{})
	start := time.Now()
	res, err := s.c.CallTool(context.Background(), "echo", map[string]string{"text": "resumed"}, CallOptions{})
	if err != nil || res.Content[0].Text != "resumed" {
		t.Fatalf("call = %+v, %v", res, err)
	}
	if d := time.Since(start); d < retry {
		t.Errorf("resumed after %v, before the retry time %v", d, retry)
	}
	s.srv.mu.Lock()
	gets := slices.Clone(s.srv.gets)
	s.srv.mu.Unlock()
	if !slices.Contains(gets, "prime-2") && !slices.Contains(gets, "prime-3") && !slices.Contains(gets, "prime-4") {
		t.Errorf("GETs %q carry no Last-Event-ID of the primed stream", gets)
	}
}

func TestHTTPStreamLostWithoutEventID(t *testing.T) {
	s := mustHTTP(t, fakeConfig{versions: legacyOnly, dropPrimed: true, noResumeIDs: true, retry: 10 * time.Millisecond, noGet: true}, ClientOptions{}, HTTPOptions{})
	_, err := s.c.CallTool(context.Background(), "echo", nil, CallOptions{})
	if !errors.Is(err, ErrStreamLost) {
		t.Fatalf("err = %v, want ErrStreamLost", err)
	}
}

func TestHTTPListChangedOnGetStream(t *testing.T) {
	changed := make(chan []Tool, 2)
	s := mustHTTP(t, fakeConfig{versions: legacyOnly, listChanged: true}, ClientOptions{OnToolsChanged: func(t []Tool) { changed <- t }}, HTTPOptions{})
	if _, err := s.c.ListTools(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return s.srv.listenerCount() == 1 })
	s.srv.addTool(`{"name":"late","inputSchema":{"type":"object"}}`)
	s.srv.announce()
	select {
	case tools := <-changed:
		if tools[len(tools)-1].Name != "late" {
			t.Fatalf("tools %+v", tools)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no refresh")
	}
}

func TestHTTPSessionCancellation(t *testing.T) {
	s := mustHTTP(t, fakeConfig{versions: legacyOnly, sse: true}, ClientOptions{OnDiagnostic: func(err error) { t.Log(err) }}, HTTPOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitFor(t, func() bool { return slices.Contains(s.srv.methods(), "tools/call block") })
		cancel()
	}()
	if _, err := s.c.CallTool(ctx, "block", nil, CallOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	waitFor(t, func() bool { return slices.Contains(s.srv.methods(), "notifications/cancelled") })
}

func TestHTTPStateless(t *testing.T) {
	var diags []string
	var mu sync.Mutex
	s := mustHTTP(t, fakeConfig{sse: true, extraTools: []string{
		`{"name":"regional","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"Count"}}}}`,
		`{"name":"broken","inputSchema":{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}}`,
	}}, ClientOptions{OnDiagnostic: func(err error) { mu.Lock(); diags = append(diags, err.Error()); mu.Unlock() }}, HTTPOptions{})
	if s.c.ProtocolVersion() != Version20260728 || s.t.SessionID() != "" {
		t.Fatalf("version %q session %q", s.c.ProtocolVersion(), s.t.SessionID())
	}
	ctx := context.Background()
	tools, err := s.c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(tools, func(t Tool) bool { return t.Name == "broken" }) {
		t.Error("a tool with an invalid x-mcp-header was kept")
	}
	mu.Lock()
	if len(diags) != 1 || !strings.Contains(diags[0], "broken") {
		t.Errorf("diagnostics %q", diags)
	}
	mu.Unlock()
	res, err := s.c.CallTool(ctx, "regional", map[string]any{"region": "eu west", "n": 3}, CallOptions{})
	if err != nil || res.Content[0].Text != "called regional" {
		t.Fatalf("call = %+v, %v", res, err)
	}
	hs := s.srv.postHeaders()
	last := hs[len(hs)-1]
	if last.Get("Mcp-Method") != "tools/call" || last.Get("Mcp-Name") != "regional" || last.Get("Mcp-Param-Region") != "eu west" ||
		last.Get("Mcp-Param-Count") != "3" || last.Get("MCP-Protocol-Version") != Version20260728 || last.Get("Mcp-Session-Id") != "" {
		t.Errorf("tools/call headers %v", last)
	}
	// A tool name outside the plain header set travels base64-encoded.
	s.srv.addTool(`{"name":"café","inputSchema":{"type":"object"}}`)
	if _, err := s.c.CallTool(ctx, "café", nil, CallOptions{}); err != nil {
		t.Fatal(err)
	}
	hs = s.srv.postHeaders()
	if got := hs[len(hs)-1].Get("Mcp-Name"); got != "=?base64?Y2Fmw6k=?=" {
		t.Errorf("Mcp-Name %q", got)
	}
	s.srv.mu.Lock()
	gets := len(s.srv.gets)
	s.srv.mu.Unlock()
	if gets != 0 {
		t.Errorf("%d GETs to a stateless server", gets)
	}
	s.c.Close()
	if s.srv.deletes != 0 {
		t.Errorf("DELETE sent to a stateless server")
	}
}

func TestHTTPStatelessCancellationClosesStream(t *testing.T) {
	s := mustHTTP(t, fakeConfig{sse: true}, ClientOptions{}, HTTPOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitFor(t, func() bool { return slices.Contains(s.srv.methods(), "tools/call block") })
		cancel()
	}()
	if _, err := s.c.CallTool(ctx, "block", nil, CallOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	waitFor(t, func() bool {
		s.srv.mu.Lock()
		defer s.srv.mu.Unlock()
		return slices.Contains(s.srv.stopped, "block")
	})
	time.Sleep(20 * time.Millisecond)
	if slices.Contains(s.srv.methods(), "notifications/cancelled") {
		t.Error("notifications/cancelled sent on stateless HTTP")
	}
}

func TestHTTPStatelessListen(t *testing.T) {
	changed := make(chan []Tool, 2)
	s := mustHTTP(t, fakeConfig{listChanged: true}, ClientOptions{OnToolsChanged: func(t []Tool) { changed <- t }}, HTTPOptions{})
	waitFor(t, func() bool { return s.srv.listenerCount() == 1 })
	s.srv.addTool(`{"name":"fresh","inputSchema":{"type":"object"}}`)
	s.srv.announce()
	select {
	case tools := <-changed:
		if tools[len(tools)-1].Name != "fresh" {
			t.Fatalf("tools %+v", tools)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no refresh")
	}
	s.c.Close()
	waitFor(t, func() bool { return s.srv.listenerCount() == 0 })
}

func TestHTTPSessionServerRejectsProbe(t *testing.T) {
	// server-everything style: a stateless request without a session gets
	// 400 with a JSON-RPC error that is not a modern one: fall back.
	s := mustHTTP(t, fakeConfig{versions: legacyOnly}, ClientOptions{}, HTTPOptions{})
	if got := s.srv.methods(); len(got) < 2 || got[0] != "server/discover" || got[1] != "initialize" {
		t.Errorf("server saw %q", got)
	}
}

func TestHTTPErrors(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		check   func(t *testing.T, err error)
	}{
		{"unauthorized", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="https://x/.well-known/oauth-protected-resource"`)
			w.WriteHeader(http.StatusUnauthorized)
		}, func(t *testing.T, err error) {
			var he *HTTPStatusError
			if !errors.As(err, &he) || he.StatusCode != 401 || len(he.Authenticate) != 1 {
				t.Fatalf("err = %v", err)
			}
		}},
		{"redirect not followed", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/elsewhere" {
				t.Error("redirect followed")
			}
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		}, func(t *testing.T, err error) {
			var he *HTTPStatusError
			if !errors.As(err, &he) || he.StatusCode != http.StatusTemporaryRedirect {
				t.Fatalf("err = %v", err)
			}
		}},
		{"oversized body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"x":"`+strings.Repeat("a", 2000)+`"}}`) //nolint:errcheck // test
		}, func(t *testing.T, err error) {
			if !errors.Is(err, jsonrpc.ErrTooLarge) {
				t.Fatalf("err = %v", err)
			}
		}},
		{"batch body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `[{"jsonrpc":"2.0","id":1,"result":{}}]`) //nolint:errcheck // test
		}, func(t *testing.T, err error) {
			if !errors.Is(err, jsonrpc.ErrBatch) {
				t.Fatalf("err = %v", err)
			}
		}},
		{"wrong content type", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>") //nolint:errcheck // test
		}, func(t *testing.T, err error) {
			if !errors.Is(err, ErrBadResponse) {
				t.Fatalf("err = %v", err)
			}
		}},
		{"bad session id", func(w http.ResponseWriter, r *http.Request) {
			var m struct{ Method string }
			b, _ := io.ReadAll(r.Body)
			json.Unmarshal(b, &m) //nolint:errcheck // test
			if m.Method != "initialize" {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			w.Header().Set("Mcp-Session-Id", "bad id")
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}`) //nolint:errcheck // test
		}, func(t *testing.T, err error) {
			if !errors.Is(err, ErrBadResponse) {
				t.Fatalf("err = %v", err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs := httptest.NewServer(c.handler)
			defer hs.Close()
			tr, err := NewHTTPTransport(HTTPOptions{URL: hs.URL + "/mcp", MaxMessage: 1000})
			if err != nil {
				t.Fatal(err)
			}
			_, err = Connect(context.Background(), tr, ClientOptions{})
			if err == nil {
				t.Fatal("Connect succeeded")
			}
			if strings.Contains(err.Error(), hs.URL) {
				t.Errorf("error shows the URL: %v", err)
			}
			c.check(t, err)
		})
	}
}

func TestHTTPTransportURL(t *testing.T) {
	for _, u := range []string{"", "ftp://x/mcp", "/relative", "http://", "::"} {
		if _, err := NewHTTPTransport(HTTPOptions{URL: u}); err == nil {
			t.Errorf("URL %q accepted", u)
		}
	}
}

func TestHTTPCloseUnblocks(t *testing.T) {
	s := mustHTTP(t, fakeConfig{versions: legacyOnly, sse: true}, ClientOptions{}, HTTPOptions{})
	errc := make(chan error, 1)
	go func() {
		_, err := s.c.CallTool(context.Background(), "block", nil, CallOptions{})
		errc <- err
	}()
	waitFor(t, func() bool { return slices.Contains(s.srv.methods(), "tools/call block") })
	s.c.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the call")
	}
}

func TestHTTPServerPingOnGetStream(t *testing.T) {
	s := mustHTTP(t, fakeConfig{versions: legacyOnly}, ClientOptions{}, HTTPOptions{})
	waitFor(t, func() bool { return s.srv.listenerCount() == 1 })
	ping, _ := jsonrpc.NewRequest(jsonrpc.StringID("srv-1"), "ping", nil)
	s.srv.broadcast(ping)
	waitFor(t, func() bool {
		return slices.Contains(s.srv.methods(), `response {"jsonrpc":"2.0","id":"srv-1","result":{}}`)
	})
}

// ownGoroutines returns the stacks of goroutines running code of the
// client, its transports or jsonrpc.Conn.
func ownGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "agent/mcp.(*HTTPTransport)") || strings.Contains(g, "agent/mcp.(*Client)") ||
			strings.Contains(g, "agent/mcp/jsonrpc.(*Conn)") || strings.Contains(g, "agent/mcp.(*StdioTransport)") {
			out = append(out, g)
		}
	}
	return out
}

func TestNoGoroutinesAfterClose(t *testing.T) {
	for _, cfg := range []fakeConfig{
		{versions: legacyOnly, sse: true, listChanged: true},
		{versions: legacyOnly, dropPrimed: true, retry: 10 * time.Millisecond},
		{sse: true, listChanged: true},
	} {
		s := mustHTTP(t, cfg, ClientOptions{}, HTTPOptions{})
		if _, err := s.c.ListTools(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.c.CallTool(context.Background(), "progress", nil, CallOptions{Progress: func(Progress) {}}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		s.c.CallTool(ctx, "block", nil, CallOptions{}) //nolint:errcheck // cut short on purpose
		cancel()
		s.c.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := ownGoroutines()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left after Close:\n%s", len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
