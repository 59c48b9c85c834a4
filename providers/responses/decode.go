package responses

import (
	"errors"

	"agent/internal/jsonscan"
	"agent/internal/sse"
	"agent/providers"
)

// Decoder decodes a responses-API event stream. Each event's JSON names
// its type; the ones this provider reports are the output items
// (response.output_item.added and .done) with their text, refusal,
// function-call argument and reasoning deltas, and the end of the response
// (response.completed, response.incomplete) or its failure
// (response.failed, error). Other event types (content parts, hosted tool
// progress, annotations, types added later) are skipped. Event.Index is
// the item's output_index, unique within one response.
//
// A reasoning item ends with one EventReasoningDelta whose Redacted holds
// the whole item as the API sent it (with its encrypted content when it was
// asked for): the provider sends it back unchanged on the next turn
// (includeEncryptedReasoning; docs/providers.md, "responses
// (`providers/responses`)"). It does no I/O and is not safe for concurrent
// use; events are read with a pull scanner, as this is the hot path.
type Decoder struct {
	sc       jsonscan.Scanner
	e        event
	items    []itemState // by output_index
	calls    bool        // a function call was streamed
	refusal  bool
	text     bool
	finished bool
}

type itemState struct {
	kind    string // message, function_call, reasoning, or another item type
	args    bool   // function call arguments arrived as deltas
	started bool
}

// NewDecoder returns a decoder for one response.
func NewDecoder() *Decoder { return &Decoder{} }

type event struct {
	typ          string
	outputIndex  int
	hasIndex     bool
	summaryIndex int
	delta        string
	item         item
	hasItem      bool
	resp         response
	hasResp      bool
	code         string // error event
	message      string
	errType      string
}

type item struct {
	typ, id, callID, name, arguments string
	raw                              string
}

type response struct {
	status     string
	incomplete string
	usage      usage
	hasUsage   bool
	errCode    string
	errMessage string
	hasErr     bool
}

type usage struct {
	input, cached, output, reasoning int
}

// Decode implements providers.Decoder.
func (d *Decoder) Decode(ev sse.Event, out []providers.Event) ([]providers.Event, bool, error) {
	if d.finished {
		return out, false, nil
	}
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
	case "response.output_item.added":
		if !e.hasIndex || !e.hasItem || e.outputIndex < 0 || e.outputIndex > 1<<16 {
			return out, false, malformed(typ)
		}
		it := d.item(e.outputIndex)
		it.kind, it.started = e.item.typ, true
		if e.item.typ == "function_call" {
			d.calls = true
			out = append(out, providers.Event{Type: providers.EventToolCallStart, Index: e.outputIndex, ID: e.item.callID, Name: e.item.name})
			if e.item.arguments != "" {
				it.args = true
				out = append(out, providers.Event{Type: providers.EventToolCallDelta, Index: e.outputIndex, Text: e.item.arguments})
			}
		}
	case "response.output_text.delta":
		if it := d.known(e, "message"); it == nil {
			return out, false, malformed(typ)
		}
		if e.delta != "" {
			d.text = true
			out = append(out, providers.Event{Type: providers.EventTextDelta, Index: e.outputIndex, Text: e.delta})
		}
	case "response.refusal.delta":
		if it := d.known(e, "message"); it == nil {
			return out, false, malformed(typ)
		}
		if e.delta != "" {
			d.refusal = true
			out = append(out, providers.Event{Type: providers.EventRefusalDelta, Index: e.outputIndex, Text: e.delta})
		}
	case "response.function_call_arguments.delta":
		it := d.known(e, "function_call")
		if it == nil {
			return out, false, malformed(typ)
		}
		if e.delta != "" {
			it.args = true
			out = append(out, providers.Event{Type: providers.EventToolCallDelta, Index: e.outputIndex, Text: e.delta})
		}
	case "response.reasoning_summary_part.added":
		// Summary parts of one item read as paragraphs of one text.
		if d.known(e, "reasoning") != nil && e.summaryIndex > 0 {
			out = append(out, providers.Event{Type: providers.EventReasoningDelta, Index: e.outputIndex, Text: "\n\n"})
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if it := d.known(e, "reasoning"); it == nil {
			return out, false, malformed(typ)
		}
		if e.delta != "" {
			out = append(out, providers.Event{Type: providers.EventReasoningDelta, Index: e.outputIndex, Text: e.delta})
		}
	case "response.output_item.done":
		if !e.hasIndex || !e.hasItem || e.outputIndex < 0 || e.outputIndex > 1<<16 {
			return out, false, malformed(typ)
		}
		it := d.item(e.outputIndex)
		switch e.item.typ {
		case "function_call":
			if !it.started {
				d.calls = true
				out = append(out, providers.Event{Type: providers.EventToolCallStart, Index: e.outputIndex, ID: e.item.callID, Name: e.item.name})
			}
			if !it.args && e.item.arguments != "" {
				out = append(out, providers.Event{Type: providers.EventToolCallDelta, Index: e.outputIndex, Text: e.item.arguments})
			}
			out = append(out, providers.Event{Type: providers.EventToolCallEnd, Index: e.outputIndex})
		case "reasoning":
			out = append(out, providers.Event{Type: providers.EventReasoningDelta, Index: e.outputIndex, Redacted: e.item.raw})
		}
		it.kind, it.started = e.item.typ, true
	case "response.completed", "response.incomplete":
		if !e.hasResp {
			return out, false, malformed(typ)
		}
		if e.resp.hasUsage {
			out = append(out, providers.Event{Type: providers.EventUsage, Usage: e.resp.usage.toUsage()})
		}
		d.finished = true
		finish, raw := d.finish(typ == "response.incomplete", &e.resp)
		return append(out, providers.Event{Type: providers.EventFinish, Finish: finish, Raw: raw}), true, nil
	case "response.failed":
		code, msg := e.resp.errCode, e.resp.errMessage
		if code == "" && msg == "" {
			msg = "the response failed"
		}
		return out, false, streamError(code, msg)
	case "error":
		code := e.code
		if code == "" {
			code = e.errType
		}
		return out, false, streamError(code, e.message)
	}
	return out, false, nil
}

func (d *Decoder) item(i int) *itemState {
	for len(d.items) <= i {
		d.items = append(d.items, itemState{})
	}
	return &d.items[i]
}

// known returns the item an event's output_index names when it was
// announced with the kind the event belongs to, else nil.
func (d *Decoder) known(e *event, kind string) *itemState {
	if !e.hasIndex || e.outputIndex < 0 || e.outputIndex >= len(d.items) {
		return nil
	}
	it := &d.items[e.outputIndex]
	if !it.started || it.kind != kind {
		return nil
	}
	return it
}

func (d *Decoder) finish(incomplete bool, r *response) (providers.FinishReason, string) {
	if incomplete {
		switch r.incomplete {
		case "max_output_tokens":
			return providers.FinishLength, r.incomplete
		case "content_filter":
			return providers.FinishContentFilter, r.incomplete
		}
		return providers.FinishOther, r.incomplete
	}
	raw := r.status
	if raw == "" {
		raw = "completed"
	}
	switch {
	case d.calls:
		return providers.FinishToolCalls, raw
	case d.refusal && !d.text:
		return providers.FinishRefusal, raw
	}
	return providers.FinishStop, raw
}

// End implements providers.Decoder: the stream must end with
// response.completed or response.incomplete.
func (d *Decoder) End(out []providers.Event) ([]providers.Event, error) {
	if d.finished {
		return out, nil
	}
	return out, &providers.Error{Kind: providers.ErrUpstream, Message: "the stream ended before the response completed", Retryable: true}
}

func malformed(what string) error {
	return &providers.Error{Kind: providers.ErrUpstream, Message: "malformed " + what + " event"}
}

// streamError maps an in-stream error code to the HTTP status the API
// answers with for it, so that it gets the same kind and retry rule.
func streamError(code, message string) *providers.Error {
	status := 500
	switch code {
	case "rate_limit_exceeded":
		status = 429
	case "insufficient_quota":
		status = 402 // not transient: the account cannot pay
	case "invalid_prompt", "invalid_request_error", "context_length_exceeded", "invalid_image", "invalid_image_format",
		"invalid_base64_image", "invalid_image_url", "image_too_large", "image_too_small", "unsupported_image_media_type",
		"empty_image_file", "image_content_policy_violation", "image_parse_error", "image_file_too_large", "invalid_image_mode",
		"image_file_not_found":
		status = 400
	case "authentication_error", "invalid_api_key":
		status = 401
	case "server_is_overloaded", "slow_down":
		status = 503
	case "vector_store_timeout":
		status = 504
	}
	pe := providers.APIError(status, code, message)
	pe.Status = 0 // it arrived in the stream
	return pe
}

func (u *usage) toUsage() providers.Usage {
	return providers.Usage{InputTokens: u.input, OutputTokens: u.output, CacheReadTokens: u.cached, ReasoningTokens: u.reasoning}
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
		case "output_index":
			e.outputIndex, e.hasIndex = sc.Int(), true
		case "summary_index":
			e.summaryIndex = sc.Int()
		case "delta":
			if sc.Peek() == jsonscan.String {
				e.delta = sc.String()
			} else {
				sc.Skip()
			}
		case "item":
			d.parseItem()
		case "response":
			d.parseResponse()
		case "code":
			if sc.Peek() == jsonscan.String {
				e.code = sc.String()
			} else {
				sc.Skip()
			}
		case "message":
			if sc.Peek() == jsonscan.String {
				e.message = sc.String()
			} else {
				sc.Skip()
			}
		case "error":
			// Some gateways nest the error event's fields, or send a text.
			switch sc.Peek() {
			case jsonscan.Object:
			case jsonscan.String:
				e.message = sc.String()
				continue
			default:
				sc.Skip()
				continue
			}
			sc.Object()
			for sc.More() {
				switch sc.Key() {
				case "code":
					if sc.Peek() == jsonscan.String {
						e.code = sc.String()
					} else {
						sc.Skip()
					}
				case "type":
					e.errType = sc.String()
				case "message":
					e.message = sc.String()
				default:
					sc.Skip()
				}
			}
		default:
			sc.Skip()
		}
	}
	return sc.Done()
}

func (d *Decoder) parseItem() {
	sc, e := &d.sc, &d.e
	// The raw text is kept: reasoning items go back unchanged.
	if sc.Peek() != jsonscan.Object {
		sc.Skip()
		return
	}
	raw := sc.Raw()
	if sc.Err() != nil {
		return
	}
	e.hasItem = true
	var in jsonscan.Scanner
	in.Reset(raw)
	if !in.Object() {
		return
	}
	it := &e.item
	it.raw = raw
	for in.More() {
		switch in.Key() {
		case "type":
			it.typ = in.String()
		case "id":
			it.id = in.String()
		case "call_id":
			it.callID = in.String()
		case "name":
			it.name = in.String()
		case "arguments":
			if in.Peek() == jsonscan.String {
				it.arguments = in.String()
			} else {
				it.arguments = in.Raw()
			}
		default:
			in.Skip()
		}
	}
	if it.typ != "reasoning" {
		it.raw = ""
	}
}

func (d *Decoder) parseResponse() {
	sc, e := &d.sc, &d.e
	if !sc.Object() {
		return
	}
	e.hasResp = true
	r := &e.resp
	for sc.More() {
		switch sc.Key() {
		case "status":
			r.status = sc.String()
		case "incomplete_details":
			if sc.Object() {
				for sc.More() {
					if sc.Key() == "reason" {
						r.incomplete = sc.String()
					} else {
						sc.Skip()
					}
				}
			}
		case "error":
			if sc.Object() {
				r.hasErr = true
				for sc.More() {
					switch sc.Key() {
					case "code":
						if sc.Peek() == jsonscan.String {
							r.errCode = sc.String()
						} else {
							sc.Skip()
						}
					case "message":
						r.errMessage = sc.String()
					default:
						sc.Skip()
					}
				}
			}
		case "usage":
			if !sc.Object() {
				continue
			}
			r.hasUsage = true
			u := &r.usage
			for sc.More() {
				switch sc.Key() {
				case "input_tokens":
					u.input = max(sc.Int(), 0)
				case "output_tokens":
					u.output = max(sc.Int(), 0)
				case "input_tokens_details":
					u.cached = detail(sc, "cached_tokens")
				case "output_tokens_details":
					u.reasoning = detail(sc, "reasoning_tokens")
				default:
					sc.Skip()
				}
			}
		default:
			sc.Skip()
		}
	}
}

// detail reads one count from a usage details object.
func detail(sc *jsonscan.Scanner, key string) int {
	n := 0
	if sc.Object() {
		for sc.More() {
			if sc.Key() == key {
				n = max(sc.Int(), 0)
			} else {
				sc.Skip()
			}
		}
	}
	return n
}
