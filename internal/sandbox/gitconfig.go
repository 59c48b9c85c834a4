package sandbox

import (
	"errors"
	"fmt"
	"strings"
)

// A reader of git's configuration files, just enough to find the keys that
// make git run a program (docs/sandbox.md, "Protected paths"): sections
// `[section]`, `[section "subsection"]` and the old `[section.subsection]`;
// `name = value` and a bare `name` (true); quoted values with their escapes,
// comments after `#` or `;` outside quotes, lines continued by a
// backslash. A file git would refuse is an error here too.

// gitKV is one variable: Key is section[.subsection].name with the
// section and name lower-cased, as git compares them.
type gitKV struct {
	Key, Value string
}

// maxGitConfig bounds what the reader takes (git's own config files are
// small; a huge one is suspicious and is treated as unreadable).
const maxGitConfig = 4 << 20

var errGitConfig = errors.New("git config")

func parseGitConfig(data []byte) ([]gitKV, error) {
	if len(data) > maxGitConfig {
		return nil, fmt.Errorf("%w: over %d bytes", errGitConfig, maxGitConfig)
	}
	s := string(data)
	s = strings.TrimPrefix(s, "\ufeff")
	var out []gitKV
	section := ""
	line := 1
	i := 0
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: line %d: %s", errGitConfig, line, fmt.Sprintf(format, args...))
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#' || c == ';':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '[':
			sec, n, err := parseGitSection(s[i:])
			if err != nil {
				return nil, bad("%v", err)
			}
			section = sec
			i += n
		case isAlpha(c):
			if section == "" {
				return nil, bad("a variable before any section")
			}
			j := i
			for j < len(s) && (isAlpha(s[j]) || s[j] >= '0' && s[j] <= '9' || s[j] == '-') {
				j++
			}
			name := strings.ToLower(s[i:j])
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			value := "true"
			if j < len(s) && s[j] == '=' {
				v, n, lines, err := parseGitValue(s[j+1:])
				if err != nil {
					return nil, bad("%v", err)
				}
				value = v
				j += 1 + n
				line += lines
			} else if j < len(s) && s[j] != '\n' && s[j] != '\r' && s[j] != '#' && s[j] != ';' {
				return nil, bad("unexpected %q after a name", s[j])
			}
			out = append(out, gitKV{Key: section + "." + name, Value: value})
			i = j
		default:
			return nil, bad("unexpected %q", c)
		}
	}
	return out, nil
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// parseGitSection reads a section header at the start of s and returns
// its key prefix and the bytes it took.
func parseGitSection(s string) (string, int, error) {
	i := 1
	for i < len(s) && (isAlpha(s[i]) || s[i] >= '0' && s[i] <= '9' || s[i] == '-' || s[i] == '.') {
		i++
	}
	name := strings.ToLower(s[1:i])
	if name == "" || name[0] == '.' || name[len(name)-1] == '.' || strings.Contains(name, "..") {
		return "", 0, errors.New("an empty section name")
	}
	if i < len(s) && s[i] == ']' {
		// [section.subsection]: the old form, all lower-cased.
		return name, i + 1, nil
	}
	if strings.Contains(name, ".") {
		return "", 0, errors.New("a dotted section name with a subsection")
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i >= len(s) || s[i] != '"' {
		return "", 0, errors.New("an unfinished section header")
	}
	i++
	var sub strings.Builder
	for {
		if i >= len(s) || s[i] == '\n' {
			return "", 0, errors.New("an unfinished subsection name")
		}
		c := s[i]
		if c == '"' {
			i++
			break
		}
		if c == '\\' {
			i++
			if i >= len(s) || s[i] == '\n' {
				return "", 0, errors.New("an unfinished subsection name")
			}
			c = s[i]
		}
		sub.WriteByte(c)
		i++
	}
	if i >= len(s) || s[i] != ']' {
		return "", 0, errors.New("an unfinished section header")
	}
	return name + "." + sub.String(), i + 1, nil
}

// parseGitValue reads a value after '=' up to the end of its line (or of
// its continued lines); it returns the value, the bytes taken (not the
// final newline) and how many newlines it crossed.
func parseGitValue(s string) (string, int, int, error) {
	var b strings.Builder
	quoted := false
	pending := "" // whitespace kept only if more value follows
	lines := 0
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\n' || c == '\r' && i+1 < len(s) && s[i+1] == '\n':
			if quoted {
				return "", 0, 0, errors.New("a quoted value runs past the end of its line")
			}
			return b.String(), i, lines, nil
		case !quoted && (c == '#' || c == ';'):
			for i < len(s) && s[i] != '\n' {
				i++
			}
			return b.String(), i, lines, nil
		case c == '"':
			b.WriteString(pending)
			pending = ""
			quoted = !quoted
		case c == '\\':
			i++
			if i >= len(s) {
				return "", 0, 0, errors.New("a backslash at the end of the file")
			}
			b.WriteString(pending)
			pending = ""
			switch s[i] {
			case '\n':
				lines++
			case '\r':
				if i+1 < len(s) && s[i+1] == '\n' {
					i++
					lines++
				}
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			case '"', '\\':
				b.WriteByte(s[i])
			default:
				return "", 0, 0, fmt.Errorf("an unknown escape \\%c", s[i])
			}
		case !quoted && (c == ' ' || c == '\t'):
			pending += string(c)
		default:
			b.WriteString(pending)
			pending = ""
			b.WriteByte(c)
		}
		i++
	}
	if quoted {
		return "", 0, 0, errors.New("a quoted value runs past the end of the file")
	}
	return b.String(), i, lines, nil
}

// splitGitKey splits a key into its lower-cased section, its subsection
// and its lower-cased name.
func splitGitKey(key string) (section, sub, name string) {
	first := strings.IndexByte(key, '.')
	last := strings.LastIndexByte(key, '.')
	if first < 0 {
		return key, "", ""
	}
	section, name = key[:first], key[last+1:]
	if last > first {
		sub = key[first+1 : last]
	}
	return section, sub, name
}

// runsProgram reports whether a configuration variable can make git run a
// program (or read more configuration that could): the keys a confined
// command may not set (docs/sandbox.md, "Protected paths").
func runsProgram(kv gitKV) bool {
	section, sub, name := splitGitKey(kv.Key)
	in := func(names ...string) bool {
		for _, n := range names {
			if name == n {
				return true
			}
		}
		return false
	}
	switch section {
	case "core":
		return in("hookspath", "fsmonitor", "sshcommand", "pager", "editor", "askpass", "gitproxy", "alternaterefscommand")
	case "credential", "include", "includeif", "filter", "pager", "protocol":
		return true
	case "diff":
		return sub != "" && in("textconv", "command") || sub == "" && name == "external"
	case "merge":
		return sub != "" && name == "driver"
	case "alias":
		return strings.HasPrefix(strings.TrimSpace(kv.Value), "!")
	case "submodule":
		return name == "update" && strings.HasPrefix(strings.TrimSpace(kv.Value), "!")
	case "sequence":
		return name == "editor"
	case "gpg":
		return name == "program"
	case "uploadpack":
		return name == "packobjectshook"
	case "remote":
		return in("uploadpack", "receivepack", "vcs")
	case "url":
		return in("insteadof", "pushinsteadof")
	case "difftool", "mergetool", "guitool", "man", "browser":
		return in("cmd", "path")
	case "interactive":
		return name == "difffilter"
	case "web":
		return name == "browser"
	case "trailer":
		return in("command", "cmd")
	case "sendemail":
		return in("smtpserver", "tocmd", "cccmd")
	case "imap":
		return name == "tunnel"
	}
	return false
}

// programKeys lists the variables of a configuration that run programs,
// in file order, as "key=value".
func programKeys(kvs []gitKV) []string {
	var out []string
	for _, kv := range kvs {
		if runsProgram(kv) {
			out = append(out, kv.Key+"="+kv.Value)
		}
	}
	return out
}
