package config

import (
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"agent/internal/quote"
	"agent/internal/strictjson"
)

// Template is a settings string that may hold ${VAR} templates: the text as
// written (hashed for approvals, docs/reference/mcp.md, "Fingerprint") and
// its expansion.
type Template struct {
	Raw string
	Expansion
}

// NameValue is one env or header entry, in file order.
type NameValue struct {
	Name  string
	Value Template
}

// HeaderHelper is a command allowed to produce request headers
// (docs/reference/settings.md, "mcpServers" and "mcpHeaderHelpers").
type HeaderHelper struct {
	Command string   // absolute path
	Args    []string // exact arguments
	// Sandbox is the helper's own sandbox, from its mcpHeaderHelpers entry
	// (user settings); nil: a header helper's default (docs/sandbox.md,
	// "Profiles"). It takes no part in Equal.
	Sandbox *SandboxProfile `json:",omitempty"`
}

// Equal reports an exact match of command and arguments
// (docs/reference/settings.md, "mcpHeaderHelpers").
func (h HeaderHelper) Equal(o HeaderHelper) bool {
	if h.Command != o.Command || len(h.Args) != len(o.Args) {
		return false
	}
	for i := range h.Args {
		if h.Args[i] != o.Args[i] {
			return false
		}
	}
	return true
}

// OAuth is a definition's oauth object (docs/reference/settings.md,
// "mcpServers"). It takes no templates and never a client secret.
type OAuth struct {
	ClientID              string
	CallbackPort          int
	AuthServerMetadataURL string
	Scopes                []string
}

// ServerDef is one MCP server definition (docs/reference/settings.md,
// "mcpServers"). A definition with Problems is refused: listed, never
// connected.
type ServerDef struct {
	Name      string
	Scope     Scope
	File      string // the settings file it came from
	Untrusted bool   // from a project or local file of an untrusted workspace: nothing else is set

	Type    string // normalised: stdio, http, sse or ws; "" when missing or invalid
	RawType string // as written ("streamable-http" stays visible here)

	Command       Template
	Args          []Template
	Cwd           Template
	Env           []NameValue
	URL           Template
	Headers       []NameValue
	HeadersHelper *HeaderHelper
	OAuth         *OAuth
	Timeout       time.Duration // 0: none given
	// Sandbox is a stdio server's own sandbox (docs/sandbox.md,
	// "Profiles"); nil: the session's mode without network. It is part of
	// the approval fingerprint.
	Sandbox *SandboxProfile

	Problems []string // each also reported as a Diagnostic

	problems []pathMsg
	notes    []pathMsg
}

type pathMsg struct {
	path strictjson.Path
	msg  string
}

// Refused reports whether the definition has problems.
func (d *ServerDef) Refused() bool { return len(d.Problems) > 0 }

// Remote reports whether the definition is of a remote type.
func (d *ServerDef) Remote() bool { return d.Type == "http" || d.Type == "sse" || d.Type == "ws" }

func normaliseType(t string) string {
	switch t {
	case "stdio", "http", "sse", "ws":
		return t
	case "streamable-http":
		return "http" // an alternate spelling (docs/reference/settings.md, "mcpServers")
	}
	return ""
}

// fieldTypes says which definition fields apply to which types
// (docs/reference/settings.md, "mcpServers").
var fieldTypes = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"type": "all", "timeout": "all",
		"command": "stdio", "args": "stdio", "cwd": "stdio", "env": "stdio",
		"url": "remote", "headers": "remote", "headersHelper": "remote", "oauth": "remote",
		"sandbox": "stdio",
	}
})

// secretKeys are refused by name anywhere in a definition
// (docs/reference/settings.md, "mcpServers").
func isSecretKey(k string) bool {
	l := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(k))
	return l == "clientsecret" || l == "secret"
}

const secretRefusal = "a client secret is never accepted in a definition; run 'agent mcp login NAME --client-secret' in a terminal instead"

func parseServer(name string, f File, p strictjson.Path, v *strictjson.Value, opts Options) *ServerDef {
	lookup := opts.Lookup
	d := &ServerDef{Name: name, Scope: f.Scope, File: f.Path}
	bad := func(path strictjson.Path, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		d.problems = append(d.problems, pathMsg{path, msg})
		d.Problems = append(d.Problems, msg)
	}
	if v.Kind != strictjson.Object {
		bad(p, "expected an object, found %s", v.Kind)
		return d
	}
	// type first: it decides which fields apply.
	if t := v.Get("type"); t == nil {
		bad(p, "no type: add \"type\" ('http' or 'stdio')")
	} else if t.Kind != strictjson.String {
		bad(p.Key("type"), "expected a string, found %s", t.Kind)
	} else {
		d.RawType = t.Str
		d.Type = normaliseType(t.Str)
		if d.Type == "" {
			bad(p.Key("type"), "unknown type %q: use one of %s", quote.V(t.Str), oneOf("stdio", "http", "streamable-http", "sse", "ws"))
		}
	}
	expand := func(kp strictjson.Path, raw string) Template {
		e := Expand(raw, lookup)
		for _, n := range e.Unset {
			d.notes = append(d.notes, pathMsg{kp, fmt.Sprintf("${%s} is not set and has no default; left as literal text", quote.Cut(n))})
		}
		for _, s := range e.Invalid {
			d.notes = append(d.notes, pathMsg{kp, fmt.Sprintf("%q is not a template (${NAME} or ${NAME:-default}); left as literal text", quote.V(s))})
		}
		return Template{Raw: raw, Expansion: e}
	}
	str := func(kp strictjson.Path, fv *strictjson.Value) (string, bool) {
		if fv.Kind != strictjson.String {
			bad(kp, "expected a string, found %s", fv.Kind)
			return "", false
		}
		return fv.Str, true
	}
	for _, m := range v.Members {
		kp := p.Key(m.Key)
		if isSecretKey(m.Key) {
			bad(kp, "%s", secretRefusal)
			continue
		}
		applies, known := fieldTypes()[m.Key]
		if !known {
			bad(kp, "unknown field")
			continue
		}
		if d.Type != "" && applies != "all" && (applies == "stdio") != (d.Type == "stdio") {
			bad(kp, "does not apply to type %s", d.RawType)
			continue
		}
		switch m.Key {
		case "type":
		case "command":
			if s, ok := str(kp, m.Value); ok {
				if s == "" {
					bad(kp, "must not be empty")
				}
				d.Command = expand(kp, s)
			}
		case "args":
			if m.Value.Kind != strictjson.Array {
				bad(kp, "expected an array of strings, found %s", m.Value.Kind)
				continue
			}
			for i, it := range m.Value.Items {
				if s, ok := str(kp.Index(i), it); ok {
					d.Args = append(d.Args, expand(kp.Index(i), s))
				}
			}
		case "cwd":
			if s, ok := str(kp, m.Value); ok {
				d.Cwd = expand(kp, s)
			}
		case "env", "headers":
			if m.Value.Kind != strictjson.Object {
				bad(kp, "expected an object of strings, found %s", m.Value.Kind)
				continue
			}
			for _, e := range m.Value.Members {
				ep := kp.Key(e.Key)
				if e.Value.Kind != strictjson.String {
					// The value's kind only: never the value
					// (docs/reference/settings.md, "Diagnostics").
					bad(ep, "expected a string value, found %s", e.Value.Kind)
					continue
				}
				if m.Key == "headers" && !ValidHeaderName(e.Key) {
					bad(ep, "not a valid header name")
					continue
				}
				if m.Key == "env" && (e.Key == "" || strings.ContainsAny(e.Key, "=\x00")) {
					bad(ep, "not a valid environment variable name")
					continue
				}
				nv := NameValue{Name: e.Key, Value: expand(ep, e.Value.Str)}
				if m.Key == "env" {
					d.Env = append(d.Env, nv)
				} else {
					if strings.ContainsAny(nv.Value.Value, "\r\n\x00") {
						bad(ep, "header value contains a line break or NUL")
						continue
					}
					d.Headers = append(d.Headers, nv)
				}
			}
		case "url":
			if s, ok := str(kp, m.Value); ok {
				d.URL = expand(kp, s)
				if msg := checkServerURL(d.URL.Value, d.Type); msg != "" && len(d.URL.Unset) == 0 {
					bad(kp, "%s", msg)
				}
			}
		case "headersHelper":
			h, probs := parseHelper(m.Value, kp, nil)
			for _, pr := range probs {
				bad(pr.path, "%s", pr.msg)
			}
			if len(probs) == 0 {
				d.HeadersHelper = &h
			}
		case "oauth":
			d.OAuth = parseOAuth(m.Value, kp, bad)
		case "sandbox":
			prof, probs := parseSandboxProfile(m.Value, kp, opts.Home, opts.Workspace)
			for _, pr := range probs {
				bad(pr.path, "%s", pr.msg)
			}
			d.Sandbox = prof
		case "timeout":
			ms, ok := m.Value.Float()
			if !ok || ms <= 0 || math.IsInf(ms, 0) || ms > float64(math.MaxInt64/int64(time.Millisecond)) {
				bad(kp, "must be a positive number of milliseconds")
				continue
			}
			d.Timeout = time.Duration(ms * float64(time.Millisecond))
		}
	}
	switch d.Type {
	case "stdio":
		if v.Get("command") == nil {
			bad(p, "\"command\" is required for type stdio")
		}
	case "http", "sse", "ws":
		if v.Get("url") == nil {
			bad(p, "\"url\" is required for type %s", d.RawType)
		}
	}
	return d
}

// checkServerURL validates a remote URL without echoing it: it may carry
// expanded credentials (docs/reference/settings.md, "Diagnostics").
func checkServerURL(raw, typ string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "not a valid URL"
	}
	want := []string{"http", "https"}
	if typ == "ws" {
		want = []string{"ws", "wss"}
	}
	if u.Scheme != want[0] && u.Scheme != want[1] {
		return fmt.Sprintf("the URL scheme must be %s or %s", want[0], want[1])
	}
	if u.Host == "" || u.Hostname() == "" {
		return "the URL has no host"
	}
	if u.User != nil {
		return "the URL must not carry user credentials: use headers or oauth"
	}
	if u.Fragment != "" {
		return "the URL must not have a fragment"
	}
	return ""
}

// ValidHeaderName reports whether n is an HTTP header name (RFC 9110 §5.6.2
// token characters).
func ValidHeaderName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		// RFC 9110 §5.6.2 token characters.
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// parseHelper reads a header helper; opts is set for an entry of the
// user's mcpHeaderHelpers, the only place that may give it a sandbox.
func parseHelper(v *strictjson.Value, p strictjson.Path, opts *Options) (HeaderHelper, []pathMsg) {
	var h HeaderHelper
	var probs []pathMsg
	if v.Kind != strictjson.Object {
		return h, []pathMsg{{p, fmt.Sprintf("expected an object {command, args}, found %s", v.Kind)}}
	}
	for _, m := range v.Members {
		kp := p.Key(m.Key)
		switch m.Key {
		case "command":
			if m.Value.Kind != strictjson.String {
				probs = append(probs, pathMsg{kp, fmt.Sprintf("expected a string, found %s", m.Value.Kind)})
				continue
			}
			// No templates here (docs/reference/settings.md, "mcpServers"),
			// and no PATH search: the allow list matches an exact absolute
			// command.
			if !filepath.IsAbs(m.Value.Str) {
				probs = append(probs, pathMsg{kp, "must be an absolute path"})
				continue
			}
			h.Command = m.Value.Str
		case "args":
			if m.Value.Kind != strictjson.Array {
				probs = append(probs, pathMsg{kp, fmt.Sprintf("expected an array of strings, found %s", m.Value.Kind)})
				continue
			}
			h.Args = []string{}
			for i, it := range m.Value.Items {
				if it.Kind != strictjson.String {
					probs = append(probs, pathMsg{kp.Index(i), fmt.Sprintf("expected a string, found %s", it.Kind)})
					continue
				}
				h.Args = append(h.Args, it.Str)
			}
		case "sandbox":
			if opts == nil {
				probs = append(probs, pathMsg{kp, "a header helper's sandbox is set in its mcpHeaderHelpers entry (user settings), not in a definition"})
				continue
			}
			prof, ps := parseSandboxProfile(m.Value, kp, opts.Home, opts.Workspace)
			probs = append(probs, ps...)
			h.Sandbox = prof
		default:
			if isSecretKey(m.Key) {
				probs = append(probs, pathMsg{kp, secretRefusal})
			} else {
				probs = append(probs, pathMsg{kp, "unknown field"})
			}
		}
	}
	if v.Get("command") == nil {
		probs = append(probs, pathMsg{p, "\"command\" is required"})
	}
	return h, probs
}

func parseOAuth(v *strictjson.Value, p strictjson.Path, bad func(strictjson.Path, string, ...any)) *OAuth {
	if v.Kind != strictjson.Object {
		bad(p, "expected an object, found %s", v.Kind)
		return nil
	}
	o := &OAuth{}
	ok := true
	for _, m := range v.Members {
		kp := p.Key(m.Key)
		switch m.Key {
		case "clientId":
			if m.Value.Kind != strictjson.String || m.Value.Str == "" {
				bad(kp, "expected a non-empty string")
				ok = false
				continue
			}
			o.ClientID = m.Value.Str
		case "callbackPort":
			n, isInt := m.Value.Int()
			if !isInt || n < 1 || n > 65535 {
				bad(kp, "expected a port number from 1 to 65535")
				ok = false
				continue
			}
			o.CallbackPort = int(n)
		case "authServerMetadataUrl":
			if m.Value.Kind != strictjson.String {
				bad(kp, "expected a string, found %s", m.Value.Kind)
				ok = false
				continue
			}
			u, err := url.Parse(m.Value.Str)
			if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" {
				bad(kp, "must be an https URL without user credentials or fragment")
				ok = false
				continue
			}
			o.AuthServerMetadataURL = m.Value.Str
		case "scopes":
			switch m.Value.Kind {
			case strictjson.String:
				o.Scopes = strings.Fields(m.Value.Str)
			case strictjson.Array:
				for i, it := range m.Value.Items {
					if it.Kind != strictjson.String || it.Str == "" || strings.ContainsAny(it.Str, " \t\r\n\"\\") {
						bad(kp.Index(i), "expected a scope (a string without spaces, quotes or backslashes)")
						ok = false
						continue
					}
					o.Scopes = append(o.Scopes, it.Str)
				}
			default:
				bad(kp, "expected an array of strings, found %s", m.Value.Kind)
				ok = false
			}
		default:
			// oauth rejects unknown keys; a secret gets its remedy
			// (docs/reference/settings.md, "mcpServers").
			if isSecretKey(m.Key) {
				bad(kp, "%s", secretRefusal)
			} else {
				bad(kp, "unknown key in oauth (allowed: clientId, callbackPort, authServerMetadataUrl, scopes)")
			}
			ok = false
		}
	}
	if o.ClientID != "" && o.CallbackPort == 0 && v.Get("callbackPort") == nil {
		bad(p, "clientId requires callbackPort: a pre-registered client redirects to a fixed port")
		ok = false
	}
	if !ok {
		return nil
	}
	return o
}
