// Package builtin holds the built-in provider definitions the command line
// offers (the specification's createDefaultProviderDefinitions;
// docs/providers.md, "Built-in definitions (`providers/builtin`)"): for
// each of the ids messages, responses, genai, local, regional and reasoning
// a display name, the defaults, a model catalog, the setup steps (base URL,
// model, masked API key) and a constructor that takes the resolved settings
// (docs/reference/cli.md, "Provider resolution"), with the
// provider-specific options under their specification names
// (docs/reference/settings.md, "providers").
//
// Imports: the standard library, agent/providers and every chat provider
// package under it (the one place that constructs them all).
package builtin

import (
	"net/http"
	"strings"
	"time"

	"agent/providers"
	"agent/providers/chatcompat"
	"agent/providers/genai"
	"agent/providers/messages"
	"agent/providers/responses"
)

// Config is what a definition's constructor takes: the settings after
// resolution (docs/reference/cli.md, "Provider resolution"). The zero value
// of each field means the definition's default.
type Config struct {
	APIKey  string
	BaseURL string
	Model   string
	Timeout time.Duration
	Client  *http.Client
	// Options are the provider-specific options under providers.<id>,
	// JSON-shaped (strings, bools, float64 or json.Number, []any,
	// map[string]any) and named as in docs/reference/settings.md,
	// "providers".
	Options map[string]any
}

// StepKind names what a setup step asks for.
type StepKind string

// Setup step kinds.
const (
	StepBaseURL StepKind = "baseURL"
	StepModel   StepKind = "model"
	StepAPIKey  StepKind = "apiKey"
)

// SetupStep is one question of a provider's setup.
type SetupStep struct {
	Kind    StepKind
	Label   string
	Default string // offered as the answer; never a real key
	// Masked: the answer is a secret, read without echo and never shown.
	Masked bool
	// Optional: an empty answer keeps the default.
	Optional bool
	// EnvVar names the environment variable the answer may come from.
	EnvVar string
}

// Model is an entry of a model catalog. Slugs pass to the endpoint
// verbatim; any other slug the endpoint knows works too.
type Model struct {
	ID   string
	Name string
	// ContextWindow and MaxOutput are the model's limits in tokens, as
	// its vendor documents them (docs/providers.md, "Context windows").
	ContextWindow, MaxOutput int
}

// Definition is one built-in provider.
type Definition struct {
	ID          string
	DisplayName string
	// KeyEnv is the environment variable of the key; "" for local.
	KeyEnv string
	// DefaultBaseURL is the endpoint used when none is configured; for
	// regional, the default region's.
	DefaultBaseURL string
	// DefaultModel is used when neither flags nor settings name one; ""
	// for local (the model is the server's).
	DefaultModel string
	// PlaceholderKey is sent when no key is configured (local only).
	PlaceholderKey string
	Models         []Model
	Setup          []SetupStep
	// New constructs the provider.
	New func(Config) (providers.Provider, error)
}

// DefaultDefinitions returns the built-in provider definitions, in the
// display order of docs/providers.md, "Built-in definitions
// (`providers/builtin`)". Each call returns fresh values the caller may
// change.
func DefaultDefinitions() []Definition {
	defs := []Definition{
		{
			ID: "messages", DisplayName: "Messages API", KeyEnv: messages.KeyEnv,
			DefaultBaseURL: MessagesBaseURL, DefaultModel: MessagesDefaultModel,
			Models: []Model{
				{"claude-opus-4-6", "Opus 4.6", 1000000, 128000},
				{"claude-sonnet-4-5", "Sonnet 4.5", 200000, 64000},
				{"claude-haiku-4-5", "Haiku 4.5", 200000, 64000},
			},
			New: newMessages,
		},
		{
			ID: "responses", DisplayName: "Responses API (official or compatible endpoint)", KeyEnv: responses.KeyEnv,
			DefaultBaseURL: responses.OfficialBaseURL, DefaultModel: ResponsesDefaultModel,
			Models: []Model{
				{"gpt-5", "GPT-5", 400000, 128000}, {"gpt-5-mini", "GPT-5 mini", 400000, 128000},
				{"gpt-5-nano", "GPT-5 nano", 400000, 128000}, {"gpt-4.1", "GPT-4.1", 1047576, 32768},
			},
			New: newResponses,
		},
		{
			ID: "genai", DisplayName: "GenAI API", KeyEnv: genai.KeyEnv,
			DefaultBaseURL: genai.OfficialBaseURL, DefaultModel: GenaiDefaultModel,
			Models: []Model{
				{"gemini-2.5-pro", "Gemini 2.5 Pro", 1048576, 65536}, {"gemini-2.5-flash", "Gemini 2.5 Flash", 1048576, 65536},
				{"gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", 1048576, 65536}, {"gemini-2.5-flash-image", "Gemini 2.5 Flash Image", 32768, 32768},
			},
			New: newGenai,
		},
		{
			ID: "reasoning", DisplayName: "Reasoning model endpoint", KeyEnv: chatcompat.ReasoningKeyEnv,
			DefaultBaseURL: chatcompat.ReasoningBaseURL, DefaultModel: chatcompat.ReasoningDefaultModel,
			Models: []Model{
				{chatcompat.ReasoningDefaultModel, "V4 Flash", 1048576, 393216},
				{"deepseek-chat", "Chat", 131072, 8192}, {"deepseek-reasoner", "Reasoner", 131072, 65536},
			},
			New: newReasoning,
		},
		{
			ID: "regional", DisplayName: "Regional cloud endpoint", KeyEnv: chatcompat.RegionalKeyEnv,
			DefaultBaseURL: chatcompat.RegionalBaseURLs[chatcompat.RegionalDefaultRegion], DefaultModel: chatcompat.RegionalDefaultModel,
			Models: []Model{
				{"qwen-plus", "Qwen Plus", 1000000, 32768}, {"qwen-max", "Qwen Max", 262144, 65536},
				{"qwen-flash", "Qwen Flash", 1000000, 32768}, {"qwen3-coder-plus", "Qwen3 Coder Plus", 1000000, 65536},
				{"qwen-vl-max", "Qwen VL Max", 131072, 8192},
			},
			New: newRegional,
		},
		{
			// Listed in setup as the local-server choice
			// (docs/providers.md, "Built-in definitions
			// (`providers/builtin`)").
			ID: "local", DisplayName: "Local server (chat completions)",
			DefaultBaseURL: chatcompat.LocalBaseURL, PlaceholderKey: chatcompat.LocalAPIKey,
			New: newLocal,
		},
	}
	for i := range defs {
		defs[i].Setup = setup(&defs[i])
	}
	return defs
}

// Defaults of the definitions that the specification leaves to the vendors'
// own (docs/providers.md, "Built-in definitions (`providers/builtin`)"):
// the messages API's official root (the provider itself takes whatever root
// it is given) and each catalog's default model.
const (
	MessagesBaseURL       = messages.DefaultBaseURL
	MessagesDefaultModel  = "claude-sonnet-4-5"
	ResponsesDefaultModel = "gpt-5"
	GenaiDefaultModel     = "gemini-2.5-flash"
)

// setup derives the setup steps from a definition's facts: base URL,
// model, and the API key, masked (a placeholder for local).
func setup(d *Definition) []SetupStep {
	steps := []SetupStep{{Kind: StepBaseURL, Label: "Base URL of the " + d.DisplayName, Default: d.DefaultBaseURL, Optional: true}}
	model := SetupStep{Kind: StepModel, Label: "Model", Default: d.DefaultModel, Optional: d.DefaultModel != ""}
	if d.ID == "local" {
		model.Label = "Model name as the server knows it"
	}
	steps = append(steps, model)
	key := SetupStep{Kind: StepAPIKey, Label: "API key", Masked: true, EnvVar: d.KeyEnv}
	if d.PlaceholderKey != "" {
		key.Label, key.Default, key.Optional = "API key (local servers do not check it)", d.PlaceholderKey, true
	}
	return append(steps, key)
}

// ModelLimits are the context window and longest answer of a model of
// provider id's catalog: the entry whose id is the model, or the
// entry it extends with a dated or versioned suffix ("claude-sonnet-4-5-20250929"
// is claude-sonnet-4-5). ok is false for a model the catalog does not list.
func ModelLimits(id, model string) (window, maxOutput int, ok bool) {
	d, found := Lookup(id)
	if !found || model == "" {
		return 0, 0, false
	}
	best := -1
	for i, m := range d.Models {
		if (model == m.ID || strings.HasPrefix(model, m.ID+"-")) && (best < 0 || len(m.ID) > len(d.Models[best].ID)) {
			best = i
		}
	}
	if best < 0 {
		return 0, 0, false
	}
	return d.Models[best].ContextWindow, d.Models[best].MaxOutput, true
}

// Lookup returns the definition of id.
func Lookup(id string) (Definition, bool) {
	for _, d := range DefaultDefinitions() {
		if d.ID == id {
			return d, true
		}
	}
	return Definition{}, false
}
