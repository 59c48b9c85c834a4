package main

// End-to-end tests of `agent mcp login` and `agent mcp logout` against an
// httptest TLS server that is both an OAuth-protected MCP server and its
// authorization server. The binary trusts the test certificate through
// SSL_CERT_FILE and reaches 127.0.0.1 through the user's
// mcpAllowedNetworks.

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

type e2eAS struct {
	srv     *httptest.Server
	mu      sync.Mutex
	codes   map[string]url.Values
	tokens  map[string]bool
	n       int
	revoked []string
	resForm []string // resource parameters seen at the token endpoint
	prmRes  string   // override of the PRM resource
	// needScope: /mcp answers 403 insufficient_scope until the token
	// carries this scope.
	needScope string
	scopes    map[string]string // access token -> scope
	authScope []string          // scope parameters seen at /authorize
	// openInit: /mcp answers initialize without a token (the server
	// authorizes each operation, as some do).
	openInit bool
	// version is the protocol revision /mcp answers initialize with
	// ("": 2025-06-18).
	version string
	// mcp, when set, serves /mcp to requests whose token is valid, outside
	// the server's lock (it may hold a stream open).
	mcp http.Handler
}

func newE2EAS(t *testing.T) *e2eAS { return newE2EASWith(t, nil) }

// newE2EASWith is newE2EAS whose MCP endpoint is mcp.
func newE2EASWith(t *testing.T, mcp http.Handler) *e2eAS {
	a := &e2eAS{codes: map[string]url.Values{}, tokens: map[string]bool{}, scopes: map[string]string{}, mcp: mcp}
	a.srv = httptest.NewTLSServer(http.HandlerFunc(a.handle))
	t.Cleanup(a.srv.Close)
	return a
}

// with runs f under the server's lock (the handler runs on other goroutines).
func (a *e2eAS) with(f func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f()
}

func (a *e2eAS) json(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (a *e2eAS) handle(w http.ResponseWriter, r *http.Request) {
	if a.mcp != nil && r.URL.Path == "/mcp" {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		a.mu.Lock()
		ok := a.tokens[tok]
		a.mu.Unlock()
		if ok {
			a.mcp.ServeHTTP(w, r)
			return
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	base := a.srv.URL
	switch r.URL.Path {
	case "/mcp":
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&m)
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !a.tokens[tok] && !(a.openInit && m.Method == "initialize") {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp", scope="tools"`)
			w.WriteHeader(401)
			return
		}
		if a.needScope != "" && !strings.Contains(" "+a.scopes[tok]+" ", " "+a.needScope+" ") {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+a.needScope+`"`)
			w.WriteHeader(403)
			return
		}
		if r.Method != http.MethodPost {
			w.WriteHeader(405)
			return
		}
		switch m.Method {
		case "initialize":
			version := a.version
			if version == "" {
				version = "2025-06-18"
			}
			a.json(w, 200, map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{
				"protocolVersion": version, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "fake", "version": "1"}}})
		case "tools/list":
			tool := func(n string) any {
				return map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}}
			}
			a.json(w, 200, map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"tools": []any{tool("one"), tool("two"), tool("three")}}})
		case "":
			w.WriteHeader(202) // a notification
		default:
			if m.ID == nil {
				w.WriteHeader(202)
				return
			}
			a.json(w, 200, map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
		}
	case "/.well-known/oauth-protected-resource/mcp":
		res := base + "/mcp"
		if a.prmRes != "" {
			res = a.prmRes
		}
		a.json(w, 200, map[string]any{"resource": res, "authorization_servers": []string{base}})
	case "/.well-known/oauth-authorization-server":
		a.json(w, 200, map[string]any{
			"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
			"registration_endpoint": base + "/register", "revocation_endpoint": base + "/revoke",
			"code_challenge_methods_supported": []string{"S256"}, "response_types_supported": []string{"code"},
			"authorization_response_iss_parameter_supported": true,
		})
	case "/register":
		a.n++
		a.json(w, 201, map[string]any{"client_id": fmt.Sprintf("client-%d", a.n), "token_endpoint_auth_method": "none"})
	case "/authorize":
		q := r.URL.Query()
		a.authScope = append(a.authScope, q.Get("scope"))
		a.n++
		code := fmt.Sprintf("code-%d", a.n)
		a.codes[code] = q
		u, _ := url.Parse(q.Get("redirect_uri"))
		u.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {base}}.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	case "/token":
		r.ParseForm()
		if r.PostForm.Get("client_id") == "needs-secret" {
			a.json(w, 401, map[string]any{"error": "invalid_client"})
			return
		}
		a.resForm = append(a.resForm, r.PostForm.Get("resource"))
		q, ok := a.codes[r.PostForm.Get("code")]
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != q.Get("code_challenge") {
			a.json(w, 400, map[string]any{"error": "invalid_grant"})
			return
		}
		a.n++
		at := fmt.Sprintf("access-%d", a.n)
		a.tokens[at] = true
		a.scopes[at] = q.Get("scope")
		a.json(w, 200, map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": fmt.Sprintf("refresh-%d", a.n), "expires_in": 3600})
	case "/revoke":
		r.ParseForm()
		a.revoked = append(a.revoked, r.PostForm.Get("token_type_hint"))
		w.WriteHeader(200)
	default:
		http.NotFound(w, r)
	}
}

// loginSandbox is a sandbox whose user settings define the server "remote"
// and allow loopback, and whose binary trusts the test certificate.
func loginSandbox(t *testing.T, a *e2eAS) *sandbox {
	s := newSandbox(t)
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.srv.Certificate().Raw})
	certFile := s.write(filepath.Join(t.TempDir(), "ca.pem"), string(cert))
	s.Env = append(s.Env, "SSL_CERT_FILE="+certFile)
	s.write("~/.agent/settings.json", `{"mcpAllowedNetworks":["127.0.0.0/8","::1/128"],"mcpServers":{
		"remote":{"type":"http","url":"`+a.srv.URL+`/mcp","oauth":{}},
		"plain":{"type":"http","url":"`+a.srv.URL+`/mcp"},
		"local":{"type":"stdio","command":"/bin/true"}}}`)
	return s
}

// browser follows the authorization URL to the authorization server's
// redirect, as a browser would, and returns the Location.
func browser(t *testing.T, a *e2eAS, authURL string) string {
	c := a.srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.Header.Get("Location")
}

// loginRun is a running `agent mcp login` with piped stdin and stderr.
type loginRun struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *strings.Builder
	stderr *strings.Builder // what nextURL and wait have read so far
	lines  chan string
	done   chan struct{}
}

// nextURL reads stderr until the next authorization URL.
func (r *loginRun) nextURL() string {
	r.t.Helper()
	for l := range r.lines {
		r.stderr.WriteString(l + "\n")
		if strings.HasPrefix(l, "https://") {
			return l
		}
	}
	code := r.wait()
	r.t.Fatalf("no authorization URL shown (exit %d): %s", code, r.stderr)
	return ""
}

// wait reads the rest of stderr and returns the exit code.
func (r *loginRun) wait() int {
	for l := range r.lines {
		r.stderr.WriteString(l + "\n")
	}
	<-r.done
	err := r.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return 0
}

// startLogin runs `agent mcp login` and returns the first authorization
// URL it shows.
func startLogin(t *testing.T, s *sandbox, args ...string) (cmd *exec.Cmd, stdin io.WriteCloser, authURL string, stdout *strings.Builder, stderr *strings.Builder, wait func() int) {
	r := startLoginRun(t, s, args...)
	return r.cmd, r.stdin, r.nextURL(), r.stdout, r.stderr, r.wait
}

func startLoginRun(t *testing.T, s *sandbox, args ...string) *loginRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	r := &loginRun{t: t, stdout: &strings.Builder{}, stderr: &strings.Builder{}, lines: make(chan string, 64), done: make(chan struct{})}
	r.cmd = exec.CommandContext(ctx, agentBinary(t), append([]string{"mcp", "login"}, args...)...)
	r.cmd.Dir = s.Work
	r.cmd.Env = append([]string{"HOME=" + s.Home, "PATH=" + os.Getenv("PATH"), "TERM=dumb"}, s.Env...)
	r.stdin, _ = r.cmd.StdinPipe()
	errPipe, _ := r.cmd.StderrPipe()
	r.cmd.Stdout = r.stdout
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(r.done)
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	return r
}

func TestE2EMCPLoginLoopbackCallbackAndLogout(t *testing.T) {
	a := newE2EAS(t)
	s := loginSandbox(t, a)
	_, stdin, authURL, stdout, stderr, wait := startLogin(t, s, "remote")
	defer stdin.Close()
	// Not a terminal: no browser is opened; the "browser" here is the test.
	loc := browser(t, a, authURL)
	if !strings.HasPrefix(loc, "http://127.0.0.1:") {
		t.Fatal(loc)
	}
	resp, err := http.Get(loc)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if code := wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := stdout.String(); got != "Signed in to MCP server remote; 3 of its tools are available from your next message.\n" {
		t.Fatalf("stdout %q", got)
	}
	for _, secret := range []string{"code-", "access-", "refresh-", "code_verifier"} {
		if strings.Contains(stdout.String()+stderr.String(), secret) {
			t.Fatalf("output shows %s: %s", secret, stderr)
		}
	}
	a.with(func() {
		if a.resForm[0] != a.srv.URL+"/mcp" {
			t.Error("no resource on the token request")
		}
	})
	// The credential file: 0600 in a 0700 directory.
	dir := filepath.Join(s.Home, ".agent", "mcp-credentials")
	entries, _ := os.ReadDir(dir)
	di, _ := os.Stat(dir)
	if len(entries) != 1 || di.Mode().Perm() != 0o700 {
		t.Fatal(len(entries), di.Mode())
	}
	fi, _ := os.Stat(filepath.Join(dir, entries[0].Name()))
	if fi.Mode().Perm() != 0o600 {
		t.Fatal(fi.Mode())
	}
	// agent mcp list shows signed-in.
	r := s.run("", "mcp", "list")
	if !strings.Contains(r.Stdout, "remote\tpending\tuser\thttp\t-\tsigned-in") {
		t.Fatalf("%q", r.Stdout)
	}
	// Logout: tokens deleted, both revoked.
	r = s.run("", "mcp", "logout", "remote")
	var revoked []string
	a.with(func() { revoked = a.revoked })
	if r.Code != 0 || !strings.Contains(r.Stdout, "Signed out of MCP server remote") || len(revoked) != 2 {
		t.Fatalf("%+v revoked %v", r, revoked)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatal("credentials left after logout")
	}
	r = s.run("", "mcp", "list")
	if !strings.Contains(r.Stdout, "\tsigned-out") {
		t.Fatalf("%q", r.Stdout)
	}
	r = s.run("", "mcp", "logout", "remote")
	if r.Code != 0 || !strings.Contains(r.Stdout, "Not signed in") {
		t.Fatalf("%+v", r)
	}
}

func TestE2EMCPLoginNoBrowserPaste(t *testing.T) {
	a := newE2EAS(t)
	s := loginSandbox(t, a)
	_, stdin, authURL, stdout, stderr, wait := startLogin(t, s, "remote", "--no-browser")
	loc := browser(t, a, authURL)
	io.WriteString(stdin, loc+"\n")
	stdin.Close()
	if code := wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout.String(), "3 of its tools") {
		t.Fatal(stdout)
	}
	if strings.Contains(stderr.String(), "code-") {
		t.Fatal("the pasted code was echoed")
	}
}

// loginPasting signs in to "remote" with --no-browser, pasting the
// address the authorization server redirects to, and returns the exit
// code, stdout and stderr.
func loginPasting(t *testing.T, s *sandbox, a *e2eAS) (int, string, string) {
	t.Helper()
	_, stdin, authURL, stdout, stderr, wait := startLogin(t, s, "remote", "--no-browser")
	io.WriteString(stdin, browser(t, a, authURL)+"\n")
	stdin.Close()
	code := wait()
	return code, stdout.String(), stderr.String()
}

// TestE2EMCPLoginAsksForTheChallengedScope: a server that answers
// initialize without a token and authorizes each operation still shows
// its challenge to the sign-in's probe, and the sign-in asks for the scope
// the challenge names (docs/reference/mcp.md, "Sign-in", steps 1 and 4).
func TestE2EMCPLoginAsksForTheChallengedScope(t *testing.T) {
	a := newE2EAS(t)
	a.openInit = true
	s := loginSandbox(t, a)
	if code, stdout, stderr := loginPasting(t, s, a); code != 0 || !strings.Contains(stdout, "3 of its tools") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	a.with(func() {
		if len(a.authScope) != 1 || a.authScope[0] != "tools" {
			t.Errorf("scopes asked for: %q, want the challenge's \"tools\"", a.authScope)
		}
	})
}

// TestE2EMCPLoginConnectsToOlderRevisions: a server that answers
// initialize with 2024-11-05 or 2025-03-26 is spoken to in that revision;
// the connection after signing in counts its tools
// (docs/reference/mcp.md, "Protocol revisions").
func TestE2EMCPLoginConnectsToOlderRevisions(t *testing.T) {
	for _, version := range []string{"2024-11-05", "2025-03-26"} {
		t.Run(version, func(t *testing.T) {
			a := newE2EAS(t)
			a.version = version
			s := loginSandbox(t, a)
			code, stdout, stderr := loginPasting(t, s, a)
			if code != 0 || stdout != "Signed in to MCP server remote; 3 of its tools are available from your next message.\n" {
				t.Fatalf("exit %d: %q %s", code, stdout, stderr)
			}
		})
	}
}

func TestE2EMCPLoginRefusals(t *testing.T) {
	a := newE2EAS(t)
	s := loginSandbox(t, a)
	// A pasted address with a forged state is refused; no file is left.
	_, stdin, authURL, _, stderr, wait := startLogin(t, s, "remote", "--no-browser")
	loc := browser(t, a, authURL)
	u, _ := url.Parse(loc)
	q := u.Query()
	q.Set("state", "forged")
	u.RawQuery = q.Encode()
	io.WriteString(stdin, u.String()+"\n")
	stdin.Close()
	if code := wait(); code != 1 || !strings.Contains(stderr.String(), "state") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if entries, _ := os.ReadDir(filepath.Join(s.Home, ".agent", "mcp-credentials")); len(entries) != 0 {
		t.Fatal("a refused sign-in left a file")
	}
	// The PRM names another server.
	a.with(func() { a.prmRes = "https://elsewhere.example/mcp" })
	r := s.run("", "mcp", "login", "remote")
	if r.Code != 1 || !strings.Contains(r.Stderr, "not this server") {
		t.Fatalf("%+v", r)
	}
	a.with(func() { a.prmRes = "" })
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"an unknown server", []string{"mcp", "login", "nosuch"}, 1, `no MCP server named "nosuch"`},
		{"a server without an oauth object", []string{"mcp", "login", "plain"}, 1, "no oauth object"},
		{"a stdio server cannot sign in", []string{"mcp", "login", "local"}, 1, "not a remote (http) server"},
		{"a client secret needs a client id", []string{"mcp", "login", "remote", "--client-secret"}, 1, "needs oauth.clientId"},
		{"login needs a server name", []string{"mcp", "login"}, 2, "missing the server NAME"},
		{"logout takes one server name", []string{"mcp", "logout", "a", "b"}, 2, "unexpected argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.run("", tc.args...)
			if r.Code != tc.code || !strings.Contains(r.Stderr, tc.want) {
				t.Errorf("%v: %+v", tc.args, r)
			}
		})
	}
	// Without the allowed network, the address policy refuses loopback.
	s.write("~/.agent/settings.json", `{"mcpServers":{"remote":{"type":"http","url":"`+a.srv.URL+`/mcp","oauth":{}}}}`)
	r = s.run("", "mcp", "login", "remote")
	if r.Code != 1 || !strings.Contains(r.Stderr, "address refused") {
		t.Fatalf("%+v", r)
	}
}

// A 403 insufficient_scope after sign-in leads to a sign-in for the union
// of scopes, then the success line.
func TestE2EMCPLoginStepUp(t *testing.T) {
	a := newE2EAS(t)
	a.with(func() { a.needScope = "admin" })
	s := loginSandbox(t, a)
	r := startLoginRun(t, s, "remote", "--no-browser")
	io.WriteString(r.stdin, browser(t, a, r.nextURL())+"\n")
	// The second sign-in shows a second URL.
	io.WriteString(r.stdin, browser(t, a, r.nextURL())+"\n")
	r.stdin.Close()
	if code := r.wait(); code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr)
	}
	var scopes []string
	a.with(func() { scopes = a.authScope })
	if len(scopes) != 2 || scopes[0] != "tools" || scopes[1] != "tools admin" {
		t.Fatalf("scopes asked %q", scopes)
	}
	if !strings.Contains(r.stdout.String(), "3 of its tools") || !strings.Contains(r.stderr.String(), "needs more scope") {
		t.Fatal(r.stdout, r.stderr)
	}
}
