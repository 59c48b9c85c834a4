package interop

// A sign-in of the real binary (`agent mcp login --no-browser`, then `agent
// mcp logout`) against a real OAuth server from npm, oauth2-mock-server,
// started over https by oauth/mock-server.mjs. The MCP server in front of
// it is a small Go TLS server here whose protected-resource metadata names
// the mock as its authorization server. The binary trusts the test
// certificate through SSL_CERT_FILE and may reach 127.0.0.1 through the
// user's mcpAllowedNetworks: every endpoint is https, as in production
// (docs/reference/mcp.md, "Sign-in").

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testCert makes a self-signed certificate for 127.0.0.1 and localhost
// and writes it and its key as PEM files.
func testCert(t *testing.T, dir string) (tls.Certificate, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "agent interop"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk})
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return pair, certFile, keyFile
}

// mockAS is the running oauth2-mock-server and the events it reported.
type mockAS struct {
	issuer string
	mu     sync.Mutex
	events []map[string]any
}

func (m *mockAS) of(kind string) []map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []map[string]any
	for _, e := range m.events {
		if e["event"] == kind {
			out = append(out, e)
		}
	}
	return out
}

// await waits until the mock has reported n events of a kind, or for at
// most d; it returns how many it has.
func (m *mockAS) await(kind string, n int, d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		got := len(m.of(kind))
		if got >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func startMockAS(t *testing.T, certFile, keyFile string) *mockAS {
	t.Helper()
	requirePeer(t, "oauth2-mock-server")
	node := nodeBinary(t, 20)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, "oauth/mock-server.mjs", keyFile, certFile)
	cmd.Dir = interopDir(t)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := &mockAS{}
	first := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var e map[string]any
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				continue
			}
			if iss, ok := e["issuer"].(string); ok {
				first <- iss
				continue
			}
			m.mu.Lock()
			m.events = append(m.events, e)
			m.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
		cancel()
		cmd.Wait()
	})
	select {
	case m.issuer = <-first:
	case <-done:
		t.Fatalf("oauth2-mock-server did not start: %s", stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("oauth2-mock-server did not start in time: %s", stderr.String())
	}
	return m
}

// resourceServer is an OAuth-protected MCP server whose tokens come from
// issuer: it checks that the bearer is a JWT issued by it.
func resourceServer(t *testing.T, cert tls.Certificate, issuer string) *httptest.Server {
	var srv *httptest.Server
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reply := func(v any) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(v)
		}
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp":
			reply(map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{issuer}, "bearer_methods_supported": []string{"header"}})
		case "/mcp":
			if !issuedBy(r.Header.Get("Authorization"), issuer) {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			if r.Method != http.MethodPost {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&m)
			switch {
			case m.ID == nil:
				w.WriteHeader(http.StatusAccepted)
			case m.Method == "initialize":
				reply(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"protocolVersion": "2025-06-18",
					"capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "interop", "version": "1"}}})
			case m.Method == "tools/list":
				tool := func(n string) any { return map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}} }
				reply(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"tools": []any{tool("alpha"), tool("beta")}}})
			default:
				reply(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
			}
		default:
			http.NotFound(w, r)
		}
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// issuedBy reads the claims of a Bearer JWT and checks its issuer and
// expiry (the signature is the mock's business; the test checks that the
// token came through the sign-in).
func issuedBy(auth, issuer string) bool {
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	parts := strings.Split(tok, ".")
	if !ok || len(parts) != 3 {
		return false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false
	}
	var claims struct {
		Iss string  `json:"iss"`
		Exp float64 `json:"exp"`
	}
	return json.Unmarshal(payload, &claims) == nil && claims.Iss == issuer && claims.Exp > float64(time.Now().Unix())
}

var agentBin struct {
	once sync.Once
	path string
	err  error
}

func buildAgent(t *testing.T) string {
	t.Helper()
	agentBin.once.Do(func() {
		dir, err := buildDir("bin-")
		if err != nil {
			agentBin.err = err
			return
		}
		agentBin.path = filepath.Join(dir, "agent")
		cmd := exec.Command("go", "build", "-o", agentBin.path, "agent")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			agentBin.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if agentBin.err != nil {
		t.Fatal(agentBin.err)
	}
	return agentBin.path
}

func freeTCPPort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestOAuthMockServerLoginLogout(t *testing.T) {
	dir := t.TempDir()
	cert, certFile, keyFile := testCert(t, dir)
	as := startMockAS(t, certFile, keyFile)
	rs := resourceServer(t, cert, as.issuer)

	home := filepath.Join(dir, "home")
	work := filepath.Join(dir, "work")
	os.MkdirAll(filepath.Join(home, ".agent"), 0o700)
	os.MkdirAll(work, 0o755)
	port := freeTCPPort(t)
	settings := fmt.Sprintf(`{"mcpAllowedNetworks":["127.0.0.0/8","::1/128"],"mcpServers":{"mock":{"type":"http","url":"%s/mcp","oauth":{"clientId":"agent-interop","callbackPort":%d}}}}`, rs.URL, port)
	if err := os.WriteFile(filepath.Join(home, ".agent", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := buildAgent(t)
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "SSL_CERT_FILE=" + certFile, "TERM=dumb"}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "mcp", "login", "mock", "--no-browser")
	cmd.Dir, cmd.Env = work, env
	stdin, _ := cmd.StdinPipe()
	errPipe, _ := cmd.StderrPipe()
	var stdout, stderr strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(errPipe)
	var authURL string
	for sc.Scan() {
		stderr.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "https://") {
			authURL = sc.Text()
			break
		}
	}
	if authURL == "" {
		cmd.Wait()
		t.Fatalf("no authorization URL: %s", stderr.String())
	}
	// The browser: follow the authorization URL to the mock's redirect and
	// paste where it points.
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	if cert.Leaf == nil {
		leaf, _ := x509.ParseCertificate(cert.Certificate[0])
		pool.AddCert(leaf)
	}
	browser := &http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := browser.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, fmt.Sprintf("http://127.0.0.1:%d/callback?", port)) {
		t.Fatalf("authorize answered %d, Location %q", resp.StatusCode, loc)
	}
	io.WriteString(stdin, loc+"\n")
	stdin.Close()
	for sc.Scan() {
		stderr.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) || err != nil {
		t.Fatalf("agent mcp login: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	if got := stdout.String(); got != "Signed in to MCP server mock; 2 of its tools are available from your next message.\n" {
		t.Fatalf("stdout %q", got)
	}

	// What the real server saw: PKCE S256, state and resource on the
	// authorization request; the verifier and resource on the token request.
	auths, toks := as.of("authorize"), as.of("token")
	if len(auths) != 1 || len(toks) != 1 {
		t.Fatalf("events: %d authorize, %d token", len(auths), len(toks))
	}
	a := auths[0]
	if a["code_challenge_method"] != "S256" || a["has_code_challenge"] != true || a["has_state"] != true ||
		a["resource"] != rs.URL+"/mcp" || a["client_id"] != "agent-interop" {
		t.Fatalf("authorization request %v", a)
	}
	tk := toks[0]
	if tk["grant_type"] != "authorization_code" || tk["has_code_verifier"] != true || tk["resource"] != rs.URL+"/mcp" {
		t.Fatalf("token request %v", tk)
	}

	// agent mcp list shows signed-in; logout revokes at the mock.
	run := func(args ...string) (string, string, int) {
		c := exec.CommandContext(ctx, bin, args...)
		c.Dir, c.Env = work, env
		var o, e strings.Builder
		c.Stdout, c.Stderr = &o, &e
		err := c.Run()
		code := 0
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return o.String(), e.String(), code
	}
	if out, _, _ := run("mcp", "list"); !strings.Contains(out, "\tsigned-in") {
		t.Fatalf("mcp list: %q", out)
	}
	out, errOut, code := run("mcp", "logout", "mock")
	if code != 0 || !strings.Contains(out, "Signed out of MCP server mock") {
		t.Fatalf("logout: %d %q %q", code, out, errOut)
	}
	// The mock reports each request on its stdout after answering it: the
	// last report may trail the agent's exit by a moment.
	if n := as.await("revoke", 2, 5*time.Second); n != 2 {
		t.Fatalf("%d revocations, want 2 (refresh and access token): %s", n, errOut)
	}
	if out, _, _ := run("mcp", "list"); !strings.Contains(out, "\tsigned-out") {
		t.Fatalf("mcp list after logout: %q", out)
	}
}

var authBin struct {
	once sync.Once
	path string
	err  error
}

func buildAuthClient(t *testing.T) string {
	t.Helper()
	authBin.once.Do(func() {
		dir, err := buildDir("auth-client-")
		if err != nil {
			authBin.err = err
			return
		}
		authBin.path = filepath.Join(dir, "conformance-auth-client")
		if out, err := exec.Command("go", "build", "-o", authBin.path, "./conformance-auth-client").CombinedOutput(); err != nil {
			authBin.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if authBin.err != nil {
		t.Fatal(authBin.err)
	}
	return authBin.path
}

// TestMCPConformanceAuthScenarios runs every client authorization
// scenario (auth/*) of both suites (the 2025 revisions, the 2025-03-26
// compatibility scenarios and, in the prerelease, 2026-07-28) against
// conformance-auth-client, which signs in through mcp/oauth. A run listed
// in expected-failures.txt must fail, with its reason there.
func TestMCPConformanceAuthScenarios(t *testing.T) {
	p := mcpNeedPeers(t)
	mcpRunAll(t, p, buildAuthClient(t), mcpClientRuns(t, p, true), true)
}
