package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"agent/internal/jsonlex"
)

// ErrEncode is wrapped by the error for a message that cannot be encoded
// (an inconsistent shape, or params/result that are not a JSON object).
var ErrEncode = errors.New("jsonrpc: cannot encode message")

// Encode returns the single-line JSON encoding of m, without a newline.
func Encode(m *Message) ([]byte, error) { return AppendMessage(nil, m) }

// MarshalJSON implements json.Marshaler with Encode.
func (m *Message) MarshalJSON() ([]byte, error) { return Encode(m) }

// AppendMessage appends the encoding of m to dst. The output never contains
// a raw line break, so it can be framed by newlines (MCP stdio: "Messages
// are delimited by newlines, and MUST NOT contain embedded newlines").
// Params and Result must each be one JSON object; one with line breaks
// (indented JSON) is compacted.
func AppendMessage(dst []byte, m *Message) ([]byte, error) {
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	switch {
	case m.Method != "":
		if m.Result != nil || m.Error != nil {
			return nil, encodeErr("a request or notification may not carry a result or an error")
		}
		if m.ID.IsValid() {
			dst = append(dst, `,"id":`...)
			dst = appendID(dst, m.ID)
		}
		dst = append(dst, `,"method":`...)
		dst = jsonlex.AppendString(dst, m.Method)
		if m.Params != nil {
			dst = append(dst, `,"params":`...)
			var err error
			if dst, err = appendObject(dst, m.Params); err != nil {
				return nil, err
			}
		}
	case m.Error != nil:
		if m.Result != nil || m.Params != nil {
			return nil, encodeErr("an error response carries only an error")
		}
		dst = append(dst, `,"id":`...)
		dst = appendID(dst, m.ID)
		dst = append(dst, `,"error":{"code":`...)
		dst = strconv.AppendInt(dst, m.Error.Code, 10)
		dst = append(dst, `,"message":`...)
		dst = jsonlex.AppendString(dst, m.Error.Message)
		if m.Error.Data != nil {
			dst = append(dst, `,"data":`...)
			var err error
			if dst, err = appendValue(dst, m.Error.Data); err != nil {
				return nil, err
			}
		}
		dst = append(dst, '}')
	case m.Result != nil:
		if !m.ID.IsValid() {
			return nil, encodeErr("a result response needs an id")
		}
		if m.Params != nil {
			return nil, encodeErr("a response may not carry params")
		}
		dst = append(dst, `,"id":`...)
		dst = appendID(dst, m.ID)
		dst = append(dst, `,"result":`...)
		var err error
		if dst, err = appendObject(dst, m.Result); err != nil {
			return nil, err
		}
	default:
		return nil, encodeErr("a message needs a method, a result or an error")
	}
	return append(dst, '}'), nil
}

func encodeErr(msg string) error { return &encodeError{msg} }

type encodeError struct{ msg string }

func (e *encodeError) Error() string { return ErrEncode.Error() + ": " + e.msg }
func (e *encodeError) Unwrap() error { return ErrEncode }

func appendID(dst []byte, id ID) []byte {
	switch id.kind {
	case idNum:
		return strconv.AppendInt(dst, id.num, 10)
	case idStr:
		return jsonlex.AppendString(dst, id.str)
	}
	return append(dst, "null"...)
}

// appendObject appends raw, which must be one JSON object.
func appendObject(dst, raw []byte) ([]byte, error) {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return nil, encodeErr("params and result must be JSON objects")
	}
	return appendValue(dst, raw)
}

// appendValue appends one JSON value, compacting it when it spans lines.
// Caller-supplied raw JSON is validated: an invalid value would corrupt the
// framing for the peer.
func appendValue(dst, raw []byte) ([]byte, error) {
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		if !json.Valid(raw) {
			return nil, encodeErr("invalid JSON value")
		}
		return append(dst, raw...), nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, encodeErr("invalid JSON value")
	}
	return append(dst, b.Bytes()...), nil
}
