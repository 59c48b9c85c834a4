package config

import (
	"strings"
	"testing"
)

func TestHooksSettings(t *testing.T) {
	cases := []struct {
		name     string
		fs       files
		trusted  bool
		handlers string // event/matcher/command;... of the handlers loaded
		disabled int
		diags    []string
	}{
		{"Claude Code's format", files{"user": `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"check.sh","timeout":30}]}]}}`}, true, "PreToolUse/Bash/check.sh", 0, nil},
		{"every file's handlers, in file order", files{"user": `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"u"}]}]}}`, "project": `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"p"}]}]}}`}, true, "Stop//u;Stop//p", 0, nil},
		{"an untrusted project's hooks are not loaded", files{"user": `{}`, "project": `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"p"}]}]}}`}, false, "", 0, nil},
		{"the exec form", files{"user": `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/bin/echo","args":["a","b"]}]}]}}`}, true, "Stop///bin/echo", 0, nil},
		{"another type is listed, not run", files{"user": `{"hooks":{"Stop":[{"hooks":[{"type":"prompt","prompt":"ok?"}]}]}}`}, true, "Stop//", 0, []string{"$.hooks.Stop[0].hooks[0].type: type \"prompt\" is not supported", "$.hooks.Stop[0].hooks[0].prompt: not supported here"}},
		{"an unknown event", files{"user": `{"hooks":{"BeforeLunch":[]}}`}, true, "", 0, []string{"$.hooks.BeforeLunch: unknown hook event"}},
		{"hooks not an object", files{"user": `{"hooks":[]}`}, true, "", 0, []string{"$.hooks: expected an object of events"}},
		{"an event not an array", files{"user": `{"hooks":{"Stop":{}}}`}, true, "", 0, []string{"$.hooks.Stop: expected an array"}},
		{"a group without hooks", files{"user": `{"hooks":{"Stop":[{"matcher":"x"}]}}`}, true, "", 0, []string{"$.hooks.Stop[0].hooks: expected an array of handlers"}},
		{"a matcher not a string", files{"user": `{"hooks":{"Stop":[{"matcher":1,"hooks":[]}]}}`}, true, "", 0, []string{"$.hooks.Stop[0].matcher: expected a string"}},
		{"a handler without type", files{"user": `{"hooks":{"Stop":[{"hooks":[{"command":"x"}]}]}}`}, true, "", 0, []string{"needs a type"}},
		{"a command handler without command", files{"user": `{"hooks":{"Stop":[{"hooks":[{"type":"command"}]}]}}`}, true, "", 0, []string{"needs a non-empty command"}},
		{"a bad timeout", files{"user": `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","timeout":0}]}]}}`}, true, "", 0, []string{"timeout: must be a number of seconds"}},
		{"args not strings", files{"user": `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","args":[1]}]}]}}`}, true, "", 0, []string{"args: expected an array of strings"}},
		{"failClosed not a bool", files{"user": `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","failClosed":"yes"}]}]}}`}, true, "", 0, []string{"failClosed: expected true or false"}},
		{"an unknown handler key is said, the handler stays", files{"user": `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","colour":1}]}]}}`}, true, "Stop//x", 0, []string{"colour: unknown key"}},
		{"one bad handler leaves its neighbours", files{"user": `{"hooks":{"Stop":[{"hooks":[{"type":"command"},{"type":"command","command":"ok"}]}]}}`}, true, "Stop//ok", 0, []string{"needs a non-empty command"}},
		{"disableAllHooks", files{"user": `{"disableAllHooks":true}`}, true, "", 1, nil},
		{"disableAllHooks not a bool", files{"user": `{"disableAllHooks":1}`}, true, "", 0, []string{"$.disableAllHooks: expected true or false"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := load(t, c.fs, c.trusted, nil)
			var got []string
			for _, h := range s.Hooks {
				got = append(got, h.Event+"/"+h.Matcher+"/"+h.Command)
			}
			if strings.Join(got, ";") != c.handlers {
				t.Errorf("handlers %q, want %q", strings.Join(got, ";"), c.handlers)
			}
			if len(s.HooksDisabled) != c.disabled {
				t.Errorf("disabled %v", s.HooksDisabled)
			}
			wantDiag(t, s, c.diags...)
		})
	}
}
