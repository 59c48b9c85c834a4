package oauth

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"agent/internal/netguard"
	"agent/internal/quote"
)

// NetOptions say how the sign-in reaches servers. The zero value uses the
// default address policy (docs/reference/mcp.md, "Address policy"), the
// system's roots, and https everywhere.
type NetOptions struct {
	// Policy is the outbound address policy (the user's
	// mcpAllowedNetworks). Every OAuth request is dialled through it, with
	// no proxy and no redirects.
	Policy netguard.Policy
	// RootCAs replaces the system roots (tests inject their TLS server's
	// certificate here); nil means the system roots.
	RootCAs *x509.CertPool
	// InsecureLoopback allows plain http to loopback hosts. Only the
	// interop test program sets it (interop/README.md, "Conformance
	// authorization scenarios (`oauth_test.go`)").
	InsecureLoopback bool
	// Timeout bounds each OAuth request; 0 means 30 s.
	Timeout time.Duration
}

func (o NetOptions) client() *http.Client {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	t := o.Policy.Transport(netguard.ClientOptions{})
	if o.RootCAs != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: o.RootCAs, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: t, CheckRedirect: netguard.NoRedirects, Timeout: timeout}
}

// errNotFound marks a well-known location that does not hold a document,
// so discovery tries the next one.
var errNotFound = errors.New("no document at this location")

// getJSON fetches a JSON document over https with a bounded body.
func getJSON(ctx context.Context, c *http.Client, what, raw string, insecure bool) ([]byte, error) {
	if _, err := checkURL(what, raw, insecure); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, refusef("%s does not parse", what)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, policyRefusal(fmt.Errorf("fetching the %s: %w", what, netError(err)))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata+1))
	if err != nil {
		return nil, fmt.Errorf("reading the %s: %w", what, netError(err))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: the %s answered %d", errNotFound, what, resp.StatusCode)
	}
	if len(body) > maxMetadata {
		return nil, refusef("the %s is larger than %d bytes", what, maxMetadata)
	}
	return body, nil
}

// netError keeps the reason of a failed request and drops the URL, whose
// query may carry a secret (docs/reference/mcp.md, "Sign-in").
func netError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// policyRefusal turns a redirect or an address the policy refuses into a
// refusal of the sign-in (docs/reference/mcp.md, "Sign-in" and "Address
// policy"), keeping its reason.
func policyRefusal(err error) error {
	var re *netguard.RefusedError
	if errors.Is(err, netguard.ErrRedirect) || errors.As(err, &re) {
		return &RefusedError{Reason: sanitize(err.Error(), 300)}
	}
	return err
}

// Discovery is what sign-in learned about a server before asking the user.
type Discovery struct {
	ServerURL string // canonical form of the MCP server URL
	// Resource is the resource parameter of every authorization, token
	// and refresh request (RFC 8707): the resource named by the
	// protected-resource metadata, or the server URL when it publishes none.
	Resource string
	// ResourceMetadata is nil when the server publishes none (the
	// 2025-03-26 fallback of docs/reference/mcp.md, "Sign-in").
	ResourceMetadata *ResourceMetadata
	Issuer           string
	Server           *ServerMetadata
	Challenge        Bearer // the 401 challenge, when the server sent one
	Scope            string // the scope to ask for; "" omits the parameter
}

// DiscoverOptions are the inputs of Discover.
type DiscoverOptions struct {
	ServerURL string
	// AuthServerMetadataURL is the definition's oauth.authServerMetadataUrl.
	AuthServerMetadataURL string
	// Scopes are the definition's oauth.scopes.
	Scopes []string
	// Challenge holds WWW-Authenticate values the caller already has; nil
	// makes Discover probe the server with an unauthenticated request.
	Challenge []string
	Net       NetOptions
}

// Discover finds the authorization server of an MCP server and checks it
// against the rules of docs/reference/mcp.md, "Sign-in" (MCP authorization,
// revisions 2025-06-18 and 2025-11-25, "Authorization Server Discovery").
// Every refusal wraps ErrRefused and names its reason.
func Discover(ctx context.Context, opts DiscoverOptions) (*Discovery, error) {
	c := opts.Net.client()
	insecure := opts.Net.InsecureLoopback
	su, err := checkURL("the MCP server URL", opts.ServerURL, insecure)
	if err != nil {
		return nil, err
	}
	d := &Discovery{ServerURL: canonicalResource(su)}
	challenge := opts.Challenge
	if challenge == nil {
		challenge, err = probe(ctx, c, su.String())
		if err != nil {
			return nil, err
		}
	}
	d.Challenge, _ = BearerChallenge(challenge)

	// Protected-resource metadata (RFC 9728): the challenge's
	// resource_metadata, else the path-aware well-known URL, then the root.
	if d.Challenge.ResourceMetadata != "" {
		data, err := getJSON(ctx, c, "protected-resource metadata", d.Challenge.ResourceMetadata, insecure)
		if err != nil {
			return nil, refusef("the protected-resource metadata named by the server's challenge cannot be used: %v", err)
		}
		if d.ResourceMetadata, err = ParseResourceMetadata(data); err != nil {
			return nil, refusef("%v", err)
		}
	} else {
		for _, u := range resourceMetadataURLs(su) {
			data, err := getJSON(ctx, c, "protected-resource metadata", u, insecure)
			if errors.Is(err, errNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if d.ResourceMetadata, err = ParseResourceMetadata(data); err != nil {
				return nil, refusef("%v", err)
			}
			break
		}
	}

	if prm := d.ResourceMetadata; prm != nil {
		if !resourceNames(prm.Resource, su) {
			return nil, refusef("the protected-resource metadata names the resource %q, not this server (RFC 9728 §3.3)", quote.V(sanitize(prm.Resource, 200)))
		}
		d.Resource = prm.Resource
		if len(prm.AuthorizationServers) == 0 {
			return nil, refusef("the protected-resource metadata names no authorization server")
		}
		d.Issuer = prm.AuthorizationServers[0]
		if opts.AuthServerMetadataURL != "" {
			if err := d.fromMetadataURL(ctx, c, opts.AuthServerMetadataURL, insecure); err != nil {
				return nil, err
			}
			if !contains(prm.AuthorizationServers, d.Server.Issuer) {
				return nil, refusef("oauth.authServerMetadataUrl describes the issuer %q, which the server's metadata does not name", quote.V(sanitize(d.Server.Issuer, 200)))
			}
			d.Issuer = d.Server.Issuer
		} else if err := d.fromIssuer(ctx, c, insecure); err != nil {
			return nil, err
		}
	} else {
		// 2025-03-26 compatibility: the authorization server lives at the
		// server's origin; without metadata, the default endpoint paths.
		d.Resource = d.ServerURL
		origin := (&url.URL{Scheme: su.Scheme, Host: su.Host}).String()
		if opts.AuthServerMetadataURL != "" {
			if err := d.fromMetadataURL(ctx, c, opts.AuthServerMetadataURL, insecure); err != nil {
				return nil, err
			}
			d.Issuer = d.Server.Issuer
		} else {
			data, err := getJSON(ctx, c, "authorization-server metadata", origin+"/.well-known/oauth-authorization-server", insecure)
			switch {
			case errors.Is(err, errNotFound):
				d.Issuer = origin
				d.Server = &ServerMetadata{
					Issuer:                        origin,
					AuthorizationEndpoint:         origin + "/authorize",
					TokenEndpoint:                 origin + "/token",
					RegistrationEndpoint:          origin + "/register",
					CodeChallengeMethodsSupported: []string{"S256"}, // PKCE is mandatory in 2025-03-26
				}
			case err != nil:
				return nil, err
			default:
				if d.Server, err = ParseServerMetadata(data); err != nil {
					return nil, refusef("%v", err)
				}
				// 2025-03-26 has no protected-resource metadata to name
				// the issuer: the metadata found at the server's origin
				// speaks for it, so its issuer is accepted when it lives
				// at that same origin (it may add a path, such as
				// /oauth); an issuer elsewhere is refused.
				d.Issuer = origin
				if iu, err := url.Parse(d.Server.Issuer); err == nil && iu.Scheme == su.Scheme && strings.EqualFold(iu.Host, su.Host) {
					d.Issuer = d.Server.Issuer
				}
			}
		}
	}
	if err := CheckServerMetadata(d.Server, d.Issuer, insecure); err != nil {
		return nil, err
	}

	// Scope selection (MCP 2025-11-25 "Scope Selection Strategy"): the
	// challenge's scope, else the definition's, else the resource's
	// scopes_supported; omitted when none gives one.
	switch {
	case d.Challenge.Scope != "":
		d.Scope = d.Challenge.Scope
	case len(opts.Scopes) > 0:
		d.Scope = strings.Join(opts.Scopes, " ")
	case d.ResourceMetadata != nil && len(d.ResourceMetadata.ScopesSupported) > 0:
		d.Scope = strings.Join(d.ResourceMetadata.ScopesSupported, " ")
	}
	return d, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d *Discovery) fromMetadataURL(ctx context.Context, c *http.Client, raw string, insecure bool) error {
	data, err := getJSON(ctx, c, "authorization-server metadata (oauth.authServerMetadataUrl)", raw, insecure)
	if err != nil {
		return refusef("%v", err)
	}
	if d.Server, err = ParseServerMetadata(data); err != nil {
		return refusef("%v", err)
	}
	return nil
}

// fromIssuer fetches the issuer's metadata from the locations of RFC 8414
// §3.1 (path-aware) and OpenID Connect Discovery, in the order of MCP
// 2025-11-25 "Authorization Server Metadata Discovery".
func (d *Discovery) fromIssuer(ctx context.Context, c *http.Client, insecure bool) error {
	iu, err := checkURL("the authorization server (issuer)", d.Issuer, insecure)
	if err != nil {
		return err
	}
	if iu.RawQuery != "" {
		return refusef("the issuer has a query component (RFC 8414 §2)")
	}
	for _, u := range serverMetadataURLs(iu) {
		data, err := getJSON(ctx, c, "authorization-server metadata", u, insecure)
		if errors.Is(err, errNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if d.Server, err = ParseServerMetadata(data); err != nil {
			return refusef("%v", err)
		}
		return nil
	}
	return refusef("the authorization server %s publishes no metadata (RFC 8414, OpenID Connect discovery)", redactURL(iu))
}

// resourceMetadataURLs are the well-known locations of RFC 9728 §3.1 for
// a server URL: path-aware first, then the root.
func resourceMetadataURLs(su *url.URL) []string {
	origin := su.Scheme + "://" + su.Host
	const wk = "/.well-known/oauth-protected-resource"
	p := strings.TrimSuffix(su.EscapedPath(), "/")
	if p == "" {
		return []string{origin + wk}
	}
	return []string{origin + wk + p, origin + wk}
}

// serverMetadataURLs are the locations of an issuer's metadata.
func serverMetadataURLs(iu *url.URL) []string {
	origin := iu.Scheme + "://" + iu.Host
	p := strings.TrimSuffix(iu.EscapedPath(), "/")
	if p == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
		origin + p + "/.well-known/openid-configuration",
	}
}

// probes are the unauthenticated requests sign-in sends to learn a
// server's challenge, in order: the server/discover request of the
// stateless revision, which is what the client itself sends first (and
// which opens no session), then a minimal initialize for the
// session-based revisions. A server may let some methods through without
// a token (initialize, say) and authorize each operation; the first answer
// with a 401 or 403 challenge is the one that names the scope the server
// wants (docs/reference/mcp.md, "Sign-in").
var probes = []struct {
	method, version, body string
}{
	{"server/discover", "2026-07-28", `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"agent","version":"sign-in"},"io.modelcontextprotocol/clientCapabilities":{}}}}`},
	{"initialize", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"agent","version":"sign-in"}}}`},
}

// probe sends the unauthenticated probes to the server and returns the
// WWW-Authenticate values of the first 401 (or 403) answer; none when no
// probe was refused.
func probe(ctx context.Context, c *http.Client, serverURL string) ([]string, error) {
	for _, p := range probes {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, bytes.NewReader([]byte(p.body)))
		if err != nil {
			return nil, refusef("the MCP server URL does not parse")
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if p.version != "" {
			req.Header.Set("MCP-Protocol-Version", p.version)
			req.Header.Set("Mcp-Method", p.method)
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, policyRefusal(fmt.Errorf("reaching the MCP server: %w", netError(err)))
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) //nolint:errcheck // the body is not used
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			return resp.Header.Values("WWW-Authenticate"), nil
		}
	}
	return []string{}, nil
}
