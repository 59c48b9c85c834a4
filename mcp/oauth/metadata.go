package oauth

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"agent/internal/quote"
	"agent/internal/strictjson"
)

// maxMetadata bounds a metadata document, a registration response and a
// token response (outside input; CONTRIBUTING.md, "Outside input").
const maxMetadata = 256 << 10

// ResourceMetadata is the part of RFC 9728 protected-resource metadata the
// client uses.
type ResourceMetadata struct {
	Resource             string
	AuthorizationServers []string
	ScopesSupported      []string
}

// ServerMetadata is the part of RFC 8414 authorization-server metadata (or
// OpenID Connect Discovery 1.0 provider metadata) the client uses.
type ServerMetadata struct {
	Issuer                            string
	AuthorizationEndpoint             string
	TokenEndpoint                     string
	RegistrationEndpoint              string
	RevocationEndpoint                string
	ScopesSupported                   []string
	ResponseTypesSupported            []string
	GrantTypesSupported               []string
	CodeChallengeMethodsSupported     []string
	TokenEndpointAuthMethodsSupported []string
	// IssParameterSupported is authorization_response_iss_parameter_supported
	// (RFC 9207 §3): when true the callback must carry iss.
	IssParameterSupported bool
}

// docReader reads typed members of a strict JSON object, remembering the
// first type error. Unknown members are ignored: metadata documents are
// extensible (RFC 8414 §2, RFC 9728 §2), but duplicate keys are refused by
// the strict parser, so a second "issuer" cannot shadow the first.
type docReader struct {
	obj  *strictjson.Value
	what string
	err  error
}

func newDocReader(data []byte, what string) (*docReader, error) {
	v, err := strictjson.Parse(data, strictjson.Options{MaxBytes: maxMetadata, MaxDepth: 16})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if v.Kind != strictjson.Object {
		return nil, fmt.Errorf("%s: expected a JSON object, found %s", what, v.Kind)
	}
	return &docReader{obj: v, what: what}, nil
}

func (d *docReader) fail(key, format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%s: field %s: %s", d.what, key, fmt.Sprintf(format, args...))
	}
}

func (d *docReader) str(key string) string {
	v := d.obj.Get(key)
	if v == nil || v.Kind == strictjson.Null {
		return ""
	}
	if v.Kind != strictjson.String {
		d.fail(key, "expected a string, found %s", v.Kind)
		return ""
	}
	return v.Str
}

func (d *docReader) strs(key string) []string {
	v := d.obj.Get(key)
	if v == nil || v.Kind == strictjson.Null {
		return nil
	}
	if v.Kind != strictjson.Array {
		d.fail(key, "expected an array of strings, found %s", v.Kind)
		return nil
	}
	out := make([]string, 0, len(v.Items))
	for _, it := range v.Items {
		if it.Kind != strictjson.String {
			d.fail(key, "expected an array of strings, found an item of kind %s", it.Kind)
			return nil
		}
		out = append(out, it.Str)
	}
	return out
}

func (d *docReader) boolean(key string) bool {
	v := d.obj.Get(key)
	if v == nil || v.Kind == strictjson.Null {
		return false
	}
	if v.Kind != strictjson.Bool {
		d.fail(key, "expected a boolean, found %s", v.Kind)
		return false
	}
	return v.Bool
}

// ParseResourceMetadata parses an RFC 9728 document. It checks only the
// shape; whether it names the right server is decided by discovery.
func ParseResourceMetadata(data []byte) (*ResourceMetadata, error) {
	d, err := newDocReader(data, "protected-resource metadata")
	if err != nil {
		return nil, err
	}
	m := &ResourceMetadata{
		Resource:             d.str("resource"),
		AuthorizationServers: d.strs("authorization_servers"),
		ScopesSupported:      d.strs("scopes_supported"),
	}
	if d.err != nil {
		return nil, d.err
	}
	if m.Resource == "" {
		return nil, fmt.Errorf("protected-resource metadata: field resource is missing (RFC 9728 §2)")
	}
	return m, nil
}

// ParseServerMetadata parses an RFC 8414 (or OpenID Connect discovery)
// document. It checks only the shape; the issuer and endpoint rules are
// applied by CheckServerMetadata.
func ParseServerMetadata(data []byte) (*ServerMetadata, error) {
	d, err := newDocReader(data, "authorization-server metadata")
	if err != nil {
		return nil, err
	}
	m := &ServerMetadata{
		Issuer:                            d.str("issuer"),
		AuthorizationEndpoint:             d.str("authorization_endpoint"),
		TokenEndpoint:                     d.str("token_endpoint"),
		RegistrationEndpoint:              d.str("registration_endpoint"),
		RevocationEndpoint:                d.str("revocation_endpoint"),
		ScopesSupported:                   d.strs("scopes_supported"),
		ResponseTypesSupported:            d.strs("response_types_supported"),
		GrantTypesSupported:               d.strs("grant_types_supported"),
		CodeChallengeMethodsSupported:     d.strs("code_challenge_methods_supported"),
		TokenEndpointAuthMethodsSupported: d.strs("token_endpoint_auth_methods_supported"),
		IssParameterSupported:             d.boolean("authorization_response_iss_parameter_supported"),
	}
	if d.err != nil {
		return nil, d.err
	}
	return m, nil
}

// CheckServerMetadata applies the sign-in rules of docs/reference/mcp.md,
// "Sign-in", to metadata fetched for issuer: the issuer named exactly
// (RFC 8414 §3.3), every endpoint https, S256 offered (MCP authorization
// "Authorization Code Protection": a client MUST refuse when
// code_challenge_methods_supported is absent), and the code flow allowed.
func CheckServerMetadata(m *ServerMetadata, issuer string, insecureLoopback bool) error {
	if m.Issuer != issuer {
		return refusef("the authorization server metadata names the issuer %q, not %q (RFC 8414 §3.3)", quote.V(m.Issuer), quote.V(issuer))
	}
	if _, err := checkURL("issuer", m.Issuer, insecureLoopback); err != nil {
		return err
	}
	if m.AuthorizationEndpoint == "" || m.TokenEndpoint == "" {
		return refusef("the authorization server metadata lacks the authorization or token endpoint")
	}
	for _, e := range []struct{ name, u string }{
		{"authorization_endpoint", m.AuthorizationEndpoint},
		{"token_endpoint", m.TokenEndpoint},
		{"registration_endpoint", m.RegistrationEndpoint},
		{"revocation_endpoint", m.RevocationEndpoint},
	} {
		if e.u == "" {
			continue
		}
		if _, err := checkURL(e.name, e.u, insecureLoopback); err != nil {
			return err
		}
	}
	if !slices.Contains(m.CodeChallengeMethodsSupported, "S256") {
		return refusef("the authorization server does not offer PKCE with S256 (code_challenge_methods_supported)")
	}
	if m.ResponseTypesSupported != nil && !slices.Contains(m.ResponseTypesSupported, "code") {
		return refusef("the authorization server does not offer the authorization code flow (response_types_supported)")
	}
	return nil
}

// checkURL requires an absolute https URL without user information or
// fragment (docs/reference/mcp.md, "Sign-in": every endpoint https). Plain
// http is allowed only with insecureLoopback, for a loopback host, for the
// interop test program (interop/README.md, "Conformance authorization
// scenarios (`oauth_test.go`)").
func checkURL(what, raw string, insecureLoopback bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return nil, refusef("%s is not an absolute URL", what)
	}
	if u.User != nil {
		return nil, refusef("%s carries user information", what)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, refusef("%s has a fragment", what)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !insecureLoopback || !isLoopbackHost(u.Hostname()) {
			return nil, refusef("%s is not https (%s)", what, redactURL(u))
		}
	default:
		return nil, refusef("%s is not https (%s)", what, redactURL(u))
	}
	return u, nil
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// redactURL shows scheme, host and path, never a query (which may carry a
// code or state) or user information (docs/reference/mcp.md, "Sign-in").
func redactURL(u *url.URL) string {
	v := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	return sanitize(v.String(), 200)
}

// sanitize removes control characters from text that came from a server and
// bounds it, so it cannot drive the terminal (CONTRIBUTING.md, "Outside
// input").
func sanitize(s string, max int) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
	if len(s) > max {
		s = s[:max] + "..."
		s = strings.ToValidUTF8(s, "")
	}
	return s
}

// canonicalResource is a server URL in the form used for comparison and
// for the resource parameter (RFC 8707 §2; MCP authorization "Canonical
// Server URI"): lower-case scheme and host, no default port, no fragment.
func canonicalResource(u *url.URL) string {
	c := url.URL{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Host), Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}
	if p := c.Port(); (c.Scheme == "https" && p == "443") || (c.Scheme == "http" && p == "80") {
		c.Host = strings.ToLower(u.Hostname())
		if strings.Contains(c.Host, ":") {
			c.Host = "[" + c.Host + "]"
		}
	}
	return c.String()
}

// resourceNames reports whether the resource identifier named by
// protected-resource metadata names the server at server: the same origin,
// and a path equal to the server's or a parent of it on a segment boundary
// (RFC 9728 §3.3 requires the metadata to be about the resource the
// client asked for; a server's metadata may name the origin-wide resource
// that contains it).
func resourceNames(resource string, server *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || r.Fragment != "" || r.RawQuery != "" && r.RawQuery != server.RawQuery {
		return false
	}
	rc, err1 := url.Parse(canonicalResource(r))
	sc, err2 := url.Parse(canonicalResource(server))
	if err1 != nil || err2 != nil || rc.Scheme != sc.Scheme || rc.Host != sc.Host {
		return false
	}
	rp := strings.TrimSuffix(rc.EscapedPath(), "/")
	sp := strings.TrimSuffix(sc.EscapedPath(), "/")
	return rp == sp || strings.HasPrefix(sp, rp+"/")
}
