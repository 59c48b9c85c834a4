package agent

// Custom commands and skills in a workspace session
// (docs/reference/runtime.md, "Subagents, commands and skills"): /name
// runs a command's body (its arguments, @path files and !`command`
// output filled in) as the prompt of a turn with its allowed-tools
// pre-approved; skills are named in the system prompt and loaded by the
// Skill tool or /name.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"agent/agent/extend"
	"agent/agent/tools"
	"agent/config"
	"agent/internal/quote"
	"agent/internal/securefile"
	"agent/providers"
)

// Bounds of what a command's body pulls in.
const (
	skillsBudget  = 8 << 10  // the skills' lines in the system prompt
	maxBangOutput = 16 << 10 // one !`command`'s output
)

// catalogProblems are the catalog's problems as notices, one per line with
// the file.
func catalogProblems(c *extend.Catalog) []string {
	var out []string
	add := func(file string, probs []extend.Problem) {
		for _, p := range probs {
			out = append(out, file+": "+p.String())
		}
	}
	// Entries that are not permission rules (the front matter reader does
	// not know the rule syntax).
	badRules := func(file, key string, entries []string, effect string) {
		for _, e := range entries {
			if _, err := config.ParseRule(e); err != nil {
				out = append(out, fmt.Sprintf("%s: %s entry %s is not a permission rule (%v); %s", file, key, quote.Q(e), err, effect))
			}
		}
	}
	for _, a := range c.Agents {
		add(a.File, a.Problems)
		badRules(a.File, "disallowedTools", a.DisallowedTools, "the agent does not start")
	}
	for _, cmd := range c.Commands {
		add(cmd.File, cmd.Problems)
		badRules(cmd.File, "allowed-tools", cmd.AllowedTools, "it allows nothing")
		if cmd.Shadowed != "" && cmd.Usable() {
			out = append(out, fmt.Sprintf("%s: /%s is %s's; this one is /%s", cmd.File, cmd.Name, cmd.Shadowed, cmd.Qualified))
		}
	}
	for _, s := range c.Skills {
		add(s.File, s.Problems)
		if s.Shadowed != "" {
			out = append(out, fmt.Sprintf("%s: the skill %s of %s wins over this one", s.File, s.Name, s.Shadowed))
		}
	}
	out = append(out, c.Problems...)
	return out
}

func usableSkills(c *extend.Catalog) []*extend.Skill {
	var out []*extend.Skill
	for _, s := range c.Skills {
		if s.Usable() {
			out = append(out, s)
		}
	}
	return out
}

// SlashCommand is one entry of the slash menu beyond the built-in
// commands: a custom command or a skill.
type SlashCommand struct {
	Name, Description, ArgumentHint string
}

// SlashCommands are the custom commands (by every name they answer to)
// and the skills, for the slash menu and /help.
func (c *WorkspaceSession) SlashCommands() []SlashCommand {
	var out []SlashCommand
	for _, cmd := range c.Catalog.Commands {
		if !cmd.Usable() {
			continue
		}
		desc := strings.TrimSpace(cmd.Description + " " + cmd.Label())
		if cmd.Shadowed == "" {
			out = append(out, SlashCommand{Name: "/" + cmd.Name, Description: desc, ArgumentHint: cmd.ArgumentHint})
		}
		if cmd.Qualified != "" {
			out = append(out, SlashCommand{Name: "/" + cmd.Qualified, Description: desc, ArgumentHint: cmd.ArgumentHint})
		}
	}
	for _, s := range usableSkills(c.Catalog) {
		out = append(out, SlashCommand{Name: "/" + s.Name, Description: oneLine(s.Description, 80) + " (skill)", ArgumentHint: s.ArgumentHint})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// CommandTurn is the turn of /name args: a custom command or a skill. ok
// is false when no command or skill has that name.
func (c *WorkspaceSession) CommandTurn(ctx context.Context, name, args string) (TurnRequest, bool, error) {
	name = strings.TrimPrefix(name, "/")
	display := "/" + name
	if args != "" {
		display += " " + args
	}
	if cmd := c.Catalog.Command(name); cmd != nil {
		body, err := cmd.Body()
		if err != nil {
			return TurnRequest{}, true, err
		}
		allow := rulesOf(cmd.AllowedTools)
		prompt := c.expand(ctx, extend.Arguments(body, args), allow)
		return TurnRequest{Prompt: prompt, Display: display, Allow: allow, Model: c.commandModel(cmd.Model)}, true, nil
	}
	if s := c.Catalog.Skill(name); s != nil {
		prompt, err := c.loadSkill(s, args)
		if err != nil {
			return TurnRequest{}, true, err
		}
		return TurnRequest{Prompt: prompt, Display: display, Allow: rulesOf(s.AllowedTools)}, true, nil
	}
	return TurnRequest{}, false, nil
}

// commandModel is the model a command's model key names ("" keeps the
// session's): an alias of the provider's catalog, or a model id.
func (c *WorkspaceSession) commandModel(m string) string {
	if m == "" || m == "inherit" {
		return ""
	}
	if strings.ContainsAny(m, "-./:") {
		return m
	}
	return aliasModel(c.Model.ProviderID, m)
}

// rulesOf reads allowed-tools entries as rules; an entry that is not a
// rule allows nothing (catalogProblems reported it).
func rulesOf(entries []string) []config.Rule {
	var out []config.Rule
	for _, e := range entries {
		if r, err := config.ParseRule(e); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// expand fills a body's @path files and runs its !`command` lines
// through the Bash tool, the permission rules (with the command's
// allowed-tools) and the hooks; a command that does not run leaves why.
// The files are read first and put in last: a !`command` written in a
// mentioned file (a README, say) stays its text and never runs, and a
// command's output names no file to attach.
func (c *WorkspaceSession) expand(ctx context.Context, body string, allow []config.Rule) string {
	var files []string
	total := 0
	body = strings.ReplaceAll(body, "\x00", "") // NUL marks the files below
	body = extend.Mentions(body, func(p string) string {
		files = append(files, c.mentionText(p, len(files), &total))
		return fileMark(len(files) - 1)
	})
	if len(extend.Commands(body)) > 0 {
		body = extend.RunCommands(body, func(cmd string) string {
			args, _ := json.Marshal(map[string]string{"command": cmd, "description": "a custom command's !`command`"})
			t := &Turn{ID: c.Session.ID() + "/command", Req: TurnRequest{Allow: allow}, ctx: ctx}
			r := c.Session.callTool(ctx, t, providers.ToolCall{ID: "command", Name: "Bash", Arguments: args}, false)
			out := strings.ReplaceAll(r.Content, "\x00", "") // no mark of a file
			if len(out) > maxBangOutput {
				out = quote.PrefixN(out, maxBangOutput) + "\n[output cut]"
			}
			if r.IsError {
				return fmt.Sprintf("[!`%s` did not run: %s]", cmd, out)
			}
			return out
		})
	}
	// One pass: a file's text is not searched again for the marks after
	// it.
	marks := make([]string, 0, 2*len(files))
	for i, f := range files {
		marks = append(marks, fileMark(i), f)
	}
	return strings.NewReplacer(marks...).Replace(body)
}

// fileMark holds a mentioned file's place in a body until the commands
// have run (NUL: no text file holds one, and command output is cleared of
// it).
func fileMark(i int) string { return "\x00" + strconv.Itoa(i) + "\x00" }

// mentionText is what an @path of a command becomes: the file's text, or
// a note why not (outside the workspace, missing, a folder, binary, over
// 256 KiB, past the files or the 1 MiB one prompt attaches), read as an @
// mention of a prompt is (readMention: no FIFO waited on). n is how many
// the body mentioned before; total counts the bytes attached.
func (c *WorkspaceSession) mentionText(p string, n int, total *int) string {
	path, ok := mentionPath(c.Workspace, c.Home, p)
	if !ok {
		return "@" + p
	}
	real, err := securefile.RealPath("", path)
	if err != nil || !tools.WithinDir(real, c.Workspace) {
		return "@" + p + " [not attached: it is outside the workspace]"
	}
	if n >= maxFileMentions {
		return fmt.Sprintf("@%s [not attached: at most %d files are attached to one prompt]", p, maxFileMentions)
	}
	data, why := readMention(real)
	switch {
	case why == "" && *total+len(data) > maxMentionTotal:
		why = "the files attached to this prompt would exceed 1 MiB"
	case why == "" && (!utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0):
		why = "it is a binary file"
	}
	if why != "" {
		return "@" + p + " [not attached: " + why + "]"
	}
	*total += len(data)
	return extend.FileBlock(p, string(data))
}

// loadSkill is a skill's body for a turn or the Skill tool: its folder
// named (and allowed for Read for the rest of the session), its
// arguments filled.
func (c *WorkspaceSession) loadSkill(s *extend.Skill, args string) (string, error) {
	body, err := s.Body()
	if err != nil {
		return "", err
	}
	if r, err := config.ParseRule("Read(" + s.Dir + "/**)"); err == nil {
		c.Permissions.AllowForSession(r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The skill %s (its folder is %s; the files beside SKILL.md are readable with Read", s.Name, s.Dir)
	if files := skillFiles(s.Dir); len(files) > 0 {
		b.WriteString(": " + strings.Join(files, ", "))
	}
	b.WriteString("):\n\n")
	b.WriteString(extend.Arguments(body, args))
	if args != "" && !strings.Contains(body, "$ARGUMENTS") && !strings.Contains(body, "$1") {
		b.WriteString("\n\nArguments: " + args)
	}
	return b.String(), nil
}

// skillFiles lists the files beside SKILL.md (at most 50, two levels).
func skillFiles(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || len(out) >= 50 {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if strings.Count(rel, "/") >= 1 {
				return filepath.SkipDir
			}
			return nil
		}
		if rel != "SKILL.md" {
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// skillTool is the Skill tool: the model loads a skill by name.
type skillTool struct{ c *WorkspaceSession }

func (t *skillTool) Spec() tools.Spec {
	return tools.Spec{Name: "Skill", Risk: tools.RiskInspect,
		Description: "Load a skill: its instructions for a kind of task, by the name the system prompt lists. Call it before you start a task a skill's description matches.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"skill":{"type":"string","minLength":1,"description":"The skill's name"},"args":{"type":"string","description":"Arguments for the skill, if it takes any"}},"required":["skill"],"additionalProperties":false}`)}
}

func (t *skillTool) Target(json.RawMessage) (tools.Target, error) { return tools.Target{}, nil }

func (t *skillTool) Run(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct{ Skill, Args string }
	if err := json.Unmarshal(raw, &a); err != nil {
		return tools.Result{IsError: true, Content: "Skill: " + err.Error()}
	}
	s := t.c.Catalog.Skill(strings.TrimPrefix(a.Skill, "/"))
	if s == nil {
		var names []string
		for _, s := range usableSkills(t.c.Catalog) {
			names = append(names, s.Name)
		}
		return tools.Result{IsError: true, Content: fmt.Sprintf("There is no skill %q. Skills: %s.", a.Skill, strings.Join(names, ", "))}
	}
	text, err := t.c.loadSkill(s, a.Args)
	if err != nil {
		return tools.Result{IsError: true, Content: "Skill: " + err.Error()}
	}
	return tools.Result{Content: text}
}

// skillsSection is the system prompt's part that names the skills.
func skillsSection(c *extend.Catalog) string {
	skills := usableSkills(c)
	if len(skills) == 0 {
		return ""
	}
	return extend.SkillsPrompt(skills, skillsBudget)
}
