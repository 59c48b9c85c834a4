package oauth

import (
	"context"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"agent/config"
	"agent/internal/netguard"
)

type signInCase struct {
	store *Store
	ui    *fakeUI
	opts  Options
}

func setup(t *testing.T, f *fakeServer, o *config.OAuth) *signInCase {
	store := NewStore(t.TempDir())
	ui := &fakeUI{f: f, confirm: true}
	return &signInCase{store: store, ui: ui, opts: Options{
		Server: f.def(o), Store: store, UI: ui, Net: f.net(), OpenBrowser: ui.openBrowser, CallbackTimeout: time.Minute,
	}}
}

func (c *signInCase) run(t *testing.T) (*Result, error) {
	t.Helper()
	return SignIn(context.Background(), c.opts)
}

func TestSignInDynamicRegistrationBrowser(t *testing.T) {
	f := newFakeServer(t)
	f.challengeScope = "mcp:read mcp:write"
	c := setup(t, f, nil)
	res, err := c.run(t)
	if err != nil {
		t.Fatal(err)
	}
	if res.Scope != "mcp:read mcp:write" || res.Issuer != f.issuer() {
		t.Fatalf("%+v", res)
	}
	if c.ui.asked != 1 {
		t.Fatal("the user was not asked before the browser opened")
	}
	// The authorization request: PKCE S256, state, resource, the
	// challenge's scope, the registered loopback redirect.
	q := f.authQueries[0]
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || len(q.Get("state")) < 40 ||
		q.Get("resource") != f.serverURL() || q.Get("scope") != "mcp:read mcp:write" || q.Get("response_type") != "code" {
		t.Fatalf("authorization query %v", q)
	}
	redir, _ := url.Parse(q.Get("redirect_uri"))
	if redir.Scheme != "http" || redir.Hostname() != "127.0.0.1" || redir.Path != "/callback" {
		t.Fatalf("redirect %s", redir)
	}
	reg := f.registered[0]
	if reg["token_endpoint_auth_method"] != "none" || reg["redirect_uris"].([]any)[0] != q.Get("redirect_uri") {
		t.Fatalf("registration %v", reg)
	}
	// The token request carries the verifier and the resource.
	form := f.tokenForms[0]
	if form.Get("code_verifier") == "" || form.Get("resource") != f.serverURL() || form.Get("client_id") != q.Get("client_id") {
		t.Fatalf("token form %v", form)
	}
	// Stored, 0600, and the state is signed-in.
	id := IdentityOf(c.opts.Server)
	creds, err := c.store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if creds.TokenEndpoint != f.URL()+"/token" || creds.RevocationEndpoint != f.URL()+"/revoke" || creds.Resource != f.serverURL() || creds.RefreshToken == "" || creds.Expiry.IsZero() {
		t.Fatalf("%+v", creds)
	}
	if st, _ := c.store.State(id, time.Now()); st != SignedIn {
		t.Fatal(st)
	}
	// Nothing shown holds the code or the token.
	for _, l := range c.ui.lines {
		if strings.Contains(l, "code-") || strings.Contains(l, "access-") || strings.Contains(l, "refresh-") {
			t.Fatalf("a secret was shown: %q", l)
		}
	}
}

func TestSignInPreRegisteredNoBrowser(t *testing.T) {
	f := newFakeServer(t)
	f.noRegistration = true
	port, _ := freePort()
	c := setup(t, f, &config.OAuth{ClientID: "my-client", CallbackPort: port})
	c.opts.NoBrowser = true
	c.opts.ClientSecret = "s3cret"
	if _, err := c.run(t); err != nil {
		t.Fatal(err)
	}
	if c.ui.asked != 0 {
		t.Fatal("asked to open a browser with --no-browser")
	}
	q := f.authQueries[0]
	if q.Get("client_id") != "my-client" || q.Get("redirect_uri") != "http://127.0.0.1:"+strconv.Itoa(port)+"/callback" {
		t.Fatalf("%v", q)
	}
	// client_secret_basic by default (RFC 8414 §2).
	if f.basicUsers[0] != "my-client" || f.tokenForms[0].Get("client_secret") != "" {
		t.Fatalf("client auth: basic %q form %v", f.basicUsers[0], f.tokenForms[0])
	}
	creds, _ := c.store.Load(IdentityOf(c.opts.Server))
	if creds.TokenAuthMethod != AuthSecretBasic || creds.ClientSecret != "s3cret" {
		t.Fatalf("%v", creds.TokenAuthMethod)
	}
}

func TestSignInSecretPost(t *testing.T) {
	f := newFakeServer(t)
	f.authMethods = []string{"client_secret_post"}
	c := setup(t, f, &config.OAuth{ClientID: "cid", CallbackPort: mustFreePort(t)})
	c.opts.ClientSecret = "pw"
	if _, err := c.run(t); err != nil {
		t.Fatal(err)
	}
	if f.tokenForms[0].Get("client_secret") != "pw" || f.basicUsers[0] != "" {
		t.Fatal("client_secret_post not used")
	}
}

func mustFreePort(t *testing.T) int {
	p, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSignInDiscoveryVariants(t *testing.T) {
	cases := []struct {
		name  string
		knobs func(*fakeServer)
		check func(*testing.T, *fakeServer)
	}{
		{"well-known path, no resource_metadata in the challenge", func(f *fakeServer) { f.noChallengeURL = true }, nil},
		{"issuer with a path: RFC 8414 path-aware location", func(f *fakeServer) { f.issuerPath = "/tenant1" }, nil},
		{"OpenID configuration only", func(f *fakeServer) { f.oidcOnly = true; f.issuerPath = "/realm" }, nil},
		{"no PRM: 2025-03-26 fallback to the origin's metadata", func(f *fakeServer) { f.noPRM = true; f.noChallengeURL = true }, func(t *testing.T, f *fakeServer) {
			if f.authQueries[0].Get("resource") != f.serverURL() {
				t.Fatal("resource is not the server URL")
			}
		}},
		{"no PRM: the origin's metadata names a same-origin issuer with a path", func(f *fakeServer) {
			f.noPRM, f.noChallengeURL, f.metaIssuer, f.issSupported, f.sendIss = true, true, f.URL()+"/oauth", false, ""
		}, nil},
		{"PRM names the origin-wide resource", func(f *fakeServer) { f.prmResource = f.URL() + "/" }, func(t *testing.T, f *fakeServer) {
			if f.authQueries[0].Get("resource") != f.URL()+"/" {
				t.Fatal("resource is not the PRM's")
			}
		}},
		{"scope from scopes_supported", func(f *fakeServer) { f.prmScopes = []string{"a", "b"} }, func(t *testing.T, f *fakeServer) {
			if f.authQueries[0].Get("scope") != "a b" {
				t.Fatal(f.authQueries[0].Get("scope"))
			}
		}},
		{"scope from the challenge of a server that answers initialize without a token", func(f *fakeServer) {
			f.openInitialize, f.challengeScope, f.prmScopes = true, "basic", []string{"profile"}
		}, func(t *testing.T, f *fakeServer) {
			if got := f.authQueries[0].Get("scope"); got != "basic" {
				t.Fatalf("scope %q, want the challenge's", got)
			}
			if f.mcpMethods[0] != "server/discover" {
				t.Fatalf("probed with %q first", f.mcpMethods[0])
			}
		}},
		{"no scope anywhere: omitted", func(f *fakeServer) {}, func(t *testing.T, f *fakeServer) {
			if _, ok := f.authQueries[0]["scope"]; ok {
				t.Fatal("scope sent")
			}
		}},
		{"iss not sent and not advertised", func(f *fakeServer) { f.issSupported = false; f.sendIss = "" }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeServer(t)
			tc.knobs(f)
			c := setup(t, f, nil)
			if _, err := c.run(t); err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, f)
			}
		})
	}
}

// Every refusal names its reason and leaves no file behind
// (docs/reference/mcp.md, "Sign-in").
func TestSignInRefusals(t *testing.T) {
	cases := []struct {
		name   string
		knobs  func(*fakeServer, *signInCase)
		reason string
	}{
		{"PRM names another server", func(f *fakeServer, _ *signInCase) { f.prmResource = "https://other.example/mcp" }, "not this server"},
		{"PRM names a sibling path", func(f *fakeServer, _ *signInCase) { f.prmResource = f.URL() + "/mcp2" }, "not this server"},
		{"PRM without authorization servers", func(f *fakeServer, _ *signInCase) { f.prmNoAS = true }, "names no authorization server"},
		{"issuer differs", func(f *fakeServer, _ *signInCase) { f.metaIssuer = "https://evil.example" }, "names the issuer"},
		{"no PRM: the origin's metadata names an issuer elsewhere", func(f *fakeServer, _ *signInCase) {
			f.noPRM, f.noChallengeURL, f.metaIssuer = true, true, "https://evil.example"
		}, "names the issuer"},
		{"issuer differs by a trailing slash", func(f *fakeServer, _ *signInCase) { f.metaIssuer = f.URL() + "/" }, "names the issuer"},
		{"no S256", func(f *fakeServer, _ *signInCase) { f.noS256 = true }, "S256"},
		{"http token endpoint", func(f *fakeServer, _ *signInCase) { f.httpToken = true }, "not https"},
		{"no registration and no clientId", func(f *fakeServer, _ *signInCase) { f.noRegistration = true }, "no dynamic client registration"},
		{"state mismatch", func(f *fakeServer, c *signInCase) { f.badState = true; c.opts.NoBrowser = true }, "state"},
		{"iss mismatch", func(f *fakeServer, _ *signInCase) { f.sendIss = "https://evil.example" }, "names the issuer"},
		{"iss missing though advertised", func(f *fakeServer, c *signInCase) { f.sendIss = ""; c.opts.NoBrowser = true }, "lacks the iss"},
		{"access denied", func(f *fakeServer, c *signInCase) { f.authError = "access_denied"; c.opts.NoBrowser = true }, "access_denied: the user said no?[31m"},
		{"pasted address of another port", func(f *fakeServer, c *signInCase) {
			c.opts.NoBrowser = true
			c.ui.tamper = func(s string) string { return strings.Replace(s, "127.0.0.1:", "127.0.0.1:1", 1) }
		}, "not the redirect address"},
		{"pasted address with a repeated code", func(f *fakeServer, c *signInCase) {
			c.opts.NoBrowser = true
			c.ui.tamper = func(s string) string { return s + "&code=x" }
		}, "repeats the parameter code"},
		{"client secret without clientId", func(f *fakeServer, c *signInCase) { c.opts.ClientSecret = "x" }, "needs oauth.clientId"},
		{"metadata redirects", func(f *fakeServer, _ *signInCase) { f.redirectMetadata = true }, "redirect not followed"},
		{"address policy", func(f *fakeServer, c *signInCase) { c.opts.Net.Policy = netguard.Policy{} }, "address refused"},
		{"http server URL", func(f *fakeServer, c *signInCase) {
			c.opts.Server.URL.Value = strings.Replace(f.serverURL(), "https://", "http://", 1)
		}, "not https"},
		{"no oauth object", func(f *fakeServer, c *signInCase) { c.opts.Server.OAuth = nil }, "no oauth object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeServer(t)
			c := setup(t, f, nil)
			tc.knobs(f, c)
			_, err := c.run(t)
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("err = %v, want the reason %q", err, tc.reason)
			}
			if strings.ContainsAny(err.Error(), "\x1b") {
				t.Fatal("control character in the error")
			}
			entries, _ := os.ReadDir(c.store.Dir)
			if len(entries) != 0 {
				t.Fatalf("a refused sign-in left %d files", len(entries))
			}
		})
	}
}

func TestSignInBrowserDeclinedAndFailed(t *testing.T) {
	f := newFakeServer(t)
	c := setup(t, f, nil)
	c.opts.OpenBrowser = func(context.Context, string) error { return errors.New("no display") }
	if _, err := c.run(t); !errors.Is(err, ErrBrowserFailed) || !strings.Contains(err.Error(), "--no-browser") {
		t.Fatal(err)
	}
	// Declined: nothing is opened; the sign-in waits for the callback
	// until its timeout.
	c = setup(t, f, nil)
	c.ui.confirm = false
	opened := false
	c.opts.OpenBrowser = func(context.Context, string) error { opened = true; return nil }
	c.opts.CallbackTimeout = time.Millisecond
	if _, err := c.run(t); !errors.Is(err, ErrTimeout) || opened {
		t.Fatal(err, opened)
	}
}

func TestSignInCancelled(t *testing.T) {
	f := newFakeServer(t)
	c := setup(t, f, nil)
	c.ui.confirm = false
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := SignIn(ctx, c.opts); err == nil {
		t.Fatal("a cancelled sign-in succeeded")
	}
}

func TestStepUpScope(t *testing.T) {
	got, ok := StepUpScope("a b", []string{`Bearer error="insufficient_scope", scope="b c"`})
	if !ok || got != "a b c" {
		t.Fatal(got, ok)
	}
	if _, ok := StepUpScope("a b", []string{`Bearer error="insufficient_scope", scope="a"`}); ok {
		t.Fatal("nothing new, yet step-up")
	}
	if _, ok := StepUpScope("a", []string{`Bearer error="invalid_token"`}); ok {
		t.Fatal("not insufficient_scope")
	}
}

// Step-up through the public API: a 403 insufficient_scope, then a
// sign-in for the union of scopes.
func TestStepUpSignIn(t *testing.T) {
	f := newFakeServer(t)
	f.challengeScope = "read"
	f.requiredScope = "write"
	c := setup(t, f, nil)
	if _, err := c.run(t); err != nil {
		t.Fatal(err)
	}
	src := NewSource(c.store, IdentityOf(c.opts.Server), SourceOptions{Net: f.net()})
	resp, err := src.HTTPClient().Post(f.serverURL(), "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatal(resp.StatusCode)
	}
	scope, ok := StepUpScope("read", resp.Header.Values("WWW-Authenticate"))
	if !ok || scope != "read write" {
		t.Fatal(scope)
	}
	c.opts.Scope = scope
	if _, err := c.run(t); err != nil {
		t.Fatal(err)
	}
	src.Reload()
	resp, err = src.HTTPClient().Post(f.serverURL(), "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || f.authQueries[1].Get("scope") != "read write" {
		t.Fatal(resp.StatusCode, f.authQueries[1].Get("scope"))
	}
}

func TestCredentialDirModes(t *testing.T) {
	f := newFakeServer(t)
	c := setup(t, f, nil)
	if _, err := c.run(t); err != nil {
		t.Fatal(err)
	}
	di, _ := os.Stat(c.store.Dir)
	entries, _ := os.ReadDir(c.store.Dir)
	if di.Mode().Perm() != 0o700 || len(entries) != 1 {
		t.Fatal(di.Mode(), len(entries))
	}
	fi, _ := os.Stat(filepath.Join(c.store.Dir, entries[0].Name()))
	if fi.Mode().Perm() != 0o600 {
		t.Fatal(fi.Mode())
	}
	// Another identity under the same name does not see the tokens.
	other := IdentityOf(c.opts.Server)
	other.Scope = "project"
	if _, err := c.store.Load(other); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}
