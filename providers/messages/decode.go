package messages

import (
	"errors"

	"agent/internal/jsonscan"
	"agent/internal/sse"
	"agent/providers"
)

// Decoder decodes a messages event stream: message_start, for each content
// block a content_block_start, its deltas and a content_block_stop, then
// message_delta (stop reason, usage) and message_stop; ping and unknown
// events are skipped, error events end the stream with a typed error. It
// does no I/O and is not safe for concurrent use. Events are read with a
// pull scanner rather than encoding/json: this is the hot path.
type Decoder struct {
	sc     jsonscan.Scanner
	e      event
	blocks []string // content block types by index
	usage  providers.Usage
	stop   string
}

// NewDecoder returns a decoder for one response.
func NewDecoder() *Decoder { return &Decoder{} }

// event holds the fields of one event this decoder uses.
type event struct {
	typ      string
	index    int
	hasIndex bool
	block    contentBlock // content_block
	hasBlock bool
	delta    eventDelta
	hasDelta bool
	usage    wireUsage // usage, or message.usage
	hasUsage bool
	err      wireError
}

type contentBlock struct {
	typ, id, name, text, thinking, signature, data string
}

type eventDelta struct {
	typ, text, partialJSON, thinking, signature, stopReason string
}

// wireUsage holds reported counts; -1 means absent.
type wireUsage struct {
	input, output, cacheWrite, cacheRead int
}

type wireError struct {
	typ, message string
}

// Decode implements providers.Decoder.
func (d *Decoder) Decode(ev sse.Event, out []providers.Event) ([]providers.Event, bool, error) {
	if err := d.parse(ev.Data); err != nil {
		return out, false, &providers.Error{Kind: providers.ErrUpstream, Message: "malformed stream event", Err: err}
	}
	e := &d.e
	typ := e.typ
	if typ == "" || ev.Type == "error" {
		// An error event whatever its data says: the API names both, and
		// a bare error object (providers.BareError) may name neither.
		typ = ev.Type
	}
	switch typ {
	case "message_start":
		if e.hasUsage {
			d.addUsage(&e.usage)
		}
	case "content_block_start":
		if !e.hasIndex || e.index < 0 || e.index > 1<<16 || !e.hasBlock {
			return out, false, malformed("content_block_start")
		}
		for len(d.blocks) <= e.index {
			d.blocks = append(d.blocks, "")
		}
		cb := &e.block
		d.blocks[e.index] = cb.typ
		switch cb.typ {
		case "text":
			if cb.text != "" {
				out = append(out, providers.Event{Type: providers.EventTextDelta, Index: e.index, Text: cb.text})
			}
		case "thinking":
			if cb.thinking != "" || cb.signature != "" {
				out = append(out, providers.Event{Type: providers.EventReasoningDelta, Index: e.index, Text: cb.thinking, Signature: cb.signature})
			}
		case "redacted_thinking":
			out = append(out, providers.Event{Type: providers.EventReasoningDelta, Index: e.index, Redacted: cb.data})
		case "tool_use":
			out = append(out, providers.Event{Type: providers.EventToolCallStart, Index: e.index, ID: cb.id, Name: cb.name})
		}
	case "content_block_delta":
		if !e.hasDelta || e.index < 0 || e.index >= len(d.blocks) {
			return out, false, malformed("content_block_delta")
		}
		dl := &e.delta
		// Deltas count only for the block types this provider reports;
		// server tool blocks and citations are skipped.
		switch kind := d.blocks[e.index]; {
		case dl.typ == "text_delta" && kind == "text":
			out = append(out, providers.Event{Type: providers.EventTextDelta, Index: e.index, Text: dl.text})
		case dl.typ == "input_json_delta" && kind == "tool_use":
			if dl.partialJSON != "" {
				out = append(out, providers.Event{Type: providers.EventToolCallDelta, Index: e.index, Text: dl.partialJSON})
			}
		case dl.typ == "thinking_delta" && kind == "thinking":
			out = append(out, providers.Event{Type: providers.EventReasoningDelta, Index: e.index, Text: dl.thinking})
		case dl.typ == "signature_delta" && kind == "thinking":
			out = append(out, providers.Event{Type: providers.EventReasoningDelta, Index: e.index, Signature: dl.signature})
		}
	case "content_block_stop":
		if e.index >= 0 && e.index < len(d.blocks) && d.blocks[e.index] == "tool_use" {
			out = append(out, providers.Event{Type: providers.EventToolCallEnd, Index: e.index})
		}
	case "message_delta":
		if e.hasDelta && e.delta.stopReason != "" {
			d.stop = e.delta.stopReason
		}
		if e.hasUsage {
			d.addUsage(&e.usage)
			out = append(out, providers.Event{Type: providers.EventUsage, Usage: d.usage})
		}
	case "message_stop":
		return append(out, providers.Event{Type: providers.EventFinish, Finish: stopReason(d.stop), Raw: d.stop}), true, nil
	case "error":
		pe := providers.APIError(errorStatus(e.err.typ), e.err.typ, e.err.message)
		pe.Status = 0 // it arrived in the stream
		return out, false, pe
	}
	// ping and event types added later are skipped, as the API asks.
	return out, false, nil
}

// parse reads one event's JSON into d.e.
func (d *Decoder) parse(data string) error {
	sc := &d.sc
	sc.Reset(data)
	d.e = event{}
	e := &d.e
	if !sc.Object() {
		if sc.Err() == nil {
			return errors.New("event is null")
		}
		return sc.Err()
	}
	for sc.More() {
		switch sc.Key() {
		case "type":
			e.typ = sc.String()
		case "index":
			e.index, e.hasIndex = sc.Int(), true
		case "content_block":
			if sc.Object() {
				e.hasBlock = true
				b := &e.block
				for sc.More() {
					switch sc.Key() {
					case "type":
						b.typ = sc.String()
					case "id":
						b.id = sc.String()
					case "name":
						b.name = sc.String()
					case "text":
						b.text = sc.String()
					case "thinking":
						b.thinking = sc.String()
					case "signature":
						b.signature = sc.String()
					case "data":
						b.data = sc.String()
					default:
						sc.Skip()
					}
				}
			}
		case "delta":
			if sc.Object() {
				e.hasDelta = true
				dl := &e.delta
				for sc.More() {
					switch sc.Key() {
					case "type":
						dl.typ = sc.String()
					case "text":
						dl.text = sc.String()
					case "partial_json":
						dl.partialJSON = sc.String()
					case "thinking":
						dl.thinking = sc.String()
					case "signature":
						dl.signature = sc.String()
					case "stop_reason":
						dl.stopReason = sc.String()
					default:
						sc.Skip()
					}
				}
			}
		case "usage":
			d.parseUsage()
		case "message":
			if sc.Object() {
				for sc.More() {
					if sc.Key() == "usage" {
						d.parseUsage()
					} else {
						sc.Skip()
					}
				}
			}
		case "error":
			if sc.Peek() == jsonscan.String {
				e.err.message = sc.String() // a gateway's {"error": "text"}
				continue
			}
			if sc.Object() {
				for sc.More() {
					switch sc.Key() {
					case "type":
						e.err.typ = sc.String()
					case "message":
						e.err.message = sc.String()
					default:
						sc.Skip()
					}
				}
			}
		default:
			sc.Skip()
		}
	}
	return sc.Done()
}

func (d *Decoder) parseUsage() {
	sc, e := &d.sc, &d.e
	if !sc.Object() {
		return
	}
	e.hasUsage = true
	u := &e.usage
	*u = wireUsage{-1, -1, -1, -1}
	for sc.More() {
		var p *int
		switch sc.Key() {
		case "input_tokens":
			p = &u.input
		case "output_tokens":
			p = &u.output
		case "cache_creation_input_tokens":
			p = &u.cacheWrite
		case "cache_read_input_tokens":
			p = &u.cacheRead
		default:
			sc.Skip()
			continue
		}
		if sc.Null() {
			continue
		}
		*p = max(sc.Int(), 0)
	}
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
	cur := &d.usage
	uncached := cur.InputTokens - cur.CacheReadTokens - cur.CacheWriteTokens
	if u.input >= 0 {
		uncached = u.input
	}
	if u.cacheRead >= 0 {
		cur.CacheReadTokens = u.cacheRead
	}
	if u.cacheWrite >= 0 {
		cur.CacheWriteTokens = u.cacheWrite
	}
	cur.InputTokens = uncached + cur.CacheReadTokens + cur.CacheWriteTokens
	if u.output >= 0 {
		cur.OutputTokens = u.output
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
	var d Decoder
	if d.parse(string(body)) != nil {
		return "", ""
	}
	return d.e.err.typ, d.e.err.message
}
