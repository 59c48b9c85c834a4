// Package providers defines what the agent runtime needs from a chat model
// (docs/providers.md, "The Provider interface" and "Shared plumbing"): the
// Provider interface with its streaming chat call and capability query, the
// message, tool, option and event types every API surface maps to, typed
// errors the runtime branches on with errors.Is and errors.As, and the HTTP
// plumbing every surface shares: sending through an Executor, retries, the
// first-byte deadline and the idle watchdog, and server-sent event decoding
// with bounded lines.
//
// One package per API surface implements Provider on top of this one
// (providers/chatcompat, providers/messages, providers/responses,
// providers/genai); providers/builtin holds the definitions the command
// line offers, and providers/video the video generator, which is not a chat
// provider.
//
// Imports: the standard library and agent/internal/* (README.md, "A walk
// through the code").
package providers

import (
	"context"
	"encoding/json"
	"strings"
)

// Provider is one chat model endpoint. Implementations are safe for
// concurrent use: several turns may stream at once.
type Provider interface {
	// Chat sends req and streams the answer. The returned error, or the
	// first error from the stream, is an *Error for every failure of the
	// call itself (see the Err* kinds); invalid arguments are reported
	// before anything is sent. Cancelling ctx ends the stream promptly
	// with an ErrCancelled error. The caller must Close the stream or read
	// it to its end.
	Chat(ctx context.Context, req *Request) (*Stream, error)
	// Capabilities tells what the provider supports for model ("" means
	// the provider's default model). The answer is the provider's best
	// knowledge; endpoints reached through a custom base URL may differ.
	Capabilities(model string) Capabilities
}

// Capabilities describes what a provider and model accept and produce.
type Capabilities struct {
	Tools             bool // function tools and tool choice
	ParallelToolCalls bool // several tool calls in one answer
	Images            bool // image input in user messages and tool results
	Reasoning         bool // the model streams reasoning apart from the answer
	Effort            bool // Request.Effort has an effect
	Temperature       bool // Request.Temperature has an effect
	JSONObject        bool // ResponseFormat JSONObject
	JSONSchema        bool // ResponseFormat JSONSchema
}

// Request is one chat call.
type Request struct {
	// Model is passed to the endpoint verbatim (docs/providers.md, "The
	// Provider interface"); empty means the provider's default model.
	Model    string
	Messages []Message
	Tools    []Tool
	// ToolChoice applies when Tools is not empty; the zero value is auto.
	ToolChoice ToolChoice
	// MaxTokens bounds the answer; 0 leaves it to the provider (the
	// messages API requires one, so that provider picks a default).
	MaxTokens int
	// Temperature is sent when not nil.
	Temperature *float64
	// Effort is the reasoning depth; empty means the provider's default.
	Effort Effort
	// ResponseFormat constrains the answer; the zero value is free text.
	ResponseFormat ResponseFormat
	// Cache says where the request's stable prefix ends, for the APIs
	// that cache prompts (docs/providers.md, "Prompt caching"); the zero
	// value marks what a request shows by itself.
	Cache Cache
}

// Cache marks the stable prefix of a request (docs/providers.md, "Prompt
// caching"). A cache changes the cost and speed of a request, never its
// answer. The zero value caches what needs no knowledge of the session:
// the tools and the system text, and the conversation up to its newest
// message; it sends no key.
type Cache struct {
	// Off sends the request without cache marks or key, as it went before
	// the APIs cached prompts (for an endpoint that refuses them).
	Off bool
	// Key is the same for every request of one session and differs
	// between sessions; the responses API routes the requests of one key
	// to the same cache. Empty sends none.
	Key string
	// StaticSystem is how many of the request's system messages, from the
	// first, are the same in every session (the static system prompt);
	// the later ones hold what may differ between sessions (the date, the
	// workspace). 0 means every system message is static.
	StaticSystem int
	// Prefix is how many messages, from the first, stay unchanged for the
	// rest of the session: the system messages and the context message
	// that carries the instruction files. 0 marks none.
	Prefix int
}

// Role says who wrote a message.
type Role string

// Roles. A RoleTool message carries only ToolResult parts, answering the
// tool calls of the assistant message before it.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of the conversation.
type Message struct {
	Role    Role
	Content []Part
}

// Part is one piece of a message: Text, Image, Reasoning, ToolCall or
// ToolResult. Which parts each role may carry is checked by Validate.
type Part interface{ isPart() }

// Text is plain text.
type Text struct{ Text string }

// Image is an image, inline (Data with MediaType such as "image/png") or
// by URL.
type Image struct {
	MediaType string
	Data      []byte
	URL       string
}

// Reasoning is the model's reasoning before its answer, kept so that it can
// be sent back where an API requires it. Signature (messages API) proves
// the text came from that API and is required to send it back there;
// Redacted holds an opaque encrypted block instead of text.
type Reasoning struct {
	Text      string
	Signature string
	Redacted  string
}

// ToolCall is the assistant asking for a tool to run. Arguments is the
// JSON object the model produced, as it produced it.
type ToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage
}

// ToolResult answers the ToolCall with the same ID. Content holds Text and
// Image parts.
type ToolResult struct {
	CallID  string
	Content []Part
	IsError bool
}

// TextAndImages splits a tool result's content the way the APIs whose
// tool results hold text only need it: the Text parts joined by newlines,
// and the Images, which such an API receives apart.
func (tr ToolResult) TextAndImages() (string, []Image) {
	if len(tr.Content) == 1 {
		// The usual result, one text: no copy.
		if t, ok := tr.Content[0].(Text); ok {
			return t.Text, nil
		}
	}
	var text strings.Builder
	var images []Image
	for _, c := range tr.Content {
		switch c := c.(type) {
		case Text:
			if text.Len() > 0 {
				text.WriteByte('\n')
			}
			text.WriteString(c.Text)
		case Image:
			images = append(images, c)
		}
	}
	return text.String(), images
}

func (Text) isPart()       {}
func (Image) isPart()      {}
func (Reasoning) isPart()  {}
func (ToolCall) isPart()   {}
func (ToolResult) isPart() {}

// Tool is a function the model may call. Schema is the JSON Schema of its
// argument object; empty means an object with no properties.
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage
}

// ToolChoiceMode says whether and which tool the model must call.
type ToolChoiceMode uint8

// Tool choice modes; the zero value is ToolAuto.
const (
	ToolAuto     ToolChoiceMode = iota // the model decides
	ToolNone                           // no tool call
	ToolRequired                       // at least one tool call
	ToolNamed                          // a call of the tool named in ToolChoice.Name
)

// ToolChoice is the tool choice of a request.
type ToolChoice struct {
	Mode ToolChoiceMode
	Name string // for ToolNamed
}

// Effort is a reasoning depth (docs/providers.md, "The Provider
// interface").
type Effort string

// Efforts, from least to most reasoning.
const (
	EffortLow    Effort = "low"
	EffortMedium Effort = "medium"
	EffortHigh   Effort = "high"
	EffortXHigh  Effort = "xhigh"
	EffortMax    Effort = "max"
)

// ResponseFormatType names a response format (docs/providers.md, "The
// Provider interface").
type ResponseFormatType uint8

// Response formats; the zero value is free text.
const (
	FormatText ResponseFormatType = iota
	FormatJSONObject
	FormatJSONSchema
)

// ResponseFormat constrains the answer's shape.
type ResponseFormat struct {
	Type   ResponseFormatType
	Name   string          // the schema's name (JSONSchema); empty means "response"
	Schema json.RawMessage // the JSON Schema (JSONSchema)
	Strict bool            // ask for strict schema adherence where the API offers it
}
