package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"agent/mcp/jsonrpc"
)

// pipeSetup connects a Client to a fakeServer over in-memory pipes (the
// stdio framing without a process).
type pipeSetup struct {
	c        *Client
	srv      *fakeServer
	srvConn  *jsonrpc.Conn
	announce func()
}

func connectPipes(t *testing.T, cfg fakeConfig, opts ClientOptions) (*pipeSetup, error) {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	srv := newFakeServer(cfg)
	srvConn, announce := srv.serveStream(jsonrpc.NewStream(sr, sw, jsonrpc.ReaderOptions{}))
	c, err := Connect(context.Background(), NewStreamTransport(cr, cw, 0), opts)
	t.Cleanup(func() { srvConn.Close() })
	if err != nil {
		return &pipeSetup{srv: srv, srvConn: srvConn}, err
	}
	t.Cleanup(func() { c.Close() })
	return &pipeSetup{c: c, srv: srv, srvConn: srvConn, announce: announce}, nil
}

func mustPipes(t *testing.T, cfg fakeConfig, opts ClientOptions) *pipeSetup {
	t.Helper()
	p, err := connectPipes(t, cfg, opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return p
}

var legacyOnly = []string{Version20251125, Version20250618}

func TestNegotiation(t *testing.T) {
	cases := []struct {
		name      string
		cfg       fakeConfig
		offer     []string
		version   string
		methods   []string // the server's log after Connect
		err       error
		chosen    string // VersionError.Chosen
		supported []string
	}{
		{name: "stateless server", cfg: fakeConfig{}, version: Version20260728, methods: []string{"server/discover"}},
		{name: "session server, probe refused", cfg: fakeConfig{versions: legacyOnly}, version: Version20251125,
			methods: []string{"server/discover", "initialize", "notifications/initialized"}},
		{name: "session server, empty probe result", cfg: fakeConfig{versions: legacyOnly, legacyProbe: "empty"}, version: Version20251125,
			methods: []string{"server/discover", "initialize", "notifications/initialized"}},
		{name: "older session server", cfg: fakeConfig{versions: []string{Version20250618}}, version: Version20250618,
			methods: []string{"server/discover", "initialize", "notifications/initialized"}},
		{name: "session revisions only offered", cfg: fakeConfig{}, offer: legacyOnly, version: Version20251125,
			methods: []string{"initialize", "notifications/initialized"}},
		{name: "stateless only offered to a session server", cfg: fakeConfig{versions: legacyOnly}, offer: []string{Version20260728},
			err: ErrUnsupportedVersion, methods: []string{"server/discover"}},
		{name: "server chooses an unknown revision", cfg: fakeConfig{versions: legacyOnly, initVersion: "2024-10-07"},
			err: ErrUnsupportedVersion, chosen: "2024-10-07"},
		{name: "stateless server refuses once", cfg: fakeConfig{rejectNext: 1}, version: Version20260728, methods: []string{"server/discover", "server/discover"}},
		{name: "stateless-only server refuses twice", cfg: fakeConfig{versions: []string{Version20260728}, rejectNext: 2}, err: ErrUnsupportedVersion, supported: []string{Version20260728}},
		{name: "dual-era server refuses twice", cfg: fakeConfig{rejectNext: 2}, version: Version20251125,
			methods: []string{"server/discover", "server/discover", "initialize", "notifications/initialized"}},
		{name: "future stateless server", cfg: fakeConfig{versions: []string{"2099-01-01"}}, err: ErrUnsupportedVersion, supported: []string{"2099-01-01"}},
		{name: "future and session revisions", cfg: fakeConfig{versions: []string{"2099-01-01", Version20251125}}, version: Version20251125,
			methods: []string{"server/discover", "initialize", "notifications/initialized"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := connectPipes(t, tc.cfg, ClientOptions{Versions: tc.offer})
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				var ve *VersionError
				if tc.chosen != "" && (!errors.As(err, &ve) || ve.Chosen != tc.chosen) {
					t.Errorf("VersionError = %+v, want Chosen %q", ve, tc.chosen)
				}
				if tc.supported != nil && (!errors.As(err, &ve) || !slices.Equal(ve.Supported, tc.supported)) {
					t.Errorf("VersionError = %+v, want Supported %v", ve, tc.supported)
				}
			} else if err != nil {
				t.Fatalf("Connect: %v", err)
			} else {
				if got := p.c.ProtocolVersion(); got != tc.version {
					t.Errorf("version = %q, want %q", got, tc.version)
				}
				if si := p.c.ServerInfo(); si.Implementation.Name != "fake" || si.ProtocolVersion != tc.version {
					t.Errorf("server info = %+v", si)
				}
			}
			if tc.methods != nil {
				time.Sleep(10 * time.Millisecond) // the notification may trail Connect
				if got := p.srv.methods(); !slices.Equal(got, tc.methods) {
					t.Errorf("server saw %q, want %q", got, tc.methods)
				}
			}
		})
	}
}

func TestNegotiationSilentServer(t *testing.T) {
	// A session-based stdio server that ignores requests before initialize:
	// after DiscoverTimeout the client falls back.
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		p := mustPipes(t, fakeConfig{versions: legacyOnly, legacyProbe: "silent"}, ClientOptions{DiscoverTimeout: 3 * time.Second})
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("connected after %v", d)
		}
		if p.c.ProtocolVersion() != Version20251125 {
			t.Errorf("version = %q", p.c.ProtocolVersion())
		}
		synctest.Wait()
		// The probe is not cancelled: nothing may precede initialize.
		if got := p.srv.methods(); slices.Contains(got, "notifications/cancelled") {
			t.Errorf("server saw %q", got)
		}
		p.c.Close()
		p.srvConn.Close()
	})
}

func TestStatelessMeta(t *testing.T) {
	// Every stateless request carries the per-request protocol fields; the
	// fake refuses requests without them, so a working call proves it.
	p := mustPipes(t, fakeConfig{}, ClientOptions{ClientInfo: Implementation{Name: "tester", Version: "9"}})
	if _, err := p.c.ListTools(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := p.c.CallTool(context.Background(), "echo", map[string]string{"text": "hi"}, CallOptions{})
	if err != nil || res.Content[0].Text != "hi" {
		t.Fatalf("CallTool = %+v, %v", res, err)
	}
	// A later UnsupportedProtocolVersion is retried once with a version
	// from the server's list; a second one in a row is reported.
	p.srv.mu.Lock()
	p.srv.cfg.rejectNext = 1
	p.srv.mu.Unlock()
	if _, err := p.c.CallTool(context.Background(), "echo", nil, CallOptions{}); err != nil {
		t.Fatalf("after one refusal: %v", err)
	}
	p.srv.mu.Lock()
	p.srv.cfg.rejectNext = 2
	p.srv.mu.Unlock()
	if _, err := p.c.CallTool(context.Background(), "echo", nil, CallOptions{}); !errors.Is(err, ErrUnsupportedVersion) {
		t.Fatalf("after two refusals: %v", err)
	}
}

func TestListToolsPagination(t *testing.T) {
	for _, versions := range [][]string{nil, legacyOnly} {
		t.Run(strings.Join(versions, ","), func(t *testing.T) {
			var diags []string
			var mu sync.Mutex
			p := mustPipes(t, fakeConfig{versions: versions, pageSize: 2, extraTools: []string{
				`{"name":"","inputSchema":{}}`,
				`{"name":"nullschema","inputSchema":null}`,
				`{"name":"noschema"}`,
				`{"name":"last","inputSchema":{"type":"object"}}`,
			}}, ClientOptions{OnDiagnostic: func(err error) { mu.Lock(); diags = append(diags, err.Error()); mu.Unlock() }})
			tools, err := p.c.ListTools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			if want := []string{"echo", "add", "progress", "block", "fail", "last"}; !slices.Equal(names, want) {
				t.Errorf("tools = %q, want %q", names, want)
			}
			if tools[0].Description != "Echoes text" || string(tools[0].InputSchema) != fakeSchema {
				t.Errorf("echo = %+v", tools[0])
			}
			mu.Lock()
			if len(diags) != 3 {
				t.Errorf("diagnostics = %q", diags)
			}
			mu.Unlock()
			pages := 0
			for _, m := range p.srv.methods() {
				if m == "tools/list" {
					pages++
				}
			}
			if pages != 5 {
				t.Errorf("%d pages fetched, want 5", pages)
			}
			// Tools answers from the cache.
			if again, err := p.c.Tools(context.Background()); err != nil || len(again) != len(tools) {
				t.Fatalf("Tools = %d, %v", len(again), err)
			}
			pages2 := 0
			for _, m := range p.srv.methods() {
				if m == "tools/list" {
					pages2++
				}
			}
			if pages2 != pages {
				t.Errorf("Tools refetched the list")
			}
		})
	}
}

func TestCallTool(t *testing.T) {
	for _, versions := range [][]string{nil, legacyOnly} {
		t.Run(strings.Join(versions, ","), func(t *testing.T) {
			p := mustPipes(t, fakeConfig{versions: versions}, ClientOptions{})
			ctx := context.Background()
			res, err := p.c.CallTool(ctx, "add", json.RawMessage(`{"a":2,"b":40}`), CallOptions{})
			if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Type != "text" || res.Content[0].Text != "42" {
				t.Fatalf("add = %+v, %v", res, err)
			}
			res, err = p.c.CallTool(ctx, "fail", nil, CallOptions{})
			if err != nil || !res.IsError {
				t.Fatalf("fail = %+v, %v", res, err)
			}
			_, err = p.c.CallTool(ctx, "nosuch", nil, CallOptions{})
			var pe *ProtocolError
			if !errors.As(err, &pe) || pe.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("nosuch: %v", err)
			}
			if _, err := p.c.CallTool(ctx, "echo", []int{1}, CallOptions{}); err == nil {
				t.Fatal("array arguments accepted")
			}
		})
	}
}

func TestProgress(t *testing.T) {
	for _, versions := range [][]string{nil, legacyOnly} {
		t.Run(strings.Join(versions, ","), func(t *testing.T) {
			p := mustPipes(t, fakeConfig{versions: versions}, ClientOptions{})
			var got []Progress
			res, err := p.c.CallTool(context.Background(), "progress", map[string]int{"steps": 4}, CallOptions{
				Progress: func(pr Progress) { got = append(got, pr) },
			})
			if err != nil || res.Content[0].Text != "done" {
				t.Fatalf("call = %+v, %v", res, err)
			}
			if len(got) != 4 {
				t.Fatalf("progress = %+v", got)
			}
			for i, pr := range got {
				if pr.Progress != float64(i+1) || pr.Total != 4 || pr.Message != "step "+string(rune('1'+i)) {
					t.Errorf("progress %d = %+v", i, pr)
				}
			}
			// Without a callback no token is sent and nothing is delivered.
			if _, err := p.c.CallTool(context.Background(), "progress", nil, CallOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCancellation(t *testing.T) {
	for _, versions := range [][]string{nil, legacyOnly} {
		t.Run(strings.Join(versions, ","), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := mustPipes(t, fakeConfig{versions: versions}, ClientOptions{})
				ctx, cancel := context.WithCancel(context.Background())
				errc := make(chan error, 1)
				go func() {
					_, err := p.c.CallTool(ctx, "block", nil, CallOptions{})
					errc <- err
				}()
				synctest.Wait()
				cancel()
				if err := <-errc; !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v", err)
				}
				synctest.Wait()
				p.srv.mu.Lock()
				cancelled, stopped := p.srv.cancelled, p.srv.stopped
				p.srv.mu.Unlock()
				if len(cancelled) != 1 || !slices.Equal(stopped, []string{"block"}) {
					t.Errorf("server: cancelled %q, stopped %q", cancelled, stopped)
				}
				p.c.Close()
				p.srvConn.Close()
			})
		})
	}
}

func TestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := mustPipes(t, fakeConfig{versions: legacyOnly}, ClientOptions{Timeout: 2 * time.Second})
		start := time.Now()
		_, err := p.c.CallTool(context.Background(), "block", nil, CallOptions{})
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Errorf("timed out after %v", d)
		}
		synctest.Wait()
		p.srv.mu.Lock()
		n := len(p.srv.cancelled)
		p.srv.mu.Unlock()
		if n != 1 {
			t.Errorf("server got %d cancellations", n)
		}
		// The caller's own deadline is not ErrTimeout.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := p.c.CallTool(ctx, "block", nil, CallOptions{}); errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("caller deadline: err = %v", err)
		}
		p.c.Close()
		p.srvConn.Close()
	})
}

func TestToolsListChanged(t *testing.T) {
	for _, versions := range [][]string{nil, legacyOnly} {
		t.Run(strings.Join(versions, ","), func(t *testing.T) {
			changed := make(chan []Tool, 4)
			p := mustPipes(t, fakeConfig{versions: versions, listChanged: true}, ClientOptions{OnToolsChanged: func(tools []Tool) { changed <- tools }})
			if _, err := p.c.ListTools(context.Background()); err != nil {
				t.Fatal(err)
			}
			if versions == nil {
				waitFor(t, func() bool { return slices.Contains(p.srv.methods(), "subscriptions/listen") })
			}
			p.srv.addTool(`{"name":"added","inputSchema":{"type":"object"}}`)
			p.announce()
			select {
			case tools := <-changed:
				if tools[len(tools)-1].Name != "added" {
					t.Fatalf("refreshed list = %+v", tools)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no refresh after list_changed")
			}
			cached, _ := p.c.Tools(context.Background())
			if cached[len(cached)-1].Name != "added" {
				t.Errorf("Tools after refresh = %+v", cached)
			}
		})
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestServerGoesAway(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := mustPipes(t, fakeConfig{versions: legacyOnly}, ClientOptions{})
		errc := make(chan error, 1)
		go func() {
			_, err := p.c.CallTool(context.Background(), "block", nil, CallOptions{})
			errc <- err
		}()
		synctest.Wait()
		p.srvConn.Close()
		if err := <-errc; !errors.Is(err, ErrClosed) {
			t.Fatalf("err = %v", err)
		}
		<-p.c.Done()
		if !errors.Is(p.c.Err(), ErrClosed) {
			t.Errorf("Err = %v", p.c.Err())
		}
		if _, err := p.c.ListTools(context.Background()); !errors.Is(err, ErrClosed) {
			t.Errorf("after the end: %v", err)
		}
		p.c.Close()
		p.c.Close()
	})
}

func TestConnectOwnsTransport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, err := connectPipes(t, fakeConfig{versions: legacyOnly, initVersion: "1999-01-01"}, ClientOptions{})
		if !errors.Is(err, ErrUnsupportedVersion) {
			t.Fatalf("err = %v", err)
		}
		// The failed Connect closed the transport; every goroutine of the
		// bubble ends (synctest reports any that does not).
	})
	if _, err := Connect(context.Background(), NewStreamTransport(strings.NewReader(""), io.Discard, 0), ClientOptions{Versions: []string{"2000-01-01"}}); err == nil {
		t.Fatal("unknown revision accepted")
	}
}

func TestHeaderValue(t *testing.T) {
	for _, c := range []struct {
		name     string
		in, want string
	}{
		{"plain visible ASCII stays as it is", "us-west1", "us-west1"},
		{"non-ASCII is base64-encoded", "Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{"spaces at the ends are encoded", " padded ", "=?base64?IHBhZGRlZCA=?="},
		{"a line break is encoded", "line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"a plain value that looks encoded is encoded", "=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{"spaces and tabs inside stay", "a b\tc", "a b\tc"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := headerValue(c.in); got != c.want {
				t.Errorf("headerValue(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestParamHeaders(t *testing.T) {
	cases := []struct {
		name   string
		schema string
		want   []string // "path>name"
		bad    bool
	}{
		{"none", `{"type":"object","properties":{"a":{"type":"string"}}}`, nil, false},
		{"top level", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`, []string{"region>Region"}, false},
		{"nested", `{"type":"object","properties":{"o":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}}}`, []string{"o.n>N"}, false},
		{"nullable", `{"type":"object","properties":{"b":{"type":["boolean","null"],"x-mcp-header":"B"}}}`, []string{"b>B"}, false},
		{"property named like the keyword", `{"type":"object","properties":{"x-mcp-header":{"type":"string"}}}`, nil, false},
		{"data keyword", `{"type":"object","default":{"x-mcp-header":"X"}}`, nil, false},
		{"number type", `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`, nil, true},
		{"no type", `{"type":"object","properties":{"a":{"x-mcp-header":"A"}}}`, nil, true},
		{"under items", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`, nil, true},
		{"under anyOf", `{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`, nil, true},
		{"under $defs", `{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"A"}}}`, nil, true},
		{"on the root", `{"type":"object","x-mcp-header":"A"}`, nil, true},
		{"not a token", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}`, nil, true},
		{"empty", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`, nil, true},
		{"duplicate any case", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs, err := paramHeaders(json.RawMessage(c.schema))
			if c.bad {
				if err == nil {
					t.Fatalf("accepted: %+v", hs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hs {
				got = append(got, strings.Join(h.path, ".")+">"+h.name)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	hs := []paramHeader{{[]string{"s"}, "S"}, {[]string{"i"}, "I"}, {[]string{"b"}, "B"}, {[]string{"o", "n"}, "N"}, {[]string{"missing"}, "M"}, {[]string{"z"}, "Z"}, {[]string{"big"}, "G"}, {[]string{"f"}, "F"}}
	vals := paramHeaderValues(hs, json.RawMessage(`{"s":"Hello, 世界","i":42,"b":false,"o":{"n":-7},"z":null,"big":9007199254740993,"f":1.5}`))
	want := [][2]string{{"S", "=?base64?SGVsbG8sIOS4lueVjA==?="}, {"I", "42"}, {"B", "false"}, {"N", "-7"}}
	if !slices.Equal(vals, want) {
		t.Errorf("values = %q, want %q", vals, want)
	}
}
