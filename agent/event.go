package agent

import (
	"encoding/json"

	"agent/agent/tools"
	"agent/providers"
)

// EventKind names what an Event reports. Every front end (the terminal UI,
// print mode, mcp serve, background sessions) consumes the same stream.
type EventKind string

// Event kinds.
const (
	EventQueued       EventKind = "queued"        // a turn waits behind the running one
	EventTurnStart    EventKind = "turn_start"    // a turn began
	EventText         EventKind = "text"          // Text: a piece of the answer
	EventReasoning    EventKind = "reasoning"     // Text: a piece of the model's reasoning
	EventToolStart    EventKind = "tool_start"    // Tool: a call is about to run
	EventToolEnd      EventKind = "tool_end"      // Tool: a call finished (Tool.Result)
	EventToolProgress EventKind = "tool_progress" // Tool: what a running call reported (Tool.Progress)
	EventPermission   EventKind = "permission"    // Permission: a prompt is being asked
	EventUsage        EventKind = "usage"         // Usage: token counts of the latest model call
	EventComplete     EventKind = "complete"      // Result: the turn ended normally
	EventInterrupted  EventKind = "interrupted"   // Result: the turn was aborted; the partial answer is kept
	EventError        EventKind = "error"         // Result, Err: the turn failed (it can be retried)
	EventCancelled    EventKind = "cancelled"     // a queued turn was withdrawn before it ran
	EventBackground   EventKind = "background"    // Text: a background task reported (e.g. a handed-off MCP call)
	// Context management (docs/reference/runtime.md, "Context management").
	EventContext      EventKind = "context"       // Context: how full the context is
	EventCompactStart EventKind = "compact_start" // Compact: a compaction began
	EventCompact      EventKind = "compact"       // Compact: a compaction ended (Compact.Err when it failed); Usage: its model call
	EventNotice       EventKind = "notice"        // Text: something the user should know, not the model
	// Hooks (docs/reference/runtime.md, "Hooks").
	EventHookStatus  EventKind = "hook_status"  // Text: a running hook's statusMessage ("" when the hooks ended)
	EventHookFailure EventKind = "hook_failure" // Text: a hook that failed (shown to the user, dimmed)
	// The daily loop (docs/reference/runtime.md, "The todo list", "Bash").
	EventTodos      EventKind = "todos"       // Todos: the todo list changed
	EventToolOutput EventKind = "tool_output" // Tool (CallID, Name), Text: the last lines of a running command's output
	// Subagents (docs/reference/runtime.md, "Subagents, commands and
	// skills"): a child's tool and permission events reach the parent's
	// stream with Agent set.
	EventAgentStart EventKind = "agent_start" // Agent, Text: a subagent began its task (the prompt)
	EventAgentEnd   EventKind = "agent_end"   // Agent, Text, Result: it ended (Text: its figures line)
)

// Event is one item of a session's event stream.
type Event struct {
	Kind    EventKind
	Session string
	Turn    string
	Text    string
	// From names the sender of a queued or started turn that is not the
	// user's: "external:<grantId>" for an external event, whose Text is
	// then the prompt as the model sees it, with the grant and the claimed
	// name marked as a claim (docs/reference/events.md, "The event's
	// turn").
	From       string
	Tool       *ToolEvent
	Permission *PermissionRequest
	Usage      *providers.Usage
	Context    *ContextUse
	Agent      *AgentInfo // the subagent an event comes from
	Compact    *CompactInfo
	Result     *TurnResult
	Err        error
	Todos      []tools.Todo // EventTodos: the whole list
}

// ToolEvent describes one tool call.
type ToolEvent struct {
	CallID string
	Name   string
	Args   json.RawMessage
	Result *tools.Result // set on EventToolEnd
	Denied bool          // the call did not run: denied by a rule, a mode or the user
	// Progress is what the running call last reported (EventToolProgress):
	// an MCP server's notifications/progress, as "3/10 message".
	Progress string
}

// PermissionRequest is a prompt: which tool, with which arguments, what
// rule an "allow" answer would record, and why it is asked.
type PermissionRequest struct {
	// Agent names the subagent asking ("" for the session itself).
	Agent   string
	Tool    string
	Args    json.RawMessage
	Target  tools.Target
	Suggest string
	Reason  string
	// Preview is what the call will do (a diff, a new file, a command, a
	// URL), when the tool can say; nil otherwise.
	Preview *tools.Preview
	// Rules are what "allow for this session" and "allow for this
	// project" record, generalised as a user would write them
	// (docs/reference/runtime.md, "Permission prompts").
	Rules []string
}

// Status is how a turn ended.
type Status string

// Turn statuses.
const (
	StatusComplete    Status = "complete"
	StatusInterrupted Status = "interrupted"
	StatusError       Status = "error"
	StatusCancelled   Status = "cancelled"
)

// TurnResult is the outcome of one turn.
type TurnResult struct {
	Turn       string
	Status     Status
	Text       string          // the answer (the text of the last model call)
	StopReason string          // the model's finish reason, or why the turn stopped
	Usage      providers.Usage // summed over the turn's model calls
	Err        error           // for StatusError
}
