package builtin

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"agent/providers"
	"agent/providers/chatcompat"
	"agent/providers/genai"
	"agent/providers/messages"
	"agent/providers/responses"
)

func TestDefinitions(t *testing.T) {
	defs := DefaultDefinitions()
	var ids []string
	for _, d := range defs {
		ids = append(ids, d.ID)
		if d.DisplayName == "" || d.DefaultBaseURL == "" || d.New == nil || len(d.Setup) != 3 {
			t.Errorf("%s: incomplete %+v", d.ID, d)
		}
		if d.Setup[0].Kind != StepBaseURL || d.Setup[0].Default != d.DefaultBaseURL || d.Setup[1].Kind != StepModel || d.Setup[2].Kind != StepAPIKey || !d.Setup[2].Masked {
			t.Errorf("%s: setup %+v", d.ID, d.Setup)
		}
		if d.ID != "local" && (d.KeyEnv == "" || d.DefaultModel == "" || len(d.Models) == 0 || d.Setup[2].EnvVar != d.KeyEnv || d.Setup[2].Default != "") {
			t.Errorf("%s: hosted provider without key variable, model or catalog: %+v", d.ID, d)
		}
		if d.DefaultModel != "" && !containsModel(d.Models, d.DefaultModel) {
			t.Errorf("%s: the default model %s is not in the catalog", d.ID, d.DefaultModel)
		}
	}
	if strings.Join(ids, " ") != "messages responses genai reasoning regional local" {
		t.Errorf("ids %v", ids)
	}
	// local is a loopback address on port 1234 with path /v1 and the fixed
	// placeholder key (docs/providers.md, "Built-in definitions
	// (`providers/builtin`)").
	local, ok := Lookup("local")
	if !ok || local.DefaultBaseURL != "http://127.0.0.1:1234/v1" || local.PlaceholderKey != "lm-studio" || local.KeyEnv != "" ||
		local.Setup[2].Default != "lm-studio" || !local.Setup[2].Optional {
		t.Errorf("local %+v", local)
	}
	if d, _ := Lookup("reasoning"); d.DefaultBaseURL != "https://api.deepseek.com" {
		t.Errorf("reasoning %s", d.DefaultBaseURL)
	}
	if d, _ := Lookup("regional"); d.DefaultBaseURL != "https://dashscope-intl.aliyuncs.com/compatible-mode/v1" {
		t.Errorf("regional %s", d.DefaultBaseURL)
	}
	if _, ok := Lookup("vendorx"); ok {
		t.Error("unknown id found")
	}
	// Fresh values on each call.
	defs[0].Models[0].ID = "changed"
	if DefaultDefinitions()[0].Models[0].ID == "changed" {
		t.Error("definitions share state")
	}
}

func containsModel(ms []Model, id string) bool {
	for _, m := range ms {
		if m.ID == id {
			return true
		}
	}
	return false
}

func construct(t *testing.T, id string, c Config) providers.Provider {
	t.Helper()
	d, _ := Lookup(id)
	p, err := d.New(c)
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	return p
}

func options(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestConstructors(t *testing.T) {
	if _, ok := construct(t, "messages", Config{APIKey: "k"}).(*messages.Provider); !ok {
		t.Error("messages")
	}
	if p := construct(t, "messages", Config{APIKey: "k"}).(*messages.Provider); p.URL() != "https://api.anthropic.com/v1/messages" {
		t.Errorf("messages default root %s", p.URL())
	}
	r := construct(t, "responses", Config{APIKey: "k"}).(*responses.Provider)
	if r.Surface() != responses.SurfaceResponses || r.URL() != "https://api.openai.com/v1/responses" {
		t.Errorf("responses default %s %s", r.Surface(), r.URL())
	}
	r = construct(t, "responses", Config{APIKey: "k", BaseURL: "http://127.0.0.1:9/v1"}).(*responses.Provider)
	if r.Surface() != responses.SurfaceChatCompletions {
		t.Errorf("custom endpoint surface %s", r.Surface())
	}
	r = construct(t, "responses", Config{APIKey: "k", BaseURL: "http://127.0.0.1:9/v1", Options: options(t, `{"apiSurface":"responses","strictTools":true,
		"includeStreamUsage":false,"store":false,"includeEncryptedReasoning":true,"organization":"org","defaultModel":"m2",
		"reasoning":{"effort":"low","summary":"auto"},"responseFormat":"json_schema","jsonSchema":{"name":"n","schema":{"type":"object"},"strict":true}}`)}).(*responses.Provider)
	if r.Surface() != responses.SurfaceResponses {
		t.Errorf("apiSurface option ignored")
	}
	body, model, err := r.Body(&providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "x"}}}}})
	if err != nil || model != "m2" {
		t.Fatal(err, model)
	}
	for _, want := range []string{`"store":false`, `"include":["reasoning.encrypted_content"]`, `"reasoning":{"effort":"low","summary":"auto"}`, `"format":{"type":"json_schema","name":"n","schema":{"type":"object"},"strict":true}`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("missing %s in %s", want, body)
		}
	}
	g := construct(t, "genai", Config{APIKey: "k", Model: "gemini-x", Options: options(t, `{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":512},
		"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}],"toolConfig":{"functionCallingConfig":{"mode":"AUTO"}},
		"responseMimeType":"application/json","responseJsonSchema":{"type":"object"},"defaultResponseModalities":["TEXT","IMAGE"],"imageCapableModels":["gemini-x"]}`)}).(*genai.Provider)
	body, _, err = g.Body(&providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: "x"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"thinkingConfig":{"includeThoughts":true,"thinkingBudget":512}`, `"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]`,
		`"toolConfig":{"functionCallingConfig":{"mode":"AUTO"}}`, `"responseModalities":["TEXT","IMAGE"]`, `"responseJsonSchema":{"type":"object"}`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("missing %s in %s", want, body)
		}
	}
	if _, ok := construct(t, "reasoning", Config{APIKey: "k", Options: options(t, `{"thinking":"disabled","reasoningEffort":"high"}`)}).(*chatcompat.ReasoningProvider); !ok {
		t.Error("reasoning")
	}
	if p := construct(t, "regional", Config{APIKey: "k", Options: options(t, `{"region":"beijing","builtInWebTools":{"webSearch":true}}`)}).(*chatcompat.RegionalProvider); p.URL() != "https://dashscope.aliyuncs.com/compatible-mode/v1/chat/completions" || !p.WebTools().WebSearch {
		t.Errorf("regional %s", p.URL())
	}
	if p := construct(t, "local", Config{}).(*chatcompat.LocalProvider); p.URL() != "http://127.0.0.1:1234/v1/chat/completions" {
		t.Errorf("local %s", p.URL())
	}
}

// Bad options are refused with the settings path, never a value.
func TestBadOptions(t *testing.T) {
	cases := []struct {
		name             string
		id, opts, errSub string
	}{
		{"a reasoning effort that is not a string", "responses", `{"reasoning":{"effort":3}}`, "providers.responses.reasoning.effort: want a string"},
		{"an unknown reasoning field", "responses", `{"reasoning":{"depth":"x"}}`, "providers.responses.reasoning.depth: unknown field"},
		{"a web-tool switch that is not a bool", "responses", `{"nativeWebTools":{"webSearch":"yes"}}`, "providers.responses.nativeWebTools.webSearch: want a bool"},
		{"a schema that is not an object", "responses", `{"jsonSchema":{"schema":"secret-value"}}`, "providers.responses.jsonSchema.schema: want an object"},
		{"store that is not true or false", "responses", `{"store":"no"}`, "providers.responses.store: want true or false"},
		{"an unknown reasoning effort", "responses", `{"reasoning":{"effort":"extreme"}}`, "reasoning.effort"},
		{"a fractional thinking budget", "genai", `{"thinkingConfig":{"thinkingBudget":1.5}}`, "providers.genai.thinkingConfig.thinkingBudget: want a whole number"},
		{"a safety setting without a threshold", "genai", `{"safetySettings":[{"category":"C"}]}`, "safetySettings[0]"},
		{"a safety setting that is not an object", "genai", `{"safetySettings":["secret-value"]}`, "providers.genai.safetySettings[0]: want an object"},
		{"an image-capable model that is not a string", "genai", `{"imageCapableModels":[1]}`, "providers.genai.imageCapableModels[0]: want a string"},
		{"an unsupported response modality", "genai", `{"defaultResponseModalities":["AUDIO"]}`, "defaultResponseModalities[0]"},
		{"an unknown built-in web tool", "regional", `{"builtInWebTools":{"webCrawl":true}}`, "providers.regional.builtInWebTools.webCrawl: unknown field"},
		{"a default model that is not a string", "local", `{"defaultModel":7}`, "providers.local.defaultModel: want a string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, _ := Lookup(c.id)
			_, err := d.New(Config{APIKey: "secret-key", Options: options(t, c.opts)})
			if err == nil || !strings.Contains(err.Error(), c.errSub) || strings.Contains(err.Error(), "secret") {
				t.Errorf("%s %s: %v", c.id, c.opts, err)
			}
		})
	}
	d, _ := Lookup("genai")
	if _, err := d.New(Config{}); !errors.Is(err, providers.ErrMissingKey) {
		t.Errorf("genai without key: %v", err)
	}
}

func TestModelLimits(t *testing.T) {
	cases := []struct {
		name, id, model string
		window, out     int
		ok              bool
	}{
		{"a catalog model", "messages", "claude-sonnet-4-5", 200000, 64000, true},
		{"a dated snapshot of a catalog model", "messages", "claude-sonnet-4-5-20250929", 200000, 64000, true},
		{"the longest catalog id wins", "responses", "gpt-5-mini-2025-08-07", 400000, 128000, true},
		{"another provider's model is unknown", "genai", "gpt-5", 0, 0, false},
		{"a prefix without a dash is another model", "responses", "gpt-50", 0, 0, false},
		{"local has no catalog", "local", "llama3", 0, 0, false},
		{"no model", "messages", "", 0, 0, false},
		{"an unknown provider", "nope", "claude-sonnet-4-5", 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, o, ok := ModelLimits(c.id, c.model)
			if w != c.window || o != c.out || ok != c.ok {
				t.Errorf("ModelLimits(%s, %s) = %d, %d, %v", c.id, c.model, w, o, ok)
			}
		})
	}
	t.Run("every catalog model has limits", func(t *testing.T) {
		for _, d := range DefaultDefinitions() {
			for _, m := range d.Models {
				if m.ContextWindow <= 0 || m.MaxOutput <= 0 || m.MaxOutput > m.ContextWindow {
					t.Errorf("%s %s: window %d, max output %d", d.ID, m.ID, m.ContextWindow, m.MaxOutput)
				}
			}
		}
	})
}

func TestModelPrice(t *testing.T) {
	cases := []struct {
		name, id, model string
		want            Price
		ok              bool
	}{
		{"a catalog model", "messages", "claude-sonnet-4-5", Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}, true},
		{"a dated snapshot takes its entry", "messages", "claude-haiku-4-5-20251001", Price{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25}, true},
		{"the longest catalog id wins", "responses", "gpt-5-mini-2025-08-07", Price{Input: 0.25, Output: 2, CacheRead: 0.025}, true},
		{"flash-lite is not flash", "genai", "gemini-2.5-flash-lite", Price{Input: 0.1, Output: 0.4, CacheRead: 0.01}, true},
		{"another provider's model is unknown", "genai", "gpt-5", Price{}, false},
		{"a model priced by mode is unknown", "regional", "qwen-plus", Price{}, false},
		{"no model", "messages", "", Price{}, false},
		{"local has no prices", "local", "llama3", Price{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := ModelPrice(c.id, c.model)
			if got != c.want || ok != c.ok {
				t.Errorf("ModelPrice(%s, %s) = %+v, %v", c.id, c.model, got, ok)
			}
		})
	}
	// Every priced model is in its provider's catalog, so that the price
	// and the window describe the same model.
	seen := map[string]bool{}
	for _, p := range prices {
		if seen[p.provider] {
			t.Errorf("%s is listed twice", p.provider)
		}
		seen[p.provider] = true
		for _, m := range p.models {
			if _, _, ok := ModelLimits(p.provider, m.id); !ok {
				t.Errorf("%s %s is priced but not in the catalog", p.provider, m.id)
			}
		}
	}
}
