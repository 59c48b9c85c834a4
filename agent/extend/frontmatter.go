package extend

import (
	"fmt"
	"strings"
)

// Field is one key of a front matter.
type Field struct {
	Key    string
	Line   int // 1-based line of the file
	Str    string
	List   []string
	IsList bool
	// Raw is the value as written on the key's line (`[message]` for
	// Claude Code's argument hints, which read as a list).
	Raw string
}

// Strings is the field as a list: a list as it is, a scalar split at
// commas (Claude Code writes `tools: Read, Grep, Glob`).
func (f Field) Strings() []string {
	if f.IsList {
		return f.List
	}
	var out []string
	for _, s := range strings.Split(f.Str, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Problem is something wrong with a file, at a line (0: the file).
type Problem struct {
	Line    int
	Message string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("line %d: %s", p.Line, p.Message)
	}
	return p.Message
}

// ParseFrontMatter splits text into its front matter — the lines between a
// first line "---" and the next "---" — and its body. It reads the small
// subset of YAML these files use: `key: value` with plain, single- or
// double-quoted scalars, `key: [a, b]`, a key followed by `- item` lines,
// `key: |` and `key: >` blocks, indented continuation lines, comments. A
// line it cannot read is a problem and is skipped; the rest applies. Text
// without a front matter is all body.
func ParseFrontMatter(text string) ([]Field, string, []Problem) {
	text = strings.TrimPrefix(text, "\ufeff")
	if !strings.HasPrefix(text, "---\n") && !strings.HasPrefix(text, "---\r\n") {
		return nil, text, nil
	}
	lines := strings.SplitAfter(text, "\n")
	end := -1
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], "\r\n"); l == "---" || l == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, text, []Problem{{1, "the front matter is not closed by a line ---; the file is read as body only"}}
	}
	body := strings.Join(lines[end+1:], "")
	var fields []Field
	var problems []Problem
	for i := 1; i < end; {
		line := strings.TrimRight(lines[i], "\r\n")
		n := i + 1 // line number
		i++
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			problems = append(problems, Problem{n, "an indented line outside a value; skipped"})
			continue
		}
		key, rest, ok := strings.Cut(line, ":")
		if !ok || !validKey(key) {
			problems = append(problems, Problem{n, "not a `key: value` line; skipped"})
			continue
		}
		f := Field{Key: key, Line: n}
		rest = strings.TrimSpace(rest)
		f.Raw = rest
		// The indented lines that follow belong to this key.
		var more []string
		for i < end {
			l := strings.TrimRight(lines[i], "\r\n")
			if strings.TrimSpace(l) != "" && l[0] != ' ' && l[0] != '\t' && !strings.HasPrefix(l, "- ") && l != "-" {
				break
			}
			more = append(more, l)
			i++
		}
		var err string
		switch {
		case rest == "|" || rest == "|-" || rest == ">" || rest == ">-":
			f.Str = block(more, rest[0] == '|')
		case strings.HasPrefix(rest, "["):
			f.IsList = true
			f.List, err = inlineList(rest)
		case rest == "" && hasItems(more):
			f.IsList = true
			f.List, err = items(more)
		default:
			f.Str, err = scalar(rest)
			for _, m := range more {
				if m = strings.TrimSpace(m); m != "" {
					f.Str += " " + m // a plain scalar continued on the next lines
				}
			}
		}
		if err != "" {
			problems = append(problems, Problem{n, err + "; the key is skipped"})
			continue
		}
		for k, prev := range fields {
			if prev.Key == key {
				problems = append(problems, Problem{n, fmt.Sprintf("the key %s appears twice; the later value applies", key)})
				fields = append(fields[:k], fields[k+1:]...)
				break
			}
		}
		fields = append(fields, f)
	}
	return fields, body, problems
}

func validKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// scalar reads a plain, single- or double-quoted scalar.
func scalar(s string) (string, string) {
	switch {
	case strings.HasPrefix(s, `"`):
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '"':
				if rest := strings.TrimSpace(s[i+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
					return "", "text after a closing quote"
				}
				return b.String(), ""
			case c == '\\' && i+1 < len(s):
				i++
				switch s[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				default:
					b.WriteByte(s[i])
				}
			default:
				b.WriteByte(c)
			}
		}
		return "", "a double-quoted value without its closing quote"
	case strings.HasPrefix(s, "'"):
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				if rest := strings.TrimSpace(s[i+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
					return "", "text after a closing quote"
				}
				return b.String(), ""
			}
			b.WriteByte(s[i])
		}
		return "", "a single-quoted value without its closing quote"
	}
	if i := strings.Index(s, " #"); i >= 0 {
		s = s[:i] // a comment
	}
	return strings.TrimSpace(s), ""
}

// inlineList reads [a, "b", 'c'].
func inlineList(s string) ([]string, string) {
	if !strings.HasSuffix(s, "]") {
		return nil, "an inline list without its closing ]"
	}
	inner := strings.TrimSpace(s[1 : len(s)-1])
	if inner == "" {
		return []string{}, ""
	}
	var out []string
	for _, part := range splitOutsideQuotes(inner) {
		v, err := scalar(strings.TrimSpace(part))
		if err != "" {
			return nil, err
		}
		out = append(out, v)
	}
	return out, ""
}

// splitOutsideQuotes splits at commas that are not inside quotes.
func splitOutsideQuotes(s string) []string {
	var out []string
	start, quote := 0, byte(0)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == ',':
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func hasItems(lines []string) bool {
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" {
			return strings.HasPrefix(t, "- ") || t == "-"
		}
	}
	return false
}

// items reads `- item` lines.
func items(lines []string) ([]string, string) {
	var out []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if !strings.HasPrefix(t, "- ") && t != "-" {
			return nil, "a list mixes items and other lines"
		}
		v, err := scalar(strings.TrimSpace(strings.TrimPrefix(t, "-")))
		if err != "" {
			return nil, err
		}
		out = append(out, v)
	}
	return out, ""
}

// block reads the lines of a `|` (literal) or `>` (folded) block.
func block(lines []string, literal bool) string {
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	var out []string
	for _, l := range lines {
		if len(l) >= indent && indent > 0 {
			l = l[indent:]
		}
		out = append(out, strings.TrimRight(l, " \t"))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	if literal {
		return strings.Join(out, "\n")
	}
	var b strings.Builder
	for i, l := range out {
		switch {
		case l == "":
			b.WriteByte('\n')
		case i > 0 && out[i-1] != "":
			b.WriteByte(' ')
			b.WriteString(l)
		default:
			b.WriteString(l)
		}
	}
	return b.String()
}
