package config

import (
	"fmt"
	"strings"

	"agent/internal/quote"
	"agent/internal/strictjson"
)

// Permission modes (docs/reference/runtime.md, "Permission modes and
// rules").
const (
	ModeDefault     = "default"
	ModePlan        = "plan"
	ModeAcceptEdits = "acceptEdits"
	ModeBypass      = "bypassPermissions"
)

// ValidMode reports whether m names a permission mode.
func ValidMode(m string) bool {
	return m == ModeDefault || m == ModePlan || m == ModeAcceptEdits || m == ModeBypass
}

// Rule is a permission rule `Tool` or `Tool(pattern)`
// (docs/reference/settings.md, "Rule syntax").
type Rule struct {
	Tool       string // a tool name, or "<server>__*" for every tool of a server
	Pattern    string // inside the parentheses; meaningful when HasPattern
	HasPattern bool
	Scope      Scope
	File       string
}

func (r Rule) String() string {
	if r.HasPattern {
		return r.Tool + "(" + r.Pattern + ")"
	}
	return r.Tool
}

// ParseRule parses the rule syntax. The tool part is letters, digits, '_'
// and '-' (the characters of tool names, docs/reference/mcp.md, "Tool
// naming"), optionally ending in "__*"; the pattern is everything between
// the first '(' and the final ')', and must not be empty.
func ParseRule(s string) (Rule, error) {
	tool, rest, paren := strings.Cut(s, "(")
	var r Rule
	if paren {
		if !strings.HasSuffix(rest, ")") {
			return r, fmt.Errorf("rule %q: a pattern must end with ')'", quote.V(s))
		}
		r.Pattern, r.HasPattern = rest[:len(rest)-1], true
		if strings.TrimSpace(r.Pattern) == "" {
			return r, fmt.Errorf("rule %q: empty pattern (write the tool name alone to match every call)", quote.V(s))
		}
	}
	name := strings.TrimSuffix(tool, "*")
	wild := name != tool
	if name == "" || (wild && !strings.HasSuffix(name, "__")) {
		return r, fmt.Errorf("rule %q: expected Tool, Tool(pattern) or server__*", quote.V(s))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return r, fmt.Errorf("rule %q: the tool name may hold only letters, digits, '_' and '-'", quote.V(s))
		}
	}
	if wild && r.HasPattern {
		return r, fmt.Errorf("rule %q: server__* takes no pattern", quote.V(s))
	}
	r.Tool = tool
	return r, nil
}

// Permissions are the merged permission settings: rules from every loaded
// file (deny beats allow, decided where rules are matched) and the mode.
type Permissions struct {
	Allow       []Rule
	Deny        []Rule
	DefaultMode string // "" when no file sets it
}

func (l *loader) permissions(f File, p strictjson.Path, v *strictjson.Value) {
	if v.Kind != strictjson.Object {
		l.diag(f.Path, p, "expected an object, found %s", v.Kind)
		return
	}
	for _, m := range v.Members {
		kp := p.Key(m.Key)
		switch m.Key {
		case "allow", "deny":
			if m.Value.Kind != strictjson.Array {
				l.diag(f.Path, kp, "expected an array of rules, found %s", m.Value.Kind)
				continue
			}
			for i, it := range m.Value.Items {
				if it.Kind != strictjson.String {
					l.diag(f.Path, kp.Index(i), "expected a rule string, found %s", it.Kind)
					continue
				}
				r, err := ParseRule(it.Str)
				if err != nil {
					l.diag(f.Path, kp.Index(i), "%v; rule ignored", err)
					continue
				}
				r.Scope, r.File = f.Scope, f.Path
				if m.Key == "allow" {
					l.s.Permissions.Allow = append(l.s.Permissions.Allow, r)
				} else {
					l.s.Permissions.Deny = append(l.s.Permissions.Deny, r)
				}
			}
		case "defaultMode":
			if m.Value.Kind != strictjson.String || !ValidMode(m.Value.Str) {
				l.diag(f.Path, kp, "must be one of %s; ignored", oneOf(ModeDefault, ModePlan, ModeAcceptEdits, ModeBypass))
				continue
			}
			l.s.Permissions.DefaultMode = m.Value.Str
		default:
			l.diag(f.Path, kp, "unknown key; ignored (known: allow, deny, defaultMode)")
		}
	}
}
