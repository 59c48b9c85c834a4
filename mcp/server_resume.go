package mcp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"agent/internal/sse"
	"agent/mcp/jsonrpc"
)

// Resumable streams of `agent mcp serve` (docs/reference/mcp.md,
// "Resumable streams"; 2025-11-25 transports "Resumability and
// Redelivery"). In a session, an SSE answer is an eventStream: every event
// gets an id "S.N" (the stream's number in the session, the event's in the
// stream), and the events are kept after they are written. The calls run
// on their own, not under the POST's connection: a dropped connection is
// not a cancellation (notifications/cancelled is, and so are the end of
// the session and of the server). A client that lost the connection sends
// GET with Last-Event-ID and gets the events after that one, then the rest
// as they come. Bounded: a stream keeps at most maxStreamEvents events
// (progress is dropped first, responses never), and a finished stream is
// kept for ReplayWindow, at most maxFinishedStreams of them per session.

// Bounds of what is kept for replay.
const (
	maxStreamEvents    = 256
	maxFinishedStreams = 32
	// DefaultReplayWindow is how long a finished stream stays resumable.
	DefaultReplayWindow = 2 * time.Minute
	// primeRetry is the reconnection time the priming event asks for.
	primeRetry = time.Second
)

// streamEvent is one event of a stream: a message, or the empty priming
// event (2025-11-25: "an event ID and an empty data field").
type streamEvent struct {
	seq      int
	data     []byte
	response bool
	retry    time.Duration
}

// eventStream is one resumable SSE answer.
type eventStream struct {
	num int

	mu       sync.Mutex
	events   []streamEvent // the kept ones, in order
	next     int           // seq of the next event
	running  int           // calls not finished
	finished time.Time     // when the last call finished; zero while running
	wake     chan struct{} // closed and replaced on every change
	writer   int           // the attached writer; an older one stops
}

func newEventStream(num int) *eventStream {
	return &eventStream{num: num, wake: make(chan struct{})}
}

// changedLocked wakes the writer.
func (es *eventStream) changedLocked() {
	close(es.wake)
	es.wake = make(chan struct{})
}

func (es *eventStream) add(ev streamEvent) {
	es.mu.Lock()
	defer es.mu.Unlock()
	ev.seq = es.next
	es.next++
	es.events = append(es.events, ev)
	if len(es.events) > maxStreamEvents {
		// Drop the oldest event that is not a response.
		for i, e := range es.events {
			if !e.response {
				es.events = append(es.events[:i], es.events[i+1:]...)
				break
			}
		}
	}
	es.changedLocked()
}

func (es *eventStream) message(m *jsonrpc.Message) {
	b, err := jsonrpc.Encode(m)
	if err != nil {
		return
	}
	es.add(streamEvent{data: b, response: m.Kind() == jsonrpc.KindResponse})
}

// callEnded marks one call finished; the last one finishes the stream.
func (es *eventStream) callEnded(now time.Time) {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.running--
	if es.running == 0 {
		es.finished = now
	}
	es.changedLocked()
}

// id is an event's id.
func (es *eventStream) id(seq int) string { return strconv.Itoa(es.num) + "." + strconv.Itoa(seq) }

// parseEventID splits an id made by eventStream.id.
func parseEventID(s string) (stream, seq int, ok bool) {
	a, b, found := strings.Cut(strings.TrimSpace(s), ".")
	if !found {
		return 0, 0, false
	}
	stream, err1 := strconv.Atoi(a)
	seq, err2 := strconv.Atoi(b)
	return stream, seq, err1 == nil && err2 == nil && stream > 0 && seq >= 0
}

// startStream runs reqs, each on a goroutine of its own under the
// session's context, and records their notifications and responses in a
// new stream of the session; first are responses that go out at once
// (refusals that needed no handler). The priming event opens the stream
// for a client of 2025-11-25.
func (h *HTTPHandler) startStream(s *serveSession, reqs, first []*jsonrpc.Message, run func(context.Context, *jsonrpc.Message) (any, error)) *eventStream {
	h.mu.Lock()
	s.nextStream++
	es := newEventStream(s.nextStream)
	s.streams[es.num] = es
	s.active += len(reqs) // the calls keep the session alive
	es.running = len(reqs)
	tracked := !h.closed // Close waits for these calls (HTTPHandler.closed)
	if tracked {
		h.calls.Add(len(reqs))
	}
	h.pruneStreamsLocked(s, h.opts.Now())
	h.mu.Unlock()
	if s.conn.negotiated() >= Version20251125 {
		es.add(streamEvent{retry: primeRetry})
	}
	for _, m := range first {
		es.message(m)
	}
	for _, m := range reqs {
		ctx, cancel := context.WithCancel(s.ctx)
		h.mu.Lock()
		s.calls[m.ID] = cancel
		h.mu.Unlock()
		nctx := withNotifier(ctx, func(method string, params any) {
			if n, err := jsonrpc.NewNotification(method, params); err == nil {
				es.message(n)
			}
		})
		go func() {
			if tracked {
				defer h.calls.Done()
			}
			res, err := run(nctx, m)
			cancel()
			es.message(serveResponse(m.ID, res, err))
			h.mu.Lock()
			delete(s.calls, m.ID)
			s.active--
			s.lastUsed = h.opts.Now()
			h.mu.Unlock()
			es.callEnded(h.opts.Now())
		}()
	}
	return es
}

// pruneStreamsLocked drops finished streams older than the replay window,
// and the oldest finished ones beyond maxFinishedStreams.
func (h *HTTPHandler) pruneStreamsLocked(s *serveSession, now time.Time) {
	var finished []*eventStream
	for num, es := range s.streams {
		es.mu.Lock()
		at := es.finished
		es.mu.Unlock()
		switch {
		case at.IsZero():
		case now.Sub(at) > h.opts.ReplayWindow:
			delete(s.streams, num)
		default:
			finished = append(finished, es)
		}
	}
	for len(finished) > maxFinishedStreams {
		oldest := 0
		for i, es := range finished {
			if es.num < finished[oldest].num {
				oldest = i
			}
		}
		delete(s.streams, finished[oldest].num)
		finished = append(finished[:oldest], finished[oldest+1:]...)
	}
}

// follow writes a stream's events after seq `after` (-1: from the start)
// to w as they come, with keep-alive comments while none does, until the
// stream is finished and written, the client goes away (ctx), or another
// writer attaches (a resumption on a new connection).
func (h *HTTPHandler) follow(ctx context.Context, w http.ResponseWriter, fl http.Flusher, es *eventStream, after int) {
	es.mu.Lock()
	es.writer++
	me := es.writer
	es.changedLocked() // an older writer sees it is replaced
	es.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	tick := time.NewTicker(h.opts.KeepAlive)
	defer tick.Stop()
	next := after + 1
	for {
		es.mu.Lock()
		if es.writer != me {
			es.mu.Unlock()
			return
		}
		var todo []streamEvent
		for _, e := range es.events {
			if e.seq >= next {
				todo = append(todo, e)
			}
		}
		done := !es.finished.IsZero()
		wake := es.wake
		es.mu.Unlock()
		for _, e := range todo {
			if err := sse.WriteRetry(w, sse.Event{ID: es.id(e.seq), Data: string(e.data)}, e.retry); err != nil {
				return
			}
			next = e.seq + 1
		}
		if len(todo) > 0 {
			fl.Flush()
		}
		if done && len(todo) == 0 {
			return
		}
		if done {
			continue // what was written may have raced the last events
		}
		select {
		case <-wake:
		case <-tick.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		case <-ctx.Done():
			return
		}
	}
}

// resume answers GET with Last-Event-ID in a session: the events of that
// stream after that event, then the rest as they come. An id that names no
// stream kept (never made, or past the replay window) is a 400: the
// session itself is fine, so 404 (which ends the session for the client)
// would be wrong.
func (h *HTTPHandler) resume(w http.ResponseWriter, r *http.Request, lastID string) {
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		refuse(w, http.StatusBadRequest)
		return
	}
	if _, okStream := acceptance(r); !okStream {
		refuse(w, http.StatusNotAcceptable)
		return
	}
	s := h.acquire(sid)
	if s == nil {
		refuse(w, http.StatusNotFound)
		return
	}
	defer h.release(s)
	if hv := strings.TrimSpace(r.Header.Get("Mcp-Protocol-Version")); !h.sessionHeader(hv, s.conn.negotiated()) {
		refuse(w, http.StatusBadRequest)
		return
	}
	num, seq, ok := parseEventID(lastID)
	h.mu.Lock()
	h.pruneStreamsLocked(s, h.opts.Now())
	es := s.streams[num]
	h.mu.Unlock()
	if !ok || es == nil {
		refuse(w, http.StatusBadRequest)
		return
	}
	es.mu.Lock()
	known := seq < es.next
	es.mu.Unlock()
	fl, canFlush := w.(http.Flusher)
	if !known || !canFlush {
		refuse(w, http.StatusBadRequest)
		return
	}
	h.follow(r.Context(), w, fl, es, seq)
}

// sessionHeader reports whether an MCP-Protocol-Version header fits a
// session of revision v: absent (the revisions before 2025-06-18 send
// none), or a session-based revision the server speaks. The session's own
// revision decides what the server does; the specification requires a 400
// only for an invalid or unsupported value (2025-11-25 transports
// "Protocol Version Header").
func (h *HTTPHandler) sessionHeader(hv, v string) bool {
	if hv == "" || hv == v {
		return true
	}
	for _, l := range h.srv.legacy {
		if l == hv {
			return true
		}
	}
	return false
}

func badProtocolHeader(hv, v string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("Bad Request: MCP-Protocol-Version %s is not a revision of this server's sessions (this session's is %s)", hv, v)}
}
