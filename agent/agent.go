package agent

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"agent/agent/tools"
	"agent/internal/quote"
	"agent/providers"
)

// The Agent API (docs/reference/runtime.md, "The Agent API"). Any provider
// can be passed to an Agent, to Query or to a Runtime; switching providers
// changes only which provider is used.

// ModelRef names a provider (by its id, for example "messages") and a
// model slug, which passes to the endpoint verbatim.
type ModelRef struct {
	Provider string
	Model    string
}

// Options configure an Agent. Providers and DefaultModel are required;
// the zero value of everything else is: no system message, no tools,
// every call that does not inspect denied, nobody to ask.
type Options struct {
	Name string
	// Providers by id: "messages", "responses", "genai", "reasoning",
	// "regional", "local", or an embedder's own id.
	Providers     map[string]providers.Provider
	DefaultModel  ModelRef
	SystemMessage string

	Tools       []tools.Tool
	Permissions Permissions
	Prompter    Prompter
	Workspace   string
	MaxTokens   int
	MaxSteps    int
	Transcript  *Transcript
}

// ErrUnknownProvider is returned when a ModelRef names a provider the
// agent was not given.
var ErrUnknownProvider = errors.New("unknown provider")

func (o Options) provider(ref ModelRef) (providers.Provider, error) {
	if len(o.Providers) == 0 {
		return nil, ErrNoProvider
	}
	p := o.Providers[ref.Provider]
	if p == nil {
		ids := make([]string, 0, len(o.Providers))
		for id := range o.Providers {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		return nil, fmt.Errorf("%w %q: the agent has %v", ErrUnknownProvider, quote.V(ref.Provider), ids)
	}
	return p, nil
}

func (o Options) session(id string) (*Session, error) {
	p, err := o.provider(o.DefaultModel)
	if err != nil {
		return nil, err
	}
	return NewSession(SessionOptions{
		ID: id, Provider: p, ProviderID: o.DefaultModel.Provider, Model: o.DefaultModel.Model,
		SystemPrompt: o.SystemMessage, MaxTokens: o.MaxTokens, MaxSteps: o.MaxSteps,
		Tools: o.Tools, Permissions: o.Permissions, Prompter: o.Prompter,
		Workspace: o.Workspace, Transcript: o.Transcript,
	})
}

// Agent is a named conversation with a model: Run runs a turn, SetModel
// switches provider and model with no other change.
type Agent struct {
	opts    Options
	session *Session
}

// New starts an agent. Close ends it.
func New(opts Options) (*Agent, error) {
	s, err := opts.session("")
	if err != nil {
		return nil, err
	}
	return &Agent{opts: opts, session: s}, nil
}

// Name is the agent's name.
func (a *Agent) Name() string { return a.opts.Name }

// Session is the agent's session, for its events and queue.
func (a *Agent) Session() *Session { return a.session }

// Run runs one turn and returns its result; a turn that fails returns the
// result with Status StatusError and Err set, and a nil error.
func (a *Agent) Run(ctx context.Context, prompt string) (TurnResult, error) {
	return a.session.Run(ctx, prompt)
}

// SetModel switches provider and model for the following turns; the
// conversation, tools and permissions stay (docs/reference/runtime.md, "The
// Agent API").
func (a *Agent) SetModel(ref ModelRef) error {
	p, err := a.opts.provider(ref)
	if err != nil {
		return err
	}
	a.session.SetModel(ref.Provider, p, ref.Model)
	return nil
}

// Model is the current provider and model.
func (a *Agent) Model() ModelRef {
	id, m := a.session.Model()
	return ModelRef{Provider: id, Model: m}
}

// Close ends the agent's session; idempotent.
func (a *Agent) Close() error { return a.session.Close() }

// Query runs one prompt with a fresh agent and returns the result: the
// one-shot form of the API.
func Query(ctx context.Context, opts Options, prompt string) (TurnResult, error) {
	a, err := New(opts)
	if err != nil {
		return TurnResult{}, err
	}
	defer a.Close()
	return a.Run(ctx, prompt)
}

// Runtime owns sessions that share one configuration: an embedder's
// server keeps one per conversation and finds them by id.
type Runtime struct {
	opts Options

	mu       sync.Mutex
	sessions map[string]*Session
	closed   bool
}

// NewRuntime checks the options and returns an empty runtime.
func NewRuntime(opts Options) (*Runtime, error) {
	if _, err := opts.provider(opts.DefaultModel); err != nil {
		return nil, err
	}
	return &Runtime{opts: opts, sessions: map[string]*Session{}}, nil
}

// StartSession starts a session with the runtime's options; id "" picks
// a new one. An id in use is an error.
func (r *Runtime) StartSession(id string) (*Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	if _, ok := r.sessions[id]; ok && id != "" {
		return nil, fmt.Errorf("session %q exists", quote.V(id))
	}
	s, err := r.opts.session(id)
	if err != nil {
		return nil, err
	}
	r.sessions[s.ID()] = s
	return s, nil
}

// Session finds a live session.
func (r *Runtime) Session(id string) (*Session, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sessions[id]
	return s, ok
}

// Sessions lists the live sessions' ids, sorted.
func (r *Runtime) Sessions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.sessions))
	for id := range r.sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// SetModel switches one session's provider and model.
func (r *Runtime) SetModel(id string, ref ModelRef) error {
	s, ok := r.Session(id)
	if !ok {
		return fmt.Errorf("no session %q", quote.V(id))
	}
	p, err := r.opts.provider(ref)
	if err != nil {
		return err
	}
	s.SetModel(ref.Provider, p, ref.Model)
	return nil
}

// EndSession closes a session and forgets it.
func (r *Runtime) EndSession(id string) error {
	r.mu.Lock()
	s, ok := r.sessions[id]
	delete(r.sessions, id)
	r.mu.Unlock()
	if !ok {
		return fmt.Errorf("no session %q", quote.V(id))
	}
	return s.Close()
}

// Close ends every session; idempotent.
func (r *Runtime) Close() error {
	r.mu.Lock()
	r.closed = true
	ss := r.sessions
	r.sessions = map[string]*Session{}
	r.mu.Unlock()
	var err error
	for _, s := range ss {
		err = errors.Join(err, s.Close())
	}
	return err
}
