package main

import (
	"context"
	"fmt"
	"os"

	"agent/agent"
	"agent/agent/hooks"
	"agent/config"
	"agent/tui/term"
)

// workspaceHooks loads the settings of the workspace (trust gated) and
// builds their hooks, as a session would.
func workspaceHooks(e *env) (*hooks.Set, bool, error) {
	ws, err := e.workspace()
	if err != nil {
		return nil, false, err
	}
	trusted, terr := config.IsTrusted(e.home, ws)
	trusted = trusted && terr == nil
	s := config.Load(config.Options{Home: e.home, Workspace: ws, Trusted: trusted, Lookup: os.LookupEnv})
	return hooks.New(s, hooks.Options{Workspace: ws, Home: e.home}), trusted, nil
}

func hooksListCommand() *command {
	return &command{
		path:    "hooks list",
		summary: "the hooks of the settings and their approval states",
		help: `One line per hook handler of every settings file that applies: its id, state
(active, pending, disabled, unsupported), event and matcher, scope and file, and its
command. A project or local hook runs only in a trusted workspace and once approved.`,
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			return func(ctx context.Context, e *env, args []string) error {
				if err := noOperands("hooks list", args); err != nil {
					return err
				}
				set, trusted, err := workspaceHooks(e)
				if err != nil {
					return err
				}
				fmt.Fprint(e.out, agent.HooksList(set, trusted))
				return nil
			}
		},
	}
}

func hooksApproveCommand() *command {
	return &command{
		path:     "hooks approve",
		synopsis: "[--all] [ID...]",
		summary:  "approve pending project hooks",
		help: `Approves the pending hooks named by ID (see 'agent hooks list'), or all of them
with --all. Without either, each pending hook is shown in full and asked about on the
terminal. An approval lasts until the hook's definition or a script it names changes;
approvals are kept in ~/.agent/hook-approvals.json.`,
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			var all bool
			f.boolVar(&all, "all", "", "approve every pending hook")
			return func(ctx context.Context, e *env, ids []string) error {
				set, _, err := workspaceHooks(e)
				if err != nil {
					return err
				}
				if all && len(ids) > 0 {
					return usagef("hooks approve", "--all and hook ids do not go together")
				}
				if !all && len(ids) == 0 {
					if ids, err = askHooks(e, set); err != nil || len(ids) == 0 {
						return err
					}
				}
				n, err := set.Approve(ids)
				if err != nil {
					return err
				}
				if n == 0 && !all {
					return fmt.Errorf("no pending hook among %v (see 'agent hooks list')", ids)
				}
				fmt.Fprintf(e.out, "Approved %d hook(s).\n", n)
				return nil
			}
		},
	}
}

// askHooks shows each pending hook and asks about it on the terminal.
func askHooks(e *env, set *hooks.Set) ([]string, error) {
	pending := set.Pending()
	if len(pending) == 0 {
		fmt.Fprintln(e.out, "No hook waits for approval.")
		return nil, nil
	}
	in, ok := e.in.(*os.File)
	if !ok || !term.IsTerminal(in) {
		return nil, fmt.Errorf("not on a terminal, so nobody can confirm: pass hook ids or --all (see 'agent hooks list')")
	}
	var ids []string
	for _, h := range pending {
		out, _ := agent.HooksCommand(set, true, []string{"show", h.ID})
		fmt.Fprint(e.err, out+"Approve this hook? [y/N] ")
		if confirm(e.in) {
			ids = append(ids, h.ID)
		}
	}
	return ids, nil
}
