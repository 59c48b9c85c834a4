package jose

import (
	"errors"
	"strings"
)

// Reason says why a token was refused. Callers map reasons to HTTP statuses
// (docs/reference/mcp.md, "Remote mode"; docs/reference/events.md, "Order
// of checks"): KeysUnavailable is the issuer's fault (503), MissingScope is
// 403, PrincipalNotAllowed is 403 or 401 as the caller decides, and every
// other reason is 401.
//
// A Reason is also an error, so errors.Is(err, jose.Expired) tests for it.
type Reason int

// The reasons a token is refused.
const (
	Malformed            Reason = iota + 1 // not a well-formed compact JWS/JWT, or a refused header
	Oversize                               // longer than the size limit, refused before parsing
	WrongType                              // typ is not at+jwt (RFC 9068 §4)
	UnsupportedAlgorithm                   // alg outside RS256, ES256, EdDSA or outside the caller's subset
	KeysUnavailable                        // the issuer's metadata or key set cannot be fetched
	AmbiguousKey                           // more than one usable key fits the token
	UnknownKey                             // no usable key fits the token's kid and alg
	BadSignature                           // the signature does not verify
	Expired                                // exp is past, beyond the leeway
	NotYetValid                            // nbf or iat is in the future, beyond the leeway
	WrongIssuer                            // iss is not the configured issuer
	WrongAudience                          // aud does not contain the configured audience
	MissingScope                           // a required scope is absent
	PrincipalNotAllowed                    // neither sub nor client_id names an admitted principal
)

var reasonNames = [...]string{
	Malformed:            "malformed",
	Oversize:             "oversize",
	WrongType:            "wrong type",
	UnsupportedAlgorithm: "unsupported algorithm",
	KeysUnavailable:      "keys unavailable",
	AmbiguousKey:         "ambiguous key",
	UnknownKey:           "unknown key",
	BadSignature:         "bad signature",
	Expired:              "expired",
	NotYetValid:          "not yet valid",
	WrongIssuer:          "wrong issuer",
	WrongAudience:        "wrong audience",
	MissingScope:         "missing scope",
	PrincipalNotAllowed:  "principal not allowed",
}

func (r Reason) String() string {
	if r > 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "unknown reason"
}

// Error makes a Reason usable as an errors.Is target.
func (r Reason) Error() string { return "token refused: " + r.String() }

// Error is every refusal from this package. Msg and Err never carry token
// content: refusals are logged, and a token's bytes are an attacker's.
type Error struct {
	Reason Reason
	Msg    string // what was wrong, in a few words
	Err    error  // the cause, when there is one (a fetch error, say)
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("token refused: ")
	b.WriteString(e.Reason.String())
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is this error's Reason.
func (e *Error) Is(target error) bool {
	r, ok := target.(Reason)
	return ok && r == e.Reason
}

// ReasonOf returns the Reason of a refusal from this package, or 0 when err
// is nil or comes from elsewhere.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return 0
}

func refuse(r Reason, msg string) *Error { return &Error{Reason: r, Msg: msg} }
