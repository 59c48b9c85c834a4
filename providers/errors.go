package providers

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Kinds of failure the runtime branches on with errors.Is. Every failure of
// a chat call is an *Error whose Kind is one of these.
var (
	// ErrAuthentication: the key is wrong, lacks permission, or the account
	// cannot pay (HTTP 401, 402, 403).
	ErrAuthentication = errors.New("authentication failed")
	// ErrRateLimited: too many requests (429); Error.RetryAfter says how
	// long the server asked to wait.
	ErrRateLimited = errors.New("rate limited")
	// ErrInvalidRequest: the request cannot succeed as built (other 4xx,
	// arguments refused before sending, unknown model).
	ErrInvalidRequest = errors.New("invalid request")
	// ErrContextTooLong: the conversation does not fit the model's context
	// window (413, or the API's context-length error).
	ErrContextTooLong = errors.New("context too long")
	// ErrUpstream: the server or the connection failed (5xx, 529
	// overloaded, 409, connection errors, malformed or cut-off streams,
	// in-stream errors).
	ErrUpstream = errors.New("upstream error")
	// ErrTimeout: no response or no data within the timeout (408, the
	// first-byte deadline, the idle watchdog, or the caller's deadline).
	ErrTimeout = errors.New("timed out")
	// ErrCancelled: the caller cancelled the context or closed the stream.
	// The Error also wraps the context's cause.
	ErrCancelled = errors.New("cancelled")
)

// ErrMissingKey is wrapped by a constructor's error when a required API key
// is missing (docs/providers.md, "Shared plumbing").
var ErrMissingKey = errors.New("missing API key")

// Error is a failed chat call.
type Error struct {
	Kind       error  // one of the Err* kinds above
	Provider   string // the provider id (messages, reasoning, video, ...)
	Op         string // the operation, where a provider has several (video: createVideo, ...)
	Status     int    // the HTTP status; 0 for transport and in-stream errors
	Code       string // the API's error type or code
	Message    string // the API's message, bounded, control characters removed
	RequestID  string // the API's request id, for support requests
	RetryAfter time.Duration
	// Retryable says the condition is transient (docs/providers.md,
	// "Deadlines and retries"). The provider has already retried it as far
	// as the rules allow.
	Retryable bool
	Err       error // the underlying cause, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Provider != "" {
		b.WriteString(e.Provider + ": ")
	}
	if e.Op != "" {
		b.WriteString(e.Op + ": ")
	}
	kind := "error"
	if e.Kind != nil {
		kind = e.Kind.Error()
	}
	b.WriteString(kind)
	if e.Status != 0 || e.Code != "" {
		b.WriteString(" (")
		if e.Status != 0 {
			b.WriteString(strconv.Itoa(e.Status))
			if e.Code != "" {
				b.WriteByte(' ')
			}
		}
		b.WriteString(e.Code + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	switch {
	case e.RetryAfter == RetryAfterTooLong:
		b.WriteString("; the server asks to wait longer than " + MaxRetryAfter.String())
	case e.RetryAfter > 0:
		b.WriteString("; retry after " + e.RetryAfter.String())
	}
	if e.RequestID != "" {
		b.WriteString(" [request " + e.RequestID + "]")
	}
	return b.String()
}

// Is reports whether target is e's Kind.
func (e *Error) Is(target error) bool { return target != nil && target == e.Kind }

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// MissingKeyError is returned by a constructor when the API key is missing
// and no client was passed. It names the environment variable the key is
// conventionally read from (docs/providers.md, "Built-in definitions
// (`providers/builtin`)"; docs/reference/cli.md, "Environment").
type MissingKeyError struct {
	Provider string
	EnvVar   string
}

func (e *MissingKeyError) Error() string {
	return fmt.Sprintf("%s: missing API key: set %s or pass a client", e.Provider, e.EnvVar)
}

// Is matches ErrMissingKey.
func (e *MissingKeyError) Is(target error) bool { return target == ErrMissingKey }

// RequireKey returns a *MissingKeyError when key is empty and no client was
// passed (docs/providers.md, "Shared plumbing").
func RequireKey(provider, envVar, key string, client *http.Client) error {
	if strings.TrimSpace(key) == "" && client == nil {
		return &MissingKeyError{Provider: provider, EnvVar: envVar}
	}
	return nil
}

// Invalid returns an ErrInvalidRequest error for arguments refused before
// anything is sent.
func Invalid(format string, args ...any) *Error {
	return &Error{Kind: ErrInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// CodeInvalidKey is the code a decoder gives an error report that means a
// wrong key although the API sent another status (genai: 400
// INVALID_ARGUMENT "API key not valid").
const CodeInvalidKey = "API_KEY_INVALID"

// APIError builds the error for an API's error report: an HTTP status (or,
// for in-stream errors, the status the API documents for that error type)
// with the API's code and message. It sets Kind and Retryable from the
// status (408, 409, 429 and 5xx are transient; docs/providers.md, "Shared
// plumbing"), and recognises context-length errors by the codes and phrases
// the APIs document.
func APIError(status int, code, message string) *Error {
	e := &Error{Status: status, Code: Clean(code, 200), Message: Clean(message, MaxMessage)}
	switch {
	case status == 401 || status == 402 || status == 403 || code == CodeInvalidKey:
		e.Kind = ErrAuthentication
	case status == 408:
		e.Kind, e.Retryable = ErrTimeout, true
	case status == 413:
		e.Kind = ErrContextTooLong
	case status == 429:
		e.Kind, e.Retryable = ErrRateLimited, true
	case status == 409 || status >= 500:
		e.Kind, e.Retryable = ErrUpstream, true
	case status >= 300 && status < 500:
		e.Kind = ErrInvalidRequest
	default:
		e.Kind = ErrUpstream
	}
	if status < 500 && contextTooLong(e.Code, e.Message) {
		e.Kind, e.Retryable = ErrContextTooLong, false
	}
	return e
}

// contextTooLong recognises the context-length errors of the APIs: the
// chat-completions code context_length_exceeded and the phrases the APIs
// use in their messages (the messages API and several chat-completions
// servers have no specific code).
func contextTooLong(code, msg string) bool {
	if code == "context_length_exceeded" || code == "string_above_max_length" {
		return true
	}
	m := strings.ToLower(msg)
	for _, p := range []string{"maximum context length", "context length", "context window", "prompt is too long", "too many tokens", "input is too long", "exceeds the context", "exceeds the maximum number of tokens"} {
		if strings.Contains(m, p) {
			return true
		}
	}
	return false
}

// MaxMessage bounds an API message kept in an Error.
const MaxMessage = 2000

// Clean bounds s to max bytes (on a rune boundary) and drops control
// characters but tab and newline: these strings come from the server and
// end up on a terminal (docs/reference/cli.md, "Output streams").
func Clean(s string, max int) string {
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	ok := true
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' || r >= 0x7f && r < 0xa0 || r == utf8.RuneError {
			ok = false
			break
		}
	}
	if ok {
		return strings.TrimSpace(s)
	}
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' && r != '\n' || r >= 0x7f && r < 0xa0 || r == utf8.RuneError {
			return -1
		}
		return r
	}, s))
}

// RetryAfterTooLong stands for a wait a server asked for that is out of any
// range: negative, not a number, or beyond what a time.Duration holds (an
// overflowing retry-after-ms, an HTTP date centuries ahead). It counts as
// longer than MaxRetryAfter, so the call ends with the server's error
// instead of retrying at once (docs/providers.md, "Deadlines and retries").
const RetryAfterTooLong = time.Duration(math.MaxInt64)

// RetryAfter reads the wait a response asks for: retry-after-ms, then
// Retry-After in seconds or as an HTTP date (docs/providers.md, "Deadlines
// and retries"). ok is false when neither header holds a number or a date.
// A date in the past is no wait (0); an absurd value is RetryAfterTooLong,
// never zero.
func RetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if d, ok := number(v, time.Millisecond); ok {
			return d, true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if d, ok := number(v, time.Second); ok {
		return d, true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now) // saturates at the largest Duration
		if d >= RetryAfterTooLong {
			return RetryAfterTooLong, true
		}
		return max(d, 0), true
	}
	return 0, false
}

// number reads a count of unit; ok is false when v is not a number at
// all. A negative, NaN, infinite or overflowing one is RetryAfterTooLong.
func number(v string, unit time.Duration) (time.Duration, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	if err != nil || math.IsNaN(f) || f < 0 || f*float64(unit) >= math.MaxInt64 {
		return RetryAfterTooLong, true
	}
	return time.Duration(f * float64(unit)), true
}
