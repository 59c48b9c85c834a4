// Package video is the video-generation provider (docs/providers.md, "video
// (`providers/video`)"; the specification's VideoProvider implementing
// IVideoGenerationProvider): CreateVideo submits a generation task to the
// video-generation cloud's task API, GetVideoJob reads a task's state and
// result, CancelVideoJob cancels a task still in the queue. It is not a
// chat provider and does not implement providers.Provider.
//
// The wire format is the cloud's asynchronous task API: a task is created
// with POST {base}/api/v1/services/aigc/video-generation/video-synthesis
// and the header X-DashScope-Async: enable; it is read with GET
// {base}/api/v1/tasks/{id} and cancelled with POST
// {base}/api/v1/tasks/{id}/cancel (only while queued).
//
// Imports: the standard library, agent/providers (the shared error kinds).
package video

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"agent/providers"
)

// KeyEnv is the environment variable the key is conventionally read from.
const KeyEnv = "VIDEO_API_KEY"

// DefaultBaseURL is the cloud's API root (the international endpoint of the
// regional cloud, docs/providers.md, "video (`providers/video`)"), used
// when BaseURL is empty.
const DefaultBaseURL = "https://dashscope-intl.aliyuncs.com"

// DefaultModel is used when neither the request nor the options name one.
const DefaultModel = "wan2.2-t2v-plus"

// DefaultTimeout bounds each HTTP exchange when Options.Timeout is zero:
// these are short JSON calls; the generation itself runs on the server.
const DefaultTimeout = 60 * time.Second

// Generator generates videos (docs/providers.md, "video
// (`providers/video`)"). Implementations are safe for concurrent use.
type Generator interface {
	CreateVideo(ctx context.Context, req *Request) (*Job, error)
	GetVideoJob(ctx context.Context, id string) (*Job, error)
	CancelVideoJob(ctx context.Context, id string) (*Job, error)
}

// Request describes a video to generate.
type Request struct {
	Model          string // "" means the options' default
	Prompt         string // required
	NegativePrompt string
	// ImageURL, when set, is the first frame (image-to-video models).
	ImageURL string
	// Size is WIDTH*HEIGHT as the API names it (1280*720); "" is the
	// model's default.
	Size string
	// Duration in seconds; 0 is the model's default.
	Duration int
	// Seed makes a generation repeatable when set.
	Seed *int
	// PromptExtend lets the service rewrite the prompt; nil is its
	// default.
	PromptExtend *bool
}

// State is a job's state.
type State string

// Job states.
const (
	StateQueued    State = "queued"
	StateRunning   State = "running"
	StateSucceeded State = "succeeded"
	StateFailed    State = "failed"
	StateCancelled State = "cancelled"
)

// Done reports whether the state is final.
func (s State) Done() bool {
	return s == StateSucceeded || s == StateFailed || s == StateCancelled
}

// Job is a video-generation task.
type Job struct {
	ID    string
	State State
	// VideoURL is the result (StateSucceeded); the service keeps it for a
	// limited time.
	VideoURL string
	// Code and Message explain StateFailed, as the service reports them.
	Code      string
	Message   string
	RequestID string
	// SubmittedAt and EndedAt, when the service reports them.
	SubmittedAt time.Time
	EndedAt     time.Time
}

// Error kinds of this provider beyond the shared ones (the video Error's
// Kind is one of these or providers.ErrAuthentication, ErrRateLimited,
// ErrTimeout, ErrInvalidRequest, ErrUpstream or ErrCancelled).
var (
	// ErrJobNotFound: the service knows no job with that id (never
	// created, or expired).
	ErrJobNotFound = errors.New("job not found")
	// ErrJobNotCancellable: the job has left the queue; only queued jobs
	// can be cancelled.
	ErrJobNotCancellable = errors.New("job not cancellable")
)

// Error is a failed call: the shared provider error, with Provider
// "video" and Op the operation (createVideo, getVideoJob,
// cancelVideoJob). Test its kind with errors.Is.
type Error = providers.Error

// Options configure the provider. The zero value of each field is its
// default.
type Options struct {
	// APIKey is required; it is sent as a bearer token.
	APIKey string
	// BaseURL is the API root; "" means DefaultBaseURL.
	BaseURL      string
	DefaultModel string // "" means DefaultModel
	// Timeout bounds each HTTP exchange; zero means DefaultTimeout.
	Timeout  time.Duration
	Client   *http.Client       // nil: a client that follows no redirects
	Executor providers.Executor // sends requests; nil means Client
	Logger   *slog.Logger       // nil is silent
	// Header holds extra headers for every request.
	Header http.Header
}

// Provider is the video provider, the Generator of the cloud's
// asynchronous task API. It is safe for concurrent use.
type Provider struct {
	opts Options
	base string
	ex   providers.Executor
	log  *slog.Logger
}

// New returns the provider, or a *providers.MissingKeyError naming
// VIDEO_API_KEY.
func New(opts Options) (*Provider, error) {
	if err := providers.RequireKey("video", KeyEnv, opts.APIKey, nil); err != nil {
		return nil, err
	}
	base := strings.TrimRight(opts.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("video: base URL %q: want the API root as an http or https URL", providers.RedactURL(opts.BaseURL))
	}
	p := &Provider{opts: opts, base: base, ex: opts.Executor, log: opts.Logger}
	if p.ex == nil {
		c := opts.Client
		if c == nil {
			// Redirects would carry the key to another host.
			c = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		}
		p.ex = c
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.opts.Timeout <= 0 {
		p.opts.Timeout = DefaultTimeout
	}
	return p, nil
}

// CreateVideo submits a generation task and returns the queued job.
func (p *Provider) CreateVideo(ctx context.Context, req *Request) (*Job, error) {
	const op = "createVideo"
	if req == nil || strings.TrimSpace(req.Prompt) == "" {
		return nil, &Error{Provider: "video", Kind: providers.ErrInvalidRequest, Op: op, Message: "a prompt is required"}
	}
	if req.Duration < 0 {
		return nil, &Error{Provider: "video", Kind: providers.ErrInvalidRequest, Op: op, Message: "negative duration"}
	}
	if req.ImageURL != "" {
		if u, err := url.Parse(req.ImageURL); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
			return nil, &Error{Provider: "video", Kind: providers.ErrInvalidRequest, Op: op, Message: "the image URL is not an http or https URL"}
		}
	}
	model := req.Model
	if model == "" {
		model = p.opts.DefaultModel
	}
	if model == "" {
		model = DefaultModel
	}
	type input struct {
		Prompt         string `json:"prompt"`
		NegativePrompt string `json:"negative_prompt,omitempty"`
		ImgURL         string `json:"img_url,omitempty"`
	}
	type parameters struct {
		Size         string `json:"size,omitempty"`
		Duration     int    `json:"duration,omitempty"`
		Seed         *int   `json:"seed,omitempty"`
		PromptExtend *bool  `json:"prompt_extend,omitempty"`
	}
	body, err := json.Marshal(struct {
		Model      string      `json:"model"`
		Input      input       `json:"input"`
		Parameters *parameters `json:"parameters,omitempty"`
	}{model, input{req.Prompt, req.NegativePrompt, req.ImageURL}, &parameters{req.Size, req.Duration, req.Seed, req.PromptExtend}})
	if err != nil {
		return nil, &Error{Provider: "video", Kind: providers.ErrInvalidRequest, Op: op, Err: err}
	}
	// Only a refusal (429) is retried: any other failure may have created
	// a task, and a second one would be paid twice.
	resp, err := p.do(ctx, op, http.MethodPost, "/api/v1/services/aigc/video-generation/video-synthesis", body, func(e *Error) bool { return e.Status == 429 })
	if err != nil {
		return nil, err
	}
	return p.job(op, resp)
}

// GetVideoJob reads a job's state and, once it succeeded, its video URL.
func (p *Provider) GetVideoJob(ctx context.Context, id string) (*Job, error) {
	const op = "getVideoJob"
	if !validID(id) {
		return nil, &Error{Provider: "video", Kind: providers.ErrInvalidRequest, Op: op, Message: "malformed job id"}
	}
	resp, err := p.do(ctx, op, http.MethodGet, "/api/v1/tasks/"+id, nil, retryable)
	if err != nil {
		return nil, err
	}
	return p.job(op, resp)
}

// CancelVideoJob cancels a queued job. A job that has started, finished or
// does not exist cannot be cancelled (ErrJobNotCancellable,
// ErrJobNotFound).
func (p *Provider) CancelVideoJob(ctx context.Context, id string) (*Job, error) {
	const op = "cancelVideoJob"
	if !validID(id) {
		return nil, &Error{Provider: "video", Kind: providers.ErrInvalidRequest, Op: op, Message: "malformed job id"}
	}
	resp, err := p.do(ctx, op, http.MethodPost, "/api/v1/tasks/"+id+"/cancel", nil, retryable)
	if err != nil {
		return nil, err
	}
	return &Job{ID: id, State: StateCancelled, RequestID: resp.RequestID}, nil
}

// validID accepts the service's task ids (UUIDs) and refuses anything that
// could change the request path.
func validID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// wireResponse is every answer of the task API: an error (code, message)
// or a task (output).
type wireResponse struct {
	RequestID string `json:"request_id"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	Output    *struct {
		TaskID     string `json:"task_id"`
		TaskStatus string `json:"task_status"`
		VideoURL   string `json:"video_url"`
		SubmitTime string `json:"submit_time"`
		EndTime    string `json:"end_time"`
		Code       string `json:"code"`
		Message    string `json:"message"`
	} `json:"output"`
}

// job reads the task in a response.
func (p *Provider) job(op string, r *wireResponse) (*Job, error) {
	if r.Output == nil || r.Output.TaskID == "" && r.Output.TaskStatus != "UNKNOWN" {
		return nil, &Error{Provider: "video", Kind: providers.ErrUpstream, Op: op, Message: "the response holds no task", RequestID: providers.Clean(r.RequestID, 200)}
	}
	o := r.Output
	j := &Job{ID: providers.Clean(o.TaskID, 200), VideoURL: o.VideoURL, Code: providers.Clean(o.Code, 200), Message: providers.Clean(o.Message, providers.MaxMessage), RequestID: providers.Clean(r.RequestID, 200)}
	switch o.TaskStatus {
	case "PENDING":
		j.State = StateQueued
	case "RUNNING":
		j.State = StateRunning
	case "SUCCEEDED":
		j.State = StateSucceeded
		if u, err := url.Parse(o.VideoURL); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
			return nil, &Error{Provider: "video", Kind: providers.ErrUpstream, Op: op, Message: "the finished task has no usable video URL", RequestID: j.RequestID}
		}
	case "FAILED":
		j.State = StateFailed
	case "CANCELED":
		j.State = StateCancelled
	case "UNKNOWN":
		// The service's answer for ids it does not know or has expired.
		return nil, &Error{Provider: "video", Kind: ErrJobNotFound, Op: op, Code: "UNKNOWN", Message: "no such job (never created, or expired)", RequestID: j.RequestID}
	default:
		return nil, &Error{Provider: "video", Kind: providers.ErrUpstream, Op: op, Message: "unknown task status " + strconv.Quote(providers.Clean(o.TaskStatus, 50)), RequestID: j.RequestID}
	}
	j.SubmittedAt = parseTime(o.SubmitTime)
	j.EndedAt = parseTime(o.EndTime)
	return j, nil
}

// parseTime reads the service's "2006-01-02 15:04:05.000" times (UTC+8 on
// the service; kept as reported, without a zone).
func parseTime(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05.999", s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// maxBody bounds a response read.
const maxBody = 1 << 20

// do sends one call, retrying as docs/providers.md, "Deadlines and
// retries", allows (providers.RetryWait) when retry says the failure may be
// retried, and decodes the JSON answer.
func (p *Provider) do(ctx context.Context, op, method, path string, body []byte, retry func(*Error) bool) (*wireResponse, error) {
	for attempt := 1; ; attempt++ {
		r, err := p.once(ctx, op, method, path, body)
		if err == nil {
			return r, nil
		}
		if !retry(err) || ctx.Err() != nil {
			return nil, err
		}
		wait, ok := providers.RetryWait(attempt, err)
		if !ok {
			return nil, err
		}
		p.log.Warn("video request failed; retrying", "op", op, "attempt", attempt, "wait", wait, "error", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, p.ctxError(ctx, op)
		case <-t.C:
		}
	}
}

// retryable: the transient failures of docs/providers.md, "Deadlines and
// retries", never a job the service does not know or cannot cancel.
func retryable(e *Error) bool {
	if e.Kind == ErrJobNotCancellable || e.Kind == ErrJobNotFound {
		return false
	}
	return e.Status == 408 || e.Status == 409 || e.Status == 429 || e.Status >= 500 ||
		e.Status == 0 && (e.Kind == providers.ErrUpstream || e.Kind == providers.ErrTimeout) && e.Err != nil
}

func (p *Provider) ctxError(ctx context.Context, op string) *Error {
	cause := context.Cause(ctx)
	if errors.Is(cause, context.DeadlineExceeded) {
		return &Error{Provider: "video", Kind: providers.ErrTimeout, Op: op, Err: cause}
	}
	return &Error{Provider: "video", Kind: providers.ErrCancelled, Op: op, Err: cause}
}

// errNoResponse is the cause of a call that the timeout ended.
var errNoResponse = fmt.Errorf("%w: no complete response within the timeout", providers.ErrNoAnswer)

func (p *Provider) once(ctx context.Context, op, method, path string, body []byte) (*wireResponse, *Error) {
	actx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	var rd io.Reader = http.NoBody
	if body != nil {
		rd = bytes.NewReader(body)
	}
	target := providers.Endpoint(p.base, path, "")
	req, err := http.NewRequestWithContext(actx, method, target, rd)
	if err != nil {
		return nil, &Error{Provider: "video", Kind: providers.ErrInvalidRequest, Op: op, Err: providers.MaskURLError(err, target)}
	}
	for k, vs := range p.opts.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Authorization", "Bearer "+p.opts.APIKey)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-DashScope-Async", "enable") // the task API answers at once with the task
	}
	resp, err := p.ex.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, p.ctxError(ctx, op)
		}
		if actx.Err() != nil {
			return nil, &Error{Provider: "video", Kind: providers.ErrTimeout, Op: op, Err: errNoResponse}
		}
		// The error quotes the URL, which may hold a key
		// (docs/providers.md, "Endpoint paths and masked URLs").
		return nil, &Error{Provider: "video", Kind: providers.ErrUpstream, Op: op, Err: providers.MaskURLError(err, target)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, p.ctxError(ctx, op)
		}
		if actx.Err() != nil {
			return nil, &Error{Provider: "video", Kind: providers.ErrTimeout, Op: op, Err: errNoResponse}
		}
		return nil, &Error{Provider: "video", Kind: providers.ErrUpstream, Op: op, Err: err}
	}
	if len(data) > maxBody {
		return nil, &Error{Provider: "video", Kind: providers.ErrUpstream, Op: op, Status: resp.StatusCode, Message: "the response is larger than 1 MiB"}
	}
	var w wireResponse
	jsonErr := json.Unmarshal(data, &w)
	if resp.StatusCode/100 != 2 {
		return nil, statusError(op, resp, &w, data, jsonErr)
	}
	if jsonErr != nil {
		return nil, &Error{Provider: "video", Kind: providers.ErrUpstream, Op: op, Status: resp.StatusCode, Message: "the response is not JSON", Err: jsonErr}
	}
	if w.Code != "" && w.Output == nil {
		// An error reported with a 200 status.
		return nil, classify(op, 0, &w)
	}
	return &w, nil
}

func statusError(op string, resp *http.Response, w *wireResponse, data []byte, jsonErr error) *Error {
	if jsonErr != nil {
		*w = wireResponse{Message: strings.TrimSpace(string(data))}
	}
	e := classify(op, resp.StatusCode, w)
	if e.RequestID == "" {
		e.RequestID = providers.Clean(resp.Header.Get("X-Request-Id"), 200)
	}
	if d, ok := providers.RetryAfter(resp.Header, time.Now()); ok {
		e.RetryAfter = d // an absurd value counts as too long, never as no wait
	}
	return e
}

// classify maps a status and the service's error code to a kind.
func classify(op string, status int, w *wireResponse) *Error {
	e := &Error{Provider: "video", Op: op, Status: status, Code: providers.Clean(w.Code, 200), Message: providers.Clean(w.Message, providers.MaxMessage), RequestID: providers.Clean(w.RequestID, 200)}
	code := w.Code
	switch {
	case op == "cancelVideoJob" && (code == "UnsupportedOperation" || status == 409):
		e.Kind = ErrJobNotCancellable
	case status == 404 || code == "NotFound" || strings.HasSuffix(code, ".NotFound"):
		e.Kind = ErrJobNotFound
	case status == 401 || status == 403 || code == "InvalidApiKey" || strings.HasPrefix(code, "AccessDenied") || code == "Arrearage":
		e.Kind = providers.ErrAuthentication
	case status == 429 || strings.HasPrefix(code, "Throttling"):
		e.Kind = providers.ErrRateLimited
	case status == 408 || status == 504 || code == "RequestTimeOut":
		e.Kind = providers.ErrTimeout
	case status >= 500 || code == "InternalError" || strings.HasPrefix(code, "InternalError"):
		e.Kind = providers.ErrUpstream
	case status >= 400 || strings.HasPrefix(code, "Invalid") || code == "DataInspectionFailed":
		e.Kind = providers.ErrInvalidRequest
	default:
		e.Kind = providers.ErrUpstream
	}
	return e
}

var _ Generator = (*Provider)(nil)
