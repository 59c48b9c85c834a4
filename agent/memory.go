package agent

// /memory and /context (docs/reference/cli.md, "In-session commands";
// docs/reference/runtime.md, "System prompt and instruction files"): what
// the instruction files are and what the context is made of.

import (
	"encoding/json"
	"fmt"
	"strings"

	"agent/agent/prompt"
	"agent/providers"
)

// MemoryCommand runs /memory: with no words it lists the loaded
// instruction files with their sizes and sources, the files left out and
// the problems; "reload" reads them again first.
func (c *WorkspaceSession) MemoryCommand(args []string) (string, error) {
	switch {
	case len(args) == 0:
		return memoryText(c.Instructions.Files(), false), nil
	case len(args) == 1 && args[0] == "reload":
		return memoryText(c.Instructions.Reload(), true), nil
	}
	return "", fmt.Errorf("%w: /memory | /memory reload", ErrUsage)
}

func memoryText(s *prompt.Set, reloaded bool) string {
	var b strings.Builder
	if reloaded {
		b.WriteString("Reloaded the instruction files from disk; the next request carries them.\n")
	}
	if s == nil || len(s.Files) == 0 {
		b.WriteString("No instruction files are loaded (AGENTS.md, CLAUDE.md, .agent/AGENTS.md, .compat/CLAUDE.md, their .local.md forms, ~/.agent/AGENTS.md, ~/.compat/CLAUDE.md).\n")
	} else {
		fmt.Fprintf(&b, "Instruction files, farthest first (%s of %s allowed):\n", byteSize(s.Size()), byteSize(s.MaxBytes))
		for _, f := range s.Files {
			fmt.Fprintf(&b, "  %s  %s instructions, %s\n", f.Path, f.Scope, byteSize(len(f.Text)))
			for _, im := range f.Imports {
				fmt.Fprintf(&b, "    imports %s, %s\n", im.Path, byteSize(im.Size))
			}
		}
	}
	for _, f := range droppedFiles(s) {
		fmt.Fprintf(&b, "  left out over the limit: %s, %s\n", f.Path, byteSize(f.Size))
	}
	for _, d := range diagnostics(s) {
		fmt.Fprintf(&b, "  problem: %s\n", d)
	}
	return b.String()
}

func byteSize(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/1024)
}

// ContextReport is /context: what the next request is made of, in
// estimated tokens (bytes / 4): the system prompt, the tool definitions,
// the context message (each instruction file with its path, the git
// snapshot), the conversation's messages and tool results.
func (c *WorkspaceSession) ContextReport() string {
	fr := c.Session.CurrentFraming()
	system := 0
	for _, s := range fr.System {
		system += len(s)
	}
	toolBytes := 0
	for _, sp := range c.Session.ToolSpecs() {
		b, _ := json.Marshal(struct {
			Name, Description string
			Schema            json.RawMessage
		}{sp.Name, sp.Description, sp.Schema})
		toolBytes += len(b)
	}
	messages, results := c.Session.historySize()
	set := c.Instructions.Files()
	files := set.Size()
	rows := []struct {
		what  string
		bytes int
	}{
		{"system prompt", system},
		{"tool definitions", toolBytes},
		{"instruction files", files},
		{"git snapshot and framing", max(len(fr.Context)-files, 0)},
		{"messages", messages},
		{"tool results", results},
	}
	var b strings.Builder
	total := 0
	for _, r := range rows {
		total += r.bytes
	}
	fmt.Fprintf(&b, "Context: about %s tokens (estimated at 4 bytes a token)\n", tokenCount(total))
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-26s %8s tokens\n", r.what, tokenCount(r.bytes))
	}
	for _, f := range loadedFiles(set) {
		fmt.Fprintf(&b, "    %s  %s tokens\n", f.Path, tokenCount(len(f.Text)))
	}
	for _, f := range droppedFiles(set) {
		fmt.Fprintf(&b, "    left out over the limit: %s\n", f.Path)
	}
	return b.String()
}

func tokenCount(bytes int) string {
	t := (bytes + 3) / 4
	if t >= 10000 {
		return fmt.Sprintf("%.1fk", float64(t)/1000)
	}
	return fmt.Sprint(t)
}

// historySize is the bytes of the conversation's text and tool calls,
// and of its tool results.
func (s *Session) historySize() (messages, results int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.history {
		for _, p := range m.Content {
			switch p := p.(type) {
			case providers.Text:
				messages += len(p.Text)
			case providers.Reasoning:
				messages += len(p.Text)
			case providers.ToolCall:
				messages += len(p.Name) + len(p.Arguments)
			case providers.ToolResult:
				for _, c := range p.Content {
					if t, ok := c.(providers.Text); ok {
						results += len(t.Text)
					}
				}
			}
		}
	}
	return messages, results
}

// The parts of a set that may be nil.
func loadedFiles(s *prompt.Set) []prompt.File {
	if s == nil {
		return nil
	}
	return s.Files
}

func droppedFiles(s *prompt.Set) []prompt.File {
	if s == nil {
		return nil
	}
	return s.Dropped
}

func diagnostics(s *prompt.Set) []prompt.Diagnostic {
	if s == nil {
		return nil
	}
	return s.Diagnostics
}
