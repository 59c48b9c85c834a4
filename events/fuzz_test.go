package events

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseGrant: the grant parser never panics; what it accepts meets the
// rules New enforces; what it refuses is a *GrantError whose message holds
// no string value of the file.
func FuzzParseGrant(f *testing.F) {
	f.Add([]byte(grantDoc(nil)))
	f.Add([]byte(grantDoc(map[string]any{"subject": nil, "client": "c", "algorithms": []string{"ES256"},
		"rate": []map[string]any{{"windowMs": 1000, "maxTurns": 1}}})))
	for _, tc := range grantCases {
		f.Add([]byte(tc.doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ParseGrant(data)
		if err != nil {
			var ge *GrantError
			if !errors.As(err, &ge) {
				t.Fatalf("%v is not a *GrantError", err)
			}
			if !utf8.ValidString(err.Error()) || strings.ContainsAny(err.Error(), "\x1b\r") {
				t.Fatalf("message %q is not plain text", err)
			}
			return
		}
		if err := checkGrant(&g); err != nil {
			t.Fatalf("ParseGrant accepted what New refuses: %v", err)
		}
	})
}

// FuzzParseEvent: the body decoder never panics, and what it accepts has
// exactly the shape of docs/reference/events.md, "The endpoint".
func FuzzParseEvent(f *testing.F) {
	for _, tc := range eventCases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := ParseEvent(body)
		if err != nil {
			if !errors.Is(err, ErrMalformedEvent) {
				t.Fatalf("error %v", err)
			}
			return
		}
		if ev.Content == "" || ev.ConversationID == "" || ev.GrantID != "" ||
			!utf8.ValidString(ev.Content+ev.ConversationID+ev.ClaimedName) || !bytes.Contains(body, []byte(`"message"`)) {
			t.Fatalf("accepted %q as %+v", body, ev)
		}
	})
}

// FuzzRequest: whole requests (method, path, headers, body) through the
// endpoint. Every answer is one of the statuses of
// docs/reference/events.md, "Order of checks" (or 405 and 200 for
// metadata); refusals have empty bodies; nothing is admitted without a
// valid token, which the fuzzer cannot forge.
func FuzzRequest(f *testing.F) {
	f.Add("POST", testPath, "Bearer x.y.z", "", goodBody)
	f.Add("GET", "/.well-known/oauth-protected-resource"+testPath, "", "", "")
	f.Add("POST", testPath, "Bearer ", "10.0.0.1, 198.51.100.1", "{}")
	f.Add("PUT", "/events/x", "Basic YTpi", "not-an-ip", strings.Repeat("x", 100))
	f.Add("POST", testPath+"?a=b", "bearer eyJhbGciOiJFUzI1NiJ9.e30.AAAA", "", goodBody)
	f.Fuzz(func(t *testing.T, method, path, auth, xff, body string) {
		e := newEnv(t, func(o *Options) { o.TrustedProxies = trustedLoopback })
		r, err := http.NewRequest(method, "http://127.0.0.1:1"+path, strings.NewReader(body))
		if err != nil || !strings.HasPrefix(path, "/") {
			return
		}
		r.RemoteAddr = "127.0.0.1:1234"
		r.Header.Set("Authorization", auth)
		r.Header.Set("X-Forwarded-For", xff)
		w := httptest.NewRecorder()
		e.srv.ServeHTTP(w, r)
		switch w.Code {
		case 200:
			if !strings.HasPrefix(r.URL.EscapedPath(), "/.well-known/") {
				t.Fatalf("200 for %q", path)
			}
		case 400, 401, 403, 404, 405, 413, 429, 503:
			if w.Body.Len() != 0 {
				t.Fatalf("%d with a body", w.Code)
			}
		default:
			t.Fatalf("status %d", w.Code)
		}
		if e.target.count() != 0 {
			t.Fatal("admitted an event without a valid token")
		}
	})
}

var trustedLoopback = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
