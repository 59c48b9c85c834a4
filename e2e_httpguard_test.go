package main

// The HTTP endpoints under hostile clients, through the binary: a refusal
// goes out without waiting for a body that never comes; a flood of failed
// requests never locks out a valid client; a flood of idle connections
// leaves room for clients that send requests (internal/httpguard;
// docs/design.md, "Connection limits and refusals in front of every HTTP
// server").

import (
	"bufio"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"agent/internal/fakemodel"
)

// rawRequest writes head (a request head without its final blank line) on
// a new connection, never sends the body it may declare, and returns the
// status. The hang guard (5 s) is below every server's read timeout (10 s
// for the sign-in callback, 30 s for events, 60 s for mcp serve), so a
// refusal that waits for the body fails the test.
func rawRequest(t *testing.T, addr, head string) (status int, closes bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, strings.ReplaceAll(head, "\n", "\r\n")+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer without the body: %v\n%s", err, head)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Close
}

// shortRuntimeDir points XDG_RUNTIME_DIR at a short folder: a control
// socket's path under a long test name would pass the socket path limit.
func shortRuntimeDir(t testing.TB, s *sandbox) {
	dir, err := os.MkdirTemp("", "rt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s.Env = append(s.Env, "XDG_RUNTIME_DIR="+dir)
}

// loopbackServe starts `agent mcp serve --http-token-file` and returns its
// address and token; nofile > 0 limits its descriptors.
func loopbackServe(t *testing.T, s *sandbox, nofile int) (*serveProc, string, string) {
	t.Helper()
	tokFile := filepath.Join(t.TempDir(), "serve.token")
	var p *serveProc
	if nofile > 0 {
		p = startServeLimited(t, s, nofile, "--http-token-file", tokFile)
	} else {
		p = startServe(t, s, "--http-token-file", tokFile)
	}
	port := p.waitLine(t, listenRe)[1]
	p.waitLine(t, regexp.MustCompile(regexp.QuoteMeta("bearer token in "+tokFile)))
	tok, err := os.ReadFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	return p, "127.0.0.1:" + port, string(tok)
}

func TestE2ERefusalsGoOutWithoutReadingTheBody(t *testing.T) {
	t.Run("loopback mcp serve", func(t *testing.T) {
		s, _ := printSandbox(t)
		_, addr, tok := loopbackServe(t, s, 0)
		cases := []struct {
			name, head string
			status     int
		}{
			{"no token", "POST /mcp HTTP/1.1\nHost: " + addr + "\nContent-Type: application/json\nContent-Length: 100000", 401},
			{"wrong token", "POST /mcp HTTP/1.1\nHost: " + addr + "\nAuthorization: Bearer " + strings.Repeat("x", 43) + "\nContent-Length: 100000", 401},
			{"wrong Host", "POST /mcp HTTP/1.1\nHost: evil.example\nAuthorization: Bearer " + tok + "\nContent-Length: 100000", 403},
			{"wrong Origin", "POST /mcp HTTP/1.1\nHost: " + addr + "\nOrigin: http://evil.example\nContent-Length: 100000", 403},
			{"another path", "POST /other HTTP/1.1\nHost: " + addr + "\nContent-Length: 100000", 404},
			{"declared over 1 MiB", "POST /mcp HTTP/1.1\nHost: " + addr + "\nAuthorization: Bearer " + tok + "\nContent-Type: application/json\nContent-Length: 2000000", 413},
			{"no token, chunked", "POST /mcp HTTP/1.1\nHost: " + addr + "\nTransfer-Encoding: chunked", 401},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if got, closes := rawRequest(t, addr, c.head); got != c.status || !closes {
					t.Errorf("%d (closes %v), want %d and Connection: close", got, closes, c.status)
				}
			})
		}
	})
	t.Run("remote mcp serve", func(t *testing.T) {
		is := newTestIssuer(t)
		s, _ := printSandbox(t)
		s.Env = append(s.Env, "SSL_CERT_FILE="+is.cert)
		p := startServe(t, s, "--http-public-url", "https://mcp.example/team/mcp", "--oauth-issuer", is.url,
			"--oauth-scopes", "mcp.tools", "--oauth-allowed-subjects", "alice")
		addr := "127.0.0.1:" + p.waitLine(t, remoteListenRe)[1]
		cases := []struct {
			name, head string
			status     int
		}{
			{"no token", "POST /team/mcp HTTP/1.1\nHost: mcp.example\nContent-Length: 100000", 401},
			{"a subject not allowed", "POST /team/mcp HTTP/1.1\nHost: mcp.example\nAuthorization: Bearer " + is.mint(t, map[string]any{"sub": "mallory"}) + "\nContent-Length: 100000", 403},
			{"wrong Host", "POST /team/mcp HTTP/1.1\nHost: evil.example\nContent-Length: 100000", 403},
			{"POST to the metadata", "POST /.well-known/oauth-protected-resource/team/mcp HTTP/1.1\nHost: mcp.example\nContent-Length: 100000", 405},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if got, closes := rawRequest(t, addr, c.head); got != c.status || !closes {
					t.Errorf("%d (closes %v), want %d and Connection: close", got, closes, c.status)
				}
			})
		}
	})
	t.Run("external events", func(t *testing.T) {
		s, _ := printSandbox(t)
		shortRuntimeDir(t, s)
		iss, grant, resource := eventGrant(t, s)
		port := freePort(t)
		bgStart(t, s, "--external-event-grant", grant, "--external-event-port", fmt.Sprint(port))
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		cases := []struct {
			name, head string
			status     int
		}{
			{"declared over 16 KiB", "POST /hooks/events/ci HTTP/1.1\nHost: x\nContent-Length: 100000", 413},
			{"unknown grant", "POST /hooks/events/nope HTTP/1.1\nHost: x\nContent-Length: 10000", 404},
			{"no token", "POST /hooks/events/ci HTTP/1.1\nHost: x\nContent-Length: 10000", 401},
			{"forged token", "POST /hooks/events/ci HTTP/1.1\nHost: x\nAuthorization: Bearer a.b.c\nContent-Length: 10000", 401},
			{"wrong scope", "POST /hooks/events/ci HTTP/1.1\nHost: x\nAuthorization: Bearer " + iss.token(t, resource, "deploy-bot", "events:read") + "\nContent-Length: 10000", 403},
			{"no token, chunked", "POST /hooks/events/ci HTTP/1.1\nHost: x\nTransfer-Encoding: chunked", 401},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if got, _ := rawRequest(t, addr, c.head); got != c.status {
					t.Errorf("%d, want %d", got, c.status)
				}
			})
		}
	})
}

// TestE2ECallbackRefusesWithoutReadingTheBody: while `agent mcp login`
// waits for the browser, a stray request to its loopback callback listener
// that declares a body and never sends it is answered at once; the
// browser's redirect still completes the sign-in.
func TestE2ECallbackRefusesWithoutReadingTheBody(t *testing.T) {
	a := newE2EAS(t)
	s := loginSandbox(t, a)
	_, stdin, authURL, stdout, stderr, wait := startLogin(t, s, "remote")
	defer stdin.Close()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	redirect, err := url.Parse(u.Query().Get("redirect_uri"))
	if err != nil || redirect.Hostname() != "127.0.0.1" {
		t.Fatalf("redirect_uri %q", u.Query().Get("redirect_uri"))
	}
	for _, head := range []string{
		"POST /callback HTTP/1.1\nHost: " + redirect.Host + "\nContent-Length: 100000",
		"POST /elsewhere HTTP/1.1\nHost: " + redirect.Host + "\nTransfer-Encoding: chunked",
	} {
		if got, closes := rawRequest(t, redirect.Host, head); got != 404 || !closes {
			t.Errorf("%d (closes %v) to %q, want 404 and Connection: close", got, closes, head)
		}
	}
	resp, err := http.Get(browser(t, a, authURL))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if code := wait(); code != 0 || !strings.Contains(stdout.String(), "Signed in to MCP server remote") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
}

// TestE2EFailuresNeverLockOutAValidClient: behind one address (a tunnel
// without a trusted proxy), a flood of forged tokens gets 429, and a
// valid token is admitted all the same.
func TestE2EFailuresNeverLockOutAValidClient(t *testing.T) {
	s, _ := printSandbox(t, fakemodel.Reply{Text: "ok"}, fakemodel.Reply{Text: "ok"})
	shortRuntimeDir(t, s)
	iss, grant, resource := eventGrant(t, s)
	port := freePort(t)
	bgStart(t, s, "--external-event-grant", grant, "--external-event-port", fmt.Sprint(port))
	url := fmt.Sprintf("http://127.0.0.1:%d/hooks/events/ci", port)
	ev := `{"kind": "message", "conversationId": "c", "content": "hello"}`
	post := func(tok string) int {
		req, _ := http.NewRequest("POST", url, strings.NewReader(ev))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, body := httpDo(t, req)
		if body != "" && resp.StatusCode != 202 {
			t.Fatalf("a refusal with a body: %q", body)
		}
		return resp.StatusCode
	}
	forged := iss.token(t, resource, "deploy-bot", "events:write")
	forged = forged[:len(forged)-4] + "AAAA"
	codes := map[int]int{}
	for range 40 {
		codes[post(forged)]++
	}
	// Twenty failures fill the window; the rest are more than 20: 429.
	if codes[401] != 20 || codes[429] != 20 {
		t.Fatalf("forged tokens: %v, want 20 refused and 20 throttled", codes)
	}
	for range 2 {
		if got := post(iss.token(t, resource, "deploy-bot", "events:write")); got != 202 {
			t.Fatalf("a valid token after the flood: %d", got)
		}
	}
}

// TestE2EIdleConnectionFloodLeavesRoomForClients: far more idle
// connections than the server has descriptors (1024 here), and a client
// that sends a request is answered each time: the server keeps at most its
// limit open (512 for loopback `mcp serve`, 256 for the event endpoint),
// closing idle ones to make room (BenchmarkServeIdleFlood and
// BenchmarkEventsIdleFlood measure memory under 20 000).
func TestE2EIdleConnectionFloodLeavesRoomForClients(t *testing.T) {
	cases := []struct {
		name string
		// start starts the server with 1024 descriptors and returns its
		// address and a valid request for each round.
		start func(t *testing.T) (addr string, valid func(round int) *http.Request)
		want  int
	}{
		{"loopback mcp serve", func(t *testing.T) (string, func(int) *http.Request) {
			s, _ := printSandbox(t)
			_, addr, tok := loopbackServe(t, s, 1024)
			return addr, func(int) *http.Request {
				return mcpPost(t, "http://"+addr+"/mcp", initLine, map[string]string{"Authorization": "Bearer " + tok})
			}
		}, 200},
		{"external events", func(t *testing.T) (string, func(int) *http.Request) {
			s, _ := printSandbox(t)
			shortRuntimeDir(t, s)
			iss, grant, resource := eventGrant(t, s)
			port := freePort(t)
			s.NoFile = 1024
			bgStart(t, s, "--external-event-grant", grant, "--external-event-port", fmt.Sprint(port))
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			return addr, func(round int) *http.Request {
				ev := fmt.Sprintf(`{"kind": "message", "conversationId": "c", "content": "round %d"}`, round)
				req, _ := http.NewRequest("POST", "http://"+addr+"/hooks/events/ci", strings.NewReader(ev))
				req.Header.Set("Authorization", "Bearer "+iss.token(t, resource, "deploy-bot", "events:write"))
				return req
			}
		}, 202},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr, valid := tc.start(t)
			var idle []net.Conn
			t.Cleanup(func() {
				for _, c := range idle {
					c.Close()
				}
			})
			for round := range 8 {
				for range 400 {
					c, err := net.Dial("tcp", addr)
					if err != nil {
						t.Fatal(err)
					}
					idle = append(idle, c)
				}
				// Half the servers' 10 s header timeout: without the limit
				// the request waits in the listen queue until idle
				// connections expire; with it, idle ones make room at once.
				// A new connection each time, as a new client would open.
				client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
				resp, err := client.Do(valid(round))
				if err != nil {
					t.Fatalf("round %d, %d idle connections: %v", round, len(idle), err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.want {
					t.Fatalf("round %d, %d idle connections: %d %s", round, len(idle), resp.StatusCode, b)
				}
			}
			// The oldest idle connections were closed by the server to
			// make room, not by its header timeout.
			idle[0].SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := idle[0].Read(make([]byte, 1)); err == nil {
				t.Fatal("the oldest idle connection is still open")
			}
		})
	}
}

// eventGrant writes the grant "ci" of a new loopback TLS issuer (trusted
// through SSL_CERT_FILE) and returns the issuer, the grant file and the
// grant's resource; its path on the endpoint is /hooks/events/ci.
func eventGrant(t testing.TB, s *sandbox) (*eventIssuer, string, string) {
	iss := newEventIssuer(t)
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: iss.srv.Certificate().Raw})
	s.Env = append(s.Env, "SSL_CERT_FILE="+s.write(filepath.Join(t.TempDir(), "ca.pem"), string(cert)))
	const resource = "https://events.example.com/hooks/events/ci"
	grant := s.write("grants/ci.json", `{"grantId": "ci", "issuer": "`+iss.srv.URL+`", "resource": "`+resource+`", "subject": "deploy-bot", "scopes": ["events:write"]}`)
	return iss, grant, resource
}

// TestE2EIncompleteRequestHeadsTimeOut: a connection that never completes
// its request head is closed by the server after its header timeout (10 s;
// docs/design.md, "Connection limits and refusals in front of every HTTP
// server"), whatever room the listener has. The hang guard is twice that.
func TestE2EIncompleteRequestHeadsTimeOut(t *testing.T) {
	cases := []struct {
		name  string
		start func(t *testing.T) string // the server's address
	}{
		{"loopback mcp serve", func(t *testing.T) string {
			s, _ := printSandbox(t)
			_, addr, _ := loopbackServe(t, s, 0)
			return addr
		}},
		{"external events", func(t *testing.T) string {
			s, _ := printSandbox(t)
			shortRuntimeDir(t, s)
			_, grant, _ := eventGrant(t, s)
			port := freePort(t)
			bgStart(t, s, "--external-event-grant", grant, "--external-event-port", fmt.Sprint(port))
			return fmt.Sprintf("127.0.0.1:%d", port)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", tc.start(t))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-")
			c.SetReadDeadline(time.Now().Add(20 * time.Second))
			_, err = io.Copy(io.Discard, c) // ends when the server closes
			if err != nil {
				t.Fatalf("the connection was not closed: %v", err)
			}
		})
	}
}
