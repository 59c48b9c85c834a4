package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"agent/internal/httpguard"
	"agent/internal/quote"
)

// callbackPath is the path of the loopback redirect URI
// http://127.0.0.1:PORT/callback (RFC 8252 §7.3: the loopback IP literal,
// not "localhost").
const callbackPath = "/callback"

// maxCallbackURL bounds a pasted or received redirect address.
const maxCallbackURL = 8 << 10

// Callback is what the authorization server sent back to the redirect URI
// (RFC 6749 §4.1.2, §4.1.2.1; RFC 9207 §2).
type Callback struct {
	Code             string
	State            string
	Iss              string
	Error            string
	ErrorDescription string
}

// String redacts the code and state (docs/reference/mcp.md, "Sign-in":
// errors never show a code).
func (c Callback) String() string {
	return fmt.Sprintf("callback (error %q, iss %q)", quote.V(c.Error), quote.V(c.Iss))
}

// ParseCallback reads the query of a redirect. Each parameter may appear
// at most once (RFC 6749 §3.1: "Request and response parameters MUST NOT
// be included more than once"). It is pure.
func ParseCallback(rawQuery string) (Callback, error) {
	if len(rawQuery) > maxCallbackURL {
		return Callback{}, errors.New("the redirect address is too long")
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return Callback{}, errors.New("the redirect address has a malformed query")
	}
	one := func(k string) (string, error) {
		v := q[k]
		switch len(v) {
		case 0:
			return "", nil
		case 1:
			return v[0], nil
		}
		return "", fmt.Errorf("the redirect address repeats the parameter %s", k)
	}
	var c Callback
	for _, f := range []struct {
		k string
		p *string
	}{{"code", &c.Code}, {"state", &c.State}, {"iss", &c.Iss}, {"error", &c.Error}, {"error_description", &c.ErrorDescription}} {
		if *f.p, err = one(f.k); err != nil {
			return Callback{}, err
		}
	}
	if c.Error == "" && c.Code == "" {
		return Callback{}, errors.New("the redirect address carries neither code nor error")
	}
	return c, nil
}

// ParsePastedRedirect reads the address the browser was sent to, as the
// user pasted it (--no-browser), and checks that it is the redirect URI of
// this sign-in: same scheme, host, port and path.
func ParsePastedRedirect(pasted, redirectURI string) (Callback, error) {
	pasted = strings.TrimSpace(pasted)
	if len(pasted) > maxCallbackURL {
		return Callback{}, errors.New("the pasted address is too long")
	}
	u, err := url.Parse(pasted)
	if err != nil {
		return Callback{}, errors.New("the pasted text is not an address")
	}
	want, err := url.Parse(redirectURI)
	if err != nil {
		return Callback{}, errors.New("the redirect URI does not parse")
	}
	if u.Scheme != want.Scheme || u.Host != want.Host || u.Path != want.Path {
		return Callback{}, fmt.Errorf("the pasted address is not the redirect address %s of this sign-in", want.String())
	}
	return ParseCallback(u.RawQuery)
}

// checkCallback applies the checks of the authorization response: the
// state (RFC 6749 §10.12, compared in constant time), an error response,
// and the issuer (RFC 9207 §2.4: when the server advertises the iss
// parameter it must be present; when present it must equal the issuer).
func checkCallback(c Callback, state, issuer string, issRequired bool) error {
	if subtle.ConstantTimeCompare([]byte(c.State), []byte(state)) != 1 {
		return refusef("the state in the redirect does not match this sign-in (RFC 6749 §10.12)")
	}
	if issRequired && c.Iss == "" {
		return refusef("the redirect lacks the iss parameter the authorization server advertises (RFC 9207)")
	}
	if c.Iss != "" && c.Iss != issuer {
		return refusef("the redirect names the issuer %q, not %q (RFC 9207)", quote.V(sanitize(c.Iss, 200)), quote.V(issuer))
	}
	if c.Error != "" {
		msg := "the authorization server answered " + sanitize(c.Error, 64)
		if c.ErrorDescription != "" {
			msg += ": " + sanitize(c.ErrorDescription, 200)
		}
		return &RefusedError{Reason: msg}
	}
	return nil
}

// callbackServer is the loopback listener that receives the redirect.
type callbackServer struct {
	ln     net.Listener
	srv    *http.Server
	state  string
	ch     chan Callback
	done   chan struct{}
	port   int
	closed bool
}

// listenCallback listens on 127.0.0.1:port (0: a free port). Only
// 127.0.0.1 is bound, never all interfaces (RFC 8252 §8.3).
func listenCallback(port int, state string) (*callbackServer, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("listening for the sign-in callback on 127.0.0.1:%d: %w", port, err)
	}
	cs := &callbackServer{ln: ln, state: state, ch: make(chan Callback, 1), done: make(chan struct{}), port: ln.Addr().(*net.TCPAddr).Port}
	cs.srv = &http.Server{
		Handler:           http.HandlerFunc(cs.serve),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		MaxHeaderBytes:    maxCallbackURL + 4<<10,
	}
	// One browser answers; a few connections are plenty, and a local
	// flood of idle ones cannot keep it out (internal/httpguard).
	guard := httpguard.New(httpguard.Limits{MaxConns: 16, MaxPerAddr: 16})
	go func() {
		defer close(cs.done)
		guard.Serve(cs.srv, ln) //nolint:errcheck // ends with ErrServerClosed on close
	}()
	return cs, nil
}

// serve answers the browser. A request with another path, method or
// state is answered and ignored, so a stray request (a favicon, an old
// tab) cannot end the sign-in; the first one with this sign-in's state is
// delivered.
func (cs *callbackServer) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if r.URL.Path != callbackPath || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	c, err := ParseCallback(r.URL.RawQuery)
	if err != nil || subtle.ConstantTimeCompare([]byte(c.State), []byte(cs.state)) != 1 {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintln(w, "This is not the answer the sign-in waits for. Start the sign-in again if this persists.")
		return
	}
	select {
	case cs.ch <- c:
		if c.Error != "" {
			fmt.Fprintln(w, "Sign-in was not completed. You can close this window and return to the terminal.")
		} else {
			fmt.Fprintln(w, "Signed in. You can close this window and return to the terminal.")
		}
	default:
		w.WriteHeader(http.StatusConflict)
		fmt.Fprintln(w, "The sign-in has already received its answer.")
	}
}

// wait returns the first delivered callback, or an error when ctx ends
// or the timeout passes.
func (cs *callbackServer) wait(ctx context.Context, timeout time.Duration) (Callback, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case c := <-cs.ch:
		return c, nil
	case <-t.C:
		return Callback{}, fmt.Errorf("%w (%s)", ErrTimeout, timeout)
	case <-ctx.Done():
		return Callback{}, context.Cause(ctx)
	}
}

// close stops the listener and waits for its goroutine; idempotent.
func (cs *callbackServer) close() {
	if cs.closed {
		return
	}
	cs.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if cs.srv.Shutdown(ctx) != nil {
		cs.srv.Close()
	}
	<-cs.done
}
