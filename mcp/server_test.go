package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"agent/internal/jose"
	"agent/mcp/jsonrpc"
)

// fakeTarget serves an echo tool; Submit answers "answer: PROMPT", after
// one progress report for the prompt "progress", or blocks until ctx ends
// for the prompt "block".
type fakeTarget struct {
	mu      sync.Mutex
	prompts []string
	started chan struct{} // when set, told of each blocking submit
}

func (f *fakeTarget) Tools() []ServedTool {
	return []ServedTool{
		{Name: "echo", Description: "echoes", InputSchema: json.RawMessage(`{"type":"object"}`), ReadOnly: true},
		{Name: SubmitTool, Description: "shadowed"}, // never offered twice
	}
}

func (f *fakeTarget) CallTool(ctx context.Context, name string, args json.RawMessage) (ServedResult, error) {
	switch name {
	case "echo":
		return ServedResult{Text: string(args)}, nil
	case "fails":
		return ServedResult{}, errors.New("it broke")
	}
	return ServedResult{}, ErrUnknownTool
}

func (f *fakeTarget) Submit(ctx context.Context, prompt string) (ServedResult, error) {
	f.mu.Lock()
	f.prompts = append(f.prompts, prompt)
	f.mu.Unlock()
	if prompt == "progress" {
		ReportProgress(ctx, "working")
	}
	if prompt == "block" {
		if f.started != nil {
			f.started <- struct{}{}
		}
		<-ctx.Done()
		return ServedResult{}, ctx.Err()
	}
	return ServedResult{Text: "answer: " + prompt}, nil
}

func newTestServer(t testing.TB) *Server {
	t.Helper()
	s, err := NewServer(&fakeTarget{}, ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const testMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func decodeMsg(t testing.TB, s string) *jsonrpc.Message {
	t.Helper()
	m, err := jsonrpc.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestServerStateless(t *testing.T) {
	s := newTestServer(t)
	cases := []struct {
		name, msg string
		code      int64 // 0: a result
		want      string
	}{
		{"discover", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + testMeta + `}}`, 0, `"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]`},
		{"discover without _meta", `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, -32602, ""},
		{"no version", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`, -32602, ""},
		{"no capabilities", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, -32602, ""},
		{"capabilities not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}}`, -32602, ""},
		{"unknown version", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999","io.modelcontextprotocol/clientCapabilities":{}}}}`, -32022, ""},
		{"legacy version in _meta", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}}`, -32022, ""},
		{"list", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + testMeta + `}}`, 0, `"cacheScope":"private"`},
		{"call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1},` + testMeta + `}}`, 0, `"resultType":"complete"`},
		{"unknown tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope",` + testMeta + `}}`, -32602, ""},
		{"arguments not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":[1],` + testMeta + `}}`, -32602, ""},
		{"ping removed", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{` + testMeta + `}}`, -32601, ""},
		{"initialize removed", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{` + testMeta + `}}`, -32601, ""},
		{"listen without listChanged", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + testMeta + `}}`, -32601, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := decodeMsg(t, tc.msg)
			if !isStatelessRequest(m, "2026-07-28") || (strings.Contains(tc.msg, "protocolVersion") && !isStatelessRequest(m, "")) {
				t.Fatal("not taken for a stateless request")
			}
			res, err := s.handleStateless(t.Context(), m)
			var je *jsonrpc.Error
			switch {
			case tc.code != 0 && (!errors.As(err, &je) || je.Code != tc.code):
				t.Fatalf("got %v, want code %d", err, tc.code)
			case tc.code == 0 && err != nil:
				t.Fatal(err)
			case tc.code == 0:
				b, _ := json.Marshal(res)
				if !strings.Contains(string(b), tc.want) {
					t.Fatalf("%s lacks %s", b, tc.want)
				}
			}
		})
	}
}

func TestServerLegacy(t *testing.T) {
	s := newTestServer(t)
	c := &serverConn{}
	call := func(msg string) (any, error) { return s.handleLegacy(t.Context(), c, decodeMsg(t, msg)) }
	if _, err := call(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); err == nil {
		t.Fatal("tools/list before initialize")
	}
	if _, err := call(`{"jsonrpc":"2.0","id":1,"method":"ping"}`); err != nil {
		t.Fatal("ping before initialize:", err)
	}
	res, err := call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-10-07","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if err != nil || res.(map[string]any)["protocolVersion"] != "2025-11-25" {
		t.Fatalf("an unknown version gets the newest: %v %v", res, err)
	}
	if _, err := call(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`); err == nil {
		t.Fatal("re-initialized with another version")
	}
	c2 := &serverConn{}
	res, _ = s.handleLegacy(t.Context(), c2, decodeMsg(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`))
	if res.(map[string]any)["protocolVersion"] != "2025-06-18" {
		t.Fatalf("2025-06-18 not kept: %v", res)
	}
	res, err = call(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	b, _ := json.Marshal(res)
	if err != nil || strings.Count(string(b), `"agent_submit"`) != 1 || !strings.Contains(string(b), `"readOnlyHint":true`) {
		t.Fatalf("tools/list %s %v", b, err)
	}
	if _, err := call(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"x"}}`); err == nil {
		t.Fatal("a cursor was accepted")
	}
	for _, tc := range []struct {
		name       string
		args, want string
	}{
		{"a prompt is answered", `{"prompt":"hi"}`, `"text":"answer: hi"`},
		{"an empty prompt is a tool error", `{"prompt":""}`, `"isError":true`},
		{"the prompt is required", `{}`, `prompt is required`},
		{"the prompt must be a string", `{"prompt":1}`, `prompt must be a string`},
		{"an unexpected property", `{"prompt":"x","other":1}`, `unexpected property`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := call(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"agent_submit","arguments":` + tc.args + `}}`)
			b, _ := json.Marshal(res)
			if err != nil || !strings.Contains(string(b), tc.want) {
				t.Errorf("%s: %s %v", tc.args, b, err)
			}
		})
	}
	if _, err := call(`{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"loud"}}`); err == nil {
		t.Fatal("bad level accepted")
	}
	if _, err := call(`{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"debug"}}`); err != nil {
		t.Fatal(err)
	}
}

// TestServeStreamPipeline: requests written behind initialize and a
// closed stdin still get every answer; a cancelled submit ends.
func TestServeStreamPipeline(t *testing.T) {
	s := newTestServer(t)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"p"}}}`,
		`[1,2]`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := s.ServeStdio(t.Context(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"id":1,"result"`, `"id":2,"result"`, `answer: p`, `"id":null,"error":{"code":-32600`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %s:\n%s", want, out.String())
		}
	}
}

func TestServeStreamCancel(t *testing.T) {
	target := &fakeTarget{started: make(chan struct{}, 1)}
	s, err := NewServer(target, ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(t.Context(), inR, outW) }()
	lines := jsonrpc.NewReader(outR, jsonrpc.ReaderOptions{})
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`+"\n")
	if m, err := lines.Read(); err != nil || m.ID != jsonrpc.Int64ID(1) {
		t.Fatal(m, err)
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"block"}}}`+"\n")
	<-target.started // the call runs: a cancellation now finds it
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`+"\n")
	m, err := lines.Read()
	if err != nil || m.ID != jsonrpc.Int64ID(2) || !bytes.Contains(m.Result, []byte(`"isError":true`)) {
		t.Fatalf("cancelled call: %+v %v", m, err)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func post(h http.Handler, body string, hdr http.Header) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9/mcp", strings.NewReader(body))
	r.Host = "127.0.0.1:9"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestHTTPStatelessHeaders(t *testing.T) {
	h := newTestServer(t).HTTPHandler(HTTPServeOptions{})
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",` + testMeta + `}}`
	std := func(method, name string) http.Header {
		hd := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {method}}
		if name != "" {
			hd["Mcp-Name"] = []string{name}
		}
		return hd
	}
	cases := []struct {
		name   string
		body   string
		hdr    http.Header
		status int
		want   string
	}{
		{"good", call, std("tools/call", "echo"), 200, `"resultType":"complete"`},
		{"whitespace around the name", call, std("tools/call", "  echo \t"), 200, `"resultType"`},
		{"base64 name", call, std("tools/call", "=?base64?ZWNobw==?="), 200, `"resultType"`},
		{"bad base64", call, std("tools/call", "=?base64?ZWNobw?="), 400, `-32020`},
		{"wrong name", call, std("tools/call", "other"), 400, `-32020`},
		{"missing name", call, std("tools/call", ""), 400, `-32020`},
		{"wrong method", call, std("tools/list", "echo"), 400, `-32020`},
		{"method case", call, std("TOOLS/CALL", "echo"), 400, `-32020`},
		{"missing method", call, http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Name": {"echo"}}, 400, `-32020`},
		{"version header mismatch", call, http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}}, 400, `-32020`},
		{"missing _meta", `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, std("tools/list", ""), 400, `"id":7,"error":{"code":-32602`},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"x/y","params":{` + testMeta + `}}`, std("x/y", ""), 404, `-32601`},
		{"unsupported version", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v9","io.modelcontextprotocol/clientCapabilities":{}}}}`, http.Header{"Mcp-Protocol-Version": {"v9"}, "Mcp-Method": {"server/discover"}}, 400, `"requested":"v9"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hdr := tc.hdr.Clone()
			hdr.Set("Accept", "application/json")
			w := post(h, tc.body, hdr)
			if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.want) {
				t.Fatalf("%d %s, want %d %s", w.Code, w.Body, tc.status, tc.want)
			}
		})
	}
}

func TestHTTPChecksBeforeBody(t *testing.T) {
	auth, _ := NewBearerAuth(strings.Repeat("t", 43))
	h := newTestServer(t).HTTPHandler(HTTPServeOptions{
		Hosts: []string{"127.0.0.1:9", "localhost:9"}, Origins: []string{"http://127.0.0.1:9", "http://localhost:9"}, Auth: auth, MaxBody: 64,
	})
	good := http.Header{"Authorization": {"Bearer " + strings.Repeat("t", 43)}}
	cases := []struct {
		name   string
		host   string
		hdr    http.Header
		body   io.Reader
		status int
	}{
		{"no token", "127.0.0.1:9", nil, nil, 401},
		{"two Authorization headers", "127.0.0.1:9", http.Header{"Authorization": {"Bearer " + strings.Repeat("t", 43), "Bearer x"}}, nil, 401},
		{"lowercase scheme", "localhost:9", http.Header{"Authorization": {"bearer " + strings.Repeat("t", 43)}}, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), 400},
		{"Host", "evil:9", good, nil, 403},
		{"two Origins", "127.0.0.1:9", http.Header{"Authorization": good["Authorization"], "Origin": {"http://127.0.0.1:9", "http://evil"}}, nil, 403},
		{"null Origin", "127.0.0.1:9", http.Header{"Authorization": good["Authorization"], "Origin": {"null"}}, nil, 403},
		{"too large", "127.0.0.1:9", good, strings.NewReader(strings.Repeat(" ", 65)), 413},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body
			read := false
			if body == nil {
				body = readSpy{&read}
			}
			r := httptest.NewRequest(http.MethodPost, "http://x/mcp", body)
			r.Host = tc.host
			r.Header.Set("Content-Type", "application/json")
			for k, v := range tc.hdr {
				r.Header[k] = v
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.status || (tc.status != 400 && w.Body.Len() != 0) {
				t.Fatalf("%d %q, want %d", w.Code, w.Body, tc.status)
			}
			if read {
				t.Fatal("the body was read before the request was admitted")
			}
		})
	}
}

// readSpy records a read of the body.
type readSpy struct{ read *bool }

func (r readSpy) Read(p []byte) (int, error) { *r.read = true; return 0, io.EOF }

func TestHTTPSessionExpiry(t *testing.T) {
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	h := newTestServer(t).HTTPHandler(HTTPServeOptions{SessionIdle: time.Minute, MaxSessions: 2, Now: clock})
	start := func() string {
		w := post(h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, nil)
		sid := w.Header().Get("Mcp-Session-Id")
		if w.Code != 200 || len(sid) != 32 {
			t.Fatalf("initialize %d %q", w.Code, sid)
		}
		return sid
	}
	ping := func(sid string) int {
		return post(h, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, http.Header{"Mcp-Session-Id": {sid}}).Code
	}
	a := start()
	if ping(a) != 200 {
		t.Fatal("live session refused")
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	if ping(a) != 404 {
		t.Fatal("an idle session did not expire")
	}
	b, c := start(), start()
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	ping(c)
	start() // full: b, idle the longest, is ended
	if ping(b) != 404 || ping(c) != 200 || h.Sessions() != 2 {
		t.Fatalf("eviction: b %d c %d sessions %d", ping(b), ping(c), h.Sessions())
	}
}

func TestHTTPMisc(t *testing.T) {
	h := newTestServer(t).HTTPHandler(HTTPServeOptions{})
	if w := post(h, `{}`, http.Header{"Content-Type": {"text/plain"}}); w.Code != 415 {
		t.Fatalf("content type: %d", w.Code)
	}
	if w := post(h, `{}`, http.Header{"Accept": {"text/html"}}); w.Code != 406 {
		t.Fatalf("accept: %d", w.Code)
	}
	if w := post(h, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, http.Header{"Mcp-Protocol-Version": {"2026-07-28"}}); w.Code != 202 {
		t.Fatalf("stateless notification: %d", w.Code)
	}
	// A submit whose client goes away is cancelled.
	ctx, cancel := context.WithCancel(t.Context())
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://x/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"block"},`+testMeta+`}}`))
	r.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}, "Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"agent_submit"}}
	done := make(chan struct{})
	go func() { h.ServeHTTP(httptest.NewRecorder(), r); close(done) }()
	cancel()
	<-done
}

// ---- remote mode ----

type fakeVerifier struct{}

func (fakeVerifier) Verify(ctx context.Context, token string) (*jose.Claims, error) {
	switch token {
	case "good":
		return &jose.Claims{Subject: "alice"}, nil
	case "noscope":
		return nil, &jose.Error{Reason: jose.MissingScope}
	case "mallory":
		return nil, &jose.Error{Reason: jose.PrincipalNotAllowed}
	case "down":
		return nil, &jose.Error{Reason: jose.KeysUnavailable}
	}
	return nil, &jose.Error{Reason: jose.BadSignature}
}

func TestRemoteAuth(t *testing.T) {
	now := time.Unix(5000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	a, err := NewRemoteAuth(RemoteAuthOptions{PublicURL: "https://mcp.example/a/mcp", Issuer: "https://issuer.example", Scopes: []string{"s1", "s2"}, Subjects: []string{"alice"},
		TrustedProxies: []netip.Addr{netip.MustParseAddr("10.0.0.1")}, Verifier: fakeVerifier{}, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if a.Endpoint() != "/a/mcp" || a.MetadataPath() != "/.well-known/oauth-protected-resource/a/mcp" || a.Host() != "mcp.example" {
		t.Fatalf("%s %s %s", a.Endpoint(), a.MetadataPath(), a.Host())
	}
	meta := `resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/a/mcp"`
	cases := []struct {
		name   string
		auth   string
		status int
		chal   string
	}{
		{"no token", "", 401, "Bearer " + meta},
		{"an invalid token", "Bearer bad", 401, `Bearer error="invalid_token", ` + meta},
		{"another scheme", "Basic good", 401, `Bearer error="invalid_token", ` + meta},
		{"a token without the scopes", "Bearer noscope", 403, `Bearer error="insufficient_scope", scope="s1 s2", ` + meta},
		{"a subject not allowed", "Bearer mallory", 403, ""},
		{"the issuer's keys unavailable", "Bearer down", 503, ""},
		{"a good token is admitted", "Bearer good", 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "http://mcp.example/a/mcp", nil)
			r.RemoteAddr = "192.0.2.50:1234"
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			ref := a.Admit(r)
			switch {
			case tc.status == 0 && ref != nil:
				t.Errorf("%q refused %d", tc.auth, ref.Status)
			case tc.status != 0 && (ref == nil || ref.Status != tc.status || ref.Header.Get("Www-Authenticate") != tc.chal):
				t.Errorf("%q: %+v, want %d %q", tc.auth, ref, tc.status, tc.chal)
			}
		})
	}
	// 5 failures so far from 192.0.2.50 (503 is not one): 15 more, then 429.
	req := func(addr, xff, auth string) *Refusal {
		r := httptest.NewRequest(http.MethodPost, "http://mcp.example/a/mcp", nil)
		r.RemoteAddr = addr
		if xff != "" {
			r.Header.Set("X-Forwarded-For", xff)
		}
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		return a.Admit(r)
	}
	for i := 0; i < 15; i++ {
		req("192.0.2.50:1", "", "")
	}
	// Over the limit: failing requests get 429 in place of their 401 or
	// 403, and a request whose token verifies is still admitted
	// (docs/reference/mcp.md, "Failure throttle": the throttle never locks
	// out a valid client).
	for _, auth := range []string{"", "Bearer bad", "Bearer noscope", "Bearer mallory"} {
		ref := req("192.0.2.50:1", "", auth)
		if ref == nil || ref.Status != 429 || ref.Header.Get("Retry-After") != "60" || ref.Header.Get("Www-Authenticate") != "" {
			t.Fatalf("throttle %q: %+v", auth, ref)
		}
	}
	if ref := req("192.0.2.50:1", "", "Bearer good"); ref != nil {
		t.Fatalf("a valid token from a throttled address: %+v", ref)
	}
	if ref := req("192.0.2.50:1", "", "Bearer down"); ref == nil || ref.Status != 503 {
		t.Fatalf("the issuer's trouble is not the client's: %+v", ref)
	}
	// Through the trusted proxy the same client is found in X-Forwarded-For.
	if ref := req("10.0.0.1:9", "198.51.100.1, 192.0.2.50", "Bearer bad"); ref == nil || ref.Status != 429 {
		t.Fatalf("via proxy: %+v", ref)
	}
	if ref := req("10.0.0.1:9", "198.51.100.1, 192.0.2.50", "Bearer good"); ref != nil {
		t.Fatalf("via proxy, a valid token: %+v", ref)
	}
	// From an untrusted peer, X-Forwarded-For is ignored.
	if ref := req("192.0.2.51:9", "192.0.2.50", "Bearer bad"); ref == nil || ref.Status != 401 {
		t.Fatalf("untrusted XFF believed: %+v", ref)
	}
	mu.Lock()
	now = now.Add(61 * time.Second)
	mu.Unlock()
	if ref := req("192.0.2.50:1", "", "Bearer bad"); ref == nil || ref.Status != 401 {
		t.Fatalf("throttle did not end with the window: %+v", ref)
	}

	w := httptest.NewRecorder()
	a.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://mcp.example/.well-known/oauth-protected-resource/a/mcp", nil))
	if w.Code != 200 || w.Body.String() != `{"authorization_servers":["https://issuer.example"],"bearer_methods_supported":["header"],"resource":"https://mcp.example/a/mcp","scopes_supported":["s1","s2"]}` {
		t.Fatalf("metadata %d %s", w.Code, w.Body)
	}
	for _, bad := range []RemoteAuthOptions{
		{PublicURL: "https://x/mcp", Issuer: "https://i", Scopes: []string{"s"}},
		{PublicURL: "http://x/mcp", Issuer: "https://i", Scopes: []string{"s"}, Subjects: []string{"a"}},
		{PublicURL: "https://x/mcp?q", Issuer: "https://i", Scopes: []string{"s"}, Subjects: []string{"a"}},
		{PublicURL: "https://x/mcp", Issuer: "https://i", Scopes: []string{`s"`}, Subjects: []string{"a"}},
		{PublicURL: "https://x/mcp", Issuer: "http://i", Scopes: []string{"s"}, Subjects: []string{"a"}},
	} {
		if _, err := NewRemoteAuth(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestThrottleBounded(t *testing.T) {
	a, err := NewRemoteAuth(RemoteAuthOptions{PublicURL: "https://x/", Issuer: "https://i", Scopes: []string{"s"}, Subjects: []string{"a"}, Verifier: fakeVerifier{}, MaxAddresses: 8})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		a.failures.Fail(netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}))
	}
	if n := a.failures.Len(); n > 8 {
		t.Fatalf("%d addresses remembered", n)
	}
	if a.Endpoint() != "/" || a.MetadataPath() != "/.well-known/oauth-protected-resource" {
		t.Fatal(a.Endpoint(), a.MetadataPath())
	}
}

func FuzzServeHTTPRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"x"},` + testMeta + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":1}}}`,
		`[{}]`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`,
	} {
		f.Add(s, "tools/call", "=?base64?YQ==?=", "2026-07-28", false)
	}
	// In a session of 2025-03-26, which takes batches.
	f.Add(batchLine, "", "", "", true)
	f.Add(`[`+progressLine+`,7,[]]`, "", "", "2025-03-26", true)
	h := newTestServer(f).HTTPHandler(HTTPServeOptions{})
	sid := post(h, initializeLine(Version20250326), nil).Header().Get("Mcp-Session-Id")
	f.Fuzz(func(t *testing.T, body, method, name, version string, inSession bool) {
		hdr := http.Header{"Mcp-Method": {method}, "Mcp-Name": {name}, "Mcp-Protocol-Version": {version}, "Accept": {"application/json"}}
		if inSession {
			hdr.Set("Mcp-Session-Id", sid)
		}
		w := post(h, body, hdr)
		if w.Code == 200 && !json.Valid(w.Body.Bytes()) {
			t.Fatalf("invalid JSON answer %q", w.Body)
		}
	})
}

func FuzzServeStdio(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",` + testMeta + `}}`)
	f.Add("garbage\n[1]\n{\"jsonrpc\":\"2.0\",\"id\":null}")
	f.Add(initializeLine(Version20250326) + "\n" + batchLine + "\n[]\n[1,{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]")
	s := newTestServer(f)
	f.Fuzz(func(t *testing.T, in string) {
		var out bytes.Buffer
		if err := s.ServeStdio(t.Context(), strings.NewReader(in), &out); err != nil {
			t.Fatal(err)
		}
		for l := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
			if l != "" && !json.Valid([]byte(l)) {
				t.Fatalf("invalid frame %q", l)
			}
		}
	})
}

func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer  abc", "Basic x", "Bearer", "Bearer a b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r := httptest.NewRequest(http.MethodGet, "http://x/", nil)
		r.Header.Set("Authorization", v)
		tok, _ := bearerToken(r)
		if strings.ContainsAny(tok, " \t") {
			t.Fatalf("token with white space %q", tok)
		}
		decodeParamHeader(v)
	})
}
