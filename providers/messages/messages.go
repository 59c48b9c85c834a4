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

// Provider is the messages provider (docs/providers.md, "messages
// (`providers/messages`)"). It is safe for concurrent use.
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

// wireRequest is the request body. Its members go in the order of the
// API's cache prefix (docs/providers.md, "Prompt caching"): the settings,
// then the tools, the system text and the messages, so that the bytes of
// a request up to a cache mark are the prefix the mark caches.
type wireRequest struct {
	Model        string            `json:"model"`
	MaxTokens    int               `json:"max_tokens"`
	Temperature  *float64          `json:"temperature,omitempty"`
	Thinking     *wireThinking     `json:"thinking,omitempty"`
	OutputConfig *wireOutputConfig `json:"output_config,omitempty"`
	ToolChoice   *wireToolChoice   `json:"tool_choice,omitempty"`
	Stream       bool              `json:"stream"`
	Tools        []wireTool        `json:"tools,omitempty"`
	// System is the system text: a string without cache marks, else a
	// list of text blocks.
	System   any           `json:"system,omitempty"`
	Messages []wireMessage `json:"messages"`
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
	Cache     *cacheControl   `json:"cache_control,omitempty"`
}

// cacheControl is a cache mark: the prefix up to and including the block
// that carries it is cached (docs/providers.md, "Prompt caching").
type cacheControl struct {
	Type string `json:"type"`
}

// ephemeral is the one kind of mark the API takes.
var ephemeral = &cacheControl{Type: "ephemeral"}

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
	Cache       *cacheControl   `json:"cache_control,omitempty"`
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
	conv := wireMessages(req.Messages)
	w.Messages = conv.messages
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
	if req.Cache.Off {
		if len(conv.system) > 0 {
			w.System = conv.systemText(0, len(conv.system))
		}
	} else if system := markCache(&w, conv, req.Cache); len(system) > 0 {
		w.System = system
	}
	out, err := json.Marshal(w)
	if err != nil {
		return fail(providers.Invalid("encoding the request: %v", err))
	}
	return out, model, nil
}

// markCache places the cache marks (docs/providers.md, "Prompt caching")
// and returns the system blocks, the static part apart from the rest.
// The API takes four marks at most: one after the tools and the static
// system text; one after the stable prefix of the session (the context
// message); one on the block where the request before this step ended,
// which that request wrote, so that it is read even when this step added
// more blocks than the API looks back over from a mark (20); and one on
// the newest block, which writes the conversation for the next step. The
// API caches nothing shorter than its minimum length, and says so by
// reporting no cache write; a mark on such a prefix costs nothing.
func markCache(w *wireRequest, conv conversation, c providers.Cache) []block {
	var system []block
	static := len(conv.system)
	if c.StaticSystem > 0 {
		static = 0
		for _, s := range conv.system {
			if s.nth < c.StaticSystem {
				static++
			}
		}
	}
	if static > 0 {
		system = append(system, block{Type: "text", Text: conv.systemText(0, static), Cache: ephemeral})
	} else if n := len(w.Tools); n > 0 {
		w.Tools[n-1].Cache = ephemeral
	}
	if static < len(conv.system) {
		system = append(system, block{Type: "text", Text: conv.systemText(static, len(conv.system))})
	}
	msgs := w.Messages
	var marks []blockRef
	if end, ok := conv.prefixEnd(c.Prefix); ok {
		marks = append(marks, end)
	}
	// The request before this step ended with the message before the
	// newest answer of the model.
	for i := len(msgs) - 2; i > 0; i-- {
		if msgs[i].Role == "assistant" {
			marks = append(marks, blockRef{msg: i - 1, block: len(msgs[i-1].Content) - 1})
			break
		}
	}
	marks = append(marks, blockRef{msg: len(msgs) - 1, block: len(msgs[len(msgs)-1].Content) - 1})
	last := blockRef{msg: -1}
	for _, r := range marks {
		r, ok := markable(msgs, r)
		if ok && last.before(r) {
			msgs[r.msg].Content[r.block].Cache = ephemeral
			last = r
		}
	}
	return system
}

// markable moves r back to the nearest block that may carry a cache mark:
// not a thinking block, which the API refuses to mark.
func markable(msgs []wireMessage, r blockRef) (blockRef, bool) {
	for r.msg >= 0 {
		for ; r.block >= 0; r.block-- {
			if t := msgs[r.msg].Content[r.block].Type; t != "thinking" && t != "redacted_thinking" {
				return r, true
			}
		}
		if r.msg--; r.msg >= 0 {
			r.block = len(msgs[r.msg].Content) - 1
		}
	}
	return r, false
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

// conversation is a request's conversation in the API's terms.
type conversation struct {
	system   []systemText
	messages []wireMessage
	ends     []blockRef // the last block of each message of the request; msg -1 for none
}

// systemText is one text of a system message.
type systemText struct {
	text string
	nth  int // the system message it came from: 0 for the first
}

// blockRef names a block of a wire message.
type blockRef struct{ msg, block int }

func (r blockRef) before(o blockRef) bool {
	return r.msg < o.msg || r.msg == o.msg && r.block < o.block
}

// systemText joins the system texts from..to as the system prompt always
// joined them.
func (c conversation) systemText(from, to int) string {
	var b strings.Builder
	for i, s := range c.system[from:to] {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(s.text)
	}
	return b.String()
}

// prefixEnd is the last block of the first n messages of the request,
// when they have one outside the system text.
func (c conversation) prefixEnd(n int) (blockRef, bool) {
	for i := n - 1; i >= 0; i-- {
		if c.ends[i].msg >= 0 {
			return c.ends[i], true
		}
	}
	return blockRef{}, false
}

// wireMessages converts the conversation: system messages join into the
// system prompt; tool results become tool_result blocks of a user message;
// consecutive messages of one role merge, as the API wants turns to
// alternate. Reasoning goes back only with its signature (or as a
// redacted block): the API refuses thinking it cannot verify, such as
// another provider's.
func wireMessages(msgs []providers.Message) conversation {
	c := conversation{ends: make([]blockRef, len(msgs))}
	nth := 0
	var out []wireMessage
	add := func(i int, role string, blocks []block) {
		c.ends[i] = blockRef{msg: -1}
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
		} else {
			out = append(out, wireMessage{Role: role, Content: blocks})
		}
		c.ends[i] = blockRef{msg: len(out) - 1, block: len(out[len(out)-1].Content) - 1}
	}
	for i, m := range msgs {
		var blocks []block
		switch m.Role {
		case providers.RoleSystem:
			for _, p := range m.Content {
				if t, ok := p.(providers.Text); ok && t.Text != "" {
					c.system = append(c.system, systemText{text: t.Text, nth: nth})
				}
			}
			nth++
			c.ends[i] = blockRef{msg: -1}
			continue
		case providers.RoleUser:
			blocks = contentBlocks(m.Content)
			add(i, "user", blocks)
		case providers.RoleTool:
			for _, p := range m.Content {
				if tr, ok := p.(providers.ToolResult); ok {
					blocks = append(blocks, block{Type: "tool_result", ToolUseID: tr.CallID, Content: contentBlocks(tr.Content), IsError: tr.IsError})
				}
			}
			add(i, "user", blocks)
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
			add(i, "assistant", blocks)
		}
	}
	c.messages = out
	return c
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
