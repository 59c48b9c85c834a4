package genai

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"

	"agent/internal/jsonscan"
	"agent/internal/sse"
	"agent/providers"
)

// generatedID begins the ids the decoder makes up for function calls the
// API sent without one; they are not sent back.
const generatedID = "genai-call-"

// Decoder decodes a streamed generation: every event is one
// GenerateContentResponse chunk (candidates with content parts, a finish
// reason, usage metadata, prompt feedback) and the stream has no end
// marker: it ends with the body, after a chunk with a finish reason. Only
// the first candidate is read (the provider asks for one). Text parts,
// thought parts (reasoning), function calls (complete in one part: start,
// arguments and end at once), inline images and thought signatures become
// events; code execution and other part types are skipped. An {"error":
// ...} chunk ends the stream with a typed error. It does no I/O and is
// not safe for concurrent use.
type Decoder struct {
	sc       jsonscan.Scanner
	c        chunk
	next     int    // the next block index
	cur      int    // the open text or thought block, -1 when none
	curKind  uint8  // partText or partThought
	respID   string // for made-up call ids
	calls    int
	finish   string
	blocked  string // promptFeedback.blockReason
	usage    providers.Usage
	hasUsage bool
	hasText  bool
}

const (
	partText uint8 = iota + 1
	partThought
)

// NewDecoder returns a decoder for one response.
func NewDecoder() *Decoder { return &Decoder{cur: -1} }

type chunk struct {
	parts    []wirePart
	finish   string
	blocked  string
	usage    providers.Usage
	hasUsage bool
	respID   string
	err      *apiError
}

type wirePart struct {
	text      string
	hasText   bool
	thought   bool
	signature string
	call      bool
	callID    string
	callName  string
	callArgs  string
	mime      string
	data      string
	hasData   bool
}

type apiError struct {
	code    int
	status  string
	message string
}

// Decode implements providers.Decoder.
func (d *Decoder) Decode(ev sse.Event, out []providers.Event) ([]providers.Event, bool, error) {
	if err := d.parse(ev.Data); err != nil {
		return out, false, &providers.Error{Kind: providers.ErrUpstream, Message: "malformed stream chunk", Err: err}
	}
	c := &d.c
	if c.err != nil {
		return out, false, c.err.toError()
	}
	if c.respID != "" && d.respID == "" {
		d.respID = c.respID
	}
	for i := range c.parts {
		var err error
		if out, err = d.part(&c.parts[i], out); err != nil {
			return out, false, err
		}
	}
	if c.finish != "" {
		d.finish = c.finish
	}
	if c.blocked != "" {
		d.blocked = c.blocked
	}
	if c.hasUsage {
		d.usage, d.hasUsage = c.usage, true
	}
	return out, false, nil
}

func (d *Decoder) block(kind uint8) int {
	if kind != 0 && d.cur >= 0 && d.curKind == kind {
		return d.cur
	}
	i := d.next
	d.next++
	d.cur, d.curKind = -1, 0
	if kind != 0 {
		d.cur, d.curKind = i, kind
	}
	return i
}

func (d *Decoder) part(p *wirePart, out []providers.Event) ([]providers.Event, error) {
	sig := ""
	if p.signature != "" {
		sig = SignaturePrefix + p.signature
	}
	switch {
	case p.call:
		if sig != "" {
			// Before the call, so that it goes back on it (wireContents).
			out = append(out, providers.Event{Type: providers.EventReasoningDelta, Index: d.block(0), Signature: sig})
		}
		i := d.block(0)
		id := p.callID
		if id == "" {
			id = generatedID + d.respID + "-" + strconv.Itoa(d.calls)
		}
		d.calls++
		args := p.callArgs
		if args == "" || args == "null" {
			args = "{}"
		}
		out = append(out,
			providers.Event{Type: providers.EventToolCallStart, Index: i, ID: id, Name: p.callName},
			providers.Event{Type: providers.EventToolCallDelta, Index: i, Text: args},
			providers.Event{Type: providers.EventToolCallEnd, Index: i})
	case p.hasData:
		data, err := base64.StdEncoding.DecodeString(p.data)
		if err != nil {
			return out, &providers.Error{Kind: providers.ErrUpstream, Message: "malformed inline data", Err: err}
		}
		out = append(out, providers.Event{Type: providers.EventImage, Index: d.block(0), MediaType: p.mime, Data: data})
		if sig != "" {
			out = append(out, providers.Event{Type: providers.EventReasoningDelta, Index: d.block(0), Signature: sig})
		}
	case p.thought:
		if p.text != "" || sig != "" {
			out = append(out, providers.Event{Type: providers.EventReasoningDelta, Index: d.block(partThought), Text: p.text, Signature: sig})
		}
	case p.hasText:
		if p.text != "" {
			d.hasText = true
			out = append(out, providers.Event{Type: providers.EventTextDelta, Index: d.block(partText), Text: p.text})
		}
		if sig != "" {
			out = append(out, providers.Event{Type: providers.EventReasoningDelta, Index: d.block(0), Signature: sig})
		}
	case sig != "":
		out = append(out, providers.Event{Type: providers.EventReasoningDelta, Index: d.block(0), Signature: sig})
	}
	return out, nil
}

// End implements providers.Decoder: the API ends a stream by ending the
// body, after a chunk with a finish reason (or a blocked prompt).
func (d *Decoder) End(out []providers.Event) ([]providers.Event, error) {
	if d.finish == "" && d.blocked == "" {
		return out, &providers.Error{Kind: providers.ErrUpstream, Message: "the stream ended without a finish reason", Retryable: true}
	}
	if d.hasUsage {
		out = append(out, providers.Event{Type: providers.EventUsage, Usage: d.usage})
	}
	if d.finish == "" {
		return append(out, providers.Event{Type: providers.EventFinish, Finish: providers.FinishContentFilter, Raw: d.blocked}), nil
	}
	return append(out, providers.Event{Type: providers.EventFinish, Finish: d.finishReason(), Raw: d.finish}), nil
}

func (d *Decoder) finishReason() providers.FinishReason {
	switch d.finish {
	case "STOP":
		if d.calls > 0 {
			return providers.FinishToolCalls
		}
		return providers.FinishStop
	case "MAX_TOKENS":
		return providers.FinishLength
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return providers.FinishContentFilter
	}
	return providers.FinishOther
}

// statusCode is the HTTP status the API documents for each error status,
// for errors that arrive without a numeric code.
var statusCode = map[string]int{
	"INVALID_ARGUMENT": 400, "FAILED_PRECONDITION": 400, "OUT_OF_RANGE": 400,
	"UNAUTHENTICATED": 401, "PERMISSION_DENIED": 403, "NOT_FOUND": 404,
	"RESOURCE_EXHAUSTED": 429, "CANCELLED": 499, "INTERNAL": 500, "UNKNOWN": 500,
	"UNAVAILABLE": 503, "DEADLINE_EXCEEDED": 504,
}

func (e *apiError) toError() *providers.Error {
	status := e.code
	if status < 400 || status > 599 {
		status = statusCode[e.status]
		if status == 0 {
			status = 500
		}
	}
	pe := providers.APIError(status, e.status, e.message)
	pe.Status = 0 // it arrived in the stream
	return pe
}

// parse reads one chunk into d.c, reusing its slices.
func (d *Decoder) parse(data string) error {
	sc := &d.sc
	sc.Reset(data)
	c := &d.c
	*c = chunk{parts: c.parts[:0]}
	if !sc.Object() {
		if sc.Err() == nil {
			return errors.New("chunk is null")
		}
		return sc.Err()
	}
	for sc.More() {
		switch sc.Key() {
		case "candidates":
			if !sc.Array() {
				continue
			}
			first := true
			for sc.More() {
				if first {
					d.parseCandidate()
					first = false
				} else {
					sc.Skip()
				}
			}
		case "usageMetadata":
			d.parseUsage()
		case "responseId":
			c.respID = sc.String()
		case "promptFeedback":
			if sc.Object() {
				for sc.More() {
					if sc.Key() == "blockReason" {
						c.blocked = sc.String()
					} else {
						sc.Skip()
					}
				}
			}
		case "error":
			c.err = parseAPIError(sc)
		default:
			sc.Skip()
		}
	}
	return sc.Done()
}

func (d *Decoder) parseCandidate() {
	sc, c := &d.sc, &d.c
	if !sc.Object() {
		return
	}
	for sc.More() {
		switch sc.Key() {
		case "content":
			if !sc.Object() {
				continue
			}
			for sc.More() {
				if sc.Key() != "parts" || !sc.Array() {
					sc.Skip()
					continue
				}
				for sc.More() {
					c.parts = append(c.parts, wirePart{})
					d.parsePart(&c.parts[len(c.parts)-1])
				}
			}
		case "finishReason":
			c.finish = sc.String()
		default:
			sc.Skip()
		}
	}
}

func (d *Decoder) parsePart(p *wirePart) {
	sc := &d.sc
	if !sc.Object() {
		return
	}
	for sc.More() {
		switch sc.Key() {
		case "text":
			p.text, p.hasText = sc.String(), true
		case "thought":
			p.thought = sc.Raw() == "true"
		case "thoughtSignature":
			p.signature = sc.String()
		case "functionCall":
			if !sc.Object() {
				continue
			}
			p.call = true
			for sc.More() {
				switch sc.Key() {
				case "id":
					p.callID = sc.String()
				case "name":
					p.callName = sc.String()
				case "args":
					p.callArgs = sc.Raw()
				default:
					sc.Skip()
				}
			}
		case "inlineData":
			if !sc.Object() {
				continue
			}
			p.hasData = true
			for sc.More() {
				switch sc.Key() {
				case "mimeType":
					p.mime = sc.String()
				case "data":
					p.data = sc.String()
				default:
					sc.Skip()
				}
			}
		default:
			sc.Skip()
		}
	}
}

func (d *Decoder) parseUsage() {
	sc, c := &d.sc, &d.c
	if !sc.Object() {
		return
	}
	c.hasUsage = true
	var prompt, cand, thoughts, cached int
	for sc.More() {
		switch sc.Key() {
		case "promptTokenCount":
			prompt = max(sc.Int(), 0)
		case "candidatesTokenCount":
			cand = max(sc.Int(), 0)
		case "thoughtsTokenCount":
			thoughts = max(sc.Int(), 0)
		case "cachedContentTokenCount":
			cached = max(sc.Int(), 0)
		default:
			sc.Skip()
		}
	}
	// Output counts the thoughts too; reasoning and cache counts are
	// subsets (providers.Usage).
	c.usage = providers.Usage{InputTokens: prompt, OutputTokens: cand + thoughts, CacheReadTokens: cached, ReasoningTokens: thoughts}
}

func parseAPIError(sc *jsonscan.Scanner) *apiError {
	e := &apiError{}
	if sc.Peek() == jsonscan.String {
		e.message = sc.String() // a gateway's {"error": "text"}
		return e
	}
	if !sc.Object() {
		return e
	}
	for sc.More() {
		switch sc.Key() {
		case "code":
			if sc.Peek() == jsonscan.Number {
				e.code = sc.Int()
			} else {
				sc.Skip()
			}
		case "status":
			e.status = sc.String()
		case "message":
			e.message = sc.String()
		default:
			sc.Skip()
		}
	}
	return e
}

// ParseError reads an error body: {"error": {"code", "message",
// "status"}}, or a list holding one such object (as the streaming
// endpoint sends).
func ParseError(body []byte) (code, message string) {
	var sc jsonscan.Scanner
	sc.Reset(string(body))
	var e *apiError
	obj := func() {
		if !sc.Object() {
			return
		}
		for sc.More() {
			if sc.Key() == "error" {
				e = parseAPIError(&sc)
			} else {
				sc.Skip()
			}
		}
	}
	if sc.Peek() == jsonscan.Array {
		sc.Array()
		for sc.More() {
			if e == nil {
				obj()
			} else {
				sc.Skip()
			}
		}
	} else {
		obj()
	}
	if sc.Done() != nil || e == nil {
		return "", ""
	}
	if e.status == "INVALID_ARGUMENT" && strings.Contains(strings.ToLower(e.message), "api key") {
		// The API reports a wrong key as 400 INVALID_ARGUMENT; it is an
		// authentication failure, not a request to fix.
		return providers.CodeInvalidKey, e.message
	}
	return e.status, e.message
}
