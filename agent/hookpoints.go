package agent

// The points of a session where hooks run (docs/reference/runtime.md,
// "Hooks"). agent/hooks runs the handlers and merges their answers; this
// file builds each event's input and applies what the answers decide.
// A session without hooks pays one map lookup per point.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"agent/agent/hooks"
	"agent/agent/tools"
	"agent/providers"
)

// ErrPromptBlocked ends a turn whose prompt a UserPromptSubmit hook
// blocked; the prompt never reached the model.
var ErrPromptBlocked = errors.New("a hook blocked the prompt")

// Stop hooks may keep a turn going (docs/reference/runtime.md, "Hooks"):
// at most this many times in a row (with no tool call between), and in
// all per turn.
const (
	maxStopBlocksInARow = 8
	maxStopBlocksInTurn = 25
)

// hookInput is an event's input with the common fields filled.
func (s *Session) hookInput(event string) hooks.Input {
	in := hooks.Input{SessionID: s.id, Cwd: s.opts.Workspace, HookEventName: event}
	if s.opts.Transcript != nil {
		in.TranscriptPath = s.opts.Transcript.Path()
	}
	if m, ok := s.opts.Permissions.(interface{ Mode() string }); ok {
		in.PermissionMode = m.Mode()
	}
	return in
}

// runHooks runs an event's handlers and tells the user what they said
// besides their decision: failures (a dimmed line), system messages.
func (s *Session) runHooks(ctx context.Context, turn string, in hooks.Input) hooks.Result {
	r := s.opts.Hooks.Run(ctx, in, func(msg string) {
		s.emit(Event{Kind: EventHookStatus, Turn: turn, Text: msg})
	})
	for _, f := range r.Failures {
		s.emit(Event{Kind: EventHookFailure, Turn: turn, Text: in.HookEventName + ": " + f.String()})
	}
	for _, m := range r.Messages {
		s.emit(Event{Kind: EventNotice, Turn: turn, Text: m})
	}
	if r.Stop && r.StopReason != "" {
		s.emit(Event{Kind: EventNotice, Turn: turn, Text: "A hook stopped the turn: " + r.StopReason})
	}
	return r
}

// promptHooks runs UserPromptSubmit: a block ends the turn before the
// prompt is sent; context joins the prompt's message.
func (s *Session) promptHooks(t *Turn, um *providers.Message) error {
	if !s.opts.Hooks.Has("UserPromptSubmit") {
		return nil
	}
	in := s.hookInput("UserPromptSubmit")
	in.Prompt = t.Req.Prompt
	r := s.runHooks(t.ctx, t.ID, in)
	switch {
	case r.Block:
		return fmt.Errorf("%w: %s", ErrPromptBlocked, r.Reason)
	case r.Stop:
		return fmt.Errorf("%w: %s", ErrPromptBlocked, r.StopReason)
	}
	for _, c := range r.Context {
		um.Content = append(um.Content, providers.Text{Text: c})
	}
	return nil
}

// toolHooks is a call's PreToolUse: the hooks' decision and the arguments
// the call goes on with (a handler's updatedInput).
type toolHooks struct {
	block      bool   // deny, or exit 2: the call does not run
	reason     string // why, for the model
	permission string // allow or ask from the hooks ("" none)
	stop       bool   // continue: false: the turn ends after this call
}

// preToolHooks runs PreToolUse (before the permission check).
func (s *Session) preToolHooks(ctx context.Context, turn string, c *providers.ToolCall) toolHooks {
	if !s.opts.Hooks.Has("PreToolUse") {
		return toolHooks{}
	}
	in := s.hookInput("PreToolUse")
	in.ToolName, in.ToolInput, in.ToolUseID = c.Name, c.Arguments, c.ID
	r := s.runHooks(ctx, turn, in)
	th := toolHooks{stop: r.Stop}
	switch {
	case r.Block:
		th.block, th.reason = true, r.Reason
	case r.Permission == "deny":
		th.block, th.reason = true, r.PermissionReason
	default:
		th.permission = r.Permission
		if len(r.UpdatedInput) > 0 {
			c.Arguments = r.UpdatedInput
		}
	}
	return th
}

// permissionHooks runs PermissionRequest when a permission prompt would
// show: "allow" or "deny" answers it (with updatedInput), nothing asks
// the user.
func (s *Session) permissionHooks(ctx context.Context, turn string, c *providers.ToolCall) (decision, reason string) {
	if !s.opts.Hooks.Has("PermissionRequest") {
		return "", ""
	}
	in := s.hookInput("PermissionRequest")
	in.ToolName, in.ToolInput, in.ToolUseID = c.Name, c.Arguments, c.ID
	r := s.runHooks(ctx, turn, in)
	switch {
	case r.Block || r.Permission == "deny":
		return "deny", strings.TrimSpace(r.Reason + "\n" + r.PermissionReason)
	case r.Permission == "allow":
		if len(r.UpdatedInput) > 0 {
			c.Arguments = r.UpdatedInput
		}
		return "allow", ""
	}
	return "", ""
}

// notify runs Notification hooks in the background: a prompt waits for the
// user.
func (s *Session) notify(kind, message string) {
	if !s.opts.Hooks.Has("Notification") {
		return
	}
	in := s.hookInput("Notification")
	in.NotificationType, in.Message = kind, message
	go s.runHooks(s.ctx, "", in)
}

// postToolHooks runs PostToolUse or PostToolUseFailure after a call ran:
// context and feedback (a block, exit 2's stderr) join the result the
// model reads.
func (s *Session) postToolHooks(ctx context.Context, turn string, c providers.ToolCall, target tools.Target, r *tools.Result) bool {
	event := "PostToolUse"
	if r.IsError {
		event = "PostToolUseFailure"
	}
	if !s.opts.Hooks.Has(event) {
		return false
	}
	in := s.hookInput(event)
	in.ToolName, in.ToolInput, in.ToolUseID = c.Name, c.Arguments, c.ID
	if r.IsError {
		in.Error, in.IsInterrupt = r.Content, hooks.Bool(ctx.Err() != nil)
	} else {
		in.ToolResponse = toolResponse(c.Name, target, *r)
	}
	hr := s.runHooks(ctx, turn, in)
	var add []string
	if hr.Block && hr.Reason != "" {
		add = append(add, "Hook feedback: "+hr.Reason)
	}
	add = append(add, hr.Context...)
	if len(add) > 0 {
		r.Content += "\n\n" + strings.Join(add, "\n\n")
	}
	return hr.Stop
}

// toolResponse is PostToolUse's tool_response: the result, with the
// fields Claude Code's hooks read for the tools that have them.
func toolResponse(name string, target tools.Target, r tools.Result) map[string]any {
	out := map[string]any{"content": r.Content, "is_error": r.IsError}
	switch name {
	case "Write", "Edit":
		out["filePath"], out["success"] = target.Value, !r.IsError
	case "Bash":
		out["stdout"], out["stderr"], out["interrupted"] = r.Content, "", false
	}
	return out
}

// stopHooks runs Stop when the model has answered without tool calls: a
// block keeps the turn going with the reason as the next message, within
// the caps. It returns that message, or nothing when the turn ends.
func (s *Session) stopHooks(t *Turn, lastText string, st *stopState) (providers.Message, bool) {
	event := "Stop"
	if s.opts.Subagent != nil {
		event = "SubagentStop"
	}
	if !s.opts.Hooks.Has(event) {
		return providers.Message{}, false
	}
	in := s.hookInput("Stop")
	s.stopEvent(&in)
	in.StopHookActive, in.LastAssistantMessage = hooks.Bool(st.inARow > 0), lastText
	r := s.runHooks(t.ctx, t.ID, in)
	if !r.Block || r.Stop {
		return providers.Message{}, false
	}
	if st.inARow >= maxStopBlocksInARow || st.inTurn >= maxStopBlocksInTurn {
		s.emit(Event{Kind: EventNotice, Turn: t.ID, Text: fmt.Sprintf("A Stop hook asked to go on again; the turn ends here (at most %d times in a row, %d in a turn).", maxStopBlocksInARow, maxStopBlocksInTurn)})
		return providers.Message{}, false
	}
	st.inARow++
	st.inTurn++
	reason := r.Reason
	if reason == "" {
		reason = "A Stop hook asked you to continue."
	}
	return providers.Message{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "Stop hook feedback:\n" + reason}}}, true
}

// stopState counts a turn's Stop-hook continuations.
type stopState struct{ inARow, inTurn int }

// reargue re-reads a call whose arguments a hook replaced: the schema and
// the target again, so that the permission rules judge the new input.
func (s *Session) reargue(spec tools.Spec, tool tools.Tool, args json.RawMessage) (tools.Target, error) {
	if err := s.validateArgs(spec, args); err != nil {
		return tools.Target{}, fmt.Errorf("a hook's updatedInput is invalid for %s: %w", spec.Name, err)
	}
	return tool.Target(args)
}

// hookDenied is the result of a call a hook blocked.
func hookDenied(tool, reason string) string {
	if reason == "" {
		reason = "no reason given"
	}
	return fmt.Sprintf("A hook blocked this %s call: %s", tool, reason)
}
