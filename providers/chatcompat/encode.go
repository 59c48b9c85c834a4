package chatcompat

import (
	"bytes"
	"encoding/json"
	"sync"
	"unsafe"

	"agent/internal/jsonlex"
	"agent/providers"
)

// The conversation of a request, written by hand: encoding/json's
// reflection cost a request of many small messages (a long session after
// its old tool results were cleared) far more than its bytes
// (docs/performance.md, "Context management"). The bytes are the same as
// json.Marshal's of []wireMessage; a test compares them.

// appendMessages appends ms as a JSON array.
func appendMessages(dst []byte, ms []wireMessage) []byte {
	dst = append(dst, '[')
	dst = appendMessageList(dst, ms)
	return append(dst, ']')
}

// appendMessageList appends ms comma-separated, without the brackets.
func appendMessageList(dst []byte, ms []wireMessage) []byte {
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"role":`...)
		dst = jsonlex.AppendString(dst, m.Role)
		dst = append(dst, `,"content":`...)
		dst = appendContent(dst, m.Content)
		if m.ReasoningContent != nil {
			dst = append(dst, `,"reasoning_content":`...)
			dst = jsonlex.AppendString(dst, *m.ReasoningContent)
		}
		if len(m.ToolCalls) > 0 {
			dst = append(dst, `,"tool_calls":[`...)
			for k, c := range m.ToolCalls {
				if k > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, `{"id":`...)
				dst = jsonlex.AppendString(dst, c.ID)
				dst = append(dst, `,"type":`...)
				dst = jsonlex.AppendString(dst, c.Type)
				dst = append(dst, `,"function":{"name":`...)
				dst = jsonlex.AppendString(dst, c.Function.Name)
				dst = append(dst, `,"arguments":`...)
				dst = jsonlex.AppendString(dst, c.Function.Arguments)
				dst = append(dst, "}}"...)
			}
			dst = append(dst, ']')
		}
		if m.ToolCallID != "" {
			dst = append(dst, `,"tool_call_id":`...)
			dst = jsonlex.AppendString(dst, m.ToolCallID)
		}
		dst = append(dst, '}')
	}
	return dst
}

// appendContent writes a message's content: a string, content parts, or
// null.
func appendContent(dst []byte, content any) []byte {
	switch c := content.(type) {
	case nil:
		return append(dst, "null"...)
	case string:
		return jsonlex.AppendString(dst, c)
	case []wirePart:
		dst = append(dst, '[')
		for i, p := range c {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"type":`...)
			dst = jsonlex.AppendString(dst, p.Type)
			if p.Text != "" {
				dst = append(dst, `,"text":`...)
				dst = jsonlex.AppendString(dst, p.Text)
			}
			if p.ImageURL != nil {
				dst = append(dst, `,"image_url":{"url":`...)
				dst = jsonlex.AppendString(dst, p.ImageURL.URL)
				dst = append(dst, '}')
			}
			dst = append(dst, '}')
		}
		return append(dst, ']')
	}
	// A content of another shape (none is built today) goes through
	// encoding/json.
	b, err := json.Marshal(content)
	if err != nil {
		return append(dst, "null"...)
	}
	return append(dst, b...)
}

// messagesMark stands for the messages in the body's other members while
// they are encoded: the one top-level member named "messages" (a string
// value's quotes would be escaped, so the bytes occur nowhere else).
const messagesMark = `"messages":0`

// spliceMessages puts the encoded messages (a JSON array) where the mark
// stands.
func spliceMessages(body, messages []byte) []byte {
	i := bytes.Index(body, []byte(messagesMark))
	if i < 0 {
		return body
	}
	out := make([]byte, 0, len(body)+len(messages))
	out = append(out, body[:i+len(`"messages":`)]...)
	out = append(out, messages...)
	return append(out, body[i+len(messagesMark):]...)
}

// encodeCache keeps the JSON of each message of the latest request, so
// that the next request of the conversation, which repeats them, encodes
// only what is new: the local work of a request then does not grow with
// the conversation (docs/performance.md, "Context management"). A message
// is known by its first part's address and checked part by part against
// what was encoded (the strings' addresses and lengths, which cannot
// change in place, and the bytes of tool-call arguments, which could);
// messages with images are encoded anew every time. Only the latest
// request's messages are kept, so it holds about one request's bytes.
type encodeCache struct {
	mu   sync.Mutex
	last map[*providers.Part]cachedMessage
	// spare is the map before last, emptied and reused for the next
	// request, so that a long conversation does not build a new map each
	// time.
	spare map[*providers.Part]cachedMessage
}

type cachedMessage struct {
	role     providers.Role
	toolTurn bool
	sig      []partSig
	json     []byte // the message's wire messages, comma-separated
}

// partSig is what identifies one part's contents.
type partSig struct {
	kind        byte
	p1, p2, p3  *byte
	n1, n2, n3  int
	isError     bool
	args        string
	nestedParts int // a tool result's parts, which follow it
}

func strSig(s string) (*byte, int) { return unsafe.StringData(s), len(s) }

// signature is a message's parts' signatures; ok is false for a message
// that is not kept (it holds an image).
func signature(m providers.Message) ([]partSig, bool) {
	sig := make([]partSig, 0, len(m.Content))
	for _, p := range m.Content {
		var ps partSig
		switch p := p.(type) {
		case providers.Text:
			ps.kind = 't'
			ps.p1, ps.n1 = strSig(p.Text)
		case providers.Reasoning:
			ps.kind = 'r'
			ps.p1, ps.n1 = strSig(p.Text)
			ps.p2, ps.n2 = strSig(p.Signature)
			ps.p3, ps.n3 = strSig(p.Redacted)
		case providers.ToolCall:
			ps.kind = 'c'
			ps.p1, ps.n1 = strSig(p.ID)
			ps.p2, ps.n2 = strSig(p.Name)
			ps.args = string(p.Arguments)
		case providers.ToolResult:
			ps.kind = 'o'
			ps.p1, ps.n1 = strSig(p.CallID)
			ps.isError, ps.nestedParts = p.IsError, len(p.Content)
			sig = append(sig, ps)
			for _, c := range p.Content {
				t, ok := c.(providers.Text)
				if !ok {
					return nil, false
				}
				var ts partSig
				ts.kind = 't'
				ts.p1, ts.n1 = strSig(t.Text)
				sig = append(sig, ts)
			}
			continue
		default:
			return nil, false // an image
		}
		sig = append(sig, ps)
	}
	return sig, true
}

// matches reports whether m's parts are those sig was taken of, without
// allocating.
func matches(sig []partSig, m providers.Message) bool {
	k := 0
	next := func() (partSig, bool) {
		if k >= len(sig) {
			return partSig{}, false
		}
		k++
		return sig[k-1], true
	}
	same := func(p *byte, n int, s string) bool { ps, ns := strSig(s); return p == ps && n == ns }
	for _, p := range m.Content {
		ps, ok := next()
		if !ok {
			return false
		}
		switch p := p.(type) {
		case providers.Text:
			if ps.kind != 't' || !same(ps.p1, ps.n1, p.Text) {
				return false
			}
		case providers.Reasoning:
			if ps.kind != 'r' || !same(ps.p1, ps.n1, p.Text) || !same(ps.p2, ps.n2, p.Signature) || !same(ps.p3, ps.n3, p.Redacted) {
				return false
			}
		case providers.ToolCall:
			if ps.kind != 'c' || !same(ps.p1, ps.n1, p.ID) || !same(ps.p2, ps.n2, p.Name) || ps.args != string(p.Arguments) {
				return false
			}
		case providers.ToolResult:
			if ps.kind != 'o' || !same(ps.p1, ps.n1, p.CallID) || ps.isError != p.IsError || ps.nestedParts != len(p.Content) {
				return false
			}
			for _, c := range p.Content {
				ts, ok := next()
				t, isText := c.(providers.Text)
				if !ok || !isText || ts.kind != 't' || !same(ts.p1, ts.n1, t.Text) {
					return false
				}
			}
		default:
			return false
		}
	}
	return k == len(sig)
}

// encodeInto writes body (the request's other members) with the
// conversation where its messages mark stands, in one allocation.
func (c *encodeCache) encodeInto(body []byte, msgs []providers.Message, replay ReasoningReplay) []byte {
	i := bytes.Index(body, []byte(messagesMark))
	if i < 0 {
		return body
	}
	n := i + len(`"messages":`)
	head := body[:n:n] // appending never writes into the tail
	tail := body[i+len(messagesMark):]
	out := c.encode(head, msgs, replay, len(tail))
	return append(out, tail...)
}

// encode appends the conversation as a JSON array to dst (with room for
// extra more bytes), reusing what the latest request encoded of the same
// messages.
func (c *encodeCache) encode(dst []byte, msgs []providers.Message, replay ReasoningReplay, extra int) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		if m.Role != providers.RoleTool {
			continue
		}
		for _, p := range m.Content {
			if r, ok := p.(providers.ToolResult); ok {
				if _, images := r.TextAndImages(); len(images) > 0 {
					// Images move to a user message after the run of tool
					// messages: encoded as a whole, nothing kept.
					c.last = nil
					return appendMessages(dst, wireMessages(msgs, replay))
				}
			}
		}
	}
	toolTurn := toolTurns(msgs)
	next := c.spare
	if next == nil {
		next = make(map[*providers.Part]cachedMessage, len(msgs))
	}
	size := 2
	for _, m := range msgs {
		if len(m.Content) > 0 {
			size += len(c.last[&m.Content[0]].json) + 1
		}
	}
	out := append(make([]byte, 0, len(dst)+size+extra+4096), dst...)
	out = append(out, '[')
	first := true
	for i, m := range msgs {
		tt := replay == ReplayToolTurns && toolTurn[i]
		var js []byte
		if len(m.Content) > 0 {
			if e, ok := c.last[&m.Content[0]]; ok && e.role == m.Role && e.toolTurn == tt && matches(e.sig, m) {
				js = e.json
				next[&m.Content[0]] = e
			}
		}
		if js == nil {
			ws, _ := wireMessage1(nil, m, toolTurn[i], replay)
			js = appendMessageList(nil, ws)
			if sig, ok := signature(m); ok && len(m.Content) > 0 {
				next[&m.Content[0]] = cachedMessage{role: m.Role, toolTurn: tt, sig: sig, json: js}
			}
		}
		if len(js) == 0 {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		out = append(out, js...)
		first = false
	}
	c.spare, c.last = c.last, next
	clear(c.spare)
	return append(out, ']')
}
