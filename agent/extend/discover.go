package extend

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"agent/internal/securefile"
)

// Limits of the files read (docs/reference/runtime.md, "Subagents, commands
// and skills").
const (
	// MaxBody is the largest body of a definition, command or skill.
	MaxBody = 64 << 10
	// headRead is room for a front matter: discovery reads the first
	// headFirst bytes of a file, more only when its front matter is not
	// closed by then; the body is read when used.
	headRead  = 8 << 10
	headFirst = 1 << 10
	// maxEntries bounds the files one folder may hold.
	maxEntries = 2000
)

// Options say where to look.
type Options struct {
	Workspace string
	Home      string
	// Trusted: the workspace's own folders are read (project scope); a
	// workspace that is not trusted contributes nothing.
	Trusted bool
}

// Scope says where a definition comes from.
type Scope string

// Scopes: the workspace's folders win over the user's.
const (
	Project Scope = "project"
	User    Scope = "user"
)

// root is one folder of definitions.
type root struct {
	dir   string
	scope Scope
	// inside is where a link in a project's folder may lead (the
	// workspace); "" for the user's folders, whose links lead anywhere.
	inside string
}

// follow says whether the entry p of root r (a symbolic link) may be read
// through: a dotfile manager links the user's definitions from elsewhere,
// but a project's link must stay inside the workspace (a link to
// ~/.ssh/id_rsa must not become a prompt). Not, with the reason.
func (r root) follow(p string) (fs.FileInfo, string) {
	_, fi, why := r.resolve(p)
	return fi, why
}

// resolve is follow that also returns where the link leads.
func (r root) resolve(p string) (string, fs.FileInfo, string) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", nil, "a link that leads nowhere"
	}
	if r.inside != "" && real != r.inside && !strings.HasPrefix(real, strings.TrimSuffix(r.inside, "/")+"/") {
		return "", nil, "a link out of the workspace"
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", nil, "a link that leads nowhere"
	}
	return real, fi, ""
}

// roots lists the folders of kind ("agents", "commands", "skills"), of
// higher precedence first: the project's .agent, .compat (and .agents for
// skills), then the user's.
func roots(o Options, kind string) []root {
	var out []root
	add := func(base string, scope Scope) {
		if base == "" {
			return
		}
		inside := ""
		if scope == Project {
			inside = base
			if real, err := filepath.EvalSymlinks(base); err == nil {
				inside = real
			}
		}
		out = append(out, root{filepath.Join(base, ".agent", kind), scope, inside}, root{filepath.Join(base, ".compat", kind), scope, inside})
		if kind == "skills" {
			out = append(out, root{filepath.Join(base, ".agents", kind), scope, inside})
		}
	}
	if o.Trusted {
		add(o.Workspace, Project)
	}
	add(o.Home, User)
	return out
}

// Catalog is everything discovered.
type Catalog struct {
	Agents   []*Agent
	Commands []*Command
	Skills   []*Skill
	// Problems are about files and folders that gave no entry (a skill
	// folder without SKILL.md, a folder that cannot be read), as
	// "path: message".
	Problems []string
}

// Discover reads the definitions of every folder.
func Discover(o Options) *Catalog {
	c := &Catalog{}
	c.Agents = discoverAgents(o, c)
	c.Commands = discoverCommands(o, c)
	c.Skills = discoverSkills(o, c)
	return c
}

// Agent finds a usable subagent definition by name.
func (c *Catalog) Agent(name string) *Agent {
	for _, a := range c.Agents {
		if a.Name == name && a.Usable() {
			return a
		}
	}
	return nil
}

// Command finds a command by the name it is invoked with.
func (c *Catalog) Command(name string) *Command {
	for _, cmd := range c.Commands {
		if cmd.Usable() && (cmd.Name == name || cmd.Qualified == name) {
			return cmd
		}
	}
	return nil
}

// Skill finds a usable skill by name.
func (c *Catalog) Skill(name string) *Skill {
	for _, s := range c.Skills {
		if s.Name == name && s.Usable() {
			return s
		}
	}
	return nil
}

// readHead reads up to n bytes of a regular file without blocking on a
// FIFO (securefile.Open checks the type).
func readHead(path string, n int) ([]byte, int64, error) {
	f, fi, err := securefile.Open(path, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	buf := make([]byte, min(int64(n), fi.Size()))
	if _, err := io.ReadFull(f, buf); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, 0, err
	}
	return buf, fi.Size(), nil
}

// front is what readFront read of a file: its front matter, the size of
// the body after it, and the start of that body (what the head held).
type front struct {
	fields   []Field
	probs    []Problem
	bodySize int64
	bodyHead string
}

// readFront reads a file's front matter, reading its head only (the body
// is read when used).
func readFront(path string) (front, error) {
	head, size, err := readHead(path, headFirst)
	if err != nil {
		return front{}, err
	}
	fields, body, probs := ParseFrontMatter(string(head))
	if size > int64(len(head)) && strings.HasPrefix(string(head), "---") && len(fields) == 0 && len(probs) > 0 {
		// The front matter goes on past the head.
		if head, _, err = readHead(path, headRead); err == nil {
			fields, body, probs = ParseFrontMatter(string(head))
		}
	}
	return front{fields, probs, size - int64(len(head)-len(body)), body}, nil
}

// readBody reads a file whole (at most the front matter's room plus
// MaxBody) and returns its body after the front matter.
func readBody(path, inside string) (string, error) {
	from := path
	if inside != "" {
		// A project's file found inside the workspace may have become a
		// link out of it since (a command can make one): judged again,
		// and read where it was judged to lead.
		real, _, why := (root{inside: inside}).resolve(path)
		if why != "" {
			return "", fmt.Errorf("%s: %s", path, why)
		}
		from = real
	}
	data, err := securefile.ReadFile(from, MaxBody+headRead)
	if errors.Is(err, securefile.ErrTooLarge) {
		return "", fmt.Errorf("%s: the body is over %d KiB", path, MaxBody>>10)
	}
	if err != nil {
		return "", err
	}
	_, body, _ := ParseFrontMatter(string(data))
	if len(body) > MaxBody {
		return "", fmt.Errorf("%s: the body is over %d KiB", path, MaxBody>>10)
	}
	return body, nil
}

// listMarkdown lists the .md files under dir (recursively when deep), in
// name order, with their folder below dir ("" at the top).
func listMarkdown(r root, deep bool, c *Catalog) []mdFile {
	var out []mdFile
	// The folder itself, and (deep) a folder in it, may be a link: walked
	// where it leads, as a link to a file is read (WalkDir follows none).
	type walk struct{ dir, folder string }
	todo := []walk{{r.dir, ""}}
	if fi, err := os.Lstat(r.dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		real, fi, why := r.resolve(r.dir)
		switch {
		case why != "":
			c.Problems = append(c.Problems, fmt.Sprintf("%s: %s; skipped", r.dir, why))
			return nil
		case !fi.IsDir():
			return nil
		}
		todo[0].dir = real
	}
	seen := map[string]bool{}
	for len(todo) > 0 && len(seen) < maxEntries {
		w := todo[0]
		todo = todo[1:]
		if seen[w.dir] {
			continue // a loop of links
		}
		seen[w.dir] = true
		err := filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p != w.dir {
					c.Problems = append(c.Problems, fmt.Sprintf("%s: %v", p, unwrap(err)))
				}
				return nil
			}
			rel, _ := filepath.Rel(w.dir, filepath.Dir(p))
			folder := filepath.ToSlash(filepath.Join(w.folder, rel))
			if folder == "." {
				folder = ""
			}
			if d.IsDir() {
				if p != w.dir && (!deep || strings.HasPrefix(d.Name(), ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			link := d.Type()&fs.ModeSymlink != 0
			if link && deep && !strings.HasSuffix(d.Name(), ".md") && !strings.HasPrefix(d.Name(), ".") {
				if real, fi, why := r.resolve(p); why == "" && fi.IsDir() {
					todo = append(todo, walk{real, filepath.ToSlash(filepath.Join(folder, d.Name()))})
				} else if why != "" {
					c.Problems = append(c.Problems, fmt.Sprintf("%s: %s; skipped", p, why))
				}
				return nil
			}
			if !strings.HasSuffix(d.Name(), ".md") || len(out) >= maxEntries {
				return nil
			}
			if link {
				if _, why := r.follow(p); why != "" {
					c.Problems = append(c.Problems, fmt.Sprintf("%s: %s; skipped", p, why))
					return nil
				}
			}
			out = append(out, mdFile{path: p, folder: folder, name: strings.TrimSuffix(d.Name(), ".md")})
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.Problems = append(c.Problems, fmt.Sprintf("%s: %v", w.dir, unwrap(err)))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].folder == "") != (out[j].folder == "") {
			return out[i].folder == "" // the top level first
		}
		if out[i].folder != out[j].folder {
			return out[i].folder < out[j].folder
		}
		return out[i].name < out[j].name
	})
	return out
}

type mdFile struct{ path, folder, name string }

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// validName: letters, digits, '-', '_' and '.', as slash commands and
// agent types are typed.
func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// fieldMap indexes fields and reports the keys of known that are not in
// it as unknown (warned, the rest applies).
func fieldMap(fields []Field, known ...string) (map[string]Field, []Problem) {
	m := map[string]Field{}
	var probs []Problem
	for _, f := range fields {
		ok := false
		for _, k := range known {
			if f.Key == k {
				ok = true
			}
		}
		if !ok {
			probs = append(probs, Problem{f.Line, "unknown key " + strconv.Quote(f.Key) + "; ignored"})
			continue
		}
		m[f.Key] = f
	}
	return m, probs
}

// fileInfo is os.Stat, for tests' sake.
var fileInfo = os.Stat
