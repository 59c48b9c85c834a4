// Package providertest holds test helpers for provider packages, in the
// manner of net/http/httptest: an Executor that replays recorded responses
// from memory (split at any byte, stalled, or cut), an httptest server that
// replays a recorded stream, a stable text form of a stream's events for
// golden files, and a check that no goroutine outlives a stream.
//
// Imports: the standard library, agent/providers and agent/internal/sse.
// Only tests import it.
package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agent/internal/sse"
	"agent/providers"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Response is one scripted answer of a Replay executor.
type Response struct {
	Status int // 0 means 200
	Header http.Header
	Body   []byte
	// Split, when above zero, delivers Body in two reads: Body[:Split] and
	// the rest.
	Split int
	// Stall delivers StallAfter bytes and then blocks until the request's
	// context ends or the body is closed (a stalled server).
	Stall      bool
	StallAfter int
	// Delay is slept before each read that returns data (a slow but
	// healthy server; use it under testing/synctest).
	Delay time.Duration
	// Chunk, when above zero, bounds the bytes of each read.
	Chunk int
	// Err, when set, is returned by Do instead of a response (a
	// connection error).
	Err error
	// NoAnswer blocks Do until the request's context ends (a server that
	// accepts the request and never answers).
	NoAnswer bool
}

// Replay is a providers.Executor answering from a script, one Response per
// request; the last one repeats. It records every request body. Safe for
// concurrent use.
type Replay struct {
	mu        sync.Mutex
	responses []Response
	bodies    [][]byte
	headers   []http.Header
}

// NewReplay returns an executor answering with rs in turn.
func NewReplay(rs ...Response) *Replay { return &Replay{responses: rs} }

// Do implements providers.Executor.
func (r *Replay) Do(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	n := len(r.bodies)
	r.bodies = append(r.bodies, body)
	r.headers = append(r.headers, req.Header.Clone())
	resp := r.responses[min(n, len(r.responses)-1)]
	r.mu.Unlock()
	if resp.Err != nil {
		return nil, resp.Err
	}
	if resp.NoAnswer {
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	h := resp.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if h.Get("Content-Type") == "" {
		if status == http.StatusOK {
			h.Set("Content-Type", "text/event-stream")
		} else {
			h.Set("Content-Type", "application/json")
		}
	}
	return &http.Response{
		StatusCode: status,
		Header:     h,
		Body:       &replayBody{ctx: req.Context(), data: resp.Body, split: resp.Split, stall: stallAt(resp), delay: resp.Delay, chunk: resp.Chunk, closed: make(chan struct{})},
		Request:    req,
	}, nil
}

// Requests returns the number of requests made.
func (r *Replay) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies)
}

// Body returns the body of request i.
func (r *Replay) Body(i int) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bodies[i]
}

// Header returns the headers of request i.
func (r *Replay) Header(i int) http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.headers[i]
}

func stallAt(r Response) int {
	if r.Stall {
		return r.StallAfter
	}
	return -1
}

type replayBody struct {
	ctx       context.Context
	data      []byte
	pos       int
	split     int
	stall     int
	delay     time.Duration
	chunk     int
	closeOnce sync.Once
	closed    chan struct{}
}

func (b *replayBody) Read(p []byte) (int, error) {
	select {
	case <-b.closed:
		return 0, textError("read on closed body")
	default:
	}
	end := len(b.data)
	if b.split > 0 && b.pos < b.split {
		end = b.split
	}
	if b.stall >= 0 && b.pos >= b.stall {
		select {
		case <-b.ctx.Done():
			return 0, b.ctx.Err()
		case <-b.closed:
			return 0, textError("read on closed body")
		}
	}
	if b.stall >= 0 {
		end = min(end, b.stall)
	}
	if b.chunk > 0 {
		end = min(end, b.pos+b.chunk)
	}
	if b.pos >= len(b.data) {
		return 0, io.EOF
	}
	if b.delay > 0 {
		time.Sleep(b.delay)
	}
	n := copy(p, b.data[b.pos:end])
	b.pos += n
	return n, nil
}

func (b *replayBody) Close() error {
	b.closeOnce.Do(func() { close(b.closed) })
	return nil
}

type textError string

func (e textError) Error() string { return string(e) }

// Stream is a Response delivering body in one piece.
func Stream(body []byte) Response { return Response{Body: body} }

// Status is a Response with an error status and JSON body.
func Status(status int, body string, header ...string) Response {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return Response{Status: status, Header: h, Body: []byte(body)}
}

// SplitServer returns an httptest server answering every request with body
// as an event stream, written in two pieces flushed apart at the byte the
// returned value holds when the request arrives (0: one piece).
func SplitServer(t testing.TB, body []byte) (*httptest.Server, *atomic.Int64) {
	var at atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		f, _ := w.(http.Flusher)
		if split := int(at.Load()); split > 0 && split < len(body) {
			w.Write(body[:split])
			f.Flush()
			w.Write(body[split:])
		} else {
			w.Write(body)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &at
}

// Drain reads a stream to its end and returns its events and its final
// error (nil for io.EOF).
func Drain(s *providers.Stream) ([]providers.Event, error) {
	var evs []providers.Event
	for {
		ev, err := s.Next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// Format renders events and a final error one per line, for golden files
// and comparisons.
func Format(evs []providers.Event, err error) string {
	var b strings.Builder
	names := map[providers.EventType]string{
		providers.EventTextDelta: "text", providers.EventReasoningDelta: "reasoning", providers.EventRefusalDelta: "refusal",
		providers.EventToolCallStart: "tool-start", providers.EventToolCallDelta: "tool-delta", providers.EventToolCallEnd: "tool-end",
		providers.EventUsage: "usage", providers.EventFinish: "finish", providers.EventImage: "image",
	}
	for _, ev := range evs {
		fmt.Fprintf(&b, "%s", names[ev.Type])
		switch ev.Type {
		case providers.EventTextDelta, providers.EventRefusalDelta, providers.EventToolCallDelta:
			fmt.Fprintf(&b, " %d %q", ev.Index, ev.Text)
		case providers.EventReasoningDelta:
			fmt.Fprintf(&b, " %d %q", ev.Index, ev.Text)
			if ev.Signature != "" {
				fmt.Fprintf(&b, " sig=%q", ev.Signature)
			}
			if ev.Redacted != "" {
				fmt.Fprintf(&b, " redacted=%q", ev.Redacted)
			}
		case providers.EventToolCallStart:
			fmt.Fprintf(&b, " %d %s %s", ev.Index, ev.ID, ev.Name)
		case providers.EventToolCallEnd:
			fmt.Fprintf(&b, " %d", ev.Index)
		case providers.EventUsage:
			u := ev.Usage
			fmt.Fprintf(&b, " in=%d out=%d cache_read=%d cache_write=%d reasoning=%d", u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens)
		case providers.EventFinish:
			fmt.Fprintf(&b, " %s %q", ev.Finish, ev.Raw)
		case providers.EventImage:
			fmt.Fprintf(&b, " %d %s %d bytes", ev.Index, ev.MediaType, len(ev.Data))
		}
		b.WriteByte('\n')
	}
	if err != nil {
		fmt.Fprintf(&b, "error %s\n", err)
	}
	return b.String()
}

// Golden compares got with the file at path, or rewrites the file under
// -update.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// IndentJSON returns b indented, for readable golden files of request
// bodies.
func IndentJSON(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// NoLeak fails the test when, within a second, goroutines running code of
// agent/providers (outside the test's own) or an HTTP connection of the
// transport tr are still alive. Call it after the stream ended.
func NoLeak(t testing.TB, tr *http.Transport) {
	t.Helper()
	closeIdle := func() {
		if tr != nil {
			tr.CloseIdleConnections()
		}
		if dt, ok := http.DefaultTransport.(*http.Transport); ok {
			dt.CloseIdleConnections()
		}
	}
	closeIdle()
	var stacks string
	for deadline := time.Now().Add(time.Second); ; {
		stacks = leaked()
		if stacks == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines left behind:\n%s", stacks)
		}
		time.Sleep(10 * time.Millisecond)
		closeIdle()
	}
}

func leaked() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "testing.tRunner") || strings.Contains(g, "providertest.leaked") {
			continue
		}
		if strings.Contains(g, "agent/providers") || strings.Contains(g, "net/http.(*persistConn)") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

// CheckDecoder runs a fresh decoder over an event stream, read as the
// providers read it (bare JSON errors included), and fails t when
// a stream invariant breaks: only known event types, Finish last in its
// batch, "done" only with a Finish, no Finish before the end marker, and
// nothing after the end marker or an error. Decoder fuzz targets of every
// API surface share it.
func CheckDecoder(t testing.TB, newDecoder func() providers.Decoder, data []byte) {
	rd := sse.NewReader(bytes.NewReader(data), providers.ReaderOptions(1<<16))
	d := newDecoder()
	var out []providers.Event
	check := func(evs []providers.Event) {
		for i, ev := range evs {
			if ev.Type < providers.EventTextDelta || ev.Type > providers.EventImage {
				t.Fatalf("unknown event type %d", ev.Type)
			}
			if ev.Type == providers.EventFinish && i != len(evs)-1 {
				t.Fatalf("finish is not last: %+v", evs)
			}
		}
	}
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			evs, _ := d.End(out[:0])
			check(evs)
			return
		}
		if err != nil {
			return
		}
		if ev.Bare {
			var ok bool
			if ev, ok = providers.BareError(ev); !ok {
				continue
			}
		}
		evs, done, err := d.Decode(ev, out[:0])
		check(evs)
		if done || err != nil {
			if done && (len(evs) == 0 || evs[len(evs)-1].Type != providers.EventFinish) {
				t.Fatalf("done without finish: %+v", evs)
			}
			return
		}
		for _, e := range evs {
			if e.Type == providers.EventFinish {
				t.Fatalf("finish before the end marker")
			}
		}
		out = evs
	}
}

// SeedFromTestdata adds every testdata/*.sse file of the calling package
// to a fuzz corpus.
func SeedFromTestdata(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.sse")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}
