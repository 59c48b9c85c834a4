package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// An error the genai API sends after the stream began comes as a bare JSON
// object (no "data:"), here over several lines; print mode reports its
// status and message and exits 1. Nothing had reached the caller, so a 503
// UNAVAILABLE is retried first (docs/providers.md, "Deadlines and
// retries").
func TestE2EGenaiBareStreamErrorIsReported(t *testing.T) {
	exhausted := "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Partial\"}]}}]}\n\n" +
		"{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"Resource has been exhausted (e.g. check quota).\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n"
	unavailable := `{"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}` + "\n"
	api := newFakeAPI(t, unavailable, exhausted)
	s := trustedSandbox(t, `{"providers": {"genai": {"baseURL": "`+api.srv.URL+`", "model": "gemini-e2e"}}}`)
	s.Env = append(s.Env, "GENAI_API_KEY=g-e2e")
	r := s.run("", "-p", "--provider", "genai", "hi")
	if r.Code != 1 || !strings.Contains(r.Stderr, "RESOURCE_EXHAUSTED") || !strings.Contains(r.Stderr, "Resource has been exhausted (e.g. check quota).") ||
		strings.Contains(r.Stderr, "without a finish reason") {
		t.Fatalf("%+v", r)
	}
	if n := len(api.requests()); n != 2 {
		t.Errorf("%d requests, want 2 (the 503 before any text retried once)", n)
	}
}

// homeContains reports the files under the sandbox's HOME (session
// transcripts included) that contain s.
func homeContains(t *testing.T, s *sandbox, needle string) []string {
	t.Helper()
	var hits []string
	filepath.WalkDir(s.Home, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(needle)) {
				hits = append(hits, path)
			}
		}
		return nil
	})
	return hits
}

// turnErrors returns the errors of a transcript's turn records.
func turnErrors(transcript string) string {
	var out []string
	for line := range strings.SplitSeq(transcript, "\n") {
		var rec struct{ Type, Error string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Type == "turn" {
			out = append(out, rec.Error)
		}
	}
	return strings.Join(out, "\n")
}

// A key in the base URL's query or path is sent, never shown: a connection
// error names the URL masked on stderr and in the session transcript, and
// the endpoint path goes before the query (docs/providers.md, "Endpoint
// paths and masked URLs").
func TestE2EBaseURLCredentialsAreSentButNeverShown(t *testing.T) {
	cases := []struct {
		name, provider, base, shown string
	}{
		{"local, key in the query", "local", "http://127.0.0.1:1/v1?key=SECRET", "127.0.0.1:1/v1/chat/completions?key=***"},
		{"local, key in the path", "local", "http://127.0.0.1:1/v1/key-SECRET123", "127.0.0.1:1/v1/***/chat/completions"},
		{"genai, key in the query", "genai", "http://127.0.0.1:1?key=SECRET", "127.0.0.1:1/v1beta/models/m-e2e:streamGenerateContent?key=***&alt=***"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := trustedSandbox(t, `{}`)
			s.Env = append(s.Env, "GENAI_API_KEY=g-e2e")
			r := s.run("", "-p", "--provider", c.provider, "--model", "m-e2e", "--base-url", c.base, "hi")
			if r.Code != 1 || !strings.Contains(r.Stderr, "connection refused") || !strings.Contains(r.Stderr, c.shown) {
				t.Fatalf("want a connection error naming %s: %+v", c.shown, r)
			}
			if strings.Contains(r.Stdout+r.Stderr, "SECRET") {
				t.Fatalf("the secret is shown: %+v", r)
			}
			transcripts, _ := filepath.Glob(filepath.Join(s.Home, ".agent", "sessions", "*.jsonl"))
			if len(transcripts) != 1 || !strings.Contains(turnErrors(s.read(transcripts[0])), c.shown) {
				t.Fatalf("want the masked error in one session transcript: %v", transcripts)
			}
			if hits := homeContains(t, s, "SECRET"); len(hits) > 0 {
				t.Fatalf("the secret is recorded in %v", hits)
			}
		})
	}
	t.Run("the query reaches the server", func(t *testing.T) {
		api := newFakeAPI(t, sseEvents(
			`{"id":"c-1","choices":[{"index":0,"delta":{"role":"assistant","content":"answered"},"finish_reason":null}]}`,
			`{"id":"c-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)+"data: [DONE]\n\n")
		s := trustedSandbox(t, `{}`)
		r := s.run("", "-p", "--provider", "local", "--model", "m-e2e", "--base-url", api.srv.URL+"/v1?key=SECRET", "hi")
		if r.Code != 0 || r.Stdout != "answered\n" || strings.Contains(r.Stderr, "SECRET") {
			t.Fatalf("%+v", r)
		}
		if reqs := api.requests(); len(reqs) != 1 || reqs[0].Path != "/v1/chat/completions?key=SECRET" {
			t.Fatalf("requests %+v", reqs)
		}
		if hits := homeContains(t, s, "SECRET"); len(hits) > 0 {
			t.Fatalf("the secret is recorded in %v", hits)
		}
	})
}

// A provider that accepts the request and never answers fails the turn with
// a clear timeout and exit 1, after one retry (docs/providers.md,
// "Deadlines and retries"); the deadline is shortened through the
// provider's timeout setting (providers.<id>.timeout,
// docs/reference/settings.md, "providers").
func TestE2ESilentProviderFailsWithAClearTimeout(t *testing.T) {
	base, requests := countedAPI(t, func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // accepts, never answers; notices the client leaving
	})
	r := printLocal(t, base, 400)
	if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, "timed out: the server sent no response within 400ms") {
		t.Fatalf("%+v", r)
	}
	if n := requests(); n != 2 {
		t.Errorf("%d requests, want 2 (one retry after the deadline)", n)
	}
}

// countedAPI serves handle, after reading each request's body, and counts
// the requests.
func countedAPI(t *testing.T, handle http.HandlerFunc) (url string, requests func() int) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r) // the local provider's question about the context window
			return
		}
		n.Add(1)
		io.Copy(io.Discard, r.Body)
		handle(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() int { return int(n.Load()) }
}

// printLocal runs print mode against the local provider at base/v1, with
// its timeout setting in milliseconds (0: the default).
func printLocal(t *testing.T, base string, timeoutMs int) result {
	t.Helper()
	timeout := ""
	if timeoutMs > 0 {
		timeout = fmt.Sprintf(`, "timeout": %d`, timeoutMs)
	}
	s := trustedSandbox(t, `{"providers": {"local": {"baseURL": "`+base+`/v1"`+timeout+`}}}`)
	return s.run("", "-p", "--provider", "local", "--model", "m-e2e", "hi")
}

// A slow stream that keeps sending is never cut: SSE keep-alive comments
// reset the idle watchdog like events do, here for four times the
// provider's timeout before the answer comes (docs/providers.md,
// "Deadlines and retries").
func TestE2EKeepAlivesKeepASlowStreamAlive(t *testing.T) {
	base, requests := countedAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for range 16 {
			io.WriteString(w, ": keep-alive\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
		io.WriteString(w, sseEvents(
			`{"id":"c-1","choices":[{"index":0,"delta":{"role":"assistant","content":"answered"},"finish_reason":null}]}`,
			`{"id":"c-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)+"data: [DONE]\n\n")
	})
	if r := printLocal(t, base, 400); r.Code != 0 || r.Stdout != "answered\n" {
		t.Fatalf("%+v", r)
	}
	if n := requests(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// A Retry-After beyond what the client waits for (an overflowing number,
// a negative one, a date centuries ahead) ends the call with the server's
// rate-limit error; it is never read as "no wait" and retried at once
// (docs/providers.md, "Deadlines and retries").
func TestE2EAnAbsurdRetryAfterIsNotRetried(t *testing.T) {
	for _, value := range []string{"99999999999999999999999", "-1", "Fri, 31 Dec 9999 23:59:59 GMT"} {
		t.Run(value, func(t *testing.T) {
			base, requests := countedAPI(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", value)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, `{"error": {"message": "slow down", "type": "rate_limit_error"}}`)
			})
			if r := printLocal(t, base, 0); r.Code != 1 || !strings.Contains(r.Stderr, "slow down") {
				t.Fatalf("%+v", r)
			}
			if n := requests(); n != 1 {
				t.Errorf("%d requests, want 1 (the wait is longer than the client waits)", n)
			}
		})
	}
}
