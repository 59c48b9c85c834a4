package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// maxSchemaDepth bounds the nesting StrictSchema walks: tool schemas come
// from MCP servers, which are outside input.
const maxSchemaDepth = 64

// StrictSchema rewrites a tool's JSON Schema for strict mode (the
// strictTools option; docs/providers.md, "responses
// (`providers/responses`)"): strict function calling accepts only object
// schemas in which every property is listed in "required" and no other
// property is allowed. So every object schema, at any depth (properties,
// items, prefixItems, anyOf/oneOf/allOf, $defs/definitions), gets all its
// properties required and "additionalProperties": false; a property that
// was optional becomes nullable, so that the model can still leave it out
// by sending null. An empty schema is the empty object. Keywords strict
// mode does not know are kept: the API names them in its error.
func StrictSchema(schema json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return json.RawMessage(`{"additionalProperties":false,"properties":{},"required":[],"type":"object"}`), nil
	}
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber() // keep numbers (bounds, enum values) exactly as written
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("strict schema: %w", err)
	}
	if dec.More() {
		return nil, errors.New("strict schema: data after the schema")
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("strict schema: the schema is not a JSON object")
	}
	if err := strictify(root, 0); err != nil {
		return nil, err
	}
	return json.Marshal(root)
}

func strictify(s map[string]any, depth int) error {
	if depth > maxSchemaDepth {
		return errors.New("strict schema: nested too deeply")
	}
	walk := func(v any) error {
		if m, ok := v.(map[string]any); ok {
			return strictify(m, depth+1)
		}
		return nil
	}
	for _, k := range []string{"items", "additionalItems", "not"} {
		if err := walk(s[k]); err != nil {
			return err
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
		if list, ok := s[k].([]any); ok {
			for _, e := range list {
				if err := walk(e); err != nil {
					return err
				}
			}
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		if defs, ok := s[k].(map[string]any); ok {
			for _, e := range defs {
				if err := walk(e); err != nil {
					return err
				}
			}
		}
	}
	props, hasProps := s["properties"].(map[string]any)
	if !hasProps && !isType(s, "object") {
		return nil
	}
	if props == nil {
		props = map[string]any{}
		s["properties"] = props
	}
	required := map[string]bool{}
	if list, ok := s["required"].([]any); ok {
		for _, r := range list {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for name, p := range props {
		names = append(names, name)
		ps, ok := p.(map[string]any)
		if !ok {
			// true or {} means anything; strict mode needs a type, so the
			// property stays as written and the API reports it.
			continue
		}
		if err := strictify(ps, depth+1); err != nil {
			return err
		}
		if !required[name] {
			props[name] = nullable(ps)
		}
	}
	slices.Sort(names)
	req := make([]any, len(names))
	for i, n := range names {
		req[i] = n
	}
	s["required"] = req
	s["additionalProperties"] = false
	return nil
}

// isType reports whether schema s names type t, alone or in a list.
func isType(s map[string]any, t string) bool {
	switch v := s["type"].(type) {
	case string:
		return v == t
	case []any:
		for _, e := range v {
			if e == t {
				return true
			}
		}
	}
	return false
}

// nullable makes a property schema accept null as well: "null" joins its
// type (and its enum, which would otherwise refuse it); a schema without a
// type becomes anyOf the schema and null.
func nullable(s map[string]any) map[string]any {
	switch v := s["type"].(type) {
	case string:
		if v != "null" {
			s["type"] = []any{v, "null"}
		}
	case []any:
		if !slices.Contains(v, any("null")) {
			s["type"] = append(v, "null")
		}
	default:
		if _, isRef := s["$ref"]; isRef || len(s) > 0 {
			return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
		}
		return s
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, nil) {
		s["enum"] = append(enum, nil)
	}
	return s
}
