package providertest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"agent/providers"
)

// Fixtures describes how a provider package replays its recorded streams.
type Fixtures struct {
	// Glob finds the recorded streams; "" means "testdata/*.sse". Each
	// FILE.sse has its golden events in FILE.events (-update rewrites it).
	Glob    string
	Request func() *providers.Request
	// Memory builds the provider over an Executor that replays from memory.
	Memory func(t testing.TB, ex providers.Executor) providers.Provider
	// HTTP builds the provider for a test server at baseURL (the server's
	// root: the provider adds its version path if it needs one).
	HTTP func(t testing.TB, baseURL string, client *http.Client) providers.Provider
	// Retried reports a stream whose failure the provider retries with
	// real backoff: it runs from memory only (in a bubble, where backoff
	// takes no time).
	Retried func(golden string) bool
}

// RunFixtures checks that every recorded stream decodes to its golden
// events, whole and split at every byte: from memory (in a synctest bubble,
// where a stall or a retry costs no time), and over HTTP from an httptest
// server that writes the stream in two flushed pieces; and that no
// goroutine outlives the streams. Over HTTP one server per fixture answers
// every split on one kept-alive connection: a connection per split would
// leave thousands of sockets in TIME_WAIT and exhaust a busy machine's
// ephemeral ports.
func RunFixtures(t *testing.T, fx Fixtures) {
	glob := fx.Glob
	if glob == "" {
		glob = "testdata/*.sse"
	}
	files, _ := filepath.Glob(glob)
	if len(files) == 0 {
		t.Fatalf("no fixtures match %s", glob)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var whole string
			synctest.Test(t, func(t *testing.T) {
				whole = runStream(t, fx.Memory(t, NewReplay(Stream(data))), fx.Request())
				Golden(t, strings.TrimSuffix(f, ".sse")+".events", []byte(whole))
				for split := 1; split < len(data); split++ {
					got := runStream(t, fx.Memory(t, NewReplay(Response{Body: data, Split: split})), fx.Request())
					if got != whole {
						t.Fatalf("split at %d:\n%s\nwant\n%s", split, got, whole)
					}
				}
			})
			if fx.Retried != nil && fx.Retried(whole) {
				return
			}
			srv, at := SplitServer(t, data)
			p := fx.HTTP(t, srv.URL, client)
			for split := 0; split < len(data); split++ {
				at.Store(int64(split))
				if got := runStream(t, p, fx.Request()); got != whole {
					t.Fatalf("over HTTP, split at %d:\n%s\nwant\n%s", split, got, whole)
				}
			}
			srv.Close()
		})
	}
	NoLeak(t, tr)
}

// runStream drains one chat call into its text form.
func runStream(t testing.TB, p providers.Provider, req *providers.Request) string {
	t.Helper()
	s, err := p.Chat(context.Background(), req)
	if err != nil {
		return Format(nil, err)
	}
	defer s.Close()
	evs, err := Drain(s)
	return Format(evs, err)
}

// Run drains one chat call into the text form of its events (Format).
func Run(t testing.TB, p providers.Provider, req *providers.Request) string {
	t.Helper()
	return runStream(t, p, req)
}

// BenchStream measures whole responses through a provider whose executor
// replays body: SSE reading, decoding and the stream's bookkeeping. Each
// response must yield wantEvents events; the time is reported per server
// event (sseEvents in body).
func BenchStream(b *testing.B, p providers.Provider, req *providers.Request, body []byte, wantEvents, sseEvents int) {
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		s, err := p.Chat(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		evs := 0
		for {
			_, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			evs++
		}
		if evs != wantEvents {
			b.Fatalf("%d events, want %d", evs, wantEvents)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sseEvents), "ns/event")
}

// ErrorCase is one scripted exchange of a provider's errors-and-retries
// table: the responses the executor replays, and either success (Kind
// nil: the events equal the table's want) or the error kind and API code
// expected, with the number of requests sent (retries included).
type ErrorCase struct {
	Name     string
	Script   []Response
	Kind     error
	Code     string
	Requests int
}

// RunErrorCases runs each case with a provider built over its replay; the
// errors must name provider. Run it inside a synctest bubble so that the
// backoff between retries takes no real time.
func RunErrorCases(t *testing.T, provider string, newProvider func(ex providers.Executor) providers.Provider, req func() *providers.Request, want string, cases []ErrorCase) {
	t.Helper()
	for _, c := range cases {
		ex := NewReplay(c.Script...)
		s, err := newProvider(ex).Chat(context.Background(), req())
		var evs []providers.Event
		if err == nil {
			evs, err = Drain(s)
		}
		if c.Kind == nil {
			if got := Format(evs, err); got != want {
				t.Errorf("%s:\n%s", c.Name, got)
			}
		} else {
			var pe *providers.Error
			if !errors.As(err, &pe) || !errors.Is(err, c.Kind) || pe.Code != c.Code || pe.Provider != provider {
				t.Errorf("%s: %v", c.Name, err)
			}
		}
		if ex.Requests() != c.Requests {
			t.Errorf("%s: %d requests, want %d", c.Name, ex.Requests(), c.Requests)
		}
	}
}

// Case builds an ErrorCase (tables read best positionally).
func Case(name string, script []Response, kind error, code string, requests int) ErrorCase {
	return ErrorCase{Name: name, Script: script, Kind: kind, Code: code, Requests: requests}
}
