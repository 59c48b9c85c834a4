package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// expirySkew refreshes a token this long before it expires, so a request
// does not leave with a token that dies in flight.
const expirySkew = 30 * time.Second

// Source supplies a server's access token from the credential store,
// refreshing it at the recorded token endpoint when it has expired
// (docs/reference/mcp.md, "Credentials"). It is safe for concurrent use;
// one refresh runs at a time. It also satisfies oauth2.TokenSource.
type Source struct {
	store *Store
	id    Identity
	net   NetOptions
	now   func() time.Time

	mu     sync.Mutex
	client *http.Client
	creds  *Credentials // nil until loaded
}

// SourceOptions configure NewSource. The zero value is usable.
type SourceOptions struct {
	Net NetOptions
	Now func() time.Time // nil: time.Now
}

// NewSource returns the token source of one identity.
func NewSource(store *Store, id Identity, opts SourceOptions) *Source {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Source{store: store, id: id, net: opts.Net, now: now, client: opts.Net.client()}
}

// load reads the stored credentials; a missing file is ErrSignInRequired.
func (s *Source) load() (*Credentials, error) {
	c, err := s.store.Load(s.id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: no stored credentials for %s", ErrSignInRequired, s.id.Name)
	}
	if err != nil {
		return nil, err
	}
	if c.AccessToken == "" {
		return nil, fmt.Errorf("%w: the stored credentials for %s hold no token", ErrSignInRequired, s.id.Name)
	}
	return c, nil
}

// Reload drops the cached credentials so the next request reads the
// store: a sign-in that replaced the tokens takes effect on the running
// connection (issue rule: a re-login replaces the token in use).
func (s *Source) Reload() {
	s.mu.Lock()
	s.creds = nil
	s.mu.Unlock()
}

// Token implements oauth2.TokenSource with a 30 s bound on a refresh.
func (s *Source) Token() (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.TokenContext(ctx)
}

// TokenContext returns a valid access token, refreshing an expired one.
func (s *Source) TokenContext(ctx context.Context) (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.creds == nil {
		c, err := s.load()
		if err != nil {
			return nil, err
		}
		s.creds = c
	}
	if !s.creds.Expiry.IsZero() && !s.now().Add(expirySkew).Before(s.creds.Expiry) {
		if err := s.refreshLocked(ctx); err != nil {
			return nil, err
		}
	}
	return s.token(), nil
}

func (s *Source) token() *oauth2.Token {
	return &oauth2.Token{AccessToken: s.creds.AccessToken, TokenType: "Bearer", Expiry: s.creds.Expiry}
}

// renew is called after the server refused failed with 401: a token the
// store holds that differs from the refused one (a sign-in happened
// meanwhile) is used; otherwise the token is refreshed once.
func (s *Source) renew(ctx context.Context, failed string) (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.load()
	if err != nil {
		return nil, err
	}
	s.creds = c
	if c.AccessToken != failed {
		return s.token(), nil
	}
	if err := s.refreshLocked(ctx); err != nil {
		return nil, err
	}
	return s.token(), nil
}

// refreshLocked refreshes and stores the result. When the server refuses
// the refresh token, the stored tokens are cleared so that the sign-in
// state becomes sign-in-required.
func (s *Source) refreshLocked(ctx context.Context) error {
	next, err := refresh(ctx, s.client, s.creds, s.now(), s.net.InsecureLoopback)
	if errors.Is(err, ErrSignInRequired) {
		cleared := *s.creds
		cleared.AccessToken, cleared.RefreshToken = "", ""
		s.store.Save(s.id, &cleared) //nolint:errcheck // the refusal is what the caller needs
		s.creds = nil
		return err
	}
	if err != nil {
		return err
	}
	if err := s.store.Save(s.id, next); err != nil {
		return fmt.Errorf("storing the refreshed token: %w", err)
	}
	s.creds = next
	return nil
}

// Transport is an http.RoundTripper for the MCP HTTP transport: it sends
// the access token as a Bearer header (RFC 6750 §2.1), refreshes an
// expired token before sending, and after a 401 renews the token once and
// retries a request whose body can be replayed. A 403 (insufficient
// scope) is returned as is: more scope needs the user (StepUpScope).
type Transport struct {
	Source *Source
	// Base sends the requests; nil means a transport of the default
	// address policy (never http.DefaultTransport, which uses a proxy).
	Base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = t.Source.client.Transport
	}
	tok, err := t.Source.TokenContext(req.Context())
	if err != nil {
		closeBody(req)
		return nil, err
	}
	r1 := req.Clone(req.Context())
	tok.SetAuthHeader(r1)
	resp, err := base.RoundTrip(r1)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	if req.Body != nil && req.GetBody == nil {
		return resp, nil // cannot replay the body
	}
	tok2, rerr := t.Source.renew(req.Context(), tok.AccessToken)
	if rerr != nil {
		return resp, nil // the caller sees the 401 and its challenge
	}
	r2 := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return resp, nil
		}
		r2.Body = body
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) //nolint:errcheck // draining to reuse the connection
	resp.Body.Close()
	tok2.SetAuthHeader(r2)
	return base.RoundTrip(r2)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// HTTPClient returns a client for the MCP HTTP transport that dials
// through the address policy, follows no redirects and authorizes every
// request with the source's token.
func (s *Source) HTTPClient() *http.Client {
	return &http.Client{Transport: &Transport{Source: s}, CheckRedirect: s.client.CheckRedirect}
}
