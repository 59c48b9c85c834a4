package agent

// The rules "allow for this session" and "allow for this project" record
// (docs/reference/runtime.md, "Permission prompts"), generalised as a user
// would write them: a Bash command becomes a prefix rule over its first
// word or two for each of its simple commands (never across &&, ;, | or a
// substitution), a Write or Edit a rule over the file's folder. The
// prompt shows the exact rules before the answer is taken.

import (
	"path/filepath"
	"strings"

	"agent/agent/tools"
)

// exactCommand reports first words whose prefix rule would allow far more
// than the command asked: programs that run another command given as
// arguments, and destructive ones. Their commands are allowed exactly.
func exactCommand(name string) bool {
	switch name {
	case "sh", "bash", "zsh", "fish", "dash", "ksh", "csh", "tcsh", "env", "xargs", "sudo",
		"su", "doas", "eval", "exec", "command", "builtin", "nohup", "time", "timeout", "nice",
		"ionice", "watch", "strace", "find", "parallel", "ssh", "rm", "rmdir", "dd", "mkfs",
		"shred", "chmod", "chown", "chgrp", "kill", "pkill", "killall", "shutdown", "reboot":
		return true
	}
	return false
}

// hasSubcommand reports programs whose second word names what they do (git
// status, go test): the rule keeps it. Other programs keep their first
// word only (ls -la is ls).
func hasSubcommand(name string) bool {
	switch name {
	case "git", "go", "npm", "pnpm", "yarn", "bun", "deno", "cargo", "rustup", "docker",
		"podman", "kubectl", "helm", "make", "just", "gh", "terraform", "tofu", "dotnet", "mvn",
		"gradle", "pip", "pip3", "uv", "poetry", "pipenv", "conda", "brew", "apt", "apt-get",
		"dnf", "yum", "systemctl", "nix", "bazel", "mix", "bundle", "gem", "composer", "flutter",
		"dart", "swift", "aws", "gcloud", "az", "hg", "svn", "jj":
		return true
	}
	return false
}

// scriptRunner reports the programs that take a script's name after
// "run" (npm run test): the rule keeps the script.
func scriptRunner(name string) bool {
	switch name {
	case "npm", "pnpm", "yarn", "bun":
		return true
	}
	return false
}

// Generalise returns the allow rules an answer for the session or the
// project records for this call: for Bash one prefix rule per simple
// command (`Bash(npm run test:*)`), for Write and Edit inside the
// workspace a rule over the file's folder (`Edit(src/**)`; the file itself
// at the workspace's top), otherwise the narrowest rule, as SuggestRule.
func (c *Checker) Generalise(spec tools.Spec, t tools.Target) []string {
	exact := []string{c.SuggestRule(spec, t)}
	switch {
	case t.Kind == tools.TargetCommand:
		if rules := generaliseCommand(spec.Name, t.Value); len(rules) > 0 {
			return rules
		}
	case t.Kind == tools.TargetPath && spec.Risk == tools.RiskModify && !t.OutsideWorkspace && c.ws != "":
		dir := filepath.Dir(filepath.Clean(t.Value))
		if dir != c.ws && tools.WithinDir(dir, c.ws) {
			if rel, err := filepath.Rel(c.ws, dir); err == nil {
				rel = escapeMeta(rel)
				if strings.HasPrefix(rel, "~") {
					rel = "./" + rel
				}
				return []string{spec.Name + "(" + rel + "/**)"}
			}
		}
	}
	return exact
}

// generaliseCommand is a command's prefix rules, or nil when it must be
// allowed exactly (a substitution, a word that is not plain).
func generaliseCommand(tool, cmd string) []string {
	segs, subs := splitCommand(strings.TrimSpace(cmd), nil)
	if subs || len(segs) == 0 {
		return nil
	}
	var out []string
	for _, seg := range segs {
		p, ok := commandPrefix(seg)
		if !ok {
			return nil
		}
		r := tool + "(" + p + ":*)"
		if !contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// commandPrefix is the first word of a simple command, with its second
// when the program takes subcommands and that is a plain lower-case word
// (git status, go test), and a package manager's script after run (npm
// run test), as the command wrote them (quotes and backslashes kept, so
// that the rule matches the text).
func commandPrefix(seg string) (string, bool) {
	words := shellWords(seg, 3)
	if len(words) == 0 {
		return "", false
	}
	first := seg[words[0][0]:words[0][1]]
	name := filepath.Base(strings.Trim(first, `"'`))
	switch {
	case isAssignment(first), strings.ContainsAny(first, "*$`<>"), exactCommand(name):
		return "", false
	}
	end := words[0][1]
	if len(words) > 1 && hasSubcommand(name) {
		second := seg[words[1][0]:words[1][1]]
		if plainWord(second, false) {
			end = words[1][1]
			if scriptRunner(name) && second == "run" && len(words) > 2 && plainWord(seg[words[2][0]:words[2][1]], true) {
				end = words[2][1]
			}
		}
	}
	return seg[:end], true
}

// shellWords returns the spans of a simple command's first n words,
// honouring quotes and backslashes; a redirection ends the words. Words
// are split at spaces only, as a prefix rule's "PREFIX *" matches them (a
// tab stays inside a word, which keeps the rule narrow).
func shellWords(s string, n int) [][2]int {
	var out [][2]int
	i := 0
	for len(out) < n {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) || s[i] == '<' || s[i] == '>' {
			break
		}
		start := i
		for i < len(s) && s[i] != ' ' {
			switch s[i] {
			case '\\':
				i++
			case '\'', '"':
				q := s[i]
				i++
				for i < len(s) && s[i] != q {
					if q == '"' && s[i] == '\\' {
						i++
					}
					i++
				}
			}
			i++
		}
		i = min(i, len(s))
		out = append(out, [2]int{start, i})
	}
	return out
}

// plainWord reports whether a word is a subcommand (lower-case letters,
// digits, '-', '_'; starting with a letter) or, for a script name, also
// upper case, ':' and '.'.
func plainWord(w string, script bool) bool {
	if w == "" || !(w[0] >= 'a' && w[0] <= 'z' || script && (w[0] >= 'A' && w[0] <= 'Z' || w[0] >= '0' && w[0] <= '9')) {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
		case script && (c >= 'A' && c <= 'Z' || c == ':' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// isAssignment reports whether a word sets a variable (NAME=value): the
// command's meaning then depends on it, and the rule stays exact.
func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := w[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
