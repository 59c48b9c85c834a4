// Command conformance-auth-client is the MCP client that the official MCP
// conformance suite drives for its authorization scenarios (auth/*;
// interop/README.md, "Conformance authorization scenarios
// (`oauth_test.go`)"). The suite starts it as `conformance-auth-client
// SERVER_URL` with the scenario in MCP_CONFORMANCE_SCENARIO and, for
// pre-registration, JSON with client_id and client_secret in
// MCP_CONFORMANCE_CONTEXT. It is built on the project's MCP client (package
// mcp) and sign-in package (mcp/oauth): it connects, signs in when the
// server answers 401, signs in again for more scope on 403
// insufficient_scope (at most oauth.MaxStepUps times), then lists the tools
// and calls each with empty arguments.
//
// The authorization step runs headlessly: the program fetches the
// authorization URL without following redirects and pastes the Location
// back into the sign-in, as `--no-browser` lets a user do. It is the only
// program that sets oauth.NetOptions.InsecureLoopback (plain http to
// loopback), because the suite's servers listen on http://localhost.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"time"

	"agent/config"
	"agent/internal/netguard"
	"agent/mcp"
	"agent/mcp/oauth"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: conformance-auth-client SERVER_URL")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, os.Args[len(os.Args)-1]); err != nil {
		fmt.Fprintf(os.Stderr, "conformance-auth-client: scenario %q: %v\n", os.Getenv("MCP_CONFORMANCE_SCENARIO"), err)
		os.Exit(1)
	}
}

// headless plays the user: it remembers the authorization URL and answers
// the paste prompt with where the authorization server redirects.
type headless struct{ authURL string }

func (h *headless) Show(line string) {
	if strings.HasPrefix(line, "http://") || strings.HasPrefix(line, "https://") {
		h.authURL = line
	}
	fmt.Fprintln(os.Stderr, line)
}

func (h *headless) Confirm(context.Context, string) (bool, error) { return false, nil }

func (h *headless) ReadSecret(ctx context.Context, _ string) (string, error) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.authURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if loc == "" {
		return "", fmt.Errorf("the authorization endpoint answered %d without a redirect", resp.StatusCode)
	}
	return loc, nil
}

func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func run(ctx context.Context, serverURL string) error {
	dir, err := os.MkdirTemp("", "conformance-auth-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	def := &config.ServerDef{Name: "conformance", Scope: config.User, File: "conformance", Type: "http", RawType: "http",
		URL: config.Template{Raw: serverURL, Expansion: config.Expansion{Value: serverURL}}, OAuth: &config.OAuth{}}
	var secret string
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		var cc struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}
		if err := json.Unmarshal([]byte(raw), &cc); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
		if cc.ClientID != "" {
			def.OAuth.ClientID, def.OAuth.CallbackPort, secret = cc.ClientID, freePort(), cc.ClientSecret
		}
	}
	netOpts := oauth.NetOptions{
		Policy:           netguard.Policy{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}},
		InsecureLoopback: true,
	}
	store := oauth.NewStore(dir)
	id := oauth.IdentityOf(def)
	src := oauth.NewSource(store, id, oauth.SourceOptions{Net: netOpts})
	opts := oauth.Options{Server: def, Store: store, UI: &headless{}, ClientSecret: secret, NoBrowser: true, Net: netOpts}

	signIns, stepUps := 0, 0
	for {
		err := work(ctx, serverURL, src)
		if err == nil {
			return nil
		}
		var he *mcp.HTTPStatusError
		switch {
		case errors.Is(err, oauth.ErrSignInRequired) || errors.As(err, &he) && he.StatusCode == http.StatusUnauthorized:
			if signIns++; signIns > 2 {
				return fmt.Errorf("still unauthorized after signing in: %w", err)
			}
			opts.Challenge = nil
			if he != nil {
				opts.Challenge = he.Authenticate
			}
		case errors.As(err, &he) && he.StatusCode == http.StatusForbidden:
			held := ""
			if c, lerr := store.Load(id); lerr == nil {
				held = c.Scope
			}
			scope, more := oauth.StepUpScope(held, he.Authenticate)
			if !more {
				return fmt.Errorf("forbidden, and the challenge asks for no new scope: %w", err)
			}
			if stepUps++; stepUps > oauth.MaxStepUps {
				return fmt.Errorf("gave up after %d sign-ins for more scope: %w", oauth.MaxStepUps, err)
			}
			opts.Scope, opts.Challenge = scope, he.Authenticate
		default:
			return err
		}
		if _, err := oauth.SignIn(ctx, opts); err != nil {
			return err
		}
		src.Reload()
	}
}

// work connects, lists the tools and calls each with empty arguments.
func work(ctx context.Context, serverURL string, src *oauth.Source) error {
	t, err := mcp.NewHTTPTransport(mcp.HTTPOptions{URL: serverURL, Client: src.HTTPClient()})
	if err != nil {
		return err
	}
	c, err := mcp.Connect(ctx, t, mcp.ClientOptions{})
	if err != nil {
		return err
	}
	defer c.Close()
	tools, err := c.Tools(ctx)
	if err != nil {
		return err
	}
	for _, tool := range tools {
		if _, err := c.CallTool(ctx, tool.Name, map[string]any{}, mcp.CallOptions{}); err != nil {
			return err
		}
	}
	return nil
}
