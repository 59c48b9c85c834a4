package mcp

import (
	"errors"
	"net/url"
	"strings"
	"time"

	"agent/config"
	"agent/internal/netguard"
	"agent/mcp/oauth"
)

// StatusLine is one line of `agent mcp list` and `/mcp status`
// (docs/reference/mcp.md, "Status lines"): NAME, STATE, SCOPE, TYPE, REASON
// and, for OAuth servers, SIGN-IN. No field ever holds the value of a
// header, an environment variable or a secret.
type StatusLine struct {
	Name   string
	State  State
	Scope  string
	Type   string
	Reason string // "-" when none
	SignIn oauth.SignInState
}

// String is the tab-separated form of docs/reference/mcp.md, "Status
// lines".
func (l StatusLine) String() string {
	f := []string{sanitizeField(l.Name), string(l.State), l.Scope, orDash(l.Type), orDash(l.Reason)}
	if l.SignIn != "" {
		f = append(f, string(l.SignIn))
	}
	return strings.Join(f, "\t")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// sanitizeField keeps a server name (chosen by a settings file) from
// breaking the line format or the terminal.
func sanitizeField(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}

// Reasons a server is not connected (docs/reference/mcp.md, "What connects
// and when" and "Status lines" list the phrases).
const (
	ReasonMissingAuthority = "missing host authority"
	ReasonNoOAuth          = "no oauth: cannot connect"
	ReasonTransport        = "transport not supported"
	ReasonUntrusted        = "workspace untrusted"
	ReasonInvalid          = "invalid definition"
)

// StatusOptions are what a status line depends on beyond the definition.
type StatusOptions struct {
	Approvals   *Approvals
	Credentials *oauth.Store // nil: sign-in state not shown
	Policy      netguard.Policy
	// StdioAuthorized reports whether an embedder granted a stdio authority
	// for this definition (docs/reference/mcp.md, "What connects and when",
	// rule 3); nil: none.
	StdioAuthorized func(*config.ServerDef) bool
	Now             time.Time
}

// Status computes one line per server, sorted by name.
func Status(s *config.Settings, opts StatusOptions) []StatusLine {
	var out []StatusLine
	for _, name := range s.ServerNames() {
		out = append(out, statusOf(s.Servers[name], opts))
	}
	return out
}

func statusOf(d *config.ServerDef, opts StatusOptions) StatusLine {
	l := StatusLine{Name: d.Name, Scope: d.Scope.String(), Type: d.Type}
	if l.Type == "" {
		l.Type = d.RawType
	}
	l.State = opts.Approvals.State(d)
	switch l.State {
	case Untrusted:
		l.Reason = ReasonUntrusted
		return l
	case Refused:
		l.Reason = ReasonInvalid
		return l
	}
	switch d.Type {
	case "stdio":
		if opts.StdioAuthorized == nil || !opts.StdioAuthorized(d) {
			l.Reason = ReasonMissingAuthority
		}
	case "sse", "ws":
		l.Reason = ReasonTransport
	case "http":
		if reason := addressReason(d, opts.Policy); reason != "" {
			l.Reason = reason
		} else if d.OAuth == nil {
			l.Reason = ReasonNoOAuth
		}
		if d.OAuth != nil && opts.Credentials != nil {
			st, err := opts.Credentials.State(CredentialIdentity(d), opts.Now)
			if err != nil && l.Reason == "" {
				l.Reason = "credentials unreadable"
			}
			l.SignIn = st
		}
	}
	return l
}

// addressReason applies the address policy before any connection to a URL
// whose host is an IP literal, or a localhost name, which is loopback by
// definition and refused by name (docs/reference/mcp.md, "Address policy");
// other host names are judged when dialled.
func addressReason(d *config.ServerDef, p netguard.Policy) string {
	u, err := url.Parse(d.URL.Value)
	if err != nil {
		return ""
	}
	if _, err := p.CheckHost(u.Hostname()); err != nil {
		var re *netguard.RefusedError
		if errors.As(err, &re) {
			return "address refused: " + re.Class.String()
		}
		return "address refused"
	}
	return ""
}

// CredentialIdentity is the identity a definition's tokens are stored under.
func CredentialIdentity(d *config.ServerDef) oauth.Identity {
	return oauth.Identity{Name: d.Name, Scope: d.Scope.String(), File: d.File, URL: d.URL.Value}
}
