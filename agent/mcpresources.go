package agent

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"agent/agent/tools"
	"agent/internal/quote"
	"agent/mcp"
	"agent/mcp/jsonrpc"
	"agent/providers"
)

// MCP resources in a session (docs/reference/mcp.md, "Resources"): two
// read-only tools that list and read the resources of the connected
// servers, and @server:uri mentions in a prompt, whose content is attached
// to it when its turn starts.

// Names of the resource tools, as the compatible ecosystem names them.
const (
	ListMCPResourcesToolName = "ListMcpResourcesTool"
	ReadMCPResourceToolName  = "ReadMcpResourceTool"
)

// Bounds on what resources bring into the conversation.
const (
	maxResourceList = 500              // entries the list tool shows
	maxMentions     = 10               // @mentions read per prompt
	resourceTimeout = 30 * time.Second // one read
)

type listResourcesTool struct{ m *mcp.Manager }

func (t listResourcesTool) Spec() tools.Spec {
	return tools.Spec{Name: ListMCPResourcesToolName, Risk: tools.RiskInspect,
		Description: "Lists the resources (files, records, documents) that the connected MCP servers offer, and their URI templates: server, URI, name, MIME type and description. Read one with " + ReadMCPResourceToolName + ".",
		Schema:      json.RawMessage(`{"type":"object","properties":{"server":{"type":"string","description":"Only this server's resources."}},"additionalProperties":false}`)}
}

func (t listResourcesTool) Target(json.RawMessage) (tools.Target, error) {
	return tools.Target{Kind: tools.TargetNone}, nil
}

func (t listResourcesTool) Run(_ context.Context, args json.RawMessage) tools.Result {
	var a struct {
		Server string `json:"server"`
	}
	json.Unmarshal(args, &a) //nolint:errcheck // validated against the schema
	res, tmpl := t.m.Resources()
	servers := t.m.ResourceServers()
	if a.Server != "" && !slices.Contains(servers, a.Server) {
		return tools.Result{IsError: true, Content: fmt.Sprintf("No connected MCP server %q offers resources. Servers with resources: %s.", a.Server, orNone(servers))}
	}
	var b strings.Builder
	n := 0
	for _, r := range res {
		if a.Server != "" && r.Server != a.Server {
			continue
		}
		if n++; n > maxResourceList {
			continue
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\n", r.Server, r.URI, oneLine(r.Name, 200), cmp.Or(r.MimeType, "-"), oneLine(cmp.Or(r.Title, r.Description), 200))
	}
	if n > maxResourceList {
		fmt.Fprintf(&b, "[%d more resources not shown]\n", n-maxResourceList)
	}
	var tb strings.Builder
	for _, tl := range tmpl {
		if a.Server == "" || tl.Server == a.Server {
			fmt.Fprintf(&tb, "%s\t%s\t%s\t%s\t%s\n", tl.Server, tl.URITemplate, oneLine(tl.Name, 200), cmp.Or(tl.MimeType, "-"), oneLine(cmp.Or(tl.Title, tl.Description), 200))
		}
	}
	if n == 0 && tb.Len() == 0 {
		return tools.Result{Content: fmt.Sprintf("No resources. Servers with resources: %s.", orNone(servers))}
	}
	out := "SERVER\tURI\tNAME\tMIME\tDESCRIPTION\n" + b.String()
	if tb.Len() > 0 {
		out += "\nURI templates (fill in the {parameters} and read the URI):\nSERVER\tURI TEMPLATE\tNAME\tMIME\tDESCRIPTION\n" + tb.String()
	}
	return tools.Result{Content: out}
}

type readResourceTool struct{ m *mcp.Manager }

func (t readResourceTool) Spec() tools.Spec {
	return tools.Spec{Name: ReadMCPResourceToolName, Risk: tools.RiskInspect,
		Description: "Reads one resource of a connected MCP server by its URI (see " + ListMCPResourcesToolName + "). Text is returned (at most 100 KiB); binary content is described, not shown.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"server":{"type":"string","description":"The server's name."},"uri":{"type":"string","description":"The resource's URI."}},"required":["server","uri"],"additionalProperties":false}`)}
}

func (t readResourceTool) Target(json.RawMessage) (tools.Target, error) {
	return tools.Target{Kind: tools.TargetNone}, nil
}

func (t readResourceTool) Run(ctx context.Context, args json.RawMessage) tools.Result {
	var a struct {
		Server string `json:"server"`
		URI    string `json:"uri"`
	}
	json.Unmarshal(args, &a) //nolint:errcheck // validated against the schema
	text, err := readResource(ctx, t.m, a.Server, a.URI, maxMCPResult)
	if err != nil {
		return tools.Result{IsError: true, Content: err.Error()}
	}
	return tools.Result{Content: text}
}

// readResource reads a resource and renders it for the model: each text
// item as it is (the whole cut at limit bytes, said), each blob described.
func readResource(ctx context.Context, m *mcp.Manager, server, uri string, limit int) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, resourceTimeout)
	defer cancel()
	r, err := m.ReadResource(ctx, server, uri)
	switch {
	case errors.Is(err, jsonrpc.ErrTooLarge):
		return "", fmt.Errorf("reading %s from MCP server %s: the resource is larger than an MCP message may be here (%d MiB); it was not read", uri, server, jsonrpc.DefaultMaxMessage>>20)
	case errors.Is(err, context.DeadlineExceeded):
		return "", fmt.Errorf("reading %s from MCP server %s: no answer within %s", uri, server, resourceTimeout)
	case err != nil:
		return "", fmt.Errorf("reading %s from MCP server %s: %w", uri, server, err)
	}
	var b strings.Builder
	total := 0
	for i, c := range r.Contents {
		if len(r.Contents) > 1 || c.URI != uri {
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "[%s %s]\n", c.URI, cmp.Or(c.MimeType, "-"))
		}
		if c.Blob != nil {
			n := base64.StdEncoding.DecodedLen(len(*c.Blob))
			fmt.Fprintf(&b, "[binary content, %s, about %d bytes]\n", cmp.Or(c.MimeType, "-"), n)
			continue
		}
		total += len(*c.Text)
		b.WriteString(*c.Text)
	}
	out := b.String()
	if len(out) > limit {
		out = quote.PrefixN(out, limit) + fmt.Sprintf("\n[the resource has %d bytes of text; the first %d are shown]", total, limit)
	}
	return out, nil
}

// mentions finds the @server:uri mentions of a prompt that name a
// connected server offering resources, in order, each once. Trailing
// sentence punctuation is not part of a URI unless the server lists the
// URI with it.
func mentions(prompt string, servers []string, listed func(server, uri string) bool) [][2]string {
	var out [][2]string
	for _, word := range strings.Fields(prompt) {
		if !strings.HasPrefix(word, "@") {
			continue
		}
		server, uri, ok := strings.Cut(word[1:], ":")
		if !ok || uri == "" || !slices.Contains(servers, server) {
			continue
		}
		if !listed(server, uri) {
			if trimmed := strings.TrimRight(uri, ".,;!?)]}'\""); trimmed != "" {
				uri = trimmed
			}
		}
		m := [2]string{server, uri}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// expandMentions reads the resources a prompt mentions and returns them as
// parts of the prompt's message: each text in an <mcp-resource> element,
// cut at 100 KiB. What could not be read is said in a notice and a part
// (the model knows the mention was not attached).
func (c *WorkspaceSession) expandMentions(ctx context.Context, prompt string) []providers.Part {
	if !strings.Contains(prompt, "@") {
		return nil
	}
	servers := c.MCP.ResourceServers()
	if len(servers) == 0 {
		return nil
	}
	res, _ := c.MCP.Resources()
	listed := func(server, uri string) bool {
		return slices.ContainsFunc(res, func(r mcp.ServerResource) bool { return r.Server == server && r.URI == uri })
	}
	found := mentions(prompt, servers, listed)
	var parts []providers.Part
	for i, m := range found {
		if i == maxMentions {
			c.Session.emit(Event{Kind: EventNotice, Text: fmt.Sprintf("Only the first %d MCP resources a prompt mentions are attached.", maxMentions)})
			break
		}
		text, err := readResource(ctx, c.MCP, m[0], m[1], maxMCPResult)
		if err != nil {
			c.Session.emit(Event{Kind: EventNotice, Text: "Not attached: " + err.Error()})
			parts = append(parts, providers.Text{Text: fmt.Sprintf("[@%s:%s was not attached: %v]", m[0], m[1], err)})
			continue
		}
		c.Session.emit(Event{Kind: EventNotice, Text: fmt.Sprintf("Attached @%s:%s (%d bytes).", m[0], m[1], len(text))})
		parts = append(parts, providers.Text{Text: fmt.Sprintf("<mcp-resource server=%q uri=%q>\n%s\n</mcp-resource>", m[0], m[1], text)})
	}
	return parts
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
