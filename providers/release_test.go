package providers

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// heldExecutor answers each request from answers in turn and keeps the
// request bodies it was given, unclosed unless closeBody.
type heldExecutor struct {
	mu        sync.Mutex
	answers   []int // status codes, in order
	closeBody bool
	bodies    []io.ReadCloser
	got       []string
}

func (e *heldExecutor) Do(req *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(req.Body)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, string(b))
	if e.closeBody {
		req.Body.Close()
	} else {
		e.bodies = append(e.bodies, req.Body)
	}
	code := e.answers[0]
	e.answers = e.answers[1:]
	if code != 200 {
		return &http.Response{StatusCode: code, Header: http.Header{"Retry-After": {"0"}}, Body: io.NopCloser(strings.NewReader("busy")), Request: req}, nil
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader("data: hi\n\ndata: end\n\n")), Request: req}, nil
}

func (e *heldExecutor) closeAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, b := range e.bodies {
		b.Close()
		b.Close() // twice: counted once
	}
	e.bodies = nil
}

// Call.Release runs once, when the stream has ended and every attempt's
// request body has been closed by the transport: never while the
// transport may still read the body.
func TestCallRelease(t *testing.T) {
	cases := []struct {
		name        string
		answers     []int
		closeBody   bool
		closeStream bool // the caller closes the stream before its end
		sends       int
	}{
		{"a transport that closes the body at once", []int{200}, true, false, 1},
		{"a body closed after the stream ended", []int{200}, false, false, 1},
		{"a retried call holds every attempt's body", []int{503, 200}, false, false, 2},
		{"a stream the caller closes", []int{200}, false, true, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex := &heldExecutor{answers: c.answers, closeBody: c.closeBody}
			var released atomic.Int32
			s := &Sender{Provider: "test", Executor: ex}
			st, err := s.Stream(context.Background(), Call{URL: "http://model.test/v1", Body: []byte(`{"x":1}`),
				NewDecoder: func() Decoder { return lineDecoder{} }, Release: func() { released.Add(1) }})
			if err != nil {
				t.Fatal(err)
			}
			if released.Load() != 0 {
				t.Fatal("released while the stream runs")
			}
			if c.closeStream {
				st.Close()
				if _, err := st.Next(); err == nil {
					t.Fatal("a closed stream goes on")
				}
			} else {
				if _, err := drain(st, nil); err != nil {
					t.Fatal(err)
				}
			}
			if !c.closeBody {
				if released.Load() != 0 {
					t.Fatal("released while the transport holds the body")
				}
				ex.closeAll()
			}
			if n := released.Load(); n != 1 {
				t.Fatalf("released %d times", n)
			}
			st.Close()
			if n := released.Load(); n != 1 {
				t.Fatalf("released %d times after Close", n)
			}
			if len(ex.got) != c.sends {
				t.Fatalf("%d sends", len(ex.got))
			}
			for _, b := range ex.got {
				if b != `{"x":1}` {
					t.Fatalf("body %q", b)
				}
			}
		})
	}
}

// Over a real connection the transport closes the body once it is sent,
// and the call is released after its stream ends; the server got the
// whole body with its length.
func TestCallReleaseHTTP(t *testing.T) {
	body := strings.Repeat("b", 256<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if string(b) != body || r.ContentLength != int64(len(body)) {
			w.WriteHeader(400)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: ok\n\ndata: end\n\n")
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	released := make(chan struct{})
	s := &Sender{Provider: "test", Client: &http.Client{Transport: tr}}
	st, err := s.Stream(context.Background(), Call{URL: srv.URL, Body: []byte(body),
		NewDecoder: func() Decoder { return lineDecoder{} }, Release: func() { close(released) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(st, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-released:
	case <-time.After(10 * time.Second):
		t.Fatal("never released")
	}
}
