package oauth

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"strings"
	"testing"
	"time"
)

func signedIn(t *testing.T, f *fakeServer) *signInCase {
	t.Helper()
	c := setup(t, f, nil)
	if _, err := c.run(t); err != nil {
		t.Fatal(err)
	}
	return c
}

func post(t *testing.T, c *http.Client, u string) int {
	t.Helper()
	resp, err := c.Post(u, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestTransportBearerAndRefreshOnExpiry(t *testing.T) {
	f := newFakeServer(t)
	c := signedIn(t, f)
	id := IdentityOf(c.opts.Server)
	creds, _ := c.store.Load(id)
	now := time.Now()
	src := NewSource(c.store, id, SourceOptions{Net: f.net(), Now: func() time.Time { return now }})
	if post(t, src.HTTPClient(), f.serverURL()) != 200 {
		t.Fatal("not authorized")
	}
	if got := f.mcpAuth[len(f.mcpAuth)-1]; got != "Bearer "+creds.AccessToken {
		t.Fatal("bearer not sent")
	}
	// After expiry the token is refreshed at the recorded endpoint, with
	// the resource, before the request leaves.
	now = creds.Expiry.Add(time.Second)
	if post(t, src.HTTPClient(), f.serverURL()) != 200 {
		t.Fatal("not authorized after refresh")
	}
	form := f.tokenForms[len(f.tokenForms)-1]
	if form.Get("grant_type") != "refresh_token" || form.Get("resource") != f.serverURL() || form.Get("refresh_token") != creds.RefreshToken {
		t.Fatalf("refresh form %v", form)
	}
	next, _ := c.store.Load(id)
	if next.AccessToken == creds.AccessToken || next.RefreshToken == creds.RefreshToken {
		t.Fatal("refreshed tokens not stored")
	}
}

func TestTransportRefreshOnceOn401(t *testing.T) {
	f := newFakeServer(t)
	c := signedIn(t, f)
	id := IdentityOf(c.opts.Server)
	creds, _ := c.store.Load(id)
	src := NewSource(c.store, id, SourceOptions{Net: f.net()})
	// The server forgets the access token: 401, refresh, retry.
	f.mu.Lock()
	delete(f.tokens, creds.AccessToken)
	f.mu.Unlock()
	n := len(f.mcpAuth)
	if post(t, src.HTTPClient(), f.serverURL()) != 200 {
		t.Fatal("no retry after refresh")
	}
	if len(f.mcpAuth)-n != 2 {
		t.Fatalf("%d requests, want 2", len(f.mcpAuth)-n)
	}
	// The refresh token is refused too: one refresh attempt, the 401 goes
	// back to the caller, and the state becomes sign-in-required.
	f.mu.Lock()
	f.tokens = map[string]string{}
	f.refreshRefused = true
	f.mu.Unlock()
	forms := len(f.tokenForms)
	if got := post(t, src.HTTPClient(), f.serverURL()); got != 401 {
		t.Fatal(got)
	}
	if len(f.tokenForms)-forms != 1 {
		t.Fatalf("%d refreshes, want 1", len(f.tokenForms)-forms)
	}
	if st, _ := c.store.State(id, time.Now()); st != SignInRequired {
		t.Fatal(st)
	}
	if _, err := src.TokenContext(context.Background()); !errors.Is(err, ErrSignInRequired) {
		t.Fatal(err)
	}
}

// A sign-in that replaces the stored token takes over the running
// connection: after a 401 the stored token is used, with no refresh.
func TestTransportPicksUpReLogin(t *testing.T) {
	f := newFakeServer(t)
	c := signedIn(t, f)
	id := IdentityOf(c.opts.Server)
	src := NewSource(c.store, id, SourceOptions{Net: f.net()})
	if post(t, src.HTTPClient(), f.serverURL()) != 200 {
		t.Fatal()
	}
	old, _ := c.store.Load(id)
	if _, err := c.run(t); err != nil { // sign in again
		t.Fatal(err)
	}
	f.mu.Lock()
	delete(f.tokens, old.AccessToken)
	f.mu.Unlock()
	forms := len(f.tokenForms)
	if post(t, src.HTTPClient(), f.serverURL()) != 200 {
		t.Fatal("the new token was not used")
	}
	if len(f.tokenForms) != forms {
		t.Fatal("refreshed instead of using the new token")
	}
}

func TestTransportNotSignedIn(t *testing.T) {
	f := newFakeServer(t)
	store := NewStore(t.TempDir())
	src := NewSource(store, IdentityOf(f.def(nil)), SourceOptions{Net: f.net()})
	_, err := src.HTTPClient().Post(f.serverURL(), "application/json", strings.NewReader("{}"))
	if !errors.Is(err, ErrSignInRequired) {
		t.Fatal(err)
	}
}

// Refresh goes only to the recorded token endpoint, which must be https.
func TestRefreshRecordedEndpointOnly(t *testing.T) {
	f := newFakeServer(t)
	c := signedIn(t, f)
	id := IdentityOf(c.opts.Server)
	creds, _ := c.store.Load(id)
	creds.TokenEndpoint = "http://127.0.0.1:1/token"
	creds.Expiry = time.Now().Add(-time.Hour)
	c.store.Save(id, creds)
	src := NewSource(c.store, id, SourceOptions{Net: f.net()})
	if _, err := src.TokenContext(context.Background()); !errors.Is(err, ErrRefused) {
		t.Fatal(err)
	}
}

func TestLogoutDeletesThenRevokes(t *testing.T) {
	f := newFakeServer(t)
	c := signedIn(t, f)
	id := IdentityOf(c.opts.Server)
	creds, _ := c.store.Load(id)
	f.onRevoke = func() {
		if _, err := c.store.Load(id); !errors.Is(err, fs.ErrNotExist) {
			t.Error("the file still existed when revocation was asked")
		}
	}
	res, err := Logout(context.Background(), c.store, id, f.net())
	if err != nil || res.RevokeErr != nil || res.Revoked != 2 {
		t.Fatal(res, err)
	}
	if len(f.revoked) != 2 || f.revoked[0] != "refresh_token:"+creds.RefreshToken || f.revoked[1] != "access_token:"+creds.AccessToken {
		t.Fatal(len(f.revoked))
	}
	if st, _ := c.store.State(id, time.Now()); st != SignedOut {
		t.Fatal(st)
	}
	if _, err := Logout(context.Background(), c.store, id, f.net()); !errors.Is(err, ErrNotSignedIn) {
		t.Fatal(err)
	}
}

func TestLogoutWithoutRevocationEndpoint(t *testing.T) {
	f := newFakeServer(t)
	f.noRevocation = true
	c := signedIn(t, f)
	res, err := Logout(context.Background(), c.store, IdentityOf(c.opts.Server), f.net())
	if err != nil || !res.NoRevocation || len(f.revoked) != 0 {
		t.Fatal(res, err)
	}
}

func TestLogoutRevocationFails(t *testing.T) {
	f := newFakeServer(t)
	c := signedIn(t, f)
	id := IdentityOf(c.opts.Server)
	creds, _ := c.store.Load(id)
	creds.RevocationEndpoint = f.URL() + "/nowhere"
	c.store.Save(id, creds)
	res, err := Logout(context.Background(), c.store, id, f.net())
	if err != nil || res.RevokeErr == nil {
		t.Fatal(res, err)
	}
	if strings.Contains(res.RevokeErr.Error(), creds.AccessToken) {
		t.Fatal("token in the error")
	}
	if st, _ := c.store.State(id, time.Now()); st != SignedOut {
		t.Fatal("local credentials kept after a failed revocation")
	}
}
