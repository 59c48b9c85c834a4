package providertest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"agent/internal/sse"
	"agent/providers"
)

// CancelMidStream checks, over a real connection, that a stream ends
// promptly with an ErrCancelled error when its context is cancelled and
// when it is closed while Next waits on a stalled server; that the error
// stays; and that no goroutine or connection is left behind. The server
// sends data[:cut] and stalls; reached reports the event after which the
// stream is ended (one that data[:cut] holds). HTTP builds the provider
// for the server's root URL.
func CancelMidStream(t *testing.T, build func(t testing.TB, baseURL string, c *http.Client) providers.Provider, req func() *providers.Request, data []byte, cut int, reached func(providers.Event) bool) {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(data[:cut])
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	tr := &http.Transport{}
	p := build(t, srv.URL, &http.Client{Transport: tr})

	for _, how := range []string{"cancel", "close"} {
		ctx, cancel := context.WithCancel(context.Background())
		s, err := p.Chat(ctx, req())
		if err != nil {
			t.Fatal(err)
		}
		for {
			ev, err := s.Next()
			if err != nil {
				t.Fatalf("%s: before the cut: %v", how, err)
			}
			if reached(ev) {
				break
			}
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			time.Sleep(20 * time.Millisecond) // let Next block on the stalled body
			if how == "cancel" {
				cancel()
			} else {
				s.Close()
			}
		})
		start := time.Now()
		var err2 error
		for err2 == nil {
			_, err2 = s.Next()
		}
		wg.Wait()
		if !errors.Is(err2, providers.ErrCancelled) || how == "cancel" && !errors.Is(err2, context.Canceled) {
			t.Errorf("%s: %v", how, err2)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %v", how, d)
		}
		if _, err3 := s.Next(); err3 != err2 {
			t.Errorf("%s: the error changed to %v", how, err3)
		}
		s.Close()
		cancel()
	}
	NoLeak(t, tr)
}

// LineTooLong checks that a stream holding one line over the 16 MiB bound
// of docs/providers.md, "Shared plumbing" (head, then more than the bound
// of 'a', then tail) fails with an ErrUpstream error wrapping
// sse.ErrLineTooLong after one request: a clear error, not a hang, a crash
// or a retry. Memory builds the provider over an executor.
func LineTooLong(t *testing.T, build func(t testing.TB, ex providers.Executor) providers.Provider, req func() *providers.Request, head, tail string) {
	t.Helper()
	big := make([]byte, 0, len(head)+sse.DefaultMaxLine+len(tail)+1)
	big = append(big, head...)
	for range sse.DefaultMaxLine + 1 {
		big = append(big, 'a')
	}
	big = append(big, tail...)
	ex := NewReplay(Stream(big))
	s, err := build(t, ex).Chat(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	evs, err := Drain(s)
	if !errors.Is(err, sse.ErrLineTooLong) || !errors.Is(err, providers.ErrUpstream) || ex.Requests() != 1 {
		t.Fatalf("err = %v after %d requests (events %s)", err, ex.Requests(), Format(evs, nil))
	}
}
