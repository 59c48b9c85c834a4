package tools

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"agent/internal/netguard"
)

func newTestFetch(t *testing.T, allowLoopback bool, lim Limits) Tool {
	t.Helper()
	var p netguard.Policy
	if allowLoopback {
		p.Allowed = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	}
	return Builtin(Options{Workspace: realTempDir(t), Network: p, Limits: lim})[6]
}

func fetchServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><html><head><title>T</title><style>p{}</style></head><body>
<h1>Title &amp; more</h1><script>alert(1)</script>
<p>Some   <b>bold</b>
text with a <a href="/next?x=1">link</a>.</p><!-- hidden -->
<ul><li>one</li><li>two</li></ul><pre>  keep
   this</pre></body></html>`))
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(strings.Repeat("x", 5000)))
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"a":1}`))
	})
	mux.HandleFunc("/png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\x00\x00"))
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/page", http.StatusFound)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestWebFetchRefusesLoopbackByDefault(t *testing.T) {
	srv := fetchServer(t)
	fetch := newTestFetch(t, false, Limits{})
	res := runTool(t, fetch, `{"url":"`+srv.URL+`/page"}`)
	if !res.IsError || !strings.Contains(res.Content, "refused: 127.0.0.1 resolves to a loopback address") {
		t.Errorf("%+v", res)
	}
	// Localhost names are loopback by definition (RFC 6761) and refused
	// by name, before any lookup, in any case and with a trailing dot.
	// The host is shown as the permission target names it (lower case,
	// without the trailing dot).
	for host, shown := range map[string]string{"localhost": "localhost", "LOCALHOST.": "localhost", "foo.localhost": "foo.localhost", "foo.localhost.": "foo.localhost"} {
		res = runTool(t, fetch, `{"url":"`+strings.Replace(srv.URL, "127.0.0.1", host, 1)+`/page"}`)
		if !res.IsError || !strings.Contains(res.Content, "refused: "+shown+" is a loopback name") {
			t.Errorf("%s: %+v", host, res)
		}
	}
	res = runTool(t, fetch, `{"url":"http://169.254.169.254/latest/"}`)
	if !res.IsError || !strings.Contains(res.Content, "cloud metadata") {
		t.Errorf("%+v", res)
	}
}

func TestWebFetch(t *testing.T) {
	srv := fetchServer(t)
	fetch := newTestFetch(t, true, Limits{Output: 1000})
	res := runTool(t, fetch, `{"url":"`+srv.URL+`/page#frag"}`)
	want := "URL: " + srv.URL + "/page\nStatus: 200 OK\nContent-Type: text/html\n\n" +
		"# Title & more\n\nSome bold text with a [link](" + srv.URL + "/next?x=1).\n\n- one\n- two\n\n  keep\n   this"
	if res.IsError || res.Content != want {
		t.Errorf("html:\n got %q\nwant %q", res.Content, want)
	}
	res = runTool(t, fetch, `{"url":"`+srv.URL+`/page","raw":true}`)
	if !strings.Contains(res.Content, "<script>alert(1)</script>") {
		t.Errorf("raw: %q", res.Content)
	}
	res = runTool(t, fetch, `{"url":"`+srv.URL+`/text"}`)
	if !strings.Contains(res.Content, "[output truncated: ") || len(res.Content) > 1100 {
		t.Errorf("text: %d bytes", len(res.Content))
	}
	res = runTool(t, fetch, `{"url":"`+srv.URL+`/json"}`)
	if !strings.HasSuffix(res.Content, "\n\n{\"a\":1}") {
		t.Errorf("json: %q", res.Content)
	}
	res = runTool(t, fetch, `{"url":"`+srv.URL+`/png"}`)
	if !strings.HasSuffix(res.Content, "[image/png content (6 bytes) is not shown: WebFetch returns text only]") {
		t.Errorf("png: %q", res.Content)
	}
	res = runTool(t, fetch, `{"url":"`+srv.URL+`/missing"}`)
	if !res.IsError || !strings.Contains(res.Content, "Status: 404 Not Found") {
		t.Errorf("404: %+v", res)
	}
}

func TestWebFetchDoesNotFollowRedirects(t *testing.T) {
	srv := fetchServer(t)
	fetch := newTestFetch(t, true, Limits{})
	res := runTool(t, fetch, `{"url":"`+srv.URL+`/moved"}`)
	want := srv.URL + "/moved answered 302 Found and redirects to " + srv.URL + "/page. Redirects are not followed; fetch that URL if it is the one you want."
	if res.Content != want {
		t.Errorf("got %q\nwant %q", res.Content, want)
	}
	res = runTool(t, fetch, `{"url":"`+srv.URL+`/away"}`)
	if !strings.Contains(res.Content, "redirects to http://169.254.169.254/latest/meta-data/.") {
		t.Errorf("%q", res.Content)
	}
}

func TestWebFetchBodyLimit(t *testing.T) {
	srv := fetchServer(t)
	fetch := newTestFetch(t, true, Limits{FetchBytes: 100})
	res := runTool(t, fetch, `{"url":"`+srv.URL+`/text"}`)
	if !strings.HasSuffix(res.Content, strings.Repeat("x", 100)+"\n[the response was longer than 100 bytes; the rest was not read]") {
		t.Errorf("%q", res.Content)
	}
}

func TestWebFetchTimeoutAndCancel(t *testing.T) {
	srv := fetchServer(t)
	fetch := newTestFetch(t, true, Limits{FetchTimeout: 200 * time.Millisecond})
	start := time.Now()
	if res := runTool(t, fetch, `{"url":"`+srv.URL+`/slow"}`); !res.IsError {
		t.Errorf("%+v", res)
	}
	fetch = newTestFetch(t, true, Limits{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	if res := fetch.Run(ctx, json.RawMessage(`{"url":"`+srv.URL+`/slow"}`)); res.Content != "interrupted" {
		t.Errorf("%+v", res)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestWebFetchTarget(t *testing.T) {
	fetch := newTestFetch(t, false, Limits{})
	for args, want := range map[string]string{
		`{"url":"https://Docs.Example.COM./a?b#c"}`: "docs.example.com",
		`{"url":"http://[::1]:8080/"}`:              "::1",
		`{"url":"https://example.com:8443"}`:        "example.com",
	} {
		tgt, err := fetch.Target(json.RawMessage(args))
		if err != nil || tgt != (Target{Kind: TargetHost, Value: want}) {
			t.Errorf("%s: %+v %v", args, tgt, err)
		}
	}
	for _, args := range []string{`{"url":"ftp://example.com/"}`, `{"url":"https://user:pw@example.com/"}`, `{"url":"https:///path"}`, `{"url":"::"}`, `{"url":"file:///etc/passwd"}`} {
		if _, err := fetch.Target(json.RawMessage(args)); !errors.Is(err, ErrBadArguments) {
			t.Errorf("%s: %v", args, err)
		}
		if res := fetch.Run(context.Background(), json.RawMessage(args)); !res.IsError {
			t.Errorf("%s ran", args)
		}
	}
}

func TestHTMLToText(t *testing.T) {
	for in, want := range map[string]string{
		"plain &lt;text&gt;":                           "plain <text>",
		"<p>a</p><p>b</p>":                             "a\n\nb",
		"a<br>b<br/>c":                                 "a\nb\nc",
		"<a href='javascript:x()'>x</a>":               "x",
		"<a href=\"#top\">top</a>":                     "[top](#top)",
		"unclosed <b":                                  "unclosed <b",
		"<script>never":                                "",
		"<table><tr><td>a</td><td>b</td></tr></table>": "a b",
		"<h2>Sub</h2>text":                             "## Sub\n\ntext",
	} {
		if got := htmlToText(in, nil); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
