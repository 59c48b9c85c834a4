package hooks

import "encoding/json"

// Input is what a handler reads on stdin: Claude Code's fields, by name.
// The common ones come first; the others are set for the events that
// carry them.
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	PermissionMode string `json:"permission_mode,omitempty"`
	HookEventName  string `json:"hook_event_name"`

	// PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure.
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse any             `json:"tool_response,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Error        string          `json:"error,omitempty"`        // PostToolUseFailure
	IsInterrupt  *bool           `json:"is_interrupt,omitempty"` // PostToolUseFailure

	Prompt string `json:"prompt,omitempty"` // UserPromptSubmit

	// Stop, SubagentStop.
	StopHookActive       *bool  `json:"stop_hook_active,omitempty"`
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`

	// SubagentStart, SubagentStop.
	AgentID             string `json:"agent_id,omitempty"`
	AgentType           string `json:"agent_type,omitempty"`
	AgentTranscriptPath string `json:"agent_transcript_path,omitempty"`

	Source string `json:"source,omitempty"` // SessionStart: startup, resume, clear, compact
	Model  string `json:"model,omitempty"`  // SessionStart
	Reason string `json:"reason,omitempty"` // SessionEnd: clear, logout, prompt_input_exit, other

	// PreCompact, PostCompact.
	Trigger            string  `json:"trigger,omitempty"` // manual, auto
	CustomInstructions *string `json:"custom_instructions,omitempty"`
	CompactSummary     string  `json:"compact_summary,omitempty"`

	// Notification.
	Message          string `json:"message,omitempty"`
	Title            string `json:"title,omitempty"`
	NotificationType string `json:"notification_type,omitempty"`
}

// Bool is a pointer to b, for the fields that are sent when false too.
func Bool(b bool) *bool { return &b }

// matchValue is what an event's matcher is compared with.
func (in *Input) matchValue() string {
	switch in.HookEventName {
	case "PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure":
		return in.ToolName
	case "SessionStart":
		return in.Source
	case "SessionEnd":
		return in.Reason
	case "PreCompact", "PostCompact":
		return in.Trigger
	case "Notification":
		return in.NotificationType
	case "SubagentStart", "SubagentStop":
		return in.AgentType
	}
	return ""
}
