package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"agent/internal/httpguard"
	"agent/internal/jose"
	"agent/internal/quote"
	"agent/internal/throttle"
)

// Target is the session that admitted events start turns in. The events
// package defines it so that it need not know the session runtime (events
// never imports agent; README.md, "A walk through the code").
//
// SubmitExternal queues a turn for ev and returns the turn's id. The turn
// must have no tools (tool choice none), its answer must go nowhere outside
// the session, and the transcript must show it as from ev.From() with
// ev.ClaimedName marked as a claim (docs/reference/events.md, "The event's
// turn"). It is called from request goroutines, one grant at a time but
// several grants at once, and must not block for long: queue the turn, do
// not run it. Any error answers 503; wrap ErrCannotTake when the session is
// busy or closed.
type Target interface {
	SubmitExternal(ctx context.Context, ev Event) (turnID string, err error)
}

// TargetFunc adapts a function to Target.
type TargetFunc func(ctx context.Context, ev Event) (string, error)

// SubmitExternal calls f.
func (f TargetFunc) SubmitExternal(ctx context.Context, ev Event) (string, error) { return f(ctx, ev) }

// Errors callers branch on.
var (
	// ErrCannotTake is what a Target wraps when the session cannot take
	// the turn now (its queue is full, it is closing): 503.
	ErrCannotTake = errors.New("the session cannot take the turn")
	// ErrUnknownGrant: Revoke of a grant id the server does not have.
	ErrUnknownGrant = errors.New("no such grant")
)

// Options configures a Server. Grants and Target are required; every other
// zero value is the documented default.
type Options struct {
	Grants []Grant // 1 to MaxGrants, distinct ids, valid as ParseGrant would require
	// Port is the loopback port (--external-event-port); 0 lets the
	// system choose one (tests), which Listen reports.
	Port int
	// TrustedProxies are the peers whose X-Forwarded-For is believed
	// (--external-event-trusted-proxy); see ParseTrustedProxies.
	TrustedProxies []netip.Addr
	Target         Target
	// Keys returns the key source of an issuer; it is called once per
	// distinct issuer in New. nil means discovery through the issuer's
	// metadata with jose.NewRemoteKeys and HTTPClient
	// (docs/reference/mcp.md, "Access-token verification").
	Keys func(issuer string) (jose.KeySource, error)
	// HTTPClient makes the issuers' metadata and JWKS requests when Keys
	// is nil; nil means jose's own client. Redirects are never followed.
	HTTPClient *http.Client
	Audit      Auditor          // nil: no audit
	Now        func() time.Time // nil: time.Now
	// MaxTokens bounds the single-use store; 0 means
	// jose.DefaultMaxEntries. When it is full, new tokens get 503 rather
	// than live ones being forgotten (docs/reference/events.md, "Tokens and
	// single use").
	MaxTokens int
	// MaxThrottleAddrs bounds the addresses the failure throttle tracks;
	// 0 means DefaultMaxThrottleAddr.
	MaxThrottleAddrs int
	// MaxConns and MaxConnsPerAddr bound the open connections, in total
	// and per client address (trusted proxies count in the total only);
	// 0 means httpguard's defaults (256 and 64).
	MaxConns, MaxConnsPerAddr int
}

// ParseTrustedProxies reads the values of --external-event-trusted-proxy:
// each a literal IP address (docs/reference/events.md, "Starting a session
// with grants").
func ParseTrustedProxies(values []string) ([]netip.Addr, error) {
	out := make([]netip.Addr, 0, len(values))
	for _, v := range values {
		a, err := netip.ParseAddr(v)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("--external-event-trusted-proxy %q: not a literal IP address", quote.V(v))
		}
		out = append(out, a.Unmap())
	}
	return out, nil
}

// Server is the external-event endpoint. It is an http.Handler, and
// Listen and Serve run it on 127.0.0.1. Its methods are safe for
// concurrent use.
type Server struct {
	byPath  map[string]*grantState // escaped resource path → grant
	byMeta  map[string]*grantState // protected-resource metadata path → grant
	byID    map[string]*grantState
	order   []*grantState // as given
	keys    map[string]jose.KeySource
	target  atomic.Pointer[Target] // SetTarget replaces it
	audit   Auditor
	now     func() time.Time
	epoch   time.Time
	trusted map[netip.Addr]bool
	used    *jose.SingleUse
	port    int

	maxConns, maxPerAddr int
	guard                *httpguard.Guard

	thr *throttle.Throttle

	lnMu   sync.Mutex
	ln     net.Listener
	srv    *http.Server
	done   chan struct{} // closed by Close
	closed atomic.Bool
}

// grantState is a grant at run time.
type grantState struct {
	g        Grant
	verifier *jose.Verifier
	meta     []byte // the protected-resource metadata document
	metaURL  string // where it is published
	revoked  atomic.Bool

	admitted, refused atomic.Uint64

	mu           sync.Mutex // guards win and lastAdmitted; held while the Target takes a turn
	win          *window
	lastAdmitted time.Time
}

// New checks opts and builds a Server. It does no I/O: the listener is
// opened by Listen or Serve, and issuers are first asked for keys when a
// token needs them (or by Refresh).
func New(opts Options) (*Server, error) {
	if len(opts.Grants) == 0 {
		return nil, errors.New("events: no grants")
	}
	if len(opts.Grants) > MaxGrants {
		return nil, fmt.Errorf("events: at most %d grants per session, %d given", MaxGrants, len(opts.Grants))
	}
	if opts.Target == nil {
		return nil, errors.New("events: Options.Target is required")
	}
	if opts.Port < 0 || opts.Port > 65535 {
		return nil, errors.New("events: --external-event-port must be from 1 to 65535")
	}
	s := &Server{
		byPath:  map[string]*grantState{},
		byMeta:  map[string]*grantState{},
		byID:    map[string]*grantState{},
		keys:    map[string]jose.KeySource{},
		audit:   opts.Audit,
		now:     opts.Now,
		trusted: map[netip.Addr]bool{},
		port:    opts.Port,

		maxConns:   opts.MaxConns,
		maxPerAddr: opts.MaxConnsPerAddr,
		thr:        nil, // set below, with the clock
		done:       make(chan struct{}),
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.target.Store(&opts.Target)
	s.thr = throttle.New(throttle.Options{MaxAddrs: opts.MaxThrottleAddrs, Now: s.now})
	s.epoch = s.now()
	for _, a := range opts.TrustedProxies {
		if !a.IsValid() {
			return nil, errors.New("events: invalid trusted proxy address")
		}
		s.trusted[a.Unmap().WithZone("")] = true
	}
	s.used = jose.NewSingleUse(jose.SingleUseOptions{MaxEntries: opts.MaxTokens, Now: s.now})
	for i := range opts.Grants {
		g := opts.Grants[i]
		g.Scopes = append([]string(nil), g.Scopes...)
		g.Algorithms = append([]jose.Algorithm(nil), g.Algorithms...)
		g.Rate = append([]Rate(nil), g.Rate...)
		if len(g.Algorithms) == 0 {
			g.Algorithms = jose.Algorithms()
		}
		if err := checkGrant(&g); err != nil {
			return nil, err
		}
		if _, dup := s.byID[g.ID]; dup {
			return nil, &GrantError{File: g.File, Field: "$.grantId", Msg: "the same grant id as an earlier grant"}
		}
		ks, ok := s.keys[g.Issuer]
		if !ok {
			var err error
			if opts.Keys != nil {
				ks, err = opts.Keys(g.Issuer)
			} else {
				ks, err = jose.NewRemoteKeys(g.Issuer, jose.RemoteOptions{Client: opts.HTTPClient})
			}
			if err != nil {
				return nil, fmt.Errorf("events: grant %s: issuer keys: %w", g.ID, err)
			}
			s.keys[g.Issuer] = ks
		}
		vo := jose.Options{
			Issuer:     g.Issuer,
			Audience:   g.Resource, // the audience is the grant's resource (docs/reference/events.md, "Tokens and single use")
			Scopes:     g.Scopes,
			Algorithms: g.Algorithms,
			Keys:       ks,
			RequireID:  true, // jti and exp are required (same section)
			Now:        s.now,
		}
		if g.Subject != "" {
			vo.Subjects = []string{g.Subject}
		} else {
			vo.Clients = []string{g.Client}
		}
		v, err := jose.NewVerifier(vo)
		if err != nil {
			return nil, fmt.Errorf("events: grant %s: %w", g.ID, err)
		}
		u, _ := url.Parse(g.Resource) // checked by checkGrant
		path := u.EscapedPath()
		metaPath := "/.well-known/oauth-protected-resource" + path
		st := &grantState{g: g, verifier: v, win: newWindow(g.Rate), metaURL: "https://" + u.Host + metaPath}
		// RFC 9728 §2, §3: the resource's metadata, at the well-known
		// location derived from its URL.
		st.meta, err = json.Marshal(map[string]any{
			"resource":                 g.Resource,
			"authorization_servers":    []string{g.Issuer},
			"scopes_supported":         g.Scopes,
			"bearer_methods_supported": []string{"header"},
			"resource_name":            "agent external events: " + g.ID,
		})
		if err != nil {
			return nil, err
		}
		s.byPath[path] = st
		s.byMeta[metaPath] = st
		s.byID[g.ID] = st
		s.order = append(s.order, st)
	}
	return s, nil
}

// Listen opens the listener on 127.0.0.1 at the configured port, once, and
// returns its address. The endpoint never binds another interface: the
// operator's proxy or tunnel forwards to it (docs/reference/events.md,
// "Starting a session with grants").
func (s *Server) Listen() (netip.AddrPort, error) {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	if s.closed.Load() {
		return netip.AddrPort{}, http.ErrServerClosed
	}
	if s.ln == nil {
		ln, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)))
		if err != nil {
			return netip.AddrPort{}, fmt.Errorf("external events: listening on 127.0.0.1:%d: %w", s.port, err)
		}
		// A bounded number of connections, idle ones making room for new
		// ones, and refusals that never wait for a body (httpguard).
		proxies := make([]netip.Addr, 0, len(s.trusted))
		for a := range s.trusted {
			proxies = append(proxies, a)
		}
		s.guard = httpguard.New(httpguard.Limits{MaxConns: s.maxConns, MaxPerAddr: s.maxPerAddr, Exempt: proxies})
		s.ln = s.guard.Listener(ln)
		s.srv = &http.Server{
			Handler:           s,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       120 * time.Second,
			// A token is at most 8 KiB; the rest of the header is small.
			MaxHeaderBytes: 32 << 10,
			// The server's own complaints (a client that hung up, a bad
			// request line) would land on the session's terminal.
			ErrorLog: log.New(io.Discard, "", 0),
		}
		s.guard.Configure(s.srv)
	}
	return s.ln.Addr().(*net.TCPAddr).AddrPort(), nil
}

// Serve listens (unless Listen has) and serves until ctx is done or Close
// is called; then it returns nil. Other failures are returned.
func (s *Server) Serve(ctx context.Context) error {
	if _, err := s.Listen(); err != nil {
		return err
	}
	s.lnMu.Lock()
	srv, ln := s.srv, s.ln
	s.lnMu.Unlock()
	stop := make(chan struct{})
	defer close(stop)
	go func() { // ends when Serve returns
		select {
		case <-ctx.Done():
			s.Close()
		case <-s.done:
		case <-stop:
		}
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) || s.closed.Load() {
		return nil
	}
	return err
}

// Close stops the endpoint: the listener and every connection are closed,
// and requests still being handled are answered 503. It is idempotent.
func (s *Server) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.done)
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	if s.srv != nil {
		return s.srv.Close()
	}
	if s.ln != nil {
		return s.ln.Close()
	}
	return nil
}

// Refresh fetches every issuer's keys now, so that a start can report an
// unreachable issuer at once. Events are served either way: 503 until the
// keys can be had.
func (s *Server) Refresh(ctx context.Context) error {
	var errs []error
	for issuer, ks := range s.keys {
		if r, ok := ks.(interface{ Refresh(context.Context) error }); ok {
			if err := r.Refresh(ctx); err != nil {
				errs = append(errs, fmt.Errorf("issuer %s: %w", issuer, err))
			}
		}
	}
	return errors.Join(errs...)
}

// SetTarget makes later admitted events start their turns in t (the
// terminal UI's /resume replaces the session). Everything else the
// endpoint knows stays: revoked grants stay revoked, spent tokens spent,
// rate windows and counters as they were (docs/reference/events.md,
// "Revocation").
func (s *Server) SetTarget(t Target) {
	if t != nil {
		s.target.Store(&t)
	}
}

// Revoke withdraws a grant at once: once Revoke returns, no event under it
// is admitted. A revoked grant answers exactly like a live one to a request
// without a valid token for it, and 403 to one with
// (docs/reference/events.md, "Revocation"). Revoking twice is not an error.
func (s *Server) Revoke(grantID string) error {
	st, ok := s.byID[grantID]
	if !ok {
		return ErrUnknownGrant
	}
	// Taking the grant's lock waits for an admission in progress, so none
	// completes after Revoke returns.
	st.mu.Lock()
	st.revoked.Store(true)
	st.mu.Unlock()
	return nil
}

// GrantStatus is one line of `/events` and `agent session events list`.
type GrantStatus struct {
	ID            string
	Issuer        string
	Resource      string
	PrincipalKind string // "subject" or "client"
	Principal     string
	Scopes        []string
	Rate          []Rate
	Revoked       bool
	Admitted      uint64    // events admitted
	Refused       uint64    // requests for this grant not admitted
	LastAdmitted  time.Time // zero when none
}

// Status lists the grants in the order given.
func (s *Server) Status() []GrantStatus {
	out := make([]GrantStatus, 0, len(s.order))
	for _, st := range s.order {
		kind, name := st.g.Principal()
		st.mu.Lock()
		last := st.lastAdmitted
		st.mu.Unlock()
		out = append(out, GrantStatus{
			ID:            st.g.ID,
			Issuer:        st.g.Issuer,
			Resource:      st.g.Resource,
			PrincipalKind: kind,
			Principal:     name,
			Scopes:        append([]string(nil), st.g.Scopes...),
			Rate:          append([]Rate(nil), st.g.Rate...),
			Revoked:       st.revoked.Load(),
			Admitted:      st.admitted.Load(),
			Refused:       st.refused.Load(),
			LastAdmitted:  last,
		})
	}
	return out
}

// Reasons recorded in the audit log. They are fixed phrases: nothing from
// the request is ever recorded.
const (
	reasonOversize    = "body over 16 KiB"
	reasonUnreadable  = "body unreadable"
	reasonUnknown     = "unknown grant"
	reasonMethod      = "method not allowed"
	reasonNoToken     = "no bearer token"
	reasonRevoked     = "grant revoked"
	reasonMalformed   = "malformed event"
	reasonReplay      = "token already used"
	reasonStoreFull   = "single-use store full"
	reasonRate        = "rate window full"
	reasonSession     = "session cannot take the turn"
	reasonClosed      = "endpoint closed"
	reasonThrottled   = "too many failures from this address"
	reasonKeys        = "issuer keys unavailable"
	reasonTokenPrefix = "token: "
)

// ServeHTTP is the endpoint. The checks run in the order of
// docs/reference/events.md, "Order of checks" — size (413), grant known
// (404), token valid for this grant with its principal (401), scopes (403),
// grant revoked (403), body well-formed (400), token not used before (401),
// rate windows (429), session can take it (503) — with the method (405)
// checked once the grant is known. Refusals have empty bodies
// (docs/reference/events.md, "The endpoint").
//
// Everything up to the revocation check is decided from the request head,
// so those refusals go out without waiting for the body (the declared
// Content-Length is the size check; a chunked body is measured when it is
// read, after the token). The failure throttle answers 429 in place of
// those refusals only, to an address over its limit: a request whose token
// verifies for its grant is never refused because of failures, its own or
// anybody's behind the same address (docs/reference/events.md, "Throttle").
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := s.now()
	addr := clientAddr(r, s.trusted)
	rec := Record{Time: now.UTC(), Addr: addr.String()}

	if st := s.byMeta[r.URL.EscapedPath()]; st != nil {
		s.serveMetadata(w, r, st)
		return
	}

	d := s.decide(w, r, addr)
	if d.throttled {
		if d.first {
			rec.Outcome, rec.Status, rec.Reason = OutcomeThrottled, http.StatusTooManyRequests, reasonThrottled
			s.record(rec)
		}
		return
	}
	if d.st != nil {
		rec.Grant = d.st.g.ID
		if d.status == http.StatusAccepted {
			d.st.admitted.Add(1)
		} else {
			d.st.refused.Add(1)
		}
	}
	rec.Status, rec.Reason, rec.TurnID = d.status, d.reason, d.turnID
	switch {
	case d.status == http.StatusAccepted:
		rec.Outcome = OutcomeAdmitted
	case d.status == http.StatusServiceUnavailable:
		rec.Outcome = OutcomeUnavailable
	default:
		rec.Outcome = OutcomeRefused
	}
	s.record(rec)
}

func (s *Server) record(r Record) {
	if s.audit != nil {
		s.audit.Audit(r)
	}
}

// decision is what decide answered.
type decision struct {
	st               *grantState // nil when no grant was found
	status           int
	reason, turnID   string
	throttled, first bool // answered 429 by the throttle; first of its stretch
}

// countsAsFailure: the client's failures count toward the throttle; a
// full rate window (a sender that is who it says, sending too often) and
// the session's or issuer's trouble (503) do not.
func countsAsFailure(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden,
		http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusRequestEntityTooLarge:
		return true
	}
	return false
}

// decide runs the checks for an event request and writes the response.
func (s *Server) decide(w http.ResponseWriter, r *http.Request, addr netip.Addr) decision {
	// refuse answers a failure whose token has not verified for its
	// grant: 429 instead when the address is over the throttle's limit.
	refuse := func(st *grantState, status int, reason string) decision {
		wait, first := s.thr.Blocked(addr)
		if wait == 0 && countsAsFailure(status) {
			s.thr.Fail(addr)
		}
		if wait > 0 {
			h := w.Header()
			h.Del("WWW-Authenticate")
			h.Del("Allow")
			setRetryAfter(w, wait)
			w.WriteHeader(http.StatusTooManyRequests)
			return decision{st: st, throttled: true, first: first}
		}
		w.WriteHeader(status)
		return decision{st: st, status: status, reason: reason}
	}
	// refuseVerified answers a failure of a request whose token verified:
	// the throttle never replaces it (it still counts).
	refuseVerified := func(st *grantState, status int, reason string) decision {
		if countsAsFailure(status) {
			s.thr.Fail(addr)
		}
		w.WriteHeader(status)
		return decision{st: st, status: status, reason: reason}
	}

	// 1. Size, as declared (a chunked body is measured when read, at 6).
	if r.ContentLength > MaxBodyBytes {
		return refuse(nil, http.StatusRequestEntityTooLarge, reasonOversize)
	}

	// 2. Grant known: the path of its resource.
	st := s.byPath[r.URL.EscapedPath()]
	if st == nil {
		return refuse(nil, http.StatusNotFound, reasonUnknown)
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return refuse(st, http.StatusMethodNotAllowed, reasonMethod)
	}

	// 3. Token valid for this grant, principal included (401), and
	// 4. scopes (403): jose checks the principal before the scopes.
	token, present, ok := bearerToken(r)
	if !ok {
		st.challenge(w, present, "invalid_token")
		reason := reasonNoToken
		if present {
			reason = reasonTokenPrefix + jose.Malformed.String()
		}
		return refuse(st, http.StatusUnauthorized, reason)
	}
	claims, err := st.verifier.Verify(r.Context(), token)
	if err != nil {
		switch why := jose.ReasonOf(err); why {
		case jose.KeysUnavailable:
			// The issuer's fault, not the token's
			// (docs/reference/events.md, "Order of checks": 503 at step 3).
			return refuseVerified(st, http.StatusServiceUnavailable, reasonKeys)
		case jose.MissingScope:
			st.challenge(w, true, "insufficient_scope")
			return refuse(st, http.StatusForbidden, reasonTokenPrefix+why.String())
		default:
			st.challenge(w, true, "invalid_token")
			return refuse(st, http.StatusUnauthorized, reasonTokenPrefix+why.String())
		}
	}

	// 5. Grant revoked. Only now, so that without a valid token a revoked
	// grant cannot be told from a live one.
	if st.revoked.Load() {
		return refuseVerified(st, http.StatusForbidden, reasonRevoked)
	}

	// 6. Body well-formed: read now, at most 16 KiB (413 above).
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return refuseVerified(st, http.StatusRequestEntityTooLarge, reasonOversize)
		}
		return refuseVerified(st, http.StatusBadRequest, reasonUnreadable)
	}
	ev, err := ParseEvent(body)
	if err != nil {
		return refuseVerified(st, http.StatusBadRequest, reasonMalformed)
	}
	ev.GrantID = st.g.ID

	// 7. Token not used before: (issuer, jti), atomically, so that of two
	// copies racing exactly one passes. A token spent here stays spent
	// even if a later check refuses the event: "accepted once" counts
	// presentations that got this far, and a sender mints a new token for
	// a retry.
	if err := s.used.Use(claims); err != nil {
		switch {
		case errors.Is(err, jose.ErrStoreFull):
			return refuseVerified(st, http.StatusServiceUnavailable, reasonStoreFull)
		case errors.Is(err, jose.ErrReused):
			st.challenge(w, true, "invalid_token")
			return refuseVerified(st, http.StatusUnauthorized, reasonReplay)
		default:
			st.challenge(w, true, "invalid_token")
			return refuseVerified(st, http.StatusUnauthorized, reasonTokenPrefix+jose.ReasonOf(err).String())
		}
	}

	// 8. Rate windows and 9. the session, under the grant's lock so that
	// concurrent events cannot overfill a window and a Revoke cannot
	// race an admission.
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.revoked.Load() {
		return refuseVerified(st, http.StatusForbidden, reasonRevoked)
	}
	now := s.now()
	mono := now.Sub(s.epoch)
	if ok, wait := st.win.allow(mono); !ok {
		setRetryAfter(w, wait)
		return refuseVerified(st, http.StatusTooManyRequests, reasonRate)
	}
	if s.closed.Load() {
		return refuseVerified(st, http.StatusServiceUnavailable, reasonClosed)
	}
	turnID, err := (*s.target.Load()).SubmitExternal(r.Context(), ev)
	if err != nil {
		return refuseVerified(st, http.StatusServiceUnavailable, reasonSession)
	}
	st.win.add(mono)
	st.lastAdmitted = now
	out, _ := json.Marshal(struct {
		TurnID string `json:"turnId"`
	}{turnID})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusAccepted)
	w.Write(out)
	return decision{st: st, status: http.StatusAccepted, turnID: turnID}
}

// challenge sets the Bearer challenge of RFC 6750 §3 with the resource
// metadata of RFC 9728 §5.1: error only when a token was sent, and the
// grant's scopes with insufficient_scope.
func (st *grantState) challenge(w http.ResponseWriter, tokenSent bool, code string) {
	var b strings.Builder
	b.WriteString("Bearer ")
	if tokenSent && code != "" {
		b.WriteString(`error="` + code + `", `)
		if code == "insufficient_scope" {
			b.WriteString(`scope="` + strings.Join(st.g.Scopes, " ") + `", `)
		}
	}
	b.WriteString(`resource_metadata="` + st.metaURL + `"`)
	w.Header().Set("WWW-Authenticate", b.String())
}

// serveMetadata answers the protected-resource metadata of a grant
// (RFC 9728 §3.2), revoked or not: it is public, and a revoked grant must
// look like a live one.
func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request, st *grantState) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(st.meta)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		w.Write(st.meta)
	}
}

// bearerToken returns the token of the one Authorization header (RFC 6750
// §2.1): present reports whether there was any Authorization header, ok
// whether it held a well-formed bearer token.
func bearerToken(r *http.Request) (token string, present, ok bool) {
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		return "", false, false
	}
	if len(vals) > 1 {
		return "", true, false
	}
	scheme, tok, found := strings.Cut(vals[0], " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", true, false
	}
	tok = strings.TrimLeft(tok, " ")
	if tok == "" || !token68(tok) {
		return "", true, false
	}
	return tok, true, true
}

// token68 is RFC 7235 §2.1's token68 (b64token in RFC 6750 §2.1).
func token68(s string) bool {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/') {
			break
		}
	}
	for ; i < len(s) && s[i] == '='; i++ {
	}
	return i == len(s) && s[0] != '='
}

// setRetryAfter sets Retry-After in whole seconds, rounded up (RFC 9110
// §10.2.3).
func setRetryAfter(w http.ResponseWriter, wait time.Duration) {
	secs := int64((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
}

// String is the grant's line in `/events` and `agent session events list`.
// Every part was validated when the grant was loaded: no control
// characters reach the terminal.
func (g GrantStatus) String() string {
	state := "live"
	if g.Revoked {
		state = "revoked"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  %s %s  scopes %s  issuer %s  resource %s  admitted %d, refused %d",
		g.ID, state, g.PrincipalKind, g.Principal, strings.Join(g.Scopes, " "), g.Issuer, g.Resource, g.Admitted, g.Refused)
	if !g.LastAdmitted.IsZero() {
		b.WriteString(", last " + g.LastAdmitted.UTC().Format(time.RFC3339))
	}
	for _, r := range g.Rate {
		fmt.Fprintf(&b, "  rate %d per %s", r.MaxTurns, r.Window)
	}
	return b.String()
}
