package agent

// /hooks and agent hooks (docs/reference/cli.md, "Hooks"): the handlers
// of the settings with their states, the full definition of one, approval
// and revocation.

import (
	"fmt"
	"strings"

	"agent/agent/hooks"
	"agent/config"
	"agent/internal/quote"
)

// HooksCommand runs /hooks: with no words it lists the handlers;
// "show ID" prints one in full; "approve ID|all" and "revoke ID" change
// approvals.
func (c *WorkspaceSession) HooksCommand(args []string) (string, error) {
	return HooksCommand(c.Hooks, c.Trusted, args)
}

// HooksCommand is /hooks on a Set (agent hooks uses it without a
// session).
func HooksCommand(set *hooks.Set, trusted bool, args []string) (string, error) {
	usage := fmt.Errorf("%w: /hooks | /hooks show ID | /hooks approve ID|all | /hooks revoke ID", ErrUsage)
	switch {
	case len(args) == 0:
		return HooksList(set, trusted), nil
	case len(args) == 2 && args[0] == "show":
		for _, h := range set.Handlers() {
			if h.ID == args[1] {
				return hookDetail(h), nil
			}
		}
		return "", fmt.Errorf("no hook %s (see /hooks)", quote.Cut(args[1]))
	case len(args) == 2 && args[0] == "approve":
		var ids []string
		if args[1] != "all" {
			ids = []string{args[1]}
		}
		n, err := set.Approve(ids)
		if err != nil {
			return "", err
		}
		if n == 0 {
			return "", fmt.Errorf("nothing to approve: %s is not a pending hook (see /hooks)", quote.Cut(args[1]))
		}
		return fmt.Sprintf("Approved %d hook(s); they run from now on, until their definition or script changes.\n", n), nil
	case len(args) == 2 && args[0] == "revoke":
		if err := set.Revoke(args[1]); err != nil {
			return "", err
		}
		return "Revoked: the hook waits for approval again and does not run.\n", nil
	}
	return "", usage
}

// HooksList is one line per handler: id, state, event and matcher, where
// it comes from, the command cut to a line.
func HooksList(set *hooks.Set, trusted bool) string {
	var b strings.Builder
	hs := set.Handlers()
	if len(hs) == 0 {
		b.WriteString("No hooks are configured (the hooks key of the settings files).\n")
	}
	for _, h := range hs {
		what := h.Event
		if h.Matcher != "" {
			what += "(" + h.Matcher + ")"
		}
		state := string(h.State)
		if h.Unsupported != "" {
			state += ": " + h.Unsupported
		}
		fmt.Fprintf(&b, "%s  %-11s %-28s %s %s  %s\n", h.ID, state, what, h.Scope, h.File, oneLine(displayHook(h), 60))
	}
	if !trusted {
		b.WriteString("The workspace is not trusted: its project and local hooks are not loaded ('agent trust' trusts it).\n")
	}
	if len(set.Pending()) > 0 {
		b.WriteString("Pending hooks do not run: /hooks show ID, then /hooks approve ID (or all).\n")
	}
	return b.String()
}

func hookDetail(h hooks.Handler) string {
	var b strings.Builder
	fmt.Fprintf(&b, "hook %s: %s\n", h.ID, h.State)
	fmt.Fprintf(&b, "  file:     %s (%s)\n", h.File, h.Scope)
	fmt.Fprintf(&b, "  event:    %s\n", h.Event)
	if h.Matcher != "" {
		fmt.Fprintf(&b, "  matcher:  %s\n", h.Matcher)
	}
	fmt.Fprintf(&b, "  type:     %s\n", h.Type)
	if h.HasArgs {
		fmt.Fprintf(&b, "  program:  %s\n", h.Command)
		for _, a := range h.Args {
			fmt.Fprintf(&b, "  argument: %s\n", a)
		}
	} else {
		fmt.Fprintf(&b, "  command:  %s\n", h.Command)
	}
	if h.Timeout > 0 {
		fmt.Fprintf(&b, "  timeout:  %d s\n", h.Timeout)
	}
	if h.FailClosed {
		b.WriteString("  failClosed: true (a failure blocks)\n")
	}
	for _, s := range h.Scripts {
		fmt.Fprintf(&b, "  script:   %s (its content is part of the approval)\n", s)
	}
	if h.Scope != config.User {
		fmt.Fprintf(&b, "  approval: sha256 %s\n", h.Hash)
	}
	return b.String()
}

func displayHook(h hooks.Handler) string {
	if !h.HasArgs {
		return h.Command
	}
	return strings.Join(append([]string{h.Command}, h.Args...), " ")
}

// oneLine keeps a text on one line of a table, at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
