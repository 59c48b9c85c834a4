package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"

	"agent/internal/quote"
)

// Registration is the OAuth client a sign-in uses: pre-registered or
// dynamically registered.
type Registration struct {
	ID         string
	Secret     string
	AuthMethod string // none, client_secret_basic or client_secret_post
}

// String redacts the secret (CONTRIBUTING.md, "Secrets").
func (r Registration) String() string {
	return fmt.Sprintf("client %s (%s)", sanitize(r.ID, 100), r.AuthMethod)
}

// preRegistered is the definition's clientId with the secret from
// `agent mcp login --client-secret`. With a secret the method is
// client_secret_basic when the server offers it or names no methods (the
// RFC 8414 §2 default), else client_secret_post.
func preRegistered(id, secret string, m *ServerMetadata) (Registration, error) {
	if secret == "" {
		return Registration{ID: id, AuthMethod: AuthNone}, nil
	}
	methods := m.TokenEndpointAuthMethodsSupported
	switch {
	case len(methods) == 0 || slices.Contains(methods, AuthSecretBasic):
		return Registration{ID: id, Secret: secret, AuthMethod: AuthSecretBasic}, nil
	case slices.Contains(methods, AuthSecretPost):
		return Registration{ID: id, Secret: secret, AuthMethod: AuthSecretPost}, nil
	}
	return Registration{}, refusef("the authorization server accepts neither client_secret_basic nor client_secret_post, so the client secret cannot be used")
}

// registrationRequest is the client metadata of RFC 7591 §2 for a native
// application with a loopback redirect (RFC 8252 §7.3).
type registrationRequest struct {
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ApplicationType         string   `json:"application_type"`
	Scope                   string   `json:"scope,omitempty"`
}

// ParseRegistrationResponse parses an RFC 7591 §3.2.1 answer. A status
// other than 201 or 200 is a *TokenError (§3.2.2).
func ParseRegistrationResponse(status int, body []byte) (Registration, error) {
	if status != http.StatusCreated && status != http.StatusOK {
		te := &TokenError{Endpoint: "registration", Status: status}
		if d, err := newDocReader(body, "registration error"); err == nil {
			te.Code = sanitize(d.str("error"), 64)
			te.Description = sanitize(d.str("error_description"), 200)
		}
		return Registration{}, te
	}
	d, err := newDocReader(body, "registration response")
	if err != nil {
		return Registration{}, err
	}
	c := Registration{ID: d.str("client_id"), Secret: d.str("client_secret"), AuthMethod: d.str("token_endpoint_auth_method")}
	if d.err != nil {
		return Registration{}, d.err
	}
	if c.ID == "" {
		return Registration{}, fmt.Errorf("registration response: field client_id is missing (RFC 7591 §3.2.1)")
	}
	switch c.AuthMethod {
	case "":
		c.AuthMethod = AuthNone
		if c.Secret != "" {
			c.AuthMethod = AuthSecretBasic
		}
	case AuthNone, AuthSecretBasic, AuthSecretPost:
	default:
		return Registration{}, fmt.Errorf("registration response: token_endpoint_auth_method %q is not supported", quote.V(sanitize(c.AuthMethod, 64)))
	}
	if c.AuthMethod != AuthNone && c.Secret == "" {
		return Registration{}, fmt.Errorf("registration response: method %s without a client_secret", c.AuthMethod)
	}
	return c, nil
}

// register performs dynamic client registration (RFC 7591) as a public
// native client whose redirect is the loopback callback.
func register(ctx context.Context, c *http.Client, m *ServerMetadata, redirectURI, scope string, insecure bool) (Registration, error) {
	if m.RegistrationEndpoint == "" {
		return Registration{}, refusef("the authorization server offers no dynamic client registration; give the definition oauth.clientId and oauth.callbackPort of a registered client")
	}
	if _, err := checkURL("registration_endpoint", m.RegistrationEndpoint, insecure); err != nil {
		return Registration{}, err
	}
	body, _ := json.Marshal(registrationRequest{
		ClientName:              "agent",
		RedirectURIs:            []string{redirectURI},
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: AuthNone,
		ApplicationType:         "native",
		Scope:                   scope,
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return Registration{}, refusef("registration_endpoint does not parse")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return Registration{}, fmt.Errorf("registering the client: %w", netError(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata+1))
	if err != nil {
		return Registration{}, fmt.Errorf("registering the client: %w", netError(err))
	}
	if len(data) > maxMetadata {
		return Registration{}, fmt.Errorf("registering the client: the answer is larger than %d bytes", maxMetadata)
	}
	cl, err := ParseRegistrationResponse(resp.StatusCode, data)
	if err != nil {
		return Registration{}, fmt.Errorf("registering the client: %w", err)
	}
	return cl, nil
}
