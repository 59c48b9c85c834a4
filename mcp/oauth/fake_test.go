package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"

	"agent/config"
	"agent/internal/netguard"
)

// fakeServer is an MCP resource server and its authorization server in one
// httptest TLS server, with knobs for every rule the client checks.
type fakeServer struct {
	t   *testing.T
	srv *httptest.Server

	mu sync.Mutex
	// knobs (set before the sign-in)
	issuerPath       string // "" or e.g. "/tenant"
	noChallengeURL   bool   // 401 without resource_metadata
	noPRM            bool   // no protected-resource metadata anywhere
	prmResource      string // override of the PRM resource
	prmNoAS          bool
	challengeScope   string
	prmScopes        []string
	metaIssuer       string // override of the metadata's issuer
	noS256           bool
	oidcOnly         bool // metadata only at the OpenID location
	httpToken        bool // token_endpoint is http://
	issSupported     bool
	sendIss          string // "": none; "good": the issuer; else that value
	noRegistration   bool
	noRevocation     bool
	authMethods      []string
	authError        string // the authorization endpoint answers with this error
	badState         bool
	expiresIn        int
	refreshRefused   bool
	requiredScope    string // /mcp answers 403 insufficient_scope unless the token has it
	redirectMetadata bool   // the AS metadata location answers 302
	openInitialize   bool   // /mcp answers initialize without a token (it authorizes each operation)
	onRevoke         func()

	// records
	authQueries []url.Values
	tokenForms  []url.Values
	basicUsers  []string
	registered  []map[string]any
	revoked     []string
	mcpAuth     []string
	mcpMethods  []string              // the method of each request to /mcp
	codes       map[string]url.Values // code -> authorization query
	tokens      map[string]string     // access token -> scope
	refreshToks map[string]string     // refresh token -> scope
	n           int
}

func newFakeServer(t *testing.T) *fakeServer {
	f := &fakeServer{t: t, codes: map[string]url.Values{}, tokens: map[string]string{}, refreshToks: map[string]string{}, expiresIn: 3600, issSupported: true, sendIss: "good"}
	f.srv = httptest.NewTLSServer(http.HandlerFunc(f.handle))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeServer) URL() string       { return f.srv.URL }
func (f *fakeServer) serverURL() string { return f.srv.URL + "/mcp" }
func (f *fakeServer) issuer() string    { return f.srv.URL + f.issuerPath }

func (f *fakeServer) net() NetOptions {
	pool := x509.NewCertPool()
	pool.AddCert(f.srv.Certificate())
	return NetOptions{Policy: netguard.Policy{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}, RootCAs: pool}
}

func (f *fakeServer) def(o *config.OAuth) *config.ServerDef {
	if o == nil {
		o = &config.OAuth{}
	}
	return &config.ServerDef{Name: "srv", Scope: config.User, File: "/home/u/.agent/settings.json", Type: "http", RawType: "http", URL: config.Template{Raw: f.serverURL(), Expansion: config.Expansion{Value: f.serverURL()}}, OAuth: o}
}

func (f *fakeServer) next(prefix string) string {
	f.n++
	return fmt.Sprintf("%s-%d", prefix, f.n)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (f *fakeServer) metadata() map[string]any {
	iss := f.issuer()
	m := map[string]any{
		"issuer":                   iss,
		"authorization_endpoint":   f.srv.URL + "/authorize",
		"token_endpoint":           f.srv.URL + "/token",
		"response_types_supported": []string{"code"},
		"code_challenge_methods_supported": func() []string {
			if f.noS256 {
				return []string{"plain"}
			}
			return []string{"S256"}
		}(),
		"authorization_response_iss_parameter_supported": f.issSupported,
	}
	if f.metaIssuer != "" {
		m["issuer"] = f.metaIssuer
	}
	if f.httpToken {
		m["token_endpoint"] = strings.Replace(f.srv.URL, "https://", "http://", 1) + "/token"
	}
	if !f.noRegistration {
		m["registration_endpoint"] = f.srv.URL + "/register"
	}
	if !f.noRevocation {
		m["revocation_endpoint"] = f.srv.URL + "/revoke"
	}
	if f.authMethods != nil {
		m["token_endpoint_auth_methods_supported"] = f.authMethods
	}
	return m
}

func (f *fakeServer) handle(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	prmURL := f.srv.URL + "/.well-known/oauth-protected-resource/mcp"
	switch p := r.URL.Path; {
	case p == "/mcp":
		auth := r.Header.Get("Authorization")
		f.mcpAuth = append(f.mcpAuth, auth)
		var msg struct{ Method string }
		json.NewDecoder(r.Body).Decode(&msg) //nolint:errcheck // a body that is not JSON has no method
		f.mcpMethods = append(f.mcpMethods, msg.Method)
		if f.openInitialize && msg.Method == "initialize" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`) //nolint:errcheck // test server
			return
		}
		tok, ok := strings.CutPrefix(auth, "Bearer ")
		scope, known := f.tokens[tok]
		if !ok || !known {
			ch := `Bearer realm="mcp"`
			if !f.noChallengeURL {
				ch += `, resource_metadata="` + prmURL + `"`
			}
			if f.challengeScope != "" {
				ch += `, scope="` + f.challengeScope + `"`
			}
			if ok {
				ch += `, error="invalid_token"`
			}
			w.Header().Set("WWW-Authenticate", ch)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if f.requiredScope != "" && !strings.Contains(" "+scope+" ", " "+f.requiredScope+" ") {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+f.requiredScope+`", resource_metadata="`+prmURL+`"`)
			w.WriteHeader(http.StatusForbidden)
			return
		}
		writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{}})
	case strings.HasPrefix(p, "/.well-known/oauth-protected-resource"):
		if f.noPRM || (p != "/.well-known/oauth-protected-resource/mcp") {
			http.NotFound(w, r)
			return
		}
		res := f.serverURL()
		if f.prmResource != "" {
			res = f.prmResource
		}
		m := map[string]any{"resource": res, "authorization_servers": []string{f.issuer()}}
		if f.prmNoAS {
			delete(m, "authorization_servers")
		}
		if f.prmScopes != nil {
			m["scopes_supported"] = f.prmScopes
		}
		writeJSON(w, 200, m)
	case p == "/.well-known/oauth-authorization-server"+f.issuerPath && !f.oidcOnly,
		p == "/.well-known/openid-configuration"+f.issuerPath && f.oidcOnly:
		if f.redirectMetadata {
			http.Redirect(w, r, "https://example.com/meta", http.StatusFound)
			return
		}
		writeJSON(w, 200, f.metadata())
	case p == "/authorize":
		q := r.URL.Query()
		f.authQueries = append(f.authQueries, q)
		redir, err := url.Parse(q.Get("redirect_uri"))
		if err != nil {
			http.Error(w, "bad redirect", 400)
			return
		}
		out := url.Values{}
		state := q.Get("state")
		if f.badState {
			state = "forged"
		}
		out.Set("state", state)
		if f.authError != "" {
			out.Set("error", f.authError)
			out.Set("error_description", "the user said no\x1b[31m")
		} else {
			code := f.next("code")
			f.codes[code] = q
			out.Set("code", code)
		}
		switch f.sendIss {
		case "":
		case "good":
			out.Set("iss", f.issuer())
		default:
			out.Set("iss", f.sendIss)
		}
		redir.RawQuery = out.Encode()
		http.Redirect(w, r, redir.String(), http.StatusFound)
	case p == "/token":
		r.ParseForm()
		form := r.PostForm
		f.tokenForms = append(f.tokenForms, form)
		user, _, _ := r.BasicAuth()
		f.basicUsers = append(f.basicUsers, user)
		var scope string
		switch form.Get("grant_type") {
		case "authorization_code":
			q, ok := f.codes[form.Get("code")]
			delete(f.codes, form.Get("code"))
			sum := sha256.Sum256([]byte(form.Get("code_verifier")))
			if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != q.Get("code_challenge") || q.Get("code_challenge_method") != "S256" ||
				form.Get("redirect_uri") != q.Get("redirect_uri") || form.Get("resource") != q.Get("resource") {
				writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
				return
			}
			scope = q.Get("scope")
		case "refresh_token":
			s, ok := f.refreshToks[form.Get("refresh_token")]
			if !ok || f.refreshRefused || form.Get("resource") == "" {
				writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
				return
			}
			scope = s
		default:
			writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		at, rt := f.next("access"), f.next("refresh")
		f.tokens[at] = scope
		f.refreshToks[rt] = scope
		resp := map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": rt, "scope": scope}
		if f.expiresIn > 0 {
			resp["expires_in"] = f.expiresIn
		}
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, 200, resp)
	case p == "/register":
		var m map[string]any
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			writeJSON(w, 400, map[string]string{"error": "invalid_client_metadata"})
			return
		}
		f.registered = append(f.registered, m)
		writeJSON(w, 201, map[string]any{"client_id": f.next("client"), "redirect_uris": m["redirect_uris"], "token_endpoint_auth_method": "none"})
	case p == "/revoke":
		r.ParseForm()
		if f.onRevoke != nil {
			f.onRevoke()
		}
		f.revoked = append(f.revoked, r.PostForm.Get("token_type_hint")+":"+r.PostForm.Get("token"))
		delete(f.tokens, r.PostForm.Get("token"))
		delete(f.refreshToks, r.PostForm.Get("token"))
		w.WriteHeader(200)
	default:
		http.NotFound(w, r)
	}
}

// fakeUI plays the user and the browser: it follows the authorization URL
// to the authorization server's redirect and either pastes the address
// (ReadSecret) or lets the "browser" load the loopback callback
// (OpenBrowser).
type fakeUI struct {
	f       *fakeServer
	mu      sync.Mutex
	lines   []string
	authURL string
	confirm bool
	asked   int
	tamper  func(string) string // edits the address before it is pasted
}

func (u *fakeUI) Show(line string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.lines = append(u.lines, line)
	if strings.HasPrefix(line, "https://") || strings.HasPrefix(line, "http://") {
		u.authURL = line
	}
}

func (u *fakeUI) Confirm(ctx context.Context, q string) (bool, error) {
	u.asked++
	return u.confirm, nil
}

// follow asks the authorization endpoint and returns where it redirects.
func (u *fakeUI) follow() (string, error) {
	c := u.f.srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(u.authURL)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return "", fmt.Errorf("authorize answered %d", resp.StatusCode)
	}
	return resp.Header.Get("Location"), nil
}

func (u *fakeUI) ReadSecret(ctx context.Context, prompt string) (string, error) {
	loc, err := u.follow()
	if err != nil {
		return "", err
	}
	if u.tamper != nil {
		loc = u.tamper(loc)
	}
	return loc, nil
}

// openBrowser is the "browser": it loads the authorization URL and then
// the loopback callback.
func (u *fakeUI) openBrowser(ctx context.Context, raw string) error {
	if raw != u.authURL {
		return errors.New("opened another URL than the one shown")
	}
	loc, err := u.follow()
	if err != nil {
		return err
	}
	resp, err := http.Get(loc)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}
