package video

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"agent/providers"
	pt "agent/providers/providertest"
)

// fakeCloud is the task API: tasks move queued → running → succeeded (or
// failed, for prompts containing "fail") one step per read; queued tasks
// can be cancelled.
type fakeCloud struct {
	mu      sync.Mutex
	tasks   map[string]string // id → status
	n       int
	creates []map[string]any
	headers []http.Header
}

func (f *fakeCloud) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.headers = append(f.headers, r.Header.Clone())
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer video-key" {
		w.WriteHeader(401)
		io.WriteString(w, `{"request_id":"rq-auth","code":"InvalidApiKey","message":"Invalid API-key provided."}`)
		return
	}
	switch {
	case r.Method == "POST" && r.URL.Path == "/api/v1/services/aigc/video-generation/video-synthesis":
		if r.Header.Get("X-DashScope-Async") != "enable" {
			w.WriteHeader(400)
			io.WriteString(w, `{"request_id":"rq","code":"InvalidParameter","message":"async header missing"}`)
			return
		}
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		f.creates = append(f.creates, body)
		f.n++
		id := "task-" + string(rune('0'+f.n))
		status := "PENDING"
		if strings.Contains(body["input"].(map[string]any)["prompt"].(string), "fail") {
			status = "PENDING-FAIL"
		}
		f.tasks[id] = status
		io.WriteString(w, `{"output":{"task_status":"PENDING","task_id":"`+id+`"},"request_id":"rq-create"}`)
	case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/api/v1/tasks/"):
		id := strings.TrimPrefix(r.URL.Path, "/api/v1/tasks/")
		status, ok := f.tasks[id]
		switch {
		case !ok:
			io.WriteString(w, `{"request_id":"rq-get","output":{"task_id":"`+id+`","task_status":"UNKNOWN"}}`)
			return
		case status == "PENDING":
			status = "RUNNING"
		case status == "PENDING-FAIL":
			status = "FAILED"
		case status == "RUNNING":
			status = "SUCCEEDED"
		}
		f.tasks[id] = status
		out := `{"task_id":"` + id + `","task_status":"` + status + `","submit_time":"2025-09-29 14:18:52.331"`
		switch status {
		case "SUCCEEDED":
			out += `,"end_time":"2025-09-29 14:20:01.002","video_url":"https://cdn.example/` + id + `.mp4"`
		case "FAILED":
			out += `,"code":"DataInspectionFailed","message":"Input data may contain inappropriate content.\u001b[31m"`
		}
		io.WriteString(w, `{"request_id":"rq-get","output":`+out+`}}`)
	case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/cancel"):
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/v1/tasks/"), "/cancel")
		if f.tasks[id] != "PENDING" {
			w.WriteHeader(400)
			io.WriteString(w, `{"request_id":"rq-cancel","code":"UnsupportedOperation","message":"Failed to cancel the task, please confirm if the task is in PENDING status."}`)
			return
		}
		f.tasks[id] = "CANCELED"
		io.WriteString(w, `{"request_id":"rq-cancel"}`)
	default:
		w.WriteHeader(404)
		io.WriteString(w, `{"request_id":"rq","code":"NotFound","message":"no route"}`)
	}
}

func cloud(t *testing.T) (*fakeCloud, *Provider) {
	f := &fakeCloud{tasks: map[string]string{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	p, err := New(Options{APIKey: "video-key", BaseURL: srv.URL, Client: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return f, p
}

func TestLifecycle(t *testing.T) {
	f, p := cloud(t)
	ctx := context.Background()
	seed, extend := 7, false
	job, err := p.CreateVideo(ctx, &Request{Prompt: "a cat on a boat", NegativePrompt: "blur", Size: "1280*720", Duration: 5, Seed: &seed, PromptExtend: &extend})
	if err != nil || job.State != StateQueued || job.ID != "task-1" || job.RequestID != "rq-create" {
		t.Fatalf("%+v %v", job, err)
	}
	body, _ := json.Marshal(f.creates[0])
	if string(body) != `{"input":{"negative_prompt":"blur","prompt":"a cat on a boat"},"model":"wan2.2-t2v-plus","parameters":{"duration":5,"prompt_extend":false,"seed":7,"size":"1280*720"}}` {
		t.Errorf("create body %s", body)
	}
	for _, want := range []State{StateRunning, StateSucceeded} {
		job, err = p.GetVideoJob(ctx, "task-1")
		if err != nil || job.State != want {
			t.Fatalf("want %s: %+v %v", want, job, err)
		}
	}
	if !job.State.Done() || job.VideoURL != "https://cdn.example/task-1.mp4" || job.SubmittedAt.IsZero() || job.EndedAt.Second() != 1 {
		t.Errorf("finished job %+v", job)
	}
	// A running or finished job cannot be cancelled.
	if _, err := p.CancelVideoJob(ctx, "task-1"); !errors.Is(err, ErrJobNotCancellable) || !strings.Contains(err.Error(), "UnsupportedOperation") {
		t.Errorf("cancel finished: %v", err)
	}
	// A queued job can; it then reads as cancelled.
	job, _ = p.CreateVideo(ctx, &Request{Model: "wan2.2-i2v-plus", Prompt: "waves", ImageURL: "https://img.example/first.png"})
	if c, err := p.CancelVideoJob(ctx, job.ID); err != nil || c.State != StateCancelled {
		t.Fatalf("cancel queued: %+v %v", c, err)
	}
	if job, err = p.GetVideoJob(ctx, job.ID); err != nil || job.State != StateCancelled || !job.State.Done() {
		t.Errorf("after cancel %+v %v", job, err)
	}
	if f.creates[1]["model"] != "wan2.2-i2v-plus" || f.creates[1]["input"].(map[string]any)["img_url"] != "https://img.example/first.png" {
		t.Errorf("image-to-video body %v", f.creates[1])
	}
	// A failed job carries the service's reason, control characters removed.
	job, _ = p.CreateVideo(ctx, &Request{Prompt: "please fail"})
	p.GetVideoJob(ctx, job.ID)
	job, err = p.GetVideoJob(ctx, job.ID)
	if err != nil || job.State != StateFailed || job.Code != "DataInspectionFailed" || strings.ContainsRune(job.Message, 0x1b) {
		t.Errorf("failed job %+v %v", job, err)
	}
	// Unknown ids.
	if _, err := p.GetVideoJob(ctx, "task-9"); !errors.Is(err, ErrJobNotFound) {
		t.Errorf("unknown job: %v", err)
	}
	if _, err := p.CancelVideoJob(ctx, "task-9"); !errors.Is(err, ErrJobNotCancellable) {
		t.Errorf("cancel unknown job: %v", err)
	}
	for _, h := range f.headers {
		if h.Get("Authorization") != "Bearer video-key" {
			t.Errorf("headers %v", h)
		}
	}
}

// Bad input is refused before any request; ids cannot change the path.
func TestRefusedBeforeSending(t *testing.T) {
	f, p := cloud(t)
	ctx := context.Background()
	for _, req := range []*Request{nil, {Prompt: "  "}, {Prompt: "x", Duration: -1}, {Prompt: "x", ImageURL: "file:///etc/passwd"}} {
		if _, err := p.CreateVideo(ctx, req); !errors.Is(err, providers.ErrInvalidRequest) {
			t.Errorf("%+v: %v", req, err)
		}
	}
	for _, id := range []string{"", "../services", "a/b", "a?b", strings.Repeat("a", 129)} {
		if _, err := p.GetVideoJob(ctx, id); !errors.Is(err, providers.ErrInvalidRequest) {
			t.Errorf("get %q: %v", id, err)
		}
		if _, err := p.CancelVideoJob(ctx, id); !errors.Is(err, providers.ErrInvalidRequest) {
			t.Errorf("cancel %q: %v", id, err)
		}
	}
	if len(f.headers) != 0 {
		t.Errorf("%d requests sent", len(f.headers))
	}
	if _, err := New(Options{}); !errors.Is(err, providers.ErrMissingKey) || !strings.Contains(err.Error(), "VIDEO_API_KEY") {
		t.Errorf("missing key: %v", err)
	}
	if _, err := New(Options{APIKey: "k", BaseURL: "ftp://x"}); err == nil {
		t.Error("bad base URL accepted")
	}
	bad, _ := New(Options{APIKey: "wrong-key", BaseURL: p.base, Client: &http.Client{}})
	_, err := bad.GetVideoJob(ctx, "task-1")
	var ve *Error
	if !errors.Is(err, providers.ErrAuthentication) || !errors.As(err, &ve) || ve.Code != "InvalidApiKey" || strings.Contains(err.Error(), "wrong-key") {
		t.Errorf("bad key: %v", err)
	}
}

// Errors are typed; reads and cancels are retried as docs/providers.md,
// "Deadlines and retries", says, a create only when it was refused (429):
// anything else may have created a task.
func TestErrorsAndRetries(t *testing.T) {
	ok := `{"request_id":"r","output":{"task_id":"t1","task_status":"RUNNING"}}`
	created := `{"request_id":"r","output":{"task_id":"t1","task_status":"PENDING"}}`
	cases := []struct {
		name     string
		op       string
		script   []pt.Response
		kind     error
		requests int
	}{
		{"get 500 then ok", "get", []pt.Response{pt.Status(500, `{"code":"InternalError","message":"boom"}`), pt.Status(200, ok)}, nil, 2},
		{"get 503 three times", "get", []pt.Response{pt.Status(503, `{"code":"ServiceUnavailable"}`)}, providers.ErrUpstream, 3},
		{"get connection error then ok", "get", []pt.Response{{Err: errors.New("connection reset")}, pt.Status(200, ok)}, nil, 2},
		{"get 429 with Retry-After", "get", []pt.Response{pt.Status(429, `{"code":"Throttling.RateQuota","message":"Requests rate limit exceeded"}`, "Retry-After", "2"), pt.Status(200, ok)}, nil, 2},
		{"get 429 too long to wait", "get", []pt.Response{pt.Status(429, `{"code":"Throttling"}`, "Retry-After", "600")}, providers.ErrRateLimited, 1},
		{"get 429 with an overflowing Retry-After", "get", []pt.Response{pt.Status(429, `{"code":"Throttling"}`, "Retry-After", "1e400"), pt.Status(200, ok)}, providers.ErrRateLimited, 1},
		{"get 429 with a negative Retry-After", "get", []pt.Response{pt.Status(429, `{"code":"Throttling"}`, "Retry-After", "-1"), pt.Status(200, ok)}, providers.ErrRateLimited, 1},
		{"get 404", "get", []pt.Response{pt.Status(404, `{"code":"NotFound","message":"task not found"}`)}, ErrJobNotFound, 1},
		{"get 400", "get", []pt.Response{pt.Status(400, `{"code":"InvalidParameter","message":"bad"}`)}, providers.ErrInvalidRequest, 1},
		{"get 504", "get", []pt.Response{pt.Status(504, `<html>gateway</html>`)}, providers.ErrTimeout, 3},
		{"get not JSON", "get", []pt.Response{pt.Status(200, `<html>`)}, providers.ErrUpstream, 1},
		{"get unknown status", "get", []pt.Response{pt.Status(200, `{"output":{"task_id":"t1","task_status":"PAUSED"}}`)}, providers.ErrUpstream, 1},
		{"get succeeded without URL", "get", []pt.Response{pt.Status(200, `{"output":{"task_id":"t1","task_status":"SUCCEEDED","video_url":"javascript:x"}}`)}, providers.ErrUpstream, 1},
		{"get error with 200", "get", []pt.Response{pt.Status(200, `{"code":"Arrearage","message":"account overdue"}`)}, providers.ErrAuthentication, 1},
		{"create 429 then ok", "create", []pt.Response{pt.Status(429, `{"code":"Throttling"}`), pt.Status(200, created)}, nil, 2},
		{"create 500 not retried", "create", []pt.Response{pt.Status(500, `{"code":"InternalError"}`), pt.Status(200, created)}, providers.ErrUpstream, 1},
		{"create connection error not retried", "create", []pt.Response{{Err: errors.New("reset")}, pt.Status(200, created)}, providers.ErrUpstream, 1},
		{"create content refused", "create", []pt.Response{pt.Status(400, `{"code":"DataInspectionFailed","message":"inappropriate"}`)}, providers.ErrInvalidRequest, 1},
		{"cancel 409", "cancel", []pt.Response{pt.Status(409, `{"code":"Conflict"}`)}, ErrJobNotCancellable, 1},
		{"cancel 502 then ok", "cancel", []pt.Response{pt.Status(502, ``), pt.Status(200, `{"request_id":"r"}`)}, nil, 2},
		{"huge body", "get", []pt.Response{pt.Status(200, `{"x":"`+strings.Repeat("a", 2<<20)+`"}`)}, providers.ErrUpstream, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ex := pt.NewReplay(c.script...)
				p, _ := New(Options{APIKey: "k", Executor: ex})
				var err error
				switch c.op {
				case "get":
					_, err = p.GetVideoJob(context.Background(), "t1")
				case "create":
					_, err = p.CreateVideo(context.Background(), &Request{Prompt: "p"})
				case "cancel":
					_, err = p.CancelVideoJob(context.Background(), "t1")
				}
				if c.kind == nil && err != nil || c.kind != nil && !errors.Is(err, c.kind) {
					t.Errorf("err %v, want %v", err, c.kind)
				}
				if ex.Requests() != c.requests {
					t.Errorf("%d requests, want %d", ex.Requests(), c.requests)
				}
			})
		})
	}
}

// A server that never answers ends the call at the timeout; the caller's
// cancellation ends it at once.
func TestTimeoutAndCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Stalled or silent: the timeout, retried once
		// (providers.MaxTimeoutRetries).
		for _, r := range []pt.Response{{Status: 200, Body: []byte(`{"output":{}}`), Stall: true}, {NoAnswer: true}} {
			ex := pt.NewReplay(r)
			p, _ := New(Options{APIKey: "k", Executor: ex, Timeout: 5 * time.Second})
			start := time.Now()
			_, err := p.GetVideoJob(context.Background(), "t1")
			if !errors.Is(err, providers.ErrTimeout) || ex.Requests() != 2 || time.Since(start) > 11*time.Second {
				t.Errorf("stalled: %v after %d requests and %v", err, ex.Requests(), time.Since(start))
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(time.Second); cancel() }()
		p, _ := New(Options{APIKey: "k", Executor: pt.NewReplay(pt.Response{NoAnswer: true})})
		_, err := p.GetVideoJob(ctx, "t1")
		if !errors.Is(err, providers.ErrCancelled) {
			t.Errorf("cancelled: %v", err)
		}
	})
}

func FuzzResponse(f *testing.F) {
	f.Add(200, []byte(`{"request_id":"r","output":{"task_id":"t1","task_status":"SUCCEEDED","video_url":"https://x/y.mp4"}}`))
	f.Add(400, []byte(`{"code":"UnsupportedOperation","message":"m"}`))
	f.Add(200, []byte(`{"output":{"task_status":"UNKNOWN"}}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 599 {
			return
		}
		synctest.Test(t, func(t *testing.T) {
			p, _ := New(Options{APIKey: "k", Executor: pt.NewReplay(pt.Status(status, string(body)))})
			job, err := p.GetVideoJob(context.Background(), "t1")
			if (job == nil) == (err == nil) {
				t.Fatalf("job %v and error %v", job, err)
			}
			var ve *Error
			if err != nil && (!errors.As(err, &ve) || ve.Kind == nil) {
				t.Fatalf("untyped error %v", err)
			}
			if job != nil && (job.State == "" || strings.ContainsAny(job.Message, "\x1b\x00")) {
				t.Fatalf("job %+v", job)
			}
		})
	})
}

// refusing fails every request as a closed port does; http.Client quotes
// the URL in its error.
type refusing struct{}

func (refusing) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
}

// The task paths go before the base URL's query, which is sent; an error
// shows the URL masked (docs/providers.md, "Endpoint paths and masked
// URLs").
func TestBaseURLQueryIsSentButNeverShown(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.RequestURI()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"request_id":"rq-get","output":{"task_id":"t1","task_status":"RUNNING"}}`)
	}))
	defer srv.Close()
	p, err := New(Options{APIKey: "k", BaseURL: srv.URL + "/?key=SECRET", Client: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.GetVideoJob(context.Background(), "t1"); err != nil || got != "/api/v1/tasks/t1?key=SECRET" {
		t.Fatalf("request %s: %v", got, err)
	}
	synctest.Test(t, func(t *testing.T) {
		p, err := New(Options{APIKey: "k", BaseURL: "http://127.0.0.1:1/?key=SECRET", Client: &http.Client{Transport: refusing{}}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.GetVideoJob(context.Background(), "t1")
		if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "key=***") {
			t.Fatalf("%v", err)
		}
	})
}
