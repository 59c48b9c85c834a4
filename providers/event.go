package providers

import (
	"encoding/json"
	"slices"
)

// EventType says what an Event carries.
type EventType uint8

// Event types. A stream delivers deltas in the order the model produced
// them, Usage when the API reports it, and ends with exactly one Finish
// (then io.EOF) unless it fails.
const (
	EventTextDelta      EventType = iota + 1 // Text: a piece of the answer
	EventReasoningDelta                      // Text, Signature or Redacted of reasoning block Index
	EventRefusalDelta                        // Text: a piece of a refusal the model wrote instead of an answer
	EventToolCallStart                       // Index, ID, Name of a new tool call
	EventToolCallDelta                       // Text: a piece of tool call Index's JSON arguments
	EventToolCallEnd                         // tool call Index is complete
	EventUsage                               // Usage: token counts so far (replaces earlier ones)
	EventFinish                              // Finish, Raw: why the answer ended
	// EventImage: an image the model produced (MediaType, Data), where
	// the model answers with images (genai response modalities). It
	// comes before Finish like every other delta; its value follows
	// EventFinish only so that the earlier values stay as they were.
	EventImage
)

// Event is one item of a stream. Index tells apart blocks of one kind in
// one answer (parallel tool calls, several reasoning blocks); it is
// meaningful only within one response.
type Event struct {
	Type      EventType
	Index     int
	Text      string
	ID        string // EventToolCallStart
	Name      string // EventToolCallStart
	Signature string // EventReasoningDelta: the block's signature, when it arrives
	Redacted  string // EventReasoningDelta: an opaque redacted block
	Usage     Usage  // EventUsage
	Finish    FinishReason
	Raw       string // EventFinish: the API's own reason
	MediaType string // EventImage
	Data      []byte // EventImage
}

// Usage counts tokens of one call. InputTokens counts the whole prompt,
// cached parts included; the cache and reasoning counts are subsets.
type Usage struct {
	InputTokens      int
	OutputTokens     int
	CacheReadTokens  int
	CacheWriteTokens int
	ReasoningTokens  int
}

// FinishReason says why an answer ended.
type FinishReason string

// Finish reasons; FinishOther keeps the API's reason in Event.Raw.
const (
	FinishStop          FinishReason = "stop"           // the answer is complete
	FinishLength        FinishReason = "length"         // MaxTokens reached
	FinishToolCalls     FinishReason = "tool_calls"     // the model waits for tool results
	FinishContentFilter FinishReason = "content_filter" // the provider withheld content
	FinishRefusal       FinishReason = "refusal"        // the model declined
	FinishPause         FinishReason = "pause"          // a long turn paused; send it back to continue
	FinishContextWindow FinishReason = "context_window" // the context window filled up
	FinishOther         FinishReason = "other"
)

// Collector rebuilds the assistant message from a stream's events, in the
// order its blocks began, so that the runtime can append it to the
// conversation and send it back (reasoning with its signature included).
// The zero value is ready; it is not safe for concurrent use.
type Collector struct {
	parts  []collected
	usage  Usage
	finish FinishReason
	raw    string
}

type collected struct {
	kind  EventType // EventTextDelta, EventReasoningDelta, EventRefusalDelta or EventToolCallStart
	index int
	text  []byte
	sig   string
	red   string
	id    string
	name  string
	done  bool
	media string // EventImage
}

func (c *Collector) part(kind EventType, index int) *collected {
	for i := len(c.parts) - 1; i >= 0; i-- {
		if p := &c.parts[i]; p.kind == kind && p.index == index {
			return p
		}
	}
	c.parts = append(c.parts, collected{kind: kind, index: index})
	return &c.parts[len(c.parts)-1]
}

// Add takes one event.
func (c *Collector) Add(ev Event) {
	switch ev.Type {
	case EventTextDelta, EventRefusalDelta:
		p := c.part(ev.Type, ev.Index)
		p.text = append(p.text, ev.Text...)
	case EventReasoningDelta:
		p := c.part(ev.Type, ev.Index)
		p.text = append(p.text, ev.Text...)
		p.sig += ev.Signature
		p.red += ev.Redacted
	case EventToolCallStart:
		p := c.part(EventToolCallStart, ev.Index)
		p.id, p.name = ev.ID, ev.Name
	case EventToolCallDelta:
		p := c.part(EventToolCallStart, ev.Index)
		p.text = append(p.text, ev.Text...)
	case EventToolCallEnd:
		c.part(EventToolCallStart, ev.Index).done = true
	case EventUsage:
		c.usage = ev.Usage
	case EventFinish:
		c.finish, c.raw = ev.Finish, ev.Raw
	case EventImage:
		c.parts = append(c.parts, collected{kind: EventImage, index: ev.Index, text: slices.Clone(ev.Data), media: ev.MediaType})
	}
}

// Message returns the assistant message built so far. A refusal becomes
// text; tool calls with empty arguments get "{}".
func (c *Collector) Message() Message {
	m := Message{Role: RoleAssistant}
	for _, p := range c.parts {
		switch p.kind {
		case EventTextDelta, EventRefusalDelta:
			if len(p.text) > 0 {
				m.Content = append(m.Content, Text{Text: string(p.text)})
			}
		case EventReasoningDelta:
			m.Content = append(m.Content, Reasoning{Text: string(p.text), Signature: p.sig, Redacted: p.red})
		case EventToolCallStart:
			args := json.RawMessage(slices.Clone(p.text))
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			m.Content = append(m.Content, ToolCall{ID: p.id, Name: p.name, Arguments: args})
		case EventImage:
			m.Content = append(m.Content, Image{MediaType: p.media, Data: p.text})
		}
	}
	return m
}

// ToolCalls returns the tool calls of the answer.
func (c *Collector) ToolCalls() []ToolCall {
	var calls []ToolCall
	for _, p := range c.Message().Content {
		if tc, ok := p.(ToolCall); ok {
			calls = append(calls, tc)
		}
	}
	return calls
}

// Text returns the answer's text (refusals included).
func (c *Collector) Text() string {
	var b []byte
	for _, p := range c.parts {
		if p.kind == EventTextDelta || p.kind == EventRefusalDelta {
			b = append(b, p.text...)
		}
	}
	return string(b)
}

// Usage returns the last usage reported.
func (c *Collector) Usage() Usage { return c.usage }

// Finish returns the finish reason and the API's own reason ("" before the
// stream finished).
func (c *Collector) Finish() (FinishReason, string) { return c.finish, c.raw }
