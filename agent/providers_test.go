package agent

import (
	"errors"
	"strings"
	"testing"
	"time"

	"agent/config"
	"agent/providers/responses"
)

func TestResolveModel(t *testing.T) {
	s := &config.Settings{
		DefaultModel: &config.ModelRef{Provider: "local", Model: "dm"},
		Providers: map[string]*config.ProviderSettings{
			"local":     {Model: "pm", BaseURL: "http://127.0.0.1:9/v1", Timeout: time.Second},
			"reasoning": {Model: "rm"},
			"genai":     {Options: map[string]any{"defaultModel": "g-opt"}},
			"responses": {Model: "r-model", Options: map[string]any{"defaultModel": "r-opt"}},
		},
	}
	cases := []struct {
		name   string
		flags  ModelFlags
		s      *config.Settings
		prov   string
		model  string
		base   string
		errSub string
	}{
		{"defaultModel", ModelFlags{}, s, "local", "dm", "http://127.0.0.1:9/v1", ""},
		{"flag provider equal to defaultModel's keeps its model", ModelFlags{Provider: "local"}, s, "local", "dm", "http://127.0.0.1:9/v1", ""},
		{"flag provider takes providers.<id>.model", ModelFlags{Provider: "reasoning"}, s, "reasoning", "rm", "", ""},
		{"flag model wins", ModelFlags{Model: "fm"}, s, "local", "fm", "http://127.0.0.1:9/v1", ""},
		{"flag base URL wins", ModelFlags{BaseURL: "http://x/v1"}, s, "local", "dm", "http://x/v1", ""},
		{"no settings for the provider: the definition's default model", ModelFlags{Provider: "messages"}, s, "messages", "claude-sonnet-4-5", "", ""},
		{"local has no default model", ModelFlags{Provider: "local"}, &config.Settings{}, "local", "", "", ""},
		{"the defaultModel option before the definition's", ModelFlags{Provider: "genai"}, s, "genai", "g-opt", "", ""},
		{"providers.<id>.model before the defaultModel option", ModelFlags{Provider: "responses"}, s, "responses", "r-model", "", ""},
		{"nothing configured", ModelFlags{}, &config.Settings{}, "", "", "", "no provider configured"},
		{"unknown provider", ModelFlags{Provider: "vendorx"}, s, "", "", "", "unknown provider"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ResolveModel(c.flags, c.s)
			if c.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), c.errSub) {
					t.Errorf("err %v, want one containing %q", err, c.errSub)
				}
				return
			}
			if err != nil || got.ProviderID != c.prov || got.Model != c.model || got.BaseURL != c.base {
				t.Errorf("%+v %v, want provider %q model %q base URL %q", got, err, c.prov, c.model, c.base)
			}
		})
	}
}

func TestAPIKey(t *testing.T) {
	env := ProviderEnv{Lookup: func(n string) (string, bool) {
		v, ok := map[string]string{"REASONING_API_KEY": "k1", "MY_VAR": ""}[n]
		return v, ok
	}}
	if k, err := apiKey(ModelChoice{ProviderID: "reasoning"}, env); err != nil || k != "k1" {
		t.Fatal(k, err)
	}
	var mk *config.ErrMissingKey
	if _, err := apiKey(ModelChoice{ProviderID: "messages"}, env); !errors.As(err, &mk) || mk.Var != "MESSAGES_API_KEY" {
		t.Fatal(err)
	}
	if _, err := apiKey(ModelChoice{ProviderID: "regional", Settings: &config.ProviderSettings{APIKeyVar: "MY_VAR"}}, env); !errors.As(err, &mk) || mk.Var != "MY_VAR" {
		t.Fatal("an empty $ENV variable is a missing key naming it:", err)
	}
	if k, err := apiKey(ModelChoice{ProviderID: "local"}, env); err != nil || k != "" {
		t.Fatal("local needs no key")
	}
}

func TestNewProvider(t *testing.T) {
	env := ProviderEnv{Lookup: func(n string) (string, bool) {
		v, ok := map[string]string{"RESPONSES_API_KEY": "rk", "GENAI_API_KEY": "gk", "MESSAGES_API_KEY": "mk", "REASONING_API_KEY": "dk", "REGIONAL_API_KEY": "qk"}[n]
		return v, ok
	}}
	for _, id := range config.ProviderIDs {
		c, err := ResolveModel(ModelFlags{Provider: id}, &config.Settings{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewProvider(c, env); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	// responses: the surface rule and the options under providers.responses.
	settings := func(opts map[string]any, base string) *config.Settings {
		return &config.Settings{Providers: map[string]*config.ProviderSettings{"responses": {BaseURL: base, Options: opts}}}
	}
	cases := []struct {
		name    string
		s       *config.Settings
		surface responses.Surface
		errSub  string
	}{
		{"official", settings(nil, ""), responses.SurfaceResponses, ""},
		{"custom base URL", settings(nil, "http://127.0.0.1:9/v1"), responses.SurfaceChatCompletions, ""},
		{"apiSurface option", settings(map[string]any{"apiSurface": "responses"}, "http://127.0.0.1:9/v1"), responses.SurfaceResponses, ""},
		{"web tools on a custom endpoint", settings(map[string]any{"apiSurface": "responses", "nativeWebTools": map[string]any{"webSearch": true}}, "http://127.0.0.1:9/v1"), "", "official endpoint"},
		{"bad nested option", settings(map[string]any{"reasoning": map[string]any{"effort": 1.0}}, ""), "", "providers.responses.reasoning.effort"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			choice, _ := ResolveModel(ModelFlags{Provider: "responses"}, c.s)
			p, err := NewProvider(choice, env)
			if c.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), c.errSub) {
					t.Errorf("err %v, want one containing %q", err, c.errSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.(*responses.Provider).Surface(); got != c.surface {
				t.Errorf("surface %v, want %v", got, c.surface)
			}
		})
	}
	// genai always needs its key; the error names the variable.
	choice, _ := ResolveModel(ModelFlags{Provider: "genai"}, &config.Settings{})
	var mk *config.ErrMissingKey
	if _, err := NewProvider(choice, ProviderEnv{Lookup: func(string) (string, bool) { return "", false }}); !errors.As(err, &mk) || mk.Var != "GENAI_API_KEY" {
		t.Errorf("genai without key: %v", err)
	}
	if _, err := NewProvider(ModelChoice{ProviderID: "vendorx"}, env); err == nil {
		t.Error("unknown provider constructed")
	}
}
