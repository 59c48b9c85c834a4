package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"agent/mcp"
)

// ErrUsage marks a slash command typed wrong; the message says how.
var ErrUsage = errors.New("usage")

// MCPCommand runs the in-session /mcp command (seed-mcp-events.md §4.1)
// with the words after "/mcp" and returns what to show. These are user
// commands: the model has only the read-only MCPStatus tool.
func (c *CLI) MCPCommand(ctx context.Context, args []string) (string, error) {
	if len(args) == 0 || (args[0] == "status" && len(args) == 1) {
		lines := c.MCP.Status()
		if len(lines) == 0 {
			return "No MCP servers are defined.\n", nil
		}
		return mcp.StatusText(lines), nil
	}
	verb := args[0]
	switch verb {
	case "approve", "reject", "revoke":
	default:
		return "", fmt.Errorf("%w: /mcp [status] | /mcp approve|reject|revoke SERVER", ErrUsage)
	}
	if len(args) != 2 {
		return "", fmt.Errorf("%w: /mcp %s SERVER", ErrUsage, verb)
	}
	name := args[1]
	switch verb {
	case "approve":
		if err := c.MCP.Approve(name); err != nil {
			return "", err
		}
		msg := fmt.Sprintf("Approved MCP server %s for this session.", name)
		if l, ok := c.statusOf(name); ok {
			switch {
			case l.Type == "http" && l.Reason == "":
				msg += fmt.Sprintf(" Sign in with /mcp login %s to connect it.", name)
			case l.Reason != "" && !strings.HasPrefix(l.Reason, "connected"):
				msg += fmt.Sprintf(" It cannot connect here: %s.", l.Reason)
			}
		}
		return msg + "\n", nil
	case "reject":
		if err := c.MCP.Reject(name); err != nil {
			return "", err
		}
		return fmt.Sprintf("Rejected MCP server %s.\n", name), nil
	default:
		if err := c.MCP.Revoke(name); err != nil {
			return "", err
		}
		return fmt.Sprintf("Revoked the approval of MCP server %s; its tools are withdrawn.\n", name), nil
	}
}

func (c *CLI) statusOf(name string) (mcp.StatusLine, bool) {
	for _, l := range c.MCP.Status() {
		if l.Name == name {
			return l, true
		}
	}
	return mcp.StatusLine{}, false
}
