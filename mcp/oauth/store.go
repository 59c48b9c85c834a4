// Package oauth signs the CLI in to OAuth-protected MCP servers: discovery,
// client registration, PKCE authorization with a loopback callback, the
// credential store, refresh and logout (docs/reference/mcp.md, "Sign-in"
// and "Credentials"; MCP authorization 2025-06-18 and 2025-11-25).
//
// Entry points:
//   - SignIn runs the whole flow for one definition (Discover, dynamic or
//     pre-registered client, PKCE S256 with state and resource, the
//     browser or a pasted redirect, the iss check, the code exchange) and
//     stores the tokens; it talks to the user only through the UI
//     interface, so the terminal command and the in-session command share it.
//   - NewSource and Transport give the MCP HTTP transport its Bearer
//     token: refreshed at the recorded token endpoint when expired and
//     once after a 401; a token replaced by a new sign-in is picked up.
//     StepUpScope and MaxStepUps drive a new SignIn after a 403
//     insufficient_scope.
//   - Logout deletes the stored tokens, then revokes them (RFC 7009).
//   - Store and SignInState are what `agent mcp list` reports.
//
// All requests go through the address policy of internal/netguard (no
// proxy, no redirects) and require https; no token, code, verifier or
// secret is ever part of an error or a line shown (docs/reference/mcp.md,
// "Sign-in").
//
// Imports: the standard library, golang.org/x/oauth2, agent/config and
// agent/internal/* (README.md, "A walk through the code").
package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"agent/config"
	"agent/internal/securefile"
	"agent/internal/strictjson"
)

// maxCredentialFile bounds one credential file.
const maxCredentialFile = 64 << 10

// Identity names the definition tokens belong to: tokens are stored per
// server identity and URL, so another definition under the same name cannot
// use them (docs/reference/mcp.md, "Credentials").
type Identity struct {
	Name  string // server name
	Scope string // user, project or local
	File  string // the settings file that defines it
	URL   string // the server URL (expanded)
}

// IdentityOf is the identity a definition's tokens are stored under; it
// matches mcp.CredentialIdentity.
func IdentityOf(d *config.ServerDef) Identity {
	return Identity{Name: d.Name, Scope: d.Scope.String(), File: d.File, URL: d.URL.Value}
}

// key is the SHA-256 of the identity and URL pair (docs/reference/mcp.md,
// "Credentials").
func (id Identity) key() string {
	b, _ := json.Marshal([]string{id.Name, id.Scope, id.File, id.URL})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Credentials are one server's stored tokens and where they came from.
// Refresh and revocation go only to the endpoints recorded here.
type Credentials struct {
	Version            int    `json:"version"`
	Server             string `json:"server"`
	URL                string `json:"url"`
	Resource           string `json:"resource"`
	Issuer             string `json:"issuer"`
	TokenEndpoint      string `json:"tokenEndpoint"`
	RevocationEndpoint string `json:"revocationEndpoint,omitempty"`
	ClientID           string `json:"clientId"`
	ClientSecret       string `json:"clientSecret,omitempty"` // from dynamic registration or --client-secret
	// TokenAuthMethod is how the client authenticates at the token and
	// revocation endpoints: none, client_secret_basic or
	// client_secret_post (RFC 7591 §2); "" means none.
	TokenAuthMethod string    `json:"tokenEndpointAuthMethod,omitempty"`
	AccessToken     string    `json:"accessToken"`
	TokenType       string    `json:"tokenType,omitempty"`
	RefreshToken    string    `json:"refreshToken,omitempty"`
	Scope           string    `json:"scope,omitempty"`
	Expiry          time.Time `json:"expiry,omitzero"`
}

// String redacts the secrets (CONTRIBUTING.md, "Secrets").
func (c *Credentials) String() string {
	return fmt.Sprintf("credentials for %s (issuer %s, expiry %s)", c.Server, c.Issuer, c.Expiry.Format(time.RFC3339))
}

// SignInState is a server's sign-in state (the SIGN-IN column of
// docs/reference/mcp.md, "Status lines").
type SignInState string

// The sign-in states.
const (
	SignedIn       SignInState = "signed-in"
	TokenExpired   SignInState = "token-expired" // will refresh
	SignInRequired SignInState = "sign-in-required"
	SignedOut      SignInState = "signed-out"
)

// Store is the credential directory ~/.agent/mcp-credentials (0700, one
// 0600 file per identity).
type Store struct {
	Dir string
}

// NewStore returns the store under a user directory (~/.agent).
func NewStore(userDir string) *Store {
	return &Store{Dir: filepath.Join(userDir, "mcp-credentials")}
}

// Path is the file that holds an identity's credentials.
func (s *Store) Path(id Identity) string { return filepath.Join(s.Dir, id.key()+".json") }

// Load reads an identity's credentials. A missing file returns
// fs.ErrNotExist; a file others can read is refused (docs/reference/mcp.md,
// "Credentials").
func (s *Store) Load(id Identity) (*Credentials, error) {
	data, err := securefile.ReadSecret(s.Path(id), maxCredentialFile)
	if err != nil {
		return nil, err
	}
	var c Credentials
	if err := strictjson.Unmarshal(data, &c, strictjson.Options{MaxBytes: maxCredentialFile}); err != nil {
		return nil, fmt.Errorf("credential file %s: %w", s.Path(id), err)
	}
	if c.Version != 1 {
		return nil, fmt.Errorf("credential file %s: unsupported version %d", s.Path(id), c.Version)
	}
	return &c, nil
}

// Save writes an identity's credentials atomically, 0600.
func (s *Store) Save(id Identity, c *Credentials) error {
	if err := securefile.EnsureDir(s.Dir); err != nil {
		return err
	}
	c.Version = 1
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return securefile.WriteFile(s.Path(id), append(data, '\n'))
}

// Delete removes an identity's credentials; a missing file is not an error.
func (s *Store) Delete(id Identity) error {
	err := os.Remove(s.Path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// State reports the sign-in state from the stored credentials without
// refreshing anything (docs/reference/mcp.md, "Status lines": `agent mcp
// list` reports a stored expired token as token-expired). An unreadable
// file is reported with the state sign-in-required and the error.
func (s *Store) State(id Identity, now time.Time) (SignInState, error) {
	c, err := s.Load(id)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return SignedOut, nil
	case err != nil:
		return SignInRequired, err
	case c.AccessToken == "":
		return SignInRequired, nil
	case c.Expiry.IsZero() || now.Before(c.Expiry):
		return SignedIn, nil
	case c.RefreshToken != "":
		return TokenExpired, nil
	}
	return SignInRequired, nil
}
