package chatcompat

import (
	"encoding/json"
	"strconv"
	"strings"

	"agent/internal/sse"
	"agent/providers"
)

// Decoder decodes a chat-completions event stream: one JSON chunk per
// event, "[DONE]" at the end. It reads the first choice only (the client
// never asks for more), keeps tool calls apart by their index, holds the
// finish reason back until the end so that Finish comes last (after the
// usage tail), and reports {"error": ...} chunks as errors. It does no
// I/O and is not safe for concurrent use.
type Decoder struct {
	c      chunk
	calls  []openCall
	finish string
	ended  bool // a finish reason arrived
	hasUse bool
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
	Choices []choice  `json:"choices"`
	Usage   *usage    `json:"usage"`
	Error   *apiError `json:"error"`
}

type choice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Content          *string         `json:"content"`
	ReasoningContent *string         `json:"reasoning_content"`
	Reasoning        *string         `json:"reasoning"` // the name several local servers use
	Refusal          *string         `json:"refusal"`
	ToolCalls        []toolCallDelta `json:"tool_calls"`
}

type toolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string  `json:"name"`
		Arguments *string `json:"arguments"`
	} `json:"function"`
}

type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptCacheHit      int `json:"prompt_cache_hit_tokens"` // the reasoning API's cache count
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Status  int             `json:"status"`
}

// Decode implements providers.Decoder.
func (d *Decoder) Decode(ev sse.Event, out []providers.Event) ([]providers.Event, bool, error) {
	data := strings.TrimSpace(ev.Data)
	if data == "[DONE]" {
		return d.end(out), true, nil
	}
	if ev.Type == "error" {
		return out, false, streamError([]byte(data))
	}
	if ev.Type != "" && ev.Type != "message" && ev.Type != "chunk" {
		return out, false, nil // an event type this API does not define: skip it
	}
	clear(d.c.Choices[:cap(d.c.Choices)])
	d.c = chunk{Choices: d.c.Choices[:0]}
	if err := json.Unmarshal([]byte(data), &d.c); err != nil {
		return out, false, &providers.Error{Kind: providers.ErrUpstream, Message: "malformed stream chunk", Err: err}
	}
	if d.c.Error != nil {
		return out, false, d.c.Error.toError()
	}
	for i := range d.c.Choices {
		ch := &d.c.Choices[i]
		if ch.Index != 0 {
			continue
		}
		var err error
		if out, err = d.choice(ch, out); err != nil {
			return out, false, err
		}
	}
	if u := d.c.Usage; u != nil {
		d.hasUse = true
		out = append(out, providers.Event{Type: providers.EventUsage, Usage: u.toUsage()})
	}
	return out, false, nil
}

func (d *Decoder) choice(ch *choice, out []providers.Event) ([]providers.Event, error) {
	dl := &ch.Delta
	if r := dl.ReasoningContent; r != nil && *r != "" {
		out = append(out, providers.Event{Type: providers.EventReasoningDelta, Text: *r})
	} else if r := dl.Reasoning; r != nil && *r != "" {
		out = append(out, providers.Event{Type: providers.EventReasoningDelta, Text: *r})
	}
	if t := dl.Content; t != nil && *t != "" {
		out = append(out, providers.Event{Type: providers.EventTextDelta, Text: *t})
	}
	if t := dl.Refusal; t != nil && *t != "" {
		out = append(out, providers.Event{Type: providers.EventRefusalDelta, Text: *t})
	}
	for i := range dl.ToolCalls {
		out = d.toolCall(&dl.ToolCalls[i], out)
	}
	if f := ch.FinishReason; f != nil && *f != "" {
		if *f == "insufficient_system_resource" {
			// The reasoning API's way of saying the server gave up mid-answer.
			return out, &providers.Error{Kind: providers.ErrUpstream, Code: *f, Message: "the server ran out of resources", Retryable: true}
		}
		out = d.closeCalls(out)
		d.finish, d.ended = *f, true
	}
	return out, nil
}

func (d *Decoder) toolCall(tc *toolCallDelta, out []providers.Event) []providers.Event {
	index := len(d.calls)
	if tc.Index != nil {
		index = *tc.Index
	} else if tc.ID == "" && len(d.calls) > 0 {
		index = d.calls[len(d.calls)-1].index // a continuation without an index
	}
	var call *openCall
	for i := len(d.calls) - 1; i >= 0; i-- {
		c := &d.calls[i]
		if c.index == index && !c.done && (tc.ID == "" || c.id == "" || c.id == tc.ID) {
			call = c
			break
		}
	}
	if call == nil {
		d.calls = append(d.calls, openCall{index: index, key: len(d.calls), id: tc.ID})
		call = &d.calls[len(d.calls)-1]
		out = append(out, providers.Event{Type: providers.EventToolCallStart, Index: call.key, ID: tc.ID, Name: tc.Function.Name})
	} else if call.id == "" && tc.ID != "" {
		call.id = tc.ID
	}
	if a := tc.Function.Arguments; a != nil && *a != "" {
		out = append(out, providers.Event{Type: providers.EventToolCallDelta, Index: call.key, Text: *a})
	}
	return out
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
	pu := providers.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CacheReadTokens: u.PromptCacheHit}
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens > 0 {
		pu.CacheReadTokens = d.CachedTokens
	}
	if d := u.CompletionTokensDetails; d != nil {
		pu.ReasoningTokens = d.ReasoningTokens
	}
	return pu
}

// code returns the error's code as text (servers send a string, a number
// or null).
func (e *apiError) code() string {
	var s string
	if json.Unmarshal(e.Code, &s) == nil && s != "" {
		return s
	}
	var n json.Number
	if json.Unmarshal(e.Code, &n) == nil && n != "" {
		return n.String()
	}
	return e.Type
}

// toError maps an in-stream error to the status the API would have
// answered with, so that it gets the same kind and retry rule.
func (e *apiError) toError() *providers.Error {
	code := e.code()
	status := e.Status
	if status < 400 || status > 599 {
		if n, err := strconv.Atoi(code); err == nil && n >= 400 && n <= 599 {
			status = n
		} else {
			status = 500
			switch t := e.Type + " " + code; {
			case strings.Contains(t, "rate_limit"):
				status = 429
			case strings.Contains(t, "invalid_request") || strings.Contains(t, "context_length"):
				status = 400
			case strings.Contains(t, "authentication"):
				status = 401
			}
		}
	}
	pe := providers.APIError(status, code, e.Message)
	pe.Status = 0 // it arrived in the stream, not as a status
	return pe
}

func streamError(data []byte) error {
	code, msg := ParseError(data)
	e := apiError{Message: msg, Type: code}
	return e.toError()
}

// ParseError reads a chat-completions error body: {"error": {"message",
// "type", "code"}}, {"error": "text"} or {"message": "text"}.
func ParseError(body []byte) (code, message string) {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &env) != nil {
		return "", ""
	}
	var e apiError
	if json.Unmarshal(env.Error, &e) == nil && (e.Message != "" || e.Type != "" || len(e.Code) > 0) {
		return e.code(), e.Message
	}
	var s string
	if json.Unmarshal(env.Error, &s) == nil && s != "" {
		return "", s
	}
	return "", env.Message
}
