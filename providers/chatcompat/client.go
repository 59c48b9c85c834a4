// Package chatcompat is a client of the chat-completions API surface
// (docs/providers.md, "reasoning, regional, local
// (`providers/chatcompat`)"): streaming with the usage tail, tool-call
// deltas keyed by index, finish reasons, json_object and json_schema
// response formats and in-stream errors. On it stand ReasoningProvider,
// RegionalProvider and LocalProvider; the responses provider reuses Client
// for its chat-completions surface.
//
// Imports: the standard library, agent/providers and agent/internal/*.
package chatcompat

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"agent/providers"
)

// ReasoningReplay says which reasoning an assistant message carries back
// to the API, as reasoning_content.
type ReasoningReplay uint8

// Replay policies; the zero value sends none back, which every
// chat-completions server accepts.
const (
	ReplayNone ReasoningReplay = iota
	// ReplayToolTurns sends reasoning back on every assistant message of
	// a user turn (the messages between two user messages) in which the
	// model called tools: the reasoning API requires it there (an empty
	// reasoning_content where the model gave none, or another provider
	// wrote the message: without the field the API refuses the request)
	// and ignores it elsewhere.
	ReplayToolTurns
	// ReplayAll sends every assistant message's reasoning back.
	ReplayAll
)

// Options configures a Client. The zero value of each field is its
// documented default; BaseURL is required.
type Options struct {
	// Name is the provider id used in errors and logs; "" means "chatcompat".
	Name string
	// BaseURL includes the version path (http://127.0.0.1:1234/v1); the
	// client appends /chat/completions (docs/providers.md, "Endpoint paths
	// and masked URLs").
	BaseURL string
	// APIKey is sent as a bearer token when not empty.
	APIKey string
	// Header holds extra headers for every request (organization ids,
	// gateway headers).
	Header http.Header
	// DefaultModel is used when a request names none.
	DefaultModel string

	Client        *http.Client            // sends requests when Executor is nil
	Executor      providers.Executor      // sends requests; nil means Client
	Logger        *slog.Logger            // nil is silent
	PayloadLogger providers.PayloadLogger // receives a summary of each request
	// Timeout is the first-byte deadline and idle watchdog of
	// docs/providers.md, "Deadlines and retries"; zero means
	// providers.DefaultTimeout.
	Timeout time.Duration

	// OmitStreamUsage leaves out stream_options.include_usage, for
	// endpoints that reject it (the responses option includeStreamUsage,
	// default on; docs/providers.md, "responses (`providers/responses`)").
	OmitStreamUsage bool
	// MaxTokensField names the output bound; "" means "max_tokens" (some
	// endpoints want "max_completion_tokens").
	MaxTokensField string
	// EffortField names the reasoning-effort field; "" means
	// "reasoning_effort", "-" means Request.Effort is not sent.
	EffortField string
	// Reasoning says which reasoning goes back with assistant messages.
	Reasoning ReasoningReplay
	// StrictTools marks function definitions "strict": true.
	StrictTools bool
	// Decorate, when set, may add or change top-level fields of each
	// request body after the client has built it (vendor extensions such
	// as thinking switches). Values must marshal to JSON.
	Decorate func(req *providers.Request, body map[string]any) error
	// Capabilities answers the capability query; nil means everything
	// is supported. Chat refuses tools, images and response formats a
	// model does not support, before sending.
	Capabilities func(model string) providers.Capabilities
}

// Client is a chat-completions client. It implements providers.Provider
// and is safe for concurrent use.
type Client struct {
	opts   Options
	url    string
	header http.Header
	sender *providers.Sender
	cache  encodeCache
}

// NewClient returns a client of the chat-completions surface at
// opts.BaseURL. It does not require a key: the providers built on it decide
// that (docs/providers.md, "Shared plumbing").
func NewClient(opts Options) (*Client, error) {
	if opts.Name == "" {
		opts.Name = "chatcompat"
	}
	u, err := url.Parse(opts.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s: base URL %q: want an http or https URL", opts.Name, providers.RedactURL(opts.BaseURL))
	}
	h := opts.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if opts.APIKey != "" {
		h.Set("Authorization", "Bearer "+opts.APIKey)
	}
	return &Client{
		opts:   opts,
		url:    providers.Endpoint(opts.BaseURL, "/chat/completions", ""),
		header: h,
		sender: &providers.Sender{
			Provider:      opts.Name,
			Executor:      opts.Executor,
			Client:        opts.Client,
			Logger:        opts.Logger,
			PayloadLogger: opts.PayloadLogger,
			Timeout:       opts.Timeout,
			ParseError:    ParseError,
		},
	}, nil
}

// URL is the endpoint the client posts to.
func (c *Client) URL() string { return c.url }

// Capabilities implements providers.Provider.
func (c *Client) Capabilities(model string) providers.Capabilities {
	if model == "" {
		model = c.opts.DefaultModel
	}
	if c.opts.Capabilities != nil {
		return c.opts.Capabilities(model)
	}
	return providers.Capabilities{Tools: true, ParallelToolCalls: true, Images: true, Reasoning: true,
		Effort: true, Temperature: true, JSONObject: true, JSONSchema: true}
}

// Chat implements providers.Provider.
func (c *Client) Chat(ctx context.Context, req *providers.Request) (*providers.Stream, error) {
	body, model, err := c.Body(req)
	if err != nil {
		return nil, err
	}
	sum := req.Summary(model)
	return c.sender.Stream(ctx, providers.Call{
		URL:        c.url,
		Header:     c.header,
		Body:       body,
		NewDecoder: func() providers.Decoder { return NewDecoder() },
		Summary:    sum,
	})
}

// Body validates req and returns the JSON body the client sends for it,
// and the model it names.
func (c *Client) Body(req *providers.Request) ([]byte, string, error) {
	fail := func(err error) ([]byte, string, error) {
		return nil, "", providers.NameProvider(err, c.opts.Name)
	}
	model, err := providers.Prepare(req, c.opts.DefaultModel, c.opts.Name)
	if err != nil {
		return nil, "", err
	}
	caps := c.Capabilities(model)
	if err := checkCaps(req, caps); err != nil {
		return fail(err)
	}
	b := map[string]any{
		"model":    model,
		"messages": json.RawMessage("0"), // encodeInto puts them in
		"stream":   true,
	}
	if !c.opts.OmitStreamUsage {
		b["stream_options"] = map[string]any{"include_usage": true}
	}
	if len(req.Tools) > 0 {
		// Tools go out with choice "none" too: a conversation that holds
		// tool calls keeps their definitions in view.
		tools := make([]wireTool, len(req.Tools))
		for i, t := range req.Tools {
			schema := t.Schema
			if len(schema) == 0 {
				schema = json.RawMessage(`{"type":"object","properties":{}}`)
			}
			tools[i] = wireTool{Type: "function", Function: wireFunction{Name: t.Name, Description: t.Description, Parameters: schema, Strict: c.opts.StrictTools}}
		}
		b["tools"] = tools
		switch req.ToolChoice.Mode {
		case providers.ToolAuto:
			b["tool_choice"] = "auto"
		case providers.ToolNone:
			b["tool_choice"] = "none"
		case providers.ToolRequired:
			b["tool_choice"] = "required"
		case providers.ToolNamed:
			b["tool_choice"] = map[string]any{"type": "function", "function": map[string]string{"name": req.ToolChoice.Name}}
		}
	}
	if req.MaxTokens > 0 {
		f := c.opts.MaxTokensField
		if f == "" {
			f = "max_tokens"
		}
		b[f] = req.MaxTokens
	}
	if req.Temperature != nil {
		b["temperature"] = *req.Temperature
	}
	if req.Effort != "" && c.opts.EffortField != "-" {
		f := c.opts.EffortField
		if f == "" {
			f = "reasoning_effort"
		}
		b[f] = string(req.Effort)
	}
	switch rf := req.ResponseFormat; rf.Type {
	case providers.FormatJSONObject:
		b["response_format"] = map[string]any{"type": "json_object"}
	case providers.FormatJSONSchema:
		name := rf.Name
		if name == "" {
			name = "response"
		}
		js := map[string]any{"name": name, "schema": rf.Schema}
		if rf.Strict {
			js["strict"] = true
		}
		b["response_format"] = map[string]any{"type": "json_schema", "json_schema": js}
	}
	if c.opts.Decorate != nil {
		if err := c.opts.Decorate(req, b); err != nil {
			return fail(err)
		}
	}
	out, err := json.Marshal(b)
	if err != nil {
		return fail(providers.Invalid("encoding the request: %v", err))
	}
	return c.cache.encodeInto(out, req.Messages, c.opts.Reasoning), model, nil
}

// checkCaps refuses what the model cannot take, before anything is sent.
func checkCaps(req *providers.Request, caps providers.Capabilities) error {
	if len(req.Tools) > 0 && req.ToolChoice.Mode != providers.ToolNone && !caps.Tools {
		return providers.Invalid("this model takes no tools")
	}
	switch req.ResponseFormat.Type {
	case providers.FormatJSONObject:
		if !caps.JSONObject {
			return providers.Invalid("this model has no json_object response format")
		}
	case providers.FormatJSONSchema:
		if !caps.JSONSchema {
			return providers.Invalid("this model has no json_schema response format")
		}
	}
	if !caps.Images {
		for _, m := range req.Messages {
			for _, p := range m.Content {
				if hasImage(p) {
					return providers.Invalid("this model takes no images")
				}
			}
		}
	}
	return nil
}

func hasImage(p providers.Part) bool {
	switch p := p.(type) {
	case providers.Image:
		return true
	case providers.ToolResult:
		for _, c := range p.Content {
			if _, ok := c.(providers.Image); ok {
				return true
			}
		}
	}
	return false
}

type wireMessage struct {
	Role             string         `json:"role"`
	Content          any            `json:"content"`
	ReasoningContent *string        `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
}

type wirePart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL string `json:"url"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireCallFunc `json:"function"`
}

type wireCallFunc struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict,omitempty"`
}

// wireMessages converts the conversation. Each tool result becomes a
// "tool" message; images in tool results (which "tool" messages cannot
// carry) follow in one user message after the run of tool messages.
func wireMessages(msgs []providers.Message, replay ReasoningReplay) []wireMessage {
	toolTurn := toolTurns(msgs)
	out := make([]wireMessage, 0, len(msgs))
	var pendingImages []wirePart
	for i, m := range msgs {
		if m.Role != providers.RoleTool && len(pendingImages) > 0 {
			out = append(out, wireMessage{Role: "user", Content: pendingImages})
			pendingImages = nil
		}
		var images []wirePart
		out, images = wireMessage1(out, m, toolTurn[i], replay)
		pendingImages = append(pendingImages, images...)
	}
	if len(pendingImages) > 0 {
		out = append(out, wireMessage{Role: "user", Content: pendingImages})
	}
	return out
}

// wireMessage1 appends the wire form of one message; toolTurn says whether
// it belongs to a user turn in which the assistant called tools. A tool
// message's images are returned apart, for the user message that follows
// the run of tool messages.
func wireMessage1(out []wireMessage, m providers.Message, toolTurn bool, replay ReasoningReplay) ([]wireMessage, []wirePart) {
	switch m.Role {
	case providers.RoleSystem:
		return append(out, wireMessage{Role: "system", Content: joinText(m.Content)}), nil
	case providers.RoleUser:
		return append(out, wireMessage{Role: "user", Content: userContent(m.Content)}), nil
	case providers.RoleAssistant:
		w := wireMessage{Role: "assistant"}
		replayEmpty := func() {
			if replay == ReplayToolTurns && toolTurn {
				empty := ""
				w.ReasoningContent = &empty
			}
		}
		if len(m.Content) == 1 {
			// The usual answer, one text or one call: no builders.
			switch p := m.Content[0].(type) {
			case providers.Text:
				w.Content = p.Text
				replayEmpty()
				return append(out, w), nil
			case providers.ToolCall:
				w.ToolCalls = []wireToolCall{wireCall(p)}
				replayEmpty()
				return append(out, w), nil
			}
		}
		var text, reasoning strings.Builder
		hasReasoning := false
		for _, p := range m.Content {
			switch p := p.(type) {
			case providers.Text:
				text.WriteString(p.Text)
			case providers.Reasoning:
				if p.Text != "" {
					reasoning.WriteString(p.Text)
					hasReasoning = true
				}
			case providers.ToolCall:
				w.ToolCalls = append(w.ToolCalls, wireCall(p))
			}
		}
		if text.Len() > 0 || len(w.ToolCalls) == 0 {
			w.Content = text.String()
		}
		if (hasReasoning && replay == ReplayAll) || (replay == ReplayToolTurns && toolTurn) {
			r := reasoning.String()
			w.ReasoningContent = &r
		}
		return append(out, w), nil
	case providers.RoleTool:
		var pending []wirePart
		for _, p := range m.Content {
			tr, ok := p.(providers.ToolResult)
			if !ok {
				continue
			}
			text, images := tr.TextAndImages()
			for _, im := range images {
				pending = append(pending, imagePart(im))
			}
			out = append(out, wireMessage{Role: "tool", ToolCallID: tr.CallID, Content: text})
		}
		return out, pending
	}
	return out, nil
}

func wireCall(p providers.ToolCall) wireToolCall {
	args := string(p.Arguments)
	if args == "" {
		args = "{}"
	}
	return wireToolCall{ID: p.ID, Type: "function", Function: wireCallFunc{Name: p.Name, Arguments: args}}
}

// toolTurns marks the messages of each user turn in which an assistant
// message called tools.
func toolTurns(msgs []providers.Message) []bool {
	marks := make([]bool, len(msgs))
	start := 0
	mark := func(end int) {
		called := false
		for _, m := range msgs[start:end] {
			for _, p := range m.Content {
				if _, ok := p.(providers.ToolCall); ok && m.Role == providers.RoleAssistant {
					called = true
				}
			}
		}
		for i := start; i < end; i++ {
			marks[i] = called
		}
	}
	for i, m := range msgs {
		if m.Role == providers.RoleUser {
			mark(i)
			start = i
		}
	}
	mark(len(msgs))
	return marks
}

func joinText(parts []providers.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if t, ok := p.(providers.Text); ok {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// userContent is a plain string for text alone (every server takes it),
// content parts otherwise.
func userContent(parts []providers.Part) any {
	simple := true
	for _, p := range parts {
		if _, ok := p.(providers.Text); !ok {
			simple = false
		}
	}
	if simple && len(parts) <= 1 {
		return joinText(parts)
	}
	out := make([]wirePart, 0, len(parts))
	for _, p := range parts {
		switch p := p.(type) {
		case providers.Text:
			out = append(out, wirePart{Type: "text", Text: p.Text})
		case providers.Image:
			out = append(out, imagePart(p))
		}
	}
	return out
}

func imagePart(im providers.Image) wirePart {
	u := im.URL
	if len(im.Data) > 0 {
		u = "data:" + im.MediaType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
	}
	return wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: u}}
}
