package jose

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// fakeIssuer is an authorization server as far as discovery goes: RFC 8414
// metadata, OpenID configuration and a JWKS, each switchable, with a count
// of requests per path.
type fakeIssuer struct {
	mu       sync.Mutex
	base     string // https://host:port, set once the server runs
	path     string // the issuer's path, "" or "/tenant"
	rfc8414  bool   // serve the RFC 8414 document
	openid   bool   // serve the OpenID configuration
	issuer   string // issuer value in the metadata; "" means the real one
	jwksURI  string // jwks_uri in the metadata; "" means base + "/jwks"
	jwks     string
	status   int                                           // non-zero: every answer has this status
	override func(http.ResponseWriter, *http.Request) bool // handles the request when it returns true
	block    chan struct{}                                 // non-nil: JWKS requests wait for it (or the client to go)
	hits     map[string]int
}

func (f *fakeIssuer) issuerID() string { return f.base + f.path }

func (f *fakeIssuer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.hits[r.URL.Path]++
	status, override, block := f.status, f.override, f.block
	meta := map[string]any{"issuer": f.issuerID(), "jwks_uri": f.base + "/jwks", "response_types_supported": []string{"code"}}
	if f.issuer != "" {
		meta["issuer"] = f.issuer
	}
	if f.jwksURI != "" {
		meta["jwks_uri"] = f.jwksURI
	}
	rfc8414, openid, jwks, path := f.rfc8414, f.openid, f.jwks, f.path
	f.mu.Unlock()
	if override != nil && override(w, r) {
		return
	}
	if status != 0 {
		w.WriteHeader(status)
		return
	}
	switch {
	case rfc8414 && r.URL.Path == "/.well-known/oauth-authorization-server"+path,
		openid && r.URL.Path == path+"/.well-known/openid-configuration":
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(mustJSON(meta)))
	case r.URL.Path == "/jwks":
		if block != nil {
			select {
			case <-block:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(jwks))
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeIssuer) set(change func(f *fakeIssuer)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

func (f *fakeIssuer) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[path]
}

func (f *fakeIssuer) jwksHits() int { return f.count("/jwks") }

func jwksOf(t testing.TB, keys ...map[string]any) string {
	return mustJSON(map[string]any{"keys": keys})
}

func newFakeIssuer(t testing.TB, path string, keys ...map[string]any) *fakeIssuer {
	return &fakeIssuer{path: path, rfc8414: true, openid: true, jwks: jwksOf(t, keys...), hits: map[string]int{}}
}

// serveTLS runs f on a real loopback TLS server.
func serveTLS(t *testing.T, f *fakeIssuer) *http.Client {
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)
	f.base = srv.URL
	return srv.Client()
}

func esJWK(t testing.TB, kid string) map[string]any {
	return jwkOf(t, &testKeys().ec.PublicKey, map[string]any{"kid": kid, "use": "sig"})
}

func edJWK(t testing.TB, kid string) map[string]any {
	return jwkOf(t, testKeys().ed.Public(), map[string]any{"kid": kid})
}

func newRemote(t testing.TB, f *fakeIssuer, client *http.Client, opts RemoteOptions) *RemoteKeys {
	t.Helper()
	opts.Client = client
	r, err := NewRemoteKeys(f.issuerID(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRemoteKeysDiscovery: RFC 8414 metadata, path-aware, is tried first;
// OpenID discovery when it is absent; then the cache serves.
func TestRemoteKeysDiscovery(t *testing.T) {
	for _, tc := range []struct {
		name, path      string
		rfc8414, openid bool
		wantMeta        string
	}{
		{"RFC 8414 with path", "/tenant", true, true, "/.well-known/oauth-authorization-server/tenant"},
		{"RFC 8414 without path", "", true, true, "/.well-known/oauth-authorization-server"},
		{"issuer with trailing slash", "/", true, true, "/.well-known/oauth-authorization-server"},
		{"OpenID fallback with path", "/tenant", false, true, "/tenant/.well-known/openid-configuration"},
		{"OpenID fallback without path", "", false, true, "/.well-known/openid-configuration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The routes drop a terminating "/" of the issuer's path; the
			// issuer value in the metadata keeps it.
			f := newFakeIssuer(t, strings.TrimSuffix(tc.path, "/"), esJWK(t, "es"))
			f.rfc8414, f.openid = tc.rfc8414, tc.openid
			client := serveTLS(t, f)
			issuer := f.base + tc.path
			f.set(func(f *fakeIssuer) { f.issuer = issuer })
			r, err := NewRemoteKeys(issuer, RemoteOptions{Client: client})
			if err != nil {
				t.Fatal(err)
			}
			opts := testOptions(r)
			opts.Issuer = issuer
			v := newVerifier(t, opts)
			tok := esSigner("es").sign(nil, goodClaims(map[string]any{"iss": issuer}))
			for range 3 {
				if _, err := v.Verify(context.Background(), tok); err != nil {
					t.Fatal(err)
				}
			}
			if f.count(tc.wantMeta) != 1 || f.jwksHits() != 1 {
				t.Errorf("hits %v, want one on %s and one on /jwks", f.hits, tc.wantMeta)
			}
		})
	}
}

// TestRemoteKeysRefusals: every way discovery or the JWKS fetch can go
// wrong ends in KeysUnavailable, and no redirect is followed.
func TestRemoteKeysRefusals(t *testing.T) {
	redirect := func(from, to string) func(http.ResponseWriter, *http.Request) bool {
		return func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path != from {
				return false
			}
			http.Redirect(w, r, to, http.StatusFound)
			return true
		}
	}
	body := func(path, text string) func(http.ResponseWriter, *http.Request) bool {
		return func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path != path {
				return false
			}
			w.Write([]byte(text))
			return true
		}
	}
	const meta = "/.well-known/oauth-authorization-server/tenant"
	const oidc = "/tenant/.well-known/openid-configuration"
	cases := []struct {
		name   string
		change func(f *fakeIssuer)
		opts   RemoteOptions
		never  string // a path that must not be requested
	}{
		{"issuer in metadata differs", func(f *fakeIssuer) { f.issuer = f.issuerID() + "/" }, RemoteOptions{}, "/jwks"},
		{"issuer in metadata differs in case", func(f *fakeIssuer) { f.issuer = strings.ToUpper(f.issuerID()) }, RemoteOptions{}, "/jwks"},
		{"metadata redirects", func(f *fakeIssuer) {
			f.openid = false
			f.override = redirect(meta, "/elsewhere"+meta)
		}, RemoteOptions{}, "/elsewhere" + meta},
		{"both metadata redirect", func(f *fakeIssuer) {
			f.override = func(w http.ResponseWriter, r *http.Request) bool {
				return redirect(meta, "/x")(w, r) || redirect(oidc, "/x")(w, r)
			}
		}, RemoteOptions{}, "/x"},
		{"JWKS redirects", func(f *fakeIssuer) { f.override = redirect("/jwks", "/jwks2") }, RemoteOptions{}, "/jwks2"},
		{"jwks_uri over http", func(f *fakeIssuer) { f.jwksURI = strings.Replace(f.base, "https:", "http:", 1) + "/jwks" }, RemoteOptions{}, "/jwks"},
		{"jwks_uri relative", func(f *fakeIssuer) { f.jwksURI = "/jwks" }, RemoteOptions{}, "/jwks"},
		{"jwks_uri missing", func(f *fakeIssuer) {
			f.override = body(meta, `{"issuer":"`+f.issuerID()+`"}`)
			f.openid = false
		}, RemoteOptions{}, "/jwks"},
		{"metadata with duplicate issuer", func(f *fakeIssuer) {
			f.override = body(meta, `{"issuer":"`+f.issuerID()+`","issuer":"https://evil.example","jwks_uri":"`+f.base+`/jwks"}`)
			f.openid = false
		}, RemoteOptions{}, "/jwks"},
		{"metadata with case-variant issuer", func(f *fakeIssuer) {
			f.override = body(meta, `{"issuer":"`+f.issuerID()+`","Issuer":"https://evil.example","jwks_uri":"`+f.base+`/jwks"}`)
			f.openid = false
		}, RemoteOptions{}, "/jwks"},
		{"metadata not JSON", func(f *fakeIssuer) { f.override = body(meta, `<html>`); f.openid = false }, RemoteOptions{}, "/jwks"},
		{"metadata over the size cap", func(f *fakeIssuer) {
			f.override = body(meta, `{"issuer":"`+f.issuerID()+`","jwks_uri":"`+f.base+`/jwks","pad":"`+strings.Repeat("x", 2000)+`"}`)
			f.openid = false
		}, RemoteOptions{MaxBytes: 1024}, "/jwks"},
		{"JWKS over the size cap", func(f *fakeIssuer) {
			f.jwks = jwksOf(t, esJWK(t, "a"), esJWK(t, "b"), esJWK(t, "c"), esJWK(t, "d"), esJWK(t, "es"))
		}, RemoteOptions{MaxBytes: 400}, ""},
		{"JWKS not JSON", func(f *fakeIssuer) { f.jwks = `{"keys":[` }, RemoteOptions{}, ""},
		{"JWKS without usable keys", func(f *fakeIssuer) { f.jwks = `{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}` }, RemoteOptions{}, ""},
		{"JWKS with duplicate keys member", func(f *fakeIssuer) { f.jwks = `{"keys":[],"keys":[` + mustJSON(esJWK(t, "es")) + `]}` }, RemoteOptions{}, ""},
		{"server error", func(f *fakeIssuer) { f.status = http.StatusInternalServerError }, RemoteOptions{}, "/jwks"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeIssuer(t, "/tenant", esJWK(t, "es"))
			client := serveTLS(t, f)
			f.set(tc.change)
			r := newRemote(t, f, client, tc.opts)
			_, err := r.Key(context.Background(), "es", ES256)
			if !errors.Is(err, KeysUnavailable) {
				t.Fatalf("got %v, want keys unavailable", err)
			}
			if tc.never == "" && f.jwksHits() != 1 {
				t.Errorf("the JWKS was not fetched: %v", err)
			}
			if tc.never != "" && f.count(tc.never) != 0 {
				t.Errorf("%s was requested: %v", tc.never, f.hits)
			}
		})
	}
}

func TestNewRemoteKeysRefusesIssuers(t *testing.T) {
	for _, iss := range []string{
		"http://issuer.example",
		"https://",
		"https://user@issuer.example",
		"https://issuer.example?x=1",
		"https://issuer.example?",
		"https://issuer.example#f",
		"https://issuer.example#",
		"issuer.example",
		"://",
	} {
		if _, err := NewRemoteKeys(iss, RemoteOptions{}); err == nil {
			t.Errorf("%q accepted", iss)
		}
	}
	// The caller's client keeps its own redirect policy.
	c := &http.Client{}
	if _, err := NewRemoteKeys("https://issuer.example", RemoteOptions{Client: c}); err != nil || c.CheckRedirect != nil {
		t.Errorf("client changed or error %v", err)
	}
}

// pipeListener is an in-memory network for an httptest server inside a
// synctest bubble: net.Pipe blocks on channels, which the bubble sees as
// durably blocked, so fake time can advance while connections are idle.
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

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 443} }

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

// servePipe runs f on an httptest TLS server over a pipeListener; call it
// inside a bubble.
func servePipe(t *testing.T, f *fakeIssuer) *http.Client {
	srv := httptest.NewUnstartedServer(f)
	srv.Listener.Close() // the real socket it opened is not used
	ln := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	srv.Listener = ln
	srv.StartTLS()
	t.Cleanup(srv.Close)
	f.base = srv.URL
	client := srv.Client()
	client.Transport.(*http.Transport).DialContext = ln.dial
	return client
}

// TestRemoteKeysRefetchOnUnknownKid: an unknown kid causes a refetch at
// most once per 30 s, however many tokens ask.
func TestRemoteKeysRefetchOnUnknownKid(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		f := newFakeIssuer(t, "/tenant", esJWK(t, "k1"))
		r := newRemote(t, f, servePipe(t, f), RemoteOptions{})
		if _, err := r.Key(ctx, "k1", ES256); err != nil {
			t.Fatal(err)
		}
		// The issuer rotates in k2.
		f.set(func(f *fakeIssuer) { f.jwks = jwksOf(t, esJWK(t, "k1"), edJWK(t, "k2")) })
		for range 29 {
			if _, err := r.Key(ctx, "k2", EdDSA); !errors.Is(err, UnknownKey) {
				t.Fatalf("before 30 s: %v", err)
			}
			time.Sleep(time.Second)
		}
		if got := f.jwksHits(); got != 1 {
			t.Fatalf("%d JWKS fetches within 30 s, want 1", got)
		}
		time.Sleep(time.Second)
		if k, err := r.Key(ctx, "k2", EdDSA); err != nil || k.ID() != "k2" {
			t.Fatalf("after 30 s: %v", err)
		}
		if got := f.jwksHits(); got != 2 {
			t.Fatalf("%d JWKS fetches, want 2", got)
		}
		// A kid that never appears: one fetch per 30 s over five minutes.
		for range 300 {
			if _, err := r.Key(ctx, "k3", ES256); !errors.Is(err, UnknownKey) {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
		}
		// Fetches at +60 s, +90 s ... +300 s of the loop's span 30 s to 329 s.
		if got := f.jwksHits(); got != 2+9 {
			t.Errorf("%d JWKS fetches, want 11", got)
		}
		// Known keys never wait for anything.
		if _, err := r.Key(ctx, "k1", ES256); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRemoteKeysSharedFetch: concurrent callers share one fetch, both for
// the first fetch and for a refetch on an unknown kid.
func TestRemoteKeysSharedFetch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		f := newFakeIssuer(t, "/tenant", esJWK(t, "k1"))
		f.block = make(chan struct{})
		r := newRemote(t, f, servePipe(t, f), RemoteOptions{})
		run := func(kid string, alg Algorithm, want Reason) {
			var wg sync.WaitGroup
			for range 20 {
				wg.Go(func() {
					if _, err := r.Key(ctx, kid, alg); ReasonOf(err) != want {
						t.Errorf("kid %s: %v, want %v", kid, err, want)
					}
				})
			}
			synctest.Wait() // every caller is waiting on the one fetch
			if n := f.jwksHits(); n != 1 {
				t.Errorf("%d JWKS requests in flight, want 1", n)
			}
			close(f.block)
			wg.Wait()
		}
		run("k1", ES256, 0)
		time.Sleep(DefaultMinInterval)
		f.set(func(f *fakeIssuer) {
			f.jwks = jwksOf(t, esJWK(t, "k1"), edJWK(t, "k2"))
			f.block = make(chan struct{})
			f.hits = map[string]int{}
		})
		run("k2", EdDSA, 0)
		if n := f.count("/.well-known/oauth-authorization-server/tenant"); n != 1 {
			t.Errorf("%d metadata requests for the refetch, want 1", n)
		}
	})
}

// TestRemoteKeysCallerGivesUp: a caller whose context ends stops waiting;
// the fetch goes on for the others.
func TestRemoteKeysCallerGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeIssuer(t, "/tenant", esJWK(t, "k1"))
		f.block = make(chan struct{})
		r := newRemote(t, f, servePipe(t, f), RemoteOptions{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		var second error
		done := make(chan struct{})
		go func() {
			defer close(done)
			time.Sleep(500 * time.Millisecond)
			_, second = r.Key(context.Background(), "k1", ES256)
		}()
		start := time.Now()
		_, err := r.Key(ctx, "k1", ES256)
		if !errors.Is(err, KeysUnavailable) || !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Fatalf("first caller: %v after %v", err, time.Since(start))
		}
		time.Sleep(time.Second)
		close(f.block)
		<-done
		if second != nil || f.jwksHits() != 1 {
			t.Fatalf("second caller: %v; %d fetches", second, f.jwksHits())
		}
	})
}

// TestRemoteKeysTimeoutAndBackoff: a fetch that hangs ends at the timeout,
// and a failed fetch is not retried for 30 s.
func TestRemoteKeysTimeoutAndBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		f := newFakeIssuer(t, "/tenant", esJWK(t, "k1"))
		f.block = make(chan struct{}) // never closed: the handler ends with the request
		r := newRemote(t, f, servePipe(t, f), RemoteOptions{})
		start := time.Now()
		if _, err := r.Key(ctx, "k1", ES256); !errors.Is(err, KeysUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("hung fetch: %v", err)
		}
		if d := time.Since(start); d != DefaultFetchTimeout {
			t.Fatalf("hung fetch ended after %v, want %v", d, DefaultFetchTimeout)
		}
		// Still failing, now fast: no request until 30 s after the attempt.
		f.set(func(f *fakeIssuer) { f.block = nil; f.status = http.StatusServiceUnavailable })
		for time.Since(start) < DefaultMinInterval {
			if _, err := r.Key(ctx, "k1", ES256); !errors.Is(err, KeysUnavailable) {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Second)
		}
		if f.jwksHits() != 1 || f.count("/.well-known/oauth-authorization-server/tenant") != 1 {
			t.Fatalf("retried within 30 s: %v", f.hits)
		}
		f.set(func(f *fakeIssuer) { f.status = 0 })
		if _, err := r.Key(ctx, "k1", ES256); err != nil {
			t.Fatalf("after 30 s: %v", err)
		}
	})
}

// TestRemoteKeysMaxAgeAndStale: a set older than MaxAge is refreshed on use,
// behind the caller, who is answered from the old set at once; while
// refreshes fail the old set serves, for up to 24 h.
func TestRemoteKeysMaxAgeAndStale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		f := newFakeIssuer(t, "/tenant", esJWK(t, "k1"))
		r := newRemote(t, f, servePipe(t, f), RemoteOptions{})
		if _, err := r.Key(ctx, "k1", ES256); err != nil {
			t.Fatal(err)
		}
		time.Sleep(DefaultMaxAge)
		// The issuer is slow and has rotated to k2: the token of k1 is
		// answered from the hour-old set without waiting.
		release := make(chan struct{})
		f.set(func(f *fakeIssuer) { f.block = release; f.jwks = jwksOf(t, esJWK(t, "k2")) })
		start := time.Now()
		if _, err := r.Key(ctx, "k1", ES256); err != nil || time.Since(start) != 0 {
			t.Fatalf("old set after MaxAge: %v after %v", err, time.Since(start))
		}
		if _, err := r.Key(ctx, "k1", ES256); err != nil {
			t.Fatalf("old set while the refresh runs: %v", err)
		}
		synctest.Wait()
		if f.jwksHits() != 2 {
			t.Fatalf("%d fetches, want one refresh behind the callers", f.jwksHits())
		}
		time.Sleep(time.Second)
		close(release)
		synctest.Wait()
		if _, err := r.Key(ctx, "k1", ES256); !errors.Is(err, UnknownKey) {
			t.Fatalf("k1 after the refresh: %v", err)
		}
		if _, err := r.Key(ctx, "k2", ES256); err != nil {
			t.Fatalf("k2 after the refresh: %v", err)
		}
		f.set(func(f *fakeIssuer) { f.block = nil; f.jwks = jwksOf(t, esJWK(t, "k1")) })
		if err := r.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		fetched := time.Now()
		f.set(func(f *fakeIssuer) { f.status = http.StatusBadGateway })
		meta := "/.well-known/oauth-authorization-server/tenant"
		hits := f.count(meta)
		for time.Since(fetched) < staleLimit {
			if _, err := r.Key(ctx, "k1", ES256); err != nil {
				t.Fatalf("stale set at +%v: %v", time.Since(fetched), err)
			}
			synctest.Wait()
			time.Sleep(time.Hour)
		}
		// One failed refresh per token found past MaxAge (here one an
		// hour from +1 h to +23 h), each behind its caller.
		if n := f.count(meta) - hits; n != 23 {
			t.Fatalf("%d refresh attempts in 24 h of failures, want 23", n)
		}
		if _, err := r.Key(ctx, "k1", ES256); !errors.Is(err, KeysUnavailable) {
			t.Fatalf("after 24 h of failures: %v", err)
		}
		// Refresh ignores the 30 s spacing and recovers at once.
		f.set(func(f *fakeIssuer) { f.status = 0 })
		if err := r.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Key(ctx, "k1", ES256); err != nil {
			t.Fatal(err)
		}
	})
}
