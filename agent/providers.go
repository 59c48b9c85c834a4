package agent

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"agent/config"
	"agent/internal/quote"
	"agent/providers"
	"agent/providers/builtin"
)

// ErrNoModel is returned when neither flags nor settings name a provider.
var ErrNoModel = errors.New("no provider configured")

// ModelFlags are the session flags that choose the model
// (docs/reference/cli.md, "Session flags").
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

// ResolveModel applies the provider resolution of docs/reference/cli.md,
// "Provider resolution", first match wins: the flags; the settings key
// defaultModel with the options under providers.<id>; the built-in
// definitions' defaults. The base URL is left empty when nothing names one:
// the provider applies its default, which for regional depends on the
// region option and for responses decides the API surface
// (docs/providers.md, "responses (`providers/responses`)").
func ResolveModel(f ModelFlags, s *config.Settings) (ModelChoice, error) {
	var c ModelChoice
	switch {
	case f.Provider != "":
		if !config.ValidProvider(f.Provider) {
			return c, fmt.Errorf("unknown provider %q: use %s", quote.V(f.Provider), config.ProviderList())
		}
		c.ProviderID = f.Provider
	case s != nil && s.DefaultModel != nil:
		c.ProviderID = s.DefaultModel.Provider
	default:
		return c, fmt.Errorf("%w: pass --provider ID (%s) or set defaultModel in ~/.agent/settings.json", ErrNoModel, config.ProviderList())
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
	// Last, the provider's defaultModel option, then the built-in
	// definition's default (none for local: the model is the server's).
	if c.Model == "" && c.Settings != nil {
		c.Model, _ = c.Settings.Options["defaultModel"].(string)
	}
	if c.Model == "" {
		if def, ok := builtin.Lookup(c.ProviderID); ok {
			c.Model = def.DefaultModel
		}
	}
	return c, nil
}

// ProviderEnv supplies what a provider needs from outside.
type ProviderEnv struct {
	Lookup     func(string) (string, bool) // the environment
	HTTPClient *http.Client                // nil: the default client
}

// apiKey finds a provider's key: the settings apiKey (literal or
// "$ENV:NAME"), else the provider's environment variable
// (docs/reference/cli.md, "Provider resolution" and "Environment"). A
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

// NewProvider constructs the chosen provider through its built-in
// definition (providers/builtin): the definition's defaults fill what the
// flags and settings leave open, and the provider-specific options under
// providers.<id> are read with the names of docs/reference/settings.md,
// "providers".
func NewProvider(c ModelChoice, env ProviderEnv) (providers.Provider, error) {
	def, ok := builtin.Lookup(c.ProviderID)
	if !ok {
		return nil, fmt.Errorf("unknown provider %q", quote.V(c.ProviderID))
	}
	key, err := apiKey(c, env)
	if err != nil {
		return nil, err
	}
	cfg := builtin.Config{APIKey: key, BaseURL: c.BaseURL, Model: c.Model, Timeout: c.Timeout, Client: env.HTTPClient}
	if c.Settings != nil {
		cfg.Options = c.Settings.Options
	}
	return def.New(cfg)
}
