package agent

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"agent/config"
	"agent/providers"
	"agent/providers/chatcompat"
	"agent/providers/messages"
)

// ErrNoModel is returned when neither flags nor settings name a provider.
var ErrNoModel = errors.New("no provider configured")

// ModelFlags are the session flags of cli.md that choose the model.
type ModelFlags struct {
	Provider string
	Model    string
	BaseURL  string
}

// ModelChoice is a resolved provider and model.
type ModelChoice struct {
	ProviderID string
	Model      string
	BaseURL    string
	Timeout    time.Duration
	Settings   *config.ProviderSettings // nil when settings name nothing for it
}

// ResolveModel applies cli.md's provider resolution, first match wins: the
// flags; the settings key defaultModel with the options under
// providers.<id>; the provider's own defaults.
func ResolveModel(f ModelFlags, s *config.Settings) (ModelChoice, error) {
	var c ModelChoice
	switch {
	case f.Provider != "":
		if !config.ValidProvider(f.Provider) {
			return c, fmt.Errorf("unknown provider %q: use one of messages, responses, genai, reasoning, regional, local", f.Provider)
		}
		c.ProviderID = f.Provider
	case s != nil && s.DefaultModel != nil:
		c.ProviderID = s.DefaultModel.Provider
	default:
		return c, fmt.Errorf("%w: pass --provider ID (messages, responses, genai, reasoning, regional, local) or set defaultModel in ~/.agent/settings.json", ErrNoModel)
	}
	// The model: the flag; else defaultModel's when it names this
	// provider; else providers.<id>.model; else the provider's default.
	if s != nil && s.DefaultModel != nil && s.DefaultModel.Provider == c.ProviderID {
		c.Model = s.DefaultModel.Model
	}
	if s != nil {
		c.Settings = s.Providers[c.ProviderID]
	}
	if c.Settings != nil {
		if c.Model == "" {
			c.Model = c.Settings.Model
		}
		c.BaseURL = c.Settings.BaseURL
		c.Timeout = c.Settings.Timeout
	}
	if f.Model != "" {
		c.Model = f.Model
	}
	if f.BaseURL != "" {
		c.BaseURL = f.BaseURL
	}
	return c, nil
}

// ProviderEnv supplies what a provider needs from outside.
type ProviderEnv struct {
	Lookup     func(string) (string, bool) // the environment
	HTTPClient *http.Client                // nil: the default client
}

// apiKey finds a provider's key: the settings apiKey (literal or
// "$ENV:NAME"), else the provider's environment variable (cli.md). A
// missing key is an error naming the variable, before any request.
func apiKey(c ModelChoice, env ProviderEnv) (string, error) {
	if c.ProviderID == "local" {
		if c.Settings != nil && c.Settings.APIKey != "" {
			return c.Settings.APIKey, nil
		}
		return "", nil // the local provider sends its placeholder key
	}
	varName := config.APIKeyEnv[c.ProviderID]
	if c.Settings != nil {
		if c.Settings.APIKey != "" {
			return c.Settings.APIKey, nil
		}
		if c.Settings.APIKeyVar != "" {
			varName = c.Settings.APIKeyVar
		}
	}
	if v, ok := env.Lookup(varName); ok && v != "" {
		return v, nil
	}
	return "", &config.ErrMissingKey{Provider: c.ProviderID, Var: varName}
}

func optString(s *config.ProviderSettings, key string) string {
	if s == nil {
		return ""
	}
	v, _ := s.Options[key].(string)
	return v
}

// NewProvider constructs the chosen provider.
func NewProvider(c ModelChoice, env ProviderEnv) (providers.Provider, error) {
	key, err := apiKey(c, env)
	if err != nil {
		return nil, err
	}
	switch c.ProviderID {
	case "local":
		return chatcompat.NewLocalProvider(chatcompat.LocalOptions{APIKey: key, BaseURL: c.BaseURL, DefaultModel: c.Model, Timeout: c.Timeout, Client: env.HTTPClient})
	case "reasoning":
		return chatcompat.NewReasoningProvider(chatcompat.ReasoningOptions{APIKey: key, BaseURL: c.BaseURL, DefaultModel: c.Model, Timeout: c.Timeout, Client: env.HTTPClient,
			Thinking: chatcompat.Thinking(optString(c.Settings, "thinking")), ReasoningEffort: providers.Effort(optString(c.Settings, "reasoningEffort"))})
	case "regional":
		return chatcompat.NewRegionalProvider(chatcompat.RegionalOptions{APIKey: key, BaseURL: c.BaseURL, DefaultModel: c.Model, Timeout: c.Timeout, Client: env.HTTPClient,
			Region: optString(c.Settings, "region"), ResponsesBaseURL: optString(c.Settings, "responsesBaseURL"), BuiltInWebTools: webTools(c.Settings)})
	case "messages":
		return messages.New(messages.Options{APIKey: key, BaseURL: c.BaseURL, DefaultModel: c.Model, Timeout: c.Timeout, Client: env.HTTPClient})
	}
	return nil, fmt.Errorf("provider %s is not available in this build yet", c.ProviderID)
}

func webTools(s *config.ProviderSettings) chatcompat.WebTools {
	var w chatcompat.WebTools
	if s == nil {
		return w
	}
	if m, ok := s.Options["builtInWebTools"].(map[string]any); ok {
		w.WebSearch, _ = m["webSearch"].(bool)
		w.WebFetch, _ = m["webFetch"].(bool)
	}
	return w
}
