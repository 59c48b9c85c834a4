package events

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agent/internal/jose"
	"agent/internal/jose/josetest"
)

// Test keys: fixed EC and Ed25519 keys, so corpora and tokens mean the same
// from one run to the next, and one RSA key made per test binary.
var testKeys = sync.OnceValue(func() (k struct {
	ec  *ecdsa.PrivateKey
	ed  ed25519.PrivateKey
	rsa *rsa.PrivateKey
}) {
	d := sha256.Sum256([]byte("events test ES256 key"))
	var err error
	if k.ec, err = ecdsa.ParseRawPrivateKey(elliptic.P256(), d[:]); err != nil {
		panic(err)
	}
	seed := sha256.Sum256([]byte("events test EdDSA key"))
	k.ed = ed25519.NewKeyFromSeed(seed[:])
	if k.rsa, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		panic(err)
	}
	return k
})

// signer mints tokens.
type signer struct {
	alg  jose.Algorithm
	kid  string
	priv crypto.Signer
}

func esSigner() signer { return signer{jose.ES256, "es", testKeys().ec} }
func edSigner() signer { return signer{jose.EdDSA, "ed", testKeys().ed} }
func rsSigner() signer { return signer{jose.RS256, "rs", testKeys().rsa} }

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// sign signs claims under the usual header (alg, typ at+jwt, kid), changed
// by header: a nil value deletes a member.
func (s signer) sign(header, claims map[string]any) string {
	h := map[string]any{"alg": string(s.alg), "typ": "at+jwt", "kid": s.kid}
	for k, v := range header {
		if v == nil {
			delete(h, k)
		} else {
			h[k] = v
		}
	}
	input := b64(mustJSON(h)) + "." + b64(mustJSON(claims))
	return input + "." + b64(s.signature(input))
}

func (s signer) signature(input string) []byte { return josetest.Signature(s.priv, input) }

// jwk is the public JWK of s.
func (s signer) jwk() map[string]any { return josetest.PublicJWK(s.priv, s.kid, string(s.alg)) }

func (s signer) key(t testing.TB) *jose.Key {
	t.Helper()
	k, err := jose.NewKey(s.priv.Public(), s.kid)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func allKeys(t testing.TB) *jose.KeySet {
	return jose.NewKeySet(esSigner().key(t), edSigner().key(t), rsSigner().key(t))
}

// The grant most tests use.
const (
	testIssuer   = "https://issuer.example/tenant"
	testResource = "https://agent.example/hooks/events/ci"
	testPath     = "/hooks/events/ci"
	testSubject  = "ci-bot"
	testScope    = "events:write"
)

var testNow = time.Unix(1_750_000_000, 0)

func testGrant() Grant {
	return Grant{
		ID:         "ci",
		Issuer:     testIssuer,
		Resource:   testResource,
		Subject:    testSubject,
		Scopes:     []string{testScope},
		Algorithms: jose.Algorithms(),
	}
}

var jtiSeq atomic.Int64

// claims returns a claims set the test grant admits, with a fresh jti,
// changed by changes (a nil value deletes a claim).
func claims(now time.Time, changes map[string]any) map[string]any {
	c := map[string]any{
		"iss":   testIssuer,
		"sub":   testSubject,
		"aud":   testResource,
		"exp":   now.Unix() + 300,
		"iat":   now.Unix() - 5,
		"jti":   fmt.Sprintf("jti-%d", jtiSeq.Add(1)),
		"scope": testScope + " other",
	}
	for k, v := range changes {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

const goodBody = `{"kind":"message","conversationId":"conv-1","content":"build 42 failed","claimedName":"CI"}`

// recorder is a Target that keeps what it was given.
type recorder struct {
	mu     sync.Mutex
	events []Event
	err    error // returned instead of taking the turn, when set
}

func (r *recorder) SubmitExternal(_ context.Context, ev Event) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return "", r.err
	}
	r.events = append(r.events, ev)
	return fmt.Sprintf("s1/%d", len(r.events)), nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

func (r *recorder) setErr(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.err = err
}

// auditTrail collects audit records.
type auditTrail struct {
	mu   sync.Mutex
	recs []Record
}

func (a *auditTrail) Audit(r Record) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, r)
}

func (a *auditTrail) all() []Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Record(nil), a.recs...)
}

// env is a server on a static key set with a fixed clock, driven in memory.
type env struct {
	t      testing.TB
	srv    *Server
	target *recorder
	audit  *auditTrail
	now    func() time.Time
}

// newEnv builds a Server for grants (default: the test grant) on the test
// keys. change may adjust the options.
func newEnv(t testing.TB, change func(*Options), grants ...Grant) *env {
	t.Helper()
	if len(grants) == 0 {
		grants = []Grant{testGrant()}
	}
	e := &env{t: t, target: &recorder{}, audit: &auditTrail{}}
	keys := allKeys(t)
	opts := Options{
		Grants: grants,
		Target: e.target,
		Audit:  e.audit,
		Keys:   func(string) (jose.KeySource, error) { return keys, nil },
		Now:    func() time.Time { return testNow },
	}
	if change != nil {
		change(&opts)
	}
	e.now = opts.Now
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	return e
}

// req describes one request.
type req struct {
	method string // "" is POST
	path   string // "" is testPath
	token  string // "" sends no Authorization header
	auth   string // a whole Authorization value, instead of token
	body   string
	remote string // "" is 203.0.113.7:5555
	xff    []string
}

func (e *env) do(q req) *httptest.ResponseRecorder {
	e.t.Helper()
	if q.method == "" {
		q.method = http.MethodPost
	}
	if q.path == "" {
		q.path = testPath
	}
	r := httptest.NewRequest(q.method, "http://127.0.0.1:9999"+q.path, strings.NewReader(q.body))
	if q.remote == "" {
		q.remote = "203.0.113.7:5555"
	}
	r.RemoteAddr = q.remote
	switch {
	case q.auth != "":
		r.Header.Set("Authorization", q.auth)
	case q.token != "":
		r.Header.Set("Authorization", "Bearer "+q.token)
	}
	for _, v := range q.xff {
		r.Header.Add("X-Forwarded-For", v)
	}
	w := httptest.NewRecorder()
	e.srv.ServeHTTP(w, r)
	return w
}

// token mints a good ES256 token for the test grant at the env's time,
// changed by changes.
func (e *env) token(changes map[string]any) string {
	return esSigner().sign(nil, claims(e.now(), changes))
}

// wantStatus checks a refusal: the status and an empty body.
func wantStatus(t testing.TB, w *httptest.ResponseRecorder, status int) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d (headers %v)", w.Code, status, w.Header())
	}
	if status != http.StatusAccepted && w.Body.Len() != 0 {
		t.Fatalf("status %d with a body %q; refusals have empty bodies", w.Code, w.Body.String())
	}
}

// turnID decodes a 202 body.
func turnID(t testing.TB, w *httptest.ResponseRecorder) string {
	t.Helper()
	wantStatus(t, w, http.StatusAccepted)
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(w.Body.Bytes()))
	if err := dec.Decode(&out); err != nil || len(out) != 1 {
		t.Fatalf("body %q: want exactly {\"turnId\": ...}", w.Body.String())
	}
	id, _ := out["turnId"].(string)
	if id == "" {
		t.Fatalf("body %q: no turnId", w.Body.String())
	}
	return id
}

// issuer is an authorization server on loopback TLS as far as discovery
// goes: RFC 8414 metadata and a JWK Set of the three test keys.
type issuer struct {
	url    string
	client *http.Client
	fail   atomic.Bool // answer 500 to everything
	hits   atomic.Int64
	jwks   atomic.Value // []byte
}

func newIssuer(t testing.TB) *issuer {
	iss := &issuer{}
	iss.jwks.Store(mustJSON(map[string]any{"keys": []any{esSigner().jwk(), edSigner().jwk(), rsSigner().jwk()}}))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		iss.hits.Add(1)
		if iss.fail.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			w.Header().Set("Content-Type", "application/json")
			w.Write(mustJSON(map[string]any{"issuer": iss.url, "jwks_uri": iss.url + "/jwks"}))
		case "/jwks":
			w.Header().Set("Content-Type", "application/json")
			w.Write(iss.jwks.Load().([]byte))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	iss.url, iss.client = srv.URL, srv.Client()
	return iss
}
