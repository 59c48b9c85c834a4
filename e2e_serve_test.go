package main

// End-to-end tests of `agent mcp serve` through the binary: every flag rule
// and refusal, stdio (both kinds of client, stdout only frames), loopback
// HTTP (token file, Host/Origin/bearer checks, limits, sessions, removal on
// signals) and remote mode (metadata, challenges, statuses, throttle)
// against a loopback TLS issuer (docs/reference/mcp.md, "agent mcp serve").

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"agent/internal/fakemodel"
	"agent/internal/jose/josetest"
)

func TestE2EServeFlagRules(t *testing.T) {
	s, _ := printSandbox(t)
	existing := s.write("exists.token", "keep")
	tok := filepath.Join(t.TempDir(), "t.token")
	remote := []string{"--http-public-url", "https://mcp.example/mcp", "--oauth-issuer", "https://issuer.example", "--oauth-scopes", "mcp", "--oauth-allowed-subjects", "alice"}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"public url alone", []string{"--http-public-url", "https://mcp.example/mcp"}, 1, "requires the four flags together"},
		{"issuer alone", []string{"--oauth-issuer", "https://issuer.example"}, 1, "pass all of --http-public-url, --oauth-issuer, --oauth-scopes, --oauth-allowed-subjects"},
		{"three of four", remote[:6], 1, "four flags together"},
		{"scopes and subjects", remote[4:], 1, "four flags together"},
		{"remote with token file", append([]string{"--http-token-file", tok}, remote...), 1, "never uses a token file"},
		{"non-loopback host without remote", []string{"--http-token-file", tok, "--http-host", "0.0.0.0"}, 1, "needs remote mode"},
		{"::1 host without remote", []string{"--http-token-file", tok, "--http-host", "::1"}, 1, "needs remote mode"},
		{"trusted proxy without remote", []string{"--trusted-proxy", "10.0.0.1"}, 1, "remote mode only"},
		{"port without http", []string{"--http-port", "0"}, 1, "need --http-token-file"},
		{"port not a number", []string{"--http-token-file", tok, "--http-port", "eighty"}, 2, "--http-port must be a port number"},
		{"port out of range", []string{"--http-token-file", tok, "--http-port", "70000"}, 2, "--http-port must be a port number"},
		{"host not an IP", []string{"--http-token-file", tok, "--http-host", "localhost"}, 2, "--http-host must be a literal IP"},
		{"proxy not an IP", append([]string{"--trusted-proxy", "proxy.example"}, remote...), 2, "--trusted-proxy must be a literal IP"},
		{"relative token file", []string{"--http-token-file", "rel.token"}, 1, "must be an absolute path"},
		{"existing token file", []string{"--http-token-file", existing}, 1, "already exists"},
		{"token file folder missing", []string{"--http-token-file", filepath.Join(t.TempDir(), "no", "t.token")}, 1, "folder does not exist"},
		{"public url http", []string{"--http-public-url", "http://mcp.example/mcp", "--oauth-issuer", "https://issuer.example", "--oauth-scopes", "mcp", "--oauth-allowed-subjects", "alice"}, 1, "--http-public-url must be an https URL"},
		{"issuer http", []string{"--http-public-url", "https://mcp.example/mcp", "--oauth-issuer", "http://issuer.example", "--oauth-scopes", "mcp", "--oauth-allowed-subjects", "alice"}, 1, "--oauth-issuer"},
		{"empty scope", []string{"--http-public-url", "https://mcp.example/mcp", "--oauth-issuer", "https://issuer.example", "--oauth-scopes", "a,,b", "--oauth-allowed-subjects", "alice"}, 1, "--oauth-scopes: an empty entry"},
		{"operand", []string{"extra"}, 2, "unexpected argument"},
		{"unknown flag", []string{"--http-tokenfile", tok}, 2, "unknown flag"},
		{"bad permission mode", []string{"--permission-mode", "yolo"}, 2, "--permission-mode must be"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := s.run("", append([]string{"mcp", "serve"}, tc.args...)...)
			if r.Code != tc.code || !strings.Contains(r.Stderr, tc.want) || r.Stdout != "" {
				t.Fatalf("code %d, want %d with %q\nstderr: %s\nstdout: %s", r.Code, tc.code, tc.want, r.Stderr, r.Stdout)
			}
		})
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep" {
		t.Fatalf("an existing token file was changed: %q", b)
	}
	if _, err := os.Stat(tok); err == nil {
		t.Fatal("a refused start left a token file")
	}
	if r := s.run("", "mcp", "serve", "--help"); r.Code != 0 || !strings.Contains(r.Stdout, "--http-token-file") || !strings.Contains(r.Stdout, "--oauth-allowed-subjects") {
		t.Fatalf("help: %+v", r)
	}
}

func TestE2EServeUntrusted(t *testing.T) {
	s := newSandbox(t)
	tok := filepath.Join(t.TempDir(), "t.token")
	for _, args := range [][]string{{}, {"--http-token-file", tok}} {
		r := s.run("", append([]string{"mcp", "serve"}, args...)...)
		if r.Code != 1 || !strings.Contains(r.Stderr, "agent trust --yes") || r.Stdout != "" {
			t.Fatalf("%v: %+v", args, r)
		}
	}
	if _, err := os.Stat(tok); err == nil {
		t.Fatal("token file created for a refused start")
	}
}

// stdioLines runs mcp serve with the given input lines and returns the
// output lines, each checked to be one JSON-RPC message.
func stdioLines(t *testing.T, s *sandbox, args []string, lines ...string) ([]map[string]any, result) {
	t.Helper()
	r := s.run(strings.Join(lines, "\n")+"\n", append([]string{"mcp", "serve"}, args...)...)
	var out []map[string]any
	for l := range strings.SplitSeq(strings.TrimSuffix(r.Stdout, "\n"), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("stdout line is not an MCP frame: %q", l)
		}
		out = append(out, m)
	}
	return out, r
}

func byID(msgs []map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, m := range msgs {
		out[fmt.Sprint(m["id"])] = m
	}
	return out
}

func resultText(t *testing.T, m map[string]any) (string, bool) {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", m)
	}
	content := res["content"].([]any)
	return content[0].(map[string]any)["text"].(string), res["isError"] == true
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`

func TestE2EServeStdio(t *testing.T) {
	s, srv := printSandbox(t, fakemodel.Reply{Text: "served answer"})
	s.askForBash()
	s.write(".agent/settings.json", `{"permissions": {"deny": ["WebFetch"]}}`)
	msgs, r := stdioLines(t, s, nil,
		initLine,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Bash","arguments":{"command":"echo hi"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"hello there"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":""}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"WebFetch","arguments":{"url":"https://example.com"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":8,"method":"logging/setLevel","params":{"level":"info"}}`,
		`{"jsonrpc":"2.0","id":9,"method":"resources/list"}`,
		`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"Read","arguments":{"path":"nope.txt","extra":1}}}`,
		`not json`,
	)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	got := byID(msgs)
	init := got["1"]["result"].(map[string]any)
	if init["protocolVersion"] != "2025-11-25" || init["serverInfo"].(map[string]any)["name"] != "agent" {
		t.Fatalf("initialize: %v", init)
	}
	caps := init["capabilities"].(map[string]any)
	if caps["tools"] == nil || caps["resources"] != nil || caps["prompts"] != nil {
		t.Fatalf("capabilities %v", caps)
	}
	var names []string
	for _, tool := range got["2"]["result"].(map[string]any)["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	if names[0] != "agent_submit" || !strings.Contains(strings.Join(names, ","), "Read") || strings.Contains(strings.Join(names, ","), "WebFetch") {
		t.Fatalf("tools %v (WebFetch is denied, so not offered)", names)
	}
	if text, isErr := resultText(t, got["3"]); !isErr || !strings.Contains(text, `"Bash(echo hi)"`) || !strings.Contains(text, "permissions.allow") {
		t.Fatalf("Bash: %q %v", text, isErr)
	}
	if text, isErr := resultText(t, got["4"]); isErr || text != "served answer" {
		t.Fatalf("agent_submit: %q %v", text, isErr)
	}
	if !strings.Contains(string(srv.Requests()[0]), "hello there") {
		t.Fatalf("model request %s", srv.Requests()[0])
	}
	if text, isErr := resultText(t, got["5"]); !isErr || !strings.Contains(text, "prompt must not be empty") {
		t.Fatalf("empty prompt: %q", text)
	}
	if e := got["6"]["error"].(map[string]any); e["code"].(float64) != -32602 {
		t.Fatalf("denied tool call: %v", got["6"])
	}
	if len(got["7"]["result"].(map[string]any)) != 0 || len(got["8"]["result"].(map[string]any)) != 0 {
		t.Fatalf("ping/setLevel: %v %v", got["7"], got["8"])
	}
	if got["9"]["error"].(map[string]any)["code"].(float64) != -32601 {
		t.Fatalf("resources/list: %v", got["9"])
	}
	if text, isErr := resultText(t, got["10"]); !isErr || !strings.Contains(text, "Invalid arguments") {
		t.Fatalf("schema: %q", text)
	}
	if got["<nil>"]["error"].(map[string]any)["code"].(float64) != -32700 {
		t.Fatalf("parse error: %v", got["<nil>"])
	}
}

func TestE2EServeStdioStateless(t *testing.T) {
	s, _ := printSandbox(t, fakemodel.Reply{Text: "stateless answer"})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	msgs, r := stdioLines(t, s, nil,
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+meta+`}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"q"},`+meta+`}}`,
		`{"jsonrpc":"2.0","id":4,"method":"ping","params":{`+meta+`}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"server/discover","params":{}}`,
	)
	if r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	got := byID(msgs)
	d := got["1"]["result"].(map[string]any)
	if d["resultType"] != "complete" || fmt.Sprint(d["supportedVersions"]) != "[2026-07-28 2025-11-25 2025-06-18 2025-03-26 2024-11-05]" {
		t.Fatalf("discover %v", d)
	}
	l := got["2"]["result"].(map[string]any)
	if l["resultType"] != "complete" || l["cacheScope"] != "private" || len(l["tools"].([]any)) < 2 {
		t.Fatalf("tools/list %v", l)
	}
	if text, isErr := resultText(t, got["3"]); isErr || text != "stateless answer" {
		t.Fatalf("submit %q", text)
	}
	if got["4"]["error"].(map[string]any)["code"].(float64) != -32601 {
		t.Fatalf("ping is gone from 2026-07-28: %v", got["4"])
	}
	e := got["5"]["error"].(map[string]any)
	if e["code"].(float64) != -32022 || e["data"].(map[string]any)["requested"] != "2027-01-01" {
		t.Fatalf("unsupported version %v", e)
	}
	if got["6"]["error"].(map[string]any)["code"].(float64) != -32602 {
		t.Fatalf("missing _meta %v", got["6"])
	}
}

// TestE2EServeOlderRevisions: `agent mcp serve` answers clients of
// 2024-11-05 and 2025-03-26 with their revision (docs/reference/mcp.md,
// "Protocol revisions"), leaves out what a revision lacks (tool titles
// before 2025-06-18, annotations before 2025-03-26), and takes a JSON-RPC
// batch only from a client of 2025-03-26, the one revision that has
// batches: one array line answers it, while other revisions get an error
// response with id null.
func TestE2EServeOlderRevisions(t *testing.T) {
	s, _ := printSandbox(t)
	cases := []struct {
		name        string
		version     string
		batch       bool // the batch is answered with an array
		title, anno bool // in tools/list
	}{
		{"2024-11-05", "2024-11-05", false, false, false},
		{"2025-03-26", "2025-03-26", true, false, true},
		{"2025-06-18", "2025-06-18", false, true, true},
		{"2025-11-25", "2025-11-25", false, true, true},
	}
	for _, tc := range cases {
		t.Run("stdio "+tc.name, func(t *testing.T) {
			r := s.run(strings.Join([]string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + tc.version + `","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`[{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`,
				`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
			}, "\n")+"\n", "mcp", "serve")
			if r.Code != 0 {
				t.Fatalf("%+v", r)
			}
			var objects []map[string]any
			var arrays [][]map[string]any
			for l := range strings.SplitSeq(strings.TrimSuffix(r.Stdout, "\n"), "\n") {
				var m map[string]any
				var a []map[string]any
				switch {
				case json.Unmarshal([]byte(l), &m) == nil:
					objects = append(objects, m)
				case json.Unmarshal([]byte(l), &a) == nil:
					arrays = append(arrays, a)
				default:
					t.Fatalf("stdout line is not an MCP frame: %q", l)
				}
			}
			got := byID(objects)
			if v := got["1"]["result"].(map[string]any)["protocolVersion"]; v != tc.version {
				t.Fatalf("initialize answered %v", v)
			}
			if tc.batch {
				if len(arrays) != 1 || len(arrays[0]) != 2 || fmt.Sprint(byID(arrays[0])["3"]["result"]) != "map[]" || byID(arrays[0])["2"]["result"] == nil {
					t.Fatalf("batch answer %v", arrays)
				}
			} else if e, ok := got["<nil>"]["error"].(map[string]any); len(arrays) != 0 || !ok || e["code"].(float64) != -32600 {
				t.Fatalf("a batch in a session of %s: %v %v", tc.version, got["<nil>"], arrays)
			}
			list, _ := json.Marshal(got["4"]["result"])
			if strings.Contains(string(list), `"title"`) != tc.title || strings.Contains(string(list), `"annotations"`) != tc.anno {
				t.Fatalf("tools/list of %s: %s", tc.version, list)
			}
		})
	}
	t.Run("loopback HTTP 2025-03-26", func(t *testing.T) {
		tokFile := filepath.Join(t.TempDir(), "serve.token")
		p := startServe(t, s, "--http-token-file", tokFile)
		port := p.waitLine(t, listenRe)[1]
		p.waitLine(t, regexp.MustCompile(regexp.QuoteMeta("bearer token in "+tokFile)))
		tok, _ := os.ReadFile(tokFile)
		url := "http://127.0.0.1:" + port + "/mcp"
		h := map[string]string{"Authorization": "Bearer " + string(tok)}
		resp, body := httpDo(t, mcpPost(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`, h))
		if resp.StatusCode != 200 || !strings.Contains(body, `"protocolVersion":"2025-03-26"`) {
			t.Fatalf("initialize: %d %s", resp.StatusCode, body)
		}
		// No MCP-Protocol-Version header: 2025-03-26 has none.
		h["Mcp-Session-Id"] = resp.Header.Get("Mcp-Session-Id")
		if resp, _ := httpDo(t, mcpPost(t, url, `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`, h)); resp.StatusCode != 202 {
			t.Fatalf("a batch of one notification: %d", resp.StatusCode)
		}
		resp, body = httpDo(t, mcpPost(t, url, `[{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`, h))
		var answers []map[string]any
		if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &answers) != nil || len(answers) != 2 || byID(answers)["2"]["result"] == nil {
			t.Fatalf("batch: %d %s", resp.StatusCode, body)
		}
		if code := p.stop(t, syscall.SIGTERM); code != 130 {
			t.Fatalf("exit %d; stderr:\n%s", code, p.stderrText())
		}
	})
}

// serveProc is a running `agent mcp serve` with its stderr read line by
// line.
type serveProc struct {
	cmd    *exec.Cmd
	lines  chan string
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan error
}

// stderrText returns what the server wrote to stderr so far.
func (p *serveProc) stderrText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

func startServe(t *testing.T, s *sandbox, args ...string) *serveProc {
	t.Helper()
	return startServeCmd(t, s, exec.Command(agentBinary(t), append([]string{"mcp", "serve"}, args...)...))
}

// startServeLimited is startServe with the process's descriptors limited
// to nofile (soft and hard, so the runtime cannot raise it).
func startServeLimited(t *testing.T, s *sandbox, nofile int, args ...string) *serveProc {
	t.Helper()
	script := fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, nofile)
	return startServeCmd(t, s, exec.Command("/bin/sh", append([]string{"-c", script, agentBinary(t), "mcp", "serve"}, args...)...))
}

func startServeCmd(t *testing.T, s *sandbox, cmd *exec.Cmd) *serveProc {
	t.Helper()
	cmd.Dir = s.Work
	cmd.Env = append([]string{"HOME=" + s.Home, "PATH=" + os.Getenv("PATH"), "TERM=dumb"}, s.Env...)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, lines: make(chan string, 64), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			p.mu.Lock()
			p.stderr.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		close(p.lines)
	}()
	go func() {
		err := cmd.Wait()
		pw.Close()
		if stdout.Len() > 0 {
			err = fmt.Errorf("stdout is not empty in HTTP mode: %q", stdout.String())
		}
		p.done <- err
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
	})
	return p
}

// waitLine returns the first stderr line matching re.
func (p *serveProc) waitLine(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("serve ended before printing %v; stderr:\n%s", re, p.stderrText())
			}
			if m := re.FindStringSubmatch(l); m != nil {
				return m
			}
		case <-timeout:
			t.Fatalf("no line %v", re)
		}
	}
}

func (p *serveProc) stop(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	p.cmd.Process.Signal(sig)
	select {
	case err := <-p.done:
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				return ee.ExitCode()
			}
			t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not exit")
	}
	return -1
}

var listenRe = regexp.MustCompile(`listening on http://127\.0\.0\.1:(\d+)/mcp`)

func httpDo(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func mcpPost(t *testing.T, url, body string, hdr map[string]string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	return req
}

func TestE2EServeLoopbackHTTP(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			s, _ := printSandbox(t, fakemodel.Reply{Text: "http answer"})
			tokFile := filepath.Join(t.TempDir(), "serve.token")
			p := startServe(t, s, "--http-token-file", tokFile)
			port := p.waitLine(t, listenRe)[1]
			p.waitLine(t, regexp.MustCompile(regexp.QuoteMeta("bearer token in "+tokFile)))
			st, err := os.Stat(tokFile)
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("token file %v %v", st, err)
			}
			tokBytes, _ := os.ReadFile(tokFile)
			token := string(tokBytes)
			if raw, err := base64.RawURLEncoding.DecodeString(token); err != nil || len(raw) != 32 {
				t.Fatalf("token is not 32 bytes of base64url: %q", token)
			}
			if strings.Contains(p.stderrText(), token) {
				t.Fatal("the token was printed")
			}
			url := "http://127.0.0.1:" + port + "/mcp"
			auth := "Bearer " + token
			checks := []struct {
				name   string
				req    *http.Request
				status int
			}{
				{"no token", mcpPost(t, url, initLine, nil), 401},
				{"wrong token", mcpPost(t, url, initLine, map[string]string{"Authorization": "Bearer " + strings.Repeat("A", len(token))}), 401},
				{"basic scheme", mcpPost(t, url, initLine, map[string]string{"Authorization": "Basic " + token}), 401},
				{"foreign Host", mcpPost(t, url, initLine, map[string]string{"Authorization": auth, "Host": "evil.example:" + port}), 403},
				{"Host on another port", mcpPost(t, url, initLine, map[string]string{"Authorization": auth, "Host": "127.0.0.1:1"}), 403},
				{"foreign Origin", mcpPost(t, url, initLine, map[string]string{"Authorization": auth, "Origin": "http://evil.example"}), 403},
				{"https Origin", mcpPost(t, url, initLine, map[string]string{"Authorization": auth, "Origin": "https://127.0.0.1:" + port}), 403},
				{"other path", mcpPost(t, "http://127.0.0.1:"+port+"/other", initLine, map[string]string{"Authorization": auth}), 404},
				{"body over 1 MiB", mcpPost(t, url, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`+strings.Repeat("a", 1<<20)+`"}}`, map[string]string{"Authorization": auth}), 413},
				{"not JSON", mcpPost(t, url, "{", map[string]string{"Authorization": auth}), 400},
				{"no session", mcpPost(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"Authorization": auth}), 400},
				{"unknown session", mcpPost(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"Authorization": auth, "Mcp-Session-Id": "gone"}), 404},
				{"localhost Host and Origin", mcpPost(t, url, initLine, map[string]string{"Authorization": auth, "Host": "localhost:" + port, "Origin": "http://localhost:" + port}), 200},
			}
			for _, c := range checks {
				resp, body := httpDo(t, c.req)
				if resp.StatusCode != c.status {
					t.Errorf("%s: %d, want %d (%s)", c.name, resp.StatusCode, c.status, body)
				}
				if c.status == 401 && (resp.Header.Get("WWW-Authenticate") != "Bearer" || body != "") {
					t.Errorf("%s: challenge %q body %q", c.name, resp.Header.Get("WWW-Authenticate"), body)
				}
			}
			// A body too large is refused from its Content-Length before it
			// is read, and an unauthenticated one before anything is read:
			// a wrong token with a huge declared body still gets 401.
			big := mcpPost(t, url, strings.Repeat(" ", 2<<20), nil)
			if resp, _ := httpDo(t, big); resp.StatusCode != 401 {
				t.Errorf("unauthenticated large body: %d", resp.StatusCode)
			}

			// A session.
			resp, body := httpDo(t, mcpPost(t, url, initLine, map[string]string{"Authorization": auth}))
			sid := resp.Header.Get("Mcp-Session-Id")
			if resp.StatusCode != 200 || sid == "" || !strings.Contains(body, `"protocolVersion":"2025-11-25"`) {
				t.Fatalf("initialize: %d %q %s", resp.StatusCode, sid, body)
			}
			h := map[string]string{"Authorization": auth, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
			if resp, _ := httpDo(t, mcpPost(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)); resp.StatusCode != 202 {
				t.Fatalf("initialized: %d", resp.StatusCode)
			}
			if resp, body := httpDo(t, mcpPost(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, h)); resp.StatusCode != 200 || !strings.Contains(body, "agent_submit") {
				t.Fatalf("tools/list: %d %s", resp.StatusCode, body)
			}
			resp, body = httpDo(t, mcpPost(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"hi"}}}`, h))
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || !strings.Contains(body, `http answer`) {
				t.Fatalf("tools/call: %d %s", resp.StatusCode, body)
			}
			// Another session revision the server speaks is taken (the
			// session's own decides); one it does not speak is refused.
			h["MCP-Protocol-Version"] = "2025-06-18"
			if resp, _ := httpDo(t, mcpPost(t, url, `{"jsonrpc":"2.0","id":4,"method":"ping"}`, h)); resp.StatusCode != 200 {
				t.Fatalf("another session revision in the header: %d", resp.StatusCode)
			}
			h["MCP-Protocol-Version"] = "2099-01-01"
			if resp, _ := httpDo(t, mcpPost(t, url, `{"jsonrpc":"2.0","id":4,"method":"ping"}`, h)); resp.StatusCode != 400 {
				t.Fatalf("a revision the server does not speak in the header: %d", resp.StatusCode)
			}
			del, _ := http.NewRequest(http.MethodDelete, url, nil)
			del.Header.Set("Authorization", auth)
			del.Header.Set("Mcp-Session-Id", sid)
			if resp, _ := httpDo(t, del); resp.StatusCode != 204 {
				t.Fatalf("DELETE: %d", resp.StatusCode)
			}
			h["MCP-Protocol-Version"] = "2025-11-25"
			if resp, _ := httpDo(t, mcpPost(t, url, `{"jsonrpc":"2.0","id":5,"method":"ping"}`, h)); resp.StatusCode != 404 {
				t.Fatalf("ended session: %d", resp.StatusCode)
			}
			get, _ := http.NewRequest(http.MethodGet, url, nil)
			get.Header.Set("Authorization", auth)
			if resp, _ := httpDo(t, get); resp.StatusCode != 405 {
				t.Fatalf("GET: %d", resp.StatusCode)
			}
			// The stateless revision on the same endpoint.
			meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
			sh := map[string]string{"Authorization": auth, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "agent_submit"}
			call := `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"x"},` + meta + `}}`
			sh["Mcp-Name"] = "Read"
			if resp, body := httpDo(t, mcpPost(t, url, call, sh)); resp.StatusCode != 400 || !strings.Contains(body, "-32020") {
				t.Fatalf("Mcp-Name mismatch: %d %s", resp.StatusCode, body)
			}
			sh["Mcp-Method"] = "unknown/method"
			if resp, body := httpDo(t, mcpPost(t, url, `{"jsonrpc":"2.0","id":7,"method":"unknown/method","params":{`+meta+`}}`, sh)); resp.StatusCode != 404 || !strings.Contains(body, "-32601") {
				t.Fatalf("unknown method: %d %s", resp.StatusCode, body)
			}

			if code := p.stop(t, sig); code != 130 {
				t.Fatalf("exit %d after %v; stderr:\n%s", code, sig, p.stderrText())
			}
			if _, err := os.Stat(tokFile); !os.IsNotExist(err) {
				t.Fatalf("token file left behind after %v: %v", sig, err)
			}
		})
	}
}

func TestE2EServeLoopbackPortInUse(t *testing.T) {
	s, _ := printSandbox(t)
	ln := httptest.NewServer(http.NotFoundHandler())
	defer ln.Close()
	port := ln.URL[strings.LastIndex(ln.URL, ":")+1:]
	tokFile := filepath.Join(t.TempDir(), "t.token")
	r := s.run("", "mcp", "serve", "--http-token-file", tokFile, "--http-port", port)
	if r.Code != 1 || !strings.Contains(r.Stderr, "listening on 127.0.0.1:"+port) {
		t.Fatalf("%+v", r)
	}
	if _, err := os.Stat(tokFile); !os.IsNotExist(err) {
		t.Fatal("token file left behind")
	}
}

// ---- remote mode ----

// testIssuer is a loopback TLS authorization server with one ES256 key:
// RFC 8414 metadata and a JWKS. Its certificate goes to SSL_CERT_FILE so
// that the binary trusts it.
type testIssuer struct {
	srv  *httptest.Server
	key  *ecdsa.PrivateKey
	url  string
	cert string
}

func newTestIssuer(t *testing.T) *testIssuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is := &testIssuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server/tenant", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"issuer":%q,"jwks_uri":%q,"authorization_endpoint":%q,"token_endpoint":%q,"response_types_supported":["code"]}`,
			is.url, is.srv.URL+"/jwks", is.srv.URL+"/authorize", is.srv.URL+"/token")
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"keys": []any{josetest.PublicJWK(key, "k1", "ES256")}})
	})
	is.srv = httptest.NewUnstartedServer(mux)
	is.url = "https://" + is.srv.Listener.Addr().String() + "/tenant"
	is.srv.StartTLS()
	t.Cleanup(is.srv.Close)
	is.cert = filepath.Join(t.TempDir(), "issuer.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: is.srv.Certificate().Raw})
	if err := os.WriteFile(is.cert, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	return is
}

// mint signs an access token (RFC 9068) with claims changed by changes.
func (is *testIssuer) mint(t *testing.T, changes map[string]any) string {
	t.Helper()
	now := time.Now().Unix()
	claims := map[string]any{"iss": is.url, "sub": "alice", "aud": "https://mcp.example/team/mcp", "scope": "mcp.tools other",
		"iat": now - 5, "exp": now + 300, "jti": strconv.FormatInt(now, 10), "client_id": "c"}
	for k, v := range changes {
		if v == nil {
			delete(claims, k)
		} else {
			claims[k] = v
		}
	}
	return josetest.Sign(is.key, map[string]any{"alg": "ES256", "typ": "at+jwt", "kid": "k1"}, claims)
}

var remoteListenRe = regexp.MustCompile(`listening on 127\.0\.0\.1:(\d+) `)

func TestE2EServeRemote(t *testing.T) {
	is := newTestIssuer(t)
	s, _ := printSandbox(t, fakemodel.Reply{Text: "remote answer"})
	s.Env = append(s.Env, "SSL_CERT_FILE="+is.cert)
	p := startServe(t, s, "--http-public-url", "https://mcp.example/team/mcp", "--oauth-issuer", is.url,
		"--oauth-scopes", "mcp.tools", "--oauth-allowed-subjects", "alice,bob", "--trusted-proxy", "127.0.0.1")
	port := p.waitLine(t, remoteListenRe)[1]
	base := "http://127.0.0.1:" + port
	url := base + "/team/mcp"
	const host = "mcp.example"
	const metaURL = "https://mcp.example/.well-known/oauth-protected-resource/team/mcp"

	// Protected-resource metadata (RFC 9728), without a token.
	req, _ := http.NewRequest(http.MethodGet, base+"/.well-known/oauth-protected-resource/team/mcp", nil)
	req.Host = host
	resp, body := httpDo(t, req)
	var prm map[string]any
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &prm) != nil {
		t.Fatalf("metadata: %d %s", resp.StatusCode, body)
	}
	if prm["resource"] != "https://mcp.example/team/mcp" || fmt.Sprint(prm["authorization_servers"]) != "["+is.url+"]" ||
		fmt.Sprint(prm["scopes_supported"]) != "[mcp.tools]" || fmt.Sprint(prm["bearer_methods_supported"]) != "[header]" {
		t.Fatalf("metadata %v", prm)
	}

	good := is.mint(t, nil)
	cases := []struct {
		name      string
		hdr       map[string]string
		status    int
		challenge string
	}{
		{"no token", map[string]string{"X-Forwarded-For": "192.0.2.1"}, 401, `Bearer resource_metadata="` + metaURL + `"`},
		{"garbage token", map[string]string{"X-Forwarded-For": "192.0.2.1", "Authorization": "Bearer abc"}, 401, `Bearer error="invalid_token", resource_metadata="` + metaURL + `"`},
		{"expired", map[string]string{"X-Forwarded-For": "192.0.2.1", "Authorization": "Bearer " + is.mint(t, map[string]any{"exp": time.Now().Unix() - 3600})}, 401, `Bearer error="invalid_token", resource_metadata="` + metaURL + `"`},
		{"wrong audience", map[string]string{"X-Forwarded-For": "192.0.2.1", "Authorization": "Bearer " + is.mint(t, map[string]any{"aud": "https://mcp.example/other"})}, 401, `Bearer error="invalid_token", resource_metadata="` + metaURL + `"`},
		{"missing scope", map[string]string{"X-Forwarded-For": "192.0.2.1", "Authorization": "Bearer " + is.mint(t, map[string]any{"scope": "other"})}, 403, `Bearer error="insufficient_scope", scope="mcp.tools", resource_metadata="` + metaURL + `"`},
		{"subject not allowed", map[string]string{"X-Forwarded-For": "192.0.2.1", "Authorization": "Bearer " + is.mint(t, map[string]any{"sub": "mallory"})}, 403, ""},
		{"wrong Host", map[string]string{"X-Forwarded-For": "192.0.2.1", "Authorization": "Bearer " + good, "Host": "127.0.0.1:" + port}, 403, ""},
		{"good token", map[string]string{"X-Forwarded-For": "192.0.2.1", "Authorization": "Bearer " + good}, 200, ""},
		{"second subject shares the session", map[string]string{"Authorization": "Bearer " + is.mint(t, map[string]any{"sub": "bob"})}, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, ok := c.hdr["Host"]; !ok {
				c.hdr["Host"] = host
			}
			resp, body := httpDo(t, mcpPost(t, url, initLine, c.hdr))
			if resp.StatusCode != c.status || resp.Header.Get("WWW-Authenticate") != c.challenge {
				t.Errorf("%d %q, want %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), c.status, c.challenge)
			}
			if c.status != 200 && body != "" {
				t.Errorf("refusal with a body %q", body)
			}
		})
	}
	// A tools/call with a good token runs in the one shared session.
	resp, _ = httpDo(t, mcpPost(t, url, initLine, map[string]string{"Host": host, "Authorization": "Bearer " + good}))
	h := map[string]string{"Host": host, "Authorization": "Bearer " + good, "Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id")}
	if resp, body = httpDo(t, mcpPost(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"hi"}}}`, h)); resp.StatusCode != 200 || !strings.Contains(body, "remote answer") {
		t.Fatalf("call: %d %s", resp.StatusCode, body)
	}

	// The throttle: 192.0.2.1 (behind the trusted proxy) has 6 failures; 14
	// more reach 20, and the next failing request is 429 with Retry-After
	// in place of its 401; a good token from the same address is still
	// admitted (docs/reference/mcp.md, "Failure throttle"). Another address
	// is not affected.
	for i := 0; i < 14; i++ {
		resp, _ := httpDo(t, mcpPost(t, url, initLine, map[string]string{"Host": host, "X-Forwarded-For": "192.0.2.1"}))
		if resp.StatusCode != 401 {
			t.Fatalf("failure %d: %d", i, resp.StatusCode)
		}
	}
	resp, body = httpDo(t, mcpPost(t, url, initLine, map[string]string{"Host": host, "X-Forwarded-For": "192.0.2.1", "Authorization": "Bearer forged"}))
	if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != 429 || err != nil || ra < 1 || ra > 60 || body != "" {
		t.Fatalf("throttle: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if resp, _ = httpDo(t, mcpPost(t, url, initLine, map[string]string{"Host": host, "X-Forwarded-For": "192.0.2.1", "Authorization": "Bearer " + good})); resp.StatusCode != 200 {
		t.Fatalf("a valid token from a throttled address: %d", resp.StatusCode)
	}
	// A client-written hop in front of the proxy's does not change the
	// address counted.
	resp, _ = httpDo(t, mcpPost(t, url, initLine, map[string]string{"Host": host, "X-Forwarded-For": "203.0.113.9, 192.0.2.1"}))
	if resp.StatusCode != 429 {
		t.Fatalf("spoofed hop: %d", resp.StatusCode)
	}
	resp, _ = httpDo(t, mcpPost(t, url, initLine, map[string]string{"Host": host, "X-Forwarded-For": "192.0.2.2"}))
	if resp.StatusCode != 401 {
		t.Fatalf("another address: %d", resp.StatusCode)
	}
	if strings.Contains(p.stderrText(), good) {
		t.Fatal("a token reached stderr")
	}
	if code := p.stop(t, syscall.SIGTERM); code != 130 {
		t.Fatalf("exit %d", code)
	}
}

// TestE2EServeRemoteNoTrustedProxy: without --trusted-proxy, a forged
// X-Forwarded-For does not escape the throttle, and the throttle never
// refuses a valid token.
func TestE2EServeRemoteNoTrustedProxy(t *testing.T) {
	is := newTestIssuer(t)
	s, _ := printSandbox(t)
	s.Env = append(s.Env, "SSL_CERT_FILE="+is.cert)
	p := startServe(t, s, "--http-public-url", "https://mcp.example/team/mcp", "--oauth-issuer", is.url,
		"--oauth-scopes", "mcp.tools", "--oauth-allowed-subjects", "alice")
	port := p.waitLine(t, remoteListenRe)[1]
	url := "http://127.0.0.1:" + port + "/team/mcp"
	for i := 0; i < 20; i++ {
		resp, _ := httpDo(t, mcpPost(t, url, initLine, map[string]string{"Host": "mcp.example", "X-Forwarded-For": "198.51.100." + strconv.Itoa(i)}))
		if resp.StatusCode != 401 {
			t.Fatalf("failure %d: %d", i, resp.StatusCode)
		}
	}
	resp, _ := httpDo(t, mcpPost(t, url, initLine, map[string]string{"Host": "mcp.example", "X-Forwarded-For": "198.51.100.99"}))
	if resp.StatusCode != 429 {
		t.Fatalf("forged X-Forwarded-For escaped the throttle: %d", resp.StatusCode)
	}
	// Everybody shares the proxy's address here, and a valid client is
	// still served after the flood of failures (docs/reference/mcp.md,
	// "Failure throttle").
	resp, _ = httpDo(t, mcpPost(t, url, initLine, map[string]string{"Host": "mcp.example", "Authorization": "Bearer " + is.mint(t, nil)}))
	if resp.StatusCode != 200 {
		t.Fatalf("a valid client locked out by others' failures: %d", resp.StatusCode)
	}
}

// ---- benchmarks through the binary (docs/performance.md, "mcp serve (mcp, main)") ----
//
// Run: go test -run '^$' -bench Serve -benchtime 200x .

// benchServeSandbox is a trusted workspace with a file that Read may open
// (Read is inspection: it runs in the default mode).
func benchServeSandbox(b *testing.B) *sandbox {
	s := newSandbox(b)
	s.write("~/.agent/settings.json", `{"defaultModel": {"provider": "local", "model": "fake"}, "providers": {"local": {"baseURL": "http://127.0.0.1:9/v1"}}}`)
	s.write("small.txt", "one line\n")
	if r := s.run("", "trust", "--yes"); r.Code != 0 {
		b.Fatalf("trust: %+v", r)
	}
	return s
}

// BenchmarkServeInitialize measures, per op, a process start of
// `agent mcp serve` (stdio) up to the initialize response read back.
func BenchmarkServeInitialize(b *testing.B) {
	s := benchServeSandbox(b)
	bin := agentBinary(b)
	var total time.Duration
	for b.Loop() {
		cmd := exec.Command(bin, "mcp", "serve")
		cmd.Dir = s.Work
		cmd.Env = []string{"HOME=" + s.Home, "PATH=" + os.Getenv("PATH")}
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		io.WriteString(in, initLine+"\n")
		line, err := bufio.NewReader(out).ReadString('\n')
		total += time.Since(start)
		if err != nil || !strings.Contains(line, `"protocolVersion"`) {
			b.Fatalf("%q %v", line, err)
		}
		in.Close()
		cmd.Wait()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-to-initialize")
}

const benchCall = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"Read","arguments":{"file_path":"small.txt"}}}`

// BenchmarkServeCallStdio: one tools/call (Read of a small file) round
// trip over stdio.
func BenchmarkServeCallStdio(b *testing.B) {
	s := benchServeSandbox(b)
	cmd := exec.Command(agentBinary(b), "mcp", "serve")
	cmd.Dir = s.Work
	cmd.Env = []string{"HOME=" + s.Home, "PATH=" + os.Getenv("PATH")}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Wait()
	defer in.Close()
	r := bufio.NewReader(out)
	io.WriteString(in, initLine+"\n")
	r.ReadString('\n')
	i := 1
	for b.Loop() {
		i++
		fmt.Fprintf(in, benchCall+"\n", i)
		line, err := r.ReadString('\n')
		if err != nil || !strings.Contains(line, "one line") {
			b.Fatalf("%q %v", line, err)
		}
	}
}

// startBenchHTTP starts a loopback server and a session; it returns the
// endpoint, the headers of the session, and the server's pid.
func startBenchHTTP(b *testing.B, s *sandbox) (string, map[string]string, int) {
	tokFile := filepath.Join(b.TempDir(), "t.token")
	cmd := exec.Command(agentBinary(b), "mcp", "serve", "--http-token-file", tokFile)
	cmd.Dir = s.Work
	cmd.Env = []string{"HOME=" + s.Home, "PATH=" + os.Getenv("PATH")}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	var port string
	for sc.Scan() {
		if m := listenRe.FindStringSubmatch(sc.Text()); m != nil {
			port = m[1]
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	tok, err := os.ReadFile(tokFile)
	if err != nil || port == "" {
		b.Fatalf("no server: %v", err)
	}
	url := "http://127.0.0.1:" + port + "/mcp"
	h := map[string]string{"Authorization": "Bearer " + string(tok), "Accept": "application/json"}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initLine))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	h["Mcp-Session-Id"] = resp.Header.Get("Mcp-Session-Id")
	h["MCP-Protocol-Version"] = "2025-11-25"
	return url, h, cmd.Process.Pid
}

func benchHTTPCall(client *http.Client, url string, h map[string]string, id int) error {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(fmt.Sprintf(benchCall, id)))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || !bytes.Contains(body, []byte("one line")) {
		return fmt.Errorf("status %d %q %v", resp.StatusCode, body, err)
	}
	return nil
}

// BenchmarkServeCallHTTP: one tools/call round trip over loopback HTTP
// (JSON answer, kept-alive connection).
func BenchmarkServeCallHTTP(b *testing.B) {
	url, h, _ := startBenchHTTP(b, benchServeSandbox(b))
	client := &http.Client{}
	i := 1
	for b.Loop() {
		i++
		if err := benchHTTPCall(client, url, h, i); err != nil {
			b.Fatal(err)
		}
	}
}

// peakRSS reads the peak resident set (VmHWM) of a process, in MiB.
func peakRSS(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for l := range strings.SplitSeq(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kib, _ := strconv.Atoi(f[1])
			return float64(kib) / 1024
		}
	}
	return 0
}

// BenchmarkServeHTTP64Clients: 64 concurrent clients, each with its own
// connection, share b.N tools/call requests; any error fails the run; the
// server's peak RSS is reported.
func BenchmarkServeHTTP64Clients(b *testing.B) {
	url, h, pid := startBenchHTTP(b, benchServeSandbox(b))
	const clients = 64
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	b.ResetTimer()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			for {
				n := next.Add(1)
				if n > int64(b.N) {
					return
				}
				if err := benchHTTPCall(client, url, h, int(n)+1); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(peakRSS(pid), "server-peak-RSS-MiB")
}

// TestE2EServeSecondSignalRemovesTokenFile: a second Ctrl-C while the
// server is still shutting down (a turn holds it) exits at once, and the
// token file goes all the same (docs/design.md, "A token file is removed
// however the process ends").
func TestE2EServeSecondSignalRemovesTokenFile(t *testing.T) {
	s, srv := printSandbox(t, fakemodel.Reply{Text: "partial", Hang: true})
	p, url, h, tokFile := serveSessionHTTP(t, s)
	req := mcpPost(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"long"}}}`, h)
	failed := make(chan string, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			failed <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		failed <- fmt.Sprintf("%d %s", resp.StatusCode, b)
	}()
	select {
	case <-srv.Started():
	case f := <-failed:
		t.Fatalf("the call ended before the turn started: %s", f)
	case <-time.After(30 * time.Second):
		t.Fatal("the turn never started")
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(100 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGINT)
	err := <-p.done
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v", err)
	}
	if _, err := os.Stat(tokFile); !os.IsNotExist(err) {
		t.Fatalf("the token file is still there after a second signal: %v", err)
	}
}

// TestE2EServeProgress: an agent_submit that asks for progress hears of
// the turn's steps as notifications/progress before its answer, on stdio
// and over loopback HTTP; one that does not ask hears nothing.
func TestE2EServeProgress(t *testing.T) {
	s, srv := printSandbox(t,
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Read", Args: `{"file_path":"notes.txt"}`}}},
		fakemodel.Reply{Text: "read it"},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c2", Name: "Read", Args: `{"file_path":"notes.txt"}`}}},
		fakemodel.Reply{Text: "over http"})
	s.write("notes.txt", "some notes\n")
	msgs, r := stdioLines(t, s, nil, initLine,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"read the notes"},"_meta":{"progressToken":"p-1"}}}`)
	if r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	var steps []string
	answered := -1
	for i, m := range msgs {
		if m["method"] == "notifications/progress" {
			p := m["params"].(map[string]any)
			if p["progressToken"] != "p-1" {
				t.Fatalf("progress for another token: %v", m)
			}
			steps = append(steps, p["message"].(string))
			if answered >= 0 {
				t.Fatalf("progress after the answer: %v", msgs)
			}
		}
		if fmt.Sprint(m["id"]) == "2" {
			answered = i
		}
	}
	if strings.Join(steps, "|") != "the turn started|running Read" {
		t.Fatalf("steps %q", steps)
	}
	if text, _ := resultText(t, byID(msgs)["2"]); text != "read it" {
		t.Fatalf("%q", text)
	}
	// Over loopback HTTP, in the SSE answer.
	p, url, h, _ := serveSessionHTTP(t, s)
	_, body := httpDo(t, mcpPost(t, url, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"again"},"_meta":{"progressToken":7}}}`, h))
	i, j := strings.Index(body, `"notifications/progress"`), strings.Index(body, `"over http"`)
	if i < 0 || j < 0 || i > j || !strings.Contains(body, `"running Read"`) || !strings.Contains(body, `"progressToken":7`) {
		t.Fatalf("SSE answer: %s", body)
	}
	p.stop(t, syscall.SIGTERM)

	// Without a progressToken, no progress.
	srv.Add(fakemodel.Reply{Text: "plain"})
	msgs, _ = stdioLines(t, s, nil, initLine,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"no progress"}}}`)
	for _, m := range msgs {
		if m["method"] == "notifications/progress" {
			t.Fatalf("progress nobody asked for: %v", m)
		}
	}

}
