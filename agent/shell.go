package agent

// Shell commands the user types after "!" (docs/reference/runtime.md,
// "Shell commands and mentions"): the command runs as a Bash call of its
// own turn, under the permission rules (a deny rule or plan mode refuses
// it; a call that would ask runs, since the user typed it), and its output
// joins the conversation as a user message, without a model call.

import (
	"encoding/json"
	"fmt"
	"strings"

	"agent/providers"
)

// UserPrompt is the request for a line the user typed in an interactive
// front end: "!COMMAND" runs COMMAND in the workspace; any other text is a
// prompt whose @path mentions attach files.
func UserPrompt(text string) TurnRequest {
	if cmd, ok := strings.CutPrefix(text, "!"); ok && strings.TrimSpace(cmd) != "" {
		return TurnRequest{Shell: true, Prompt: strings.TrimSpace(cmd), Display: text}
	}
	return TurnRequest{Prompt: text, Mentions: true}
}

// StopShell is the stop reason of a "!" command's turn: no model ran, and
// the result's text is the command's output.
const StopShell = "shell"

// shellLead opens the message that carries a shell command's output.
const shellLead = "[The user ran a shell command in the workspace; its output follows.]"

// ShellCommandOf returns the command of a user message that carries a
// "!" command's output, for replays and the prompt history.
func ShellCommandOf(text string) (string, bool) {
	rest, ok := strings.CutPrefix(text, shellLead+"\n$ ")
	if !ok {
		return "", false
	}
	cmd, _, _ := strings.Cut(rest, "\n")
	return cmd, true
}

// runShellTurn runs a "!" command and adds its output to the conversation.
func (s *Session) runShellTurn(t *Turn) TurnResult {
	res := TurnResult{Turn: t.ID}
	s.emit(Event{Kind: EventTurnStart, Turn: t.ID, Text: t.Req.display()})
	s.openCheckpoint(t)
	end := func(status Status) TurnResult {
		res.Status = status
		if res.StopReason == "" {
			res.StopReason = StopShell
		}
		s.recordEnd(t, res)
		kind := map[Status]EventKind{StatusComplete: EventComplete, StatusInterrupted: EventInterrupted}[status]
		s.emit(Event{Kind: kind, Turn: t.ID, Result: &res})
		return res
	}
	if s.findTool("Bash") == nil || s.opts.Permissions != nil && s.opts.Permissions.DeniedTool("Bash") {
		s.emit(Event{Kind: EventNotice, Turn: t.ID, Text: "The command was not run: this session offers no Bash tool (a deny rule may remove it)."})
		return end(StatusComplete)
	}
	args, _ := json.Marshal(map[string]string{"command": t.Req.Prompt})
	n, _ := turnNumber(t.ID)
	r := s.callTool(t.ctx, t, providers.ToolCall{ID: fmt.Sprintf("shell_%d", n), Name: "Bash", Arguments: args}, false)
	if t.denied.Load() {
		// Nothing ran: nothing joins the conversation.
		res.Text = r.Content
		return end(StatusComplete)
	}
	msg := providers.Message{Role: providers.RoleUser, Content: []providers.Part{providers.Text{
		Text: shellLead + "\n$ " + t.Req.Prompt + "\n" + strings.TrimRight(r.Content, "\n")}}}
	s.mu.Lock()
	s.history = append(s.history, msg)
	s.mu.Unlock()
	s.record(t, msg, t.Req)
	res.Text = r.Content
	if aborted(t.ctx) {
		res.StopReason = "interrupted"
		return end(StatusInterrupted)
	}
	return end(StatusComplete)
}
