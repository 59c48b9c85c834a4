package chatcompat

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"agent/providers"
)

// Defaults of docs/providers.md, "reasoning, regional, local
// (`providers/chatcompat`)".
const (
	ReasoningBaseURL      = "https://api.deepseek.com"
	ReasoningDefaultModel = "deepseek-v4-flash"
	ReasoningKeyEnv       = "REASONING_API_KEY"

	RegionalDefaultRegion = "singapore"
	RegionalDefaultModel  = "qwen-plus"
	RegionalKeyEnv        = "REGIONAL_API_KEY"

	LocalBaseURL = "http://127.0.0.1:1234/v1"
	LocalAPIKey  = "lm-studio" // a placeholder: local servers do not check it
)

// RegionalBaseURLs maps the region keys to their endpoints (the
// specification's REGIONAL_PROVIDER_BASE_URLS; docs/providers.md,
// "reasoning, regional, local (`providers/chatcompat`)").
var RegionalBaseURLs = map[string]string{
	"singapore":  "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
	"usVirginia": "https://dashscope-us.aliyuncs.com/compatible-mode/v1",
	"beijing":    "https://dashscope.aliyuncs.com/compatible-mode/v1",
	"hongKong":   "https://cn-hongkong.dashscope.aliyuncs.com/compatible-mode/v1",
}

// Thinking switches the reasoning API's extended thinking
// (docs/providers.md, "reasoning, regional, local
// (`providers/chatcompat`)").
type Thinking string

// Thinking modes; "" leaves the API's default (enabled).
const (
	ThinkingEnabled  Thinking = "enabled"
	ThinkingDisabled Thinking = "disabled"
)

// ReasoningOptions are the reasoning provider's options (docs/providers.md,
// "reasoning, regional, local (`providers/chatcompat`)"). The zero value of
// each field is its default.
type ReasoningOptions struct {
	// APIKey is required unless Client is given (docs/providers.md, "Shared
	// plumbing"); conventionally read from REASONING_API_KEY.
	APIKey string
	// Client is a pre-built client pointed at the reasoning endpoint; it
	// adds its own credentials when APIKey is empty.
	Client          *http.Client
	BaseURL         string // default ReasoningBaseURL
	DefaultModel    string // default ReasoningDefaultModel
	Thinking        Thinking
	ReasoningEffort providers.Effort // default effort; Request.Effort wins
	Timeout         time.Duration    // see providers.Sender.Timeout
	Executor        providers.Executor
	Logger          *slog.Logger
	PayloadLogger   providers.PayloadLogger
}

// ReasoningProvider speaks to the reasoning-model endpoint. Its reasoning
// streams as EventReasoningDelta, apart from the answer, and, in thinking
// mode, goes back with the assistant messages of turns that called tools,
// as that API requires. It is safe for concurrent use.
type ReasoningProvider struct {
	*Client
	opts ReasoningOptions
}

// NewReasoningProvider returns the provider, or a *providers.MissingKeyError
// naming REASONING_API_KEY when neither a key nor a client is given.
func NewReasoningProvider(opts ReasoningOptions) (*ReasoningProvider, error) {
	if err := providers.RequireKey("reasoning", ReasoningKeyEnv, opts.APIKey, opts.Client); err != nil {
		return nil, err
	}
	switch opts.Thinking {
	case "", ThinkingEnabled, ThinkingDisabled:
	default:
		return nil, fmt.Errorf("reasoning: thinking %q: want enabled or disabled", opts.Thinking)
	}
	if !opts.ReasoningEffort.Valid() {
		return nil, fmt.Errorf("reasoning: unknown reasoning effort %q", opts.ReasoningEffort)
	}
	p := &ReasoningProvider{opts: opts}
	replay := ReplayToolTurns // what thinking mode requires
	if opts.Thinking == ThinkingDisabled {
		replay = ReplayNone
	}
	c, err := NewClient(Options{
		Name:          "reasoning",
		BaseURL:       or(opts.BaseURL, ReasoningBaseURL),
		APIKey:        opts.APIKey,
		DefaultModel:  or(opts.DefaultModel, ReasoningDefaultModel),
		Client:        opts.Client,
		Executor:      opts.Executor,
		Logger:        opts.Logger,
		PayloadLogger: opts.PayloadLogger,
		Timeout:       opts.Timeout,
		Reasoning:     replay,
		EffortField:   "-", // set by decorate, with the provider default
		Decorate:      p.decorate,
		Capabilities:  p.capabilities,
	})
	if err != nil {
		return nil, err
	}
	p.Client = c
	return p, nil
}

func (p *ReasoningProvider) decorate(req *providers.Request, b map[string]any) error {
	if p.opts.Thinking != "" {
		b["thinking"] = map[string]string{"type": string(p.opts.Thinking)}
	}
	effort := req.Effort
	if effort == "" {
		effort = p.opts.ReasoningEffort
	}
	if effort != "" && p.opts.Thinking != ThinkingDisabled {
		b["reasoning_effort"] = string(effort)
	}
	return nil
}

// capabilities: no image input and json_object only; in thinking mode the
// sampling temperature has no effect (the API ignores it).
func (p *ReasoningProvider) capabilities(string) providers.Capabilities {
	thinking := p.opts.Thinking != ThinkingDisabled
	return providers.Capabilities{Tools: true, ParallelToolCalls: true, Reasoning: thinking, Effort: thinking,
		Temperature: !thinking, JSONObject: true}
}

// WebTools are the regional endpoint's built-in web tools
// (docs/providers.md, "reasoning, regional, local
// (`providers/chatcompat`)"), run by the endpoint itself on its
// chat-completions surface.
type WebTools struct {
	// WebSearch sends enable_search: the endpoint searches the web when
	// the model decides a question needs it (its default strategy).
	WebSearch bool
	// WebFetch also reads whole pages (the web extractor): the
	// "agent_max" search strategy, which the API runs only in thinking
	// mode, so thinking is switched on as well. It implies WebSearch.
	WebFetch bool
}

// RegionalOptions are the regional provider's options, region included
// (docs/providers.md, "reasoning, regional, local
// (`providers/chatcompat`)"; docs/reference/settings.md, "providers").
type RegionalOptions struct {
	// APIKey is required unless Client is given; conventionally read from
	// REGIONAL_API_KEY.
	APIKey string
	Client *http.Client
	// Region picks a RegionalBaseURLs entry; "" means singapore. BaseURL,
	// when set, wins.
	Region  string
	BaseURL string
	// ResponsesBaseURL is the endpoint of the region's responses-compatible
	// API, for the responses surface; this provider itself speaks chat
	// completions only.
	ResponsesBaseURL string
	DefaultModel     string // default RegionalDefaultModel
	BuiltInWebTools  WebTools
	Timeout          time.Duration
	Executor         providers.Executor
	Logger           *slog.Logger
	PayloadLogger    providers.PayloadLogger
}

// RegionalProvider speaks to the regional cloud's chat-completions
// endpoint. It is safe for concurrent use.
type RegionalProvider struct {
	*Client
	opts RegionalOptions
}

// thinkingBudget maps an effort to the regional API's thinking budget in
// tokens (it takes a budget, not an effort).
var thinkingBudget = map[providers.Effort]int{
	providers.EffortLow: 2048, providers.EffortMedium: 8192, providers.EffortHigh: 16384,
	providers.EffortXHigh: 32768, providers.EffortMax: 38912,
}

// NewRegionalProvider returns the provider, or a *providers.MissingKeyError
// naming REGIONAL_API_KEY when neither a key nor a client is given.
func NewRegionalProvider(opts RegionalOptions) (*RegionalProvider, error) {
	if err := providers.RequireKey("regional", RegionalKeyEnv, opts.APIKey, opts.Client); err != nil {
		return nil, err
	}
	base := opts.BaseURL
	if base == "" {
		region := or(opts.Region, RegionalDefaultRegion)
		var ok bool
		if base, ok = RegionalBaseURLs[region]; !ok {
			return nil, fmt.Errorf("regional: unknown region %q: want singapore, usVirginia, beijing or hongKong", region)
		}
	}
	p := &RegionalProvider{opts: opts}
	c, err := NewClient(Options{
		Name:          "regional",
		BaseURL:       base,
		APIKey:        opts.APIKey,
		DefaultModel:  or(opts.DefaultModel, RegionalDefaultModel),
		Client:        opts.Client,
		Executor:      opts.Executor,
		Logger:        opts.Logger,
		PayloadLogger: opts.PayloadLogger,
		Timeout:       opts.Timeout,
		EffortField:   "-",
		Decorate:      p.decorate,
		Capabilities:  regionalCapabilities,
	})
	if err != nil {
		return nil, err
	}
	p.Client = c
	return p, nil
}

func (p *RegionalProvider) decorate(req *providers.Request, b map[string]any) error {
	if req.Effort != "" {
		b["enable_thinking"] = true
		b["thinking_budget"] = thinkingBudget[req.Effort]
	}
	if w := p.opts.BuiltInWebTools; w.WebSearch || w.WebFetch {
		b["enable_search"] = true
		if w.WebFetch {
			b["search_options"] = map[string]string{"search_strategy": "agent_max"}
			b["enable_thinking"] = true
		}
	}
	return nil
}

// regionalCapabilities: the vision models (names with "vl", "omni" or
// "qvq") take images; json_schema is not offered on this surface.
func regionalCapabilities(model string) providers.Capabilities {
	m := strings.ToLower(model)
	images := strings.Contains(m, "vl") || strings.Contains(m, "omni") || strings.Contains(m, "qvq")
	return providers.Capabilities{Tools: true, ParallelToolCalls: true, Images: images, Reasoning: true, Effort: true,
		Temperature: true, JSONObject: true}
}

// ResponsesBaseURL is the configured endpoint of the regional
// responses-compatible API ("" when none was given).
func (p *RegionalProvider) ResponsesBaseURL() string { return p.opts.ResponsesBaseURL }

// WebTools returns the built-in web tools in use.
func (p *RegionalProvider) WebTools() WebTools { return p.opts.BuiltInWebTools }

// LocalOptions are the local provider's options (docs/providers.md,
// "reasoning, regional, local (`providers/chatcompat`)").
type LocalOptions struct {
	// APIKey is sent as given; "" means the placeholder LocalAPIKey.
	APIKey string
	// BaseURL includes the /v1 path; "" means LocalBaseURL.
	BaseURL string
	// DefaultModel is the model name as the server knows it; a request
	// must name one when this is empty.
	DefaultModel  string
	Timeout       time.Duration
	Client        *http.Client
	Executor      providers.Executor
	Logger        *slog.Logger
	PayloadLogger providers.PayloadLogger
}

// LocalProvider speaks to a local chat-completions server. It needs no real
// key (docs/providers.md, "Shared plumbing"). It is safe for concurrent
// use.
type LocalProvider struct{ *Client }

// NewLocalProvider returns the provider.
func NewLocalProvider(opts LocalOptions) (*LocalProvider, error) {
	c, err := NewClient(Options{
		Name:          "local",
		BaseURL:       or(opts.BaseURL, LocalBaseURL),
		APIKey:        or(opts.APIKey, LocalAPIKey),
		DefaultModel:  opts.DefaultModel,
		Client:        opts.Client,
		Executor:      opts.Executor,
		Logger:        opts.Logger,
		PayloadLogger: opts.PayloadLogger,
		Timeout:       opts.Timeout,
	})
	if err != nil {
		return nil, err
	}
	return &LocalProvider{c}, nil
}

func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

var (
	_ providers.Provider = (*Client)(nil)
	_ providers.Provider = (*ReasoningProvider)(nil)
	_ providers.Provider = (*RegionalProvider)(nil)
	_ providers.Provider = (*LocalProvider)(nil)
)
