// Package genai is the provider of the GenAI-style API surface
// (docs/providers.md, "genai (`providers/genai`)"): streamed content
// generation with text, thoughts, function calls and their thought
// signatures, inline images, and the API's generation options (thinking
// configuration, safety settings, tool configuration, response MIME type
// and schemas, response modalities). Image output is refused before any
// request for a model that is not listed as image-capable.
//
// Imports: the standard library, agent/providers and agent/internal/*.
package genai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"agent/providers"

	"agent/internal/quote"
)

// KeyEnv is the environment variable the key is conventionally read from.
const KeyEnv = "GENAI_API_KEY"

// OfficialBaseURL is the API root used when BaseURL is empty.
const OfficialBaseURL = "https://generativelanguage.googleapis.com"

// SignaturePrefix marks the thought signatures this provider puts in
// providers.Reasoning.Signature, so that it sends back only its own
// (another API's signature would be refused as invalid).
const SignaturePrefix = "genai:"

// DefaultImageCapableModels are the models allowed to return images when
// Options.ImageCapableModels is nil.
var DefaultImageCapableModels = []string{
	"gemini-2.5-flash-image",
	"gemini-2.5-flash-image-preview",
	"gemini-2.0-flash-preview-image-generation",
	"gemini-3-pro-image-preview",
}

// Modalities of a response (the defaultResponseModalities option).
const (
	ModalityText  = "TEXT"
	ModalityImage = "IMAGE"
)

// ThinkingConfig is the thinkingConfig option (docs/providers.md, "genai
// (`providers/genai`)").
type ThinkingConfig struct {
	// IncludeThoughts asks for thought summaries, streamed as reasoning.
	IncludeThoughts bool
	// ThinkingBudget, when set, bounds the thinking tokens (0 turns
	// thinking off where the model allows, -1 lets the model decide). A
	// request's Effort sets a budget of its own.
	ThinkingBudget *int
}

// SafetySetting is one entry of the safetySettings option: a harm category
// and the threshold at which content is blocked, as the API names them
// (HARM_CATEGORY_HARASSMENT, BLOCK_ONLY_HIGH, ...).
type SafetySetting struct {
	Category  string `json:"category"`
	Threshold string `json:"threshold"`
}

// Options are the provider's options (docs/providers.md, "genai
// (`providers/genai`)"), plus Client, Timeout, Logger, PayloadLogger and
// Header. The zero value of each field is its default.
type Options struct {
	// APIKey is always required (docs/providers.md, "Shared plumbing"); it
	// is sent in the x-goog-api-key header.
	APIKey string
	// BaseURL is the API root; "" means OfficialBaseURL. The provider
	// appends /v1beta/models/{model}:streamGenerateContent?alt=sse.
	BaseURL      string
	DefaultModel string
	// ResponseMimeType: "text/plain" or "application/json"; "" leaves it to
	// each request's response format.
	ResponseMimeType string
	// ResponseSchema (the API's schema subset) or ResponseJSONSchema (JSON
	// Schema) constrain JSON output; at most one of them.
	ResponseSchema     json.RawMessage
	ResponseJSONSchema json.RawMessage
	ThinkingConfig     *ThinkingConfig
	SafetySettings     []SafetySetting
	// ToolConfig is passed through as the request's toolConfig; when set
	// it replaces the function-calling mode derived from the request's
	// tool choice.
	ToolConfig json.RawMessage
	// DefaultResponseModalities, e.g. ["TEXT", "IMAGE"]; nil leaves the
	// model's default (text).
	DefaultResponseModalities []string
	// ImageCapableModels are the models allowed to return images; nil means
	// DefaultImageCapableModels. A request for image output from any other
	// model is refused before it is sent (docs/providers.md, "genai
	// (`providers/genai`)").
	ImageCapableModels []string

	Client        *http.Client            // transport; nil means a client that follows no redirects
	Timeout       time.Duration           // first-byte deadline and idle watchdog (docs/providers.md, "Deadlines and retries")
	Executor      providers.Executor      // sends requests; nil means Client
	Logger        *slog.Logger            // nil is silent
	PayloadLogger providers.PayloadLogger // a summary of each request
	Header        http.Header             // extra headers for every request
}

// Provider is the genai provider (docs/providers.md, "genai
// (`providers/genai`)"). It is safe for concurrent use.
type Provider struct {
	opts   Options
	base   string
	header http.Header
	sender *providers.Sender
}

// New returns the provider, or a *providers.MissingKeyError naming
// GENAI_API_KEY when the key is missing (a client does not replace it).
func New(opts Options) (*Provider, error) {
	if err := providers.RequireKey("genai", KeyEnv, opts.APIKey, nil); err != nil {
		return nil, err
	}
	base := strings.TrimRight(opts.BaseURL, "/")
	if base == "" {
		base = OfficialBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("genai: base URL %q: want the API root as an http or https URL", providers.RedactURL(opts.BaseURL))
	}
	switch opts.ResponseMimeType {
	case "", "text/plain", "application/json":
	default:
		return nil, fmt.Errorf("genai: responseMimeType %q: want text/plain or application/json", opts.ResponseMimeType)
	}
	if len(opts.ResponseSchema) > 0 && len(opts.ResponseJSONSchema) > 0 {
		return nil, fmt.Errorf("genai: responseSchema and responseJsonSchema: set only one")
	}
	for name, s := range map[string]json.RawMessage{"responseSchema": opts.ResponseSchema, "responseJsonSchema": opts.ResponseJSONSchema, "toolConfig": opts.ToolConfig} {
		if len(s) > 0 && !isObject(s) {
			return nil, fmt.Errorf("genai: %s: want a JSON object", name)
		}
	}
	for i, m := range opts.DefaultResponseModalities {
		if m != ModalityText && m != ModalityImage {
			return nil, fmt.Errorf("genai: defaultResponseModalities[%d] %q: want TEXT or IMAGE", i, m)
		}
	}
	for i, s := range opts.SafetySettings {
		if s.Category == "" || s.Threshold == "" {
			return nil, fmt.Errorf("genai: safetySettings[%d]: want a category and a threshold", i)
		}
	}
	h := opts.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("X-Goog-Api-Key", opts.APIKey)
	return &Provider{
		opts:   opts,
		base:   base,
		header: h,
		sender: &providers.Sender{
			Provider:      "genai",
			Executor:      opts.Executor,
			Client:        opts.Client,
			Logger:        opts.Logger,
			PayloadLogger: opts.PayloadLogger,
			Timeout:       opts.Timeout,
			ParseError:    ParseError,
		},
	}, nil
}

// URL is the endpoint the provider posts to for model.
func (p *Provider) URL(model string) string {
	model = strings.TrimPrefix(model, "models/")
	return providers.Endpoint(p.base, "/v1beta/models/"+url.PathEscape(model)+":streamGenerateContent", "alt=sse")
}

// Capabilities implements providers.Provider.
func (p *Provider) Capabilities(string) providers.Capabilities {
	return providers.Capabilities{Tools: true, ParallelToolCalls: true, Images: true, Reasoning: true, Effort: true,
		Temperature: true, JSONObject: true, JSONSchema: true}
}

// ImageCapable reports whether model may return images (the
// imageCapableModels option).
func (p *Provider) ImageCapable(model string) bool {
	list := p.opts.ImageCapableModels
	if list == nil {
		list = DefaultImageCapableModels
	}
	return slices.Contains(list, strings.TrimPrefix(model, "models/"))
}

// Chat implements providers.Provider.
func (p *Provider) Chat(ctx context.Context, req *providers.Request) (*providers.Stream, error) {
	body, model, err := p.Body(req)
	if err != nil {
		return nil, err
	}
	return p.sender.Stream(ctx, providers.Call{
		URL:        p.URL(model),
		Header:     p.header,
		Body:       body,
		NewDecoder: func() providers.Decoder { return NewDecoder() },
		Summary:    req.Summary(model),
	})
}

type wireRequest struct {
	Contents          []content         `json:"contents"`
	SystemInstruction *content          `json:"systemInstruction,omitempty"`
	Tools             []wireTool        `json:"tools,omitempty"`
	ToolConfig        json.RawMessage   `json:"toolConfig,omitempty"`
	SafetySettings    []SafetySetting   `json:"safetySettings,omitempty"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

type part struct {
	Text             *string           `json:"text,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FileData         *fileData         `json:"fileData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
}

type blob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type fileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type functionResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

type wireTool struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

type functionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type generationConfig struct {
	Temperature        *float64        `json:"temperature,omitempty"`
	MaxOutputTokens    int             `json:"maxOutputTokens,omitempty"`
	ResponseMimeType   string          `json:"responseMimeType,omitempty"`
	ResponseSchema     json.RawMessage `json:"responseSchema,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	ResponseModalities []string        `json:"responseModalities,omitempty"`
	ThinkingConfig     *wireThinking   `json:"thinkingConfig,omitempty"`
}

type wireThinking struct {
	IncludeThoughts bool `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int `json:"thinkingBudget,omitempty"`
}

// thinkingBudget maps a request's effort to a thinking budget in tokens.
var thinkingBudget = map[providers.Effort]int{
	providers.EffortLow: 1024, providers.EffortMedium: 8192, providers.EffortHigh: 24576,
	providers.EffortXHigh: 32768, providers.EffortMax: 32768,
}

// Body validates req and returns the JSON body the provider sends for it,
// and the model it names. Image output from a model that is not
// image-capable is refused here, before any request (docs/providers.md,
// "genai (`providers/genai`)").
func (p *Provider) Body(req *providers.Request) ([]byte, string, error) {
	fail := func(err error) ([]byte, string, error) {
		return nil, "", providers.NameProvider(err, "genai")
	}
	model, err := providers.Prepare(req, p.opts.DefaultModel, "genai")
	if err != nil {
		return nil, "", err
	}
	gc := &generationConfig{Temperature: req.Temperature, MaxOutputTokens: req.MaxTokens,
		ResponseMimeType: p.opts.ResponseMimeType, ResponseSchema: p.opts.ResponseSchema, ResponseJSONSchema: p.opts.ResponseJSONSchema}
	if slices.Contains(p.opts.DefaultResponseModalities, ModalityImage) && !p.ImageCapable(model) {
		return fail(providers.Invalid("model %q cannot return images: it is not in imageCapableModels", quote.V(model)))
	}
	gc.ResponseModalities = p.opts.DefaultResponseModalities
	switch rf := req.ResponseFormat; rf.Type {
	case providers.FormatJSONObject:
		gc.ResponseMimeType, gc.ResponseSchema, gc.ResponseJSONSchema = "application/json", nil, nil
	case providers.FormatJSONSchema:
		gc.ResponseMimeType, gc.ResponseSchema, gc.ResponseJSONSchema = "application/json", nil, rf.Schema
	}
	if tc := p.opts.ThinkingConfig; tc != nil || req.Effort != "" {
		t := &wireThinking{}
		if tc != nil {
			t.IncludeThoughts, t.ThinkingBudget = tc.IncludeThoughts, tc.ThinkingBudget
		}
		if req.Effort != "" {
			b := thinkingBudget[req.Effort]
			t.ThinkingBudget = &b
		}
		gc.ThinkingConfig = t
	}
	w := wireRequest{SafetySettings: p.opts.SafetySettings}
	if gc.Temperature != nil || gc.MaxOutputTokens != 0 || gc.ResponseMimeType != "" || gc.ResponseSchema != nil ||
		gc.ResponseJSONSchema != nil || gc.ResponseModalities != nil || gc.ThinkingConfig != nil {
		w.GenerationConfig = gc
	}
	var system string
	system, w.Contents = wireContents(req.Messages)
	if system != "" {
		w.SystemInstruction = &content{Parts: []part{{Text: &system}}}
	}
	if len(w.Contents) == 0 {
		return fail(providers.Invalid("no user or assistant messages"))
	}
	if len(req.Tools) > 0 {
		decls := make([]functionDeclaration, len(req.Tools))
		for i, t := range req.Tools {
			schema := t.Schema
			if len(schema) == 0 {
				schema = json.RawMessage(`{"type":"object","properties":{}}`)
			}
			decls[i] = functionDeclaration{Name: t.Name, Description: t.Description, ParametersJSONSchema: schema}
		}
		w.Tools = []wireTool{{FunctionDeclarations: decls}}
		var mode string
		var allowed []string
		switch req.ToolChoice.Mode {
		case providers.ToolAuto:
		case providers.ToolNone:
			mode = "NONE"
		case providers.ToolRequired:
			mode = "ANY"
		case providers.ToolNamed:
			mode, allowed = "ANY", []string{req.ToolChoice.Name}
		}
		if mode != "" {
			fc := map[string]any{"mode": mode}
			if allowed != nil {
				fc["allowedFunctionNames"] = allowed
			}
			w.ToolConfig, _ = json.Marshal(map[string]any{"functionCallingConfig": fc})
		}
	}
	if len(p.opts.ToolConfig) > 0 {
		w.ToolConfig = p.opts.ToolConfig // passed through (the toolConfig option)
	}
	out, err := json.Marshal(w)
	if err != nil {
		return fail(providers.Invalid("encoding the request: %v", err))
	}
	return out, model, nil
}

// wireContents converts the conversation: system messages join into the
// system instruction; the assistant is the "model" role; tool results are
// function responses in a user turn, named after the call they answer;
// consecutive turns of one role merge. A thought signature of this
// provider goes back on the part it came with: on the function call that
// follows it, else on the part before it, else on an empty text part.
// Thought text itself is not sent back.
func wireContents(msgs []providers.Message) (string, []content) {
	var system []string
	var out []content
	names := map[string]string{} // call id → function name, latest wins
	add := func(role string, parts []part) {
		if len(parts) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			return
		}
		out = append(out, content{Role: role, Parts: parts})
	}
	for _, m := range msgs {
		switch m.Role {
		case providers.RoleSystem:
			for _, p := range m.Content {
				if t, ok := p.(providers.Text); ok && t.Text != "" {
					system = append(system, t.Text)
				}
			}
		case providers.RoleUser:
			add("user", userParts(m.Content))
		case providers.RoleAssistant:
			var parts []part
			for i, p := range m.Content {
				switch p := p.(type) {
				case providers.Text:
					if p.Text != "" {
						t := p.Text
						parts = append(parts, part{Text: &t})
					}
				case providers.Image:
					parts = append(parts, imagePart(p))
				case providers.ToolCall:
					names[p.ID] = p.Name
					fc := &functionCall{Name: p.Name, Args: callArgs(p.Arguments)}
					if !strings.HasPrefix(p.ID, generatedID) {
						fc.ID = p.ID
					}
					parts = append(parts, part{FunctionCall: fc})
				case providers.Reasoning:
					sig, ok := strings.CutPrefix(p.Signature, SignaturePrefix)
					if !ok || sig == "" {
						continue
					}
					if i+1 < len(m.Content) {
						if _, next := m.Content[i+1].(providers.ToolCall); next {
							// Carried by the call: set when the call is added.
							parts = append(parts, part{ThoughtSignature: sig})
							continue
						}
					}
					if n := len(parts); n > 0 && parts[n-1].ThoughtSignature == "" {
						parts[n-1].ThoughtSignature = sig
					} else {
						empty := ""
						parts = append(parts, part{Text: &empty, ThoughtSignature: sig})
					}
				}
			}
			add("model", mergeSignatures(parts))
		case providers.RoleTool:
			var parts, images []part
			for _, p := range m.Content {
				tr, ok := p.(providers.ToolResult)
				if !ok {
					continue
				}
				text, ims := tr.TextAndImages()
				for _, im := range ims {
					images = append(images, imagePart(im))
				}
				key := "output"
				if tr.IsError {
					key = "error"
				}
				fr := &functionResponse{Name: names[tr.CallID], Response: map[string]any{key: text}}
				if !strings.HasPrefix(tr.CallID, generatedID) {
					fr.ID = tr.CallID
				}
				parts = append(parts, part{FunctionResponse: fr})
			}
			add("user", append(parts, images...))
		}
	}
	return strings.Join(system, "\n\n"), out
}

// mergeSignatures moves each signature-only placeholder onto the function
// call that follows it.
func mergeSignatures(parts []part) []part {
	out := parts[:0]
	pending := ""
	for _, p := range parts {
		if p.Text == nil && p.InlineData == nil && p.FileData == nil && p.FunctionCall == nil && p.FunctionResponse == nil {
			pending = p.ThoughtSignature
			continue
		}
		if pending != "" && p.FunctionCall != nil {
			p.ThoughtSignature, pending = pending, ""
		}
		out = append(out, p)
	}
	return out
}

func userParts(parts []providers.Part) []part {
	var out []part
	for _, p := range parts {
		switch p := p.(type) {
		case providers.Text:
			if p.Text != "" {
				t := p.Text
				out = append(out, part{Text: &t})
			}
		case providers.Image:
			out = append(out, imagePart(p))
		}
	}
	return out
}

func imagePart(im providers.Image) part {
	if len(im.Data) > 0 {
		return part{InlineData: &blob{MimeType: im.MediaType, Data: base64.StdEncoding.EncodeToString(im.Data)}}
	}
	return part{FileData: &fileData{MimeType: im.MediaType, FileURI: im.URL}}
}

// callArgs is the call's arguments when they form a JSON object, which
// the API requires, and {} otherwise.
func callArgs(args json.RawMessage) json.RawMessage {
	if isObject(args) {
		return args
	}
	return json.RawMessage("{}")
}

func isObject(b json.RawMessage) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal(b, &v) == nil && v != nil
}

var _ providers.Provider = (*Provider)(nil)
