package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"agent/internal/quote"
	"agent/mcp/jsonrpc"
)

// The lists a server offers besides its tools, and what is read from them
// (docs/reference/mcp.md, "Resources" and "Prompts"): resources/list,
// resources/templates/list, resources/read, prompts/list and prompts/get.
// Every list is fetched whole, page by page, within the same bounds.

// Bounds on pagination against a server that never stops.
const (
	maxListPages = 1000
	maxListItems = 10000
)

// listAll fetches every page of a list method (server/utilities/
// pagination: follow nextCursor until it is absent) and gives each item
// of the result's field to each, in order. A page without the field, a
// repeated cursor, and more than maxListPages pages or maxListItems items
// are invalid results.
func (c *Client) listAll(ctx context.Context, method, field string, each func(json.RawMessage)) error {
	seenCursor := map[string]bool{}
	cursor, items := "", 0
	for page := 0; ; page++ {
		if page == maxListPages {
			return fmt.Errorf("%w: %s: more than %d pages", ErrInvalidResult, method, maxListPages)
		}
		raw, err := c.call(ctx, method, &listParams{Cursor: cursor}, callOpts{idempotent: true})
		if err != nil {
			return fmt.Errorf("mcp: %s: %w", method, err)
		}
		var res map[string]json.RawMessage
		if err := json.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInvalidResult, method, err)
		}
		var meta struct {
			ResultType string  `json:"resultType"`
			NextCursor *string `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &meta); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInvalidResult, method, err)
		}
		if err := checkResultType(meta.ResultType); err != nil {
			return fmt.Errorf("mcp: %s: %w", method, err)
		}
		var list []json.RawMessage
		if f, ok := res[field]; !ok || json.Unmarshal(f, &list) != nil || list == nil {
			return fmt.Errorf("%w: %s result without %s", ErrInvalidResult, method, field)
		}
		items += len(list)
		if items > maxListItems {
			return fmt.Errorf("%w: %s: more than %d %s", ErrInvalidResult, method, maxListItems, field)
		}
		for _, it := range list {
			each(it)
		}
		if meta.NextCursor == nil || *meta.NextCursor == "" {
			return nil
		}
		cursor = *meta.NextCursor
		if seenCursor[cursor] {
			return fmt.Errorf("%w: %s repeats the cursor %q", ErrInvalidResult, method, quote.V(cursor))
		}
		seenCursor[cursor] = true
	}
}

// decodeItem decodes one list item, leaving out (with a diagnostic) one
// that does not decode or lacks its identifying field.
func decodeItem[T any](c *Client, raw json.RawMessage, what string, key func(*T) string) (T, bool) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		c.diag(fmt.Errorf("mcp: a %s was left out: %v", what, err))
		return v, false
	}
	if key(&v) == "" {
		c.diag(fmt.Errorf("mcp: a %s without its identifier was left out", what))
		return v, false
	}
	return v, true
}

// ListResources fetches resources/list. Entries without a URI are left
// out with a diagnostic.
func (c *Client) ListResources(ctx context.Context) ([]Resource, error) {
	var out []Resource
	err := c.listAll(ctx, "resources/list", "resources", func(raw json.RawMessage) {
		if r, ok := decodeItem(c, raw, "resource", func(r *Resource) string { return r.URI }); ok {
			out = append(out, r)
		}
	})
	if err != nil {
		return nil, err // no half list
	}
	return out, nil
}

// ListResourceTemplates fetches resources/templates/list. A server that
// offers resources but does not know the method has no templates.
func (c *Client) ListResourceTemplates(ctx context.Context) ([]ResourceTemplate, error) {
	var out []ResourceTemplate
	err := c.listAll(ctx, "resources/templates/list", "resourceTemplates", func(raw json.RawMessage) {
		if t, ok := decodeItem(c, raw, "resource template", func(t *ResourceTemplate) string { return t.URITemplate }); ok {
			out = append(out, t)
		}
	})
	var pe *ProtocolError
	if errors.As(err, &pe) && pe.Code == jsonrpc.CodeMethodNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err // no half list
	}
	return out, nil
}

// ReadResource reads one resource (resources/read). The answer is bounded
// by the transport's message size (16 MiB by default): a larger one fails
// this call with jsonrpc.ErrTooLarge and leaves the connection up.
func (c *Client) ReadResource(ctx context.Context, uri string) (*ReadResourceResult, error) {
	raw, err := c.call(ctx, "resources/read", &uriParams{URI: uri}, callOpts{idempotent: true})
	if err != nil {
		return nil, fmt.Errorf("mcp: resources/read %s: %w", quote.Cut(uri), err)
	}
	var res ReadResourceResult
	if err := json.Unmarshal(raw, &res); err != nil || res.Contents == nil {
		return nil, fmt.Errorf("%w: resources/read %s: a result without contents", ErrInvalidResult, quote.Cut(uri))
	}
	for _, rc := range res.Contents {
		if (rc.Text == nil) == (rc.Blob == nil) {
			return nil, fmt.Errorf("%w: resources/read %s: an item needs exactly one of text and blob", ErrInvalidResult, quote.Cut(uri))
		}
	}
	return &res, nil
}

// ListPrompts fetches prompts/list. Entries without a name are left out
// with a diagnostic.
func (c *Client) ListPrompts(ctx context.Context) ([]Prompt, error) {
	var out []Prompt
	err := c.listAll(ctx, "prompts/list", "prompts", func(raw json.RawMessage) {
		if p, ok := decodeItem(c, raw, "prompt", func(p *Prompt) string { return p.Name }); ok {
			out = append(out, p)
		}
	})
	if err != nil {
		return nil, err // no half list
	}
	return out, nil
}

// GetPrompt fetches one prompt with its arguments (prompts/get).
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*GetPromptResult, error) {
	raw, err := c.call(ctx, "prompts/get", &getPromptParams{Name: name, Arguments: args}, callOpts{idempotent: true})
	if err != nil {
		return nil, fmt.Errorf("mcp: prompts/get %s: %w", quote.Cut(name), err)
	}
	var res GetPromptResult
	if err := json.Unmarshal(raw, &res); err != nil || res.Messages == nil {
		return nil, fmt.Errorf("%w: prompts/get %s: a result without messages", ErrInvalidResult, quote.Cut(name))
	}
	if i := slices.IndexFunc(res.Messages, func(m PromptMessage) bool { return m.Role != "user" && m.Role != "assistant" }); i >= 0 {
		return nil, fmt.Errorf("%w: prompts/get %s: a message with role %q", ErrInvalidResult, quote.Cut(name), quote.V(res.Messages[i].Role))
	}
	return &res, nil
}
