package interop

// `agent mcp serve` against real peers: the MCP inspector CLI (stdio and
// loopback HTTP with the bearer header), the official conformance suite's
// server scenarios (0.1.16 at 2025-11-25, the prerelease at 2026-07-28),
// and remote mode with access tokens minted by npm jose behind a loopback
// TLS issuer.

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"agent/internal/fakemodel"
)

// serveBuildAgent builds the agent binary once per test binary.
func serveBuildAgent(t *testing.T) string { return buildAgent(t) }

// serveWorld is a trusted workspace whose model is a fake server.
type serveWorld struct {
	bin, home, work string
	model           *fakemodel.Server
	env             []string
}

func newServeWorld(t *testing.T, replies ...fakemodel.Reply) *serveWorld {
	t.Helper()
	w := &serveWorld{bin: serveBuildAgent(t), home: t.TempDir(), work: t.TempDir()}
	if real, err := filepath.EvalSymlinks(w.work); err == nil {
		w.work = real
	}
	w.model = fakemodel.New(replies...)
	t.Cleanup(w.model.Close)
	w.env = []string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH")}
	if err := os.MkdirAll(filepath.Join(w.home, ".agent"), 0o700); err != nil {
		t.Fatal(err)
	}
	settings := `{"defaultModel": {"provider": "local", "model": "fake"}, "providers": {"local": {"baseURL": "` + w.model.URL() + `"}},
		"permissions": {"allow": ["Read"]}}`
	if err := os.WriteFile(filepath.Join(w.home, ".agent", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.work, "hello.txt"), []byte("hello from the workspace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(w.bin, "trust", "--yes")
	cmd.Dir, cmd.Env = w.work, w.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("trust: %v %s", err, out)
	}
	return w
}

// startHTTP runs `agent mcp serve` with args and returns the address it
// printed; the process ends with the test.
func (w *serveWorld) startHTTP(t *testing.T, re *regexp.Regexp, args ...string) []string {
	t.Helper()
	cmd := exec.Command(w.bin, append([]string{"mcp", "serve"}, args...)...)
	cmd.Dir, cmd.Env = w.work, w.env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			if !sent {
				t.Log(sc.Text())
			}
			if m := re.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case m, ok := <-found:
		if !ok {
			t.Fatal("mcp serve ended without listening")
		}
		return m
	case <-time.After(30 * time.Second):
		t.Fatal("mcp serve did not start")
	}
	return nil
}

var loopbackRe = regexp.MustCompile(`listening on http://127\.0\.0\.1:(\d+)/mcp`)

// startLoopback serves on loopback HTTP and returns the port and token.
func (w *serveWorld) startLoopback(t *testing.T) (port, token string) {
	t.Helper()
	tokFile := filepath.Join(t.TempDir(), "serve.token")
	port = w.startHTTP(t, loopbackRe, "--http-token-file", tokFile)[1]
	b, err := os.ReadFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	return port, string(b)
}

func inspectorJS(t *testing.T, p mcpPeers) string {
	t.Helper()
	js := p.path("@modelcontextprotocol/inspector/clients/launcher/build/index.js")
	if _, err := os.Stat(js); err != nil {
		missingPeer(t, "@modelcontextprotocol/inspector: %v", err)
	}
	return js
}

// inspect runs the inspector CLI and decodes its JSON output.
func inspect(t *testing.T, p mcpPeers, w *serveWorld, args ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.node, append([]string{inspectorJS(t, p), "--cli"}, args...)...)
	cmd.Dir = w.work
	cmd.Env = append(p.env(), "HOME="+w.home, "MCP_CATALOG_PATH="+filepath.Join(w.home, "catalog.json"))
	out, err := cmd.Output()
	var m map[string]any
	if jerr := json.Unmarshal(out, &m); err != nil || jerr != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("inspector %v: %v %v\n%s\n%s", args, err, jerr, out, stderr)
	}
	return m
}

func checkInspected(t *testing.T, p mcpPeers, w *serveWorld, target []string) {
	t.Helper()
	list := inspect(t, p, w, append(target, "--method", "tools/list")...)
	var names []string
	for _, tool := range list["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	if len(names) < 2 || names[0] != "agent_submit" || !strings.Contains(strings.Join(names, " "), "Read") {
		t.Fatalf("tools %v", names)
	}
	res := inspect(t, p, w, append(target, "--method", "tools/call", "--tool-name", "agent_submit", "--tool-arg", "prompt=say hi")...)
	if text := res["content"].([]any)[0].(map[string]any)["text"]; text != "hi from the model" {
		t.Fatalf("agent_submit: %v", res)
	}
	res = inspect(t, p, w, append(target, "--method", "tools/call", "--tool-name", "Read", "--tool-arg", "file_path=hello.txt")...)
	if text, _ := res["content"].([]any)[0].(map[string]any)["text"].(string); !strings.Contains(text, "hello from the workspace") {
		t.Fatalf("Read: %v", res)
	}
}

func TestServeInspectorStdio(t *testing.T) {
	p := mcpNeedPeers(t)
	w := newServeWorld(t, fakemodel.Reply{Text: "hi from the model"})
	checkInspected(t, p, w, []string{"--cwd", w.work, "-e", "HOME=" + w.home, w.bin, "mcp", "serve"})
}

func TestServeInspectorHTTP(t *testing.T) {
	p := mcpNeedPeers(t)
	w := newServeWorld(t, fakemodel.Reply{Text: "hi from the model"})
	port, token := w.startLoopback(t)
	checkInspected(t, p, w, []string{"http://127.0.0.1:" + port + "/mcp", "--transport", "http", "--header", "Authorization: Bearer " + token})
}

// authProxy stands in front of the loopback server for the conformance
// suite, which sends no credentials: it adds the bearer header, and maps
// the proxy's own loopback Host and Origin to the server's, so that what
// the suite calls "localhost" is the server's localhost. Any other Host or
// Origin (the suite's rebinding probe) passes through unchanged.
func authProxy(t *testing.T, port, token string) string {
	t.Helper()
	target, _ := url.Parse("http://127.0.0.1:" + port)
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second}
	t.Cleanup(tr.CloseIdleConnections)
	var self string
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
			for _, local := range []string{"127.0.0.1", "localhost"} {
				if strings.EqualFold(r.In.Host, local+":"+self) {
					r.Out.Host = local + ":" + port
				}
				if o := r.In.Header.Get("Origin"); strings.EqualFold(o, "http://"+local+":"+self) {
					r.Out.Header.Set("Origin", "http://"+local+":"+port)
				}
			}
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
		FlushInterval: -1,
		// A transport of its own: httptest.Server.Close (any other test's)
		// closes the idle connections of http.DefaultTransport, which can
		// catch one this proxy is about to reuse.
		Transport: tr,
	}
	srv := httptest.NewUnstartedServer(rp)
	_, self, _ = net.SplitHostPort(srv.Listener.Addr().String())
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// serveExpectedFailures reads interop/expected-failures-serve.txt: lines
// "SUITE SCENARIO@SPEC: reason".
func serveExpectedFailures(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("expected-failures-serve.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, reason, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("expected-failures-serve.txt: malformed line %q", line)
		}
		out[strings.Join(strings.Fields(key), " ")] = reason
	}
	return out
}

func runServerScenario(t *testing.T, p mcpPeers, js, serverURL, scenario, spec string) []mcpCheck {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.node, js, "server", "--url", serverURL, "--scenario", scenario, "--spec-version", spec, "--output-dir", out)
	cmd.Env = p.env()
	log, runErr := cmd.CombinedOutput()
	matches, _ := filepath.Glob(filepath.Join(out, "*", "checks.json"))
	if len(matches) == 0 {
		matches, _ = filepath.Glob(filepath.Join(out, "checks.json"))
	}
	if len(matches) != 1 {
		t.Fatalf("no results of %s (%v):\n%s", scenario, runErr, log)
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []mcpCheck
	if err := json.Unmarshal(data, &checks); err != nil {
		t.Fatal(err)
	}
	var failed []mcpCheck
	for _, c := range checks {
		if c.Status == "FAILURE" {
			failed = append(failed, c)
		}
	}
	if len(checks) == 0 {
		failed = append(failed, mcpCheck{ID: "no-checks", Status: "FAILURE", ErrorMessage: string(log)})
	}
	if len(failed) > 0 {
		t.Logf("%s output:\n%s", scenario, log)
	}
	return failed
}

// transportFlake reports failures that are all the suite's connection
// ending mid-answer, not a check of the protocol.
func transportFlake(failed []mcpCheck) bool {
	if len(failed) == 0 {
		return false
	}
	for _, c := range failed {
		if !strings.Contains(c.ErrorMessage, "terminated") && !strings.Contains(c.ErrorMessage, "other side closed") {
			return false
		}
	}
	return true
}

func TestServeConformance(t *testing.T) {
	p := mcpNeedPeers(t)
	expected := serveExpectedFailures(t)
	w := newServeWorld(t)
	port, token := w.startLoopback(t)
	proxied := authProxy(t, port, token)
	direct := "http://127.0.0.1:" + port + "/mcp"
	stable := p.path("@modelcontextprotocol/conformance/dist/index.js")
	next := p.path("conformance-next/dist/index.js")
	type run struct{ suite, js, scenario, spec string }
	var runs []run
	for _, sc := range []string{"server-initialize", "ping", "tools-list", "dns-rebinding-protection", "logging-set-level", "server-sse-polling", "server-sse-multiple-streams"} {
		runs = append(runs, run{"0.1.16", stable, sc, "2025-11-25"})
	}
	for _, sc := range []string{"tools-list", "dns-rebinding-protection", "http-header-validation", "server-stateless", "caching"} {
		runs = append(runs, run{"next", next, sc, "2026-07-28"})
	}
	// The resumable streams (docs/reference/mcp.md, "Resumable streams")
	// in the prerelease too.
	for _, sc := range []string{"server-sse-polling", "server-sse-multiple-streams", "server-session-lifecycle"} {
		runs = append(runs, run{"next", next, sc, "2025-11-25"})
	}
	for _, r := range runs {
		name := r.suite + " " + r.scenario + "@" + r.spec
		t.Run(strings.ReplaceAll(name, " ", "/"), func(t *testing.T) {
			failed := runServerScenario(t, p, r.js, proxied, r.scenario, r.spec)
			if transportFlake(failed) {
				// The suite's HTTP client sometimes sees its connection
				// through the test's proxy end mid-answer ("terminated")
				// when the machine is loaded; a protocol failure repeats,
				// so one more run tells them apart.
				t.Logf("%s: connection ended mid-answer; running it once more", name)
				failed = runServerScenario(t, p, r.js, proxied, r.scenario, r.spec)
			}
			reason, known := expected[name]
			switch {
			case known && len(failed) == 0:
				t.Errorf("%s now passes: remove it from interop/expected-failures-serve.txt", name)
			case known:
				t.Logf("expected failure (%s): %d checks, first %s: %s", reason, len(failed), failed[0].ID, failed[0].ErrorMessage)
			default:
				for _, c := range failed {
					t.Errorf("%s: %s %s", c.ID, c.Name, c.ErrorMessage)
				}
			}
		})
	}
	// Without the proxy the suite has no token: every request is refused,
	// the server never reached.
	t.Run("no-token", func(t *testing.T) {
		if failed := runServerScenario(t, p, stable, direct, "server-initialize", "2025-11-25"); len(failed) == 0 {
			t.Fatal("server-initialize passed without the bearer token")
		}
	})
}

// TestServeRemoteJose: remote mode behind a loopback TLS issuer whose keys
// and tokens come from npm jose (interop/jose/mint.mjs): the tokens the
// verifier must accept are admitted, the others refused with 401 or 403.
func TestServeRemoteJose(t *testing.T) {
	requirePeer(t, "jose")
	node := nodeBinary(t, 20)
	const publicURL = "https://agent.example/mcp"
	var issuerURL string
	var jwks json.RawMessage
	var mu sync.Mutex
	mux := http.NewServeMux()
	mux.HandleFunc("/tenant/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"issuer":%q,"jwks_uri":%q}`, issuerURL, strings.TrimSuffix(issuerURL, "/tenant")+"/jwks")
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(jwks)
	})
	issuer := httptest.NewTLSServer(mux)
	defer issuer.Close()
	issuerURL = issuer.URL + "/tenant"
	certFile := filepath.Join(t.TempDir(), "issuer.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: issuer.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Second)
	in, _ := json.Marshal(map[string]any{"issuer": issuerURL, "audience": publicURL, "subject": "alice", "scope": "mcp", "now": now.Unix()})
	var out struct {
		JWKS  json.RawMessage `json:"jwks"`
		Cases []struct {
			Name, Token, Want string
		} `json:"cases"`
	}
	if err := json.Unmarshal(runNode(t, node, "jose/mint.mjs", string(in)), &out); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	jwks = out.JWKS
	mu.Unlock()

	w := newServeWorld(t)
	w.env = append(w.env, "SSL_CERT_FILE="+certFile)
	m := w.startHTTP(t, regexp.MustCompile(`listening on 127\.0\.0\.1:(\d+) `),
		"--http-public-url", publicURL, "--oauth-issuer", issuerURL, "--oauth-scopes", "mcp", "--oauth-allowed-subjects", "alice",
		"--trusted-proxy", "127.0.0.1")
	endpoint := "http://127.0.0.1:" + m[1] + "/mcp"
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509.NewCertPool()}}}
	for i, c := range out.Cases {
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"i","version":"1"}}}`))
		req.Host = "agent.example"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+c.Token)
		// One client address per case, so that the failure throttle does
		// not mix into what is tested here.
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("192.0.2.%d", i+1))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		want := http.StatusUnauthorized
		switch {
		case c.Name == "jti missing":
			// Only event tokens must carry jti (docs/reference/mcp.md,
			// "Access-token verification"); an MCP access token need not.
			want = http.StatusOK
		case c.Want == "":
			want = http.StatusOK
		case c.Want == "missing scope" || c.Want == "principal not allowed":
			want = http.StatusForbidden
		}
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d (%s)", c.Name, resp.StatusCode, want, resp.Header.Get("WWW-Authenticate"))
		}
	}
}
