package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"agent/internal/fakemodel"
	"agent/internal/jose/josetest"
)

// eventIssuer is an authorization server on loopback TLS as far as the
// endpoint needs one: RFC 8414 metadata and a JWK Set with one ES256 key.
type eventIssuer struct {
	srv *httptest.Server
	key *ecdsa.PrivateKey
}

func newEventIssuer(t testing.TB) *eventIssuer {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	iss := &eventIssuer{key: key}
	iss.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			json.NewEncoder(w).Encode(map[string]any{"issuer": iss.srv.URL, "jwks_uri": iss.srv.URL + "/jwks"})
		case "/jwks":
			json.NewEncoder(w).Encode(map[string]any{"keys": []any{josetest.PublicJWK(key, "k1", "ES256")}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(iss.srv.Close)
	return iss
}

// token mints an ES256 access token for the grant's subject.
func (iss *eventIssuer) token(t testing.TB, resource, sub, scope string) string {
	return iss.mint(t, map[string]any{"aud": resource, "sub": sub, "scope": scope})
}

// clientToken mints a token of a client (client_id, no subject).
func (iss *eventIssuer) clientToken(t *testing.T, resource, client, scope string) string {
	return iss.mint(t, map[string]any{"aud": resource, "client_id": client, "scope": scope})
}

func (iss *eventIssuer) mint(t testing.TB, claims map[string]any) string {
	now := time.Now()
	var jti [8]byte
	rand.Read(jti[:])
	claims["iss"], claims["jti"], claims["iat"], claims["exp"] = iss.srv.URL, fmt.Sprintf("%x", jti), now.Unix(), now.Add(5*time.Minute).Unix()
	return josetest.Sign(iss.key, map[string]any{"alg": "ES256", "kid": "k1", "typ": "at+jwt"}, claims)
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestE2EBackgroundEvents: a background session started with a grant
// admits a signed event as a turn with no tools from external:<grantId>
// (the claimed name marked as a claim), refuses the same token again,
// lists the grant, and refuses events once the grant is revoked.
func TestE2EBackgroundEvents(t *testing.T) {
	s, srv := printSandbox(t, fakemodel.Reply{Text: "noted"})
	iss := newEventIssuer(t)
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: iss.srv.Certificate().Raw})
	s.Env = append(s.Env, "SSL_CERT_FILE="+s.write(filepath.Join(t.TempDir(), "ca.pem"), string(cert)))
	const resource = "https://events.example.com/hooks/events/ci"
	grant := s.write("grants/ci.json", `{"grantId": "ci", "issuer": "`+iss.srv.URL+`", "resource": "`+resource+`",
		"subject": "deploy-bot", "scopes": ["events:write"], "rate": [{"windowMs": 60000, "maxTurns": 5}]}`)
	port := freePort(t)
	id := bgStart(t, s, "--external-event-grant", grant, "--external-event-port", fmt.Sprint(port))

	post := func(tok, body string) (int, string) {
		req, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/hooks/events/ci", port), strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	body := `{"kind": "message", "conversationId": "c-1", "content": "the deploy finished", "claimedName": "Release Manager"}`
	tok := iss.token(t, resource, "deploy-bot", "events:write")
	code, answer := post(tok, body)
	var ok struct {
		TurnID string `json:"turnId"`
	}
	if code != 202 || json.Unmarshal([]byte(answer), &ok) != nil || !strings.HasPrefix(ok.TurnID, id+"/") {
		t.Fatalf("%d %q", code, answer)
	}
	if code, answer := post(tok, body); code != 401 || answer != "" {
		t.Fatalf("replayed token: %d %q", code, answer)
	}
	if code, _ := post(iss.token(t, resource, "someone-else", "events:write"), body); code != 401 {
		t.Fatalf("another principal: %d", code)
	}
	if code, _ := post(iss.token(t, resource, "deploy-bot", "events:read"), body); code != 403 {
		t.Fatalf("missing scope: %d", code)
	}
	select {
	case <-srv.Started():
	case <-time.After(30 * time.Second):
		t.Fatal("the event's turn never reached the model")
	}
	req := string(srv.Requests()[0])
	if strings.Contains(req, `"tools"`) || !strings.Contains(req, "external:ci") ||
		!strings.Contains(req, `claimed name \"Release Manager\" (unverified)`) || !strings.Contains(req, "the deploy finished") {
		t.Fatalf("the event turn's request: %s", req)
	}

	r := s.run("", "session", "events", "list", id)
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "ci  live  subject deploy-bot") || !strings.Contains(r.Stdout, "admitted 1") {
		t.Fatalf("%+v", r)
	}
	if r := s.run("", "session", "events", "revoke", id, "nope"); r.Code != 1 || !strings.Contains(r.Stderr, "no such grant") {
		t.Fatalf("%+v", r)
	}
	if r := s.run("", "session", "events", "revoke", id, "ci"); r.Code != 0 || !strings.Contains(r.Stdout, "Revoked grant ci") {
		t.Fatalf("%+v", r)
	}
	if code, _ := post(iss.token(t, resource, "deploy-bot", "events:write"), body); code != 403 {
		t.Fatalf("revoked grant: %d", code)
	}
	if r := s.run("", "session", "events", "list", id); !strings.HasPrefix(r.Stdout, "ci  revoked") {
		t.Fatalf("%+v", r)
	}
	// The audit log has the admission, and no token or content.
	data, _ := filepath.Glob(filepath.Join(s.Home, ".agent", "sessions", id+".events.log"))
	if len(data) != 1 {
		t.Fatal("no audit log")
	}
	log := s.read(data[0])
	if !strings.Contains(log, `"grant":"ci"`) || strings.Contains(log, tok[:20]) || strings.Contains(log, "deploy finished") || strings.Contains(log, "Release Manager") {
		t.Fatalf("audit log: %s", log)
	}
}

// TestE2EEventFlagRules: the flag rules of docs/reference/cli.md, "Event
// flags", and grant validation at start.
func TestE2EEventFlagRules(t *testing.T) {
	s, _ := printSandbox(t)
	good := s.write("g.json", `{"grantId": "ci", "issuer": "https://issuer.example", "resource": "https://e.example/events/ci", "subject": "bot", "scopes": ["s"]}`)
	bad := s.write("bad.json", `{"grantId": "ci", "issuer": "http://issuer.example", "resource": "https://e.example/events/ci", "subject": "bot", "scopes": ["s"], "secret": "hunter2"}`)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"a grant without a port", []string{"session", "start", "--background", "--external-event-grant", good}, 2, "--external-event-port"},
		{"a port without a grant", []string{"session", "start", "--background", "--external-event-port", "9999"}, 2, "need at least one --external-event-grant"},
		{"port 0 is not a port number", []string{"session", "start", "--background", "--external-event-grant", good, "--external-event-port", "0"}, 2, "port number"},
		{"a trusted proxy that is not a literal IP", []string{"session", "start", "--background", "--external-event-grant", good, "--external-event-port", "9999", "--external-event-trusted-proxy", "proxy.example"}, 2, "literal IP"},
		{"an invalid grant file is named and its values kept out", []string{"session", "start", "--background", "--external-event-grant", bad, "--external-event-port", "9999"}, 1, "bad.json"},
		{"a missing grant file", []string{"session", "start", "--background", "--external-event-grant", filepath.Join(s.Work, "missing.json"), "--external-event-port", "9999"}, 1, "missing.json"},
		{"print mode takes no grants", []string{"-p", "--external-event-grant", good, "hi"}, 2, "interactive session"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.run("", c.args...)
			if r.Code != c.code || !strings.Contains(r.Stderr, c.want) || r.Stdout != "" {
				t.Errorf("%v: %+v", c.args, r)
			}
			if strings.Contains(r.Stderr, "hunter2") {
				t.Errorf("%v: a value leaked: %s", c.args, r.Stderr)
			}
		})
	}
	if r := s.run("", "session", "start", "--background", "--external-event-grant", bad, "--external-event-port", "9999"); !strings.Contains(r.Stderr, "$.issuer") {
		t.Errorf("the field is not named: %s", r.Stderr)
	}
	if r := s.run("", "session", "events", "list", "nope"); r.Code != 1 || !strings.Contains(r.Stderr, "no such background session") {
		t.Errorf("%+v", r)
	}
}

// TestE2EInteractiveEvents: the interactive session (its plain fallback
// here) takes the grant flags and answers /events and /events revoke.
func TestE2EInteractiveEvents(t *testing.T) {
	s, _ := printSandbox(t)
	grant := s.write("g.json", `{"grantId": "ci", "issuer": "https://issuer.example", "resource": "https://e.example/events/ci", "subject": "bot", "scopes": ["s"]}`)
	port := freePort(t)
	r := s.run("/events\n/events revoke nope\n/events revoke ci\n/events\n/exit\n", "--external-event-grant", grant, "--external-event-port", fmt.Sprint(port))
	if r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	if !strings.Contains(r.Stdout, "ci  live  subject bot") || !strings.Contains(r.Stdout, "Revoked grant ci") || !strings.Contains(r.Stdout, "ci  revoked") {
		t.Fatalf("%+v", r)
	}
	if !strings.Contains(r.Stderr+r.Stdout, "no such grant") {
		t.Fatalf("%+v", r)
	}
	// Without grants, /events says so.
	r = s.run("/events\n/exit\n")
	if r.Code != 0 || !strings.Contains(r.Stdout, "admits no external events") {
		t.Fatalf("%+v", r)
	}
}

// TestE2EEventStatuses drives every status of docs/reference/events.md,
// "Order of checks", through the binary, with the trusted proxy, the
// throttle, the replay race, and a revoked grant answering a request
// without a valid token exactly as a live one does.
func TestE2EEventStatuses(t *testing.T) {
	s, srv := printSandbox(t, fakemodel.Reply{Text: "busy", Hang: true})
	iss := newEventIssuer(t)
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: iss.srv.Certificate().Raw})
	s.Env = append(s.Env, "SSL_CERT_FILE="+s.write(filepath.Join(t.TempDir(), "ca.pem"), string(cert)))
	const limited, bulk, other = "https://e.example/events/limited", "https://e.example/events/bulk", "https://e.example/events/other"
	g1 := s.write("limited.json", `{"grantId": "limited", "issuer": "`+iss.srv.URL+`", "resource": "`+limited+`", "client": "ci", "scopes": ["events"], "rate": [{"windowMs": 600000, "maxTurns": 1}]}`)
	g2 := s.write("bulk.json", `{"grantId": "bulk", "issuer": "`+iss.srv.URL+`", "resource": "`+bulk+`", "subject": "bot", "scopes": ["events"]}`)
	g3 := s.write("other.json", `{"grantId": "other", "issuer": "`+iss.srv.URL+`", "resource": "`+other+`", "subject": "bot", "scopes": ["events"]}`)
	port := freePort(t)
	id := bgStart(t, s, "--external-event-grant", g1, "--external-event-grant", g2, "--external-event-grant", g3,
		"--external-event-port", fmt.Sprint(port), "--external-event-trusted-proxy", "127.0.0.1")

	var n atomic.Int64
	type answer struct {
		code int
		hdr  http.Header
		body string
	}
	// post sends through the "proxy" (this test, at 127.0.0.1) on behalf
	// of a distinct client address each time, unless from is set.
	post := func(method, path, tok, body, from string) answer {
		k := n.Add(1)
		if from == "" {
			from = fmt.Sprintf("198.51.%d.%d", 100+k/250, k%250)
		}
		req, _ := http.NewRequest(method, fmt.Sprintf("http://127.0.0.1:%d%s", port, path), strings.NewReader(body))
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		req.Header.Set("X-Forwarded-For", from)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return answer{resp.StatusCode, resp.Header, string(b)}
	}
	ev := `{"kind": "message", "conversationId": "c", "content": "hello"}`
	bulkTok := func() string { return iss.token(t, bulk, "bot", "events") }

	cases := []struct {
		name   string
		method string
		path   string
		tok    string
		body   string
		code   int
	}{
		{"unknown grant", "POST", "/events/nope", bulkTok(), ev, 404},
		{"not POST", "GET", "/events/bulk", bulkTok(), "", 405},
		{"over 16 KiB", "POST", "/events/bulk", bulkTok(), `{"kind": "message", "conversationId": "c", "content": "` + strings.Repeat("x", 17<<10) + `"}`, 413},
		{"no token", "POST", "/events/bulk", "", ev, 401},
		{"another grant's token", "POST", "/events/bulk", iss.token(t, other, "bot", "events"), ev, 401},
		{"malformed event", "POST", "/events/bulk", bulkTok(), `{"kind": "message", "content": "no conversation"}`, 400},
		{"unknown field", "POST", "/events/bulk", bulkTok(), `{"kind": "message", "conversationId": "c", "content": "x", "extra": 1}`, 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := post(c.method, c.path, c.tok, c.body, ""); got.code != c.code || got.body != "" {
				t.Errorf("%d %q, want %d with an empty body", got.code, got.body, c.code)
			}
		})
	}

	// The race: eight copies of one token, exactly one admitted.
	tok := bulkTok()
	codes := make(chan int, 8)
	for i := 0; i < 8; i++ {
		go func() { codes <- post("POST", "/events/bulk", tok, ev, "").code }()
	}
	admitted := 0
	for i := 0; i < 8; i++ {
		switch c := <-codes; c {
		case 202:
			admitted++
		case 401:
		default:
			t.Errorf("a copy got %d", c)
		}
	}
	if admitted != 1 {
		t.Fatalf("%d copies admitted", admitted)
	}
	select {
	case <-srv.Started():
	case <-time.After(30 * time.Second):
		t.Fatal("the first event's turn never started")
	}

	// Rate windows: the limited grant admits one turn per window.
	clientTok := func() string { return iss.clientToken(t, limited, "ci", "events") }
	if got := post("POST", "/events/limited", clientTok(), ev, ""); got.code != 202 {
		t.Fatalf("first limited event: %d", got.code)
	}
	if got := post("POST", "/events/limited", clientTok(), ev, ""); got.code != 429 || got.body != "" {
		t.Fatalf("second limited event: %d %q", got.code, got.body)
	}

	// 503: the session's queue (32) is full while the first turn hangs.
	// One bulk turn runs and one limited turn waits already.
	for i := 0; i < 31; i++ {
		if got := post("POST", "/events/bulk", bulkTok(), ev, ""); got.code != 202 {
			t.Fatalf("queued event %d: %d", i, got.code)
		}
	}
	if got := post("POST", "/events/bulk", bulkTok(), ev, ""); got.code != 503 || got.body != "" {
		t.Fatalf("full queue: %d %q", got.code, got.body)
	}

	// Revoked: without a valid token, exactly like a live grant.
	live := post("POST", "/events/other", "", ev, "")
	if r := s.run("", "session", "events", "revoke", id, "other"); r.Code != 0 {
		t.Fatal(r)
	}
	revoked := post("POST", "/events/other", "", ev, "")
	live.hdr.Del("Date")
	revoked.hdr.Del("Date")
	if live.code != revoked.code || live.body != revoked.body || fmt.Sprint(live.hdr) != fmt.Sprint(revoked.hdr) {
		t.Fatalf("a revoked grant answers differently:\n%+v\n%+v", live, revoked)
	}
	if got := post("POST", "/events/other", iss.token(t, other, "bot", "events"), ev, ""); got.code != 403 {
		t.Fatalf("a valid token for a revoked grant: %d", got.code)
	}

	// The throttle: more than 20 refusals from one address in 60 s, then
	// 429 in place of its failures; another address is unaffected; a
	// token that verifies is judged on its own (here 503: the queue is
	// full; 403: the grant is revoked), never refused by the throttle.
	var last int
	for i := 0; i < 22; i++ {
		last = post("POST", "/events/bulk", "", ev, "203.0.113.7").code
	}
	if last != 429 {
		t.Fatalf("after 22 failures from one address: %d", last)
	}
	if got := post("POST", "/events/nope", bulkTok(), ev, "203.0.113.7"); got.code != 429 {
		t.Fatalf("an unknown grant from a throttled address: %d", got.code)
	}
	if got := post("POST", "/events/bulk", bulkTok(), ev, "203.0.113.7"); got.code != 503 {
		t.Fatalf("a valid token from a throttled address: %d", got.code)
	}
	if got := post("POST", "/events/other", iss.token(t, other, "bot", "events"), ev, "203.0.113.7"); got.code != 403 {
		t.Fatalf("a valid token for a revoked grant from a throttled address: %d", got.code)
	}
	if got := post("POST", "/events/bulk", "", ev, "203.0.113.8"); got.code != 401 {
		t.Fatalf("another address: %d", got.code)
	}
}

// TestE2EResumeKeepsTheEventEndpoint: /resume in the terminal UI switches
// the session, not the grants: a revoked grant stays revoked and a spent
// token stays spent.
func TestE2EResumeKeepsTheEventEndpoint(t *testing.T) {
	s, _ := printSandbox(t, fakemodel.Reply{Text: "earlier"}, fakemodel.Reply{Text: "event seen"})
	if r := s.run("", "-p", "an earlier session"); r.Code != 0 {
		t.Fatalf("print: %+v", r)
	}
	iss := newEventIssuer(t)
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: iss.srv.Certificate().Raw})
	s.Env = append(s.Env, "SSL_CERT_FILE="+s.write(filepath.Join(t.TempDir(), "ca.pem"), string(cert)))
	const ra, rb = "https://e.example/events/a", "https://e.example/events/b"
	ga := s.write("a.json", `{"grantId": "a", "issuer": "`+iss.srv.URL+`", "resource": "`+ra+`", "subject": "bot", "scopes": ["events"]}`)
	gb := s.write("b.json", `{"grantId": "b", "issuer": "`+iss.srv.URL+`", "resource": "`+rb+`", "subject": "bot", "scopes": ["events"]}`)
	port := freePort(t)
	m, out, done := startTUI(t, s, "--external-event-grant", ga, "--external-event-grant", gb, "--external-event-port", fmt.Sprint(port))
	out.waitFor(t, "Type a prompt")
	post := func(path, tok string) int {
		req, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d%s", port, path), strings.NewReader(`{"kind": "message", "conversationId": "c", "content": "hello"}`))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	spent := iss.token(t, rb, "bot", "events")
	if code := post("/events/b", spent); code != 202 {
		t.Fatalf("the first event: %d", code)
	}
	out.waitFor(t, "seen") // the answer streams: its words may come in separate frames
	out.waitFor(t, "[external:b]")
	m.Write([]byte("/events revoke a\r"))
	out.waitFor(t, "Revoked grant a")
	m.Write([]byte("/resume\r"))
	out.waitFor(t, "an earlier session") // the list is fetched after the picker opens
	m.Write([]byte("\r"))
	out.waitFor(t, "Resumed the session")
	if code := post("/events/a", iss.token(t, ra, "bot", "events")); code != 403 {
		t.Errorf("a revoked grant after /resume: %d, want 403", code)
	}
	if code := post("/events/b", spent); code != 401 {
		t.Errorf("a spent token after /resume: %d, want 401", code)
	}
	ctrlCTwice(t, m, out, done)
}
