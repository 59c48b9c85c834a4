package messages

import (
	"encoding/json"

	"agent/internal/sse"
	"agent/providers"
)

// Decoder decodes a messages event stream: message_start, for each content
// block a content_block_start, its deltas and a content_block_stop, then
// message_delta (stop reason, usage) and message_stop; ping and unknown
// events are skipped, error events end the stream with a typed error. It
// does no I/O and is not safe for concurrent use.
type Decoder struct {
	e       event
	blocks  []string // content block types by index
	usage   providers.Usage
	stop    string
	started bool
}

// NewDecoder returns a decoder for one response.
func NewDecoder() *Decoder { return &Decoder{} }

type event struct {
	Type         string        `json:"type"`
	Index        int           `json:"index"`
	Message      *startMessage `json:"message"`
	ContentBlock *contentBlock `json:"content_block"`
	Delta        *eventDelta   `json:"delta"`
	Usage        *wireUsage    `json:"usage"`
	Error        *wireError    `json:"error"`
}

type startMessage struct {
	Usage *wireUsage `json:"usage"`
}

type contentBlock struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Text      string `json:"text"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
	Data      string `json:"data"`
}

type eventDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	StopReason  string `json:"stop_reason"`
}

type wireUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
}

type wireError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Decode implements providers.Decoder.
func (d *Decoder) Decode(ev sse.Event, out []providers.Event) ([]providers.Event, bool, error) {
	d.e = event{}
	if err := json.Unmarshal([]byte(ev.Data), &d.e); err != nil {
		return out, false, &providers.Error{Kind: providers.ErrUpstream, Message: "malformed stream event", Err: err}
	}
	e := &d.e
	typ := e.Type
	if typ == "" {
		typ = ev.Type
	}
	switch typ {
	case "message_start":
		d.started = true
		if e.Message != nil {
			d.addUsage(e.Message.Usage)
		}
	case "content_block_start":
		if e.Index < 0 || e.Index > 1<<16 || e.ContentBlock == nil {
			return out, false, malformed("content_block_start")
		}
		for len(d.blocks) <= e.Index {
			d.blocks = append(d.blocks, "")
		}
		cb := e.ContentBlock
		d.blocks[e.Index] = cb.Type
		switch cb.Type {
		case "text":
			if cb.Text != "" {
				out = append(out, providers.Event{Type: providers.EventTextDelta, Index: e.Index, Text: cb.Text})
			}
		case "thinking":
			if cb.Thinking != "" || cb.Signature != "" {
				out = append(out, providers.Event{Type: providers.EventReasoningDelta, Index: e.Index, Text: cb.Thinking, Signature: cb.Signature})
			}
		case "redacted_thinking":
			out = append(out, providers.Event{Type: providers.EventReasoningDelta, Index: e.Index, Redacted: cb.Data})
		case "tool_use":
			out = append(out, providers.Event{Type: providers.EventToolCallStart, Index: e.Index, ID: cb.ID, Name: cb.Name})
		}
	case "content_block_delta":
		if e.Delta == nil || e.Index < 0 || e.Index >= len(d.blocks) {
			return out, false, malformed("content_block_delta")
		}
		dl := e.Delta
		// Deltas count only for the block types this provider reports;
		// server tool blocks and citations are skipped.
		switch kind := d.blocks[e.Index]; {
		case dl.Type == "text_delta" && kind == "text":
			out = append(out, providers.Event{Type: providers.EventTextDelta, Index: e.Index, Text: dl.Text})
		case dl.Type == "input_json_delta" && kind == "tool_use":
			if dl.PartialJSON != "" {
				out = append(out, providers.Event{Type: providers.EventToolCallDelta, Index: e.Index, Text: dl.PartialJSON})
			}
		case dl.Type == "thinking_delta" && kind == "thinking":
			out = append(out, providers.Event{Type: providers.EventReasoningDelta, Index: e.Index, Text: dl.Thinking})
		case dl.Type == "signature_delta" && kind == "thinking":
			out = append(out, providers.Event{Type: providers.EventReasoningDelta, Index: e.Index, Signature: dl.Signature})
		}
	case "content_block_stop":
		if e.Index >= 0 && e.Index < len(d.blocks) && d.blocks[e.Index] == "tool_use" {
			out = append(out, providers.Event{Type: providers.EventToolCallEnd, Index: e.Index})
		}
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != "" {
			d.stop = e.Delta.StopReason
		}
		if e.Usage != nil {
			d.addUsage(e.Usage)
			out = append(out, providers.Event{Type: providers.EventUsage, Usage: d.usage})
		}
	case "message_stop":
		return append(out, providers.Event{Type: providers.EventFinish, Finish: stopReason(d.stop), Raw: d.stop}), true, nil
	case "error":
		we := wireError{}
		if e.Error != nil {
			we = *e.Error
		}
		pe := providers.APIError(errorStatus(we.Type), we.Type, we.Message)
		pe.Status = 0 // it arrived in the stream
		return out, false, pe
	}
	// ping and event types added later are skipped, as the API asks.
	return out, false, nil
}

// End implements providers.Decoder: the stream must end with message_stop.
func (d *Decoder) End(out []providers.Event) ([]providers.Event, error) {
	return out, &providers.Error{Kind: providers.ErrUpstream, Message: "the stream ended before message_stop", Retryable: true}
}

func malformed(what string) error {
	return &providers.Error{Kind: providers.ErrUpstream, Message: "malformed " + what + " event"}
}

// addUsage merges reported counts: message_start carries the input side,
// message_delta the running output count (and, on newer versions, the
// input side again). InputTokens counts cache reads and writes too.
func (d *Decoder) addUsage(u *wireUsage) {
	if u == nil {
		return
	}
	cur := &d.usage
	uncached := cur.InputTokens - cur.CacheReadTokens - cur.CacheWriteTokens
	if u.InputTokens != nil {
		uncached = *u.InputTokens
	}
	if u.CacheReadInputTokens != nil {
		cur.CacheReadTokens = *u.CacheReadInputTokens
	}
	if u.CacheCreationInputTokens != nil {
		cur.CacheWriteTokens = *u.CacheCreationInputTokens
	}
	cur.InputTokens = uncached + cur.CacheReadTokens + cur.CacheWriteTokens
	if u.OutputTokens != nil {
		cur.OutputTokens = *u.OutputTokens
	}
}

func stopReason(s string) providers.FinishReason {
	switch s {
	case "end_turn", "stop_sequence":
		return providers.FinishStop
	case "max_tokens":
		return providers.FinishLength
	case "tool_use":
		return providers.FinishToolCalls
	case "pause_turn":
		return providers.FinishPause
	case "refusal":
		return providers.FinishRefusal
	case "model_context_window_exceeded":
		return providers.FinishContextWindow
	}
	return providers.FinishOther
}

// errorStatus is the HTTP status the API documents for each error type,
// so that an in-stream error gets the same kind and retry rule.
func errorStatus(typ string) int {
	switch typ {
	case "invalid_request_error":
		return 400
	case "authentication_error":
		return 401
	case "billing_error":
		return 402
	case "permission_error":
		return 403
	case "not_found_error":
		return 404
	case "request_too_large":
		return 413
	case "rate_limit_error":
		return 429
	case "timeout_error":
		return 504
	case "overloaded_error":
		return 529
	}
	return 500 // api_error and types added later
}

// ParseError reads a messages error body: {"type": "error", "error":
// {"type", "message"}}.
func ParseError(body []byte) (code, message string) {
	var env struct {
		Error *wireError `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || env.Error == nil {
		return "", ""
	}
	return env.Error.Type, env.Error.Message
}
