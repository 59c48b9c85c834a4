package agent

import "strings"

// matchStar reports whether s matches pattern, where '*' matches any run of
// bytes (none included) and every other byte stands for itself. It is the
// matcher of Bash commands and WebFetch hosts (docs/reference/settings.md,
// "Rule syntax"). Linear backtracking to the last star keeps it
// O(len(pattern)·len(s)).
func matchStar(pattern, s string) bool {
	p, i := 0, 0
	starP, starI := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			starP, starI = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case starP >= 0:
			p = starP + 1
			starI++
			i = starI
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// splitCommand cuts a shell command at its control operators (';', '&',
// '&&', '|', '||', '|&', newlines, parentheses) outside quotes, returning
// the simple commands, trimmed. substitutes is set when the command runs
// other commands inside its words ($(...), backquotes, <(...), >(...)):
// then no allow pattern with a wildcard can vouch for it, because the
// wildcard would be judging text whose meaning is another command.
// It is a guard rail for rules, not a shell parser: quoting is honoured,
// redirections such as 2>&1 stay inside their command, and an unbalanced
// quote counts as a substitution (nothing wildcard-allowed).
//
// The segments are appended to segs, so a caller can offer stack space.
func splitCommand(cmd string, segs []string) (_ []string, substitutes bool) {
	start := 0
	cut := func(end, next int) {
		if s := strings.TrimSpace(cmd[start:end]); s != "" {
			segs = append(segs, s)
		}
		start = next
	}
	// A substitution or subshell opens a fresh quoting context; the stack
	// remembers what to return to when it closes.
	type frame struct {
		kind     byte // '`', '$' (a substitution) or '(' (a subshell)
		inDouble bool
	}
	var stack []frame
	inSingle, inDouble := false, false
	open := func(kind byte) {
		stack = append(stack, frame{kind, inDouble})
		inDouble = false
	}
	closeFrame := func() {
		inDouble = stack[len(stack)-1].inDouble
		stack = stack[:len(stack)-1]
	}
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		if inSingle {
			if c == '\'' {
				inSingle = false
			}
			continue
		}
		switch c {
		case '\\':
			i++
			continue
		case '`':
			substitutes = true
			if len(stack) > 0 && stack[len(stack)-1].kind == '`' {
				closeFrame()
			} else {
				open('`')
			}
			cut(i, i+1)
			continue
		case '$':
			if i+1 < len(cmd) && cmd[i+1] == '(' {
				substitutes = true
				open('$')
				cut(i, i+2)
				i++
			}
			continue
		}
		if inDouble {
			if c == '"' {
				inDouble = false
			}
			continue
		}
		switch c {
		case '\'':
			inSingle = true
		case '"':
			inDouble = true
		case ';', '\n', '\r':
			cut(i, i+1)
		case ')':
			if len(stack) > 0 {
				closeFrame()
			}
			cut(i, i+1)
		case '(':
			if i > 0 && (cmd[i-1] == '<' || cmd[i-1] == '>') {
				substitutes = true
				open('$')
				cut(i-1, i+1)
			} else {
				open('(')
				cut(i, i+1)
			}
		case '|':
			if i+1 < len(cmd) && (cmd[i+1] == '|' || cmd[i+1] == '&') {
				cut(i, i+2)
				i++
			} else {
				cut(i, i+1)
			}
		case '&':
			switch {
			case i > 0 && (cmd[i-1] == '>' || cmd[i-1] == '<'): // >&2, <&0
			case i+1 < len(cmd) && cmd[i+1] == '>': // &> file
			case i+1 < len(cmd) && cmd[i+1] == '&':
				cut(i, i+2)
				i++
			default:
				cut(i, i+1)
			}
		}
	}
	if inSingle || inDouble {
		substitutes = true
	}
	cut(len(cmd), len(cmd))
	return segs, substitutes
}

// AllowsExactly reports whether an allow rule of tool names path itself,
// without a wildcard: the explicit rule that lets Write and Edit change a
// settings file or an approved hook's script without asking
// (docs/reference/runtime.md, "Hooks").
func (c *Checker) AllowsExactly(tool, path string) bool {
	for _, r := range c.allow.Load().byTool[tool] {
		for _, pp := range r.paths {
			if len(pp.rest) == 0 && pp.prefix == path {
				return true
			}
		}
	}
	return false
}
