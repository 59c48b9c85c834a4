package jose

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"time"

	"agent/internal/strictjson"
)

// Defaults for Options fields left at zero.
const (
	DefaultLeeway        = 60 * time.Second // docs/reference/mcp.md, "Access-token verification"
	DefaultMaxTokenBytes = 8192             // longer tokens are refused unparsed (same section)
)

// KeySource finds the key that verifies a token. Implementations must be
// safe for concurrent use; Key may block on a fetch and must return when ctx
// is done.
type KeySource interface {
	// Key returns the one usable key for kid ("" when the token names
	// none) and alg, or an *Error with Reason UnknownKey, AmbiguousKey or
	// KeysUnavailable.
	Key(ctx context.Context, kid string, alg Algorithm) (*Key, error)
}

// Options configures a Verifier. Issuer and Audience are required, and so
// is at least one principal in Subjects or Clients; every other zero value
// is the documented default.
type Options struct {
	Issuer   string   // exact iss; also where keys are discovered when Keys is nil
	Audience string   // aud must contain it: the resource's public URL (RFC 9068 §4)
	Scopes   []string // every one must be in scope or scp

	// The principals admitted: a token passes when its sub is one of
	// Subjects or its client_id is one of Clients. `mcp serve` lists the
	// allowed subjects; an event grant names exactly one subject or client
	// (docs/reference/events.md, "Tokens and single use").
	Subjects []string
	Clients  []string

	Algorithms []Algorithm      // allowed subset of RS256, ES256, EdDSA; nil allows all three
	Keys       KeySource        // nil: discovery from Issuer (NewRemoteKeys with zero RemoteOptions)
	RequireID  bool             // refuse tokens without jti (single use, docs/reference/events.md, "Tokens and single use")
	Leeway     time.Duration    // clock skew allowed on exp, nbf and iat; 0 means DefaultLeeway, negative none
	MaxBytes   int              // longest token; 0 means DefaultMaxTokenBytes
	Now        func() time.Time // nil means time.Now
}

// Verifier checks access tokens for one issuer, audience and policy. It is
// safe for concurrent use.
type Verifier struct {
	issuer, audience string
	scopes           []string
	subjects         []string
	clients          []string
	allowed          [3]bool // indexed by algIndex
	keys             KeySource
	requireID        bool
	leeway           time.Duration
	maxBytes         int
	now              func() time.Time
	headers          headerCache
}

// Claims are the verified claims a caller needs, and the whole claims set.
type Claims struct {
	Issuer    string
	Subject   string // "" when absent
	ClientID  string // "" when absent (RFC 9068 §2.2)
	Audience  []string
	Scopes    []string // from scope (space-separated) and scp (array)
	ID        string   // jti, "" when absent
	Expiry    time.Time
	NotBefore time.Time // zero when absent
	IssuedAt  time.Time // zero when absent
	Algorithm Algorithm
	KeyID     string
	Raw       *strictjson.Value // the claims set as parsed
}

// HasScope reports whether the token carries scope s.
func (c *Claims) HasScope(s string) bool { return slices.Contains(c.Scopes, s) }

func algIndex(a Algorithm) int {
	switch a {
	case RS256:
		return 0
	case ES256:
		return 1
	case EdDSA:
		return 2
	}
	return -1
}

// NewVerifier checks opts and builds a Verifier.
func NewVerifier(opts Options) (*Verifier, error) {
	if opts.Issuer == "" {
		return nil, errors.New("jose: Options.Issuer is required")
	}
	if opts.Audience == "" {
		return nil, errors.New("jose: Options.Audience is required")
	}
	if len(opts.Subjects) == 0 && len(opts.Clients) == 0 {
		return nil, errors.New("jose: Options needs at least one of Subjects and Clients")
	}
	for _, list := range [][]string{opts.Scopes, opts.Subjects, opts.Clients} {
		if slices.Contains(list, "") {
			return nil, errors.New("jose: empty scope, subject or client in Options")
		}
	}
	v := &Verifier{
		issuer:    opts.Issuer,
		audience:  opts.Audience,
		scopes:    slices.Clone(opts.Scopes),
		subjects:  slices.Clone(opts.Subjects),
		clients:   slices.Clone(opts.Clients),
		keys:      opts.Keys,
		requireID: opts.RequireID,
		leeway:    opts.Leeway,
		maxBytes:  opts.MaxBytes,
		now:       opts.Now,
	}
	algs := opts.Algorithms
	if algs == nil {
		algs = Algorithms()
	}
	if len(algs) == 0 {
		return nil, errors.New("jose: Options.Algorithms is empty")
	}
	for _, a := range algs {
		i := algIndex(a)
		if i < 0 {
			return nil, errors.New("jose: algorithm " + string(a) + " is not RS256, ES256 or EdDSA")
		}
		v.allowed[i] = true
	}
	switch {
	case v.leeway == 0:
		v.leeway = DefaultLeeway
	case v.leeway < 0:
		v.leeway = 0
	}
	if v.maxBytes <= 0 {
		v.maxBytes = DefaultMaxTokenBytes
	}
	if v.now == nil {
		v.now = time.Now
	}
	if v.keys == nil {
		r, err := NewRemoteKeys(opts.Issuer, RemoteOptions{})
		if err != nil {
			return nil, err
		}
		v.keys = r
	}
	return v, nil
}

// claimNames are the claims read; a case variant of any of them ("Exp"
// beside or instead of "exp") is refused as Malformed, so that no reader
// that folds case can see a different token than this one.
var claimNames = []string{"iss", "sub", "aud", "exp", "nbf", "iat", "jti", "scope", "scp", "client_id"}

// Verify checks a bearer token and returns its claims. Every refusal is an
// *Error. The checks run in this order: size (before parsing), compact
// form, alg allowed, typ, key, signature, claims form, iss, exp, nbf and iat,
// aud, jti (with RequireID), principal, scopes.
func (v *Verifier) Verify(ctx context.Context, token string) (*Claims, error) {
	if len(token) > v.maxBytes {
		return nil, refuse(Oversize, "")
	}
	j, err := parseCompact(token, &v.headers)
	if err != nil {
		return nil, err
	}
	alg := Algorithm(j.Algorithm)
	if i := algIndex(alg); i < 0 || !v.allowed[i] {
		// Includes none and every HMAC alg: a public key is never used as
		// an HMAC secret (RFC 8725 §2.1).
		return nil, refuse(UnsupportedAlgorithm, "")
	}
	// RFC 9068 §4: typ must be at+jwt; RFC 7515 §4.1.9: media types are
	// case-insensitive and "application/" may be left out.
	if !strings.EqualFold(j.Type, "at+jwt") && !strings.EqualFold(j.Type, "application/at+jwt") {
		return nil, refuse(WrongType, "typ is not at+jwt")
	}
	key, err := v.keys.Key(ctx, j.KeyID, alg)
	if err != nil {
		if ReasonOf(err) == 0 {
			err = &Error{Reason: KeysUnavailable, Err: err}
		}
		return nil, err
	}
	if err := j.VerifySignature(key); err != nil {
		return nil, err
	}
	c, err := parseClaims(j.Payload)
	if err != nil {
		return nil, err
	}
	c.Algorithm, c.KeyID = alg, j.KeyID
	if c.Issuer != v.issuer {
		return nil, refuse(WrongIssuer, "")
	}
	now := v.now()
	// RFC 7519 §4.1.4: the token is valid only before exp.
	if !now.Before(c.Expiry.Add(v.leeway)) {
		return nil, refuse(Expired, "")
	}
	if !c.NotBefore.IsZero() && c.NotBefore.After(now.Add(v.leeway)) {
		return nil, refuse(NotYetValid, "nbf is in the future")
	}
	if !c.IssuedAt.IsZero() && c.IssuedAt.After(now.Add(v.leeway)) {
		return nil, refuse(NotYetValid, "iat is in the future")
	}
	if !slices.Contains(c.Audience, v.audience) {
		return nil, refuse(WrongAudience, "")
	}
	if v.requireID && c.ID == "" {
		return nil, refuse(Malformed, "jti missing")
	}
	if !(c.Subject != "" && slices.Contains(v.subjects, c.Subject)) &&
		!(c.ClientID != "" && slices.Contains(v.clients, c.ClientID)) {
		return nil, refuse(PrincipalNotAllowed, "")
	}
	for _, s := range v.scopes {
		if !c.HasScope(s) {
			return nil, refuse(MissingScope, "")
		}
	}
	return c, nil
}

// parseClaims reads a JWT claims set (RFC 7519 §4.1; RFC 9068 §2.2) from a
// verified payload. Only the shapes are checked here; values are checked by
// Verify.
func parseClaims(payload []byte) (*Claims, error) {
	raw, err := strictjson.Parse(payload, headerJSON)
	if err != nil {
		return nil, jsonRefusal("claims", err)
	}
	if raw.Kind != strictjson.Object {
		return nil, refuse(Malformed, "claims are not a JSON object")
	}
	c := &Claims{Raw: raw}
	hasExp := false
	// One pass; strictjson has refused duplicate keys, so each case runs
	// at most once.
	for _, m := range raw.Members {
		v := m.Value
		var str *string
		var date *time.Time
		switch m.Key {
		case "iss":
			str = &c.Issuer
		case "sub":
			str = &c.Subject
		case "client_id":
			str = &c.ClientID
		case "jti":
			str = &c.ID
		case "exp":
			date, hasExp = &c.Expiry, true
		case "nbf":
			date = &c.NotBefore
		case "iat":
			date = &c.IssuedAt
		case "aud":
			switch v.Kind {
			case strictjson.String:
				c.Audience = []string{v.Str}
			case strictjson.Array:
				c.Audience = make([]string, 0, len(v.Items))
				for _, a := range v.Items {
					if a.Kind != strictjson.String {
						return nil, refuse(Malformed, "aud holds a non-string")
					}
					c.Audience = append(c.Audience, a.Str)
				}
			default:
				return nil, refuse(Malformed, "aud is not a string or an array")
			}
		case "scope":
			if v.Kind != strictjson.String {
				return nil, refuse(Malformed, "scope is not a string")
			}
			// RFC 6749 §3.3: scope tokens separated by spaces.
			if c.Scopes == nil {
				c.Scopes = make([]string, 0, strings.Count(v.Str, " ")+1)
			}
			for rest := v.Str; rest != ""; {
				var s string
				s, rest, _ = strings.Cut(rest, " ")
				if s != "" {
					c.Scopes = append(c.Scopes, s)
				}
			}
		case "scp":
			if v.Kind != strictjson.Array {
				return nil, refuse(Malformed, "scp is not an array")
			}
			for _, s := range v.Items {
				if s.Kind != strictjson.String {
					return nil, refuse(Malformed, "scp holds a non-string")
				}
				c.Scopes = append(c.Scopes, s.Str)
			}
		default:
			if n := variantOf(m.Key, claimNames); n != "" {
				return nil, refuse(Malformed, "claims have a case variant of "+n)
			}
		}
		switch {
		case str != nil:
			if v.Kind != strictjson.String {
				return nil, refuse(Malformed, m.Key+" is not a string")
			}
			*str = v.Str
		case date != nil:
			t, ok := numericDate(v)
			if !ok {
				return nil, refuse(Malformed, m.Key+" is not a NumericDate")
			}
			*date = t
		}
	}
	if !hasExp {
		return nil, refuse(Malformed, "exp missing")
	}
	return c, nil
}

// maxNumericDate is 9999-12-31T23:59:59Z; later dates are refused rather
// than overflow time arithmetic.
const maxNumericDate = 253402300799

// numericDate reads a NumericDate (RFC 7519 §2): seconds since the epoch,
// possibly fractional. Negative values are refused: no access token was
// issued before 1970.
func numericDate(v *strictjson.Value) (time.Time, bool) {
	if i, ok := v.Int(); ok {
		if i < 0 || i > maxNumericDate {
			return time.Time{}, false
		}
		return time.Unix(i, 0), true
	}
	f, ok := v.Float()
	if !ok || !(f >= 0 && f <= maxNumericDate) {
		return time.Time{}, false
	}
	sec := math.Floor(f)
	return time.Unix(int64(sec), int64((f-sec)*1e9)), true
}
