package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"agent/config"
	"agent/internal/quote"
	"agent/mcp"
	"agent/mcp/oauth"
)

// ErrUsage marks a slash command typed wrong; the message says how.
var ErrUsage = errors.New("usage")

// MCPCommand runs the in-session /mcp command (docs/reference/cli.md,
// "In-session commands") with the words after "/mcp" and returns what to
// show. These are user commands: the model has only the read-only MCPStatus
// tool.
func (c *WorkspaceSession) MCPCommand(ctx context.Context, args []string) (string, error) {
	if len(args) == 0 || (args[0] == "status" && len(args) == 1) {
		lines := c.MCP.Status()
		if len(lines) == 0 {
			return "No MCP servers are defined.\n", nil
		}
		return mcp.StatusText(lines), nil
	}
	verb := args[0]
	switch verb {
	case "approve", "reject", "revoke", "logout":
	case "login":
		if len(args) == 3 && args[2] == "--no-browser" {
			return c.MCPLogin(ctx, args[1], true)
		}
		if len(args) != 2 {
			return "", fmt.Errorf("%w: /mcp login SERVER [--no-browser]", ErrUsage)
		}
		return c.MCPLogin(ctx, args[1], false)
	default:
		return "", fmt.Errorf("%w: /mcp [status] | /mcp approve|reject|revoke|logout SERVER | /mcp login SERVER [--no-browser]", ErrUsage)
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
	case "logout":
		return c.MCPLogout(ctx, name)
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

// signInDef finds a definition that signs in with OAuth, or says why not.
func (c *WorkspaceSession) signInDef(name string) (*config.ServerDef, error) {
	d := c.Settings.Servers[name]
	switch {
	case d == nil:
		return nil, fmt.Errorf("no MCP server named %q (see /mcp)", quote.V(name))
	case d.Untrusted:
		return nil, fmt.Errorf("MCP server %s is defined in %s, and the workspace is untrusted: run 'agent trust --yes'", name, d.File)
	case d.Refused():
		return nil, fmt.Errorf("the definition of MCP server %s in %s has problems (see /mcp)", name, d.File)
	case d.Type != "http" || d.OAuth == nil:
		return nil, fmt.Errorf("MCP server %s does not sign in with OAuth (only remote servers with an oauth object do)", name)
	}
	return d, nil
}

// MCPLogin signs in to an OAuth server from inside the session (/mcp login,
// docs/reference/mcp.md, "Sign-in") and, when the server is approved,
// connects it: the only way a server connects in a running session
// (docs/reference/mcp.md, "What connects and when", rule 2). A client
// secret is never asked here (only `agent mcp login --client-secret` asks
// for one).
func (c *WorkspaceSession) MCPLogin(ctx context.Context, name string, noBrowser bool) (string, error) {
	d, err := c.signInDef(name)
	if err != nil {
		return "", err
	}
	if c.signInUI == nil {
		return "", fmt.Errorf("signing in needs the terminal: run 'agent mcp login %s' in a terminal", name)
	}
	_, err = oauth.SignIn(ctx, oauth.Options{Server: d, Store: c.credStore, UI: c.signInUI, NoBrowser: noBrowser, Net: c.oauthNet})
	if err != nil {
		if errors.Is(err, oauth.ErrBrowserFailed) {
			return "", fmt.Errorf("sign-in to MCP server %s failed (browser-failed): %w; use /mcp login %s --no-browser", name, err, name)
		}
		var te *oauth.TokenError
		if d.OAuth.ClientID != "" && errors.As(err, &te) && (te.Code == "invalid_client" || te.Code == "unauthorized_client") {
			// A pre-registered client that needs its secret
			// (docs/reference/mcp.md, "Sign-in").
			return "", fmt.Errorf("sign-in to MCP server %s failed: %w; a client secret is never typed into a session: run 'agent mcp login %s --client-secret' in a terminal", name, err, name)
		}
		return "", fmt.Errorf("sign-in to MCP server %s failed: %w", name, err)
	}
	if st := c.MCP.Approvals().State(d); st != mcp.Approved {
		return fmt.Sprintf("Signed in to MCP server %s. It is %s: approve it with /mcp approve %s, then run /mcp login %s again to connect it in this session.\n", name, st, name, name), nil
	}
	c.MCP.Disconnect(name) // a new sign-in replaces the connection's token
	if err := c.MCP.Connect(ctx, name); err != nil {
		return "", fmt.Errorf("signed in to MCP server %s, but connecting to it failed: %w", name, err)
	}
	n := 0
	for _, t := range c.MCP.Tools() {
		if t.Server == name {
			n++
		}
	}
	return fmt.Sprintf("Signed in to MCP server %s; %d of its tools are available from your next message.\n", name, n), nil
}

// MCPLogout deletes the server's tokens, asks the server to revoke them,
// and disconnects it (/mcp logout, docs/reference/mcp.md, "Credentials").
func (c *WorkspaceSession) MCPLogout(ctx context.Context, name string) (string, error) {
	d, err := c.signInDef(name)
	if err != nil {
		return "", err
	}
	c.MCP.Disconnect(name)
	res, err := oauth.Logout(ctx, c.credStore, oauth.IdentityOf(d), c.oauthNet)
	if errors.Is(err, oauth.ErrNotSignedIn) {
		return fmt.Sprintf("Not signed in to MCP server %s; nothing to do.\n", name), nil
	}
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("Signed out of MCP server %s; its tokens are deleted.", name)
	switch {
	case res.RevokeErr != nil:
		msg += fmt.Sprintf(" The server did not confirm the revocation: %v.", res.RevokeErr)
	case res.NoRevocation:
		msg += " The authorization server offers no revocation endpoint; the tokens stay valid there until they expire."
	}
	return msg + "\n", nil
}

func (c *WorkspaceSession) statusOf(name string) (mcp.StatusLine, bool) {
	for _, l := range c.MCP.Status() {
		if l.Name == name {
			return l, true
		}
	}
	return mcp.StatusLine{}, false
}
