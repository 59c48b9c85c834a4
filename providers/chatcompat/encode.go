package chatcompat

import (
	"bytes"
	"encoding/json"

	"agent/internal/jsonlex"
)

// The conversation of a request, written by hand: encoding/json's
// reflection cost a request of many small messages (a long session after
// its old tool results were cleared) far more than its bytes
// (docs/performance.md, "Context management"). The bytes are the same as
// json.Marshal's of []wireMessage; a test compares them.

// appendMessages appends ms as a JSON array.
func appendMessages(dst []byte, ms []wireMessage) []byte {
	dst = append(dst, '[')
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
	return append(dst, ']')
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

// spliceMessages puts the messages where the mark stands.
func spliceMessages(body []byte, ms []wireMessage) []byte {
	i := bytes.Index(body, []byte(messagesMark))
	if i < 0 {
		return body
	}
	out := make([]byte, 0, len(body)+messagesSize(ms))
	out = append(out, body[:i+len(`"messages":`)]...)
	out = appendMessages(out, ms)
	return append(out, body[i+len(messagesMark):]...)
}

// messagesSize is about the bytes the messages take, to size the body once.
func messagesSize(ms []wireMessage) int {
	n := 2
	for _, m := range ms {
		n += 64 + len(m.ToolCallID)
		switch c := m.Content.(type) {
		case string:
			n += len(c) + len(c)/16
		case []wirePart:
			for _, p := range c {
				n += 32 + len(p.Text) + len(p.Text)/16
				if p.ImageURL != nil {
					n += len(p.ImageURL.URL)
				}
			}
		}
		if m.ReasoningContent != nil {
			n += len(*m.ReasoningContent) + 24
		}
		for _, c := range m.ToolCalls {
			n += 64 + len(c.ID) + len(c.Function.Name) + len(c.Function.Arguments)*5/4
		}
	}
	return n
}
