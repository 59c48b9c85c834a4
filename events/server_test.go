package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"agent/internal/jose"
)

// TestStatuses: every status and the order of docs/reference/events.md,
// "Order of checks", where a request breaks two rules at once.
func TestStatuses(t *testing.T) {
	big := `{"kind":"message","conversationId":"c","content":"` + strings.Repeat("x", MaxBodyBytes) + `"}`
	cases := []struct {
		name   string
		setup  func(e *env)
		q      func(e *env) req
		status int
		reason string // the audit record's reason
	}{
		{"admitted", nil, func(e *env) req { return req{token: e.token(nil), body: goodBody} }, 202, ""},
		{"admitted EdDSA", nil, func(e *env) req { return req{token: edSigner().sign(nil, claims(e.now(), nil)), body: goodBody} }, 202, ""},
		{"admitted RS256", nil, func(e *env) req { return req{token: rsSigner().sign(nil, claims(e.now(), nil)), body: goodBody} }, 202, ""},
		{"admitted, lower-case scheme", nil, func(e *env) req { return req{auth: "bearer " + e.token(nil), body: goodBody} }, 202, ""},
		{"admitted, aud array and scp", nil, func(e *env) req {
			return req{token: e.token(map[string]any{"aud": []string{"https://x.example", testResource}, "scope": nil, "scp": []string{testScope}}), body: goodBody}
		}, 202, ""},

		{"413 body over 16 KiB", nil, func(e *env) req { return req{token: e.token(nil), body: big} }, 413, reasonOversize},
		{"413 before 404", nil, func(e *env) req { return req{path: "/nowhere", body: big} }, 413, reasonOversize},
		{"404 unknown grant", nil, func(e *env) req { return req{path: "/hooks/events/other", token: e.token(nil), body: goodBody} }, 404, reasonUnknown},
		{"404 trailing slash", nil, func(e *env) req { return req{path: testPath + "/", token: e.token(nil), body: goodBody} }, 404, reasonUnknown},
		{"404 before 405", nil, func(e *env) req { return req{method: "GET", path: "/x"} }, 404, reasonUnknown},
		{"405 GET", nil, func(e *env) req { return req{method: "GET", token: e.token(nil)} }, 405, reasonMethod},
		{"405 PUT", nil, func(e *env) req { return req{method: "PUT", token: e.token(nil), body: goodBody} }, 405, reasonMethod},

		{"401 no token", nil, func(e *env) req { return req{body: goodBody} }, 401, reasonNoToken},
		{"401 Basic", nil, func(e *env) req { return req{auth: "Basic YTpi", body: goodBody} }, 401, "token: malformed"},
		{"401 Bearer without token", nil, func(e *env) req { return req{auth: "Bearer ", body: goodBody} }, 401, "token: malformed"},
		{"401 token with a space", nil, func(e *env) req { return req{auth: "Bearer a b", body: goodBody} }, 401, "token: malformed"},
		{"401 garbage token", nil, func(e *env) req { return req{token: "abc", body: goodBody} }, 401, "token: malformed"},
		{"401 bad signature", nil, func(e *env) req {
			tok := e.token(nil)
			return req{token: tok[:len(tok)-4] + "AAAA", body: goodBody}
		}, 401, "token: bad signature"},
		{"401 expired", nil, func(e *env) req {
			return req{token: e.token(map[string]any{"exp": e.now().Unix() - 120}), body: goodBody}
		}, 401, "token: expired"},
		{"401 not yet valid", nil, func(e *env) req {
			return req{token: e.token(map[string]any{"nbf": e.now().Unix() + 120}), body: goodBody}
		}, 401, "token: not yet valid"},
		{"401 wrong issuer", nil, func(e *env) req { return req{token: e.token(map[string]any{"iss": testIssuer + "/x"}), body: goodBody} }, 401, "token: wrong issuer"},
		{"401 audience is another grant's", nil, func(e *env) req {
			return req{token: e.token(map[string]any{"aud": "https://agent.example/hooks/events/other"}), body: goodBody}
		}, 401, "token: wrong audience"},
		{"401 wrong subject", nil, func(e *env) req { return req{token: e.token(map[string]any{"sub": "mallory"}), body: goodBody} }, 401, "token: principal not allowed"},
		{"401 client_id is not the subject", nil, func(e *env) req {
			return req{token: e.token(map[string]any{"sub": nil, "client_id": testSubject}), body: goodBody}
		}, 401, "token: principal not allowed"},
		{"401 no jti", nil, func(e *env) req { return req{token: e.token(map[string]any{"jti": nil}), body: goodBody} }, 401, "token: malformed"},
		{"401 no exp", nil, func(e *env) req { return req{token: e.token(map[string]any{"exp": nil}), body: goodBody} }, 401, "token: malformed"},
		{"401 typ JWT", nil, func(e *env) req {
			return req{token: esSigner().sign(map[string]any{"typ": "JWT"}, claims(e.now(), nil)), body: goodBody}
		}, 401, "token: wrong type"},
		{"401 unknown kid", nil, func(e *env) req {
			return req{token: esSigner().sign(map[string]any{"kid": "nope"}, claims(e.now(), nil)), body: goodBody}
		}, 401, "token: unknown key"},
		{"401 over 8 KiB", nil, func(e *env) req {
			return req{token: e.token(map[string]any{"pad": strings.Repeat("x", 9000)}), body: goodBody}
		}, 401, "token: oversize"},
		{"401 before 403 and 400", nil, func(e *env) req {
			return req{token: e.token(map[string]any{"sub": "mallory", "scope": "x"}), body: "{"}
		}, 401, "token: principal not allowed"},
		{"401 two Authorization headers", nil, func(e *env) req { return req{token: e.token(nil), body: goodBody} }, 401, "token: malformed"},

		{"403 missing scope", nil, func(e *env) req { return req{token: e.token(map[string]any{"scope": "other"}), body: goodBody} }, 403, "token: missing scope"},
		{"403 scope before revoked and 400", func(e *env) { e.srv.Revoke("ci") }, func(e *env) req {
			return req{token: e.token(map[string]any{"scope": "other"}), body: "{"}
		}, 403, "token: missing scope"},
		{"403 revoked", func(e *env) { e.srv.Revoke("ci") }, func(e *env) req { return req{token: e.token(nil), body: goodBody} }, 403, reasonRevoked},
		{"403 revoked before 400", func(e *env) { e.srv.Revoke("ci") }, func(e *env) req { return req{token: e.token(nil), body: "{"} }, 403, reasonRevoked},
		{"401 revoked without a valid token", func(e *env) { e.srv.Revoke("ci") }, func(e *env) req { return req{body: goodBody} }, 401, reasonNoToken},

		{"400 malformed", nil, func(e *env) req { return req{token: e.token(nil), body: `{"kind":"message"}`} }, 400, reasonMalformed},
		{"400 empty body", nil, func(e *env) req { return req{token: e.token(nil)} }, 400, reasonMalformed},
		{"400 before replay", func(e *env) {
			e.do(req{token: e.token(map[string]any{"jti": "once"}), body: goodBody})
		}, func(e *env) req { return req{token: e.token(map[string]any{"jti": "once"}), body: "{"} }, 400, reasonMalformed},
		{"401 replay", func(e *env) {
			e.do(req{token: e.token(map[string]any{"jti": "once"}), body: goodBody})
		}, func(e *env) req { return req{token: e.token(map[string]any{"jti": "once"}), body: goodBody} }, 401, reasonReplay},
		{"401 replay before 429", func(e *env) {
			e.srv.byID["ci"].win = newWindow([]Rate{{time.Minute, 1}})
			e.do(req{token: e.token(map[string]any{"jti": "once"}), body: goodBody})
		}, func(e *env) req { return req{token: e.token(map[string]any{"jti": "once"}), body: goodBody} }, 401, reasonReplay},

		{"429 rate window", func(e *env) {
			e.srv.byID["ci"].win = newWindow([]Rate{{time.Minute, 1}})
			e.do(req{token: e.token(nil), body: goodBody})
		}, func(e *env) req { return req{token: e.token(nil), body: goodBody} }, 429, reasonRate},
		{"429 before 503", func(e *env) {
			e.srv.byID["ci"].win = newWindow([]Rate{{time.Minute, 1}})
			e.do(req{token: e.token(nil), body: goodBody})
			e.target.setErr(ErrCannotTake)
		}, func(e *env) req { return req{token: e.token(nil), body: goodBody} }, 429, reasonRate},

		{"503 session cannot take it", func(e *env) { e.target.setErr(fmt.Errorf("queue full: %w", ErrCannotTake)) },
			func(e *env) req { return req{token: e.token(nil), body: goodBody} }, 503, reasonSession},
		{"503 endpoint closed", func(e *env) { e.srv.Close() },
			func(e *env) req { return req{token: e.token(nil), body: goodBody} }, 503, reasonClosed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			if tc.setup != nil {
				tc.setup(e)
			}
			q := tc.q(e)
			var w *httptest.ResponseRecorder
			if strings.Contains(tc.name, "two Authorization headers") {
				r := httptest.NewRequest("POST", testPath, strings.NewReader(q.body))
				r.Header.Add("Authorization", "Bearer "+q.token)
				r.Header.Add("Authorization", "Bearer "+q.token)
				w = httptest.NewRecorder()
				e.srv.ServeHTTP(w, r)
			} else {
				w = e.do(q)
			}
			wantStatus(t, w, tc.status)
			recs := e.audit.all()
			last := recs[len(recs)-1]
			if last.Status != tc.status || last.Reason != tc.reason {
				t.Errorf("audit %+v, want status %d reason %q", last, tc.status, tc.reason)
			}
			switch tc.status {
			case 202:
				id := turnID(t, w)
				if last.TurnID != id || last.Outcome != OutcomeAdmitted || last.Grant != "ci" {
					t.Errorf("audit %+v for turn %s", last, id)
				}
			case 401:
				ch := w.Header().Get("WWW-Authenticate")
				wantMeta := `resource_metadata="https://agent.example/.well-known/oauth-protected-resource/hooks/events/ci"`
				if !strings.HasPrefix(ch, "Bearer ") || !strings.Contains(ch, wantMeta) {
					t.Errorf("WWW-Authenticate %q", ch)
				}
				if sent := q.token != "" || q.auth != ""; sent != strings.Contains(ch, `error="invalid_token"`) {
					t.Errorf("WWW-Authenticate %q: error only when a token was sent", ch)
				}
			case 403:
				if tc.reason == "token: missing scope" && !strings.Contains(w.Header().Get("WWW-Authenticate"), `error="insufficient_scope", scope="events:write"`) {
					t.Errorf("WWW-Authenticate %q", w.Header().Get("WWW-Authenticate"))
				}
			case 405:
				if w.Header().Get("Allow") != "POST" {
					t.Errorf("Allow %q", w.Header().Get("Allow"))
				}
			case 429:
				if w.Header().Get("Retry-After") == "" {
					t.Error("429 without Retry-After")
				}
			}
			if tc.status != 202 && e.target.count() > 1 {
				t.Errorf("%d turns taken", e.target.count())
			}
		})
	}
}

// TestAdmittedEvent: the Target gets the event as sent, under the grant, and
// the claimed name stays a claim.
func TestAdmittedEvent(t *testing.T) {
	e := newEnv(t, nil)
	w := e.do(req{token: e.token(map[string]any{"sub": testSubject}), body: goodBody})
	if id := turnID(t, w); id != "s1/1" {
		t.Fatalf("turn %q", id)
	}
	want := Event{GrantID: "ci", ConversationID: "conv-1", Content: "build 42 failed", ClaimedName: "CI"}
	if len(e.target.events) != 1 || e.target.events[0] != want || want.From() != "external:ci" {
		t.Fatalf("events %+v", e.target.events)
	}
	st := e.srv.Status()[0]
	if st.Admitted != 1 || st.Refused != 0 || !st.LastAdmitted.Equal(testNow) {
		t.Fatalf("status %+v", st)
	}
}

// TestGrantRules: issuer, audience, principal (subject or client) and
// algorithms come from each grant.
func TestGrantRules(t *testing.T) {
	byClient := testGrant()
	byClient.ID, byClient.Resource, byClient.Subject, byClient.Client = "byclient", "https://agent.example/events/byclient", "", "client-7"
	edOnly := testGrant()
	edOnly.ID, edOnly.Resource, edOnly.Algorithms = "edonly", "https://agent.example/x/events/edonly", []jose.Algorithm{jose.EdDSA}
	other := testGrant()
	other.ID, other.Resource, other.Issuer, other.Scopes = "other", "https://hooks.example/events/other", "https://other-issuer.example", []string{"a", "b"}
	e := newEnv(t, nil, testGrant(), byClient, edOnly, other)
	c := func(res string, changes map[string]any) map[string]any {
		m := claims(e.now(), map[string]any{"aud": res})
		for k, v := range changes {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		return m
	}
	for _, tc := range []struct {
		name, path, token string
		status            int
	}{
		{"client grant admits its client", "/events/byclient", esSigner().sign(nil, c(byClient.Resource, map[string]any{"sub": nil, "client_id": "client-7"})), 202},
		{"client grant with sub and client_id", "/events/byclient", esSigner().sign(nil, c(byClient.Resource, map[string]any{"sub": "someone", "client_id": "client-7"})), 202},
		{"client grant refuses the subject", "/events/byclient", esSigner().sign(nil, c(byClient.Resource, nil)), 401},
		{"client grant refuses another client", "/events/byclient", esSigner().sign(nil, c(byClient.Resource, map[string]any{"client_id": "client-8"})), 401},
		{"EdDSA grant admits EdDSA", "/x/events/edonly", edSigner().sign(nil, c(edOnly.Resource, nil)), 202},
		{"EdDSA grant refuses ES256", "/x/events/edonly", esSigner().sign(nil, c(edOnly.Resource, nil)), 401},
		{"EdDSA grant refuses RS256", "/x/events/edonly", rsSigner().sign(nil, c(edOnly.Resource, nil)), 401},
		{"token for one grant at another's path", "/x/events/edonly", edSigner().sign(nil, c(testResource, nil)), 401},
		{"other issuer's grant", "/events/other", esSigner().sign(nil, c(other.Resource, map[string]any{"iss": other.Issuer, "scope": "b a"})), 202},
		{"other issuer's grant, first issuer's token", "/events/other", esSigner().sign(nil, c(other.Resource, map[string]any{"scope": "a b"})), 401},
		{"every scope required", "/events/other", esSigner().sign(nil, c(other.Resource, map[string]any{"iss": other.Issuer, "scope": "a"})), 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus(t, e.do(req{path: tc.path, token: tc.token, body: goodBody}), tc.status)
		})
	}
}

// TestReplayRace: of many copies of one token posted at once, exactly one
// is admitted; the rest are 401.
func TestReplayRace(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.token(nil)
	const n = 32
	codes := make([]int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			// Distinct addresses: from one, the failures would soon be
			// throttled (429).
			codes[i] = e.do(req{token: tok, body: goodBody, remote: fmt.Sprintf("198.51.100.%d:4000", i)}).Code
		})
	}
	close(start)
	wg.Wait()
	count := map[int]int{}
	for _, c := range codes {
		count[c]++
	}
	if count[202] != 1 || count[401] != n-1 || e.target.count() != 1 {
		t.Fatalf("statuses %v, turns %d; want one 202 and %d 401", count, e.target.count(), n-1)
	}
}

// TestReplayRaceLoopback: the same over real connections.
func TestReplayRaceLoopback(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Now = nil })
	base := serve(t, e.srv)
	tok := esSigner().sign(nil, claims(time.Now(), nil))
	const n = 16
	codes := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			codes <- post(t, base+testPath, tok, goodBody).StatusCode
		})
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	if count[202] != 1 || count[401] != n-1 {
		t.Fatalf("statuses %v", count)
	}
}

// serve runs s on loopback and returns its base URL.
func serve(t testing.TB, s *Server) string {
	t.Helper()
	ap, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	if !ap.Addr().IsLoopback() || ap.Addr() != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("listening on %v, want 127.0.0.1", ap)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background()) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ap.String()
}

func post(t testing.TB, url, token, body string) *http.Response {
	r, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return &http.Response{}
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	r.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Error(err)
		return &http.Response{}
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestRevoke: effective at once; without a valid token a revoked grant
// answers exactly as a live one; the metadata stays; Status shows it.
func TestRevoke(t *testing.T) {
	live := newEnv(t, nil)
	dead := newEnv(t, nil)
	if err := dead.srv.Revoke("ci"); err != nil {
		t.Fatal(err)
	}
	if err := dead.srv.Revoke("ci"); err != nil {
		t.Fatalf("second Revoke: %v", err)
	}
	if err := dead.srv.Revoke("nope"); !errors.Is(err, ErrUnknownGrant) {
		t.Fatalf("Revoke of an unknown grant: %v", err)
	}
	badSig := func(e *env) string { tok := e.token(nil); return tok[:len(tok)-4] + "AAAA" }
	for _, q := range []func(e *env) req{
		func(e *env) req { return req{body: goodBody} },
		func(e *env) req { return req{token: "x.y.z", body: goodBody} },
		func(e *env) req { return req{token: badSig(e), body: goodBody} },
		func(e *env) req { return req{token: e.token(map[string]any{"sub": "mallory"}), body: goodBody} },
		func(e *env) req {
			return req{token: e.token(map[string]any{"exp": testNow.Unix() - 3600}), body: goodBody}
		},
		func(e *env) req { return req{method: "GET"} },
		func(e *env) req { return req{method: "GET", path: "/.well-known/oauth-protected-resource" + testPath} },
		func(e *env) req { return req{method: "HEAD", path: "/.well-known/oauth-protected-resource" + testPath} },
	} {
		a, b := live.do(q(live)), dead.do(q(dead))
		if a.Code != b.Code || a.Body.String() != b.Body.String() || fmt.Sprint(a.Header()) != fmt.Sprint(b.Header()) {
			t.Errorf("live %d %v %q; revoked %d %v %q", a.Code, a.Header(), a.Body, b.Code, b.Header(), b.Body)
		}
	}
	wantStatus(t, dead.do(req{token: dead.token(nil), body: goodBody}), 403)
	if dead.target.count() != 0 {
		t.Fatal("a revoked grant took a turn")
	}
	st := dead.srv.Status()
	if len(st) != 1 || !st[0].Revoked || st[0].Admitted != 0 || live.srv.Status()[0].Revoked {
		t.Fatalf("status %+v", st)
	}
}

// TestRevokeDuringAdmission: an admission holds its grant's lock while the
// Target takes the turn, and Revoke takes that lock, so a Revoke that has
// returned is never followed by a turn.
func TestRevokeDuringAdmission(t *testing.T) {
	e := newEnv(t, nil)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	e.srv.SetTarget(TargetFunc(func(ctx context.Context, ev Event) (string, error) {
		once.Do(func() { close(entered); <-release })
		return "t", nil
	}))
	done := make(chan int)
	go func() { done <- e.do(req{token: e.token(nil), body: goodBody}).Code }()
	<-entered
	if e.srv.byID["ci"].mu.TryLock() {
		t.Fatal("the grant's lock is free while the Target takes a turn")
	}
	close(release)
	if code := <-done; code != 202 {
		t.Fatalf("in-flight event: %d", code)
	}
	e.srv.Revoke("ci")
	wantStatus(t, e.do(req{token: e.token(nil), body: goodBody}), 403)
}

func TestMetadata(t *testing.T) {
	e := newEnv(t, nil)
	w := e.do(req{method: "GET", path: "/.well-known/oauth-protected-resource" + testPath})
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%d %v", w.Code, w.Header())
	}
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m["resource"] != testResource || fmt.Sprint(m["authorization_servers"]) != "["+testIssuer+"]" ||
		fmt.Sprint(m["scopes_supported"]) != "["+testScope+"]" || fmt.Sprint(m["bearer_methods_supported"]) != "[header]" {
		t.Fatalf("metadata %v", m)
	}
	wantStatus(t, e.do(req{method: "POST", path: "/.well-known/oauth-protected-resource" + testPath}), 405)
	wantStatus(t, e.do(req{method: "GET", path: "/.well-known/oauth-protected-resource/events/other"}), 404)
}

// TestKeysUnavailable: an issuer that cannot give its keys is 503, for a
// live and a revoked grant alike, and the events flow once it can.
func TestKeysUnavailable(t *testing.T) {
	iss := newIssuer(t)
	iss.fail.Store(true)
	g := testGrant()
	g.Issuer = iss.url
	e := newEnv(t, func(o *Options) {
		o.Keys = nil
		o.HTTPClient = iss.client
		o.Now = nil
	}, g)
	tok := func() string { return esSigner().sign(nil, claims(time.Now(), map[string]any{"iss": iss.url})) }
	wantStatus(t, e.do(req{token: tok(), body: goodBody}), 503)
	if err := e.srv.Refresh(t.Context()); err == nil {
		t.Fatal("Refresh succeeded with the issuer down")
	}
	iss.fail.Store(false)
	if err := e.srv.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	turnID(t, e.do(req{token: tok(), body: goodBody}))
	wantStatus(t, e.do(req{token: rsSigner().sign(nil, claims(time.Now(), map[string]any{"iss": iss.url})), body: goodBody}), 202)
	recs := e.audit.all()
	if recs[0].Outcome != OutcomeUnavailable || recs[0].Reason != reasonKeys {
		t.Fatalf("audit %+v", recs[0])
	}
}

// TestStoreFull: the single-use store is bounded; when it is full new
// tokens get 503 and tokens it holds stay refused.
func TestStoreFull(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MaxTokens = 10 })
	first := e.token(nil)
	turnID(t, e.do(req{token: first, body: goodBody}))
	for range 9 {
		turnID(t, e.do(req{token: e.token(nil), body: goodBody}))
	}
	for range 100 {
		wantStatus(t, e.do(req{token: e.token(nil), body: goodBody}), 503)
	}
	wantStatus(t, e.do(req{token: first, body: goodBody}), 401)
	if n := e.srv.used.Len(); n != 10 {
		t.Fatalf("store holds %d", n)
	}
}

// TestServeLoopback: the endpoint on a real socket, and Close.
func TestServeLoopback(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Now = nil })
	ctx, cancel := context.WithCancel(t.Context())
	ap, err := e.srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.srv.Serve(ctx) }()
	base := "http://" + ap.String()
	resp := post(t, base+testPath, esSigner().sign(nil, claims(time.Now(), nil)), goodBody)
	if resp.StatusCode != 202 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if resp := post(t, base+testPath, "", strings.Repeat("x", 20<<10)); resp.StatusCode != 413 {
		t.Fatalf("oversize: %d", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if err := e.srv.Close(); err != nil {
		t.Fatalf("Close after Serve: %v", err)
	}
	if _, err := e.srv.Listen(); err == nil {
		t.Fatal("Listen after Close")
	}
	if _, err := http.Post(base+testPath, "application/json", strings.NewReader(goodBody)); err == nil {
		t.Fatal("still serving after Close")
	}
}

func TestListenBusyPort(t *testing.T) {
	a := newEnv(t, nil)
	ap, err := a.srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer a.srv.Close()
	b := newEnv(t, func(o *Options) { o.Port = int(ap.Port()) })
	if _, err := b.srv.Listen(); err == nil {
		t.Fatal("second Listen on a busy port succeeded")
	}
}

func TestGrantStatusString(t *testing.T) {
	g := testGrant()
	g.Rate = []Rate{{time.Minute, 5}}
	e := newEnv(t, nil, g)
	turnID(t, e.do(req{token: e.token(nil), body: goodBody}))
	e.do(req{body: goodBody})
	e.srv.Revoke("ci")
	got := e.srv.Status()[0].String()
	want := "ci  revoked  subject ci-bot  scopes events:write  issuer https://issuer.example/tenant  resource https://agent.example/hooks/events/ci  admitted 1, refused 1, last 2025-06-15T15:06:40Z  rate 5 per 1m0s"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// TestSetTargetKeepsWhatTheEndpointKnows: a new target (a resumed session)
// gets the later events; a revoked grant stays revoked and a spent token
// stays spent.
func TestSetTargetKeepsWhatTheEndpointKnows(t *testing.T) {
	e := newEnv(t, nil)
	spent := e.token(nil)
	turnID(t, e.do(req{token: spent, body: goodBody}))
	if err := e.srv.Revoke("ci"); err != nil {
		t.Fatal(err)
	}
	var got []Event
	e.srv.SetTarget(TargetFunc(func(ctx context.Context, ev Event) (string, error) {
		got = append(got, ev)
		return "new/1", nil
	}))
	wantStatus(t, e.do(req{token: e.token(nil), body: goodBody}), 403)
	if st := e.srv.Status(); !st[0].Revoked || st[0].Admitted != 1 {
		t.Fatalf("status after SetTarget: %+v", st[0])
	}
	if len(got) != 0 {
		t.Fatalf("the new target got %d events for a revoked grant", len(got))
	}
	e.srv.SetTarget(nil) // ignored
}
