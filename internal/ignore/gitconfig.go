package ignore

import (
	"fmt"
	"strings"
)

// ConfigEntry is one variable of a git configuration file. Section and
// Key are lower-cased (git compares them without case); Subsection is as
// written.
type ConfigEntry struct {
	Section, Subsection, Key string
	Value                    string
	NoValue                  bool // "key" alone, which git reads as true
	Line                     int
}

// ConfigError is a line git itself would refuse ("bad config line N").
type ConfigError struct {
	Line   int
	Reason string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// ParseConfig reads a git configuration file (git-config(1),
// "CONFIGURATION FILE"): [section] and [section "subsection"] headers
// (and the old [section.subsection]), "key = value" and "key" lines,
// comments after '#' or ';', double quotes, the escapes \" \\ \n \t \b, a
// backslash continuing a line, and trailing white space cut. A line git
// would refuse stops the parse with a *ConfigError; the entries before it
// are returned too.
func ParseConfig(data []byte) ([]ConfigEntry, error) {
	c := configParser{s: string(data), line: 1}
	c.s = strings.TrimPrefix(c.s, "\xef\xbb\xbf")
	var out []ConfigEntry
	for {
		c.skipSpace()
		if c.i >= len(c.s) {
			return out, nil
		}
		switch ch := c.s[c.i]; {
		case ch == '\n':
			c.i++
			c.line++
		case ch == '#' || ch == ';':
			c.skipComment()
		case ch == '[':
			if err := c.header(); err != nil {
				return out, err
			}
		case isAlpha(ch):
			if c.section == "" {
				return out, c.fail("a variable before any [section]")
			}
			e, err := c.variable()
			if err != nil {
				return out, err
			}
			out = append(out, e)
		default:
			return out, c.fail(fmt.Sprintf("unexpected %q", ch))
		}
	}
}

type configParser struct {
	s                   string
	i, line             int
	section, subsection string
}

func (c *configParser) fail(reason string) error { return &ConfigError{Line: c.line, Reason: reason} }

func (c *configParser) skipSpace() {
	for c.i < len(c.s) && (c.s[c.i] == ' ' || c.s[c.i] == '\t' || c.s[c.i] == '\r' || c.s[c.i] == '\f' || c.s[c.i] == '\v') {
		c.i++
	}
}

func (c *configParser) skipComment() {
	for c.i < len(c.s) && c.s[c.i] != '\n' {
		c.i++
	}
}

func isAlpha(ch byte) bool { return 'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' }
func isAlnum(ch byte) bool { return isAlpha(ch) || '0' <= ch && ch <= '9' }

func (c *configParser) header() error {
	c.i++ // '['
	start := c.i
	for c.i < len(c.s) && (isAlnum(c.s[c.i]) || c.s[c.i] == '-' || c.s[c.i] == '.') {
		c.i++
	}
	name := strings.ToLower(c.s[start:c.i])
	if name == "" {
		return c.fail("an empty section name")
	}
	sub := ""
	if c.i < len(c.s) && (c.s[c.i] == ' ' || c.s[c.i] == '\t') {
		c.skipSpace()
		if c.i >= len(c.s) || c.s[c.i] != '"' {
			return c.fail("a section header without its quoted subsection")
		}
		c.i++
		var b strings.Builder
		for {
			if c.i >= len(c.s) || c.s[c.i] == '\n' {
				return c.fail("an unclosed subsection name")
			}
			ch := c.s[c.i]
			c.i++
			if ch == '"' {
				break
			}
			if ch == '\\' {
				if c.i >= len(c.s) || c.s[c.i] == '\n' {
					return c.fail("an unclosed subsection name")
				}
				ch = c.s[c.i]
				c.i++
			}
			b.WriteByte(ch)
		}
		sub = b.String()
	} else if dot := strings.IndexByte(name, '.'); dot >= 0 {
		name, sub = name[:dot], name[dot+1:] // [section.subsection], lower-cased by git
	}
	if c.i >= len(c.s) || c.s[c.i] != ']' {
		return c.fail("a section header without ']'")
	}
	c.i++
	c.section, c.subsection = name, sub
	return nil
}

func (c *configParser) variable() (ConfigEntry, error) {
	e := ConfigEntry{Section: c.section, Subsection: c.subsection, Line: c.line}
	start := c.i
	for c.i < len(c.s) && (isAlnum(c.s[c.i]) || c.s[c.i] == '-') {
		c.i++
	}
	e.Key = strings.ToLower(c.s[start:c.i])
	c.skipSpace()
	if c.i >= len(c.s) || c.s[c.i] == '\n' || c.s[c.i] == '#' || c.s[c.i] == ';' {
		e.NoValue = true
		return e, nil
	}
	if c.s[c.i] != '=' {
		return e, c.fail("a variable name followed by something other than '='")
	}
	c.i++
	c.skipSpace()
	var b strings.Builder
	quoted := false
	pending := 0 // spaces seen outside quotes, written only if more follows
	for c.i < len(c.s) {
		ch := c.s[c.i]
		c.i++
		if ch == '\n' {
			if quoted {
				return e, c.fail("an unclosed quote")
			}
			c.line++
			break
		}
		if !quoted && (ch == ' ' || ch == '\t') {
			if b.Len() > 0 {
				pending++
			}
			continue
		}
		if !quoted && (ch == '#' || ch == ';') {
			c.skipComment()
			continue
		}
		if ch == '\r' && !quoted && (c.i == len(c.s) || c.s[c.i] == '\n') {
			continue
		}
		for ; pending > 0; pending-- {
			b.WriteByte(' ')
		}
		switch ch {
		case '"':
			quoted = !quoted
		case '\\':
			if c.i >= len(c.s) {
				return e, c.fail("a backslash at the end of the file")
			}
			esc := c.s[c.i]
			c.i++
			switch esc {
			case '\n':
				c.line++
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			case '\\', '"':
				b.WriteByte(esc)
			default:
				return e, c.fail(fmt.Sprintf("an unknown escape \\%c", esc))
			}
		default:
			b.WriteByte(ch)
		}
	}
	if quoted {
		return e, c.fail("an unclosed quote")
	}
	e.Value = b.String()
	return e, nil
}
