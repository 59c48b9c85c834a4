package extend

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Agent is a subagent definition (agents/*.md): the front matter's keys
// and, as the child's system prompt, the body.
type Agent struct {
	Name, Description string
	// Tools, when HasTools, are the only tools the child gets (a subset of
	// the parent's); DisallowedTools are removed.
	Tools           []string
	HasTools        bool
	DisallowedTools []string
	Model           string // "", "inherit", an alias or a model id
	PermissionMode  string // "" or a mode; the child's mode is the stricter
	MaxTurns        int    // model calls of the child's turn; 0: the default
	// Prompt is the child's system prompt: the body, read when the agent
	// is spawned (PromptText), or set directly (--agents).
	Prompt string
	File   string
	Scope  Scope
	// Builtin: general-purpose or Explore.
	Builtin bool
	// Problems are what is wrong with the file; Fatal ones make it
	// unusable.
	Problems []Problem
	Fatal    bool
	// Shadowed names the definition that wins over this one ("").
	Shadowed string
	// inside is where a project's file must still lead when it is read
	// (root.inside); "" for the user's.
	inside string
}

// PromptText is the definition's body, read from its file at each spawn
// (not kept: subagents of one answer start together, and the file is
// small).
func (a *Agent) PromptText() (string, error) {
	if a.Prompt != "" || a.Builtin || a.File == "" || a.Scope == "flag" {
		return a.Prompt, nil
	}
	body, err := readBody(a.File, a.inside)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(body), nil
}

// Usable reports whether the definition can be spawned.
func (a *Agent) Usable() bool { return !a.Fatal && a.Shadowed == "" }

// Built-in subagents (docs/reference/runtime.md, "Subagents, commands and
// skills").
var builtinAgents = []*Agent{
	{Name: "general-purpose", Builtin: true,
		Description: "A general agent for research and multi-step work: searches, reads, runs commands and changes files with every tool but Agent, and returns one report."},
	{Name: "Explore", Builtin: true, HasTools: true, Tools: []string{"Read", "Glob", "Grep", "WebFetch"},
		Description: "A fast read-only agent for exploring a codebase: finds files, searches code and reads it (Read, Glob, Grep, WebFetch; no instruction files), and returns what it found."},
}

// agentKeys are the front matter keys of a definition.
var agentKeys = []string{"name", "description", "tools", "disallowedTools", "model", "permissionMode", "maxTurns", "color"}

func discoverAgents(o Options, c *Catalog) []*Agent {
	var out []*Agent
	for _, b := range builtinAgents {
		cp := *b
		out = append(out, &cp)
	}
	for _, r := range roots(o, "agents") {
		for _, f := range listMarkdown(r, false, c) {
			a := readAgent(f.path, r.scope)
			a.inside = r.inside
			for _, prev := range out {
				// A definition that cannot be used replaces nothing (a
				// broken Explore.md leaves the built-in Explore).
				if prev.Name == a.Name && a.Name != "" && prev.Usable() && !a.Fatal {
					a.Shadowed = prev.File
					if prev.Builtin {
						a.Shadowed = "the built-in " + prev.Name
						// A user's definition of a built-in name replaces it.
						prev.Shadowed, a.Shadowed = a.File, ""
					}
					break
				}
			}
			out = append(out, a)
		}
	}
	return out
}

// ParseAgent reads a definition from its text.
func ParseAgent(text, file string, scope Scope) *Agent {
	fields, body, probs := ParseFrontMatter(text)
	a := agentFromFields(fields, probs, file, scope)
	a.Prompt = strings.TrimSpace(body)
	if len(body) > MaxBody {
		a.Problems, a.Fatal = append(a.Problems, Problem{0, fmt.Sprintf("the body is over %d KiB", MaxBody>>10)}), true
	}
	return a
}

// agentFromFields reads a definition's front matter.
func agentFromFields(fields []Field, probs []Problem, file string, scope Scope) *Agent {
	a := &Agent{File: file, Scope: scope, Problems: probs}
	m, unknown := fieldMap(fields, agentKeys...)
	a.Problems = append(a.Problems, unknown...)
	fatal := func(line int, msg string) {
		a.Problems = append(a.Problems, Problem{line, msg})
		a.Fatal = true
	}
	a.Name = m["name"].Str
	a.Description = m["description"].Str
	switch {
	case fields == nil:
		fatal(0, "no front matter: a definition starts with --- and needs name and description")
	case a.Name == "":
		fatal(m["name"].Line, "the name is missing")
	case !validName(a.Name):
		fatal(m["name"].Line, "the name "+strconv.Quote(a.Name)+" may hold only letters, digits, '-', '_' and '.'")
	}
	if a.Description == "" && fields != nil {
		fatal(m["description"].Line, "the description is missing (the model chooses an agent by it)")
	}
	if f, ok := m["tools"]; ok {
		a.Tools, a.HasTools = f.Strings(), true
	}
	if f, ok := m["disallowedTools"]; ok {
		a.DisallowedTools = f.Strings()
	}
	a.Model = m["model"].Str
	if f, ok := m["permissionMode"]; ok {
		switch f.Str {
		case "default", "plan", "acceptEdits", "bypassPermissions":
			a.PermissionMode = f.Str
		default:
			a.Problems = append(a.Problems, Problem{f.Line, "permissionMode must be default, plan, acceptEdits or bypassPermissions; ignored"})
		}
	}
	if f, ok := m["maxTurns"]; ok {
		n, err := strconv.Atoi(f.Str)
		if err != nil || n < 1 || n > 1000 {
			a.Problems = append(a.Problems, Problem{f.Line, "maxTurns must be a whole number from 1 to 1000; ignored"})
		} else {
			a.MaxTurns = n
		}
	}
	return a
}

func readAgent(path string, scope Scope) *Agent {
	fr, err := readFront(path)
	fields, probs, size := fr.fields, fr.probs, fr.bodySize
	if err != nil {
		return &Agent{File: path, Scope: scope, Fatal: true, Problems: []Problem{{0, err.Error()}}, Name: strings.TrimSuffix(pathBase(path), ".md")}
	}
	a := agentFromFields(fields, probs, path, scope)
	if size > MaxBody {
		a.Problems, a.Fatal = append(a.Problems, Problem{0, fmt.Sprintf("the body is over %d KiB", MaxBody>>10)}), true
	}
	return a
}

func pathBase(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// ParseAgentsJSON reads the --agents flag: Claude Code's JSON object of
// definitions, {"name": {"description", "prompt", "tools",
// "disallowedTools", "model", "permissionMode", "maxTurns"}}. A bad
// definition is an error naming it and the field.
func ParseAgentsJSON(data string) ([]*Agent, error) {
	var raw map[string]struct {
		Description     string   `json:"description"`
		Prompt          string   `json:"prompt"`
		Tools           []string `json:"tools"`
		DisallowedTools []string `json:"disallowedTools"`
		Model           string   `json:"model"`
		PermissionMode  string   `json:"permissionMode"`
		MaxTurns        int      `json:"maxTurns"`
	}
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a JSON object of agent definitions: %v", err)
	}
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []*Agent
	for _, n := range names {
		d := raw[n]
		switch {
		case !validName(n):
			return nil, fmt.Errorf("agent %q: the name may hold only letters, digits, '-', '_' and '.'", n)
		case d.Description == "":
			return nil, fmt.Errorf("agent %s: description is missing", n)
		case d.Prompt == "":
			return nil, fmt.Errorf("agent %s: prompt is missing", n)
		case len(d.Prompt) > MaxBody:
			return nil, fmt.Errorf("agent %s: the prompt is over %d KiB", n, MaxBody>>10)
		case d.MaxTurns < 0 || d.MaxTurns > 1000:
			return nil, fmt.Errorf("agent %s: maxTurns must be from 1 to 1000", n)
		}
		switch d.PermissionMode {
		case "", "default", "plan", "acceptEdits", "bypassPermissions":
		default:
			return nil, fmt.Errorf("agent %s: permissionMode must be default, plan, acceptEdits or bypassPermissions", n)
		}
		out = append(out, &Agent{Name: n, Description: d.Description, Prompt: d.Prompt, Tools: d.Tools, HasTools: d.Tools != nil,
			DisallowedTools: d.DisallowedTools, Model: d.Model, PermissionMode: d.PermissionMode, MaxTurns: d.MaxTurns,
			File: "--agents", Scope: "flag"})
	}
	return out, nil
}
