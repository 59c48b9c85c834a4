package agent

// What a workspace session tells the model before the conversation
// (docs/reference/runtime.md, "System prompt and instruction files"): the
// static system prompt, the environment block and the appended sections,
// and the context message with the instruction files and the git
// snapshot. agent/prompt builds the parts; this file keeps them for one
// session and rebuilds the session's Framing when they change.

import (
	"context"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"agent/agent/prompt"
)

// Instructions is a workspace session's instruction files: what /memory
// lists and reloads and /context sizes.
type Instructions struct {
	mu       sync.Mutex
	loader   *prompt.Loader
	set      *prompt.Set
	git      *prompt.GitSnapshot
	replace  *string
	append   string
	env      prompt.Environment
	mcp      map[string]string
	skills   string // the skills' names and descriptions
	notice   func(string)
	reported map[string]bool
	session  *Session
}

// instructionOptions are what a start decides about the prompt.
type instructionOptions struct {
	workspace, home string
	trusted         bool
	maxBytes        int
	replace         *string // --system-prompt or the systemPrompt setting
	append          string  // --append-system-prompt or the setting
	model, mode     string
	sandboxMode     string // the environment block's sandbox line ("" reads "off")
	notice          func(string)
}

// newInstructions loads the instruction files and takes the git snapshot.
// The snapshot is taken only in a trusted workspace: `git status` can run
// filters a repository's own configuration names.
func newInstructions(ctx context.Context, o instructionOptions) *Instructions {
	in := &Instructions{
		loader:   prompt.NewLoader(prompt.LoaderOptions{Workspace: o.workspace, Home: o.home, Trusted: o.trusted, MaxBytes: o.maxBytes}),
		replace:  o.replace,
		append:   o.append,
		notice:   o.notice,
		reported: map[string]bool{},
	}
	if in.notice == nil {
		in.notice = func(string) {}
	}
	in.set = in.loader.Load()
	in.report(in.set)
	env := prompt.Environment{
		Workspace: o.workspace, Host: prompt.DetectHost(prompt.HostOptions{LookupEnv: os.LookupEnv}),
		Date: time.Now(), Model: o.model, PermissionMode: o.mode, SandboxMode: o.sandboxMode,
	}
	if o.trusted {
		in.git = prompt.TakeGitSnapshot(ctx, o.workspace, prompt.GitOptions{})
	}
	if in.git != nil {
		env.GitRepository, env.GitBranch = true, in.git.BranchText()
	} else if _, ok := prompt.FindGitRoot(o.workspace); ok {
		env.GitRepository = true
	}
	in.env = env
	return in
}

// InstructionsNotice starts the notice of each instruction file
// diagnostic ("instructions: PATH:LINE: what"), so that a front end that
// starts several sessions (the terminal UI's /resume) can show each once.
const InstructionsNotice = "instructions: "

// report passes each diagnostic to the notices once per session.
func (in *Instructions) report(s *prompt.Set) {
	if s == nil {
		return
	}
	for _, d := range s.Diagnostics {
		line := InstructionsNotice + d.String()
		if !in.reported[line] {
			in.reported[line] = true
			in.notice(line)
		}
	}
}

// framing is the session's Framing from the current parts.
func (in *Instructions) framing() Framing {
	static := prompt.Static
	if in.replace != nil {
		static = *in.replace
	}
	sections := []prompt.Section{{Text: in.append}, {Text: in.skills}}
	names := make([]string, 0, len(in.mcp))
	for n := range in.mcp {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sections = append(sections, prompt.MCPInstructions(n, in.mcp[n]))
	}
	empty := ""
	rest := prompt.SystemPrompt(prompt.SystemPromptOptions{Replace: &empty, Environment: in.env, Sections: sections})
	return Framing{
		System:       []string{static, rest},
		StaticSystem: 1,
		Context:      prompt.ContextMessage(prompt.ContextOptions{Instructions: in.set, Git: in.git}),
	}
}

// bind makes s the session whose framing follows these instructions.
func (in *Instructions) bind(s *Session) {
	in.mu.Lock()
	in.session = s
	in.mu.Unlock()
}

// update rebuilds the bound session's framing.
func (in *Instructions) update() {
	in.mu.Lock()
	s, f := in.session, in.framing()
	in.mu.Unlock()
	if s != nil {
		s.SetFraming(f)
	}
}

// Files are the loaded files, the files left out over the limit, and the
// problems, as of the last load (for /memory and /context).
func (in *Instructions) Files() *prompt.Set {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.set
}

// Reload reads the instruction files again from disk and puts them in the
// context message of the following requests (/memory reload; after a
// compaction).
func (in *Instructions) Reload() *prompt.Set {
	set := in.loader.Load()
	in.mu.Lock()
	in.set = set
	in.mu.Unlock()
	in.report(set)
	in.update()
	return set
}

// setMCP puts the connected MCP servers' instructions in the system
// prompt.
func (in *Instructions) setMCP(byServer map[string]string) {
	in.mu.Lock()
	same := len(byServer) == len(in.mcp)
	for k, v := range byServer {
		same = same && in.mcp[k] == v
	}
	in.mcp = byServer
	in.mu.Unlock()
	if !same {
		in.update()
	}
}

// attach is the text a file tool's result gets for the instruction files
// below the workspace that path reached (each once per session).
func (in *Instructions) attach(path string) string {
	set := in.loader.Attach(path)
	if set == nil {
		return ""
	}
	in.report(set)
	return prompt.AttachmentText(set)
}

// SetModelAndMode puts a new model or permission mode in the environment
// block (/model, /permissions), so that the model is never told a stale
// one; a provider's cache of the system prompt starts again from there.
func (in *Instructions) SetModelAndMode(model, mode string) {
	in.mu.Lock()
	same := in.env.Model == model && in.env.PermissionMode == mode
	in.env.Model, in.env.PermissionMode = model, mode
	in.mu.Unlock()
	if !same {
		in.update()
	}
}

// CompactInstructions are the "Compact Instructions" sections of the
// loaded instruction files (a heading of that name, to the next heading
// of its level or higher), which the summary request carries
// (docs/reference/runtime.md, "Context management").
func (in *Instructions) CompactInstructions() string {
	set := in.Files()
	if set == nil {
		return ""
	}
	var out []string
	for _, f := range set.Files {
		out = append(out, compactSections(f.Text)...)
	}
	return strings.Join(out, "\n\n")
}

// compactSections finds the "Compact Instructions" sections of a Markdown
// text, outside code fences.
func compactSections(text string) []string {
	var out []string
	var cur []string
	level, fence := 0, false
	flush := func() {
		if level > 0 {
			if s := strings.TrimSpace(strings.Join(cur, "\n")); s != "" {
				out = append(out, s)
			}
		}
		cur, level = nil, 0
	}
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = !fence
		}
		if !fence && strings.HasPrefix(line, "#") {
			n := len(line) - len(strings.TrimLeft(line, "#"))
			title := strings.TrimSpace(line[n:])
			if level > 0 && n <= level {
				flush()
			}
			if level == 0 && strings.EqualFold(title, "Compact Instructions") {
				level = n
				continue
			}
		}
		if level > 0 {
			cur = append(cur, line)
		}
	}
	flush()
	return out
}
