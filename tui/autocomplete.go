package tui

import (
	"strings"
	"unicode"

	"agent/agent"
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
	{"/todos", "the todo list of this session", false},
	{"/rewind", "go back to a checkpoint: code, conversation or both", false},
	{"/cost", "tokens and cost per turn and in total", false},
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
	return word == "/quit" || agent.IsMCPPromptCommand(word)
}

// autocomplete is the menu's state: the commands that extend what is
// typed, or the @server:uri mentions that extend the word before the
// cursor (mention: the runes start … end of the composer are that word),
// and the selection.
type autocomplete struct {
	typed      string
	matches    []slashCommand
	sel        int
	dismissed  bool
	mention    bool
	start, end int
	// pick, when set, accepts a match in place of the slash-command
	// behaviour (the @path menu of workspace files, mention.go).
	pick func(s *state, c slashCommand)
}

// maxMentionMatches bounds the mentions the menu offers at once.
const maxMentionMatches = 50

// newAutocomplete recomputes the menu for the composer (text, cursor),
// keeping the selection and a dismissal while the text is unchanged. The
// commands are the built-in ones and extra (the session's custom commands
// and skills, the MCP prompts); an @ word before the cursor is completed from mentions.
func newAutocomplete(text string, cursor int, prev *autocomplete, extra []slashCommand, mentions func() []Mention) *autocomplete {
	if prev != nil && prev.typed == text && (!prev.mention || prev.end == cursor) {
		return prev
	}
	if !strings.HasPrefix(text, "/") {
		return mentionMenu(text, cursor, mentions)
	}
	if strings.Contains(text, "\n") {
		return nil
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

// mentionMenu offers the mentions that extend the @ word before the
// cursor.
func mentionMenu(text string, cursor int, mentions func() []Mention) *autocomplete {
	rs := []rune(text)
	if mentions == nil || cursor > len(rs) {
		return nil
	}
	start := cursor
	for start > 0 && !unicode.IsSpace(rs[start-1]) {
		start--
	}
	word := string(rs[start:cursor])
	if !strings.HasPrefix(word, "@") {
		return nil
	}
	ac := &autocomplete{typed: text, mention: true, start: start, end: cursor}
	for _, m := range mentions() {
		if strings.HasPrefix(m.Text, word) && m.Text != word {
			ac.matches = append(ac.matches, slashCommand{text: m.Text, help: m.Help})
			if len(ac.matches) == maxMentionMatches {
				break
			}
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
		if ac.pick != nil {
			ac.pick(s, c)
			return
		}
		if ac.mention {
			// The word becomes the mention, followed by a space unless it
			// is a template whose {parameters} are still to fill in.
			text := c.text
			if !strings.Contains(text, "{") {
				text += " "
			}
			rs := []rune(s.comp.text())
			s.comp.set(string(rs[:ac.start]) + text + string(rs[ac.end:]))
			s.comp.cur = ac.start + len([]rune(text))
			s.composerChanged()
			return
		}
		if a == keys.ActAccept || c.args {
			text := c.text
			if c.args {
				text += " "
			}
			s.comp.set(text)
			s.ac = s.autocompleteFor(text, len([]rune(text)), nil)
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

// autocompleteFor is newAutocomplete with the state's sources.
func (s *state) autocompleteFor(text string, cursor int, prev *autocomplete) *autocomplete {
	var extra []slashCommand
	if strings.HasPrefix(text, "/") {
		extra = s.extraCommands() // only a slash command needs them (asked at every keystroke)
	}
	if s.hooks.MCPPrompts != nil && strings.HasPrefix(text, "/mcp") {
		for _, p := range s.hooks.MCPPrompts() {
			help := p.Description
			if p.ArgHint != "" {
				help = p.ArgHint + "  " + help
			}
			extra = append(extra, slashCommand{text: p.Name, help: help, args: p.ArgHint != ""})
		}
	}
	return newAutocomplete(text, cursor, prev, extra, s.hooks.MCPMentions)
}
