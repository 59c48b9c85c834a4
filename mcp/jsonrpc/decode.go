package jsonrpc

import (
	"errors"
	"fmt"
)

// Limits applied when options leave them at zero.
const (
	// DefaultMaxMessage bounds one message: a stdio line or an HTTP body
	// (docs/providers.md, "Shared plumbing": the same 16 MiB bounds a
	// provider's stream lines).
	DefaultMaxMessage = 16 << 20
	// DefaultMaxDepth bounds the nesting of arrays and objects in a message.
	DefaultMaxDepth = 256
)

// Sentinel errors. A decoding failure is a *DecodeError wrapping one of
// ErrParse, ErrInvalid, ErrBatch or ErrTooLarge.
var (
	// ErrParse: the bytes are not one well-formed JSON value under the
	// strict rules (syntax, UTF-8, depth, duplicate keys).
	ErrParse = errors.New("jsonrpc: malformed JSON")
	// ErrInvalid: well-formed JSON that is not a valid JSON-RPC 2.0 message
	// as MCP uses it.
	ErrInvalid = errors.New("jsonrpc: invalid message")
	// ErrBatch: a JSON array, i.e. a JSON-RPC batch. Only MCP 2025-03-26
	// has batches (its basic/index "Batching": implementations MUST
	// support receiving them); 2024-11-05 did not define them and
	// 2025-06-18 removed them, so a receiver takes one only from a peer
	// that negotiated 2025-03-26 (DecodeError.Batch, DecodeBatch).
	ErrBatch = errors.New("jsonrpc: batches are allowed only in MCP revision 2025-03-26")
	// ErrTooLarge: a message over the size bound.
	ErrTooLarge = errors.New("jsonrpc: message too large")
)

// DecodeError reports a message that was refused. ID is the message's id
// when it could still be read, so that a server can answer an invalid
// request with an error response carrying it, and a client can fail the
// call a malformed response was meant for. Response says whether the
// message looked like a response (it had no "method").
type DecodeError struct {
	Err      error // ErrParse, ErrInvalid, ErrBatch or ErrTooLarge
	Msg      string
	ID       ID
	Response bool
	// Batch is the array, already checked to be well-formed JSON, when Err
	// is ErrBatch: a receiver whose peer may send batches splits it with
	// DecodeBatch. It aliases the input.
	Batch []byte
}

func (e *DecodeError) Error() string {
	if e.Msg == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + ": " + e.Msg
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Code is the JSON-RPC error code a server answers this failure with.
func (e *DecodeError) Code() int64 {
	// A message over the bound was never parsed: a parse error too.
	if errors.Is(e.Err, ErrParse) || errors.Is(e.Err, ErrTooLarge) {
		return CodeParseError
	}
	return CodeInvalidRequest
}

// DecodeOptions bounds Decode. The zero value uses the defaults above.
type DecodeOptions struct {
	MaxMessage int
	MaxDepth   int
}

// Decode parses one message with the default bounds.
func Decode(data []byte) (*Message, error) {
	return DecodeWith(data, DecodeOptions{})
}

// DecodeWith parses one message. The JSON must be strict (see scanner);
// then the envelope must be JSON-RPC 2.0 as MCP uses it:
//
//   - "jsonrpc" is exactly "2.0";
//   - a request has a non-empty string "method" and an "id" that is a string
//     or an integer (never null);
//   - a notification has a "method" and no "id";
//   - a response has no "method" and exactly one of "result" (an object, with
//     a non-null id) and "error" (an object with an integer "code", a string
//     "message" and an optional "data"; its id may be null or absent);
//   - "params", when present, is an object (null counts as absent).
//
// Members the revisions do not define are ignored: the MCP schemas leave
// the envelope open, and refusing them would break peers for no gain.
// Params and Result alias data.
func DecodeWith(data []byte, opts DecodeOptions) (*Message, error) {
	maxDepth, err := opts.depth(len(data))
	if err != nil {
		return nil, err
	}
	s := scanner{data: data, maxDepth: maxDepth}
	s.skipSpace()
	if s.pos >= len(data) {
		return nil, &DecodeError{Err: ErrParse, Msg: "empty message"}
	}
	switch data[s.pos] {
	case '{':
	case '[':
		// Validate first so that garbage is reported as garbage.
		if err := s.value(0); err != nil {
			return nil, &DecodeError{Err: ErrParse, Msg: err.Error()}
		}
		s.skipSpace()
		if s.pos != len(data) {
			return nil, &DecodeError{Err: ErrParse, Msg: s.errorf("unexpected data after the batch").Error()}
		}
		return nil, &DecodeError{Err: ErrBatch, Batch: data}
	default:
		if err := s.value(0); err != nil {
			return nil, &DecodeError{Err: ErrParse, Msg: err.Error()}
		}
		return nil, &DecodeError{Err: ErrInvalid, Msg: "a message must be a JSON object"}
	}

	var env struct {
		version, id, method, params, result, errObj []byte
		hasVersion, hasID, hasMethod                bool
	}
	err = s.object(1, func(key string, start, end int) error {
		v := data[start:end]
		switch key {
		case "jsonrpc":
			env.version, env.hasVersion = v, true
		case "id":
			env.id, env.hasID = v, true
		case "method":
			env.method, env.hasMethod = v, true
		case "params":
			env.params = v
		case "result":
			env.result = v
		case "error":
			env.errObj = v
		}
		return nil
	})
	if err == nil {
		s.skipSpace()
		if s.pos != len(data) {
			err = s.errorf("unexpected data after the message")
		}
	}
	if err != nil {
		return nil, &DecodeError{Err: ErrParse, Msg: err.Error()}
	}

	m := &Message{}
	invalid := func(format string, args ...any) error {
		return &DecodeError{Err: ErrInvalid, Msg: fmt.Sprintf(format, args...), ID: m.ID, Response: !env.hasMethod}
	}
	// Read the id first so that later refusals can carry it.
	var idErr error
	if env.hasID && string(env.id) != "null" {
		m.ID, idErr = parseID(env.id)
	}
	if !env.hasVersion {
		return nil, invalid(`missing "jsonrpc" member`)
	}
	if v, ok := stringValue(env.version); !ok || v != Version {
		return nil, invalid(`"jsonrpc" must be "2.0"`)
	}
	if idErr != nil {
		return nil, invalid("%v", idErr)
	}

	if env.hasMethod {
		method, ok := stringValue(env.method)
		if !ok || method == "" {
			return nil, invalid(`"method" must be a non-empty string`)
		}
		m.Method = method
		if env.result != nil || env.errObj != nil {
			return nil, invalid(`a request or notification may not carry "result" or "error"`)
		}
		if env.hasID && !m.ID.IsValid() {
			return nil, invalid("a request id may not be null")
		}
		if env.params != nil && string(env.params) != "null" {
			if env.params[0] != '{' {
				return nil, invalid(`"params" must be an object`)
			}
			m.Params = env.params
		}
		return m, nil
	}

	if env.params != nil {
		return nil, invalid(`a response may not carry "params"`)
	}
	switch {
	case env.result != nil && env.errObj != nil:
		return nil, invalid(`a response carries exactly one of "result" and "error"`)
	case env.result != nil:
		if !m.ID.IsValid() {
			return nil, invalid("a result response needs a string or integer id")
		}
		if env.result[0] != '{' {
			return nil, invalid(`"result" must be an object`)
		}
		m.Result = env.result
	case env.errObj != nil:
		e, err := decodeErrorObject(env.errObj)
		if err != nil {
			return nil, invalid("%v", err)
		}
		m.Error = e
	default:
		return nil, invalid(`a message needs "method", "result" or "error"`)
	}
	return m, nil
}

// decodeErrorObject reads a JSON-RPC error object already validated as JSON.
func decodeErrorObject(raw []byte) (*Error, error) {
	if raw[0] != '{' {
		return nil, errors.New(`"error" must be an object`)
	}
	var code, message []byte
	e := &Error{}
	s := scanner{data: raw, maxDepth: DefaultMaxDepth}
	s.skipSpace()
	err := s.object(1, func(key string, start, end int) error {
		v := raw[start:end]
		switch key {
		case "code":
			code = v
		case "message":
			message = v
		case "data":
			e.Data = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if code == nil {
		return nil, errors.New(`error object without "code"`)
	}
	id, err := parseID(code)
	n, isInt := id.Int64()
	if err != nil || !isInt {
		return nil, errors.New(`error "code" must be an integer`)
	}
	e.Code = n
	msg, ok := stringValue(message)
	if !ok {
		return nil, errors.New(`error "message" must be a string`)
	}
	e.Message = msg
	return e, nil
}

// stringValue decodes raw when it is a JSON string (already validated).
func stringValue(raw []byte) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	s := scanner{data: raw, maxDepth: 1}
	v, _, err := s.str(true)
	if err != nil {
		return "", false
	}
	return v, true
}

// depth applies the options' bounds (the defaults for zero values) to a
// message of n bytes: it returns the nesting limit, or ErrTooLarge.
func (opts DecodeOptions) depth(n int) (int, error) {
	maxMsg, maxDepth := opts.MaxMessage, opts.MaxDepth
	if maxMsg <= 0 {
		maxMsg = DefaultMaxMessage
	}
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	if n > maxMsg {
		return 0, &DecodeError{Err: ErrTooLarge, Msg: fmt.Sprintf("%d bytes, limit %d", n, maxMsg)}
	}
	return maxDepth, nil
}
