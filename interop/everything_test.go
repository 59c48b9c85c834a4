package interop

// The reference server @modelcontextprotocol/server-everything end to end
// through the agent's own session (agent.Start): over stdio, started by an
// embedder's stdio authority with its approval store, and over Streamable
// HTTP behind an OAuth-protected proxy whose tokens come from the npm
// oauth2-mock-server, signed in with /mcp login. The model is the scripted
// fake; what the server does is real: it registers tools once it knows the
// client's capabilities (tools/list_changed), asks for the roots, puts a
// form and a URL to the user (elicitation), asks for a model call
// (sampling, which the client does not offer), reports progress, logs, offers resources, templates
// and prompts, and adds a resource at run time (resources/list_changed).

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"agent/agent"
	"agent/config"
	"agent/internal/elicit"
	"agent/internal/fakemodel"
	"agent/mcp"
)

// memApprovals is an embedder's approval store.
type memApprovals struct {
	mu sync.Mutex
	m  map[string]mcp.Record
}

func (s *memApprovals) Load(name string) (mcp.Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.m[name]
	return r, ok, nil
}

func (s *memApprovals) Save(name string, r mcp.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[name] = r
	return nil
}

// fillingUser answers forms as a user who fills every field with a valid
// value (the pre-filled default where there is one), and declines to open
// URLs; it records what it was asked.
type fillingUser struct {
	mu   sync.Mutex
	seen []elicit.Request
}

func (u *fillingUser) Elicit(_ context.Context, req elicit.Request) (elicit.Result, error) {
	u.mu.Lock()
	u.seen = append(u.seen, req)
	u.mu.Unlock()
	if req.Mode == elicit.ModeURL {
		return elicit.Result{Action: elicit.Decline}, nil
	}
	content := req.Form.Defaults()
	for i := range req.Form.Fields {
		f := &req.Form.Fields[i]
		if _, ok := content[f.Name]; ok {
			continue
		}
		content[f.Name] = sampleValue(f)
	}
	if err := req.Form.Validate(content); err != nil {
		return elicit.Result{}, err
	}
	return elicit.Result{Action: elicit.Accept, Content: content}, nil
}

func (u *fillingUser) asked() []elicit.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.seen)
}

// sampleValue is a valid value of a field without a default.
func sampleValue(f *elicit.Field) any {
	switch f.Kind {
	case elicit.Boolean:
		return true
	case elicit.Number:
		if f.Minimum != nil {
			return *f.Minimum
		}
		return 1.5
	case elicit.Integer:
		if f.Minimum != nil {
			return int64(*f.Minimum)
		}
		return int64(1)
	case elicit.Choice:
		return f.Options[0].Value
	case elicit.MultiChoice:
		return []string{f.Options[0].Value}
	}
	switch f.Format {
	case "email":
		return "ann@example.com"
	case "uri":
		return "https://example.com/ann"
	case "date":
		return "2024-02-29"
	case "date-time":
		return "2024-02-29T10:00:00Z"
	}
	return "Ann Example"
}

// everythingWorld is a trusted workspace and a home whose settings define
// the server "everything".
type everythingWorld struct {
	home, work string
	srv        *fakemodel.Server
	user       *fillingUser
}

func newEverythingWorld(t *testing.T, server map[string]any, extra string) *everythingWorld {
	t.Helper()
	dir := t.TempDir()
	w := &everythingWorld{home: filepath.Join(dir, "home"), work: filepath.Join(dir, "work"), srv: fakemodel.New(), user: &fillingUser{}}
	t.Cleanup(w.srv.Close)
	os.MkdirAll(filepath.Join(w.home, ".agent"), 0o700)
	os.MkdirAll(w.work, 0o755)
	def, _ := json.Marshal(map[string]any{"everything": server})
	settings := `{"mcpServers": ` + string(def) + `, "permissions": {"allow": ["everything__*"]}` + extra + `}`
	if err := os.WriteFile(filepath.Join(w.home, ".agent", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Trust(w.home, w.work, time.Now()); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *everythingWorld) options() agent.StartOptions {
	return agent.StartOptions{Workspace: w.work, Home: w.home, LookupEnv: func(string) (string, bool) { return "", false },
		Provider: "local", Model: "m", BaseURL: w.srv.URL(), Elicitor: w.user}
}

func toolCall(id, name, args string) fakemodel.Reply {
	return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: id, Name: name, Args: args}}}
}

// lastRequest is the body of the model's latest request.
func lastRequest(srv *fakemodel.Server) string {
	reqs := srv.Requests()
	return string(reqs[len(reqs)-1])
}

// turn runs one prompt whose model calls tool with args and then answers;
// it returns the request that carried the tool's result.
func turn(t *testing.T, c *agent.WorkspaceSession, srv *fakemodel.Server, prompt, tool, args string) string {
	t.Helper()
	srv.Add(toolCall("call-"+tool, tool, args), fakemodel.Reply{Text: "done with " + tool})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := c.Session.Run(ctx, prompt)
	if err != nil || res.Text != "done with "+tool {
		t.Fatalf("%s: %+v %v", tool, res, err)
	}
	return lastRequest(srv)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not in time", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func hasTool(c *agent.WorkspaceSession, name string) bool {
	return slices.ContainsFunc(c.MCP.Tools(), func(st mcp.ServerTool) bool { return st.Name == name })
}

// exerciseEverything drives a session connected to server-everything
// through what the server can do.
func exerciseEverything(t *testing.T, w *everythingWorld, c *agent.WorkspaceSession) {
	ctx := context.Background()
	// The tools that need the client's capabilities arrive by
	// tools/list_changed after initialization.
	waitUntil(t, "the conditional tools", func() bool {
		return hasTool(c, "everything__trigger-elicitation-request") && hasTool(c, "everything__get-roots-list")
	})
	status, _ := c.MCPCommand(ctx, nil)
	if !regexp.MustCompile(`everything\tapproved\tuser\t\w+\tconnected, \d+ tools, \d+ resources, \d+ resource templates?, \d+ prompts, protocol 2025-11-25`).MatchString(status) {
		t.Fatalf("/mcp: %q", status)
	}

	t.Run("elicitation form", func(t *testing.T) {
		body := turn(t, c, w.srv, "ask me", "everything__trigger-elicitation-request", `{}`)
		if !strings.Contains(body, "User provided the requested information") {
			t.Fatalf("the server did not get the answers: %.3000s", body)
		}
		r := w.user.asked()[0]
		if r.Server != "everything" || r.Mode != elicit.ModeForm || len(r.Form.Fields) < 10 {
			t.Fatalf("request %+v", r)
		}
	})
	t.Run("elicitation URL", func(t *testing.T) {
		body := turn(t, c, w.srv, "open it", "everything__trigger-url-elicitation", `{"url":"https://example.com/connect"}`)
		var urlReq *elicit.Request
		for _, r := range w.user.asked() {
			if r.Mode == elicit.ModeURL {
				urlReq = &r
			}
		}
		if urlReq == nil || urlReq.URL != "https://example.com/connect" || urlReq.ID == "" {
			t.Fatalf("URL request %+v; result %.2000s", urlReq, body)
		}
		if !strings.Contains(body, "decline") {
			t.Fatalf("the server did not get the decline: %.2000s", body)
		}
	})
	t.Run("URL elicitation required", func(t *testing.T) {
		// The server refuses the call with URLElicitationRequiredError;
		// the user is asked to open its URL, the model told to call again.
		before := len(w.user.asked())
		body := turn(t, c, w.srv, "connect", "everything__trigger-url-elicitation", `{"url":"https://example.com/second","errorPath":true}`)
		asked := w.user.asked()
		if len(asked) != before+1 || asked[before].Mode != elicit.ModeURL || asked[before].URL == "" {
			t.Fatalf("asked %+v", asked[before:])
		}
		if !strings.Contains(body, "needs the user to complete a step in a browser") || !strings.Contains(body, "the user declined") {
			t.Fatalf("the model was not told: %.3000s", body[max(strings.Index(body, `"role":"tool"`), 0):])
		}
	})
	t.Run("roots", func(t *testing.T) {
		body := turn(t, c, w.srv, "roots", "everything__get-roots-list", `{}`)
		if !strings.Contains(body, "file://"+c.Workspace) {
			t.Fatalf("roots: %.2000s", body)
		}
	})
	t.Run("no sampling", func(t *testing.T) {
		// The client declares no sampling capability, so the server never
		// registers the tool that would ask for a model call (the refusal
		// itself: mcp/client_server_test.go).
		if hasTool(c, "everything__trigger-sampling-request") {
			t.Fatal("a sampling tool is offered to a client without sampling")
		}
	})
	t.Run("progress", func(t *testing.T) {
		var mu sync.Mutex
		var got []string
		stop := c.Session.Subscribe(func(ev agent.Event) {
			if ev.Kind == agent.EventToolProgress {
				mu.Lock()
				got = append(got, ev.Tool.Progress)
				mu.Unlock()
			}
		})
		defer stop()
		turn(t, c, w.srv, "wait", "everything__trigger-long-running-operation", `{"duration":0.9,"steps":3}`)
		mu.Lock()
		defer mu.Unlock()
		if len(got) < 2 || !strings.HasPrefix(got[len(got)-1], "3/3") {
			t.Fatalf("progress %q", got)
		}
	})
	t.Run("resources", func(t *testing.T) {
		res, tmpl := c.MCP.Resources()
		if len(res) == 0 || len(tmpl) == 0 {
			t.Fatalf("resources %d, templates %d", len(res), len(tmpl))
		}
		body := turn(t, c, w.srv, "read", agent.ReadMCPResourceToolName, `{"server":"everything","uri":"demo://resource/dynamic/text/1"}`)
		if !strings.Contains(body, "Resource 1: This is a plaintext resource") {
			t.Fatalf("read: %.2000s", body)
		}
		w.srv.Add(fakemodel.Reply{Text: "summarised"})
		if _, err := c.Session.Run(ctx, "summarise @everything:demo://resource/dynamic/text/2."); err != nil {
			t.Fatal(err)
		}
		if body := lastRequest(w.srv); !strings.Contains(body, "Resource 2: This is a plaintext resource") {
			t.Fatalf("the mention was not attached: %.2000s", body)
		}
	})
	t.Run("resources/list_changed", func(t *testing.T) {
		turn(t, c, w.srv, "gzip", "everything__gzip-file-as-resource", `{"name":"hello.gz","data":"data:text/plain;base64,aGVsbG8=","outputType":"resourceLink"}`)
		waitUntil(t, "the session resource", func() bool {
			res, _ := c.MCP.Resources()
			return slices.ContainsFunc(res, func(r mcp.ServerResource) bool { return strings.HasSuffix(r.URI, "hello.gz") })
		})
	})
	t.Run("prompts", func(t *testing.T) {
		cmds := c.MCPPromptCommands()
		i := slices.IndexFunc(cmds, func(p agent.PromptCommand) bool { return p.Name == "/mcp__everything__args-prompt" })
		if i < 0 || cmds[i].ArgHint != "<city> [state]" {
			t.Fatalf("prompt commands %+v", cmds)
		}
		req, err := c.MCPPromptRequest(ctx, []string{"/mcp__everything__args-prompt", "Paris", "state=Texas"})
		if err != nil || req.Prompt != "What's weather in Paris, Texas?" {
			t.Fatalf("prompt %+v, %v", req, err)
		}
	})
}

func TestEverythingSessionStdio(t *testing.T) {
	p := mcpNeedPeers(t)
	js := mcpEverythingJS(t, p)
	env := map[string]string{"PATH": filepath.Dir(p.node) + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	w := newEverythingWorld(t, map[string]any{"type": "stdio", "command": p.node, "args": []string{js, "stdio"}, "env": env}, "")
	// An embedder's earlier approval of exactly this definition, and its
	// authority to start exactly this process.
	ws, _ := config.RealPath(w.work)
	s := config.Load(config.Options{Home: w.home, Workspace: ws, Trusted: true, Lookup: func(string) (string, bool) { return "", false }})
	store := &memApprovals{m: map[string]mcp.Record{"everything": {State: mcp.Approved, Fingerprint: mcp.Fingerprint(s.Servers["everything"], ws)}}}
	opts := w.options()
	opts.MCPApprovalStore = store
	opts.MCPStdioAuthorities = map[string]mcp.StdioAuthority{"everything": {Command: p.node, Args: []string{js, "stdio"}, Env: env}}
	var notices []string
	var mu sync.Mutex
	opts.Notice = func(s string) { mu.Lock(); notices = append(notices, s); mu.Unlock() }
	c, err := agent.Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	exerciseEverything(t, w, c)
	id := c.Session.ID()
	c.Close()
	// Its log messages went to the debug log only.
	log, err := os.ReadFile(agent.DebugLogPath(w.home, id))
	if err != nil || !strings.Contains(string(log), "mcp:everything info everything-server") {
		t.Fatalf("debug log %q, %v", log, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, n := range notices {
		if strings.Contains(n, "Roots updated") {
			t.Fatalf("a log message became a notice: %q", n)
		}
	}
}

// everythingHTTP starts server-everything's Streamable HTTP transport and
// returns its port.
func everythingHTTP(t *testing.T, p mcpPeers, js string) int {
	t.Helper()
	port := freeTCPPort(t)
	cmd := exec.Command(p.node, js, "streamableHttp")
	cmd.Env = p.env("PORT=" + strconv.Itoa(port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on port") {
				once.Do(func() { close(listening) })
			}
		}
	}()
	select {
	case <-listening:
	case <-time.After(30 * time.Second):
		t.Fatal("server-everything did not start listening")
	}
	return port
}

// oauthProxy is the resource server in front of server-everything: it
// publishes protected-resource metadata naming the mock's issuer, admits
// only the mock's tokens, and passes the rest on, streams included.
func oauthProxy(t *testing.T, cert tls.Certificate, issuer string, backend int) *httptest.Server {
	target, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(backend))
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	var srv *httptest.Server
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{issuer}, "bearer_methods_supported": []string{"header"}})
		case "/mcp":
			if !issuedBy(r.Header.Get("Authorization"), issuer) {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			rp.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// pasteUI is /mcp login --no-browser's conversation, played by the test:
// it opens the authorization URL the sign-in shows and pastes where the
// authorization server sent the browser.
type pasteUI struct {
	t       *testing.T
	browser *http.Client
	mu      sync.Mutex
	url     string
}

func (u *pasteUI) Show(line string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if i := strings.Index(line, "https://"); i >= 0 && strings.Contains(line, "/authorize") {
		u.url = strings.Fields(line[i:])[0]
	}
}

func (u *pasteUI) Confirm(context.Context, string) (bool, error) { return false, nil }

func (u *pasteUI) ReadSecret(ctx context.Context, prompt string) (string, error) {
	u.mu.Lock()
	link := u.url
	u.mu.Unlock()
	resp, err := u.browser.Get(link)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return "", fmt.Errorf("authorize answered %d", resp.StatusCode)
	}
	return resp.Header.Get("Location"), nil
}

func TestEverythingSessionHTTPOAuth(t *testing.T) {
	p := mcpNeedPeers(t)
	js := mcpEverythingJS(t, p)
	dir := t.TempDir()
	cert, certFile, keyFile := testCert(t, dir)
	as := startMockAS(t, certFile, keyFile)
	proxy := oauthProxy(t, cert, as.issuer, everythingHTTP(t, p, js))
	w := newEverythingWorld(t, map[string]any{"type": "http", "url": proxy.URL + "/mcp",
		"oauth": map[string]any{"clientId": "agent-interop", "callbackPort": freeTCPPort(t)}},
		`, "mcpAllowedNetworks": ["127.0.0.0/8", "::1/128"]`)
	leaf, _ := x509.ParseCertificate(cert.Certificate[0])
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	opts := w.options()
	opts.SignInUI = &pasteUI{t: t, browser: &http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	opts.Overrides.MCPRootCAs = pool
	c, err := agent.Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := t.Context()
	if _, err := c.MCPCommand(ctx, []string{"approve", "everything"}); err != nil {
		t.Fatal(err)
	}
	out, err := c.MCPCommand(ctx, []string{"login", "everything", "--no-browser"})
	if err != nil || !strings.HasPrefix(out, "Signed in to MCP server everything;") {
		t.Fatalf("%q %v", out, err)
	}
	exerciseEverything(t, w, c)
}
