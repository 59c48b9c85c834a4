package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"agent/internal/sse"
)

// gatedTarget's agent_submit reports progress, then waits for release (or
// its context) before it answers; it says when it was cancelled.
type gatedTarget struct {
	fakeTarget
	reports   int
	release   chan struct{}
	started   chan struct{}
	cancelled chan struct{}
	linger    time.Duration // how long a cancelled call takes to return
}

func newGatedTarget(reports int) *gatedTarget {
	return &gatedTarget{reports: reports, release: make(chan struct{}), started: make(chan struct{}, 8), cancelled: make(chan struct{}, 8)}
}

func (g *gatedTarget) Submit(ctx context.Context, prompt string) (ServedResult, error) {
	for i := range g.reports {
		ReportProgress(ctx, fmt.Sprintf("step %d", i+1))
		time.Sleep(100 * time.Microsecond) // the reports go out in order, one by one
	}
	g.started <- struct{}{}
	select {
	case <-g.release:
		return ServedResult{Text: "answer: " + prompt}, nil
	case <-ctx.Done():
		time.Sleep(g.linger)
		g.cancelled <- struct{}{}
		return ServedResult{}, ctx.Err()
	}
}

type resumeRig struct {
	t    *testing.T
	h    *HTTPHandler
	srv  *httptest.Server
	sid  string
	ver  string
	now  time.Time
	mu   sync.Mutex
	tgt  *gatedTarget
	next int
}

func newResumeRig(t *testing.T, version string, reports int) *resumeRig {
	t.Helper()
	rig := &resumeRig{t: t, ver: version, now: time.Unix(1_700_000_000, 0), tgt: newGatedTarget(reports), next: 1}
	s, err := NewServer(rig.tgt, ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rig.h = s.HTTPHandler(HTTPServeOptions{KeepAlive: time.Hour, Now: rig.clock})
	rig.srv = httptest.NewServer(rig.h)
	t.Cleanup(func() { rig.srv.Close(); rig.h.Close() })
	w := post(rig.h, initializeLine(version), nil)
	rig.sid = w.Header().Get("Mcp-Session-Id")
	if rig.sid == "" {
		t.Fatalf("no session: %d %s", w.Code, w.Body)
	}
	return rig
}

func (r *resumeRig) clock() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now
}

func (r *resumeRig) advance(d time.Duration) {
	r.mu.Lock()
	r.now = r.now.Add(d)
	r.mu.Unlock()
}

// request sends an HTTP request to the rig's server in its session.
func (r *resumeRig) request(ctx context.Context, method, body string, hdr http.Header) *http.Response {
	r.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.srv.URL+"/mcp", rd)
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", r.sid)
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	return resp
}

// submit starts agent_submit as request id on a stream.
func (r *resumeRig) submit(ctx context.Context, id int) *http.Response {
	return r.request(ctx, http.MethodPost, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"p%d"},"_meta":{"progressToken":"t%d"}}}`, id, id, id), nil)
}

func (r *resumeRig) resume(ctx context.Context, lastID string) *http.Response {
	return r.request(ctx, http.MethodGet, "", http.Header{"Last-Event-ID": {lastID}})
}

type readEvent struct {
	id, data string
	retry    time.Duration
}

// events reads SSE events until stop says so or the stream ends (a
// priming event, with empty data, dispatches none).
func events(t *testing.T, resp *http.Response, stop func(readEvent) bool) []readEvent {
	t.Helper()
	return eventsFrom(sse.NewReader(resp.Body, sse.Options{}), stop)
}

func eventsFrom(rd *sse.Reader, stop func(readEvent) bool) []readEvent {
	var out []readEvent
	for {
		ev, err := rd.Next()
		if err != nil {
			return out
		}
		e := readEvent{id: ev.ID, data: ev.Data}
		e.retry, _ = rd.Retry()
		out = append(out, e)
		if stop(e) {
			return out
		}
	}
}

func isResponse(e readEvent) bool {
	return strings.Contains(e.data, `"result"`) || strings.Contains(e.data, `"error"`)
}

// TestResumeAfterDisconnect: the POST's connection drops in the middle of
// a turn; the turn goes on; GET with the last event id gets what came
// after it, the answer included. 2025-11-25 primes the stream with an id
// and a retry time.
func TestResumeAfterDisconnect(t *testing.T) {
	rig := newResumeRig(t, Version20251125, 3)
	ctx, drop := context.WithCancel(context.Background())
	resp := rig.submit(ctx, 2)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	<-rig.tgt.started // the reports are recorded
	// The first event primes: an id, the retry time, empty data.
	br := bufio.NewReader(resp.Body)
	prime := make([]byte, len("id: 1.0\nretry: 1000\ndata:\n\n"))
	if _, err := io.ReadFull(br, prime); err != nil || string(prime) != "id: 1.0\nretry: 1000\ndata:\n\n" {
		t.Fatalf("priming event %q, %v", prime, err)
	}
	first := eventsFrom(sse.NewReader(br, sse.Options{}), func(e readEvent) bool { return strings.Contains(e.data, "step 1") })
	drop()
	resp.Body.Close()
	if len(first) != 1 || first[0].id != "1.1" || !strings.Contains(first[0].data, `"progressToken":"t2"`) {
		t.Fatalf("first progress %+v", first)
	}
	time.Sleep(50 * time.Millisecond)
	select {
	case <-rig.tgt.cancelled:
		t.Fatal("a dropped connection cancelled the turn")
	default:
	}
	close(rig.tgt.release)
	got := events(t, rig.resume(context.Background(), "1.1"), isResponse)
	var ids []string
	for _, e := range got {
		ids = append(ids, e.id)
	}
	if strings.Join(ids, " ") != "1.2 1.3 1.4" || !strings.Contains(got[2].data, "answer: p2") {
		t.Fatalf("resumed events %q: %+v", ids, got)
	}
	// The finished stream can be resumed again, from any event it had.
	again := events(t, rig.resume(context.Background(), "1.0"), isResponse)
	if len(again) != 4 || again[3].id != "1.4" {
		t.Fatalf("second resumption %+v", again)
	}
}

// TestResumeOlderRevision: a client of 2025-03-26 gets ids on its events
// (resumable) but no priming event with empty data, which it may not know.
func TestResumeOlderRevision(t *testing.T) {
	rig := newResumeRig(t, Version20250326, 1)
	close(rig.tgt.release)
	got := events(t, rig.submit(context.Background(), 2), isResponse)
	if len(got) != 2 || got[0].id != "1.0" || got[0].data == "" || got[1].id != "1.1" {
		t.Fatalf("events %+v", got)
	}
	// Another stream of the session has other ids.
	got = events(t, rig.submit(context.Background(), 3), isResponse)
	if got[0].id != "2.0" {
		t.Fatalf("second stream %+v", got)
	}
}

// TestResumeRefusals: what a GET that cannot resume gets.
func TestResumeRefusals(t *testing.T) {
	rig := newResumeRig(t, Version20251125, 0)
	close(rig.tgt.release)
	events(t, rig.submit(context.Background(), 2), isResponse)
	tests := []struct {
		name   string
		hdr    http.Header
		status int
	}{
		{name: "no Last-Event-ID", hdr: http.Header{}, status: http.StatusMethodNotAllowed},
		{name: "malformed id", hdr: http.Header{"Last-Event-ID": {"x"}}, status: http.StatusBadRequest},
		{name: "a stream never made", hdr: http.Header{"Last-Event-ID": {"9.0"}}, status: http.StatusBadRequest},
		{name: "an event never sent", hdr: http.Header{"Last-Event-ID": {"1.99"}}, status: http.StatusBadRequest},
		{name: "no session", hdr: http.Header{"Last-Event-ID": {"1.0"}, "Mcp-Session-Id": {""}}, status: http.StatusBadRequest},
		{name: "unknown session", hdr: http.Header{"Last-Event-ID": {"1.0"}, "Mcp-Session-Id": {"gone"}}, status: http.StatusNotFound},
		{name: "no event stream accepted", hdr: http.Header{"Last-Event-ID": {"1.0"}, "Accept": {"application/json"}}, status: http.StatusNotAcceptable},
		{name: "a revision the server does not speak", hdr: http.Header{"Last-Event-ID": {"1.0"}, "Mcp-Protocol-Version": {"2099-01-01"}}, status: http.StatusBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := rig.request(context.Background(), http.MethodGet, "", tc.hdr)
			defer resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
	// Past the replay window the stream is gone.
	rig.advance(DefaultReplayWindow + time.Second)
	resp := rig.resume(context.Background(), "1.0")
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("after the replay window: %d", resp.StatusCode)
	}
}

// TestResumeCancellation: a detached call still ends with
// notifications/cancelled and with the end of its session.
func TestResumeCancellation(t *testing.T) {
	tests := []struct {
		name string
		end  func(rig *resumeRig)
	}{
		{name: "notifications/cancelled", end: func(rig *resumeRig) {
			resp := rig.request(context.Background(), http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`, nil)
			resp.Body.Close()
		}},
		{name: "DELETE of the session", end: func(rig *resumeRig) {
			resp := rig.request(context.Background(), http.MethodDelete, "", nil)
			resp.Body.Close()
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rig := newResumeRig(t, Version20251125, 0)
			ctx, drop := context.WithCancel(context.Background())
			resp := rig.submit(ctx, 2)
			<-rig.tgt.started
			drop()
			resp.Body.Close()
			tc.end(rig)
			select {
			case <-rig.tgt.cancelled:
			case <-time.After(5 * time.Second):
				t.Fatal("the call was not cancelled")
			}
		})
	}
}

// TestStreamsDuringClose: requests that start streams while Close runs,
// and after it, end (cancelled) without a panic. The race it guards
// against (a stream's calls joining Close's WaitGroup while Close waits)
// has a window too narrow to hit on demand; HTTPHandler.closed rules it
// out by construction.
func TestStreamsDuringClose(t *testing.T) {
	rig := newResumeRig(t, Version20251125, 0)
	rig.tgt.started, rig.tgt.cancelled = make(chan struct{}, 64), make(chan struct{}, 64)
	call := func(id int) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"p"}}}`, id)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rig.srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", rig.sid)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() { call(100 + i) })
	}
	start := time.Now()
	rig.h.Close()
	wg.Wait()
	call(200)
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("the calls took %v to end after Close", d)
	}
}

// TestCloseWaitsForStreamCalls: a stream's call outlives its request;
// Close cancels it and returns once it has returned.
func TestCloseWaitsForStreamCalls(t *testing.T) {
	rig := newResumeRig(t, Version20251125, 0)
	rig.tgt.linger = 200 * time.Millisecond
	ctx, drop := context.WithCancel(context.Background())
	resp := rig.submit(ctx, 2)
	<-rig.tgt.started
	drop()
	resp.Body.Close()
	rig.h.Close()
	select {
	case <-rig.tgt.cancelled:
	default:
		t.Fatal("Close returned while the call still ran")
	}
}

// TestResumeTakesOver: a resumption while the first connection still
// reads takes the stream over; the first writer stops.
func TestResumeTakesOver(t *testing.T) {
	rig := newResumeRig(t, Version20251125, 0)
	resp := rig.submit(context.Background(), 2)
	defer resp.Body.Close()
	<-rig.tgt.started
	second := rig.resume(context.Background(), "1.0")
	defer second.Body.Close()
	// The first connection ends without the answer.
	rest, _ := io.ReadAll(resp.Body)
	if strings.Contains(string(rest), "answer") {
		t.Fatalf("the replaced writer went on: %q", rest)
	}
	close(rig.tgt.release)
	got := events(t, second, isResponse)
	if len(got) != 1 || got[0].id != "1.1" || !strings.Contains(got[0].data, "answer: p2") {
		t.Fatalf("events on the resumed connection %+v", got)
	}
}

// TestResumeBounded: a stream keeps at most maxStreamEvents events; the
// oldest progress goes first and the answer is always kept.
func TestResumeBounded(t *testing.T) {
	rig := newResumeRig(t, Version20251125, maxProgressQueue/2)
	close(rig.tgt.release)
	resp := rig.submit(context.Background(), 2)
	events(t, resp, isResponse)
	rig.h.mu.Lock()
	es := rig.h.sessions[rig.sid].streams[1]
	rig.h.mu.Unlock()
	for range 2 * maxStreamEvents {
		es.add(streamEvent{data: []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t2","progress":1}}`)})
	}
	es.mu.Lock()
	n := len(es.events)
	hasAnswer := false
	for _, e := range es.events {
		hasAnswer = hasAnswer || e.response
	}
	es.mu.Unlock()
	if n != maxStreamEvents || !hasAnswer {
		t.Fatalf("%d events kept, answer kept %v", n, hasAnswer)
	}
	var body map[string]any
	got := events(t, rig.resume(context.Background(), "1.0"), func(readEvent) bool { return false })
	if len(got) != maxStreamEvents || json.Unmarshal([]byte(got[0].data), &body) != nil {
		t.Fatalf("replayed %d events", len(got))
	}
}

func TestParseEventID(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		stream, seq int
		ok          bool
	}{
		{name: "plain", in: "3.17", stream: 3, seq: 17, ok: true},
		{name: "white space", in: " 1.0 ", stream: 1, seq: 0, ok: true},
		{name: "no dot", in: "17", ok: false},
		{name: "stream zero", in: "0.1", ok: false},
		{name: "negative", in: "1.-1", ok: false},
		{name: "letters", in: "a.b", ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, q, ok := parseEventID(tc.in)
			if ok != tc.ok || ok && (s != tc.stream || q != tc.seq) {
				t.Fatalf("parseEventID(%q) = %d, %d, %v", tc.in, s, q, ok)
			}
		})
	}
}

// FuzzParseEventID: a Last-Event-ID from outside parses to the stream and
// event it names or to nothing; what parses is what id would print.
func FuzzParseEventID(f *testing.F) {
	for _, s := range []string{"1.0", "3.17", " 2.5 ", "0.1", "1.-1", "x", "9999999999999999999.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		stream, seq, ok := parseEventID(s)
		if !ok {
			return
		}
		if stream <= 0 || seq < 0 {
			t.Fatalf("parseEventID(%q) = %d, %d", s, stream, seq)
		}
		es := newEventStream(stream)
		if again, seq2, ok2 := parseEventID(es.id(seq)); !ok2 || again != stream || seq2 != seq {
			t.Fatalf("%q does not round-trip", s)
		}
	})
}
