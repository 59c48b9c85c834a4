package tools

import (
	"context"
	"encoding/json"
)

// Risk is a tool's risk class (docs/reference/runtime.md, "Permission modes
// and rules"): Read, Glob and Grep inspect; Write and Edit modify; Bash and
// WebFetch execute. MCP tools are RiskExecute.
type Risk int

// The risk classes.
const (
	RiskInspect Risk = iota
	RiskModify
	RiskExecute
)

func (r Risk) String() string {
	switch r {
	case RiskInspect:
		return "inspect"
	case RiskModify:
		return "modify"
	}
	return "execute"
}

// Spec describes a tool to the model and to the permission check.
type Spec struct {
	Name        string
	Description string
	Schema      json.RawMessage // JSON Schema of the argument object
	Risk        Risk
}

// TargetKind says what a tool's permission patterns match.
type TargetKind int

// Target kinds (docs/reference/settings.md, "Rule syntax"; rules
// `Tool(pattern)`): a glob on the command for Bash, on the normalised path
// for file tools (`**` crosses folders), on the host for WebFetch.
const (
	TargetNone    TargetKind = iota // patterns never match; only `Tool` rules apply
	TargetCommand                   // Bash
	TargetPath                      // Read, Write, Edit, Glob, Grep
	TargetHost                      // WebFetch
)

// Target is what the permission rules of one call match.
type Target struct {
	Kind  TargetKind
	Value string // the command, the normalised absolute path, or the host
	// OutsideWorkspace is set for a file tool whose path (after resolving
	// symbolic links) lies outside the workspace: such a call needs an
	// allow rule or the user's answer in every mode.
	OutsideWorkspace bool
	// Sandboxed is set for a Bash call the kernel will confine (the
	// sandbox gives file-system confinement and the call asks for no
	// escalation): autoAllowBashIfSandboxed may run it without asking
	// (docs/sandbox.md, "Permissions").
	Sandboxed bool
	// Escalation is what a Bash call asks beyond its sandbox ("network",
	// "write:/abs/path"), with the model's Justification: such a call is
	// always asked, never allowed by a rule or a mode (docs/sandbox.md,
	// "Escalation").
	Escalation    string
	Justification string
}

// Result is the outcome of a tool call: Content goes back to the model;
// Display, when set, is shown to the user instead (a diff of an edit) and
// never sent to the model.
type Result struct {
	Content string
	IsError bool
	Display string
}

// Tool is one tool offered to the model. Implementations are safe for
// concurrent use.
type Tool interface {
	Spec() Spec
	// Target says what permission rules match for these arguments, which
	// have passed the schema. An error means the arguments name something
	// unusable (a malformed URL); the runtime returns it to the model.
	Target(args json.RawMessage) (Target, error)
	// Run executes a call whose arguments passed the schema and the
	// permission check. Every failure is a Result with IsError set; Run
	// never panics on what the model sent and honours ctx promptly.
	Run(ctx context.Context, args json.RawMessage) Result
}
