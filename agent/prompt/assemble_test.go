package prompt

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/static.golden from Static")

// TestStaticGolden keeps the static part of the system prompt equal to
// testdata/static.golden, so that a change to what every model is told is
// deliberate: rewrite the file with -update and review the diff.
func TestStaticGolden(t *testing.T) {
	path := filepath.Join("testdata", "static.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(Static+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if Static+"\n" != string(want) {
		t.Errorf("Static differs from %s; if the change is meant, run go test -run TestStaticGolden -update and review the diff", path)
	}
}

// TestStaticNamesTheTools: the static part speaks of every built-in tool
// and of their real argument names (docs/reference/runtime.md, "Built-in
// tools"), and holds nothing that varies.
func TestStaticNamesTheTools(t *testing.T) {
	for _, s := range []string{"Read (", "Write (", "Edit (", "Glob (", "Grep (", "Bash (", "WebFetch (", "MCPStatus", "TodoWrite (", "activeForm", "in_progress",
		"file_path", "offset", "limit", "old_string", "new_string", "replace_all", "content", "pattern", "output_mode",
		"head_limit", "-i", "-n", "timeout", "description", "url", "raw", "Permission denied", "path:line"} {
		if !strings.Contains(Static, s) {
			t.Errorf("the static part does not mention %q", s)
		}
	}
	for _, s := range []string{"\t", "\r", "`"} {
		if strings.Contains(Static, s) {
			t.Errorf("the static part holds %q", s)
		}
	}
}

func TestSystemPrompt(t *testing.T) {
	env := Environment{Workspace: "/w", Host: testHost, Date: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), Model: "m", PermissionMode: "plan"}
	block := env.Block()
	empty, custom := "", "  You are a reviewer.\n"
	cases := []struct {
		name string
		opts SystemPromptOptions
		want string
	}{
		{
			name: "static part and environment",
			opts: SystemPromptOptions{Environment: env},
			want: Static + "\n\n" + block,
		},
		{
			name: "a replacement replaces the static part only",
			opts: SystemPromptOptions{Replace: &custom, Environment: env, Sections: []Section{{Text: "Also: be terse."}}},
			want: "You are a reviewer.\n\n" + block + "\n\nAlso: be terse.",
		},
		{
			name: "an empty replacement leaves the environment",
			opts: SystemPromptOptions{Replace: &empty, Environment: env},
			want: block,
		},
		{
			name: "sections in the order given, empty ones left out",
			opts: SystemPromptOptions{Environment: env, Sections: []Section{
				{Text: "user append"}, {Text: " \n"}, MCPInstructions("github", "Use the search tool first.\n"), MCPInstructions("empty", ""),
			}},
			want: Static + "\n\n" + block + "\n\nuser append\n\n# Instructions from the MCP server github\n\nUse the search tool first.",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := SystemPrompt(c.opts); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestMCPInstructionsCut(t *testing.T) {
	long := strings.Repeat("é", MaxMCPInstructions) // twice the limit in bytes
	s := MCPInstructions("srv", long)
	if len(s.Text) > MaxMCPInstructions+100 || !strings.Contains(s.Text, "[cut: the server sent 32768 bytes; the first 16384 are shown]") {
		t.Errorf("section of %d bytes ends %q", len(s.Text), s.Text[len(s.Text)-80:])
	}
	if s := MCPInstructions("a\nb", "x"); s.Heading != `Instructions from the MCP server "a\nb"` {
		t.Errorf("heading %q", s.Heading)
	}
}

func TestContextMessage(t *testing.T) {
	set := &Set{
		MaxBytes: 100,
		Files: []File{
			{Path: "/home/u/.agent/AGENTS.md", Scope: ScopeUser, Text: "Use tabs.\n"},
			{Path: "/repo/AGENTS.md", Scope: ScopeProject, Text: "Run make test.\n"},
		},
		Dropped: []File{{Path: "/repo/big/AGENTS.md", Scope: ScopeProject}},
	}
	git := &GitSnapshot{Branch: "main", Status: " M a.go", Commits: []string{"fix"}}
	cases := []struct {
		name string
		opts ContextOptions
		want string
	}{
		{name: "nothing", opts: ContextOptions{}, want: ""},
		{name: "an empty set and no repository", opts: ContextOptions{Instructions: &Set{}}, want: ""},
		{
			name: "files and snapshot",
			opts: ContextOptions{Instructions: set, Git: git},
			want: `[Context gathered by agent when the session started. The user did not write this message; their request follows in the next one.]

# Instruction files

The user's and the repository's instructions for this workspace, farthest first: where they disagree, the later file takes precedence.

## /home/u/.agent/AGENTS.md (user instructions)

Use tabs.

## /repo/AGENTS.md (project instructions)

Run make test.

[Left out to stay within 100 bytes of instructions: /repo/big/AGENTS.md. Read them if the task needs them.]

# Git snapshot

Taken when the session started; it is not updated as the session goes on. Run git for the current state.

Branch: main
Status (git status --short):
 M a.go
Recent commits (newest first):
- fix`,
		},
		{
			name: "the snapshot alone",
			opts: ContextOptions{Git: &GitSnapshot{Detached: "abc1234"}},
			want: `[Context gathered by agent when the session started. The user did not write this message; their request follows in the next one.]

# Git snapshot

Taken when the session started; it is not updated as the session goes on. Run git for the current state.

Branch: detached HEAD at abc1234
Status: clean (git status --short printed nothing)
Recent commits: none`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ContextMessage(c.opts); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestAttachmentText(t *testing.T) {
	if got := AttachmentText(nil); got != "" {
		t.Errorf("nil set: %q", got)
	}
	got := AttachmentText(&Set{Files: []File{{Path: "/repo/sub/AGENTS.md", Scope: ScopeProject, Text: "sub rules"}}})
	want := "[Instruction files of the folders this tool call reached, attached by agent; they are not part of the tool's output. Follow them for work in those folders.]\n\n## /repo/sub/AGENTS.md (project instructions)\n\nsub rules"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
