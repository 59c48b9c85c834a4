package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"agent/config"
	"agent/internal/netguard"
	"agent/mcp"
	"agent/mcp/oauth"
	"agent/tui/screen"
)

// loadSettings resolves the workspace, checks trust and loads the settings
// files. A trust store that cannot be read leaves the workspace untrusted
// and becomes a diagnostic.
func (e *env) loadSettings() (*config.Settings, string, bool, error) {
	ws, err := e.workspace()
	if err != nil {
		return nil, "", false, err
	}
	trusted, terr := config.IsTrusted(e.home, ws)
	s := config.Load(config.Options{Home: e.home, Workspace: ws, Trusted: trusted && terr == nil, Lookup: os.LookupEnv})
	if terr != nil {
		s.Diagnostics = append([]config.Diagnostic{{Msg: fmt.Sprintf("%v; the workspace is treated as untrusted", terr)}}, s.Diagnostics...)
	}
	return s, ws, trusted && terr == nil, nil
}

func mcpListCommand() *command {
	return &command{
		path:    "mcp list",
		summary: "print the startup diagnostics, then one status line per MCP server",
		help: `Output: the startup diagnostics, one per line, prefixed "diagnostic: ", then one
line per server, sorted by name, with tab-separated fields
NAME STATE SCOPE TYPE REASON [SIGN-IN]. No header, environment or secret value is
ever printed.`,
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			return func(ctx context.Context, e *env, args []string) error {
				if err := noOperands("mcp list", args); err != nil {
					return err
				}
				s, ws, _, err := e.loadSettings()
				if err != nil {
					return err
				}
				var b strings.Builder
				for _, d := range s.Diagnostics {
					b.WriteString("diagnostic: " + sanitizeLine(d.String()) + "\n")
				}
				lines := mcp.Status(s, mcp.StatusOptions{
					Approvals:   mcp.NewApprovals(ws, nil),
					Credentials: oauth.NewStore(config.UserDir(e.home)),
					Policy:      netguard.Policy{Allowed: s.AllowedNetworks},
					Now:         time.Now(),
				})
				for _, l := range lines {
					b.WriteString(l.String() + "\n")
				}
				_, err = fmt.Fprint(e.out, b.String())
				return err
			}
		},
	}
}

// sanitizeLine replaces the runes the terminal UI never shows (C0 controls
// but tab, DEL, C1, the bidi embeddings, overrides and isolates;
// screen.UnsafeRune) with '?' in text that came from outside, so that a
// diagnostic line cannot drive the terminal or reorder what it shows
// (CONTRIBUTING.md, "Outside input").
func sanitizeLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\t' && screen.UnsafeRune(r) {
			return '?'
		}
		return r
	}, s)
}

// sanitizeText is sanitizeLine for text of several lines (an error's
// message): line feeds stay.
func sanitizeText(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\t' && r != '\n' && screen.UnsafeRune(r) {
			return '?'
		}
		return r
	}, s)
}
