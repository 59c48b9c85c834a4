package config

import "strings"

// Expansion is a template string filled from the environment
// (docs/reference/settings.md, "Templates").
type Expansion struct {
	Value   string   // the expanded text, sent to the process or server
	Display string   // Value with the parts from credential-shaped variables masked (docs/reference/settings.md, "Templates")
	Unset   []string // variables without a default that were not set: left literal
	Invalid []string // ${...} forms that are not templates: left literal
}

// LookupFunc reads an environment variable; ok is false when it is unset.
type LookupFunc func(name string) (value string, ok bool)

// Expand fills ${VAR} and ${VAR:-default} in s. As in the shell, the
// default applies when VAR is unset or empty. An unset variable without a
// default is reported in Unset and left as literal text, never replaced by
// an empty string (docs/reference/settings.md, "Templates"). A '$' not
// followed by '{' is literal.
func Expand(s string, lookup LookupFunc) Expansion {
	if !strings.Contains(s, "${") {
		return Expansion{Value: s, Display: s}
	}
	var val, disp strings.Builder
	var e Expansion
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			val.WriteString(s)
			disp.WriteString(s)
			break
		}
		val.WriteString(s[:i])
		disp.WriteString(s[:i])
		s = s[i:]
		end := strings.IndexByte(s, '}')
		if end < 0 {
			e.Invalid = append(e.Invalid, s)
			val.WriteString(s)
			disp.WriteString(s)
			break
		}
		whole, body := s[:end+1], s[2:end]
		s = s[end+1:]
		name, def, hasDef := strings.Cut(body, ":-")
		if !validVarName(name) {
			e.Invalid = append(e.Invalid, whole)
			val.WriteString(whole)
			disp.WriteString(whole)
			continue
		}
		v, ok := lookup(name)
		switch {
		case ok && v != "":
			val.WriteString(v)
			if IsCredentialName(name) {
				disp.WriteString(Mask)
			} else {
				disp.WriteString(v)
			}
		case hasDef:
			// The default comes from the settings file, not the
			// environment, so it is shown as written.
			val.WriteString(def)
			disp.WriteString(def)
		case ok: // set but empty, no default: expands to the empty string
		default:
			e.Unset = append(e.Unset, name)
			val.WriteString(whole)
			disp.WriteString(whole)
		}
	}
	e.Value, e.Display = val.String(), disp.String()
	return e
}

func validVarName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
