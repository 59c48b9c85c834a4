package extend

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Skill is an Agent Skills folder: SKILL.md (front matter name,
// description, allowed-tools; the body loaded when used) and the files
// beside it.
type Skill struct {
	Name, Description string
	ArgumentHint      string
	AllowedTools      []string
	Dir, File         string
	Scope             Scope
	Problems          []Problem
	Fatal             bool
	Shadowed          string
	// inside is where a project's file must still lead when it is read
	// (root.inside); "" for the user's.
	inside string
}

// Usable reports whether the skill can be invoked.
func (s *Skill) Usable() bool { return !s.Fatal && s.Shadowed == "" }

// Body reads SKILL.md's body.
func (s *Skill) Body() (string, error) { return readBody(s.File, s.inside) }

var skillKeys = []string{"name", "description", "allowed-tools", "argument-hint", "license", "metadata", "model", "disable-model-invocation", "user-invocable"}

func discoverSkills(o Options, cat *Catalog) []*Skill {
	var out []*Skill
	taken := map[string]*Skill{}
	for _, r := range roots(o, "skills") {
		ents, err := os.ReadDir(r.dir)
		if err != nil {
			if !os.IsNotExist(err) {
				cat.Problems = append(cat.Problems, fmt.Sprintf("%s: %v", r.dir, unwrap(err)))
			}
			continue
		}
		sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
		for i, e := range ents {
			if i >= maxEntries || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			dir := filepath.Join(r.dir, e.Name())
			if e.Type()&fs.ModeSymlink != 0 {
				fi, why := r.follow(dir)
				if why != "" {
					cat.Problems = append(cat.Problems, fmt.Sprintf("%s: %s; skipped", dir, why))
					continue
				}
				if !fi.IsDir() {
					continue
				}
			} else if !e.IsDir() {
				continue
			}
			file := filepath.Join(dir, "SKILL.md")
			if li, err := os.Lstat(file); err == nil && li.Mode()&fs.ModeSymlink != 0 {
				if _, why := r.follow(file); why != "" {
					cat.Problems = append(cat.Problems, fmt.Sprintf("%s: %s; skipped", file, why))
					continue
				}
			}
			if _, err := fileInfo(file); err != nil {
				cat.Problems = append(cat.Problems, fmt.Sprintf("%s: a skill folder without SKILL.md; skipped", dir))
				continue
			}
			s := readSkill(dir, file, e.Name(), r.scope)
			s.inside = r.inside
			if prev := taken[s.Name]; prev != nil {
				s.Shadowed = prev.File
			} else if s.Usable() {
				taken[s.Name] = s
			}
			out = append(out, s)
		}
	}
	return out
}

func readSkill(dir, file, folder string, scope Scope) *Skill {
	s := &Skill{Dir: dir, File: file, Scope: scope, Name: folder}
	fr, err := readFront(file)
	fields, probs, size := fr.fields, fr.probs, fr.bodySize
	if err != nil {
		s.Problems, s.Fatal = []Problem{{0, err.Error()}}, true
		return s
	}
	s.Problems = probs
	m, unknown := fieldMap(fields, skillKeys...)
	s.Problems = append(s.Problems, unknown...)
	if n := m["name"].Str; n != "" {
		s.Name = n
	} else {
		s.Problems = append(s.Problems, Problem{0, "the name is missing; the folder's name " + folder + " is used"})
	}
	if !validName(s.Name) {
		s.Problems, s.Fatal = append(s.Problems, Problem{m["name"].Line, "the name may hold only letters, digits, '-', '_' and '.'"}), true
	}
	s.Description = m["description"].Str
	if s.Description == "" {
		s.Problems, s.Fatal = append(s.Problems, Problem{0, "the description is missing (the model chooses a skill by it)"}), true
	}
	s.AllowedTools = m["allowed-tools"].Strings()
	s.ArgumentHint = m["argument-hint"].Str
	if f := m["argument-hint"]; f.IsList {
		s.ArgumentHint = f.Raw
	}
	if size > MaxBody {
		s.Problems, s.Fatal = append(s.Problems, Problem{0, fmt.Sprintf("the body of SKILL.md is over %d KiB", MaxBody>>10)}), true
	}
	return s
}

// SkillsPrompt is the system prompt's list of the usable skills, names and
// descriptions, within budget bytes; the skills left out over it are
// named in a last line.
func SkillsPrompt(skills []*Skill, budget int) string {
	var b strings.Builder
	b.WriteString("# Skills\n\nSkills are instructions for particular tasks. When a task matches a skill's description, call the Skill tool with its name to load it before you start; files beside a skill are readable with Read.\n\n")
	left := 0
	for _, s := range skills {
		if !s.Usable() {
			continue
		}
		line := "- " + s.Name + ": " + oneLine(s.Description) + "\n"
		if b.Len()+len(line) > budget {
			left++
			continue
		}
		b.WriteString(line)
	}
	if left > 0 {
		fmt.Fprintf(&b, "(%d more skills are left out here; /skills lists them.)\n", left)
	}
	return b.String()
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 1024 {
		s = s[:1024] + "…"
	}
	return s
}
