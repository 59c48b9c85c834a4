package jose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"agent/internal/strictjson"
)

// Defaults for RemoteOptions fields left at zero.
const (
	DefaultFetchTimeout = 10 * time.Second
	DefaultMaxDocument  = 256 << 10 // bytes per metadata or JWKS document
	DefaultMinInterval  = 30 * time.Second
	DefaultMaxAge       = time.Hour
)

// staleLimit is how long a key set is still used while every refresh
// fails: the issuer being down for a moment should not stop all traffic,
// but a key it has withdrawn must not stay trusted for ever.
const staleLimit = 24 * time.Hour

// RemoteOptions configures a RemoteKeys. The zero value is the default.
type RemoteOptions struct {
	// Client makes the requests; nil means a client of our own. Redirects
	// are never followed either way (docs/reference/mcp.md, "Access-token
	// verification").
	Client *http.Client
	// Timeout bounds one refresh, metadata and JWKS together; 0 means
	// DefaultFetchTimeout.
	Timeout time.Duration
	// MaxBytes bounds each document read; 0 means DefaultMaxDocument.
	MaxBytes int64
	// MinInterval is the least time between two fetches caused by tokens
	// (an unknown kid, or a failed fetch being retried); 0 means
	// DefaultMinInterval, the 30 s of docs/reference/mcp.md, "Access-token
	// verification".
	MinInterval time.Duration
	// MaxAge is how old a key set may grow before the next token refreshes
	// it; 0 means DefaultMaxAge.
	MaxAge time.Duration
}

// RemoteKeys is the KeySource of an issuer: it discovers the issuer's
// jwks_uri from its RFC 8414 metadata, or failing that its OpenID Connect
// discovery document, and caches the key set.
//
// A token whose key is not in the set causes one refetch, at most once per
// MinInterval; concurrent callers share one fetch. The fetch runs in a
// goroutine of its own, bounded by Timeout, so a caller that gives up does
// not cancel it for the others. RemoteKeys is safe for concurrent use.
type RemoteKeys struct {
	issuer   string
	metaURLs []string // RFC 8414 first, then OpenID Connect discovery
	client   *http.Client
	timeout  time.Duration
	maxBytes int64
	minIntvl time.Duration
	maxAge   time.Duration

	mu        sync.Mutex
	set       *KeySet   // last good set, nil before the first success
	fetched   time.Time // when set was fetched
	attempted time.Time // when the last fetch started
	lastErr   error     // the last fetch's failure, nil after a success
	inflight  *fetchCall
}

type fetchCall struct {
	done chan struct{} // closed when set and err are final
	set  *KeySet
	err  error
}

// NewRemoteKeys checks the issuer identifier and prepares the cache; it does
// not fetch. The issuer must be an https URL without user info, query or
// fragment (RFC 8414 §2).
func NewRemoteKeys(issuer string, opts RemoteOptions) (*RemoteKeys, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil, fmt.Errorf("jose: issuer: %w", err)
	}
	if u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(issuer, "#") {
		return nil, errors.New("jose: issuer must be an https URL without user info, query or fragment")
	}
	// RFC 8414 §3: the well-known segment goes between the host and the
	// issuer's path, with any terminating "/" removed. OpenID Connect
	// Discovery §4 appends its segment to the issuer instead.
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	origin := "https://" + u.Host
	r := &RemoteKeys{
		issuer: issuer,
		metaURLs: []string{
			origin + "/.well-known/oauth-authorization-server" + path,
			origin + path + "/.well-known/openid-configuration",
		},
		timeout:  opts.Timeout,
		maxBytes: opts.MaxBytes,
		minIntvl: opts.MinInterval,
		maxAge:   opts.MaxAge,
	}
	if r.timeout <= 0 {
		r.timeout = DefaultFetchTimeout
	}
	if r.maxBytes <= 0 {
		r.maxBytes = DefaultMaxDocument
	}
	if r.minIntvl <= 0 {
		r.minIntvl = DefaultMinInterval
	}
	if r.maxAge <= 0 {
		r.maxAge = DefaultMaxAge
	}
	c := opts.Client
	if c == nil {
		c = &http.Client{Timeout: r.timeout}
	}
	nc := *c // our copy: the caller's client keeps its own redirect policy
	nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	r.client = &nc
	return r, nil
}

// Key returns the key for kid and alg from the cached set. It waits for a
// fetch when there is no set yet (or the last is past its 24 h limit), and
// for one refetch when the key is unknown and the last fetch is at least
// MinInterval old; a set older than MaxAge answers at once while a refresh
// runs behind it.
func (r *RemoteKeys) Key(ctx context.Context, kid string, alg Algorithm) (*Key, error) {
	set, err := r.current(ctx)
	if err != nil {
		return nil, err
	}
	k, err := set.Key(ctx, kid, alg)
	if ReasonOf(err) != UnknownKey {
		return k, err
	}
	// The issuer may have rotated its keys since the set was fetched.
	newer, err2 := r.refetch(ctx, set)
	if err2 != nil {
		return nil, err2
	}
	if newer == set {
		return nil, err
	}
	return newer.Key(ctx, kid, alg)
}

// Refresh fetches the key set now, joining a fetch in flight; unlike the
// fetches tokens cause it is not limited by MinInterval. Callers use it to
// check an issuer at start-up.
func (r *RemoteKeys) Refresh(ctx context.Context) error {
	r.mu.Lock()
	call := r.startLocked(ctx)
	r.mu.Unlock()
	_, err := r.wait(ctx, call)
	return err
}

// current returns a set fit for use, fetching if needed.
func (r *RemoteKeys) current(ctx context.Context) (*KeySet, error) {
	r.mu.Lock()
	now := time.Now()
	if r.set != nil && now.Sub(r.fetched) < r.maxAge {
		set := r.set
		r.mu.Unlock()
		return set, nil
	}
	if r.set != nil && now.Sub(r.fetched) < staleLimit {
		// Old but still within staleLimit: answer from it and refresh
		// behind it, so the token that finds the set an hour old does
		// not wait up to Timeout on the issuer. A failed refresh is tried
		// again no sooner than MinInterval. Only the first fetch, and
		// the refetch for an unknown kid, make a caller wait.
		if r.inflight == nil && now.Sub(r.attempted) >= r.minIntvl {
			r.startLocked(ctx)
		}
		set := r.set
		r.mu.Unlock()
		return set, nil
	}
	call := r.inflight
	if call == nil && !r.attempted.IsZero() && now.Sub(r.attempted) < r.minIntvl {
		// No usable set, and a fetch failed a moment ago: do not hammer
		// the issuer.
		set, err := r.staleLocked(now)
		r.mu.Unlock()
		return set, err
	}
	if call == nil {
		call = r.startLocked(ctx)
	}
	r.mu.Unlock()
	set, err := r.wait(ctx, call)
	if err == nil {
		return set, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if stale, serr := r.staleLocked(time.Now()); serr == nil {
		return stale, nil
	}
	return nil, err
}

// staleLocked returns the last good set while it is within staleLimit, or
// the last failure.
func (r *RemoteKeys) staleLocked(now time.Time) (*KeySet, error) {
	if r.set != nil && now.Sub(r.fetched) < staleLimit {
		return r.set, nil
	}
	err := r.lastErr
	if err == nil {
		err = errors.New("key set expired")
	}
	return nil, &Error{Reason: KeysUnavailable, Msg: "issuer keys", Err: err}
}

// refetch fetches a set newer than seen, unless one already arrived or the
// last fetch is too recent; it returns seen when there is nothing newer.
func (r *RemoteKeys) refetch(ctx context.Context, seen *KeySet) (*KeySet, error) {
	r.mu.Lock()
	if r.set != seen && r.set != nil {
		set := r.set
		r.mu.Unlock()
		return set, nil
	}
	call := r.inflight
	if call == nil {
		if time.Since(r.attempted) < r.minIntvl {
			r.mu.Unlock()
			return seen, nil
		}
		call = r.startLocked(ctx)
	}
	r.mu.Unlock()
	set, err := r.wait(ctx, call)
	if err != nil {
		// The key may be new and the issuer unreachable: say so (503)
		// rather than call the token's key unknown (401).
		return nil, err
	}
	return set, nil
}

// startLocked starts a fetch, or joins the one in flight.
func (r *RemoteKeys) startLocked(ctx context.Context) *fetchCall {
	if r.inflight != nil {
		return r.inflight
	}
	call := &fetchCall{done: make(chan struct{})}
	r.inflight = call
	r.attempted = time.Now()
	// The fetch outlives the caller that started it (others may be
	// waiting), so it keeps ctx's values but not its cancellation; its own
	// timeout ends it.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.timeout)
	go func() {
		defer cancel()
		set, err := r.load(fctx)
		r.mu.Lock()
		if err == nil {
			r.set, r.fetched, r.lastErr = set, time.Now(), nil
		} else {
			r.lastErr = err
		}
		r.inflight = nil
		r.mu.Unlock()
		call.set, call.err = set, err
		close(call.done)
	}()
	return call
}

func (r *RemoteKeys) wait(ctx context.Context, call *fetchCall) (*KeySet, error) {
	select {
	case <-call.done:
	case <-ctx.Done():
		return nil, &Error{Reason: KeysUnavailable, Msg: "waiting for issuer keys", Err: ctx.Err()}
	}
	if call.err != nil {
		return nil, &Error{Reason: KeysUnavailable, Msg: "issuer keys", Err: call.err}
	}
	return call.set, nil
}

// load discovers the jwks_uri and fetches the key set.
func (r *RemoteKeys) load(ctx context.Context) (*KeySet, error) {
	jwksURI, err := r.discover(ctx)
	if err != nil {
		return nil, err
	}
	body, err := r.get(ctx, jwksURI)
	if err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	set, err := ParseJWKS(body)
	if err != nil {
		return nil, err
	}
	if len(set.keys) == 0 {
		return nil, errors.New("JWKS has no usable key")
	}
	return set, nil
}

// discover tries each metadata location in turn. Any failure of the RFC
// 8414 document moves on to OpenID discovery: both are checked alike, so a
// fallback cannot admit a document the first would have refused.
func (r *RemoteKeys) discover(ctx context.Context) (string, error) {
	var errs []error
	for _, u := range r.metaURLs {
		body, err := r.get(ctx, u)
		if err == nil {
			var uri string
			if uri, err = parseMetadata(body, r.issuer); err == nil {
				return uri, nil
			}
		}
		errs = append(errs, fmt.Errorf("metadata %s: %w", u, err))
		if ctx.Err() != nil {
			break
		}
	}
	return "", errors.Join(errs...)
}

// parseMetadata reads issuer and jwks_uri from authorization server
// metadata (RFC 8414 §2, §3.3) or an OpenID provider configuration. Unknown
// members are allowed; duplicate keys are not.
func parseMetadata(body []byte, issuer string) (string, error) {
	v, err := strictjson.Parse(body, strictjson.Options{MaxDepth: 16})
	if err != nil {
		return "", err
	}
	if v.Kind != strictjson.Object {
		return "", errors.New("not a JSON object")
	}
	if n := caseVariant(v, []string{"issuer", "jwks_uri"}); n != "" {
		return "", errors.New("case variant of " + n)
	}
	iss, ok := optionalString(v, "issuer")
	// RFC 8414 §3.3: the issuer must be identical to the one configured,
	// or the metadata must not be used (it may be another issuer's).
	if !ok || iss != issuer {
		return "", errors.New("issuer does not match the configured issuer")
	}
	uri, ok := optionalString(v, "jwks_uri")
	if !ok || uri == "" {
		return "", errors.New("jwks_uri missing")
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return "", errors.New("jwks_uri is not an https URL")
	}
	return uri, nil
}

// get fetches one document over https, without following redirects, and
// reads at most maxBytes of it.
func (r *RemoteKeys) get(ctx context.Context, rawURL string) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "https" {
		return nil, errors.New("not an https URL")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			return nil, fmt.Errorf("HTTP %d: redirects are not followed", resp.StatusCode)
		}
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, r.maxBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > r.maxBytes {
		return nil, fmt.Errorf("document over %d bytes", r.maxBytes)
	}
	return body, nil
}
