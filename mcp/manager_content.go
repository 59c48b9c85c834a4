package mcp

import (
	"context"
	"fmt"
	"sort"

	"agent/internal/quote"
)

// The resources and prompts of the connected servers, as the session uses
// them (docs/reference/mcp.md, "Resources" and "Prompts"): listed from the
// manager's copies (refreshed after list_changed), read and fetched
// through the server's connection.

// ServerResource is a resource of a connected server.
type ServerResource struct {
	Server string
	Resource
}

// ServerResourceTemplate is a resource template of a connected server.
type ServerResourceTemplate struct {
	Server string
	ResourceTemplate
}

// ServerPrompt is a prompt of a connected server under its command name,
// mcp__<server>__<prompt> (named like tools, docs/reference/mcp.md,
// "Prompts").
type ServerPrompt struct {
	Command string // without the leading slash
	Server  string
	Prompt  Prompt
}

// PromptCommandPrefix starts the command name of every server prompt.
const PromptCommandPrefix = "mcp__"

// namePromptsLocked names the prompts of every connected server; prompts
// whose names collide are left out with a diagnostic, as tools are.
func (m *Manager) namePromptsLocked() {
	named, byRef := nameAllLocked(m, func(sc *managedConn) []Prompt { return sc.prompts }, func(p Prompt) string { return p.Name })
	m.prompts = m.prompts[:0]
	for _, n := range named {
		m.prompts = append(m.prompts, ServerPrompt{Command: PromptCommandPrefix + n.Name, Server: n.Server, Prompt: byRef[n.ToolRef]})
	}
	sort.Slice(m.prompts, func(i, j int) bool { return m.prompts[i].Command < m.prompts[j].Command })
}

// Prompts lists the connected servers' prompts by command name.
func (m *Manager) Prompts() []ServerPrompt {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]ServerPrompt(nil), m.prompts...)
}

// Resources lists the connected servers' resources and templates, by
// server name and then as each server listed them.
func (m *Manager) Resources() ([]ServerResource, []ServerResourceTemplate) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var res []ServerResource
	var tmpl []ServerResourceTemplate
	for _, name := range m.connectedLocked() {
		sc := m.conns[name]
		for _, r := range sc.resources {
			res = append(res, ServerResource{Server: name, Resource: r})
		}
		for _, t := range sc.templates {
			tmpl = append(tmpl, ServerResourceTemplate{Server: name, ResourceTemplate: t})
		}
	}
	return res, tmpl
}

// ResourceServers names the connected servers that offer resources.
func (m *Manager) ResourceServers() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, name := range m.connectedLocked() {
		if m.conns[name].client.ServerInfo().Capabilities.Resources != nil {
			out = append(out, name)
		}
	}
	return out
}

func (m *Manager) connectedLocked() []string {
	names := make([]string, 0, len(m.conns))
	for name := range m.conns {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// client returns the connection of a connected server.
func (m *Manager) client(server string) (*Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sc := m.conns[server]
	if sc == nil {
		return nil, fmt.Errorf("%w: MCP server %s is not connected (see /mcp)", ErrCannotConnect, quote.Q(server))
	}
	return sc.client, nil
}

// ReadResource reads a resource of a connected server.
func (m *Manager) ReadResource(ctx context.Context, server, uri string) (*ReadResourceResult, error) {
	c, err := m.client(server)
	if err != nil {
		return nil, err
	}
	if c.ServerInfo().Capabilities.Resources == nil {
		return nil, fmt.Errorf("MCP server %s offers no resources", server)
	}
	r, err := c.ReadResource(ctx, uri)
	return r, mask(m.opts.Settings.Servers[server], err)
}

// GetPrompt fetches a prompt by its command name (without the slash).
func (m *Manager) GetPrompt(ctx context.Context, command string, args map[string]string) (*GetPromptResult, error) {
	m.mu.Lock()
	var sp *ServerPrompt
	for i := range m.prompts {
		if m.prompts[i].Command == command {
			sp = &m.prompts[i]
			break
		}
	}
	var server, name string
	if sp != nil {
		server, name = sp.Server, sp.Prompt.Name
	}
	m.mu.Unlock()
	if sp == nil {
		return nil, fmt.Errorf("no MCP prompt /%s (the server is gone, or its prompts changed)", command)
	}
	c, err := m.client(server)
	if err != nil {
		return nil, err
	}
	r, err := c.GetPrompt(ctx, name, args)
	return r, mask(m.opts.Settings.Servers[server], err)
}
