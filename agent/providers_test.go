package agent

import (
	"errors"
	"strings"
	"testing"
	"time"

	"agent/config"
)

func TestResolveModel(t *testing.T) {
	s := &config.Settings{
		DefaultModel: &config.ModelRef{Provider: "local", Model: "dm"},
		Providers: map[string]*config.ProviderSettings{
			"local":     {Model: "pm", BaseURL: "http://127.0.0.1:9/v1", Timeout: time.Second},
			"reasoning": {Model: "rm"},
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
		{"no settings for the provider", ModelFlags{Provider: "messages"}, s, "messages", "", "", ""},
		{"nothing configured", ModelFlags{}, &config.Settings{}, "", "", "", "no provider configured"},
		{"unknown provider", ModelFlags{Provider: "vendorx"}, s, "", "", "", "unknown provider"},
	}
	for _, c := range cases {
		got, err := ResolveModel(c.flags, c.s)
		if c.errSub != "" {
			if err == nil || !strings.Contains(err.Error(), c.errSub) {
				t.Errorf("%s: err %v", c.name, err)
			}
			continue
		}
		if err != nil || got.ProviderID != c.prov || got.Model != c.model || got.BaseURL != c.base {
			t.Errorf("%s: %+v %v", c.name, got, err)
		}
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
