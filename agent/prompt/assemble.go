package prompt

import (
	"fmt"
	"strings"
)

// MaxMCPInstructions bounds one MCP server's instructions in the system
// prompt; the rest is cut with a note.
const MaxMCPInstructions = 16 << 10

// Section is a part of the system prompt after the environment block.
type Section struct {
	Heading string // "": the text stands on its own
	Text    string
}

// MCPInstructions is the section for the instructions an MCP server sent
// in its initialize result, under the server's name, cut at
// MaxMCPInstructions bytes.
func MCPInstructions(server, text string) Section {
	text = strings.TrimSpace(text)
	if len(text) > MaxMCPInstructions {
		cut := cutBytes(text, MaxMCPInstructions)
		text = fmt.Sprintf("%s\n[cut: the server sent %d bytes; the first %d are shown]", cut, len(text), len(cut))
	}
	return Section{Heading: "Instructions from the MCP server " + oneLine(server), Text: text}
}

// SystemPromptOptions are the parts of a system prompt.
type SystemPromptOptions struct {
	// Replace replaces the static part (setting systemPrompt, flag
	// --system-prompt); nil: Static. The environment block and the
	// sections stay; an empty Replace leaves only them.
	Replace     *string
	Environment Environment
	// Sections follow the environment block in order: the user's
	// appendSystemPrompt (no heading), each MCP server's instructions
	// (MCPInstructions), the skills list.
	Sections []Section
}

// SystemPrompt assembles the system prompt (docs/reference/runtime.md,
// "The system prompt"): the static part, the environment block, then the
// sections, separated by blank lines. Empty parts are left out. What never
// changes comes first, so a provider's prompt cache holds across the
// session's requests.
func SystemPrompt(o SystemPromptOptions) string {
	static := Static
	if o.Replace != nil {
		static = *o.Replace
	}
	parts := []string{strings.TrimSpace(static), o.Environment.Block()}
	for _, s := range o.Sections {
		text := strings.TrimSpace(s.Text)
		switch {
		case text == "":
		case s.Heading == "":
			parts = append(parts, text)
		default:
			parts = append(parts, "# "+s.Heading+"\n\n"+text)
		}
	}
	return joinParts(parts)
}

// ContextOptions are what the context message holds.
type ContextOptions struct {
	Instructions *Set         // Loader.Load's result; nil: none
	Git          *GitSnapshot // nil: no repository or no git
}

// ContextMessage is the text of the first user-role message of a
// conversation (docs/reference/runtime.md, "The context message"): the
// instruction files, each under a heading naming its path, and the git
// snapshot, marked as context gathered at the start rather than the
// user's words. It is "" when there is nothing to say.
func ContextMessage(o ContextOptions) string {
	files := filesText(o.Instructions)
	git := o.Git.Text()
	if files == "" && git == "" {
		return ""
	}
	parts := []string{"[Context gathered by agent when the session started. The user did not write this message; their request follows in the next one.]"}
	if files != "" {
		parts = append(parts, "# Instruction files\n\nThe user's and the repository's instructions for this workspace, farthest first: where they disagree, the later file takes precedence.", files)
	}
	return joinParts(append(parts, git))
}

// AttachmentText is what a tool result gets for the instruction files
// Loader.Attach returned: the files under headings naming their paths,
// marked as added by agent rather than the tool's output. It is "" for a
// nil or empty Set.
func AttachmentText(s *Set) string {
	files := filesText(s)
	if files == "" {
		return ""
	}
	return "[Instruction files of the folders this tool call reached, attached by agent; they are not part of the tool's output. Follow them for work in those folders.]\n\n" + files
}

// filesText renders the loaded files under headings, and names the files
// left out over the limit.
func filesText(s *Set) string {
	if s == nil {
		return ""
	}
	var parts []string
	for _, f := range s.Files {
		parts = append(parts, fmt.Sprintf("## %s (%s instructions)\n\n%s", oneLine(f.Path), f.Scope, strings.TrimSpace(f.Text)))
	}
	if len(s.Dropped) > 0 {
		names := make([]string, len(s.Dropped))
		for i, f := range s.Dropped {
			names[i] = oneLine(f.Path)
		}
		parts = append(parts, fmt.Sprintf("[Left out to stay within %d bytes of instructions: %s. Read them if the task needs them.]", s.MaxBytes, strings.Join(names, ", ")))
	}
	return joinParts(parts)
}

// joinParts joins the non-empty parts with blank lines.
func joinParts(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p)
	}
	return b.String()
}
