package extend

import (
	"fmt"
	"strings"
)

// Command is a custom slash command (commands/**/*.md): /Name runs its
// body as the prompt.
type Command struct {
	// Name is the file's name without .md; Qualified is "folder:name"
	// for a command in a subfolder (always reachable that way).
	Name, Qualified string
	// Folder labels the description: "(project:frontend)".
	Folder       string
	Description  string
	ArgumentHint string
	AllowedTools []string // rules pre-approved for the command's turn
	Model        string
	File         string
	Scope        Scope
	Problems     []Problem
	Fatal        bool
	// Shadowed names the command that takes this one's plain name ("").
	Shadowed string
	// inside is where a project's file must still lead when it is read
	// (root.inside); "" for the user's.
	inside string
}

// Usable reports whether the command can run (by one of its names).
func (c *Command) Usable() bool { return !c.Fatal }

// Label is what the slash menu shows after the description:
// "(project:frontend)", "(user)".
func (c *Command) Label() string {
	if c.Folder != "" {
		return "(" + string(c.Scope) + ":" + c.Folder + ")"
	}
	return "(" + string(c.Scope) + ")"
}

// Body reads the command's body (its file is read now, not at discovery).
func (c *Command) Body() (string, error) { return readBody(c.File, c.inside) }

var commandKeys = []string{"description", "argument-hint", "allowed-tools", "model", "disable-model-invocation"}

func discoverCommands(o Options, cat *Catalog) []*Command {
	var out []*Command
	taken := map[string]*Command{}
	for _, r := range roots(o, "commands") {
		for _, f := range listMarkdown(r, true, cat) {
			c := readCommand(f, r.scope)
			c.inside = r.inside
			if prev := taken[c.Name]; prev != nil {
				// The plain name stays with the first (project over
				// user; the top folder first); this one is reachable as
				// folder:name, or not at all.
				c.Shadowed = prev.File
				if c.Qualified == "" {
					c.Problems = append(c.Problems, Problem{0, fmt.Sprintf("/%s is taken by %s; this one cannot be reached", c.Name, prev.File)})
					c.Fatal = true
				}
			} else if c.Usable() {
				taken[c.Name] = c
			}
			out = append(out, c)
		}
	}
	return out
}

func readCommand(f mdFile, scope Scope) *Command {
	c := &Command{Name: f.name, Folder: f.folder, File: f.path, Scope: scope}
	if f.folder != "" {
		c.Qualified = strings.ReplaceAll(f.folder, "/", ":") + ":" + f.name
	}
	if !validName(f.name) {
		c.Problems = append(c.Problems, Problem{0, "the file name must be a command name (letters, digits, -, _, .)"})
		c.Fatal = true
		return c
	}
	fr, err := readFront(f.path)
	fields, probs, size := fr.fields, fr.probs, fr.bodySize
	if err != nil {
		c.Problems, c.Fatal = append(c.Problems, Problem{0, err.Error()}), true
		return c
	}
	c.Problems = append(c.Problems, probs...)
	m, unknown := fieldMap(fields, commandKeys...)
	c.Problems = append(c.Problems, unknown...)
	c.Description = m["description"].Str
	c.ArgumentHint = m["argument-hint"].Str
	if f := m["argument-hint"]; f.IsList {
		c.ArgumentHint = f.Raw // "[message]" is a hint, not a list
	}
	c.AllowedTools = m["allowed-tools"].Strings()
	c.Model = m["model"].Str
	if c.Description == "" {
		// Claude Code shows the body's first line.
		line, _, _ := strings.Cut(strings.TrimSpace(fr.bodyHead), "\n")
		c.Description = strings.TrimSpace(strings.TrimLeft(line, "# "))
	}
	if size > MaxBody {
		c.Problems = append(c.Problems, Problem{0, fmt.Sprintf("the body is over %d KiB", MaxBody>>10)})
		c.Fatal = true
	}
	return c
}
