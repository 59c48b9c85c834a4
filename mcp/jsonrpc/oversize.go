package jsonrpc

import (
	"bytes"

	"agent/internal/jsonlex"
)

// An oversized message is skipped unread (frame.go), but its id can often
// still be had from the bytes at either end of the line: at the start when
// the peer writes "jsonrpc" and "id" first, at the end when it writes the
// result first and the id last (both orders are common). With the id, the
// receiver can fail the one call the message answered, or answer the one
// request it was, and keep the connection (docs/reference/mcp.md, "Bad
// input": a resource of 100 MB is refused, not the server).

// oversizeWindow is how much of each end of a skipped line is kept.
const oversizeWindow = 4 << 10

// oversizedID reads what the ends of an oversized message say about it:
// its id, and whether it is a response (it has "result" or "error") or a
// request (it has "method"). known reports whether the kind was seen.
func oversizedID(head, tail []byte) (id ID, response, known bool) {
	s := scanner{data: head, maxDepth: DefaultMaxDepth}
	s.skipSpace()
	if s.pos < len(head) && head[s.pos] == '{' {
		s.pos++
	scan:
		for {
			s.skipSpace()
			if s.pos >= len(head) || head[s.pos] != '"' {
				break
			}
			key, _, err := s.str(true)
			if err != nil {
				break
			}
			s.skipSpace()
			if s.pos >= len(head) || head[s.pos] != ':' {
				break
			}
			s.pos++
			s.skipSpace()
			start := s.pos
			switch key {
			case "result", "error":
				response, known = true, true
			case "method":
				response, known = false, true
			}
			if err := s.value(1); err != nil {
				break // the value runs past the kept start
			}
			if key == "id" {
				if v, err := parseID(head[start:s.pos]); err == nil {
					id = v
				}
			}
			s.skipSpace()
			if s.pos >= len(head) {
				break
			}
			switch head[s.pos] {
			case ',':
				s.pos++
			default:
				break scan
			}
		}
	}
	if !id.IsValid() {
		id = trailingID(tail)
	}
	return id, response, known
}

// trailingID finds an id written as the last member of the top-level
// object: the line ends `"id": VALUE }`, the key preceded by ',' or '{'.
// Only the top level can end that way: a nested object's closing brace
// would be followed by its parent's.
func trailingID(tail []byte) ID {
	t := bytes.TrimRight(tail, " \t\r\n")
	if len(t) == 0 || t[len(t)-1] != '}' {
		return ID{}
	}
	t = bytes.TrimRight(t[:len(t)-1], " \t\r\n")
	for end := len(t); end > 0; {
		k := bytes.LastIndex(t[:end], []byte(`"id"`))
		if k < 0 {
			return ID{}
		}
		end = k
		before := bytes.TrimRight(t[:k], " \t\r\n")
		if len(before) == 0 || (before[len(before)-1] != ',' && before[len(before)-1] != '{') {
			continue
		}
		rest := t[jsonlex.Space(t, k+4):]
		if len(rest) == 0 || rest[0] != ':' {
			continue
		}
		if v, err := parseID(rest[1:]); err == nil {
			return v
		}
	}
	return ID{}
}
