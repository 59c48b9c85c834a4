package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agent/internal/fakemodel"
)

// eventIssuer is an authorization server on loopback TLS as far as the
// endpoint needs one: RFC 8414 metadata and a JWK Set with one ES256 key.
type eventIssuer struct {
	srv *httptest.Server
	key *ecdsa.PrivateKey
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func newEventIssuer(t *testing.T) *eventIssuer {
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
			pad := func(n *big.Int) string { b := make([]byte, 32); n.FillBytes(b); return b64(b) }
			json.NewEncoder(w).Encode(map[string]any{"keys": []any{map[string]any{
				"kty": "EC", "crv": "P-256", "kid": "k1", "use": "sig", "alg": "ES256",
				"x": pad(key.PublicKey.X), "y": pad(key.PublicKey.Y)}}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(iss.srv.Close)
	return iss
}

// token mints an ES256 access token for the grant.
func (iss *eventIssuer) token(t *testing.T, resource, sub, scope string) string {
	head, _ := json.Marshal(map[string]any{"alg": "ES256", "kid": "k1", "typ": "at+jwt"})
	now := time.Now()
	var jti [8]byte
	rand.Read(jti[:])
	claims, _ := json.Marshal(map[string]any{"iss": iss.srv.URL, "aud": resource, "sub": sub, "scope": scope,
		"jti": fmt.Sprintf("%x", jti), "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()})
	input := b64(head) + "." + b64(claims)
	sum := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, iss.key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + b64(sig)
}

func freePort(t *testing.T) int {
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

// TestE2EEventFlagRules: the flag rules of seed §4.4 and grant validation
// at start.
func TestE2EEventFlagRules(t *testing.T) {
	s, _ := printSandbox(t)
	good := s.write("g.json", `{"grantId": "ci", "issuer": "https://issuer.example", "resource": "https://e.example/events/ci", "subject": "bot", "scopes": ["s"]}`)
	bad := s.write("bad.json", `{"grantId": "ci", "issuer": "http://issuer.example", "resource": "https://e.example/events/ci", "subject": "bot", "scopes": ["s"], "secret": "hunter2"}`)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"session", "start", "--background", "--external-event-grant", good}, 2, "--external-event-port"},
		{[]string{"session", "start", "--background", "--external-event-port", "9999"}, 2, "need at least one --external-event-grant"},
		{[]string{"session", "start", "--background", "--external-event-grant", good, "--external-event-port", "0"}, 2, "port number"},
		{[]string{"session", "start", "--background", "--external-event-grant", good, "--external-event-port", "9999", "--external-event-trusted-proxy", "proxy.example"}, 2, "literal IP"},
		{[]string{"session", "start", "--background", "--external-event-grant", bad, "--external-event-port", "9999"}, 1, "bad.json"},
		{[]string{"session", "start", "--background", "--external-event-grant", filepath.Join(s.Work, "missing.json"), "--external-event-port", "9999"}, 1, "missing.json"},
		{[]string{"-p", "--external-event-grant", good, "hi"}, 2, "interactive session"},
	}
	for _, c := range cases {
		r := s.run("", c.args...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.want) || r.Stdout != "" {
			t.Errorf("%v: %+v", c.args, r)
		}
		if strings.Contains(r.Stderr, "hunter2") {
			t.Errorf("%v: a value leaked: %s", c.args, r.Stderr)
		}
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
