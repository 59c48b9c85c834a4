package main

import (
	"slices"
	"testing"

	"agent/agent"
)

// TestOnceNotices: the terminal UI shows an instruction file's diagnostic
// once, however many sessions (/resume) report it; other notices each
// time.
func TestOnceNotices(t *testing.T) {
	diag := agent.InstructionsNotice + "/w/AGENTS.md:3: @gone.md: no such file"
	other := agent.InstructionsNotice + "/w/CLAUDE.md: cannot be read: permission denied"
	var o onceNotices
	var shown []string
	for _, line := range []string{diag, "MCP server github: connected", diag, other, "MCP server github: connected", other} {
		o.show(line, func(l string) { shown = append(shown, l) })
	}
	want := []string{diag, "MCP server github: connected", other, "MCP server github: connected"}
	if !slices.Equal(shown, want) {
		t.Errorf("shown %q, want %q", shown, want)
	}
}
