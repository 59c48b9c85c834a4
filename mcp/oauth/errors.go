package oauth

import (
	"errors"
	"fmt"
)

// Sentinels callers branch on (CONTRIBUTING.md, "Errors").
var (
	// ErrRefused is wrapped by every refusal of a sign-in: the server or
	// its authorization server does not meet the rules of
	// docs/reference/mcp.md, "Sign-in", or the user's answer does not fit
	// the request. The error text gives the reason.
	ErrRefused = errors.New("sign-in refused")
	// ErrBrowserFailed: the browser could not be started (the remedy is to
	// sign in with --no-browser; docs/reference/mcp.md, "Sign-in").
	ErrBrowserFailed = errors.New("browser-failed")
	// ErrTimeout: no callback arrived in time.
	ErrTimeout = errors.New("no answer from the browser in time")
	// ErrSignInRequired: there are no usable tokens; the user must sign in
	// (again).
	ErrSignInRequired = errors.New("sign-in required")
	// ErrNotSignedIn: logout found no stored credentials.
	ErrNotSignedIn = errors.New("not signed in")
)

// RefusedError is a refused sign-in with its reason. It wraps ErrRefused.
type RefusedError struct {
	Reason string // already free of secrets and control characters
}

func (e *RefusedError) Error() string { return "sign-in refused: " + e.Reason }

// Unwrap makes errors.Is(err, ErrRefused) hold.
func (e *RefusedError) Unwrap() error { return ErrRefused }

func refusef(format string, args ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, args...)}
}

// TokenError is an OAuth error response of a token, registration or
// revocation endpoint (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 7009 §2.2.1).
// Code and Description come from the server and are sanitised.
type TokenError struct {
	Endpoint    string // "token", "registration", "revocation"
	Status      int
	Code        string
	Description string
}

func (e *TokenError) Error() string {
	s := fmt.Sprintf("the %s endpoint answered %d", e.Endpoint, e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}
