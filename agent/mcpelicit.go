package agent

import (
	"context"
	"fmt"
	"strings"

	"agent/internal/elicit"
	"agent/mcp"
)

// Questions MCP servers put to the user (docs/reference/mcp.md,
// "Elicitation"), and their log messages.

// Elicitor asks the user an MCP server's question: a form (field by field,
// with accept, decline and cancel) or a URL to open (shown in full, opened
// only when the user agrees). The terminal UI is one; a session without
// one is headless and declines every question.
type Elicitor interface {
	Elicit(ctx context.Context, req elicit.Request) (elicit.Result, error)
}

// elicitation bridges the manager's questions to the session's Elicitor,
// one question at a time (a server that asks several at once waits its
// turn), and says in a notice what was declined for want of a user.
type elicitation struct {
	asker  Elicitor
	notice func(string)
	one    chan struct{} // holds the question being asked
}

func (e *elicitation) elicit(ctx context.Context, req elicit.Request) (elicit.Result, error) {
	if e.asker == nil {
		what := "a question"
		if req.Mode == elicit.ModeURL {
			what = "to open " + req.URL
		}
		e.notice(fmt.Sprintf("MCP server %s asked %s; declined: nobody can answer here.", req.Server, what))
		return elicit.Result{Action: elicit.Decline}, nil
	}
	select {
	case e.one <- struct{}{}:
	case <-ctx.Done():
		return elicit.Result{}, ctx.Err()
	}
	defer func() { <-e.one }()
	return e.asker.Elicit(ctx, req)
}

// logMCP writes a server's log message to the debug log.
func (c *WorkspaceSession) logMCP(server string, m mcp.LogMessage) {
	data := strings.TrimSpace(string(m.Data))
	if len(data) > 4096 {
		data = data[:4096] + "…"
	}
	logger := m.Logger
	if logger != "" {
		logger = " " + logger
	}
	c.debug.Logf("mcp:"+server, "%s%s: %s", m.Level, logger, data)
}
