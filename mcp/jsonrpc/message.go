// Package jsonrpc implements the JSON-RPC 2.0 layer of the Model Context
// Protocol: message types, strict decoding, encoding, newline-delimited
// framing with a bounded message size, and a Conn that matches responses
// to requests by id and dispatches the peer's requests and notifications.
// It serves both ends of a connection (the MCP client and `agent mcp
// serve`).
//
// Of the MCP revisions this project speaks (docs/reference/mcp.md,
// "Protocol revisions"), only
// 2025-03-26 has JSON-RPC batches, and it requires a receiver to accept
// them (basic/index "Batching"); 2024-11-05 did not define them, and
// 2025-06-18 removed them, which 2025-11-25 and 2026-07-28 kept. Decoding
// therefore refuses a batch (a JSON array) with ErrBatch, carrying the array
// in the DecodeError; a receiver whose peer negotiated 2025-03-26 splits it
// with DecodeBatch, or reads through NewBatchStream, which also answers a
// batch with one array.
//
// Decoding is strict in one pass without a tree (the framing layer sees
// every byte a server sends): RFC 8259 syntax, valid UTF-8, bounded size and
// depth, and no repeated keys in any object, not even in another case.
//
// The package is pure: it does no I/O of its own beyond the io.Reader and
// io.Writer it is given. Imports: the standard library, internal/jsonlex and internal/quote
// (CONTRIBUTING.md, "Import direction").
package jsonrpc

import (
	"encoding/json"
	"fmt"
	"strconv"

	"agent/internal/quote"
)

// Version is the only accepted value of the "jsonrpc" member.
const Version = "2.0"

// Standard JSON-RPC 2.0 error codes (JSON-RPC 2.0 §5.1).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// ID is a request id: a string or an integer (MCP basic/index: "Requests
// MUST include a string or integer ID"; never null). The zero ID is "no
// id", the id of a notification. IDs are comparable and may key maps.
type ID struct {
	str  string
	num  int64
	kind idKind
}

type idKind uint8

const (
	idNone idKind = iota
	idNum
	idStr
)

// Int64ID returns the integer id n.
func Int64ID(n int64) ID { return ID{num: n, kind: idNum} }

// StringID returns the string id s.
func StringID(s string) ID { return ID{str: s, kind: idStr} }

// IsValid reports whether id is set (a string or an integer).
func (id ID) IsValid() bool { return id.kind != idNone }

// Int64 returns the id as an integer when it is one.
func (id ID) Int64() (int64, bool) { return id.num, id.kind == idNum }

// Str returns the id as a string when it is one.
func (id ID) Str() (string, bool) { return id.str, id.kind == idStr }

// String formats the id for diagnostics: integers bare, strings quoted
// and cut to quote.Max bytes (the id itself goes back whole in a response,
// as JSON-RPC requires; a diagnostic needs only its start).
func (id ID) String() string {
	switch id.kind {
	case idNum:
		return strconv.FormatInt(id.num, 10)
	case idStr:
		return quote.Q(id.str)
	}
	return "null"
}

// MarshalJSON encodes the id; the zero ID encodes as null (the id of an
// error response to a message whose id could not be read).
func (id ID) MarshalJSON() ([]byte, error) { return appendID(nil, id), nil }

// UnmarshalJSON decodes a string or integer id (also used for requestId in
// notifications/cancelled and for progress tokens, which have the same
// type). null, fractions and out-of-range integers are refused.
func (id *ID) UnmarshalJSON(data []byte) error {
	v, err := parseID(data)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

func parseID(data []byte) (ID, error) {
	s := scanner{data: data, maxDepth: 1}
	s.skipSpace()
	if s.pos >= len(data) {
		return ID{}, fmt.Errorf("id: empty")
	}
	var id ID
	switch c := data[s.pos]; {
	case c == '"':
		v, _, err := s.str(true)
		if err != nil {
			return ID{}, fmt.Errorf("id: %w", err)
		}
		id = StringID(v)
	case c == '-' || (c >= '0' && c <= '9'):
		start := s.pos
		integer, err := s.numberKind()
		if err != nil {
			return ID{}, fmt.Errorf("id: %w", err)
		}
		if !integer {
			return ID{}, fmt.Errorf("id must be a string or an integer, not %s", data[start:s.pos])
		}
		n, err := strconv.ParseInt(string(data[start:s.pos]), 10, 64)
		if err != nil {
			return ID{}, fmt.Errorf("id %s out of range", data[start:s.pos])
		}
		id = Int64ID(n)
	default:
		return ID{}, fmt.Errorf("id must be a string or an integer")
	}
	s.skipSpace()
	if s.pos != len(data) {
		return ID{}, fmt.Errorf("id: unexpected data after the value")
	}
	return id, nil
}

// Kind tells the three message shapes apart.
type Kind int

// The message kinds.
const (
	KindRequest Kind = iota + 1
	KindNotification
	KindResponse
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	}
	return "invalid"
}

// Message is one JSON-RPC message. Which fields are set decides its kind:
//
//   - request: Method and ID (Params optional)
//   - notification: Method, no ID (Params optional)
//   - response: no Method, and exactly one of Result and Error; ID may be
//     zero only in an error response to a message whose id was unreadable.
//
// Params and Result, when set, are JSON objects (MCP narrows JSON-RPC's
// params and result to objects). Decode returns them as slices of the
// decoded input; the caller may keep them.
type Message struct {
	ID     ID
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// Kind returns the kind of m.
func (m *Message) Kind() Kind {
	switch {
	case m.Method != "" && m.ID.IsValid():
		return KindRequest
	case m.Method != "":
		return KindNotification
	default:
		return KindResponse
	}
}

// Error is the error object of an error response. It is also the Go error
// returned for it, so callers branch on Code with errors.As.
type Error struct {
	Code    int64
	Message string
	Data    json.RawMessage // optional; any JSON value
}

func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// NewRequest builds a request; params is marshalled with encoding/json (a
// json.RawMessage is used as it is) and must encode to an object or be nil.
func NewRequest(id ID, method string, params any) (*Message, error) {
	raw, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	return &Message{ID: id, Method: method, Params: raw}, nil
}

// NewNotification builds a notification; params as for NewRequest.
func NewNotification(method string, params any) (*Message, error) {
	raw, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	return &Message{Method: method, Params: raw}, nil
}

// NewResponse builds a result response; result must encode to an object.
func NewResponse(id ID, result any) (*Message, error) {
	raw, err := marshalParams(result)
	if err != nil {
		return nil, err
	}
	if raw == nil {
		raw = json.RawMessage("{}")
	}
	return &Message{ID: id, Result: raw}, nil
}

// NewErrorResponse builds an error response.
func NewErrorResponse(id ID, e *Error) *Message {
	return &Message{ID: id, Error: e}
}

func marshalParams(v any) (json.RawMessage, error) {
	switch p := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if p == nil {
			return nil, nil
		}
		return p, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: encoding params: %w", err)
	}
	if string(raw) == "null" {
		return nil, nil
	}
	return raw, nil
}
