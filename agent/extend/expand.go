package extend

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Expansion of a command's body (docs/reference/runtime.md, "Subagents,
// commands and skills"): the words the user typed after /name, the files
// it names with @path, and the output of the commands it names with
// !`command`.

// Arguments fills $ARGUMENTS with args and $1 … $9 with its words
// (quotes group words; a missing word is empty).
func Arguments(body, args string) string {
	words := splitArgs(args)
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] != '$' {
			b.WriteByte(body[i])
			continue
		}
		switch rest := body[i+1:]; {
		case strings.HasPrefix(rest, "ARGUMENTS"):
			b.WriteString(args)
			i += len("ARGUMENTS")
		case len(rest) > 0 && rest[0] >= '1' && rest[0] <= '9' && (len(rest) == 1 || rest[1] < '0' || rest[1] > '9'):
			if n := int(rest[0] - '1'); n < len(words) {
				b.WriteString(words[n])
			}
			i++
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// splitArgs splits at blanks; single and double quotes group.
func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// bang finds !`command` in a body. Compiled on first use: every run of
// the binary would pay for it at start (docs/performance.md, "Startup
// (main, config)").
var bang = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("!`([^`\n]+)`") })

// Commands are the commands a body runs with !`command`, in order.
func Commands(body string) []string {
	var out []string
	for _, m := range bang().FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// RunCommands replaces each !`command` with what run returns for it
// (its output, or why it did not run).
func RunCommands(body string, run func(cmd string) string) string {
	return bang().ReplaceAllStringFunc(body, func(m string) string {
		return run(m[2 : len(m)-1])
	})
}

// mention finds @path at the start of a word (compiled on first use, as
// bang).
var mention = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(^|[\\s(])@([^\\s@`'\"()]+)") })

// Mentions replaces each @path with what read returns for it (the file's
// text in a fenced block, or a note saying why it is not there). Paths
// inside code fences and spans are left alone.
func Mentions(body string, read func(path string) string) string {
	var b strings.Builder
	fence := false
	for i, line := range strings.SplitAfter(body, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = !fence
		}
		if fence || !strings.Contains(line, "@") {
			b.WriteString(line)
			continue
		}
		_ = i
		b.WriteString(replaceOutsideSpans(line, func(seg string) string {
			return mention().ReplaceAllStringFunc(seg, func(m string) string {
				sm := mention().FindStringSubmatch(m)
				p := strings.TrimRight(sm[2], ".,;:")
				return sm[1] + read(p) + sm[2][len(p):] // the sentence's own punctuation kept
			})
		}))
	}
	return b.String()
}

// replaceOutsideSpans applies f to the parts of line outside `code`
// spans.
func replaceOutsideSpans(line string, f func(string) string) string {
	parts := strings.Split(line, "`")
	for i := range parts {
		if i%2 == 0 {
			parts[i] = f(parts[i])
		}
	}
	return strings.Join(parts, "`")
}

// FileBlock is a mentioned file as it joins a prompt.
func FileBlock(path, text string) string {
	return fmt.Sprintf("\n<file path=%q>\n%s\n</file>\n", path, strings.TrimRight(text, "\n"))
}
