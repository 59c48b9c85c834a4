package extend

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseFrontMatter(t *testing.T) {
	cases := []struct {
		name   string
		text   string
		fields string // key=value|key=[a,b]
		body   string
		probs  []string
	}{
		{"none", "just a body\n", "", "just a body\n", nil},
		{"scalars", "---\nname: code-reviewer\ndescription: Reviews code for quality\n---\nBody.\n", "name=code-reviewer|description=Reviews code for quality", "Body.\n", nil},
		{"quoted", "---\na: \"x: y # z\"\nb: 'it''s'\nc: \"tab\\tnl\\n\"\n---\n", "a=x: y # z|b=it's|c=tab\tnl\n", "", nil},
		{"a comment after a plain value", "---\nmodel: sonnet # the fast one\n---\n", "model=sonnet", "", nil},
		{"Claude's comma list stays a scalar", "---\ntools: Read, Grep, Glob\n---\n", "tools=Read, Grep, Glob", "", nil},
		{"an inline list", "---\ntools: [Read, \"Bash(git status:*)\", 'Edit']\n---\n", "tools=[Read,Bash(git status:*),Edit]", "", nil},
		{"an item list", "---\nallowed-tools:\n  - Read\n  - Bash(npm test)\n---\n", "allowed-tools=[Read,Bash(npm test)]", "", nil},
		{"a literal block", "---\ndescription: |\n  line one\n  line two\nname: x\n---\n", "description=line one\nline two|name=x", "", nil},
		{"a folded block", "---\ndescription: >\n  one\n  two\n\n  three\n---\n", "description=one two\nthree", "", nil},
		{"a plain value continued", "---\ndescription: Use this agent\n  when the user asks\n---\n", "description=Use this agent when the user asks", "", nil},
		{"CRLF lines", "---\r\nname: x\r\n---\r\nbody\r\n", "name=x", "body\r\n", nil},
		{"a byte order mark", "\ufeff---\nname: x\n---\n", "name=x", "", nil},
		{"not closed", "---\nname: x\n", "", "---\nname: x\n", []string{"line 1: the front matter is not closed"}},
		{"a line that is not key: value", "---\nname: x\njust words\n---\n", "name=x", "", []string{"line 3: not a `key: value` line"}},
		{"an unclosed quote", "---\nname: \"x\nb: y\n---\n", "b=y", "", []string{"line 2: a double-quoted value without its closing quote"}},
		{"an unclosed inline list", "---\ntools: [a, b\n---\n", "", "", []string{"line 2: an inline list without its closing ]"}},
		{"a key twice", "---\nname: a\nname: b\n---\n", "name=b", "", []string{"line 3: the key name appears twice"}},
		{"an empty front matter", "---\n---\nbody", "", "body", nil},
		{"the dots end", "---\nname: x\n...\nbody", "name=x", "body", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fields, body, probs := ParseFrontMatter(c.text)
			var got []string
			for _, f := range fields {
				if f.IsList {
					got = append(got, f.Key+"=["+strings.Join(f.List, ",")+"]")
				} else {
					got = append(got, f.Key+"="+f.Str)
				}
			}
			if g := strings.Join(got, "|"); g != c.fields {
				t.Errorf("fields %q, want %q", g, c.fields)
			}
			if body != c.body {
				t.Errorf("body %q, want %q", body, c.body)
			}
			if len(probs) != len(c.probs) {
				t.Fatalf("problems %v, want %v", probs, c.probs)
			}
			for i, p := range probs {
				if !strings.HasPrefix(p.String(), c.probs[i]) {
					t.Errorf("problem %q, want %q", p, c.probs[i])
				}
			}
		})
	}
}

// FuzzParseFrontMatter: any text reads without a panic, and the body is a
// suffix of the text.
func FuzzParseFrontMatter(f *testing.F) {
	f.Add("---\nname: x\ntools: [a, 'b']\nd: |\n  l\n---\nbody")
	f.Add("---\n- a\n  b\nk:\n  - 'x''y'\n---\n")
	f.Add("---\nk: \"\\")
	f.Fuzz(func(t *testing.T, text string) {
		fields, body, _ := ParseFrontMatter(text)
		if !strings.HasSuffix(strings.TrimPrefix(text, "\ufeff"), body) {
			t.Fatalf("the body %q is not the end of the text", body)
		}
		for _, f := range fields {
			if !validKey(f.Key) {
				t.Fatalf("key %q", f.Key)
			}
		}
	})
}

// write creates files under root: path → content.
func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDiscoverAgents(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	write(t, ws, map[string]string{
		// Claude Code's documented shape.
		".compat/agents/code-reviewer.md": "---\nname: code-reviewer\ndescription: Expert code review specialist. Use proactively after writing code.\ntools: Read, Grep, Glob, Bash\nmodel: inherit\ncolor: blue\n---\nYou are a senior code reviewer.\n",
		".agent/agents/planner.md":        "---\nname: planner\ndescription: Plans work\ndisallowedTools: [Bash]\npermissionMode: plan\nmaxTurns: 12\nunknownKey: 1\n---\nPlan it.\n",
		".agent/agents/broken.md":         "---\ndescription: no name here\n---\n",
		".agent/agents/nofront.md":        "just text",
		".agent/agents/huge.md":           "---\nname: huge\ndescription: d\n---\n" + strings.Repeat("x", MaxBody+10),
	})
	write(t, home, map[string]string{
		".agent/agents/planner.md":  "---\nname: planner\ndescription: the user's planner\n---\nUser plan.\n",
		".compat/agents/Explore.md": "---\nname: Explore\ndescription: my own explorer\ntools: Read\n---\nExplore my way.\n",
	})
	c := Discover(Options{Workspace: ws, Home: home, Trusted: true})
	got := map[string]*Agent{}
	for _, a := range c.Agents {
		if a.Usable() {
			got[a.Name] = a
		}
	}
	if a := got["code-reviewer"]; a == nil || !a.HasTools || strings.Join(a.Tools, ",") != "Read,Grep,Glob,Bash" || a.Model != "inherit" || a.Prompt != "" {
		t.Errorf("code-reviewer %+v", a)
	}
	if p, err := got["code-reviewer"].PromptText(); p != "You are a senior code reviewer." || err != nil {
		t.Errorf("the body read when spawned: %q %v", p, err)
	}
	if a := got["code-reviewer"]; a == nil {
		t.Errorf("code-reviewer %+v", a)
	}
	if a := got["planner"]; a == nil || a.Scope != Project || a.PermissionMode != "plan" || a.MaxTurns != 12 || a.DisallowedTools[0] != "Bash" || len(a.Problems) != 1 {
		t.Errorf("planner %+v", a)
	}
	if a := got["Explore"]; a == nil || a.Builtin {
		t.Errorf("a user's Explore does not replace the built-in: %+v", a)
	}
	if got["general-purpose"] == nil || !got["general-purpose"].Builtin {
		t.Error("general-purpose is missing")
	}
	for _, name := range []string{"broken", "nofront", "huge"} {
		found := false
		for _, a := range c.Agents {
			if strings.Contains(a.File, name) {
				found = true
				if a.Usable() || len(a.Problems) == 0 {
					t.Errorf("%s is usable: %+v", name, a)
				}
			}
		}
		if !found {
			t.Errorf("%s is not listed", name)
		}
	}
	// An untrusted workspace's agents are not read.
	if a := Discover(Options{Workspace: ws, Home: home}).Agent("code-reviewer"); a != nil {
		t.Error("an untrusted workspace's agent was read")
	}
	if builtinAgents[1].Shadowed != "" {
		t.Error("discovery changed the built-in definitions")
	}
}

func TestDiscoverCommands(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	write(t, ws, map[string]string{
		".compat/commands/commit.md":         "---\nallowed-tools: Bash(git add:*), Bash(git status:*)\nargument-hint: [message]\ndescription: Create a git commit\nmodel: haiku\n---\nCommit with $ARGUMENTS\n",
		".compat/commands/frontend/build.md": "---\ndescription: Build the frontend\n---\nnpm run build\n",
		".compat/commands/backend/build.md":  "Build the backend\n",
		".agent/commands/bad name.md":        "x",
	})
	write(t, home, map[string]string{".agent/commands/commit.md": "user commit\n", ".agent/commands/hello.md": "# Say hello\nHello $1 and $2!"})
	c := Discover(Options{Workspace: ws, Home: home, Trusted: true})
	commit := c.Command("commit")
	if commit == nil || commit.Scope != Project || commit.ArgumentHint != "[message]" || commit.Model != "haiku" || strings.Join(commit.AllowedTools, ";") != "Bash(git add:*);Bash(git status:*)" {
		t.Fatalf("commit %+v", commit)
	}
	if b, _ := commit.Body(); b != "Commit with $ARGUMENTS\n" {
		t.Errorf("body %q", b)
	}
	if b := c.Command("build"); b == nil || b.Folder != "backend" || b.Label() != "(project:backend)" {
		t.Errorf("build %+v", b)
	}
	if f := c.Command("frontend:build"); f == nil || f.Description != "Build the frontend" {
		t.Errorf("frontend:build %+v", f)
	}
	if h := c.Command("hello"); h == nil || h.Scope != User || h.Description != "Say hello" {
		t.Errorf("hello %+v", h)
	}
	var userCommit *Command
	for _, cmd := range c.Commands {
		if cmd.Name == "commit" && cmd.Scope == User {
			userCommit = cmd
		}
	}
	if userCommit == nil || userCommit.Usable() || userCommit.Shadowed == "" {
		t.Errorf("the user's commit %+v", userCommit)
	}
}

func TestDiscoverSkills(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	write(t, ws, map[string]string{
		".compat/skills/pdf/SKILL.md":           "---\nname: pdf\ndescription: Extract text and tables from PDF files. Use when working with PDFs.\nallowed-tools: Read, Bash(python:*)\n---\n# PDF\nUse scripts/extract.py\n",
		".compat/skills/pdf/scripts/extract.py": "print(1)\n",
		".agents/skills/nameless/SKILL.md":      "---\ndescription: no name\n---\nbody",
		".agent/skills/nodesc/SKILL.md":         "---\nname: nodesc\n---\nbody",
		".agent/skills/empty/README.md":         "not a skill",
	})
	write(t, home, map[string]string{".agent/skills/pdf/SKILL.md": "---\nname: pdf\ndescription: the user's pdf\n---\n"})
	c := Discover(Options{Workspace: ws, Home: home, Trusted: true})
	pdf := c.Skill("pdf")
	if pdf == nil || pdf.Scope != Project || strings.Join(pdf.AllowedTools, ";") != "Read;Bash(python:*)" {
		t.Fatalf("pdf %+v", pdf)
	}
	if s := c.Skill("nameless"); s == nil || len(s.Problems) != 1 {
		t.Errorf("nameless %+v", s)
	}
	if s := c.Skill("nodesc"); s != nil {
		t.Error("a skill without a description is usable")
	}
	found := false
	for _, p := range c.Problems {
		found = found || strings.Contains(p, "empty: a skill folder without SKILL.md")
	}
	if !found {
		t.Errorf("problems %v", c.Problems)
	}
	prompt := SkillsPrompt(c.Skills, 8<<10)
	if !strings.Contains(prompt, "- pdf: Extract text") || strings.Contains(prompt, "the user's pdf") {
		t.Errorf("prompt %q", prompt)
	}
	var many []*Skill
	for i := range 200 {
		many = append(many, &Skill{Name: fmt.Sprint("s", i), Description: strings.Repeat("d", 100)})
	}
	if p := SkillsPrompt(many, 8<<10); len(p) > 8<<10+100 || !strings.Contains(p, "more skills are left out") {
		t.Errorf("budget: %d bytes", len(p))
	}
}

func TestArguments(t *testing.T) {
	cases := []struct{ name, body, args, want string }{
		{"all of them", "Fix issue $ARGUMENTS now", "#123 in auth", "Fix issue #123 in auth now"},
		{"positional", "Review PR $1 with priority $2 ($3)", "456 high", "Review PR 456 with priority high ()"},
		{"quoted words", "$1|$2", `"two words" x`, "two words|x"},
		{"a dollar that is not one", "costs $5 and $$", "", "costs  and $$"},
		{"$10 is not $1", "$10", "a", "$10"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Arguments(c.body, c.args); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestMentionsAndCommands(t *testing.T) {
	body := "See @src/a.go and (@b.md).\n```\n@not/this\n```\nAn `@inline` span, mail x@y.z\nStatus: !`git status`\n"
	got := Mentions(body, func(p string) string { return "<" + p + ">" })
	want := "See <src/a.go> and (<b.md>).\n```\n@not/this\n```\nAn `@inline` span, mail x@y.z\nStatus: !`git status`\n"
	if got != want {
		t.Errorf("mentions\n%s\nwant\n%s", got, want)
	}
	if cmds := Commands(got); len(cmds) != 1 || cmds[0] != "git status" {
		t.Errorf("commands %v", cmds)
	}
	if out := RunCommands("a !`ls` b", func(c string) string { return "[" + c + "]" }); out != "a [ls] b" {
		t.Errorf("run %q", out)
	}
}

func TestParseAgentsJSON(t *testing.T) {
	cases := []struct {
		name, in, err string
	}{
		{"Claude's shape", `{"reviewer": {"description": "Reviews code", "prompt": "You review.", "tools": ["Read", "Grep"], "model": "sonnet"}}`, ""},
		{"not an object", `[]`, "not a JSON object"},
		{"an unknown field", `{"r": {"description": "d", "prompt": "p", "colour": 1}}`, "unknown field"},
		{"no description", `{"r": {"prompt": "p"}}`, "description is missing"},
		{"no prompt", `{"r": {"description": "d"}}`, "prompt is missing"},
		{"a bad name", `{"a b": {"description": "d", "prompt": "p"}}`, "the name may hold only"},
		{"a bad mode", `{"r": {"description": "d", "prompt": "p", "permissionMode": "yolo"}}`, "permissionMode must be"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			as, err := ParseAgentsJSON(c.in)
			if c.err == "" {
				if err != nil || len(as) != 1 || !as[0].HasTools || as[0].Prompt != "You review." {
					t.Fatalf("%+v %v", as, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("err %v, want %q", err, c.err)
			}
		})
	}
}

// BenchmarkDiscover: 200 commands, 50 skills and 20 agent definitions
// (docs/performance.md: under 5 ms; bodies are read when used).
func BenchmarkDiscover(b *testing.B) {
	ws, home := b.TempDir(), b.TempDir()
	files := map[string]string{}
	long := strings.Repeat("Some instructions for the task at hand.\n", 200)
	for i := range 200 {
		files[fmt.Sprintf(".compat/commands/group%d/cmd%d.md", i%10, i)] = fmt.Sprintf("---\ndescription: command %d\nallowed-tools: Read, Bash(git status:*)\n---\n%s", i, long)
	}
	for i := range 50 {
		files[fmt.Sprintf(".agent/skills/skill%d/SKILL.md", i)] = fmt.Sprintf("---\nname: skill%d\ndescription: skill number %d\n---\n%s", i, i, long)
	}
	for i := range 20 {
		files[fmt.Sprintf(".agent/agents/agent%d.md", i)] = fmt.Sprintf("---\nname: agent%d\ndescription: agent %d\ntools: Read, Grep\n---\n%s", i, i, long)
	}
	for p, c := range files {
		full := filepath.Join(ws, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(c), 0o644)
	}
	b.ReportAllocs()
	for b.Loop() {
		c := Discover(Options{Workspace: ws, Home: home, Trusted: true})
		if len(c.Commands) != 200 || len(c.Skills) != 50 || len(c.Agents) != 22 {
			b.Fatalf("%d %d %d", len(c.Commands), len(c.Skills), len(c.Agents))
		}
	}
}

// TestBrokenDefinitionReplacesNothing: a definition that cannot be used
// (no description) under a built-in's name leaves the built-in in place,
// and is listed with its problem.
func TestBrokenDefinitionReplacesNothing(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	write(t, home, map[string]string{
		".agent/agents/Explore.md":         "---\nname: Explore\n---\nno description\n",
		".agent/agents/general-purpose.md": "---\nname: general-purpose\ndescription: d\n---\n" + strings.Repeat("x", MaxBody+10),
	})
	c := Discover(Options{Workspace: ws, Home: home, Trusted: true})
	for _, name := range []string{"Explore", "general-purpose"} {
		if a := c.Agent(name); a == nil || !a.Builtin || !a.Usable() {
			t.Errorf("%s: %+v", name, a)
		}
	}
	broken := 0
	for _, a := range c.Agents {
		if !a.Builtin && !a.Usable() && len(a.Problems) > 0 {
			broken++
		}
	}
	if broken != 2 {
		t.Errorf("%d broken definitions listed", broken)
	}
}

// TestLinkedDefinitions: the user's definitions may be links (a dotfile
// manager's) to anywhere; a project's links must stay inside the
// workspace, else they are skipped with the reason.
func TestLinkedDefinitions(t *testing.T) {
	ws, home, dots := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, dots, map[string]string{
		"reviewer.md":    "---\nname: reviewer\ndescription: reviews\n---\nReview.\n",
		"deploy.md":      "---\ndescription: deploys\n---\nDeploy.\n",
		"pdf/SKILL.md":   "---\nname: pdf\ndescription: PDF files\n---\nSteps.\n",
		"secret.md":      "---\ndescription: secret\n---\nSECRET\n",
		"skill/SKILL.md": "---\nname: outside\ndescription: outside\n---\nSECRET\n",
	})
	write(t, ws, map[string]string{".agent/commands/inside-target.md": "---\ndescription: in\n---\nIn.\n", ".agent/skills/real/x": ""})
	link := func(target, at string) { symlink(t, target, at) }
	link(filepath.Join(dots, "reviewer.md"), filepath.Join(home, ".agent", "agents", "reviewer.md"))
	link(filepath.Join(dots, "deploy.md"), filepath.Join(home, ".compat", "commands", "deploy.md"))
	link(filepath.Join(dots, "pdf"), filepath.Join(home, ".agent", "skills", "pdf"))
	link(filepath.Join(dots, "secret.md"), filepath.Join(ws, ".agent", "commands", "secret.md"))
	link(filepath.Join(ws, ".agent", "commands", "inside-target.md"), filepath.Join(ws, ".agent", "commands", "inside.md"))
	link(filepath.Join(dots, "skill"), filepath.Join(ws, ".agent", "skills", "outside"))
	link(filepath.Join(dots, "skill", "SKILL.md"), filepath.Join(ws, ".agent", "skills", "real", "SKILL.md"))
	c := Discover(Options{Workspace: ws, Home: home, Trusted: true})
	if c.Agent("reviewer") == nil || c.Command("deploy") == nil || c.Skill("pdf") == nil || c.Command("inside") == nil {
		t.Fatalf("the user's links or a project's link inside: agents %v, problems %q", c.Agents, c.Problems)
	}
	if c.Command("secret") != nil || c.Skill("outside") != nil {
		t.Fatal("a project's link out of the workspace was read")
	}
	problems := strings.Join(c.Problems, "\n")
	for _, want := range []string{"secret.md: a link out of the workspace; skipped", "skills/outside: a link out of the workspace; skipped", "real/SKILL.md: a link out of the workspace; skipped"} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems lack %q:\n%s", want, problems)
		}
	}
}

// TestLinkedDefinitionFolders: a definition folder that is itself a link
// (a dotfile manager's ~/.agent/commands), and a linked folder inside a
// commands folder, are read where they lead; a project's linked folder
// out of the workspace is skipped with the reason; a loop of links ends.
func TestLinkedDefinitionFolders(t *testing.T) {
	ws, home, dots := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, dots, map[string]string{
		"cmds/top.md":       "---\ndescription: top\n---\nTop.\n",
		"more/deep.md":      "---\ndescription: deep\n---\nDeep.\n",
		"agents/helper.md":  "---\nname: helper\ndescription: helps\n---\nHelp.\n",
		"outside/secret.md": "---\ndescription: secret\n---\nSECRET\n",
	})
	link := func(target, at string) { symlink(t, target, at) }
	link(filepath.Join(dots, "cmds"), filepath.Join(home, ".agent", "commands"))
	link(filepath.Join(dots, "more"), filepath.Join(dots, "cmds", "sub"))
	link(filepath.Join(dots, "cmds"), filepath.Join(dots, "more", "loop"))
	link(filepath.Join(dots, "agents"), filepath.Join(home, ".agent", "agents"))
	link(filepath.Join(dots, "outside"), filepath.Join(ws, ".agent", "commands"))
	c := Discover(Options{Workspace: ws, Home: home, Trusted: true})
	if c.Command("top") == nil || c.Command("sub:deep") == nil || c.Agent("helper") == nil {
		t.Fatalf("linked folders not read: commands %v, problems %q", c.Commands, c.Problems)
	}
	if c.Command("secret") != nil {
		t.Fatal("a project's linked folder out of the workspace was read")
	}
	if p := strings.Join(c.Problems, "\n"); !strings.Contains(p, "commands: a link out of the workspace; skipped") {
		t.Errorf("problems:\n%s", p)
	}
}

// TestProjectLinkAfterDiscovery: a project's command, skill or agent file
// replaced after discovery by a link out of the workspace (a command can
// make one) is not read through it.
func TestProjectLinkAfterDiscovery(t *testing.T) {
	ws, home, dots := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, dots, map[string]string{"secret": "SECRET"})
	write(t, ws, map[string]string{
		".agent/commands/c.md":     "---\ndescription: c\n---\nC.\n",
		".agent/skills/s/SKILL.md": "---\nname: s\ndescription: s\n---\nS.\n",
		".agent/agents/a.md":       "---\nname: a\ndescription: a\n---\nA.\n",
	})
	c := Discover(Options{Workspace: ws, Home: home, Trusted: true})
	cmd, sk, ag := c.Command("c"), c.Skill("s"), c.Agent("a")
	if cmd == nil || sk == nil || ag == nil {
		t.Fatalf("not discovered: %q", c.Problems)
	}
	for _, f := range []string{".agent/commands/c.md", ".agent/skills/s/SKILL.md", ".agent/agents/a.md"} {
		p := filepath.Join(ws, f)
		os.Remove(p)
		if err := os.Symlink(filepath.Join(dots, "secret"), p); err != nil {
			t.Fatal(err)
		}
	}
	for name, read := range map[string]func() (string, error){"command": cmd.Body, "skill": sk.Body, "agent": ag.PromptText} {
		if body, err := read(); err == nil || strings.Contains(body, "SECRET") || !strings.Contains(err.Error(), "out of the workspace") {
			t.Errorf("%s: %q %v", name, body, err)
		}
	}
}

// symlink makes a link at at to target, and the folders on the way.
func symlink(t *testing.T, target, at string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(at), 0o755)
	if err := os.Symlink(target, at); err != nil {
		t.Fatal(err)
	}
}
