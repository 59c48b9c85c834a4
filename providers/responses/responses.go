// Package responses is the provider of the responses API surface
// (docs/providers.md, "responses (`providers/responses`)"):
// ResponsesProvider speaks either the responses API (input items, output
// items streamed as semantic events, reasoning items passed back unchanged,
// hosted web tools) or, through providers/chatcompat, the chat-completions
// API of the same vendor and of every compatible endpoint. Which one
// follows the default surface rule: the responses API for the official
// endpoint, chat completions when a base URL is given, unless apiSurface
// says otherwise.
//
// Imports: the standard library, agent/providers, agent/providers/chatcompat
// and agent/internal/*.
package responses

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"agent/providers"
	"agent/providers/chatcompat"
)

// KeyEnv is the environment variable the key is conventionally read from.
const KeyEnv = "RESPONSES_API_KEY"

// OfficialBaseURL is the vendor's endpoint, used when BaseURL is empty. It
// includes the version path (docs/providers.md, "Endpoint paths and masked
// URLs").
const OfficialBaseURL = "https://api.openai.com/v1"

// Surface is an API surface of the provider (the apiSurface option).
type Surface string

// Surfaces; "" applies the default rule.
const (
	SurfaceResponses       Surface = "responses"
	SurfaceChatCompletions Surface = "chat-completions"
)

// Format is a response format (the responseFormat option).
type Format string

// Response formats; "" leaves the format to each request.
const (
	FormatText       Format = "text"
	FormatJSONObject Format = "json_object"
	FormatJSONSchema Format = "json_schema"
)

// JSONSchema is the schema used with FormatJSONSchema (the jsonSchema
// option of docs/providers.md, "responses (`providers/responses`)").
type JSONSchema struct {
	Name        string          // "" means "response"
	Description string          // responses surface only
	Schema      json.RawMessage // a JSON object
	Strict      bool            // strict schema adherence
}

// Reasoning are the reasoning options (the reasoning option; responses
// surface; on chat completions only Effort applies, as reasoning_effort).
// The values the specification leaves open are those the API documents.
type Reasoning struct {
	// Effort: none, minimal, low, medium, high or xhigh; "" is the
	// model's default. Request.Effort wins (max is sent as xhigh).
	Effort string
	// Summary: auto, concise or detailed; "" asks for none.
	Summary string
}

// NativeWebTools are the vendor's hosted web tools (the nativeWebTools
// option). The hosted search tool also opens and reads pages, so WebFetch
// asks for the same tool. Refused on a custom endpoint.
type NativeWebTools struct {
	WebSearch bool
	WebFetch  bool
}

// Options are the provider's options (docs/providers.md, "responses
// (`providers/responses`)"; client, executor, logger and payloadLogger as
// Go values), plus Header. The zero value of each field is its default.
type Options struct {
	// APIKey is required unless Client is given (docs/providers.md, "Shared
	// plumbing"); it is sent as a bearer token.
	APIKey string
	// Client is a pre-built client; it adds its own credentials when
	// APIKey is empty.
	Client *http.Client
	// Organization is sent in the organization header.
	Organization string
	// BaseURL includes the version path; "" means OfficialBaseURL. The
	// provider appends /responses or /chat/completions.
	BaseURL string
	// DefaultModel is used when a request names none.
	DefaultModel string
	// Timeout is the first-byte deadline and idle watchdog of
	// docs/providers.md, "Deadlines and retries"; zero means
	// providers.DefaultTimeout.
	Timeout time.Duration
	// APISurface: "" means responses for the official endpoint and chat
	// completions when BaseURL is set (the default surface rule).
	APISurface Surface
	// ResponseFormat and JSONSchema apply to requests that name no
	// format of their own.
	ResponseFormat Format
	JSONSchema     *JSONSchema
	Reasoning      Reasoning
	// Store, when set, is sent as "store" (responses surface); nil leaves
	// the API's default.
	Store *bool
	// IncludeEncryptedReasoning asks for the encrypted content of
	// reasoning items, which go back unchanged with the next turn, so
	// that a conversation continues without stored state.
	IncludeEncryptedReasoning bool
	// StrictTools rewrites tool schemas for strict mode (StrictSchema) and
	// marks the functions strict.
	StrictTools    bool
	NativeWebTools NativeWebTools
	// OmitStreamUsage turns off the includeStreamUsage option (default
	// on), for chat-completions endpoints that reject stream_options. The
	// responses surface always reports usage.
	OmitStreamUsage bool
	Executor        providers.Executor      // sends requests; nil means Client
	Logger          *slog.Logger            // nil is silent
	PayloadLogger   providers.PayloadLogger // a summary of each request
	// Header holds extra headers for every request (gateway headers).
	Header http.Header
}

// Provider is the responses provider (docs/providers.md, "responses
// (`providers/responses`)"). It is safe for concurrent use.
type Provider struct {
	opts    Options
	surface Surface
	url     string
	header  http.Header
	sender  *providers.Sender
	chat    *chatcompat.Client // the chat-completions surface
}

// New returns the provider, or a *providers.MissingKeyError naming
// RESPONSES_API_KEY when neither a key nor a client is given. Options the
// chosen surface or endpoint cannot honour are refused here, before any
// request.
func New(opts Options) (*Provider, error) {
	if err := providers.RequireKey("responses", KeyEnv, opts.APIKey, opts.Client); err != nil {
		return nil, err
	}
	base := strings.TrimRight(opts.BaseURL, "/")
	custom := base != "" && base != OfficialBaseURL
	if base == "" {
		base = OfficialBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("responses: base URL %q: want an http or https URL with the version path", providers.RedactURL(opts.BaseURL))
	}
	surface := opts.APISurface
	switch surface {
	case "":
		surface = SurfaceResponses
		if custom {
			surface = SurfaceChatCompletions
		}
	case SurfaceResponses, SurfaceChatCompletions:
	default:
		return nil, fmt.Errorf("responses: apiSurface %q: want responses or chat-completions", opts.APISurface)
	}
	if w := opts.NativeWebTools; (w.WebSearch || w.WebFetch) && custom {
		return nil, fmt.Errorf("responses: nativeWebTools: the hosted web tools exist only on the official endpoint, not on %s", providers.RedactURL(base))
	}
	if w := opts.NativeWebTools; (w.WebSearch || w.WebFetch) && surface != SurfaceResponses {
		return nil, fmt.Errorf("responses: nativeWebTools: the hosted web tools need the responses apiSurface")
	}
	if err := checkOptions(&opts); err != nil {
		return nil, err
	}
	h := opts.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if opts.APIKey != "" {
		h.Set("Authorization", "Bearer "+opts.APIKey)
	}
	if opts.Organization != "" {
		h.Set("OpenAI-Organization", opts.Organization)
	}
	p := &Provider{opts: opts, surface: surface, header: h}
	if surface == SurfaceChatCompletions {
		hc := opts.Header.Clone()
		if opts.Organization != "" {
			if hc == nil {
				hc = http.Header{}
			}
			hc.Set("OpenAI-Organization", opts.Organization)
		}
		p.chat, err = chatcompat.NewClient(chatcompat.Options{
			Name:            "responses",
			BaseURL:         base,
			APIKey:          opts.APIKey,
			Header:          hc,
			DefaultModel:    opts.DefaultModel,
			Client:          opts.Client,
			Executor:        opts.Executor,
			Logger:          opts.Logger,
			PayloadLogger:   opts.PayloadLogger,
			Timeout:         opts.Timeout,
			OmitStreamUsage: opts.OmitStreamUsage,
			StrictTools:     opts.StrictTools,
			EffortField:     "-", // set by decorate: the options' effort applies too
			Decorate:        p.decorate,
		})
		if err != nil {
			return nil, err
		}
		p.url = p.chat.URL()
		return p, nil
	}
	p.url = providers.Endpoint(base, "/responses", "")
	p.sender = &providers.Sender{
		Provider:      "responses",
		Executor:      opts.Executor,
		Client:        opts.Client,
		Logger:        opts.Logger,
		PayloadLogger: opts.PayloadLogger,
		Timeout:       opts.Timeout,
		ParseError:    chatcompat.ParseError, // the same {"error": {...}} body
	}
	return p, nil
}

func checkOptions(o *Options) error {
	switch o.ResponseFormat {
	case "", FormatText, FormatJSONObject:
	case FormatJSONSchema:
		if o.JSONSchema == nil || !isObject(o.JSONSchema.Schema) {
			return fmt.Errorf("responses: responseFormat json_schema needs jsonSchema with a JSON object schema")
		}
	default:
		return fmt.Errorf("responses: responseFormat %q: want text, json_object or json_schema", o.ResponseFormat)
	}
	switch o.Reasoning.Effort {
	case "", "none", "minimal", "low", "medium", "high", "xhigh":
	default:
		return fmt.Errorf("responses: reasoning.effort %q: want none, minimal, low, medium, high or xhigh", o.Reasoning.Effort)
	}
	switch o.Reasoning.Summary {
	case "", "auto", "concise", "detailed":
	default:
		return fmt.Errorf("responses: reasoning.summary %q: want auto, concise or detailed", o.Reasoning.Summary)
	}
	return nil
}

// Surface is the API surface in use.
func (p *Provider) Surface() Surface { return p.surface }

// URL is the endpoint the provider posts to.
func (p *Provider) URL() string { return p.url }

// Capabilities implements providers.Provider. Current models take tools,
// images and both response formats; the model decides whether it reasons.
func (p *Provider) Capabilities(string) providers.Capabilities {
	return providers.Capabilities{Tools: true, ParallelToolCalls: true, Images: true, Reasoning: true, Effort: true,
		Temperature: true, JSONObject: true, JSONSchema: true}
}

// Chat implements providers.Provider.
func (p *Provider) Chat(ctx context.Context, req *providers.Request) (*providers.Stream, error) {
	if p.chat != nil {
		r, err := p.chatRequest(req)
		if err != nil {
			return nil, err
		}
		return p.chat.Chat(ctx, r)
	}
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

// chatRequest applies the options to a request for the chat-completions
// surface: strict tool schemas and the default response format.
func (p *Provider) chatRequest(req *providers.Request) (*providers.Request, error) {
	r := *req
	if p.opts.StrictTools && len(req.Tools) > 0 {
		r.Tools = make([]providers.Tool, len(req.Tools))
		for i, t := range req.Tools {
			s, err := StrictSchema(t.Schema)
			if err != nil {
				return nil, providers.NameProvider(providers.Invalid("tool %q: %v", t.Name, err), "responses")
			}
			t.Schema = s
			r.Tools[i] = t
		}
	}
	if r.ResponseFormat.Type == providers.FormatText {
		r.ResponseFormat = p.defaultFormat()
	}
	return &r, nil
}

// Body returns the JSON body the chat-completions surface sends for req
// (for tests and payload inspection) or the responses body, and the model.
func (p *Provider) Body(req *providers.Request) ([]byte, string, error) {
	if p.chat != nil {
		r, err := p.chatRequest(req)
		if err != nil {
			return nil, "", err
		}
		return p.chat.Body(r)
	}
	return p.responsesBody(req)
}

func (p *Provider) defaultFormat() providers.ResponseFormat {
	switch p.opts.ResponseFormat {
	case FormatJSONObject:
		return providers.ResponseFormat{Type: providers.FormatJSONObject}
	case FormatJSONSchema:
		js := p.opts.JSONSchema
		return providers.ResponseFormat{Type: providers.FormatJSONSchema, Name: js.Name, Schema: js.Schema, Strict: js.Strict}
	}
	return providers.ResponseFormat{}
}

// effort is the reasoning effort of a request: its own, else the options'.
func (p *Provider) effort(req *providers.Request) string {
	switch req.Effort {
	case "":
		return p.opts.Reasoning.Effort
	case providers.EffortMax:
		return "xhigh" // the API's deepest setting
	}
	return string(req.Effort)
}

func (p *Provider) decorate(req *providers.Request, b map[string]any) error {
	if e := p.effort(req); e != "" {
		b["reasoning_effort"] = e
	}
	return nil
}

type wireRequest struct {
	Model           string         `json:"model"`
	Instructions    string         `json:"instructions,omitempty"`
	Input           []any          `json:"input"`
	Tools           []any          `json:"tools,omitempty"`
	ToolChoice      any            `json:"tool_choice,omitempty"`
	MaxOutputTokens int            `json:"max_output_tokens,omitempty"`
	Temperature     *float64       `json:"temperature,omitempty"`
	Reasoning       *wireReasoning `json:"reasoning,omitempty"`
	Store           *bool          `json:"store,omitempty"`
	Include         []string       `json:"include,omitempty"`
	Text            *wireText      `json:"text,omitempty"`
	PromptCacheKey  string         `json:"prompt_cache_key,omitempty"`
	Stream          bool           `json:"stream"`
}

type wireReasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

type wireText struct {
	Format wireFormat `json:"format"`
}

type wireFormat struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

type wireFunction struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	// Strict is always sent: the API's default is strict, which refuses
	// most schemas that were not rewritten for it.
	Strict bool `json:"strict"`
}

type inputMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type inputPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
}

type functionCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type functionCallOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output any    `json:"output"`
}

// responsesBody validates req and builds the responses-surface body.
func (p *Provider) responsesBody(req *providers.Request) ([]byte, string, error) {
	fail := func(err error) ([]byte, string, error) {
		return nil, "", providers.NameProvider(err, "responses")
	}
	model, err := providers.Prepare(req, p.opts.DefaultModel, "responses")
	if err != nil {
		return nil, "", err
	}
	w := wireRequest{Model: model, MaxOutputTokens: req.MaxTokens, Temperature: req.Temperature, Store: p.opts.Store, Stream: true}
	if !req.Cache.Off {
		w.PromptCacheKey = cacheKey(req.Cache.Key)
	}
	w.Instructions, w.Input = p.input(req.Messages)
	if len(w.Input) == 0 {
		return fail(providers.Invalid("no user or assistant messages"))
	}
	for _, t := range req.Tools {
		schema := t.Schema
		if p.opts.StrictTools {
			if schema, err = StrictSchema(t.Schema); err != nil {
				return fail(providers.Invalid("tool %q: %v", t.Name, err))
			}
		} else if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wireFunction{Type: "function", Name: t.Name, Description: t.Description, Parameters: schema, Strict: p.opts.StrictTools})
	}
	if len(w.Tools) > 0 {
		switch req.ToolChoice.Mode {
		case providers.ToolAuto:
			w.ToolChoice = "auto"
		case providers.ToolNone:
			w.ToolChoice = "none"
		case providers.ToolRequired:
			w.ToolChoice = "required"
		case providers.ToolNamed:
			w.ToolChoice = map[string]string{"type": "function", "name": req.ToolChoice.Name}
		}
	}
	if nw := p.opts.NativeWebTools; nw.WebSearch || nw.WebFetch {
		w.Tools = append(w.Tools, map[string]string{"type": "web_search"})
	}
	if e, s := p.effort(req), p.opts.Reasoning.Summary; e != "" || s != "" {
		w.Reasoning = &wireReasoning{Effort: e, Summary: s}
	}
	if p.opts.IncludeEncryptedReasoning {
		w.Include = []string{"reasoning.encrypted_content"}
	}
	rf := req.ResponseFormat
	if rf.Type == providers.FormatText {
		rf = p.defaultFormat()
		if rf.Type == providers.FormatText && p.opts.ResponseFormat == FormatText {
			w.Text = &wireText{Format: wireFormat{Type: "text"}}
		}
	}
	switch rf.Type {
	case providers.FormatJSONObject:
		w.Text = &wireText{Format: wireFormat{Type: "json_object"}}
	case providers.FormatJSONSchema:
		name := rf.Name
		if name == "" {
			name = "response"
		}
		strict := rf.Strict
		f := wireFormat{Type: "json_schema", Name: name, Schema: rf.Schema, Strict: &strict}
		if js := p.opts.JSONSchema; js != nil && req.ResponseFormat.Type == providers.FormatText {
			f.Description = js.Description
		}
		w.Text = &wireText{Format: f}
	}
	out, err := json.Marshal(w)
	if err != nil {
		return fail(providers.Invalid("encoding the request: %v", err))
	}
	return out, model, nil
}

// cacheKey is the prompt_cache_key sent for a session's key
// (docs/providers.md, "Prompt caching"): the key itself, or its SHA-256
// in hex when it is longer than the 64 characters the API takes, which
// keeps it stable and apart from other sessions' keys.
func cacheKey(key string) string {
	if len(key) <= 64 {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// input converts the conversation to input items: system messages join
// into the instructions; assistant text, function calls and reasoning
// items become items of their own, in the order they were produced; tool
// results become function_call_output items. A reasoning part goes back
// only when it holds a reasoning item this API produced (Redacted), and
// only when the API can use it: with its encrypted content, or when
// results are stored. Reasoning of other providers is left out.
func (p *Provider) input(msgs []providers.Message) (string, []any) {
	var system []string
	var out []any
	stored := p.opts.Store == nil || *p.opts.Store
	for _, m := range msgs {
		switch m.Role {
		case providers.RoleSystem:
			for _, part := range m.Content {
				if t, ok := part.(providers.Text); ok && t.Text != "" {
					system = append(system, t.Text)
				}
			}
		case providers.RoleUser:
			parts := contentParts(m.Content)
			if len(parts) > 0 {
				out = append(out, inputMessage{Role: "user", Content: parts})
			}
		case providers.RoleAssistant:
			var text strings.Builder
			flush := func() {
				if text.Len() > 0 {
					out = append(out, inputMessage{Role: "assistant", Content: text.String()})
					text.Reset()
				}
			}
			for _, part := range m.Content {
				switch part := part.(type) {
				case providers.Text:
					text.WriteString(part.Text)
				case providers.Reasoning:
					if item, encrypted := reasoningItem(part.Redacted); item != nil && (encrypted || stored) {
						flush()
						out = append(out, item)
					}
				case providers.ToolCall:
					flush()
					args := string(part.Arguments)
					if args == "" {
						args = "{}"
					}
					out = append(out, functionCall{Type: "function_call", CallID: part.ID, Name: part.Name, Arguments: args})
				}
			}
			flush()
		case providers.RoleTool:
			for _, part := range m.Content {
				tr, ok := part.(providers.ToolResult)
				if !ok {
					continue
				}
				out = append(out, functionCallOutput{Type: "function_call_output", CallID: tr.CallID, Output: toolOutput(tr)})
			}
		}
	}
	return strings.Join(system, "\n\n"), out
}

// reasoningItem returns a reasoning item the decoder kept, unchanged, and
// whether it carries encrypted content.
func reasoningItem(s string) (json.RawMessage, bool) {
	if s == "" || s[0] != '{' {
		return nil, false
	}
	var head struct {
		Type             string  `json:"type"`
		EncryptedContent *string `json:"encrypted_content"`
	}
	if json.Unmarshal([]byte(s), &head) != nil || head.Type != "reasoning" {
		return nil, false
	}
	return json.RawMessage(s), head.EncryptedContent != nil && *head.EncryptedContent != ""
}

func contentParts(parts []providers.Part) []inputPart {
	var out []inputPart
	for _, part := range parts {
		switch part := part.(type) {
		case providers.Text:
			if part.Text != "" {
				out = append(out, inputPart{Type: "input_text", Text: part.Text})
			}
		case providers.Image:
			out = append(out, inputPart{Type: "input_image", ImageURL: imageURL(part)})
		}
	}
	return out
}

// toolOutput is the result's text, or a list of parts when it holds
// images.
func toolOutput(tr providers.ToolResult) any {
	text, images := tr.TextAndImages()
	if len(images) == 0 {
		return text
	}
	return contentParts(tr.Content)
}

func imageURL(im providers.Image) string {
	if len(im.Data) > 0 {
		return "data:" + im.MediaType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
	}
	return im.URL
}

func isObject(b json.RawMessage) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal(b, &v) == nil && v != nil
}

var _ providers.Provider = (*Provider)(nil)
