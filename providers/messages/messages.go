// Package messages is the provider of the messages API surface
// (docs/providers.md, "messages (`providers/messages`)"): its headers,
// content blocks (text, images, thinking with signatures, redacted
// thinking, tool use, tool results), the streamed events (text, tool input
// JSON, thinking and signature deltas, usage, ping, error) and its error
// types, including the overloaded status.
//
// Imports: the standard library, agent/providers and agent/internal/*.
package messages

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"agent/providers"
)

// KeyEnv is the environment variable the key is conventionally read from.
const KeyEnv = "MESSAGES_API_KEY"

// APIVersion is the API version the provider speaks (the version header).
const APIVersion = "2023-06-01"

// DefaultBaseURL is the API root used when Options.BaseURL is empty: the
// official endpoint of the messages API.
const DefaultBaseURL = "https://api.anthropic.com"

// Options are the provider's options (docs/providers.md, "messages
// (`providers/messages`)"), plus DefaultModel, Header, Logger and
// PayloadLogger. The zero value of each field is its default.
type Options struct {
	// APIKey is required unless Client is given (docs/providers.md, "Shared
	// plumbing"); it is sent in the x-api-key header.
	APIKey string
	// Client is a pre-built client; it adds its own credentials when
	// APIKey is empty.
	Client *http.Client
	// BaseURL is the API root (https://api.example.com), any endpoint
	// compatible with the messages API (a proxy or gateway); the provider
	// appends /v1/messages (docs/providers.md, "Endpoint paths and masked
	// URLs"). "" means DefaultBaseURL.
	BaseURL string
	// Timeout is the first-byte deadline and idle watchdog of
	// docs/providers.md, "Deadlines and retries"; zero means
	// providers.DefaultTimeout.
	Timeout  time.Duration
	Executor providers.Executor // sends requests; nil means Client
	Logger   *slog.Logger       // nil is silent
	// PayloadLogger receives a summary of each request.
	PayloadLogger providers.PayloadLogger
	// DefaultModel is used when a request names none.
	DefaultModel string
	// Header holds extra headers for every request (beta flags, gateway
	// headers).
	Header http.Header
}

// Provider is the messages provider (the seed's MessagesProvider). It is
// safe for concurrent use.
type Provider struct {
	opts   Options
	url    string
	header http.Header
	sender *providers.Sender
}

// New returns the provider, or a *providers.MissingKeyError naming
// MESSAGES_API_KEY when neither a key nor a client is given.
func New(opts Options) (*Provider, error) {
	if err := providers.RequireKey("messages", KeyEnv, opts.APIKey, opts.Client); err != nil {
		return nil, err
	}
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(opts.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("messages: base URL %q: want the API root as an http or https URL", providers.RedactURL(opts.BaseURL))
	}
	h := opts.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if opts.APIKey != "" {
		h.Set("X-Api-Key", opts.APIKey)
	}
	h.Set("Anthropic-Version", APIVersion) // the API's version header
	return &Provider{
		opts:   opts,
		url:    providers.Endpoint(opts.BaseURL, "/v1/messages", ""),
		header: h,
		sender: &providers.Sender{
			Provider:      "messages",
			Executor:      opts.Executor,
			Client:        opts.Client,
			Logger:        opts.Logger,
			PayloadLogger: opts.PayloadLogger,
			Timeout:       opts.Timeout,
			ParseError:    ParseError,
		},
	}, nil
}

// URL is the endpoint the provider posts to.
func (p *Provider) URL() string { return p.url }

// Capabilities implements providers.Provider. Every model takes tools and
// images; those from generation 3.7 on (and names without a version, such
// as a gateway's aliases) can think, so Request.Effort has an effect
// there. With thinking the API takes no temperature: Body leaves it out.
// The API has no json_object format, only json_schema.
func (p *Provider) Capabilities(model string) providers.Capabilities {
	if model == "" {
		model = p.opts.DefaultModel
	}
	think := thinks(model)
	return providers.Capabilities{Tools: true, ParallelToolCalls: true, Images: true, Reasoning: think, Effort: think,
		Temperature: true, JSONSchema: true}
}

// thinks reports whether model can think: every generation from 3.7 on.
func thinks(model string) bool {
	major, minor, versioned := modelVersion(model)
	return !versioned || major > 3 || major == 3 && minor >= 7
}

// Chat implements providers.Provider.
func (p *Provider) Chat(ctx context.Context, req *providers.Request) (*providers.Stream, error) {
	body, model, err := p.Body(req)
	if err != nil {
		return nil, err
	}
	return p.sender.Stream(ctx, providers.Call{
		URL:        p.url,
		Header:     p.header,
		Body:       body,
		NewDecoder: func() providers.Decoder { return NewDecoder() },
		Summary:    req.Summary(model),
	})
}

type wireRequest struct {
	Model        string            `json:"model"`
	MaxTokens    int               `json:"max_tokens"`
	System       string            `json:"system,omitempty"`
	Messages     []wireMessage     `json:"messages"`
	Tools        []wireTool        `json:"tools,omitempty"`
	ToolChoice   *wireToolChoice   `json:"tool_choice,omitempty"`
	Temperature  *float64          `json:"temperature,omitempty"`
	Thinking     *wireThinking     `json:"thinking,omitempty"`
	OutputConfig *wireOutputConfig `json:"output_config,omitempty"`
	Stream       bool              `json:"stream"`
}

type wireMessage struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Source    *imageSource    `json:"source,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   []block         `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type wireToolChoice struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

type wireThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

type wireOutputConfig struct {
	Effort string      `json:"effort,omitempty"`
	Format *wireFormat `json:"format,omitempty"`
}

type wireFormat struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema"`
}

// thinkingBudget maps an effort to a thinking budget for models that take
// the budget form.
var thinkingBudget = map[providers.Effort]int{
	providers.EffortLow: 2048, providers.EffortMedium: 8192, providers.EffortHigh: 16384,
	providers.EffortXHigh: 24576, providers.EffortMax: 32000,
}

// Body validates req and returns the JSON body the provider sends for it,
// and the model it names.
func (p *Provider) Body(req *providers.Request) ([]byte, string, error) {
	fail := func(err error) ([]byte, string, error) {
		return nil, "", providers.NameProvider(err, "messages")
	}
	model, err := providers.Prepare(req, p.opts.DefaultModel, "messages")
	if err != nil {
		return nil, "", err
	}
	if req.ResponseFormat.Type == providers.FormatJSONObject {
		return fail(providers.Invalid("the messages API has no json_object format; use a json_schema format"))
	}
	major, minor, versioned := modelVersion(model)
	w := wireRequest{Model: model, MaxTokens: req.MaxTokens, Temperature: req.Temperature, Stream: true}
	if w.MaxTokens == 0 {
		// The API requires a bound; these fit every model of the generation.
		w.MaxTokens = 4096
		if versioned && major >= 4 {
			w.MaxTokens = 32000
		}
	}
	w.System, w.Messages = wireMessages(req.Messages)
	if len(w.Messages) == 0 {
		return fail(providers.Invalid("no user or assistant messages"))
	}
	for _, t := range req.Tools {
		schema := t.Schema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if len(w.Tools) == 0 {
		if w.Tools = historyTools(w.Messages); len(w.Tools) > 0 {
			// A turn without tools (an external event's) over a
			// conversation that used them: the API refuses tool_use and
			// tool_result blocks unless tools are defined, so the tools of
			// the history are named, and none may be called.
			w.ToolChoice = &wireToolChoice{Type: "none"}
		}
	} else {
		switch req.ToolChoice.Mode {
		case providers.ToolAuto:
			w.ToolChoice = &wireToolChoice{Type: "auto"}
		case providers.ToolNone:
			w.ToolChoice = &wireToolChoice{Type: "none"}
		case providers.ToolRequired:
			w.ToolChoice = &wireToolChoice{Type: "any"}
		case providers.ToolNamed:
			w.ToolChoice = &wireToolChoice{Type: "tool", Name: req.ToolChoice.Name}
		}
	}
	if req.Effort != "" && thinks(model) {
		// Models from 4.6 on take adaptive thinking steered by effort; older
		// ones (and names without a version) the budget form, with at most half
		// of max_tokens for thinking (the budget must stay under it).
		think := thinkingAllowed(req, w.Messages)
		if versioned && (major > 4 || major == 4 && minor >= 6) {
			if think {
				w.Thinking = &wireThinking{Type: "adaptive"}
			}
			// Effort steers the whole answer, with or without thinking.
			effort := req.Effort
			if effort == providers.EffortXHigh && major == 4 && minor == 6 {
				effort = providers.EffortMax // xhigh came after 4.6; max is the next level up there
			}
			w.OutputConfig = &wireOutputConfig{Effort: string(effort)}
		} else if budget := min(thinkingBudget[req.Effort], w.MaxTokens/2); think && budget >= 1024 {
			w.Thinking = &wireThinking{Type: "enabled", BudgetTokens: budget}
		}
	}
	if w.Thinking != nil {
		// The API takes no sampling temperature with thinking: the request's
		// effort wins over its temperature.
		w.Temperature = nil
	}
	if rf := req.ResponseFormat; rf.Type == providers.FormatJSONSchema {
		if w.OutputConfig == nil {
			w.OutputConfig = &wireOutputConfig{}
		}
		w.OutputConfig.Format = &wireFormat{Type: "json_schema", Schema: rf.Schema}
	}
	out, err := json.Marshal(w)
	if err != nil {
		return fail(providers.Invalid("encoding the request: %v", err))
	}
	return out, model, nil
}

// historyTools returns a placeholder definition for each tool the
// conversation called, or one for results without their call; nil when
// there are neither.
func historyTools(msgs []wireMessage) []wireTool {
	var tools []wireTool
	seen := map[string]bool{}
	results := false
	for _, m := range msgs {
		for _, b := range m.Content {
			switch {
			case b.Type == "tool_result":
				results = true
			case b.Type == "tool_use" && !seen[b.Name]:
				seen[b.Name] = true
				tools = append(tools, wireTool{Name: b.Name, Description: "Not available in this turn.", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)})
			}
		}
	}
	if results && len(tools) == 0 {
		tools = append(tools, wireTool{Name: "unavailable", Description: "Not available in this turn.", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)})
	}
	return tools
}

// thinkingAllowed reports whether thinking may go with the request: the
// API refuses it with a tool choice that forces a call (any or a named
// tool), and, while a tool loop goes on, when the last assistant message
// calls tools without starting with a thinking block (one that another
// provider wrote, or that was answered without thinking). Such a request
// goes without thinking rather than failing.
func thinkingAllowed(req *providers.Request, msgs []wireMessage) bool {
	if len(req.Tools) > 0 && (req.ToolChoice.Mode == providers.ToolRequired || req.ToolChoice.Mode == providers.ToolNamed) {
		return false
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != "assistant" {
			continue
		}
		calls := false
		for _, b := range m.Content {
			calls = calls || b.Type == "tool_use"
		}
		first := m.Content[0].Type
		return !calls || first == "thinking" || first == "redacted_thinking"
	}
	return true
}

// modelVersion finds the model generation in a slug: the first one or two
// numeric tokens separated by '-' or '.', skipping dates (8 digits), as in
// family-4-6 or 3-7-family-20250219.
func modelVersion(model string) (major, minor int, ok bool) {
	var nums []int
	for tok := range strings.FieldsFuncSeq(model, func(r rune) bool { return r == '-' || r == '.' || r == '/' || r == ':' || r == '@' }) {
		n, err := strconv.Atoi(tok)
		if err != nil || len(tok) >= 8 {
			if len(nums) > 0 {
				break
			}
			continue
		}
		nums = append(nums, n)
		if len(nums) == 2 {
			break
		}
	}
	switch len(nums) {
	case 0:
		return 0, 0, false
	case 1:
		return nums[0], 0, true
	}
	return nums[0], nums[1], true
}

// wireMessages converts the conversation: system messages join into the
// system prompt; tool results become tool_result blocks of a user message;
// consecutive messages of one role merge, as the API wants turns to
// alternate. Reasoning goes back only with its signature (or as a
// redacted block): the API refuses thinking it cannot verify, such as
// another provider's.
func wireMessages(msgs []providers.Message) (string, []wireMessage) {
	var system []string
	var out []wireMessage
	add := func(role string, blocks []block) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, wireMessage{Role: role, Content: blocks})
	}
	for _, m := range msgs {
		var blocks []block
		switch m.Role {
		case providers.RoleSystem:
			for _, p := range m.Content {
				if t, ok := p.(providers.Text); ok && t.Text != "" {
					system = append(system, t.Text)
				}
			}
			continue
		case providers.RoleUser:
			blocks = contentBlocks(m.Content)
			add("user", blocks)
		case providers.RoleTool:
			for _, p := range m.Content {
				if tr, ok := p.(providers.ToolResult); ok {
					blocks = append(blocks, block{Type: "tool_result", ToolUseID: tr.CallID, Content: contentBlocks(tr.Content), IsError: tr.IsError})
				}
			}
			add("user", blocks)
		case providers.RoleAssistant:
			for _, p := range m.Content {
				switch p := p.(type) {
				case providers.Reasoning:
					switch {
					case foreignReasoning(p):
						// Another API's reasoning (a switch of provider
						// mid-conversation, docs/reference/runtime.md,
						// "Turns and the queue"): this API cannot verify it
						// and would refuse the turn.
					case p.Redacted != "":
						blocks = append(blocks, block{Type: "redacted_thinking", Data: p.Redacted})
					case p.Signature != "":
						text := p.Text
						blocks = append(blocks, block{Type: "thinking", Thinking: &text, Signature: p.Signature})
					}
				case providers.Text:
					if p.Text != "" {
						blocks = append(blocks, block{Type: "text", Text: p.Text})
					}
				case providers.ToolCall:
					blocks = append(blocks, block{Type: "tool_use", ID: p.ID, Name: p.Name, Input: toolInput(p.Arguments)})
				}
			}
			add("assistant", blocks)
		}
	}
	return strings.Join(system, "\n\n"), out
}

// foreignReasoning recognises reasoning that another API produced: the
// responses API keeps its whole reasoning item (a JSON object) in
// Redacted, and the genai API marks its signatures with a "genai:"
// prefix. This API's redacted data and signatures are opaque base64.
func foreignReasoning(r providers.Reasoning) bool {
	return strings.HasPrefix(r.Redacted, "{") || strings.HasPrefix(r.Signature, "genai:")
}

func contentBlocks(parts []providers.Part) []block {
	var out []block
	for _, p := range parts {
		switch p := p.(type) {
		case providers.Text:
			if p.Text != "" {
				out = append(out, block{Type: "text", Text: p.Text})
			}
		case providers.Image:
			src := &imageSource{Type: "url", URL: p.URL}
			if len(p.Data) > 0 {
				src = &imageSource{Type: "base64", MediaType: p.MediaType, Data: base64.StdEncoding.EncodeToString(p.Data)}
			}
			out = append(out, block{Type: "image", Source: src})
		}
	}
	return out
}

// toolInput is the call's arguments when they form a JSON object, which
// the API requires, and {} otherwise.
func toolInput(args json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) == nil && obj != nil {
		return args
	}
	return json.RawMessage("{}")
}

var _ providers.Provider = (*Provider)(nil)
