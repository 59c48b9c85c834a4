package interop

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agent/events"
)

// TestEventsInterop posts tokens minted by the npm jose library
// (interop/jose/events.mjs) to the external-event endpoint, which finds the
// issuer's keys through RFC 8414 discovery on a loopback TLS issuer. Each
// token must get its status; one good token posted many times at once is
// admitted exactly once.
func TestEventsInterop(t *testing.T) {
	requirePeer(t, "jose")
	node := nodeBinary(t, 20)

	var jwks atomic.Value
	jwks.Store([]byte(`{"keys":[]}`))
	var issuerURL string
	iss := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			json.NewEncoder(w).Encode(map[string]any{"issuer": issuerURL, "jwks_uri": issuerURL + "/jwks"})
		case "/jwks":
			w.Write(jwks.Load().([]byte))
		default:
			http.NotFound(w, r)
		}
	}))
	defer iss.Close()
	issuerURL = iss.URL

	const (
		resource = "https://agent.example/hooks/events/interop"
		subject  = "interop-sender"
		scope    = "events:write"
	)
	now := time.Now().Truncate(time.Second)
	in, _ := json.Marshal(map[string]any{"issuer": issuerURL, "resource": resource, "subject": subject, "scope": scope, "now": now.Unix()})
	var out struct {
		JWKS  json.RawMessage `json:"jwks"`
		Cases []struct {
			Name   string `json:"name"`
			Token  string `json:"token"`
			Body   string `json:"body"`
			Status int    `json:"status"`
		} `json:"cases"`
		Race string `json:"race"`
	}
	if err := json.Unmarshal(runNode(t, node, "jose/events.mjs", string(in)), &out); err != nil {
		t.Fatalf("script output: %v", err)
	}
	jwks.Store([]byte(out.JWKS))

	var mu sync.Mutex
	var turns []events.Event
	srv, err := events.New(events.Options{
		Grants: []events.Grant{{
			ID: "interop", Issuer: issuerURL, Resource: resource, Subject: subject, Scopes: []string{scope},
		}},
		Target: events.TargetFunc(func(_ context.Context, ev events.Event) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			turns = append(turns, ev)
			return "turn-" + string(rune('a'+len(turns))), nil
		}),
		HTTPClient: iss.Client(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ap, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(t.Context()) }()
	defer func() {
		srv.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	if err := srv.Refresh(t.Context()); err != nil {
		t.Fatalf("discovery on the TLS issuer: %v", err)
	}
	url := "http://" + ap.String() + "/hooks/events/interop"
	const good = `{"kind":"message","conversationId":"c-1","content":"hello from npm jose","claimedName":"Interop"}`
	post := func(token, body string) (int, string) {
		if body == "" {
			body = good
		}
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	admitted := 0
	for _, tc := range out.Cases {
		status, body := post(tc.Token, tc.Body)
		if status != tc.Status {
			t.Errorf("%s: status %d, want %d", tc.Name, status, tc.Status)
		}
		if status == 202 {
			admitted++
			var r map[string]string
			if err := json.Unmarshal([]byte(body), &r); err != nil || r["turnId"] == "" || len(r) != 1 {
				t.Errorf("%s: body %q", tc.Name, body)
			}
		} else if body != "" {
			t.Errorf("%s: refusal with a body %q", tc.Name, body)
		}
	}

	// All requests come from 127.0.0.1, and more than 20 failures from
	// one address within 60 s are throttled (429): with the refusals above
	// (13), eight copies stay within the limit.
	const copies = 8
	codes := make(chan int, copies)
	var wg sync.WaitGroup
	for range copies {
		wg.Go(func() { s, _ := post(out.Race, ""); codes <- s })
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	if count[202] != 1 || count[401] != copies-1 {
		t.Errorf("%d copies of one token at once: %v, want one 202", copies, count)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(turns) != admitted+1 {
		t.Errorf("%d turns for %d admitted events", len(turns), admitted+1)
	}
	for _, ev := range turns {
		if ev.GrantID != "interop" || ev.From() != "external:interop" || ev.ClaimedName != "Interop" || ev.Content != "hello from npm jose" {
			t.Errorf("turn %+v", ev)
		}
	}
	t.Logf("%d tokens from npm jose posted; %d admitted; race: %v", len(out.Cases), admitted, count)
}
