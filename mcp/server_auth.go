package mcp

// Authentication of the HTTP serving modes (docs/reference/mcp.md,
// "Loopback HTTP mode", "Remote mode" and "Access-token verification"): a
// bearer token from the token file on loopback, and an OAuth resource
// server (RFC 9728 metadata, RFC 6750 challenges, RFC 9068 access tokens
// verified by internal/jose) in remote mode.

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"agent/internal/jose"
	"agent/internal/throttle"
)

// NewServeToken returns a fresh loopback token: 32 random bytes, base64url
// without padding (docs/reference/mcp.md, "Loopback HTTP mode").
func NewServeToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("mcp: generating the token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// bearerToken returns the token of the request's one Authorization header
// with the Bearer scheme (RFC 6750 §2.1; the scheme is case-insensitive),
// and whether there was any Authorization header at all.
func bearerToken(r *http.Request) (token string, sent bool) {
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		return "", false
	}
	if len(vals) > 1 {
		return "", true
	}
	scheme, tok, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", true
	}
	tok = strings.TrimLeft(tok, " ")
	if tok == "" || strings.ContainsAny(tok, " \t") {
		return "", true
	}
	return tok, true
}

// BearerAuth admits requests that carry the loopback token, compared in
// constant time. Its String never shows the token.
type BearerAuth struct {
	token []byte
}

// NewBearerAuth returns the Authenticator of token.
func NewBearerAuth(token string) (*BearerAuth, error) {
	if len(token) < 32 {
		return nil, errors.New("mcp: the bearer token is too short")
	}
	return &BearerAuth{token: []byte(token)}, nil
}

func (a *BearerAuth) String() string { return "BearerAuth{token: [redacted]}" }

// Admit implements Authenticator: 401 with a Bearer challenge unless the
// request carries the token.
func (a *BearerAuth) Admit(r *http.Request) *Refusal {
	tok, _ := bearerToken(r)
	if tok != "" && subtle.ConstantTimeCompare([]byte(tok), a.token) == 1 {
		return nil
	}
	return &Refusal{Status: http.StatusUnauthorized, Header: http.Header{"Www-Authenticate": {"Bearer"}}}
}

// TokenVerifier checks an access token; *jose.Verifier is one. It must be
// safe for concurrent use.
type TokenVerifier interface {
	Verify(ctx context.Context, token string) (*jose.Claims, error)
}

// Throttle defaults (docs/reference/mcp.md, "Failure throttle": more than
// 20 failed requests from one client within 60 s get 429;
// internal/throttle).
const (
	DefaultMaxFailures    = throttle.DefaultMaxFailures
	DefaultFailureWindow  = throttle.DefaultWindow
	DefaultMaxThrottled   = 4096
	protectedResourcePath = "/.well-known/oauth-protected-resource"
)

// RemoteAuthOptions configures remote mode. PublicURL, Issuer, Scopes and
// Subjects are required (the four remote flags go together:
// docs/reference/mcp.md, "agent mcp serve"); the rest default.
type RemoteAuthOptions struct {
	PublicURL string   // https; its path is the endpoint, and it is the token audience
	Issuer    string   // https; tokens must come from it
	Scopes    []string // every token must carry all of them
	Subjects  []string // the admitted token subjects
	// TrustedProxies are the addresses whose X-Forwarded-For is believed
	// when telling clients apart for the failure throttle.
	TrustedProxies []netip.Addr
	// Verifier checks tokens; nil builds a jose.Verifier whose keys come
	// from the issuer's metadata, fetched with HTTPClient (nil: a client of
	// jose's own). The issuer is the operator's, so its fetches are not
	// subject to the MCP address policy (docs/reference/mcp.md, "Address
	// policy").
	Verifier   TokenVerifier
	HTTPClient *http.Client
	// MaxFailures, FailureWindow and MaxAddresses shape the throttle
	// (internal/throttle); 0 means 20, 60 s and 4096 clients remembered.
	MaxFailures   int
	FailureWindow time.Duration
	MaxAddresses  int
	Now           func() time.Time
	// OnRefusal, when set, hears of each refused request: the client
	// address and the status (never the token).
	OnRefusal func(addr string, status int, err error)
}

// RemoteAuth is the OAuth resource server of remote mode: an
// Authenticator, and the handler of its protected-resource metadata.
type RemoteAuth struct {
	opts        RemoteAuthOptions
	public      *url.URL
	endpoint    string
	metaPath    string
	metaURL     string
	metadata    []byte
	verifier    TokenVerifier
	scopeString string

	failures *throttle.Throttle
}

// ErrRemoteFlags is wrapped by NewRemoteAuth when a required option is
// missing, with its remedy (docs/reference/mcp.md, "agent mcp serve").
var ErrRemoteFlags = errors.New("remote authorization requires the four flags together: pass all of --http-public-url, --oauth-issuer, --oauth-scopes, --oauth-allowed-subjects")

// NewRemoteAuth checks the options and prepares the verifier; it fetches
// nothing.
func NewRemoteAuth(opts RemoteAuthOptions) (*RemoteAuth, error) {
	if opts.PublicURL == "" || opts.Issuer == "" || len(opts.Scopes) == 0 || len(opts.Subjects) == 0 {
		return nil, ErrRemoteFlags
	}
	u, err := url.Parse(opts.PublicURL)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(opts.PublicURL, "#") {
		return nil, errors.New("--http-public-url must be an https URL without user info, query or fragment")
	}
	for _, s := range opts.Scopes {
		if s == "" || strings.ContainsAny(s, " \"\\") || !printableASCII(s) {
			return nil, errors.New("--oauth-scopes: each scope must be non-empty printable ASCII without spaces, quotes or backslashes (RFC 6749 §3.3)")
		}
	}
	for _, s := range opts.Subjects {
		if s == "" {
			return nil, errors.New("--oauth-allowed-subjects: empty subject")
		}
	}
	if opts.MaxFailures <= 0 {
		opts.MaxFailures = DefaultMaxFailures
	}
	if opts.FailureWindow <= 0 {
		opts.FailureWindow = DefaultFailureWindow
	}
	if opts.MaxAddresses <= 0 {
		opts.MaxAddresses = DefaultMaxThrottled
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	a := &RemoteAuth{opts: opts, public: u, scopeString: strings.Join(opts.Scopes, " "),
		failures: throttle.New(throttle.Options{MaxFailures: opts.MaxFailures, Window: opts.FailureWindow, MaxAddrs: opts.MaxAddresses, Now: opts.Now})}
	a.endpoint = u.EscapedPath()
	if a.endpoint == "" {
		a.endpoint = "/"
	}
	// RFC 9728 §3.1: the well-known segment goes between the host and the
	// resource's path.
	a.metaPath = protectedResourcePath
	if a.endpoint != "/" {
		a.metaPath += a.endpoint
	}
	a.metaURL = "https://" + u.Host + a.metaPath
	a.metadata, err = json.Marshal(map[string]any{
		"resource":                 opts.PublicURL,
		"authorization_servers":    []string{opts.Issuer},
		"scopes_supported":         opts.Scopes,
		"bearer_methods_supported": []string{"header"},
	})
	if err != nil {
		return nil, err
	}
	a.verifier = opts.Verifier
	if a.verifier == nil {
		keys, err := jose.NewRemoteKeys(opts.Issuer, jose.RemoteOptions{Client: opts.HTTPClient})
		if err != nil {
			return nil, fmt.Errorf("--oauth-issuer: %w", err)
		}
		v, err := jose.NewVerifier(jose.Options{Issuer: opts.Issuer, Audience: opts.PublicURL, Scopes: opts.Scopes, Subjects: opts.Subjects, Keys: keys, Now: opts.Now})
		if err != nil {
			return nil, err
		}
		a.verifier = v
	}
	return a, nil
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// Endpoint is the MCP endpoint's path: the public URL's.
func (a *RemoteAuth) Endpoint() string { return a.endpoint }

// MetadataPath is where the protected-resource metadata is served.
func (a *RemoteAuth) MetadataPath() string { return a.metaPath }

// MetadataURL is the metadata's public address, named in challenges.
func (a *RemoteAuth) MetadataURL() string { return a.metaURL }

// Host is the Host header requests must carry: the public URL's (a fronting
// proxy preserves Host, docs/reference/mcp.md, "Remote mode").
func (a *RemoteAuth) Host() string { return a.public.Host }

// Origin is the only Origin a browser request may carry.
func (a *RemoteAuth) Origin() string { return "https://" + a.public.Host }

// ServeHTTP serves the protected-resource metadata (RFC 9728 §3.2).
func (a *RemoteAuth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		refuse(w, http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(a.metadata)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		w.Write(a.metadata) //nolint:errcheck // a client that went away reads nothing
	}
}

// challenge builds a WWW-Authenticate value (RFC 6750 §3, RFC 9728 §5.1).
func (a *RemoteAuth) challenge(errCode string) string {
	var b strings.Builder
	b.WriteString("Bearer ")
	switch errCode {
	case "invalid_token":
		b.WriteString(`error="invalid_token", `)
	case "insufficient_scope":
		b.WriteString(`error="insufficient_scope", scope="` + a.scopeString + `", `)
	}
	b.WriteString(`resource_metadata="` + a.metaURL + `"`)
	return b.String()
}

// ClientAddr is the address the throttle counts a request against: the
// peer, or, when the peer is a trusted proxy, the nearest address in
// X-Forwarded-For that is not one (the entries a client wrote itself come
// first, so the list is read from the right).
func (a *RemoteAuth) ClientAddr(r *http.Request) netip.Addr {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	var addr netip.Addr
	if err == nil {
		addr = peer.Addr().Unmap()
	} else if host, _, herr := net.SplitHostPort(r.RemoteAddr); herr == nil {
		addr, _ = netip.ParseAddr(host)
		addr = addr.Unmap()
	}
	if !a.trusted(addr) {
		return addr
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		h, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return addr // a malformed hop: believe nothing beyond it
		}
		h = h.Unmap()
		if !a.trusted(h) {
			return h
		}
	}
	return addr
}

func (a *RemoteAuth) trusted(addr netip.Addr) bool {
	for _, p := range a.opts.TrustedProxies {
		if p.Unmap() == addr {
			return true
		}
	}
	return false
}

// Admit implements Authenticator (docs/reference/mcp.md, "Remote mode"):
// 401 with a challenge for a missing or invalid token; 403
// insufficient_scope for a missing scope; 403 for a subject not admitted;
// 503 when the issuer's keys cannot be had. To an address over the failure
// limit, 429 takes the place of a 401 or 403: the throttle answers failing
// requests only, and a request whose token verifies is admitted whatever
// failed before it from the same address (behind a proxy, everybody's).
func (a *RemoteAuth) Admit(r *http.Request) *Refusal {
	addr := a.ClientAddr(r)
	var ref *Refusal
	var err error
	if tok, sent := bearerToken(r); tok == "" {
		code := ""
		if sent {
			code = "invalid_token"
		}
		ref = &Refusal{Status: http.StatusUnauthorized, Header: http.Header{"Www-Authenticate": {a.challenge(code)}}}
	} else {
		_, err = a.verifier.Verify(r.Context(), tok)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, jose.KeysUnavailable):
			// The issuer cannot be reached: not the client's failure.
			a.report(addr, http.StatusServiceUnavailable, err)
			return &Refusal{Status: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {"30"}}}
		case errors.Is(err, jose.MissingScope):
			ref = &Refusal{Status: http.StatusForbidden, Header: http.Header{"Www-Authenticate": {a.challenge("insufficient_scope")}}}
		case errors.Is(err, jose.PrincipalNotAllowed):
			ref = &Refusal{Status: http.StatusForbidden}
		default:
			ref = &Refusal{Status: http.StatusUnauthorized, Header: http.Header{"Www-Authenticate": {a.challenge("invalid_token")}}}
		}
	}
	if wait, _ := a.failures.Blocked(addr); wait > 0 {
		secs := int((wait + time.Second - 1) / time.Second)
		a.report(addr, http.StatusTooManyRequests, nil)
		return &Refusal{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {strconv.Itoa(secs)}}}
	}
	a.failures.Fail(addr)
	a.report(addr, ref.Status, err)
	return ref
}

func (a *RemoteAuth) report(addr netip.Addr, status int, err error) {
	if a.opts.OnRefusal != nil {
		a.opts.OnRefusal(addr.String(), status, err)
	}
}
