package builtin

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"agent/providers"
	"agent/providers/chatcompat"
)

func hi() *providers.Request {
	return &providers.Request{Model: "m-1", Messages: []providers.Message{{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "hi"}}}}}
}

// Every API surface appends its endpoint path to the base URL's path, not
// after its query, and sends the query as it was given (a gateway may take
// its key there).
func TestEveryProviderJoinsItsPathBeforeTheBaseURLsQuery(t *testing.T) {
	var mu sync.Mutex
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		got = r.URL.RequestURI()
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"refused for the test"}}`)
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	cases := []struct {
		name, id, base, opts, want string
	}{
		{"local", "local", "/v1?key=SECRET", ``, "/v1/chat/completions?key=SECRET"},
		{"local, slash before the query", "local", "/v1/?key=SECRET&b=2", ``, "/v1/chat/completions?key=SECRET&b=2"},
		{"reasoning", "reasoning", "/?key=SECRET", ``, "/chat/completions?key=SECRET"},
		{"regional", "regional", "/compatible-mode/v1?key=SECRET", ``, "/compatible-mode/v1/chat/completions?key=SECRET"},
		{"responses on chat completions", "responses", "/v1?key=SECRET", ``, "/v1/chat/completions?key=SECRET"},
		{"responses on responses", "responses", "/v1?key=SECRET", `{"apiSurface":"responses"}`, "/v1/responses?key=SECRET"},
		{"messages", "messages", "/root?key=SECRET", ``, "/root/v1/messages?key=SECRET"},
		{"genai, the API's query after the base URL's", "genai", "/?key=SECRET", ``, "/v1beta/models/m-1:streamGenerateContent?key=SECRET&alt=sse"},
		{"a fragment is not sent", "local", "/v1#frag", ``, "/v1/chat/completions"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{APIKey: "k", BaseURL: srv.URL + c.base, Model: "m-1", Client: client}
			if c.opts != "" {
				cfg.Options = options(t, c.opts)
			}
			_, err := construct(t, c.id, cfg).Chat(context.Background(), hi())
			if !errors.Is(err, providers.ErrInvalidRequest) {
				t.Fatalf("want the server's 400, got %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if got != c.want {
				t.Fatalf("request %s, want %s", got, c.want)
			}
		})
	}
}

// refusing is a transport that fails every request as a closed port does;
// http.Client wraps its error in an *url.Error that quotes the URL.
type refusing struct{}

func (refusing) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
}

// recordingLogger keeps the URL of every payload summary.
type recordingLogger struct {
	mu   sync.Mutex
	urls []string
}

func (l *recordingLogger) LogPayload(_ context.Context, s providers.PayloadSummary) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.urls = append(l.urls, s.URL)
}

// A connection error names the URL with its query values and
// credential-like path parts masked, for every API surface: its text
// reaches the terminal and the session transcript.
func TestConnectionErrorsMaskTheBaseURLsCredentials(t *testing.T) {
	for _, id := range []string{"messages", "responses", "genai", "reasoning", "regional", "local"} {
		for _, base := range []string{"http://127.0.0.1:1/v1?key=SECRET", "http://127.0.0.1:1/v1/key-SECRET123", "http://127.0.0.1:1/key/SECRET123/v1"} {
			t.Run(id+" "+base, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					cfg := Config{APIKey: "k", BaseURL: base, Model: "m-1", Client: &http.Client{Transport: refusing{}}}
					_, err := construct(t, id, cfg).Chat(context.Background(), hi())
					if !errors.Is(err, providers.ErrUpstream) || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "127.0.0.1:1") {
						t.Fatalf("want a connection error naming the host, got %v", err)
					}
					if strings.Contains(err.Error(), "SECRET") {
						t.Fatalf("the error shows the secret: %v", err)
					}
				})
			})
		}
	}
	// Payload summaries (the payloadLogger option) get the masked URL too.
	synctest.Test(t, func(t *testing.T) {
		var l recordingLogger
		p, err := chatcompat.NewLocalProvider(chatcompat.LocalOptions{BaseURL: "http://127.0.0.1:1/v1?key=SECRET", PayloadLogger: &l, Client: &http.Client{Transport: refusing{}}})
		if err != nil {
			t.Fatal(err)
		}
		p.Chat(context.Background(), hi())
		if len(l.urls) == 0 || strings.Contains(strings.Join(l.urls, " "), "SECRET") || l.urls[0] != "http://127.0.0.1:1/v1/chat/completions?key=***" {
			t.Fatalf("summaries %v", l.urls)
		}
	})
}
