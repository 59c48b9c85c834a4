package oauth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"agent/config"
)

// UI is how a sign-in talks to the user. The terminal command and the
// in-session command each provide one. Methods are called from the
// goroutine that runs SignIn, one at a time.
type UI interface {
	// Show prints one line of progress (the authorization URL, what to do
	// next). The text never holds a secret.
	Show(line string)
	// Confirm asks a yes/no question. It returns false without error when
	// nobody can answer (no terminal).
	Confirm(ctx context.Context, question string) (bool, error)
	// ReadSecret asks for one line without echo (the pasted redirect
	// address carries the authorization code).
	ReadSecret(ctx context.Context, prompt string) (string, error)
}

// Options are the inputs of SignIn. Zero values are the documented
// defaults.
type Options struct {
	// Server is the definition to sign in to: type http with an oauth
	// object. Its identity keys the stored tokens.
	Server *config.ServerDef
	// Store keeps the tokens (~/.agent/mcp-credentials).
	Store *Store
	// UI shows progress and asks the user; required.
	UI UI
	// ClientSecret is a pre-registered client's secret, typed by the user
	// in `agent mcp login --client-secret` only (docs/reference/mcp.md,
	// "Sign-in").
	ClientSecret string
	// NoBrowser: no browser is opened and no listener waits; the user
	// pastes the address the browser was sent to (docs/reference/mcp.md,
	// "Sign-in").
	NoBrowser bool
	// Scope, when set, replaces the scope discovery would choose (step-up
	// after 403 insufficient_scope; see StepUpScope).
	Scope string
	// Challenge holds WWW-Authenticate values the caller already has from
	// a refused request; nil makes the sign-in probe the server.
	Challenge []string
	// Net says how servers are reached.
	Net NetOptions
	// CallbackTimeout bounds the wait for the browser; 0 means 5 minutes.
	CallbackTimeout time.Duration
	// OpenBrowser opens an https URL; nil means the platform's opener,
	// started without a shell.
	OpenBrowser func(ctx context.Context, url string) error
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Result says what a sign-in obtained, without its tokens.
type Result struct {
	Issuer string
	Scope  string // granted scope as the server reported it, else requested
}

// SignIn runs the authorization code flow with PKCE for one MCP server (MCP
// authorization 2025-06-18 and 2025-11-25; docs/reference/mcp.md,
// "Sign-in") and stores the tokens. The authorization URL is always shown;
// a browser is opened only after the user agrees and only for an https URL.
// Nothing is stored unless the whole flow succeeds. Every refusal wraps
// ErrRefused and says why.
func SignIn(ctx context.Context, opts Options) (*Result, error) {
	if opts.UI == nil || opts.Store == nil || opts.Server == nil {
		return nil, errors.New("oauth: SignIn needs Server, Store and UI")
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	d := opts.Server
	if d.Refused() {
		return nil, refusef("the definition of %s has problems: %s", d.Name, strings.Join(d.Problems, "; "))
	}
	if d.Type != "http" {
		return nil, refusef("%s is not a remote (http) server", d.Name)
	}
	if d.OAuth == nil {
		return nil, refusef("the definition of %s has no oauth object, so it does not sign in with OAuth", d.Name)
	}
	if opts.ClientSecret != "" && d.OAuth.ClientID == "" {
		return nil, refusef("a client secret needs oauth.clientId in the definition of %s", d.Name)
	}
	if d.OAuth.ClientID != "" && d.OAuth.CallbackPort == 0 {
		return nil, refusef("oauth.clientId needs oauth.callbackPort in the definition of %s", d.Name)
	}
	insecure := opts.Net.InsecureLoopback
	c := opts.Net.client()

	disc, err := Discover(ctx, DiscoverOptions{
		ServerURL:             d.URL.Value,
		AuthServerMetadataURL: d.OAuth.AuthServerMetadataURL,
		Scopes:                d.OAuth.Scopes,
		Challenge:             opts.Challenge,
		Net:                   opts.Net,
	})
	if err != nil {
		return nil, err
	}
	scope := disc.Scope
	if opts.Scope != "" {
		scope = opts.Scope
	}
	state, err := randomString()
	if err != nil {
		return nil, err
	}

	// The redirect URI: the fixed port of a pre-registered client, else a
	// free one. Without a browser nothing listens: the user pastes the
	// address instead.
	var cs *callbackServer
	port := d.OAuth.CallbackPort
	if !opts.NoBrowser {
		if cs, err = listenCallback(port, state); err != nil {
			return nil, err
		}
		defer cs.close()
		port = cs.port
	} else if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	redirectURI := "http://127.0.0.1:" + strconv.Itoa(port) + callbackPath

	var reg Registration
	if d.OAuth.ClientID != "" {
		if reg, err = preRegistered(d.OAuth.ClientID, opts.ClientSecret, disc.Server); err != nil {
			return nil, err
		}
	} else if reg, err = register(ctx, c, disc.Server, redirectURI, scope, insecure); err != nil {
		return nil, err
	}

	verifier := oauth2.GenerateVerifier()
	cfg := &oauth2.Config{
		ClientID:     reg.ID,
		ClientSecret: reg.Secret,
		Endpoint: oauth2.Endpoint{
			AuthURL:   disc.Server.AuthorizationEndpoint,
			TokenURL:  disc.Server.TokenEndpoint,
			AuthStyle: oauth2.AuthStyleInParams,
		},
		RedirectURL: redirectURI,
	}
	if reg.AuthMethod == AuthSecretBasic {
		cfg.Endpoint.AuthStyle = oauth2.AuthStyleInHeader
	}
	if scope != "" {
		cfg.Scopes = strings.Fields(scope)
	}
	authURL := cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", disc.Resource))

	opts.UI.Show(fmt.Sprintf("Sign in to MCP server %s at %s:", d.Name, disc.Issuer))
	opts.UI.Show(authURL)
	var cb Callback
	timeout := opts.CallbackTimeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	if opts.NoBrowser {
		opts.UI.Show("Open this address in a browser. After signing in, the browser is sent to " + redirectURI + "?...; the page may fail to load.")
		pasted, err := opts.UI.ReadSecret(ctx, "Paste the full address the browser was sent to: ")
		if err != nil {
			return nil, fmt.Errorf("reading the pasted address: %w", err)
		}
		if cb, err = ParsePastedRedirect(pasted, redirectURI); err != nil {
			return nil, &RefusedError{Reason: err.Error()}
		}
	} else {
		if strings.HasPrefix(authURL, "https://") {
			ok, err := opts.UI.Confirm(ctx, "Open this address in your browser?")
			if err != nil {
				return nil, err
			}
			if ok {
				open := opts.OpenBrowser
				if open == nil {
					open = OpenBrowser
				}
				if err := open(ctx, authURL); err != nil {
					return nil, fmt.Errorf("%w: the browser could not be opened (%v); sign in with --no-browser", ErrBrowserFailed, err)
				}
			}
		}
		opts.UI.Show(fmt.Sprintf("Waiting for the browser to return to %s (up to %s)...", redirectURI, timeout))
		if cb, err = cs.wait(ctx, timeout); err != nil {
			return nil, err
		}
	}
	if err := checkCallback(cb, state, disc.Issuer, disc.Server.IssParameterSupported); err != nil {
		return nil, err
	}

	xctx := context.WithValue(ctx, oauth2.HTTPClient, c)
	tok, err := cfg.Exchange(xctx, cb.Code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", disc.Resource))
	if err != nil {
		return nil, exchangeError(err)
	}
	if err := checkTokenType(tok.TokenType); err != nil {
		return nil, err
	}
	granted, _ := tok.Extra("scope").(string)
	creds := &Credentials{
		Server:             d.Name,
		URL:                d.URL.Value,
		Resource:           disc.Resource,
		Issuer:             disc.Issuer,
		TokenEndpoint:      disc.Server.TokenEndpoint,
		RevocationEndpoint: disc.Server.RevocationEndpoint,
		ClientID:           reg.ID,
		ClientSecret:       reg.Secret,
		TokenAuthMethod:    reg.AuthMethod,
		AccessToken:        tok.AccessToken,
		TokenType:          tok.TokenType,
		RefreshToken:       tok.RefreshToken,
		Scope:              scope,
	}
	if granted != "" {
		creds.Scope = granted
	}
	if tok.ExpiresIn > 0 {
		creds.Expiry = expiry(now(), tok.ExpiresIn)
	}
	if err := opts.Store.Save(IdentityOf(d), creds); err != nil {
		return nil, fmt.Errorf("storing the tokens: %w", err)
	}
	return &Result{Issuer: disc.Issuer, Scope: creds.Scope}, nil
}

// exchangeError reports a failed code exchange without the response body
// (which may echo the code) or the URL.
func exchangeError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		return &TokenError{Endpoint: "token", Status: status, Code: sanitize(re.ErrorCode, 64), Description: sanitize(re.ErrorDescription, 200)}
	}
	return fmt.Errorf("exchanging the authorization code: %w", netError(err))
}

// randomString is 32 random bytes, base64url: the state parameter.
func randomString() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// freePort finds a free loopback port for a redirect URI nobody listens
// on (--no-browser with dynamic registration).
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// StepUpScope is the scope to request after a 403 insufficient_scope
// challenge: the union of the scopes held and the scopes the challenge
// asks for (MCP 2025-11-25 "Step-Up Authorization Flow"), in first-seen
// order. It reports false when the challenge adds nothing, so the caller
// does not loop.
func StepUpScope(held string, authenticate []string) (string, bool) {
	b, ok := BearerChallenge(authenticate)
	if !ok || b.Error != "insufficient_scope" || b.Scope == "" {
		return "", false
	}
	seen := map[string]bool{}
	var out []string
	for _, s := range strings.Fields(held) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	added := false
	for _, s := range strings.Fields(b.Scope) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
			added = true
		}
	}
	return strings.Join(out, " "), added
}

// MaxStepUps bounds sign-ins for more scope in a row (issue rule: at most
// 3 attempts), so a server that always wants more cannot loop the client.
const MaxStepUps = 3

// OpenBrowser starts the platform's URL opener without a shell, with the
// URL as one argument. Only https URLs are opened.
func OpenBrowser(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return errors.New("only an https address is opened")
	}
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.CommandContext(ctx, "open", raw)
	case "windows":
		cmd = exec.CommandContext(ctx, "rundll32", "url.dll,FileProtocolHandler", raw)
	default:
		cmd = exec.CommandContext(ctx, "xdg-open", raw)
	}
	return cmd.Run()
}
