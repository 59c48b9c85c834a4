package providers

import (
	"errors"
	"net/url"
	"strings"

	"agent/internal/redact"
)

// Endpoint joins an API path to a base URL (docs/providers.md, "Endpoint
// paths and masked URLs"): the path goes after the base URL's own path and
// before its query, which is kept (a gateway may take its key there:
// "https://gw.example/v1?key=K" + "/chat/completions" is
// "https://gw.example/v1/chat/completions?key=K"); query, when set, is
// added after the base URL's. Trailing slashes of the base path are
// dropped; a fragment, never sent, is dropped too.
func Endpoint(base, path, query string) string {
	base, _, _ = strings.Cut(base, "#")
	base, q, _ := strings.Cut(base, "?")
	u := strings.TrimRight(base, "/") + path
	switch {
	case q != "" && query != "":
		return u + "?" + q + "&" + query
	case q != "":
		return u + "?" + q
	case query != "":
		return u + "?" + query
	}
	return u
}

// RedactURL returns u with every part that may carry a credential masked:
// query values, user information and credential-like path segments
// (internal/redact; docs/providers.md, "Endpoint paths and masked URLs").
// Every URL a provider puts in an error, a log record or a payload summary
// goes through it.
func RedactURL(u string) string { return redact.URL(u) }

// MaskURLError returns err, an error from sending a request to rawURL,
// with the URL masked (RedactURL). An *url.Error from http.Client.Do
// prints the whole URL, and its text reaches the terminal and the session
// transcript; the copy keeps the cause, so that timeouts and network
// errors are still recognised. Another error that quotes the URL is
// replaced by one with the same text, masked, that wraps the cause.
func MaskURLError(err error, rawURL string) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) && error(ue) == err {
		c := *ue
		c.URL = redact.URL(ue.URL)
		return &c
	}
	msg := err.Error()
	masked := redact.Text(msg, rawURL)
	if ue != nil {
		masked = redact.Text(masked, ue.URL)
	}
	if masked == msg {
		return err
	}
	cause := errors.Unwrap(err)
	if ue != nil {
		cause = ue.Err
	}
	return &maskedError{msg: masked, cause: cause}
}

type maskedError struct {
	msg   string
	cause error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.cause }
