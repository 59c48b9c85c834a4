package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"agent/internal/sse"
)

func TestErrorKinds(t *testing.T) {
	cases := []struct {
		name      string
		status    int
		code, msg string
		kind      error
		retryable bool
	}{
		{"a bad request", 400, "invalid_request_error", "bad", ErrInvalidRequest, false},
		{"the context-length code", 400, "context_length_exceeded", "", ErrContextTooLong, false},
		{"a prompt-too-long message", 400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", ErrContextTooLong, false},
		{"a maximum-context-length message without a code", 400, "", "This model's maximum context length is 65536 tokens", ErrContextTooLong, false},
		{"401 is authentication", 401, "", "", ErrAuthentication, false},
		{"402 (payment) is authentication", 402, "", "", ErrAuthentication, false},
		{"403 is authentication", 403, "permission_error", "", ErrAuthentication, false},
		{"404 is an invalid request", 404, "", "", ErrInvalidRequest, false},
		{"a redirect is an invalid request", 307, "", "", ErrInvalidRequest, false},
		{"408 is a timeout, retried", 408, "", "", ErrTimeout, true},
		{"409 is upstream, retried", 409, "", "", ErrUpstream, true},
		{"413 is context too long", 413, "", "", ErrContextTooLong, false},
		{"422 is an invalid request", 422, "", "", ErrInvalidRequest, false},
		{"429 is rate limited, retried", 429, "", "", ErrRateLimited, true},
		{"a 500 is upstream whatever its message", 500, "", "maximum context length", ErrUpstream, true},
		{"529 overloaded is upstream, retried", 529, "overloaded_error", "", ErrUpstream, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := APIError(c.status, c.code, c.msg)
			if !errors.Is(e, c.kind) || e.Retryable != c.retryable {
				t.Errorf("%d %s %q: %v retryable=%v", c.status, c.code, c.msg, e.Kind, e.Retryable)
			}
			for _, other := range []error{ErrAuthentication, ErrRateLimited, ErrInvalidRequest, ErrContextTooLong, ErrUpstream, ErrTimeout, ErrCancelled} {
				if other != c.kind && errors.Is(e, other) {
					t.Errorf("%d: also %v", c.status, other)
				}
			}
		})
	}
	// Wrapped, the kind and the cause are both reachable.
	e := &Error{Kind: ErrCancelled, Provider: "local", Err: context.Canceled}
	wrapped := fmt.Errorf("turn: %w", e)
	var pe *Error
	if !errors.Is(wrapped, ErrCancelled) || !errors.Is(wrapped, context.Canceled) || !errors.As(wrapped, &pe) || pe.Provider != "local" {
		t.Errorf("wrapped: %v", wrapped)
	}
	got := (&Error{Kind: ErrRateLimited, Provider: "messages", Status: 429, Code: "rate_limit_error", Message: "slow", RetryAfter: 3 * time.Second, RequestID: "req_1"}).Error()
	if got != "messages: rate limited (429 rate_limit_error): slow; retry after 3s [request req_1]" {
		t.Errorf("Error() = %q", got)
	}
}

func TestClean(t *testing.T) {
	if got := Clean("a\x1b[31mb\x00c\td\ne\u0085f\xff", 100); got != "a[31mbc\td\nef" {
		t.Errorf("clean = %q", got)
	}
	long := strings.Repeat("é", 10)
	if got := Clean(long, 5); got != "éé…" {
		t.Errorf("clean long = %q", got)
	}
}

// The wait a response asks for; an absurd one counts as longer than any
// wait honoured (RetryAfterTooLong), never as none (docs/providers.md,
// "Deadlines and retries").
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name string
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{"seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second, true},
		{"fractional seconds", http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond, true},
		{"milliseconds win", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond, true},
		{"zero", http.Header{"Retry-After": {"0"}}, 0, true},
		{"spaces", http.Header{"Retry-After": {" 4 "}}, 4 * time.Second, true},
		{"HTTP date", http.Header{"Retry-After": {now.Add(7 * time.Second).Format(http.TimeFormat)}}, 7 * time.Second, true},
		{"HTTP date in the past", http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0, true},
		{"a day", http.Header{"Retry-After": {"86400"}}, 24 * time.Hour, true},
		{"negative seconds", http.Header{"Retry-After": {"-1"}}, RetryAfterTooLong, true},
		{"negative milliseconds", http.Header{"Retry-After-Ms": {"-250"}}, RetryAfterTooLong, true},
		{"seconds beyond a Duration", http.Header{"Retry-After": {"9300000000000"}}, RetryAfterTooLong, true},
		{"seconds beyond int64", http.Header{"Retry-After": {"99999999999999999999999"}}, RetryAfterTooLong, true},
		{"milliseconds beyond int64", http.Header{"Retry-After-Ms": {"9223372036854775808"}}, RetryAfterTooLong, true},
		{"beyond a float", http.Header{"Retry-After": {"1e400"}}, RetryAfterTooLong, true},
		{"infinity", http.Header{"Retry-After-Ms": {"Inf"}}, RetryAfterTooLong, true},
		{"not a number", http.Header{"Retry-After": {"NaN"}}, RetryAfterTooLong, true},
		{"HTTP date far ahead", http.Header{"Retry-After": {"Fri, 31 Dec 9999 23:59:59 GMT"}}, RetryAfterTooLong, true},
		{"HTTP date years ahead", http.Header{"Retry-After": {now.AddDate(100, 0, 0).Format(http.TimeFormat)}}, now.AddDate(100, 0, 0).Sub(now), true},
		{"bad milliseconds fall back to seconds", http.Header{"Retry-After-Ms": {"soon"}, "Retry-After": {"2"}}, 2 * time.Second, true},
		{"text", http.Header{"Retry-After": {"soon"}}, 0, false},
		{"none", http.Header{}, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := RetryAfter(c.h, now)
			if got != c.want || ok != c.ok {
				t.Fatalf("RetryAfter(%v) = %v, %v; want %v, %v", c.h, got, ok, c.want, c.ok)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	for n, base := range map[int]time.Duration{1: 500 * time.Millisecond, 2: time.Second, 3: 2 * time.Second, 5: 8 * time.Second, 9: 8 * time.Second, 70: 8 * time.Second} {
		for range 100 {
			if d := backoff(n); d > base || d < base*3/4 {
				t.Fatalf("backoff(%d) = %v, want %v less up to a quarter", n, d, base)
			}
		}
	}
}

func TestCollector(t *testing.T) {
	var c Collector
	for _, ev := range []Event{
		{Type: EventReasoningDelta, Index: 0, Text: "think"},
		{Type: EventReasoningDelta, Index: 0, Text: "ing"},
		{Type: EventReasoningDelta, Index: 0, Signature: "sig"},
		{Type: EventReasoningDelta, Index: 1, Redacted: "opaque"},
		{Type: EventTextDelta, Index: 2, Text: "Hel"},
		{Type: EventToolCallStart, Index: 3, ID: "c1", Name: "Read"},
		{Type: EventTextDelta, Index: 2, Text: "lo"},
		{Type: EventToolCallDelta, Index: 3, Text: `{"a":`},
		{Type: EventToolCallStart, Index: 4, ID: "c2", Name: "Bash"},
		{Type: EventToolCallDelta, Index: 3, Text: `1}`},
		{Type: EventToolCallEnd, Index: 3},
		{Type: EventToolCallEnd, Index: 4},
		{Type: EventUsage, Usage: Usage{InputTokens: 1}},
		{Type: EventUsage, Usage: Usage{InputTokens: 5, OutputTokens: 7}},
		{Type: EventFinish, Finish: FinishToolCalls, Raw: "tool_use"},
	} {
		c.Add(ev)
	}
	m := c.Message()
	want := Message{Role: RoleAssistant, Content: []Part{
		Reasoning{Text: "thinking", Signature: "sig"},
		Reasoning{Redacted: "opaque"},
		Text{Text: "Hello"},
		ToolCall{ID: "c1", Name: "Read", Arguments: json.RawMessage(`{"a":1}`)},
		ToolCall{ID: "c2", Name: "Bash", Arguments: json.RawMessage(`{}`)},
	}}
	if fmt.Sprintf("%#v", m) != fmt.Sprintf("%#v", want) {
		t.Errorf("message\n%#v\nwant\n%#v", m, want)
	}
	if c.Text() != "Hello" || c.Usage().OutputTokens != 7 || len(c.ToolCalls()) != 2 {
		t.Errorf("text %q usage %+v calls %d", c.Text(), c.Usage(), len(c.ToolCalls()))
	}
	if f, raw := c.Finish(); f != FinishToolCalls || raw != "tool_use" {
		t.Errorf("finish %v %q", f, raw)
	}
	if err := (&Request{Messages: []Message{m}}).Validate(); err != nil {
		t.Errorf("a collected message is a valid request message: %v", err)
	}
}

func TestValidate(t *testing.T) {
	user := Message{Role: RoleUser, Content: []Part{Text{Text: "hi"}}}
	temp := 3.0
	bad := map[string]Request{
		"empty":               {},
		"unknown role":        {Messages: []Message{{Role: "robot"}}},
		"image in system":     {Messages: []Message{{Role: RoleSystem, Content: []Part{Image{URL: "x"}}}}},
		"text in tool":        {Messages: []Message{{Role: RoleTool, Content: []Part{Text{Text: "x"}}}}},
		"reasoning in user":   {Messages: []Message{{Role: RoleUser, Content: []Part{Reasoning{Text: "x"}}}}},
		"nil part":            {Messages: []Message{{Role: RoleUser, Content: []Part{nil}}}},
		"image both":          {Messages: []Message{{Role: RoleUser, Content: []Part{Image{URL: "x", Data: []byte{1}, MediaType: "image/png"}}}}},
		"image no type":       {Messages: []Message{{Role: RoleUser, Content: []Part{Image{Data: []byte{1}}}}}},
		"call without id":     {Messages: []Message{{Role: RoleAssistant, Content: []Part{ToolCall{Name: "x"}}}}},
		"result without id":   {Messages: []Message{{Role: RoleTool, Content: []Part{ToolResult{}}}}},
		"result with call":    {Messages: []Message{{Role: RoleTool, Content: []Part{ToolResult{CallID: "a", Content: []Part{ToolCall{ID: "a", Name: "b"}}}}}}},
		"long tool name":      {Messages: []Message{user}, Tools: []Tool{{Name: strings.Repeat("a", 65)}}},
		"tool name dot":       {Messages: []Message{user}, Tools: []Tool{{Name: "a.b"}}},
		"duplicate tool":      {Messages: []Message{user}, Tools: []Tool{{Name: "a"}, {Name: "a"}}},
		"schema not object":   {Messages: []Message{user}, Tools: []Tool{{Name: "a", Schema: json.RawMessage(`[]`)}}},
		"required no tools":   {Messages: []Message{user}, ToolChoice: ToolChoice{Mode: ToolRequired}},
		"named unknown":       {Messages: []Message{user}, Tools: []Tool{{Name: "a"}}, ToolChoice: ToolChoice{Mode: ToolNamed, Name: "b"}},
		"bad mode":            {Messages: []Message{user}, ToolChoice: ToolChoice{Mode: 9}},
		"effort":              {Messages: []Message{user}, Effort: "huge"},
		"max tokens":          {Messages: []Message{user}, MaxTokens: -1},
		"temperature":         {Messages: []Message{user}, Temperature: &temp},
		"schema format empty": {Messages: []Message{user}, ResponseFormat: ResponseFormat{Type: FormatJSONSchema}},
		"format":              {Messages: []Message{user}, ResponseFormat: ResponseFormat{Type: 7}},
		"cache static system beyond the system messages": {Messages: []Message{user}, Cache: Cache{StaticSystem: 1}},
		"cache negative static system":                   {Messages: []Message{user}, Cache: Cache{StaticSystem: -1}},
		"cache prefix beyond the messages":               {Messages: []Message{user}, Cache: Cache{Prefix: 2}},
		"cache negative prefix":                          {Messages: []Message{user}, Cache: Cache{Prefix: -1}},
	}
	for name, r := range bad {
		if err := r.Validate(); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%s: %v", name, err)
		}
	}
	good := Request{Messages: []Message{
		{Role: RoleSystem, Content: []Part{Text{Text: "s"}}},
		user,
		{Role: RoleAssistant, Content: []Part{Reasoning{Text: "r"}, ToolCall{ID: "1", Name: "a", Arguments: json.RawMessage(`{"cut off`)}}},
		{Role: RoleTool, Content: []Part{ToolResult{CallID: "1", Content: []Part{Text{Text: "ok"}, Image{URL: "https://x/y.png"}}}}},
	}, Tools: []Tool{{Name: "a", Schema: json.RawMessage(`{"type":"object"}`)}}, ToolChoice: ToolChoice{Mode: ToolNamed, Name: "a"}, Effort: EffortXHigh,
		ResponseFormat: ResponseFormat{Type: FormatJSONSchema, Schema: json.RawMessage(`{"type":"object"}`)},
		Cache:          Cache{Key: "session-1", StaticSystem: 1, Prefix: 4}}
	if err := good.Validate(); err != nil {
		t.Errorf("good: %v", err)
	}
}

// lineDecoder is a minimal decoder: each event's data is a text delta,
// "end" finishes.
type lineDecoder struct{}

func (lineDecoder) Decode(ev sse.Event, out []Event) ([]Event, bool, error) {
	if ev.Data == "end" {
		return append(out, Event{Type: EventFinish, Finish: FinishStop}), true, nil
	}
	return append(out, Event{Type: EventTextDelta, Text: ev.Data}), false, nil
}

func (lineDecoder) End(out []Event) ([]Event, error) {
	return out, &Error{Kind: ErrUpstream, Message: "cut short", Retryable: true}
}

// The default client follows no redirect: a key header must not travel to
// another host.
func TestDefaultClientNoRedirect(t *testing.T) {
	hit := false
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hit = true }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	s := &Sender{Provider: "test"}
	_, err := s.Stream(context.Background(), Call{URL: srv.URL, Header: http.Header{"X-Api-Key": {"k"}}, NewDecoder: func() Decoder { return lineDecoder{} }})
	if !errors.Is(err, ErrInvalidRequest) || hit {
		t.Fatalf("err %v, redirect followed %v", err, hit)
	}
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
}

func TestSenderStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Test") != "1" || r.Header.Get("Accept") != "text/event-stream" {
			w.WriteHeader(400)
			return
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		fmt.Fprintf(w, "data: %s\n\ndata: end\n\n", body)
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	s := &Sender{Provider: "test", Client: &http.Client{Transport: tr}}
	st, err := s.Stream(context.Background(), Call{URL: srv.URL, Header: http.Header{"X-Test": {"1"}}, Body: []byte(`{"x":1}`), NewDecoder: func() Decoder { return lineDecoder{} }})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := st.Next()
	if err != nil || ev.Text != `{"x":1}` {
		t.Fatalf("%+v %v", ev, err)
	}
	if ev, err := st.Next(); err != nil || ev.Type != EventFinish {
		t.Fatalf("%+v %v", ev, err)
	}
	if _, err := st.Next(); err != io.EOF {
		t.Fatalf("after finish: %v", err)
	}
	if _, err := st.Next(); err != io.EOF {
		t.Fatalf("again: %v", err)
	}
	st.Close()
	st.Close()

	// A context cancelled before the call: nothing is sent.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Stream(ctx, Call{URL: srv.URL, NewDecoder: func() Decoder { return lineDecoder{} }}); !errors.Is(err, ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	// The caller's deadline is a timeout.
	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if _, err := s.Stream(ctx, Call{URL: srv.URL, NewDecoder: func() Decoder { return lineDecoder{} }}); !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: %v", err)
	}
}

func TestMissingKeyError(t *testing.T) {
	err := RequireKey("reasoning", "REASONING_API_KEY", "", nil)
	if !errors.Is(err, ErrMissingKey) || err.Error() != "reasoning: missing API key: set REASONING_API_KEY or pass a client" {
		t.Errorf("%v", err)
	}
	if RequireKey("x", "X", "k", nil) != nil || RequireKey("x", "X", "", &http.Client{}) != nil {
		t.Error("a key or a client is enough")
	}
}

// After Close, Next reports the cancellation even when events are already
// buffered.
func TestCloseDropsBuffered(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: a\n\ndata: b\n\ndata: c\n\ndata: end\n\n")
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	s := &Sender{Provider: "test", Client: &http.Client{Transport: tr}}
	st, err := s.Stream(context.Background(), Call{URL: srv.URL, NewDecoder: func() Decoder { return lineDecoder{} }})
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := st.Next(); err != nil || ev.Text != "a" {
		t.Fatal(ev, err)
	}
	st.Close()
	if _, err := st.Next(); !errors.Is(err, ErrCancelled) {
		t.Fatalf("after Close: %v", err)
	}
}

// A JSON object a server writes outside the event format is the API's
// in-stream error when it has an "error" member, and is ignored otherwise.
func TestBareObjectIsAnErrorEventOnlyWithAnErrorMember(t *testing.T) {
	cases := []struct {
		name  string
		data  string
		error bool
	}{
		{"genai error", `{"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}`, true},
		{"pretty-printed", "{\n  \"error\": {\n    \"code\": 429\n  }\n}", true},
		{"messages error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, true},
		{"error text", `{"error": "upstream closed"}`, true},
		{"null error", `{"error": null}`, false},
		{"number error", `{"error": 5}`, false},
		{"no error member", `{"candidates": []}`, false},
		{"nested error only", `{"x": {"error": {}}}`, false},
		{"malformed", `{"error": {"code": 503}`, false},
		{"trailing data", `{"error": {}} x`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev, ok := BareError(sse.Event{Data: c.data, Bare: true})
			if ok != c.error {
				t.Fatalf("ok = %v, want %v", ok, c.error)
			}
			if ok && (ev.Type != "error" || ev.Data != c.data || ev.Bare) {
				t.Fatalf("event %+v", ev)
			}
		})
	}
}

func TestEndpointJoinsThePathBeforeTheQuery(t *testing.T) {
	cases := []struct {
		name, base, path, query, want string
	}{
		{"plain", "http://h/v1", "/chat/completions", "", "http://h/v1/chat/completions"},
		{"trailing slash", "http://h/v1/", "/chat/completions", "", "http://h/v1/chat/completions"},
		{"base query kept", "http://h/v1?key=K", "/chat/completions", "", "http://h/v1/chat/completions?key=K"},
		{"slash before the query", "http://h/v1/?key=K", "/responses", "", "http://h/v1/responses?key=K"},
		{"both queries", "http://h?key=K", "/v1beta/models/m:streamGenerateContent", "alt=sse", "http://h/v1beta/models/m:streamGenerateContent?key=K&alt=sse"},
		{"API query only", "http://h/", "/x", "alt=sse", "http://h/x?alt=sse"},
		{"fragment dropped", "http://h/v1#f", "/x", "", "http://h/v1/x"},
		{"empty query mark", "http://h/v1?", "/x", "", "http://h/v1/x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Endpoint(c.base, c.path, c.query); got != c.want {
				t.Fatalf("Endpoint = %q, want %q", got, c.want)
			}
		})
	}
}

// A transport error from http.Client quotes the URL; the provider's error
// shows it masked and keeps the cause.
func TestTransportErrorsShowTheURLMasked(t *testing.T) {
	raw := "http://127.0.0.1:1/v1/chat/completions?key=SECRET"
	refused := errors.New("connect: connection refused")
	cases := []struct {
		name string
		err  error
	}{
		{"url.Error", &url.Error{Op: "Post", URL: raw, Err: refused}},
		{"wrapped url.Error", fmt.Errorf("executor: %w", &url.Error{Op: "Post", URL: raw, Err: refused})},
		{"text quoting the URL", fmt.Errorf("sending to %s: %w", raw, refused)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := MaskURLError(c.err, raw)
			if strings.Contains(got.Error(), "SECRET") || !strings.Contains(got.Error(), "key=***") || !errors.Is(got, refused) {
				t.Fatalf("%v", got)
			}
		})
	}
	plain := errors.New("unexpected EOF")
	if MaskURLError(plain, raw) != plain {
		t.Error("an error that does not quote the URL is replaced")
	}
}

// executorFunc is an Executor from a function.
type executorFunc func(*http.Request) (*http.Response, error)

func (f executorFunc) Do(req *http.Request) (*http.Response, error) { return f(req) }

// neverAnswers accepts a request and never answers: it returns only when
// the request's context ends, as http.Client does.
func neverAnswers(n *int) Executor {
	return executorFunc(func(req *http.Request) (*http.Response, error) {
		*n++
		<-req.Context().Done()
		return nil, &url.Error{Op: "Post", URL: req.URL.String(), Err: req.Context().Err()}
	})
}

// pacedBody delivers its pieces one at a time, each after gap; after the
// last it blocks until closed when stall is set, else ends.
type pacedBody struct {
	pieces []string
	gap    time.Duration
	stall  bool
	closed chan struct{}
	once   bool
}

func (b *pacedBody) Read(p []byte) (int, error) {
	if len(b.pieces) == 0 {
		if !b.stall {
			return 0, io.EOF
		}
		<-b.closed
		return 0, errors.New("read on closed body")
	}
	select {
	case <-time.After(b.gap):
	case <-b.closed:
		return 0, errors.New("read on closed body")
	}
	n := copy(p, b.pieces[0])
	b.pieces[0] = b.pieces[0][n:]
	if b.pieces[0] == "" {
		b.pieces = b.pieces[1:]
	}
	return n, nil
}

func (b *pacedBody) Close() error {
	if !b.once {
		b.once = true
		close(b.closed)
	}
	return nil
}

// paced answers every request at once with a stream of pieces, gap apart.
func paced(n *int, gap time.Duration, stall bool, pieces ...string) Executor {
	return executorFunc(func(req *http.Request) (*http.Response, error) {
		*n++
		body := &pacedBody{pieces: append([]string(nil), pieces...), gap: gap, stall: stall, closed: make(chan struct{})}
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: body}, nil
	})
}

func drain(st *Stream, err error) (string, error) {
	if err != nil {
		return "", err
	}
	defer st.Close()
	var text strings.Builder
	for {
		ev, err := st.Next()
		if err == io.EOF {
			return text.String(), nil
		}
		if err != nil {
			return text.String(), err
		}
		text.WriteString(ev.Text)
	}
}

// With the default deadlines, a provider that never answers, or answers and
// then sends nothing, fails with a clear timeout within about two minutes,
// retries included; one that keeps sending, keep-alive comments included,
// is never cut (docs/providers.md, "Deadlines and retries").
func TestDefaultDeadlines(t *testing.T) {
	call := Call{URL: "http://api.example/v1/chat/completions", NewDecoder: func() Decoder { return lineDecoder{} }}
	cases := []struct {
		name     string
		ex       func(n *int) Executor
		wantErr  string // "" for success
		text     string
		requests int
		atMost   time.Duration // of the fake clock
		atLeast  time.Duration
	}{
		{"never answers", func(n *int) Executor { return neverAnswers(n) },
			"test: timed out: the server sent no response within 1m0s", "", 2, 2*time.Minute + time.Second, 2 * time.Minute},
		{"answers, then nothing", func(n *int) Executor { return paced(n, 0, true) },
			"test: timed out: the stream stalled: nothing received for 1m0s", "", 2, 2*time.Minute + time.Second, 2 * time.Minute},
		{"an event, then nothing", func(n *int) Executor { return paced(n, 0, true, "data: a\n\n") },
			"test: timed out: the stream stalled: nothing received for 1m0s", "a", 1, time.Minute, time.Minute},
		{"keep-alive comments for twenty minutes", func(n *int) Executor {
			return paced(n, 55*time.Second, false, append(slices.Repeat([]string{": keep-alive\n\n"}, 22), "data: late\n\n", "data: end\n\n")...)
		}, "", "late", 1, time.Hour, 20 * time.Minute},
		{"events slower than the deadline", func(n *int) Executor { return paced(n, 61*time.Second, false, "data: a\n\n", "data: end\n\n") },
			"test: timed out: the stream stalled: nothing received for 1m0s", "", 2, 2*time.Minute + 3*time.Second, 2 * time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n int
				s := &Sender{Provider: "test", Executor: c.ex(&n)}
				start := time.Now()
				text, err := drain(s.Stream(context.Background(), call))
				took := time.Since(start)
				switch {
				case c.wantErr == "" && err != nil, c.wantErr != "" && (err == nil || err.Error() != c.wantErr || !errors.Is(err, ErrTimeout)):
					t.Fatalf("err %v, want %q", err, c.wantErr)
				case text != c.text:
					t.Fatalf("text %q, want %q", text, c.text)
				case n != c.requests:
					t.Fatalf("%d requests, want %d", n, c.requests)
				case took > c.atMost || took < c.atLeast:
					t.Fatalf("took %v, want between %v and %v", took, c.atLeast, c.atMost)
				}
			})
		})
	}
}

func TestRetryWait(t *testing.T) {
	timeout := &Error{Kind: ErrTimeout, Retryable: true, Err: &deadlineError{wait: time.Second}}
	cases := []struct {
		name     string
		attempt  int
		err      *Error
		ok       bool
		min, max time.Duration
	}{
		{"first retry backs off 0.5 s less up to a quarter", 1, &Error{Kind: ErrUpstream, Retryable: true}, true, 375 * time.Millisecond, 500 * time.Millisecond},
		{"second retry doubles", 2, &Error{Kind: ErrUpstream, Retryable: true}, true, 750 * time.Millisecond, time.Second},
		{"no third retry", 3, &Error{Kind: ErrUpstream, Retryable: true}, false, 0, 0},
		{"Retry-After is honoured", 1, &Error{Kind: ErrRateLimited, Retryable: true, RetryAfter: 7 * time.Second}, true, 7 * time.Second, 7 * time.Second},
		{"Retry-After at the limit", 2, &Error{Kind: ErrRateLimited, Retryable: true, RetryAfter: MaxRetryAfter}, true, MaxRetryAfter, MaxRetryAfter},
		{"Retry-After beyond the limit ends the call", 1, &Error{Kind: ErrRateLimited, Retryable: true, RetryAfter: MaxRetryAfter + time.Second}, false, 0, 0},
		{"Retry-After too long to say", 1, &Error{Kind: ErrRateLimited, Retryable: true, RetryAfter: RetryAfterTooLong}, false, 0, 0},
		{"our own deadline: one retry", 1, timeout, true, 375 * time.Millisecond, 500 * time.Millisecond},
		{"our own deadline: not two", 2, timeout, false, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wait, ok := RetryWait(c.attempt, c.err)
			if ok != c.ok || wait < c.min || wait > c.max {
				t.Fatalf("RetryWait = %v, %v; want %v in [%v, %v]", wait, ok, c.ok, c.min, c.max)
			}
		})
	}
}

func TestToolResultTextAndImages(t *testing.T) {
	im := Image{MediaType: "image/png", Data: []byte{1}}
	text, images := ToolResult{Content: []Part{Text{Text: "a"}, im, Text{Text: "b"}}}.TextAndImages()
	if text != "a\nb" || len(images) != 1 || images[0].MediaType != "image/png" {
		t.Fatalf("%q %v", text, images)
	}
	if text, images := (ToolResult{}).TextAndImages(); text != "" || images != nil {
		t.Fatalf("empty: %q %v", text, images)
	}
}
