package config

import (
	"reflect"
	"testing"
)

func TestContextSettings(t *testing.T) {
	on, off := true, false
	cases := []struct {
		name    string
		fs      files
		trusted bool
		auto    *bool
		at      float64
		models  map[string]ModelLimits
		diags   []string
	}{
		{"none set", files{"user": `{}`}, true, nil, 0, nil, nil},
		{"all set", files{"user": `{"autoCompact":false,"autoCompactAt":0.7,"models":{"m1":{"contextWindow":32768,"maxOutputTokens":4096}}}`}, true,
			&off, 0.7, map[string]ModelLimits{"m1": {32768, 4096}}, nil},
		{"the project's autoCompact wins", files{"user": `{"autoCompact":false}`, "project": `{"autoCompact":true}`}, true, &on, 0, nil, nil},
		{"an untrusted project's does not apply", files{"user": `{"autoCompact":false}`, "project": `{"autoCompact":true}`}, false, &off, 0, nil, nil},
		{"a models entry is whole from the highest file", files{"user": `{"models":{"m":{"contextWindow":1000,"maxOutputTokens":10},"u":{"contextWindow":5}}}`, "project": `{"models":{"m":{"contextWindow":2000}}}`}, true,
			nil, 0, map[string]ModelLimits{"m": {2000, 0}, "u": {5, 0}}, nil},
		{"autoCompact not a bool", files{"user": `{"autoCompact":"no"}`}, true, nil, 0, nil, []string{"$.autoCompact: expected true or false, found string"}},
		{"autoCompactAt below 0.5", files{"user": `{"autoCompactAt":0.3}`}, true, nil, 0, nil, []string{"$.autoCompactAt: must be a fraction from 0.5 to 0.95"}},
		{"autoCompactAt above 0.95", files{"user": `{"autoCompactAt":1}`}, true, nil, 0, nil, []string{"$.autoCompactAt: must be a fraction from 0.5 to 0.95"}},
		{"autoCompactAt a string", files{"user": `{"autoCompactAt":"0.7"}`}, true, nil, 0, nil, []string{"$.autoCompactAt: expected a fraction"}},
		{"an invalid value keeps the lower file's", files{"user": `{"autoCompactAt":0.6}`, "project": `{"autoCompactAt":2}`}, true, nil, 0.6, nil, []string{"$.autoCompactAt: must be a fraction"}},
		{"models not an object", files{"user": `{"models":[]}`}, true, nil, 0, nil, []string{"$.models: expected an object"}},
		{"a models entry not an object", files{"user": `{"models":{"m":4096}}`}, true, nil, 0, nil, []string{"$.models.m: expected an object"}},
		{"a zero window", files{"user": `{"models":{"m":{"contextWindow":0}}}`}, true, nil, 0, nil, []string{"$.models.m.contextWindow: must be a whole number of tokens"}},
		{"a fractional window", files{"user": `{"models":{"m":{"contextWindow":1.5}}}`}, true, nil, 0, nil, []string{"$.models.m.contextWindow: must be a whole number of tokens"}},
		{"an unknown key", files{"user": `{"models":{"m":{"window":100}}}`}, true, nil, 0, nil, []string{"$.models.m.window: unknown key"}},
		{"answers as long as the window", files{"user": `{"models":{"m":{"contextWindow":100,"maxOutputTokens":100}}}`}, true, nil, 0, nil, []string{"$.models.m: maxOutputTokens must be smaller"}},
		{"an empty model id", files{"user": `{"models":{"":{"contextWindow":100}}}`}, true, nil, 0, nil, []string{"an empty model id"}},
		{"one bad entry leaves the others", files{"user": `{"models":{"bad":{"contextWindow":-1},"good":{"contextWindow":9000}}}`}, true, nil, 0,
			map[string]ModelLimits{"good": {9000, 0}}, []string{"$.models.bad.contextWindow"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := load(t, c.fs, c.trusted, nil)
			if !reflect.DeepEqual(s.Context.AutoCompact, c.auto) {
				t.Errorf("autoCompact %v, want %v", s.Context.AutoCompact, c.auto)
			}
			if s.Context.AutoCompactAt != c.at {
				t.Errorf("autoCompactAt %v, want %v", s.Context.AutoCompactAt, c.at)
			}
			if !reflect.DeepEqual(s.Context.Models, c.models) {
				t.Errorf("models %v, want %v", s.Context.Models, c.models)
			}
			wantDiag(t, s, c.diags...)
		})
	}
}
