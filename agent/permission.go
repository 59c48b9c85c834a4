package agent

import (
	"agent/agent/tools"
	"agent/config"
)

// Decision is the outcome of a permission check.
type Decision int

// Decisions.
const (
	Allow Decision = iota
	Deny
	Ask // someone must answer; where nobody can, the call is denied
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Deny:
		return "deny"
	}
	return "ask"
}

// Verdict explains a Decision.
type Verdict struct {
	Decision Decision
	// Rule is the rule that decided, when one did (a deny rule, or the
	// allow rule that allowed the call).
	Rule *config.Rule
	// Guarded: the call asks whatever the mode and the rules say (Write
	// or Edit of a settings file or an approved hook's script), and Reason
	// says why.
	Guarded bool
	// Reason is a short phrase for messages: "denied by rule Bash(rm *)",
	// "plan mode allows inspection only", "path outside the workspace".
	Reason string
	// Suggest is the allow rule that would allow this call, for prompts and
	// for the message of a call denied where nobody can answer
	// (docs/reference/runtime.md, "Permission prompts"), e.g. `Bash(go test
	// ./...)`, `Read(/etc/hosts)`, `WebFetch(docs.example.com)` or
	// `github__*`.
	Suggest string
	// Remedy says what would allow a call that no rule can (leaving the
	// sandbox), for the message of a call denied where nobody can answer.
	Remedy string
}

// Answer is a user's answer to a permission prompt
// (docs/reference/runtime.md, "Permission prompts").
type Answer int

// The four answers.
const (
	AllowOnce Answer = iota
	AllowSession
	AllowProject // written as an allow rule to .agent/settings.local.json
	DenyOnce
)

// Permissions is what a session consults before a tool runs. *Checker
// implements it; it must be safe for concurrent use.
type Permissions interface {
	Check(spec tools.Spec, t tools.Target) Verdict
	AllowForSession(rule config.Rule)
	DeniedTool(name string) bool
}
