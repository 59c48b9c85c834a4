package agent

// /memory and /context (docs/reference/cli.md, "In-session commands";
// docs/reference/runtime.md, "System prompt and instruction files"): what
// the instruction files are and what the context is made of.

import (
	"fmt"
	"strings"

	"agent/agent/compact"
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

// ContextReport is /context: how full the context is (the tokens of the
// latest request as the provider counted them, plus an estimate of what
// came since), the window and the threshold of automatic compaction, and
// what the next request is made of, estimated (docs/reference/runtime.md,
// "Context management"): the system prompt, the tool definitions, the
// instruction files with their paths, the git snapshot, the messages and
// the tool results, what is free and what is reserved.
func (c *WorkspaceSession) ContextReport() string {
	fr := c.Session.CurrentFraming()
	system := 0
	for _, s := range fr.System {
		system += len(s)
	}
	toolBytes := 0
	for _, sp := range c.Session.ToolSpecs() {
		toolBytes += len(sp.Name) + len(sp.Description) + len(sp.Schema)
	}
	messages, results := c.Session.historySize()
	set := c.Instructions.Files()
	files := set.Size()
	use := c.Session.ContextUse()
	rows := []struct {
		what   string
		tokens int
	}{
		{"system prompt", compact.Tokens(system)},
		{"tool definitions", compact.Tokens(toolBytes)},
		{"instruction files", compact.Tokens(files)},
		{"git snapshot and framing", compact.Tokens(max(len(fr.Context)-files, 0))},
		{"messages", compact.Tokens(messages)},
		{"tool results", compact.Tokens(results)},
	}
	var b strings.Builder
	if use.Window > 0 {
		fmt.Fprintf(&b, "Context: %s of %s tokens (%d%%); automatic compaction at %s", tokenCount(use.Tokens), tokenCount(use.Window), use.Percent(), tokenCount(use.Threshold))
	} else {
		fmt.Fprintf(&b, "Context: %s tokens; the model's window is unknown (set it under models in settings): compaction happens when the provider refuses a request as too long", tokenCount(use.Tokens))
	}
	if use.AutoOff {
		b.WriteString(" (automatic compaction is off)")
	}
	b.WriteString("\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-26s %8s tokens\n", r.what, tokenCount(r.tokens))
	}
	for _, f := range loadedFiles(set) {
		fmt.Fprintf(&b, "    %s  %s tokens\n", f.Path, tokenCount(compact.Tokens(len(f.Text))))
	}
	for _, f := range droppedFiles(set) {
		fmt.Fprintf(&b, "    left out over the limit: %s\n", f.Path)
	}
	if use.Window > 0 {
		fmt.Fprintf(&b, "  %-26s %8s tokens\n", "free", tokenCount(max(use.Window-use.Tokens-use.Reserve, 0)))
		fmt.Fprintf(&b, "  %-26s %8s tokens\n", "reserve (answer, margin)", tokenCount(use.Reserve))
	}
	b.WriteString("Estimates count 4 bytes a token with a third added for safety; the total uses the provider's own count where it reported one.\n")
	return b.String()
}

func tokenCount(t int) string {
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
