package tui

import (
	"strings"

	"agent/tui/keys"
)

// slashCommand is one entry of the autocomplete menu. args marks a
// command that needs more words: accepting it leaves the cursor after a
// space instead of running it.
type slashCommand struct {
	text, help string
	args       bool
}

// slashCommands are the commands of this build (the autocomplete-menu
// context lists them while the composer starts with "/";
// docs/reference/keybindings.md, "Contexts"; docs/reference/cli.md,
// "In-session commands").
var slashCommands = []slashCommand{
	{"/help", "list the commands", false},
	{"/mcp", "MCP servers and their state", false},
	{"/mcp status", "one line per MCP server", false},
	{"/mcp approve", "approve SERVER for this session (alone: choose among the pending)", true},
	{"/mcp reject", "reject SERVER", true},
	{"/mcp revoke", "revoke the approval of SERVER", true},
	{"/mcp login", "sign in to SERVER (add --no-browser to paste the redirect)", true},
	{"/mcp logout", "sign out of SERVER and revoke its tokens", true},
	{"/events", "this session's external-event grants", false},
	{"/events revoke", "withdraw the grant GRANT_ID", true},
	{"/keybindings", "create the keybindings overrides file", false},
	{"/init", "ask the model to write or improve AGENTS.md for this repository", false},
	{"/memory", "the instruction files loaded, with sizes and sources", false},
	{"/memory reload", "read the instruction files again", false},
	{"/context", "what the context is made of, in tokens", false},
	{"/hooks", "the hooks and their approval (show ID, approve ID|all, revoke ID)", true},
	{"/agents", "the subagent definitions and their problems", false},
	{"/compact", "summarise the conversation now (add what the summary must keep)", true},
	{"/resume", "switch to a stored session of this workspace", false},
	{"/model", "choose the provider and model", false},
	{"/permissions", "switch the permission mode", false},
	{"/background", "background tasks of this session", false},
	{"/settings", "serving transports on and off", false},
	{"/theme", "theme, syntax highlighting, motion", false},
	{"/clear", "start a new conversation (the old one stays for /resume)", false},
	{"/exit", "end the session", false},
}

// knownCommand reports whether word starts a built-in or an extra
// command (a custom command, a skill).
func knownCommand(word string, extra []slashCommand) bool {
	for _, c := range append(slashCommands[:len(slashCommands):len(slashCommands)], extra...) {
		if c.text == word || strings.HasPrefix(c.text, word+" ") {
			return true
		}
	}
	return word == "/quit"
}

// autocomplete is the menu's state: the commands that extend what is
// typed, and the selection.
type autocomplete struct {
	typed     string
	matches   []slashCommand
	sel       int
	dismissed bool
}

// newAutocomplete recomputes the menu for the composer's text, keeping
// the selection and a dismissal while the text is unchanged.
func newAutocomplete(text string, prev *autocomplete, extra []slashCommand) *autocomplete {
	if !strings.HasPrefix(text, "/") || strings.Contains(text, "\n") {
		return nil
	}
	if prev != nil && prev.typed == text {
		return prev
	}
	ac := &autocomplete{typed: text}
	for _, c := range append(slashCommands[:len(slashCommands):len(slashCommands)], extra...) {
		if strings.HasPrefix(c.text, text) && c.text != strings.TrimSpace(text) || (c.text == text && !c.args) {
			ac.matches = append(ac.matches, c)
		}
	}
	if len(ac.matches) == 0 {
		return nil
	}
	return ac
}

func (ac *autocomplete) open() bool { return ac != nil && !ac.dismissed && len(ac.matches) > 0 }

// autocompleteAction runs the menu's actions
// (docs/reference/keybindings.md, "Defaults"): accept puts the selection in
// the composer, execute runs it (or accepts a command that needs
// arguments), close hides the menu until the text changes.
func (s *state) autocompleteAction(a keys.Action) {
	ac := s.ac
	switch a {
	case keys.ActPrevious:
		ac.sel = (ac.sel + len(ac.matches) - 1) % len(ac.matches)
	case keys.ActNext:
		ac.sel = (ac.sel + 1) % len(ac.matches)
	case keys.ActClose:
		ac.dismissed = true
	case keys.ActAccept, keys.ActExecute:
		c := ac.matches[ac.sel]
		if a == keys.ActAccept || c.args {
			text := c.text
			if c.args {
				text += " "
			}
			s.comp.set(text)
			s.ac = newAutocomplete(text, nil, s.extraCommands())
			if s.ac != nil && a == keys.ActAccept {
				s.ac.dismissed = len(s.ac.matches) == 1 && s.ac.matches[0].text == text
			}
			return
		}
		s.comp.set(c.text)
		s.chatAction(keys.ActSubmit)
	}
}

// extraCommands are the session's custom commands and skills
// (docs/reference/runtime.md, "Subagents, commands and skills"), from the
// Commands hook.
func (s *state) extraCommands() []slashCommand {
	if s.hooks.Commands == nil {
		return nil
	}
	var out []slashCommand
	for _, c := range s.hooks.Commands() {
		help := c.Description
		if c.ArgumentHint != "" {
			help = c.ArgumentHint + "  " + help
		}
		out = append(out, slashCommand{text: c.Name, help: help, args: c.ArgumentHint != ""})
	}
	return out
}
