package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"agent/config"
	"agent/internal/netguard"
	"agent/internal/quote"
	"agent/mcp"
	"agent/mcp/oauth"
	"agent/tui/term"
)

// `agent mcp login NAME [--client-secret] [--no-browser]` and `agent mcp
// logout NAME` (docs/reference/cli.md, "MCP commands";
// docs/reference/mcp.md, "Sign-in" and "Credentials").

func mcpLoginCommand() *command {
	return &command{
		path:     "mcp login",
		synopsis: "NAME [--client-secret] [--no-browser]",
		summary:  "sign in to an OAuth MCP server; the tokens are kept for later sessions",
		help: `Discovers the server's authorization server, shows the authorization URL and asks
before opening a browser (https only). The browser returns to a listener on
127.0.0.1. With --no-browser nothing is opened: open the URL yourself and paste the
address the browser was sent to (it may fail to load) at the prompt; the input is
not echoed. --client-secret asks for a pre-registered client's secret (the
definition's oauth.clientId) without echo; a secret is never typed into a session.
Tokens are kept in ~/.agent/mcp-credentials/ (0600 files in a 0700 directory). After
signing in, the server is connected once to count its tools.`,
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			var clientSecret, noBrowser bool
			f.boolVar(&clientSecret, "client-secret", "", "ask for the pre-registered client's secret (without echo)")
			f.boolVar(&noBrowser, "no-browser", "", "open no browser; paste the address the browser was sent to")
			return func(ctx context.Context, e *env, args []string) error {
				name, err := oneName("mcp login", args)
				if err != nil {
					return err
				}
				s, _, _, err := e.loadSettings()
				if err != nil {
					return err
				}
				d, err := oauthServer(s, name)
				if err != nil {
					return err
				}
				ui := newTerminalUI(e)
				var secret string
				if clientSecret {
					if d.OAuth.ClientID == "" {
						return fmt.Errorf("--client-secret needs oauth.clientId in the definition of %s (%s)", name, d.File)
					}
					v, err := ui.ReadSecret(ctx, fmt.Sprintf("Client secret of %s for MCP server %s: ", d.OAuth.ClientID, name))
					if err != nil {
						return fmt.Errorf("reading the client secret: %w", err)
					}
					if secret = strings.TrimSpace(v); secret == "" {
						return errors.New("no client secret was given")
					}
				}
				netOpts := oauth.NetOptions{Policy: policyOf(s)}
				store := oauth.NewStore(config.UserDir(e.home))
				opts := oauth.Options{Server: d, Store: store, UI: ui, ClientSecret: secret, NoBrowser: noBrowser, Net: netOpts}
				res, err := oauth.SignIn(ctx, opts)
				if err != nil {
					return signInError(name, err)
				}
				// Connect once to count the tools (docs/reference/mcp.md,
				// "Sign-in"); a 403 insufficient_scope asks for the union
				// of scopes, at most MaxStepUps times.
				var n int
				for attempt := 0; ; attempt++ {
					n, err = countTools(ctx, d, store, netOpts)
					var he *mcp.HTTPStatusError
					if err == nil || !errors.As(err, &he) || he.StatusCode != 403 || attempt >= oauth.MaxStepUps {
						break
					}
					scope, more := oauth.StepUpScope(res.Scope, he.Authenticate)
					if !more {
						break
					}
					fmt.Fprintf(e.err, "MCP server %s needs more scope (%s); signing in again.\n", name, sanitizeLine(scope))
					opts.Scope, opts.Challenge = scope, he.Authenticate
					if res, err = oauth.SignIn(ctx, opts); err != nil {
						return signInError(name, err)
					}
				}
				if err != nil {
					return fmt.Errorf("signed in to MCP server %s, but connecting to it failed: %w", name, err)
				}
				_, err = fmt.Fprintf(e.out, "Signed in to MCP server %s; %d of its tools are available from your next message.\n", sanitizeLine(name), n)
				return err
			}
		},
	}
}

func mcpLogoutCommand() *command {
	return &command{
		path:     "mcp logout",
		synopsis: "NAME",
		summary:  "delete the stored tokens of an MCP server, then ask the server to revoke them",
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			return func(ctx context.Context, e *env, args []string) error {
				name, err := oneName("mcp logout", args)
				if err != nil {
					return err
				}
				s, _, _, err := e.loadSettings()
				if err != nil {
					return err
				}
				d, err := oauthServer(s, name)
				if err != nil {
					return err
				}
				store := oauth.NewStore(config.UserDir(e.home))
				res, err := oauth.Logout(ctx, store, oauth.IdentityOf(d), oauth.NetOptions{Policy: policyOf(s)})
				if errors.Is(err, oauth.ErrNotSignedIn) {
					_, err = fmt.Fprintf(e.out, "Not signed in to MCP server %s; nothing to do.\n", sanitizeLine(name))
					return err
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(e.out, "Signed out of MCP server %s; its tokens are deleted.\n", sanitizeLine(name))
				switch {
				case res.RevokeErr != nil:
					fmt.Fprintf(e.err, "agent mcp logout: the server did not confirm the revocation: %s\n", sanitizeLine(res.RevokeErr.Error()))
				case res.NoRevocation:
					fmt.Fprintln(e.err, "The authorization server offers no revocation endpoint; the tokens stay valid there until they expire.")
				default:
					fmt.Fprintf(e.err, "The authorization server revoked %d token(s).\n", res.Revoked)
				}
				return nil
			}
		},
	}
}

func oneName(cmd string, args []string) (string, error) {
	switch len(args) {
	case 0:
		return "", usagef(cmd, "missing the server NAME")
	case 1:
		return args[0], nil
	}
	return "", usagef(cmd, "unexpected argument %q", quote.V(args[1]))
}

// oauthServer finds a definition that can sign in, or says why not.
func oauthServer(s *config.Settings, name string) (*config.ServerDef, error) {
	d, ok := s.Servers[name]
	if !ok {
		return nil, fmt.Errorf("no MCP server named %q in the settings (see 'agent mcp list')", quote.V(sanitizeLine(name)))
	}
	switch {
	case d.Untrusted:
		return nil, fmt.Errorf("MCP server %s is defined in %s, and the workspace is untrusted: run 'agent trust --yes'", name, d.File)
	case d.Refused():
		return nil, fmt.Errorf("the definition of MCP server %s in %s is refused: %s", name, d.File, sanitizeLine(strings.Join(d.Problems, "; ")))
	case d.Type != "http":
		return nil, fmt.Errorf("MCP server %s is not a remote (http) server; only those sign in", name)
	case d.OAuth == nil:
		return nil, fmt.Errorf("MCP server %s has no oauth object in %s, so it does not sign in with OAuth", name, d.File)
	}
	return d, nil
}

func policyOf(s *config.Settings) netguard.Policy {
	return netguard.Policy{Allowed: s.AllowedNetworks}
}

// signInError adds the remedies of docs/reference/mcp.md, "Sign-in".
func signInError(name string, err error) error {
	if errors.Is(err, oauth.ErrBrowserFailed) {
		return fmt.Errorf("sign-in to MCP server %s failed (browser-failed): %w; run 'agent mcp login %s --no-browser'", name, err, name)
	}
	return fmt.Errorf("sign-in to MCP server %s failed: %w", name, err)
}

// countTools connects with the stored tokens and lists the tools.
func countTools(ctx context.Context, d *config.ServerDef, store *oauth.Store, net oauth.NetOptions) (int, error) {
	src := oauth.NewSource(store, oauth.IdentityOf(d), oauth.SourceOptions{Net: net})
	t, err := mcp.NewHTTPTransport(mcp.HTTPOptions{URL: d.URL.Value, Client: src.HTTPClient()})
	if err != nil {
		return 0, err
	}
	c, err := mcp.Connect(ctx, t, mcp.ClientOptions{Timeout: d.Timeout})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	tools, err := c.Tools(ctx)
	if err != nil {
		return 0, err
	}
	return len(tools), nil
}

// terminalUI is the sign-in's conversation on the terminal: progress on
// stderr; questions only when stdin is a terminal; secrets read without
// echo there, or as one line from a pipe (scripts and tests).
type terminalUI struct {
	e   *env
	tty *os.File
	in  *bufio.Reader
}

func newTerminalUI(e *env) *terminalUI {
	u := &terminalUI{e: e, in: bufio.NewReader(io.LimitReader(e.in, 64<<10))}
	if f, ok := e.in.(*os.File); ok && term.IsTerminal(f) {
		u.tty = f
	}
	return u
}

func (u *terminalUI) Show(line string) { fmt.Fprintln(u.e.err, sanitizeLine(line)) }

func (u *terminalUI) Confirm(ctx context.Context, q string) (bool, error) {
	if u.tty == nil {
		return false, nil
	}
	fmt.Fprintf(u.e.err, "%s [y/N] ", q)
	line, err := u.readLine(ctx)
	if err != nil {
		return false, err
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}

func (u *terminalUI) ReadSecret(ctx context.Context, prompt string) (string, error) {
	fmt.Fprint(u.e.err, prompt)
	if u.tty != nil {
		b, err := term.ReadPassword(ctx, u.tty)
		fmt.Fprintln(u.e.err)
		return string(b), err
	}
	line, err := u.readLine(ctx)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// readLine reads one line, giving up when ctx ends (the read goroutine
// ends with the process, which is exiting then).
func (u *terminalUI) readLine(ctx context.Context) (string, error) {
	ch := make(chan struct {
		s   string
		err error
	}, 1)
	go func() {
		s, err := u.in.ReadString('\n')
		if err == io.EOF && s != "" {
			err = nil
		}
		ch <- struct {
			s   string
			err error
		}{s, err}
	}()
	select {
	case r := <-ch:
		if r.err == io.EOF {
			return "", errors.New("no input: standard input ended")
		}
		return r.s, r.err
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}
