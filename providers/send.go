package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"agent/internal/jsonscan"
	"agent/internal/sse"
)

// Executor sends one HTTP request: the `executor` option (docs/providers.md,
// "Options shared by every chat provider"), through
// which a provider sends its requests. *http.Client satisfies it, and is
// the default (direct sending). An Executor must be safe for concurrent
// use and honour the request's context.
type Executor interface {
	Do(req *http.Request) (*http.Response, error)
}

// PayloadLogger receives a summary of every request a provider sends, one
// per attempt (the `payloadLogger` option). It may be called from several
// goroutines at once and should return quickly. Summaries never hold keys,
// headers or message text.
type PayloadLogger interface {
	LogPayload(ctx context.Context, s PayloadSummary)
}

// PayloadSummary describes one request.
type PayloadSummary struct {
	Provider string
	URL      string // query values and credential-like path parts masked (RedactURL)
	Model    string
	Messages int
	Tools    int
	Bytes    int // size of the JSON body
	Attempt  int // 1 for the first, 2 and 3 for retries
}

// Limits of docs/providers.md, "Shared plumbing"; its "Deadlines and
// retries" gives the reasoning.
const (
	// DefaultTimeout is the first-byte deadline and the idle watchdog's
	// period when a provider's Timeout is zero. A silent server costs two
	// of them (MaxTimeoutRetries) and a backoff: about two minutes. Sixty
	// seconds is also the read timeout of a default nginx proxy, so a
	// server that streams through proxies already sends something (an
	// event, a ping, a keep-alive comment) more often than that.
	DefaultTimeout = 60 * time.Second
	// MaxRetries is how many times a failed request is sent again.
	MaxRetries = 2
	// MaxTimeoutRetries is how many times a request is sent again after
	// the provider's own deadline ran out (nothing received within
	// Timeout): once, which gets past a connection that died unnoticed,
	// so that a server that never answers fails within two deadlines.
	MaxTimeoutRetries = 1
	// MaxRetryAfter is the longest server-requested wait honoured; a
	// longer one ends the call with the error and its RetryAfter.
	MaxRetryAfter = 60 * time.Second

	backoffBase = 500 * time.Millisecond
	backoffMax  = 8 * time.Second
	maxErrBody  = 64 << 10
)

var defaultClient = &http.Client{
	// Redirects are not followed: an API answers in place, and following
	// one would carry the key's custom header to another host.
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// Sender is the HTTP plumbing every provider shares (docs/providers.md,
// "Shared plumbing"). A provider builds one at construction; it is safe for
// concurrent use and must not be changed after its first use.
type Sender struct {
	Provider string // provider id for errors and logs
	// Executor sends the requests; nil means Client.
	Executor Executor
	// Client sends the requests when Executor is nil; nil means a client
	// that follows no redirects and has no overall timeout.
	Client *http.Client
	// Logger receives debug and warning records; nil is silent.
	Logger *slog.Logger
	// PayloadLogger receives a summary of each request; nil means none.
	PayloadLogger PayloadLogger
	// Timeout is both the deadline for the response (from sending to its
	// headers) and the idle watchdog: the longest wait for the next bytes
	// of the body. Anything received counts, an API's ping events and
	// keep-alive comment lines included, so a slow stream that keeps
	// sending is never cut; zero means DefaultTimeout. There is no overall
	// deadline: a healthy stream is never cut, however long.
	Timeout time.Duration
	// MaxLine bounds one SSE line; zero means sse.DefaultMaxLine (16 MiB).
	MaxLine int
	// ParseError extracts the API's error code and message from an error
	// response body (at most 64 KiB); nil leaves them empty.
	ParseError func(body []byte) (code, message string)
}

// Call is one streaming request.
type Call struct {
	URL    string
	Header http.Header // sent with every attempt (authentication, versions)
	Body   []byte      // JSON
	// NewDecoder returns a fresh decoder for each attempt's response.
	NewDecoder func() Decoder
	Summary    PayloadSummary
	// Release, when set, is called once the stream has ended and the
	// transport has closed every attempt's request body: Body is then
	// the caller's again (to be reused for the next request). A transport
	// that never closes a body never releases it.
	Release func()
}

// Decoder turns one API's server-sent events into Events. It does no I/O,
// so it can be fuzzed and benchmarked alone; a fresh one decodes each
// response and it is not safe for concurrent use.
type Decoder interface {
	// Decode appends the events of one server-sent event to out. done
	// reports the API's end-of-stream marker. An error ends the stream
	// after the events appended with it: an *Error for the API's in-stream
	// error form or an ErrUpstream for a malformed payload.
	Decode(ev sse.Event, out []Event) (events []Event, done bool, err error)
	// End is called when the body ends without the end marker. It appends
	// the final events when the API allows such an ending, or returns an
	// error for a stream that was cut short.
	End(out []Event) ([]Event, error)
}

var errClosed = errors.New("stream closed")

// ErrNoAnswer is wrapped by the cause of an ErrTimeout that the client's
// own deadline ended (nothing received within the provider's Timeout),
// as opposed to a 408 or the caller's deadline. Such a failure is retried
// at most MaxTimeoutRetries times.
var ErrNoAnswer = errors.New("no answer within the deadline")

// deadlineError is the cause of an ErrTimeout from the provider's own
// deadlines: no response within Timeout, or a stream that went silent
// for Timeout.
type deadlineError struct {
	wait    time.Duration
	started bool // the response had begun: the idle watchdog fired
}

// Is makes the error match ErrNoAnswer.
func (e *deadlineError) Is(target error) bool { return target == ErrNoAnswer }

func (e *deadlineError) Error() string {
	if e.started {
		return "the stream stalled: nothing received for " + e.wait.String()
	}
	return "the server sent no response within " + e.wait.String()
}

func (s *Sender) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

func (s *Sender) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return silent
}

var silent = slog.New(slog.DiscardHandler)

func (s *Sender) executor() Executor {
	switch {
	case s.Executor != nil:
		return s.Executor
	case s.Client != nil:
		return s.Client
	}
	return defaultClient
}

// Stream sends c, retrying as docs/providers.md, "Deadlines and retries",
// allows, and returns the stream once a response has begun. Errors are
// *Error values.
func (s *Sender) Stream(ctx context.Context, c Call) (*Stream, error) {
	sctx, cancel := context.WithCancelCause(ctx)
	st := &Stream{s: s, call: c, parent: ctx, ctx: sctx, cancel: cancel}
	st.holds.Store(1)
	if err := st.connect(); err != nil {
		st.fail(err)
		return nil, st.err
	}
	return st, nil
}

// Stream is the answer to one chat call: call Next until it returns an
// error (io.EOF after the Finish event). Next is not safe for concurrent
// use, but Close may be called from any goroutine at any time to end the
// stream; Next then returns an ErrCancelled error. No goroutine outlives
// the stream.
type Stream struct {
	s      *Sender
	call   Call
	parent context.Context
	ctx    context.Context // parent plus Close
	cancel context.CancelCauseFunc

	attempt   int
	delivered bool // an event reached the caller: no more retries

	// The current attempt.
	actx    context.Context
	acancel context.CancelCauseFunc
	timer   *time.Timer
	stopAF  func() bool
	body    io.ReadCloser
	rd      *sse.Reader
	dec     Decoder

	pending []Event
	head    int
	done    bool
	err     error

	closeOnce sync.Once
	// holds counts the stream itself and each request body the transport
	// has not closed yet; Call.Release runs when it reaches zero.
	holds       atomic.Int32
	releaseOnce sync.Once
}

// unhold drops one hold on the call's body.
func (st *Stream) unhold() {
	if st.holds.Add(-1) == 0 && st.call.Release != nil {
		st.call.Release()
	}
}

// heldBody is one attempt's request body: its Close drops the attempt's
// hold, once.
type heldBody struct {
	*bytes.Reader
	once sync.Once
	st   *Stream
}

func (b *heldBody) Close() error {
	b.once.Do(b.st.unhold)
	return nil
}

// newBody returns a reader of the call's body that holds it until closed.
func (st *Stream) newBody() io.ReadCloser {
	st.holds.Add(1)
	return &heldBody{Reader: bytes.NewReader(st.call.Body), st: st}
}

// Next returns the next event; io.EOF after the Finish event; an *Error
// when the call fails. After an error, Next keeps returning it.
func (st *Stream) Next() (Event, error) {
	if st.err == nil && st.ctx.Err() != nil {
		// Ended by the caller: events already read are dropped.
		st.pending, st.head = st.pending[:0], 0
		st.fail(st.stopped())
	}
	for {
		if st.head < len(st.pending) {
			ev := st.pending[st.head]
			st.head++
			st.delivered = true
			return ev, nil
		}
		if st.err != nil {
			return Event{}, st.err
		}
		if st.done {
			st.release()
			st.err = io.EOF
			return Event{}, io.EOF
		}
		st.pending, st.head = st.pending[:0], 0
		if err := st.step(); err != nil {
			if !st.delivered && st.retry(err) {
				st.pending = st.pending[:0]
				if err := st.connect(); err != nil {
					st.fail(err)
				}
				continue
			}
			st.fail(err)
			st.delivered = true // events decoded with the error go first
		}
	}
}

// Close ends the stream and releases its connection. It is idempotent and
// safe to call concurrently with Next.
func (st *Stream) Close() error {
	st.closeOnce.Do(func() { st.cancel(errClosed) })
	return nil
}

// step reads one server-sent event and decodes it into st.pending.
func (st *Stream) step() error {
	ev, err := st.rd.Next()
	if err == io.EOF {
		st.pending, err = st.dec.End(st.pending)
		st.done = true
		return st.own(err)
	}
	if err != nil {
		return st.readError(err)
	}
	if ev.Bare {
		var ok bool
		if ev, ok = BareError(ev); !ok {
			return nil // ignored, as the format ignores lines it does not know
		}
	}
	var done bool
	st.pending, done, err = st.dec.Decode(ev, st.pending)
	if done {
		st.done = true
	}
	return st.own(err)
}

// own completes an error from a decoder with the provider's name.
func (st *Stream) own(err error) error {
	if err == nil {
		return nil
	}
	var pe *Error
	if !errors.As(err, &pe) {
		pe = &Error{Kind: ErrUpstream, Err: err}
	}
	if pe.Provider == "" {
		pe.Provider = st.s.Provider
	}
	return pe
}

// readError classifies a failed read of the body.
func (st *Stream) readError(err error) error {
	if e := st.stopped(); e != nil {
		return e
	}
	if de := st.deadline(); de != nil {
		return &Error{Kind: ErrTimeout, Provider: st.s.Provider, Err: de, Retryable: true}
	}
	if errors.Is(err, sse.ErrLineTooLong) {
		return &Error{Kind: ErrUpstream, Provider: st.s.Provider, Err: err}
	}
	return &Error{Kind: ErrUpstream, Provider: st.s.Provider, Err: MaskURLError(err, st.call.URL), Retryable: true}
}

// deadline returns the cause of the current attempt's end when one of the
// provider's own deadlines ended it, or nil.
func (st *Stream) deadline() *deadlineError {
	de, _ := context.Cause(st.actx).(*deadlineError)
	return de
}

// stopped returns the error for a stream the caller ended (cancelled
// context, its deadline, or Close), or nil.
func (st *Stream) stopped() error {
	cause := context.Cause(st.ctx)
	if cause == nil {
		return nil
	}
	if errors.Is(cause, context.DeadlineExceeded) {
		return &Error{Kind: ErrTimeout, Provider: st.s.Provider, Err: cause}
	}
	return &Error{Kind: ErrCancelled, Provider: st.s.Provider, Err: cause}
}

// fail ends the stream with err.
func (st *Stream) fail(err error) {
	if e := st.stopped(); e != nil {
		err = e // the caller's cancellation explains whatever else failed
	}
	st.release()
	st.err = err
}

// release ends the current attempt and, once, the stream's context.
func (st *Stream) release() {
	st.endAttempt()
	st.cancel(nil)
	st.releaseOnce.Do(st.unhold)
}

func (st *Stream) endAttempt() {
	if st.timer != nil {
		st.timer.Stop()
		st.timer = nil
	}
	if st.stopAF != nil {
		st.stopAF()
		st.stopAF = nil
	}
	if st.body != nil {
		st.body.Close()
		st.body = nil
	}
	if st.acancel != nil {
		st.acancel(nil)
		st.acancel = nil
	}
}

// connect sends the request until a response stream begins, retrying
// transient failures.
func (st *Stream) connect() error {
	for {
		err := st.send()
		if err == nil {
			return nil
		}
		if !st.retry(err) {
			return err
		}
	}
}

// retry decides whether err may be retried and waits the backoff. It
// returns false when the call must end with err.
func (st *Stream) retry(err error) bool {
	st.endAttempt()
	var pe *Error
	if !errors.As(err, &pe) || !pe.Retryable || st.stopped() != nil {
		return false
	}
	wait, ok := RetryWait(st.attempt, pe)
	if !ok {
		return false
	}
	st.s.log().Warn("provider request failed; retrying", "provider", st.s.Provider, "attempt", st.attempt, "wait", wait, "error", err)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-st.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// RetryWait decides whether a failure of attempt (1-based) whose kind
// allows a retry may be sent again, and after how long (docs/providers.md,
// "Deadlines and retries"): at most MaxRetries retries, MaxTimeoutRetries
// of them after the client's own deadline; the server's Retry-After when it
// sent one, unless it is longer than MaxRetryAfter (then the failure is
// reported), else the backoff. Every provider that retries, streaming or
// not, decides with it.
func RetryWait(attempt int, pe *Error) (time.Duration, bool) {
	if attempt > MaxRetries || errors.Is(pe.Err, ErrNoAnswer) && attempt > MaxTimeoutRetries {
		return 0, false
	}
	if pe.RetryAfter > 0 {
		if pe.RetryAfter > MaxRetryAfter {
			return 0, false
		}
		return pe.RetryAfter, true
	}
	return backoff(attempt), true
}

// backoff is the wait before retry n (1-based): 0.5 s doubling to 8 s,
// less up to a quarter at random so that clients spread out.
func backoff(n int) time.Duration {
	d := backoffBase << (n - 1)
	if d > backoffMax || d <= 0 {
		d = backoffMax
	}
	return d - time.Duration(rand.Int64N(int64(d/4)+1))
}

// send makes one attempt: it sends the request and checks the response.
func (st *Stream) send() error {
	if e := st.stopped(); e != nil {
		return e
	}
	st.attempt++
	st.done = false
	s := st.s
	st.actx, st.acancel = context.WithCancelCause(st.ctx)
	req, err := http.NewRequestWithContext(st.actx, http.MethodPost, st.call.URL, http.NoBody)
	if err != nil {
		return &Error{Kind: ErrInvalidRequest, Provider: s.Provider, Err: MaskURLError(err, st.call.URL)}
	}
	// The body as NewRequest would set it up for a bytes.Reader, but held:
	// Call.Release waits for the transport to close it.
	if len(st.call.Body) > 0 {
		req.Body, req.ContentLength = st.newBody(), int64(len(st.call.Body))
		req.GetBody = func() (io.ReadCloser, error) { return st.newBody(), nil }
	}
	for k, vs := range st.call.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if s.PayloadLogger != nil {
		sum := st.call.Summary
		sum.Provider, sum.URL, sum.Bytes, sum.Attempt = s.Provider, RedactURL(st.call.URL), len(st.call.Body), st.attempt
		s.PayloadLogger.LogPayload(st.parent, sum)
	}
	s.log().Debug("provider request", "provider", s.Provider, "url", RedactURL(st.call.URL), "bytes", len(st.call.Body), "attempt", st.attempt)

	// The first-byte deadline (docs/providers.md, "Deadlines and retries"):
	// until the response begins. Then the idle watchdog, reset by every
	// read that brings bytes.
	acancel, wait := st.acancel, s.timeout()
	st.timer = time.AfterFunc(wait, func() { acancel(&deadlineError{wait: wait}) })
	resp, err := s.executor().Do(req)
	if err != nil {
		if e := st.stopped(); e != nil {
			return e
		}
		if de := st.deadline(); de != nil {
			return &Error{Kind: ErrTimeout, Provider: s.Provider, Err: de, Retryable: true}
		}
		// The URL may hold a key in its query or path: the error that
		// quotes it is masked before it reaches a message, a log or the
		// transcript (docs/providers.md, "Endpoint paths and masked URLs").
		return &Error{Kind: ErrUpstream, Provider: s.Provider, Err: MaskURLError(err, st.call.URL), Retryable: true}
	}
	if !st.timer.Stop() {
		// The deadline ran out as the response arrived.
		resp.Body.Close()
		return &Error{Kind: ErrTimeout, Provider: s.Provider, Err: &deadlineError{wait: wait}, Retryable: true}
	}
	st.timer = time.AfterFunc(wait, func() { acancel(&deadlineError{wait: wait, started: true}) })
	st.body = resp.Body
	// An executor's body may not watch the context: close it when the
	// attempt ends so that a blocked read returns.
	body := resp.Body
	st.stopAF = context.AfterFunc(st.actx, func() { body.Close() })

	// Any bytes count as life: events, pings and keep-alive comments.
	resp.Body = &activity{r: resp.Body, timer: st.timer, wait: wait}
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode/100 != 2 || ctype == "application/json" {
		return st.statusError(resp)
	}
	st.rd = sse.NewReader(resp.Body, ReaderOptions(s.MaxLine))
	st.dec = st.call.NewDecoder()
	return nil
}

// statusError builds the error for a response that is not a stream.
func (st *Stream) statusError(resp *http.Response) error {
	s := st.s
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrBody))
	if err != nil && len(body) == 0 {
		if e := st.stopped(); e != nil {
			return e
		}
	}
	status := resp.StatusCode
	if status/100 == 2 {
		// A JSON body where a stream was asked for: an error report from a
		// gateway, or a server that ignores "stream".
		status = 0
	}
	var code, msg string
	if s.ParseError != nil {
		code, msg = s.ParseError(body)
	}
	if code == "" && msg == "" && status != 0 && !json.Valid(body) {
		msg = strings.TrimSpace(string(body)) // a proxy's text or HTML page
	}
	var e *Error
	if status == 0 {
		e = &Error{Kind: ErrUpstream, Code: Clean(code, 200), Message: Clean(msg, MaxMessage)}
		if e.Message == "" && e.Code == "" {
			e.Message = "the response is JSON, not an event stream"
		}
	} else {
		e = APIError(status, code, msg)
	}
	e.Provider = s.Provider
	e.RequestID = Clean(firstHeader(resp.Header, "Request-Id", "X-Request-Id"), 200)
	if d, ok := RetryAfter(resp.Header, time.Now()); ok {
		e.RetryAfter = d
	}
	switch strings.ToLower(resp.Header.Get("X-Should-Retry")) {
	case "true":
		e.Retryable = true
	case "false":
		e.Retryable = false
	}
	return e
}

// activity resets the idle watchdog whenever a read brings bytes.
type activity struct {
	r     io.ReadCloser
	timer *time.Timer
	wait  time.Duration
}

func (a *activity) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.timer.Reset(a.wait)
	}
	return n, err
}

func (a *activity) Close() error { return a.r.Close() }

// ReaderOptions are the options of every provider's event reader: lines
// bounded by maxLine (zero: 16 MiB, docs/providers.md, "Shared plumbing"),
// and JSON objects written outside the event format read whole
// (sse.Options.BareJSON), as some APIs report an error that occurs after
// the stream began (see BareError).
func ReaderOptions(maxLine int) sse.Options {
	return sse.Options{MaxLine: maxLine, BareJSON: true}
}

// BareError returns the event a decoder reads for a JSON object a server
// wrote outside the event format (sse.Event.Bare): an "error" event with
// the object as its data when the object reports an error (an "error"
// member holding an object or a text), which the decoder types as it types
// the API's own in-stream errors (docs/providers.md, "Shared plumbing").
// The genai API sends an error that occurs after streaming began so, as a
// bare object over one or several lines, and the chat-completions servers
// of some vendors send a bare {"error": ...} line; the vendors' clients
// raise them. Any other bare object reports nothing: ok is false and it is
// ignored, as the format ignores lines it does not know.
func BareError(ev sse.Event) (sse.Event, bool) {
	var sc jsonscan.Scanner
	sc.Reset(ev.Data)
	found := false
	if sc.Object() {
		for sc.More() {
			if sc.Key() == "error" {
				switch sc.Peek() {
				case jsonscan.Object, jsonscan.String:
					found = true
				}
			}
			sc.Skip()
		}
	}
	if sc.Done() != nil || !found {
		return sse.Event{}, false
	}
	return sse.Event{Type: "error", Data: ev.Data}, true
}

func firstHeader(h http.Header, names ...string) string {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			return v
		}
	}
	return ""
}
