package config

import (
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync"
	"time"

	"agent/internal/strictjson"
)

// ProviderIDs are the chat provider ids (docs/reference/cli.md, "Session
// flags"), in display order.
var ProviderIDs = []string{"messages", "responses", "genai", "reasoning", "regional", "local"}

// APIKeyEnv is the environment variable that holds each provider's key
// (docs/reference/cli.md, "Environment"; local needs none).
var APIKeyEnv = map[string]string{
	"messages":  "MESSAGES_API_KEY",
	"responses": "RESPONSES_API_KEY",
	"genai":     "GENAI_API_KEY",
	"reasoning": "REASONING_API_KEY",
	"regional":  "REGIONAL_API_KEY",
}

// ValidBaseURL reports whether s can be a provider's base URL, from the
// settings (providers.<id>.baseURL) or the --base-url flag alike: an
// absolute http or https URL with a host and no user credentials (keys go
// in the environment; docs/reference/settings.md, "providers").
func ValidBaseURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

// ProviderList names the chat provider ids for a message or a flag's
// help: "messages, responses, genai, reasoning, regional or local".
func ProviderList() string {
	n := len(ProviderIDs)
	return strings.Join(ProviderIDs[:n-1], ", ") + " or " + ProviderIDs[n-1]
}

// ValidProvider reports whether id is a chat provider id.
func ValidProvider(id string) bool {
	for _, p := range ProviderIDs {
		if p == id {
			return true
		}
	}
	return false
}

// optKind is the JSON shape a provider option takes.
type optKind struct {
	kind strictjson.Kind
	enum []string // allowed string values, when set
}

var (
	optString = optKind{kind: strictjson.String}
	optBool   = optKind{kind: strictjson.Bool}
	optObject = optKind{kind: strictjson.Object}
	optArray  = optKind{kind: strictjson.Array}
)

func optEnum(vals ...string) optKind { return optKind{kind: strictjson.String, enum: vals} }

// providerOptions are the settable options per provider id
// (docs/reference/settings.md, "providers"; client, executor, logger and
// payloadLogger are Go values, not settings). baseURL, model, timeout and
// apiKey are common and handled apart.
var providerOptions = sync.OnceValue(func() map[string]map[string]optKind {
	return map[string]map[string]optKind{
		"messages": {},
		"responses": {
			"organization": optString, "defaultModel": optString,
			"apiSurface":     optEnum("responses", "chat-completions"),
			"responseFormat": optEnum("text", "json_object", "json_schema"),
			"jsonSchema":     optObject, "reasoning": optObject, "store": optBool,
			"includeEncryptedReasoning": optBool, "strictTools": optBool,
			"nativeWebTools": optObject, "includeStreamUsage": optBool,
		},
		"genai": {
			"defaultModel":     optString,
			"responseMimeType": optEnum("text/plain", "application/json"),
			"responseSchema":   optObject, "responseJsonSchema": optObject,
			"thinkingConfig": optObject, "safetySettings": optArray, "toolConfig": optObject,
			"defaultResponseModalities": optArray, "imageCapableModels": optArray,
		},
		"reasoning": {
			"defaultModel":    optString,
			"thinking":        optEnum("enabled", "disabled"),
			"reasoningEffort": optEnum("low", "medium", "high", "xhigh", "max"),
		},
		"regional": {
			"defaultModel": optString, "responsesBaseURL": optString, "builtInWebTools": optObject,
			"region": optEnum("singapore", "usVirginia", "beijing", "hongKong"),
		},
		"local": {"defaultModel": optString},
	}
})

// ModelRef is the defaultModel setting (docs/reference/settings.md,
// "defaultModel").
type ModelRef struct {
	Provider string
	Model    string
	File     string
}

// ProviderSettings are the settings under providers.<id>, merged key by key
// with scope precedence.
type ProviderSettings struct {
	BaseURL string
	Model   string
	Timeout time.Duration
	// APIKey is the resolved key; APIKeyVar names the environment variable
	// it came from (or should have come from), for error messages.
	APIKey    string
	APIKeyVar string
	Options   map[string]any // provider-specific options, JSON-shaped
}

// envRef resolves a "$ENV:NAME" settings value (docs/reference/settings.md,
// "providers").
func (l *loader) envRef(f File, p strictjson.Path, s string) (string, string, bool) {
	name, ok := strings.CutPrefix(s, "$ENV:")
	if !ok {
		return s, "", true
	}
	if !validVarName(name) {
		l.diag(f.Path, p, "\"$ENV:\" must be followed by an environment variable name")
		return "", "", false
	}
	v, set := l.opts.Lookup(name)
	if !set || v == "" {
		l.diag(f.Path, p, "environment variable %s is not set", name)
		return "", name, false
	}
	return v, name, true
}

func (l *loader) defaultModel(f File, p strictjson.Path, v *strictjson.Value) {
	if v.Kind != strictjson.Object {
		l.diag(f.Path, p, "expected an object {\"provider\": ID, \"model\": SLUG}, found %s", v.Kind)
		return
	}
	ref := &ModelRef{File: f.Path}
	for _, m := range v.Members {
		kp := p.Key(m.Key)
		switch m.Key {
		case "provider":
			if m.Value.Kind != strictjson.String || !ValidProvider(m.Value.Str) {
				l.diag(f.Path, kp, "must be one of %s; defaultModel ignored", oneOf(ProviderIDs...))
				return
			}
			ref.Provider = m.Value.Str
		case "model":
			if m.Value.Kind != strictjson.String || m.Value.Str == "" {
				l.diag(f.Path, kp, "must be a non-empty string; defaultModel ignored")
				return
			}
			ref.Model = m.Value.Str
		default:
			l.diag(f.Path, kp, "unknown key; defaultModel ignored (known: provider, model)")
			return
		}
	}
	if ref.Provider == "" {
		l.diag(f.Path, p, "\"provider\" is required; defaultModel ignored")
		return
	}
	l.s.DefaultModel = ref
}

func (l *loader) providers(f File, p strictjson.Path, v *strictjson.Value) {
	if v.Kind != strictjson.Object {
		l.diag(f.Path, p, "expected an object keyed by provider id, found %s", v.Kind)
		return
	}
	for _, pm := range v.Members {
		pp := p.Key(pm.Key)
		allowed, ok := providerOptions()[pm.Key]
		if !ok {
			l.diag(f.Path, pp, "unknown provider id (known: %s); ignored", strings.Join(ProviderIDs, ", "))
			continue
		}
		if pm.Value.Kind != strictjson.Object {
			l.diag(f.Path, pp, "expected an object of options, found %s", pm.Value.Kind)
			continue
		}
		ps := l.s.Providers[pm.Key]
		if ps == nil {
			ps = &ProviderSettings{Options: map[string]any{}, APIKeyVar: APIKeyEnv[pm.Key]}
			l.s.Providers[pm.Key] = ps
		}
		for _, m := range pm.Value.Members {
			kp := pp.Key(m.Key)
			switch m.Key {
			case "baseURL", "responsesBaseURL":
				if m.Value.Kind != strictjson.String {
					l.diag(f.Path, kp, "expected a URL string, found %s", m.Value.Kind)
					continue
				}
				s, _, ok := l.envRef(f, kp, m.Value.Str)
				if !ok {
					continue
				}
				if !ValidBaseURL(s) {
					l.diag(f.Path, kp, "must be an http or https URL with a host and no user credentials")
					continue
				}
				if m.Key == "baseURL" {
					ps.BaseURL = s
				} else {
					ps.Options[m.Key] = s
				}
			case "model":
				if m.Value.Kind != strictjson.String || m.Value.Str == "" {
					l.diag(f.Path, kp, "must be a non-empty string")
					continue
				}
				ps.Model = m.Value.Str
			case "timeout":
				ms, ok := m.Value.Float()
				if !ok || ms <= 0 || math.IsInf(ms, 0) || ms > float64(math.MaxInt64/int64(time.Millisecond)) {
					l.diag(f.Path, kp, "must be a positive number of milliseconds")
					continue
				}
				ps.Timeout = time.Duration(ms * float64(time.Millisecond))
			case "apiKey":
				if m.Value.Kind != strictjson.String || m.Value.Str == "" {
					l.diag(f.Path, kp, "must be a non-empty string (\"$ENV:NAME\" reads it from the environment)")
					continue
				}
				key, name, ok := l.envRef(f, kp, m.Value.Str)
				if name != "" {
					ps.APIKeyVar = name
				}
				if ok {
					ps.APIKey = key
				}
			default:
				kind, ok := allowed[m.Key]
				if !ok {
					l.diag(f.Path, kp, "unknown option for provider %s; ignored", pm.Key)
					continue
				}
				if m.Value.Kind != kind.kind {
					l.diag(f.Path, kp, "expected %s, found %s; ignored", article(kind.kind), m.Value.Kind)
					continue
				}
				if kind.enum != nil && !contains(kind.enum, m.Value.Str) {
					l.diag(f.Path, kp, "must be one of %s; ignored", oneOf(kind.enum...))
					continue
				}
				ps.Options[m.Key] = m.Value.Interface()
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func article(k strictjson.Kind) string {
	switch k {
	case strictjson.Object, strictjson.Array:
		return "an " + k.String()
	}
	return "a " + k.String()
}

// ErrMissingKey is the error for a provider without its API key.
type ErrMissingKey struct{ Provider, Var string }

func (e *ErrMissingKey) Error() string {
	return fmt.Sprintf("provider %s needs an API key: set the environment variable %s", e.Provider, e.Var)
}
