package config

import "agent/internal/strictjson"

// The keys of what the model is told (docs/reference/runtime.md, "System
// prompt and instruction files"): systemPrompt replaces the static part of
// the system prompt, appendSystemPrompt adds to it, and instructions.maxBytes
// caps the instruction files. Like every scalar key, the file of highest
// precedence that sets one wins (docs/reference/settings.md, "Precedence").

// DefaultInstructionsMaxBytes caps the instruction files in all.
const DefaultInstructionsMaxBytes = 64 << 10

// TextSetting is a string setting and the file it came from.
type TextSetting struct {
	Value string
	File  string
}

// PromptSettings are the prompt keys.
type PromptSettings struct {
	SystemPrompt       *TextSetting // nil: the built-in static prompt
	AppendSystemPrompt *TextSetting // nil: nothing appended
	// InstructionsMaxBytes caps the instruction files (0: the default).
	InstructionsMaxBytes int
}

func (l *loader) textSetting(f File, p strictjson.Path, v *strictjson.Value) *TextSetting {
	if v.Kind != strictjson.String {
		l.diag(f.Path, p, "expected a string, found %s; ignored", v.Kind)
		return nil
	}
	return &TextSetting{Value: v.Str, File: f.Path}
}

func (l *loader) instructions(f File, p strictjson.Path, v *strictjson.Value) {
	if v.Kind != strictjson.Object {
		l.diag(f.Path, p, "expected an object {\"maxBytes\": N}, found %s; ignored", v.Kind)
		return
	}
	for _, m := range v.Members {
		kp := p.Key(m.Key)
		switch m.Key {
		case "maxBytes":
			n, ok := positiveInt(m.Value, 1<<30)
			if !ok {
				l.diag(f.Path, kp, "must be a whole number of bytes from 1 to 1073741824; ignored")
				continue
			}
			l.s.Prompt.InstructionsMaxBytes = int(n)
		default:
			l.diag(f.Path, kp, "unknown key; ignored (known: maxBytes)")
		}
	}
}

// positiveInt reads a JSON number that is a whole number from 1 to max.
func positiveInt(v *strictjson.Value, max int64) (int64, bool) {
	if v.Kind != strictjson.Number {
		return 0, false
	}
	var n int64
	for i, c := range v.Str {
		if c < '0' || c > '9' || i > 10 {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, n >= 1 && n <= max
}
