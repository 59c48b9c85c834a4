package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"agent/config"
	"agent/tui/term"
)

// workspace resolves the current directory to the real path the trust
// store and fingerprints are keyed by.
func (e *env) workspace() (string, error) {
	ws, err := config.RealPath(e.cwd)
	if err != nil {
		return "", fmt.Errorf("resolving the workspace %s: %w", e.cwd, err)
	}
	return ws, nil
}

func trustCommand() *command {
	return &command{
		path:     "trust",
		synopsis: "[--yes]",
		summary:  "mark the current workspace trusted",
		help: `Project and local settings (.agent/ and .compat/ in the workspace) load only in a
trusted workspace, and print mode, background sessions and 'agent mcp serve' refuse
to start in one that is not. Without --yes the question is asked on the terminal.`,
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			var yes bool
			f.boolVar(&yes, "yes", "y", "trust without asking")
			return func(ctx context.Context, e *env, args []string) error {
				if err := noOperands("trust", args); err != nil {
					return err
				}
				ws, err := e.workspace()
				if err != nil {
					return err
				}
				if !yes {
					in, ok := e.in.(*os.File)
					if !ok || !term.IsTerminal(in) {
						return fmt.Errorf("not on a terminal, so nobody can confirm: run 'agent trust --yes' to trust %s", ws)
					}
					fmt.Fprintf(e.err, "Trust the workspace %s?\nIts settings can define MCP servers, permission rules and providers. [y/N] ", ws)
					if !confirm(e.in) {
						fmt.Fprintln(e.err, "Not trusted.")
						return &exitError{code: 1}
					}
				}
				already, err := config.Trust(e.home, ws, time.Now())
				if err != nil {
					return err
				}
				if already {
					fmt.Fprintf(e.out, "Workspace %s was already trusted.\n", ws)
				} else {
					fmt.Fprintf(e.out, "Trusted workspace %s.\n", ws)
				}
				return nil
			}
		},
	}
}

// confirm reads one answer line; only y or yes (any case) confirms.
func confirm(r io.Reader) bool {
	line, _ := bufio.NewReader(io.LimitReader(r, 1024)).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}

func trustStatusCommand() *command {
	return &command{
		path:    "trust status",
		summary: "print trusted or untrusted for the current workspace",
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			return func(ctx context.Context, e *env, args []string) error {
				if err := noOperands("trust status", args); err != nil {
					return err
				}
				ws, err := e.workspace()
				if err != nil {
					return err
				}
				ok, err := config.IsTrusted(e.home, ws)
				if err != nil {
					return err
				}
				if ok {
					fmt.Fprintln(e.out, "trusted")
				} else {
					fmt.Fprintln(e.out, "untrusted")
				}
				return nil
			}
		},
	}
}

func trustRevokeCommand() *command {
	return &command{
		path:    "trust revoke",
		summary: "forget the current workspace",
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			return func(ctx context.Context, e *env, args []string) error {
				if err := noOperands("trust revoke", args); err != nil {
					return err
				}
				ws, err := e.workspace()
				if err != nil {
					return err
				}
				was, err := config.Untrust(e.home, ws)
				if err != nil {
					return err
				}
				if was {
					fmt.Fprintf(e.out, "Workspace %s is no longer trusted.\n", ws)
				} else {
					fmt.Fprintf(e.out, "Workspace %s was not trusted.\n", ws)
				}
				return nil
			}
		},
	}
}
