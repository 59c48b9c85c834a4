package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"agent/internal/quote"
)

// Tools returns the server's tools: the cached list while it is current
// (no list_changed since it was fetched), else a fresh one from ListTools.
func (c *Client) Tools(ctx context.Context) ([]Tool, error) {
	c.mu.Lock()
	if c.toolsValid {
		tools := slices.Clone(c.tools)
		c.mu.Unlock()
		return tools, nil
	}
	c.mu.Unlock()
	return c.ListTools(ctx)
}

// ListTools fetches every page of tools/list (server/utilities/pagination:
// follow nextCursor until it is absent) and caches the result. Tool
// definitions that are unusable (no name, an inputSchema that is not an
// object, and on Streamable HTTP with 2026-07-28 an invalid x-mcp-header)
// are left out and reported to OnDiagnostic; the other tools stay usable.
func (c *Client) ListTools(ctx context.Context) ([]Tool, error) {
	var tools []Tool
	maps := make(map[string][]paramHeader)
	st := c.state()
	err := c.listAll(ctx, "tools/list", "tools", func(raw json.RawMessage) {
		t, headers, err := c.decodeTool(raw, st)
		if err != nil {
			c.diag(err)
			return
		}
		tools = append(tools, t)
		if headers != nil {
			maps[t.Name] = headers
		}
	})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.gen == st.gen {
		c.tools = tools
		c.headerMaps = maps
		c.toolsValid = true
	}
	c.mu.Unlock()
	return slices.Clone(tools), nil
}

// decodeTool checks one tool definition.
func (c *Client) decodeTool(raw json.RawMessage, st callState) (Tool, []paramHeader, error) {
	var t Tool
	if err := json.Unmarshal(raw, &t); err != nil {
		return Tool{}, nil, fmt.Errorf("mcp: a tool definition was left out: %v", err)
	}
	if t.Name == "" {
		return Tool{}, nil, errors.New("mcp: a tool definition without a name was left out")
	}
	// "inputSchema ... MUST be a valid JSON Schema object (not null)".
	if s := bytes.TrimSpace(t.InputSchema); len(s) == 0 || s[0] != '{' {
		return Tool{}, nil, fmt.Errorf("mcp: tool %q was left out: its inputSchema is not an object", quote.V(t.Name))
	}
	if !st.stateless || c.http == nil {
		// x-mcp-header matters only to Streamable HTTP; other transports
		// "MAY ignore x-mcp-header annotations entirely".
		return t, nil, nil
	}
	headers, err := paramHeaders(t.InputSchema)
	if err != nil {
		return Tool{}, nil, fmt.Errorf("mcp: tool %q was left out: %w", quote.V(t.Name), err)
	}
	return t, headers, nil
}

// CallTool calls a tool (server/tools "Calling Tools"). args is the
// arguments object: a json.RawMessage, a value encoding/json turns into an
// object, or nil. A tool that ran and failed returns a result with IsError
// set, not an error. With ctx cancelled or ClientOptions.Timeout reached
// the server is told to stop (notifications/cancelled, or closing the
// stream on stateless HTTP).
func (c *Client) CallTool(ctx context.Context, name string, args any, opts CallOptions) (*CallToolResult, error) {
	rawArgs, err := encodeArgs(args)
	if err != nil {
		return nil, err
	}
	p := &callToolParams{Name: name, Arguments: rawArgs}
	o := callOpts{
		progress: opts.Progress,
		headers: func() *requestHeaders {
			c.mu.Lock()
			hm := c.headerMaps[name]
			c.mu.Unlock()
			return &requestHeaders{name: headerValue(name), params: paramHeaderValues(hm, rawArgs)}
		},
		onHeaderMismatch: func(ctx context.Context) error {
			_, err := c.ListTools(ctx)
			return err
		},
	}
	raw, err := c.call(ctx, "tools/call", p, o)
	if err != nil {
		return nil, fmt.Errorf("mcp: tools/call %s: %w", name, err)
	}
	var res CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("%w: tools/call %s: %v", ErrInvalidResult, name, err)
	}
	if err := checkResultType(res.ResultType); err != nil {
		return nil, fmt.Errorf("mcp: tools/call %s: %w", name, err)
	}
	if res.Content == nil && res.StructuredContent == nil {
		return nil, fmt.Errorf("%w: tools/call %s: a result without content", ErrInvalidResult, name)
	}
	return &res, nil
}

func encodeArgs(args any) (json.RawMessage, error) {
	var raw json.RawMessage
	switch a := args.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		raw = a
	default:
		b, err := json.Marshal(args)
		if err != nil {
			return nil, fmt.Errorf("mcp: encoding tool arguments: %w", err)
		}
		raw = b
	}
	if s := bytes.TrimSpace(raw); len(s) == 0 || string(s) == "null" {
		return nil, nil
	} else if s[0] != '{' {
		return nil, errors.New("mcp: tool arguments must be a JSON object")
	}
	return raw, nil
}

// paramHeader is one x-mcp-header annotation: the property path from the
// schema root and the header name part.
type paramHeader struct {
	path []string
	name string
}

// paramHeaders validates the x-mcp-header annotations of an inputSchema
// (2026-07-28 server/tools "x-mcp-header" and streamable-http "Custom
// Headers from Tool Parameters"): a non-empty RFC 9110 token, unique
// without regard to case, on a property of type integer, string or boolean
// that is reachable from the root through "properties" keys only. An
// annotation anywhere else invalidates the tool.
func paramHeaders(schema json.RawMessage) ([]paramHeader, error) {
	var root any
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("inputSchema: %v", err)
	}
	var out []paramHeader
	seen := map[string]bool{}
	var walk func(node any, path []string, reachable bool) error
	walk = func(node any, path []string, reachable bool) error {
		obj, ok := node.(map[string]any)
		if !ok {
			if arr, ok := node.([]any); ok {
				for _, it := range arr {
					if err := walk(it, nil, false); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if h, has := obj["x-mcp-header"]; has {
			name, ok := h.(string)
			switch {
			case !reachable || len(path) == 0:
				return errors.New("x-mcp-header on a schema that is not a property reachable through \"properties\"")
			case !ok || !isToken(name):
				return errors.New("x-mcp-header is not an HTTP token")
			case seen[strings.ToLower(name)]:
				return fmt.Errorf("x-mcp-header %q is used twice", quote.V(name))
			case !primitiveType(obj["type"]):
				return fmt.Errorf("x-mcp-header %q is on a property that is not an integer, string or boolean", quote.V(name))
			}
			seen[strings.ToLower(name)] = true
			out = append(out, paramHeader{path: slices.Clone(path), name: name})
		}
		for key, v := range obj {
			switch key {
			case "properties":
				props, ok := v.(map[string]any)
				if !ok {
					continue
				}
				for pname, sub := range props {
					if err := walk(sub, append(slices.Clone(path), pname), reachable); err != nil {
						return err
					}
				}
			case "patternProperties", "$defs", "definitions", "dependentSchemas":
				if m, ok := v.(map[string]any); ok {
					for _, sub := range m {
						if err := walk(sub, nil, false); err != nil {
							return err
						}
					}
				}
			case "additionalProperties", "items", "prefixItems", "contains", "anyOf", "oneOf", "allOf",
				"not", "if", "then", "else", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems":
				if err := walk(v, nil, false); err != nil {
					return err
				}
			}
			// Other keywords (enum, const, default, examples, ...) hold
			// data, not schemas.
		}
		return nil
	}
	if err := walk(root, nil, true); err != nil {
		return nil, err
	}
	return out, nil
}

// isToken: RFC 9110 §5.6.2 token = 1*tchar.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func primitiveType(t any) bool {
	ok := func(s string) bool { return s == "integer" || s == "string" || s == "boolean" }
	switch v := t.(type) {
	case string:
		return ok(v)
	case []any:
		n := 0
		for _, x := range v {
			s, _ := x.(string)
			switch {
			case ok(s):
				n++
			case s == "null":
			default:
				return false
			}
		}
		return n == 1
	}
	return false
}

// paramHeaderValues extracts the annotated values from the arguments: a
// string as it is, an integer in decimal, a boolean as true or false, each
// encoded by headerValue; null or absent values send no header.
func paramHeaderValues(hs []paramHeader, args json.RawMessage) [][2]string {
	if len(hs) == 0 || args == nil {
		return nil
	}
	var root any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if dec.Decode(&root) != nil {
		return nil
	}
	var out [][2]string
	for _, h := range hs {
		v := root
		for _, k := range h.path {
			obj, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = obj[k]
		}
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case bool:
			s = strconv.FormatBool(x)
		case json.Number:
			n, ok := safeInteger(x)
			if !ok {
				continue
			}
			s = strconv.FormatInt(n, 10)
		default:
			continue
		}
		out = append(out, [2]string{h.name, headerValue(s)})
	}
	return out
}

// safeInteger accepts integers within ±(2^53-1), the range the
// specification allows for header values.
func safeInteger(n json.Number) (int64, bool) {
	const limit = 1<<53 - 1
	if i, err := n.Int64(); err == nil {
		return i, i >= -limit && i <= limit
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > limit {
		return 0, false
	}
	return int64(f), true
}
