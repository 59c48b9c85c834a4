package providers

import (
	"encoding/json"
	"errors"
	"fmt"

	"agent/internal/quote"
)

// Validate checks a request before anything is sent, so that a malformed
// conversation fails with ErrInvalidRequest instead of an API error: known
// roles carrying the parts they may carry (system: Text; user: Text and
// Image; assistant: Text, Image (an image the model produced), Reasoning
// and ToolCall; tool: ToolResult with Text and Image), well-formed JSON
// schemas (tool arguments may be anything the model produced, even cut-off
// JSON: the conversation must still go on), tool names of 1 to 64
// characters from [A-Za-z0-9_-] (docs/providers.md, "The Provider
// interface"), unique tool names, a named tool choice naming an offered
// tool, known efforts, and cache marks within the conversation.
func (r *Request) Validate() error {
	if len(r.Messages) == 0 {
		return Invalid("no messages")
	}
	for i, m := range r.Messages {
		if err := validateMessage(m); err != nil {
			return Invalid("message %d (%s): %s", i, m.Role, err)
		}
	}
	names := make(map[string]bool, len(r.Tools))
	for _, t := range r.Tools {
		if !validToolName(t.Name) {
			return Invalid("tool name %q: want 1 to 64 characters from A-Z a-z 0-9 _ -", quote.V(t.Name))
		}
		if names[t.Name] {
			return Invalid("tool %q offered twice", quote.V(t.Name))
		}
		names[t.Name] = true
		if len(t.Schema) > 0 && !isObject(t.Schema) {
			return Invalid("tool %q: the schema is not a JSON object", quote.V(t.Name))
		}
	}
	switch r.ToolChoice.Mode {
	case ToolAuto, ToolNone:
	case ToolRequired:
		if len(r.Tools) == 0 {
			return Invalid("tool choice required without tools")
		}
	case ToolNamed:
		if !names[r.ToolChoice.Name] {
			return Invalid("tool choice names %q, which is not offered", quote.V(r.ToolChoice.Name))
		}
	default:
		return Invalid("unknown tool choice mode %d", r.ToolChoice.Mode)
	}
	if !r.Effort.Valid() {
		return Invalid("unknown effort %q", quote.V(string(r.Effort)))
	}
	if r.MaxTokens < 0 {
		return Invalid("negative max tokens")
	}
	if t := r.Temperature; t != nil && (*t < 0 || *t > 2) {
		return Invalid("temperature %v outside 0 to 2", *t)
	}
	switch r.ResponseFormat.Type {
	case FormatText, FormatJSONObject:
	case FormatJSONSchema:
		if !isObject(r.ResponseFormat.Schema) {
			return Invalid("response format json_schema without a JSON object schema")
		}
	default:
		return Invalid("unknown response format %d", r.ResponseFormat.Type)
	}
	return r.Cache.validate(r.Messages)
}

// validate checks that the marks of the stable prefix lie within the
// conversation (docs/providers.md, "Prompt caching").
func (c Cache) validate(msgs []Message) error {
	system := 0
	for _, m := range msgs {
		if m.Role == RoleSystem {
			system++
		}
	}
	if c.StaticSystem < 0 || c.StaticSystem > system {
		return Invalid("cache: %d static system messages of %d", c.StaticSystem, system)
	}
	if c.Prefix < 0 || c.Prefix > len(msgs) {
		return Invalid("cache: a stable prefix of %d messages of %d", c.Prefix, len(msgs))
	}
	return nil
}

func validateMessage(m Message) error {
	for _, p := range m.Content {
		ok := false
		switch p := p.(type) {
		case Text:
			ok = m.Role != RoleTool
		case Image:
			ok = m.Role == RoleUser || m.Role == RoleAssistant
			if err := validateImage(p); err != nil {
				return err
			}
		case Reasoning:
			ok = m.Role == RoleAssistant
		case ToolCall:
			ok = m.Role == RoleAssistant
			if p.ID == "" || p.Name == "" {
				return fmt.Errorf("tool call without id or name")
			}
		case ToolResult:
			ok = m.Role == RoleTool
			if p.CallID == "" {
				return fmt.Errorf("tool result without call id")
			}
			for _, c := range p.Content {
				switch c := c.(type) {
				case Text:
				case Image:
					if err := validateImage(c); err != nil {
						return err
					}
				default:
					return fmt.Errorf("tool result %s holds a %T", p.CallID, c)
				}
			}
		case nil:
			return fmt.Errorf("nil part")
		}
		if !ok {
			return fmt.Errorf("a %T part cannot appear here", p)
		}
	}
	switch m.Role {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return nil
	}
	return fmt.Errorf("unknown role")
}

func validateImage(im Image) error {
	switch {
	case len(im.Data) > 0 && im.URL != "":
		return fmt.Errorf("image with both data and URL")
	case len(im.Data) > 0 && im.MediaType == "":
		return fmt.Errorf("inline image without media type")
	case len(im.Data) == 0 && im.URL == "":
		return fmt.Errorf("empty image")
	}
	return nil
}

func validToolName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func isObject(b json.RawMessage) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal(b, &v) == nil && v != nil
}

// Summary returns the payload summary of r for model (PayloadLogger).
func (r *Request) Summary(model string) PayloadSummary {
	return PayloadSummary{Model: model, Messages: len(r.Messages), Tools: len(r.Tools)}
}

// Valid reports whether e is empty or one of the known efforts.
func (e Effort) Valid() bool {
	switch e {
	case "", EffortLow, EffortMedium, EffortHigh, EffortXHigh, EffortMax:
		return true
	}
	return false
}

// Prepare is the opening of every surface's request building: it
// validates req and returns the model it names, or defaultModel. Errors
// are *Error values that name the provider.
func Prepare(req *Request, defaultModel, provider string) (string, error) {
	err := req.Validate()
	model := req.Model
	if model == "" {
		model = defaultModel
	}
	if err == nil && model == "" {
		err = Invalid("no model: name one in the request or the provider's options")
	}
	return model, NameProvider(err, provider)
}

// NameProvider sets the provider of an *Error that names none.
func NameProvider(err error, provider string) error {
	var pe *Error
	if errors.As(err, &pe) && pe.Provider == "" {
		pe.Provider = provider
	}
	return err
}
