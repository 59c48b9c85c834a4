package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"agent/internal/quote"
	"agent/internal/strictjson"
)

// Token endpoint authentication methods (RFC 7591 §2; OAuth 2.1).
const (
	AuthNone        = "none"
	AuthSecretBasic = "client_secret_basic"
	AuthSecretPost  = "client_secret_post"
)

// TokenResponse is a successful token endpoint answer (RFC 6749 §5.1).
type TokenResponse struct {
	AccessToken  string
	TokenType    string
	RefreshToken string
	ExpiresIn    int64 // seconds; 0 when absent
	Scope        string
}

// String redacts the tokens (CONTRIBUTING.md, "Secrets").
func (t *TokenResponse) String() string {
	return fmt.Sprintf("token response (type %s, expires in %d s, scope %q)", t.TokenType, t.ExpiresIn, quote.V(t.Scope))
}

// maxExpiresIn caps expires_in so that adding it to a time cannot overflow.
const maxExpiresIn = 10 * 365 * 24 * 3600

// ParseTokenResponse parses a token endpoint answer: a JSON body with
// status 200 is a TokenResponse; an error body (RFC 6749 §5.2) or any other
// status is a *TokenError. It is pure and bounded by the caller's read.
func ParseTokenResponse(status int, contentType string, body []byte) (*TokenResponse, error) {
	if status != http.StatusOK {
		te := &TokenError{Endpoint: "token", Status: status}
		if d, err := newDocReader(body, "token error"); err == nil {
			te.Code = sanitize(d.str("error"), 64)
			te.Description = sanitize(d.str("error_description"), 200)
		}
		return nil, te
	}
	if mt, _, _ := mime.ParseMediaType(contentType); mt != "application/json" {
		return nil, fmt.Errorf("the token endpoint answered with content type %q, not application/json (RFC 6749 §5.1)", quote.V(sanitize(mt, 64)))
	}
	d, err := newDocReader(body, "token response")
	if err != nil {
		return nil, err
	}
	if code := d.str("error"); code != "" {
		return nil, &TokenError{Endpoint: "token", Status: status, Code: sanitize(code, 64), Description: sanitize(d.str("error_description"), 200)}
	}
	t := &TokenResponse{
		AccessToken:  d.str("access_token"),
		TokenType:    d.str("token_type"),
		RefreshToken: d.str("refresh_token"),
		Scope:        d.str("scope"),
	}
	if v := d.obj.Get("expires_in"); v != nil && v.Kind != strictjson.Null {
		f, ok := v.Float()
		if !ok || f < 0 || math.IsNaN(f) {
			d.fail("expires_in", "expected a non-negative number")
		} else {
			t.ExpiresIn = int64(min(f, maxExpiresIn))
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	if t.AccessToken == "" {
		return nil, errors.New("token response: field access_token is missing")
	}
	if err := checkTokenType(t.TokenType); err != nil {
		return nil, err
	}
	return t, nil
}

// checkTokenType accepts Bearer tokens only (RFC 6750; the MCP transport
// sends `Authorization: Bearer`). An absent type is taken as Bearer, as
// several servers omit it.
func checkTokenType(tt string) error {
	if tt != "" && !strings.EqualFold(tt, "bearer") {
		return fmt.Errorf("the token endpoint issued a token of type %q; only Bearer tokens are supported", quote.V(sanitize(tt, 32)))
	}
	return nil
}

// expiry turns expires_in into a time.
func expiry(now time.Time, expiresIn int64) time.Time {
	if expiresIn <= 0 {
		return time.Time{}
	}
	return now.Add(time.Duration(min(expiresIn, maxExpiresIn)) * time.Second)
}

// clientAuth adds client authentication to a token, revocation or
// refresh request (RFC 6749 §2.3.1).
func clientAuth(req *http.Request, form url.Values, method, id, secret string) {
	switch method {
	case AuthSecretBasic:
		req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	case AuthSecretPost:
		form.Set("client_id", id)
		form.Set("client_secret", secret)
	default:
		form.Set("client_id", id)
	}
}

// postForm sends a form to an endpoint recorded in the credentials and
// returns status, content type and the bounded body.
func postForm(ctx context.Context, c *http.Client, endpoint string, form url.Values, creds *Credentials) (int, string, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, nil)
	if err != nil {
		return 0, "", nil, errors.New("the endpoint URL does not parse")
	}
	clientAuth(req, form, creds.TokenAuthMethod, creds.ClientID, creds.ClientSecret)
	body := form.Encode()
	req.Body = io.NopCloser(strings.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", nil, netError(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata+1))
	if err != nil {
		return 0, "", nil, netError(err)
	}
	if len(data) > maxMetadata {
		return 0, "", nil, fmt.Errorf("the answer is larger than %d bytes", maxMetadata)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), data, nil
}

// refresh exchanges the refresh token at the token endpoint recorded with
// it, with the resource parameter (docs/reference/mcp.md, "Credentials";
// RFC 8707 §2.2; RFC 6749 §6). It returns updated credentials; a new
// refresh token replaces the old one, and the old one is kept when the
// server sends none.
func refresh(ctx context.Context, c *http.Client, creds *Credentials, now time.Time, insecure bool) (*Credentials, error) {
	if creds.RefreshToken == "" {
		return nil, fmt.Errorf("%w: the access token expired and there is no refresh token", ErrSignInRequired)
	}
	if _, err := checkURL("the recorded token endpoint", creds.TokenEndpoint, insecure); err != nil {
		return nil, err
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {creds.RefreshToken}}
	if creds.Resource != "" {
		form.Set("resource", creds.Resource)
	}
	status, ct, body, err := postForm(ctx, c, creds.TokenEndpoint, form, creds)
	if err != nil {
		return nil, fmt.Errorf("refreshing the token: %w", err)
	}
	tr, err := ParseTokenResponse(status, ct, body)
	if err != nil {
		var te *TokenError
		if errors.As(err, &te) && (te.Code == "invalid_grant" || te.Code == "invalid_client" || te.Code == "unauthorized_client") {
			return nil, fmt.Errorf("%w: %v", ErrSignInRequired, err)
		}
		return nil, fmt.Errorf("refreshing the token: %w", err)
	}
	next := *creds
	next.AccessToken = tr.AccessToken
	next.TokenType = tr.TokenType
	if tr.RefreshToken != "" {
		next.RefreshToken = tr.RefreshToken
	}
	if tr.Scope != "" {
		next.Scope = tr.Scope
	}
	next.Expiry = expiry(now, tr.ExpiresIn)
	return &next, nil
}

// revoke asks the recorded revocation endpoint to revoke one token
// (RFC 7009 §2.1). The server answers 200 also for tokens it no longer
// knows (RFC 7009 §2.2).
func revoke(ctx context.Context, c *http.Client, creds *Credentials, token, hint string, insecure bool) error {
	if _, err := checkURL("the recorded revocation endpoint", creds.RevocationEndpoint, insecure); err != nil {
		return err
	}
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	status, _, body, err := postForm(ctx, c, creds.RevocationEndpoint, form, creds)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		te := &TokenError{Endpoint: "revocation", Status: status}
		if d, err := newDocReader(body, "revocation error"); err == nil {
			te.Code = sanitize(d.str("error"), 64)
		}
		return te
	}
	return nil
}
