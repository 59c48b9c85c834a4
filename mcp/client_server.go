package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"agent/internal/elicit"
	"agent/internal/quote"
	"agent/mcp/jsonrpc"
)

// What the client does for the server (docs/reference/mcp.md, "What a
// server may ask"): it offers its roots, lets the user answer elicitations
// in form and URL mode, refuses sampling, takes log messages, and fetches
// the lists the server announces changed, coalesced.

// listKind is a set of the lists a server announces changes of.
type listKind uint8

const (
	listTools listKind = 1 << iota
	listResources
	listPrompts
)

// announces is the set of lists whose changes the server declared it
// announces.
func (sc ServerCapabilities) announces() listKind {
	var k listKind
	if sc.Tools != nil && sc.Tools.ListChanged {
		k |= listTools
	}
	if sc.Resources != nil && sc.Resources.ListChanged {
		k |= listResources
	}
	if sc.Prompts != nil && sc.Prompts.ListChanged {
		k |= listPrompts
	}
	return k
}

// capabilities are what initialize declares (clientCapabilities).
func (c *Client) capabilities() clientCapabilities {
	var caps clientCapabilities
	if c.opts.Roots != nil {
		caps.Roots = &struct{}{}
	}
	if c.opts.Elicit != nil {
		caps.Elicitation = &elicitationCaps{}
	}
	return caps
}

// errSamplingRefused answers sampling/createMessage with the error the
// specification gives for a refused request (client/sampling "Error
// Handling"): the client never makes a model call the user does not see,
// and declares no sampling capability.
var errSamplingRefused = &jsonrpc.Error{Code: -1, Message: "User rejected sampling request"}

// isStateless reports whether the server speaks the stateless revision,
// to which the client declares no capabilities (docs/reference/mcp.md,
// "Revisions"): its requests for them are refused as undeclared ones.
func (c *Client) isStateless() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stateless
}

// listRoots answers roots/list with the roots the client was given.
func (c *Client) listRoots() (any, error) {
	if c.opts.Roots == nil || c.isStateless() {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "this client offers no roots"}
	}
	return map[string]any{"roots": c.opts.Roots}, nil
}

// elicitParams is elicitation/create's params (2025-11-25
// client/elicitation).
type elicitParams struct {
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
	URL             string          `json:"url"`
	ElicitationID   string          `json:"elicitationId"`
}

type elicitAnswer struct {
	Action  elicit.Action  `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// maxURLElicits bounds the accepted URL elicitations remembered for their
// completion notice.
const maxURLElicits = 64

// elicit answers elicitation/create: the request goes to the Elicit
// callback, which asks the user. A form whose schema the client cannot
// render is declined, and the reason goes to OnDiagnostic (the user is
// told). URL mode exists from 2025-11-25 and elicitation from 2025-06-18;
// a server of an earlier revision gets the errors the specification gives
// for a mode the client did not declare.
func (c *Client) elicit(ctx context.Context, params json.RawMessage) (any, error) {
	version := c.ProtocolVersion()
	if c.opts.Elicit == nil || version < Version20250618 || c.isStateless() {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "this client offers no elicitation"}
	}
	var p elicitParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams("elicitation/create: %v", err)
	}
	req := elicit.Request{Message: elicit.CutText(p.Message)}
	switch p.Mode {
	case "", string(elicit.ModeForm):
		req.Mode = elicit.ModeForm
		if len(p.RequestedSchema) == 0 {
			return nil, invalidParams("elicitation/create in form mode needs requestedSchema")
		}
		form, err := elicit.ParseSchema(p.RequestedSchema)
		if err != nil {
			c.diag(fmt.Errorf("mcp: declined a question of the server: %w", err))
			return elicitAnswer{Action: elicit.Decline}, nil
		}
		req.Form = form
	case string(elicit.ModeURL):
		if version < Version20251125 {
			return nil, invalidParams("elicitation/create: URL mode is not part of revision %s", version)
		}
		u, err := url.Parse(p.URL)
		if err != nil || u.Scheme == "" || u.Host == "" || p.ElicitationID == "" {
			return nil, invalidParams("elicitation/create in URL mode needs an absolute url and an elicitationId")
		}
		req.Mode, req.URL, req.ID = elicit.ModeURL, p.URL, p.ElicitationID
	default:
		return nil, invalidParams("elicitation/create: unknown mode %q", quote.V(p.Mode))
	}
	res, err := c.opts.Elicit(ctx, req)
	switch {
	case ctx.Err() != nil:
		return nil, context.Cause(ctx)
	case err != nil:
		c.diag(fmt.Errorf("mcp: a question of the server was not answered: %w", err))
		return elicitAnswer{Action: elicit.Cancel}, nil
	}
	switch res.Action {
	case elicit.Accept:
		if req.Mode == elicit.ModeURL {
			c.mu.Lock()
			if len(c.urlElicits) < maxURLElicits {
				c.urlElicits[req.ID] = struct{}{}
			}
			c.mu.Unlock()
			return elicitAnswer{Action: elicit.Accept}, nil
		}
		content := res.Content
		if content == nil {
			content = map[string]any{}
		}
		if err := req.Form.Validate(content); err != nil {
			c.diag(fmt.Errorf("mcp: an answer that does not fit the server's form was not sent: %w", err))
			return elicitAnswer{Action: elicit.Decline}, nil
		}
		return elicitAnswer{Action: elicit.Accept, Content: content}, nil
	case elicit.Decline, elicit.Cancel:
		return elicitAnswer{Action: res.Action}, nil
	}
	return elicitAnswer{Action: elicit.Cancel}, nil
}

// elicitationComplete takes notifications/elicitation/complete: known ids
// once, unknown ones ignored (the specification's MUST).
func (c *Client) elicitationComplete(params json.RawMessage) {
	var p struct {
		ElicitationID string `json:"elicitationId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	c.mu.Lock()
	_, known := c.urlElicits[p.ElicitationID]
	delete(c.urlElicits, p.ElicitationID)
	c.mu.Unlock()
	if known && c.opts.OnElicitationComplete != nil {
		c.opts.OnElicitationComplete(p.ElicitationID)
	}
}

// logMessage passes notifications/message on.
func (c *Client) logMessage(params json.RawMessage) {
	if c.opts.OnLog == nil {
		return
	}
	var p struct {
		Level  string          `json:"level"`
		Logger string          `json:"logger"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		c.diag(fmt.Errorf("mcp: malformed notifications/message: %v", err))
		return
	}
	c.opts.OnLog(LogMessage{Level: p.Level, Logger: p.Logger, Data: p.Data})
}

// listChanged records that the server announced changes of kinds. The
// first announcement after a refresh opens the coalescing window; the
// others only add to what it will fetch and push its end while they keep
// coming.
func (c *Client) listChanged(kinds listKind) {
	c.mu.Lock()
	open := c.dirty == 0
	c.dirty |= kinds
	c.lastNote = time.Now()
	if open {
		c.windowOpen = c.lastNote
	}
	if kinds&listTools != 0 {
		c.toolsValid = false
	}
	c.mu.Unlock()
	if open {
		select {
		case c.refresh <- struct{}{}:
		default:
		}
	}
}

// refresher fetches the lists announced changed, one after the other, at
// most once per ListChangedDelay (d): a refresh waits until the
// notifications pause for d/10, or for 2d after the first of them, and
// never starts sooner than d after the previous one. A storm of
// notifications within a second is fetched once, after it; a server that
// never stops costs one refresh per 2d.
func (c *Client) refresher() {
	defer c.wg.Done()
	d := c.opts.ListChangedDelay
	if d <= 0 {
		d = time.Second
	}
	var last time.Time // the previous refresh's start
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.refresh:
		}
		for {
			c.mu.Lock()
			due := c.lastNote.Add(d / 10)
			if limit := c.windowOpen.Add(2 * d); limit.Before(due) {
				due = limit
			}
			c.mu.Unlock()
			if next := last.Add(d); !last.IsZero() && due.Before(next) {
				due = next
			}
			wait := time.Until(due)
			if wait <= 0 {
				break
			}
			if !sleepCtx(c.ctx, wait) {
				return
			}
		}
		last = time.Now()
		c.mu.Lock()
		kinds := c.dirty
		c.dirty = 0
		caps := c.server.Capabilities
		c.mu.Unlock()
		c.refreshLists(kinds, caps)
	}
}

func (c *Client) refreshLists(kinds listKind, caps ServerCapabilities) {
	failed := func(what string, err error) {
		if c.ctx.Err() == nil {
			c.diag(fmt.Errorf("mcp: refreshing the %s: %w", what, err))
		}
	}
	if kinds&listTools != 0 {
		if tools, err := c.ListTools(c.ctx); err != nil {
			failed("tool list", err)
		} else if c.opts.OnToolsChanged != nil {
			c.opts.OnToolsChanged(tools)
		}
	}
	if kinds&listResources != 0 && caps.Resources != nil && c.opts.OnResourcesChanged != nil {
		res, err := c.ListResources(c.ctx)
		var tmpl []ResourceTemplate
		if err == nil {
			tmpl, err = c.ListResourceTemplates(c.ctx)
		}
		if err != nil {
			failed("resource list", err)
		} else {
			c.opts.OnResourcesChanged(res, tmpl)
		}
	}
	if kinds&listPrompts != 0 && caps.Prompts != nil && c.opts.OnPromptsChanged != nil {
		if prompts, err := c.ListPrompts(c.ctx); err != nil {
			failed("prompt list", err)
		} else {
			c.opts.OnPromptsChanged(prompts)
		}
	}
}
