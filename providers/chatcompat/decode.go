package chatcompat

import (
	"errors"
	"strconv"
	"strings"
	"sync/atomic"

	"agent/internal/jsonscan"
	"agent/internal/sse"
	"agent/providers"
)

// Decoder decodes a chat-completions event stream: one JSON chunk per
// event, "[DONE]" at the end. It reads the first choice only (the client
// never asks for more), keeps tool calls apart by their index, holds the
// finish reason back until the end so that Finish comes last (after the
// usage tail), and reports {"error": ...} chunks as errors. It does no
// I/O and is not safe for concurrent use. Chunks are read with a pull
// scanner rather than encoding/json: this is the hot path of every stream.
type Decoder struct {
	sc     jsonscan.Scanner
	c      chunk
	calls  []openCall
	finish string
	ended  bool   // a finish reason arrived
	respID string // the response's id, for call ids a server left out

	localPrefix string
}

type openCall struct {
	index int    // the API's index
	key   int    // Event.Index
	id    string // the call id, to tell apart servers that reuse index 0
	done  bool
}

// NewDecoder returns a decoder for one response.
func NewDecoder() *Decoder { return &Decoder{} }

type chunk struct {
	choices  []choice
	usage    usage
	hasUsage bool
	err      *apiError
}

type choice struct {
	index     int
	content   string
	reasoning string
	refusal   string
	toolCalls []toolCallDelta
	finish    string
}

type toolCallDelta struct {
	index    int
	hasIndex bool
	id       string
	name     string
	args     string
}

type usage struct {
	promptTokens     int
	completionTokens int
	cacheHit         int // the reasoning API's cache count
	cachedTokens     int
	reasoningTokens  int
}

type apiError struct {
	message string
	typ     string
	code    string
	status  int
}

// Decode implements providers.Decoder.
func (d *Decoder) Decode(ev sse.Event, out []providers.Event) ([]providers.Event, bool, error) {
	data := strings.TrimSpace(ev.Data)
	if data == "[DONE]" {
		return d.end(out), true, nil
	}
	if ev.Type == "error" {
		return out, false, streamError(data)
	}
	if ev.Type != "" && ev.Type != "message" && ev.Type != "chunk" {
		return out, false, nil // an event type this API does not define: skip it
	}
	if err := d.parse(data); err != nil {
		return out, false, &providers.Error{Kind: providers.ErrUpstream, Message: "malformed stream chunk", Err: err}
	}
	if d.c.err != nil {
		return out, false, d.c.err.toError()
	}
	for i := range d.c.choices {
		ch := &d.c.choices[i]
		if ch.index != 0 {
			continue
		}
		var err error
		if out, err = d.choice(ch, out); err != nil {
			return out, false, err
		}
	}
	if d.c.hasUsage {
		out = append(out, providers.Event{Type: providers.EventUsage, Usage: d.c.usage.toUsage()})
	}
	return out, false, nil
}

// parse reads one chunk into d.c, reusing its slices.
func (d *Decoder) parse(data string) error {
	sc := &d.sc
	sc.Reset(data)
	c := &d.c
	c.choices, c.usage, c.hasUsage, c.err = c.choices[:0], usage{}, false, nil
	if !sc.Object() {
		if sc.Err() == nil {
			return errors.New("chunk is null")
		}
		return sc.Err()
	}
	for sc.More() {
		switch sc.Key() {
		case "id":
			if sc.Peek() != jsonscan.String {
				sc.Skip()
			} else if id := sc.String(); d.respID == "" {
				d.respID = strings.Clone(id) // id is a piece of the chunk
			}
		case "choices":
			if sc.Array() {
				for sc.More() {
					d.parseChoice()
				}
			}
		case "usage":
			if sc.Object() {
				c.hasUsage = true
				c.usage.parse(sc)
			}
		case "error":
			c.err = parseAPIError(sc)
		default:
			sc.Skip()
		}
	}
	return sc.Done()
}

func (d *Decoder) parseChoice() {
	sc, c := &d.sc, &d.c
	n := len(c.choices)
	if n < cap(c.choices) {
		c.choices = c.choices[:n+1]
		tc := c.choices[n].toolCalls[:0]
		c.choices[n] = choice{toolCalls: tc}
	} else {
		c.choices = append(c.choices, choice{})
	}
	ch := &c.choices[n]
	if !sc.Object() {
		ch.index = -1
		return
	}
	for sc.More() {
		switch sc.Key() {
		case "index":
			ch.index = sc.Int()
		case "finish_reason":
			ch.finish = sc.String()
		case "delta", "message":
			if !sc.Object() {
				continue
			}
			for sc.More() {
				switch sc.Key() {
				case "content":
					if sc.Peek() == jsonscan.String || sc.Peek() == jsonscan.Null {
						ch.content = sc.String()
					} else {
						sc.Skip() // content parts: not sent in streams
					}
				case "reasoning_content":
					if r := sc.String(); r != "" {
						ch.reasoning = r
					}
				case "reasoning": // the name several local servers use
					if sc.Peek() != jsonscan.String {
						sc.Skip()
					} else if r := sc.String(); r != "" && ch.reasoning == "" {
						ch.reasoning = r
					}
				case "refusal":
					ch.refusal = sc.String()
				case "tool_calls":
					if sc.Array() {
						for sc.More() {
							ch.toolCalls = append(ch.toolCalls, parseToolCall(sc))
						}
					}
				default:
					sc.Skip()
				}
			}
		default:
			sc.Skip()
		}
	}
}

func parseToolCall(sc *jsonscan.Scanner) toolCallDelta {
	var tc toolCallDelta
	if !sc.Object() {
		return tc
	}
	for sc.More() {
		switch sc.Key() {
		case "index":
			if !sc.Null() {
				tc.index, tc.hasIndex = sc.Int(), true
			}
		case "id":
			tc.id = sc.String()
		case "function":
			if !sc.Object() {
				continue
			}
			for sc.More() {
				switch sc.Key() {
				case "name":
					tc.name = sc.String()
				case "arguments":
					tc.args = sc.String()
				default:
					sc.Skip()
				}
			}
		default:
			sc.Skip()
		}
	}
	return tc
}

func (u *usage) parse(sc *jsonscan.Scanner) {
	for sc.More() {
		switch sc.Key() {
		case "prompt_tokens":
			u.promptTokens = max(sc.Int(), 0)
		case "completion_tokens":
			u.completionTokens = max(sc.Int(), 0)
		case "prompt_cache_hit_tokens":
			u.cacheHit = max(sc.Int(), 0)
		case "prompt_tokens_details":
			// Several servers send null here: Object then reads
			// nothing, and the loop must not run on into usage's own
			// members.
			if sc.Object() {
				for sc.More() {
					if sc.Key() == "cached_tokens" {
						u.cachedTokens = max(sc.Int(), 0)
					} else {
						sc.Skip()
					}
				}
			}
		case "completion_tokens_details":
			if sc.Object() {
				for sc.More() {
					if sc.Key() == "reasoning_tokens" {
						u.reasoningTokens = max(sc.Int(), 0)
					} else {
						sc.Skip()
					}
				}
			}
		default:
			sc.Skip()
		}
	}
}

// parseAPIError reads the value of an "error" member: an object with
// message, type, code (a string, a number or null) and status, or a
// string; null means no error.
func parseAPIError(sc *jsonscan.Scanner) *apiError {
	switch sc.Peek() {
	case jsonscan.Null:
		sc.Null()
		return nil
	case jsonscan.String:
		return &apiError{message: sc.String()}
	case jsonscan.Object:
	default:
		sc.Skip()
		return &apiError{}
	}
	e := &apiError{}
	sc.Object()
	for sc.More() {
		switch sc.Key() {
		case "message":
			if sc.Peek() == jsonscan.String {
				e.message = sc.String()
			} else {
				e.message = sc.Raw()
			}
		case "type":
			if sc.Peek() == jsonscan.String {
				e.typ = sc.String()
			} else {
				sc.Skip()
			}
		case "code":
			switch sc.Peek() {
			case jsonscan.String:
				e.code = sc.String()
			case jsonscan.Number:
				e.code = sc.Raw()
			default:
				sc.Skip()
			}
		case "status":
			if sc.Peek() == jsonscan.Number {
				e.status = sc.Int()
			} else {
				sc.Skip()
			}
		default:
			sc.Skip()
		}
	}
	return e
}

func (d *Decoder) choice(ch *choice, out []providers.Event) ([]providers.Event, error) {
	if ch.reasoning != "" {
		out = append(out, providers.Event{Type: providers.EventReasoningDelta, Text: ch.reasoning})
	}
	if ch.content != "" {
		out = append(out, providers.Event{Type: providers.EventTextDelta, Text: ch.content})
	}
	if ch.refusal != "" {
		out = append(out, providers.Event{Type: providers.EventRefusalDelta, Text: ch.refusal})
	}
	for i := range ch.toolCalls {
		out = d.toolCall(&ch.toolCalls[i], out)
	}
	if f := ch.finish; f != "" {
		if f == "insufficient_system_resource" {
			// The reasoning API's way of saying the server gave up mid-answer.
			return out, &providers.Error{Kind: providers.ErrUpstream, Code: f, Message: "the server ran out of resources", Retryable: true}
		}
		out = d.closeCalls(out)
		d.finish, d.ended = f, true
	}
	return out, nil
}

func (d *Decoder) toolCall(tc *toolCallDelta, out []providers.Event) []providers.Event {
	index := len(d.calls)
	if tc.hasIndex {
		index = tc.index
	} else if tc.id == "" && len(d.calls) > 0 {
		index = d.calls[len(d.calls)-1].index // a continuation without an index
	}
	var call *openCall
	for i := len(d.calls) - 1; i >= 0; i-- {
		c := &d.calls[i]
		if c.index == index && !c.done && (tc.id == "" || c.id == "" || c.id == tc.id) {
			call = c
			break
		}
	}
	if call == nil {
		d.calls = append(d.calls, openCall{index: index, key: len(d.calls), id: tc.id})
		call = &d.calls[len(d.calls)-1]
		id := tc.id
		if id == "" {
			// Some local servers give no call ids, but a tool result must
			// name its call: this id is unique in the conversation and is
			// what the call and its result go back with.
			id = d.localID(call.key)
		}
		out = append(out, providers.Event{Type: providers.EventToolCallStart, Index: call.key, ID: id, Name: tc.name})
	} else if call.id == "" && tc.id != "" {
		call.id = tc.id
	}
	if tc.args != "" {
		out = append(out, providers.Event{Type: providers.EventToolCallDelta, Index: call.key, Text: tc.args})
	}
	return out
}

// localCalls numbers the responses that needed local call ids and had no
// id of their own.
var localCalls atomic.Uint64

// localID makes a call id from the response id, in the characters every
// API accepts in ids (the messages API takes only [A-Za-z0-9_-]), or from
// a process-wide count when the response has none.
func (d *Decoder) localID(key int) string {
	if d.localPrefix == "" {
		var b strings.Builder
		for _, c := range []byte(d.respID) {
			if b.Len() < 40 && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
				b.WriteByte(c)
			}
		}
		d.localPrefix = b.String()
		if d.localPrefix == "" {
			d.localPrefix = "local-" + strconv.FormatUint(localCalls.Add(1), 10)
		}
	}
	return "call_" + d.localPrefix + "_" + strconv.Itoa(key)
}

func (d *Decoder) closeCalls(out []providers.Event) []providers.Event {
	for i := range d.calls {
		if c := &d.calls[i]; !c.done {
			c.done = true
			out = append(out, providers.Event{Type: providers.EventToolCallEnd, Index: c.key})
		}
	}
	return out
}

// end closes open tool calls and appends Finish.
func (d *Decoder) end(out []providers.Event) []providers.Event {
	out = d.closeCalls(out)
	reason := d.finish
	if !d.ended {
		reason = "stop"
		if len(d.calls) > 0 {
			reason = "tool_calls"
		}
	}
	return append(out, providers.Event{Type: providers.EventFinish, Finish: finishReason(reason), Raw: d.finish})
}

// End implements providers.Decoder: a stream that stops after a finish
// reason but without "[DONE]" is accepted (several local servers end so);
// one that stops before is cut short, and worth retrying.
func (d *Decoder) End(out []providers.Event) ([]providers.Event, error) {
	if d.ended {
		return d.end(out), nil
	}
	return out, &providers.Error{Kind: providers.ErrUpstream, Message: "the stream ended before the answer finished", Retryable: true}
}

func finishReason(s string) providers.FinishReason {
	switch s {
	case "stop", "end_turn":
		return providers.FinishStop
	case "length", "max_tokens":
		return providers.FinishLength
	case "tool_calls", "function_call":
		return providers.FinishToolCalls
	case "content_filter":
		return providers.FinishContentFilter
	}
	return providers.FinishOther
}

func (u *usage) toUsage() providers.Usage {
	pu := providers.Usage{InputTokens: u.promptTokens, OutputTokens: u.completionTokens, CacheReadTokens: u.cacheHit, ReasoningTokens: u.reasoningTokens}
	if u.cachedTokens > 0 {
		pu.CacheReadTokens = u.cachedTokens
	}
	return pu
}

// toError maps an in-stream error to the status the API would have
// answered with, so that it gets the same kind and retry rule.
func (e *apiError) toError() *providers.Error {
	code := e.code
	if code == "" {
		code = e.typ
	}
	status := e.status
	if status < 400 || status > 599 {
		if n, err := strconv.Atoi(code); err == nil && n >= 400 && n <= 599 {
			status = n
		} else {
			status = 500
			switch t := e.typ + " " + code; {
			case strings.Contains(t, "rate_limit"):
				status = 429
			case strings.Contains(t, "invalid_request") || strings.Contains(t, "context_length") ||
				strings.Contains(t, "data_inspection_failed"): // the regional API's content check
				status = 400
			case strings.Contains(t, "authentication"):
				status = 401
			}
		}
	}
	pe := providers.APIError(status, code, e.message)
	pe.Status = 0 // it arrived in the stream, not as a status
	return pe
}

func streamError(data string) error {
	var sc jsonscan.Scanner
	sc.Reset(data)
	e := &apiError{}
	if sc.Object() {
		for sc.More() {
			if sc.Key() == "error" {
				if pe := parseAPIError(&sc); pe != nil {
					e = pe
				}
			} else {
				sc.Skip()
			}
		}
	}
	return e.toError()
}

// ParseError reads a chat-completions error body: {"error": {"message",
// "type", "code"}}, {"error": "text"} or {"message": "text"}.
func ParseError(body []byte) (code, message string) {
	var sc jsonscan.Scanner
	sc.Reset(string(body))
	var e *apiError
	if sc.Object() {
		for sc.More() {
			switch sc.Key() {
			case "error":
				e = parseAPIError(&sc)
			case "message":
				if sc.Peek() == jsonscan.String && message == "" {
					message = sc.String()
				} else {
					sc.Skip()
				}
			default:
				sc.Skip()
			}
		}
	}
	if sc.Done() != nil {
		return "", ""
	}
	if e != nil {
		code = e.code
		if code == "" {
			code = e.typ
		}
		if e.message != "" {
			message = e.message
		}
	}
	return code, message
}
