package builtin

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"agent/providers"
	"agent/providers/chatcompat"
	"agent/providers/genai"
	"agent/providers/messages"
	"agent/providers/responses"
)

// opts reads the JSON-shaped options of one provider. Every problem names
// the settings path (providers.<id>.<option>[.<field>]) and never a value:
// options may hold anything, keys included.
type opts struct {
	id  string
	m   map[string]any
	err error
}

func (o *opts) fail(path, format string, args ...any) {
	if o.err == nil {
		o.err = fmt.Errorf("providers.%s.%s: %s", o.id, path, fmt.Sprintf(format, args...))
	}
}

func (o *opts) str(name string) string {
	v, ok := o.m[name]
	if !ok || v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		o.fail(name, "want a string")
	}
	return s
}

func (o *opts) boolean(name string) (bool, bool) {
	v, ok := o.m[name]
	if !ok || v == nil {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		o.fail(name, "want true or false")
	}
	return b, true
}

func (o *opts) object(name string) map[string]any {
	v, ok := o.m[name]
	if !ok || v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		o.fail(name, "want an object")
	}
	return m
}

// raw returns an object option as JSON text, for options passed through.
func (o *opts) raw(name string) json.RawMessage {
	m := o.object(name)
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		o.fail(name, "cannot be encoded as JSON")
	}
	return b
}

func (o *opts) strings(name string) []string {
	v, ok := o.m[name]
	if !ok || v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		o.fail(name, "want an array of strings")
		return nil
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			o.fail(fmt.Sprintf("%s[%d]", name, i), "want a string")
			return nil
		}
		out = append(out, s)
	}
	return out
}

// field reads a member of an object option.
func (o *opts) field(obj map[string]any, path, name string, want string) any {
	v, ok := obj[name]
	if !ok || v == nil {
		return nil
	}
	okType := false
	switch want {
	case "string":
		_, okType = v.(string)
	case "bool":
		_, okType = v.(bool)
	case "object":
		_, okType = v.(map[string]any)
	case "number":
		_, okType = number(v)
	}
	if !okType {
		article := "a "
		if want == "object" {
			article = "an "
		}
		o.fail(path+"."+name, "want %s%s", article, want)
		return nil
	}
	return v
}

// known refuses members of an object option that docs/reference/settings.md,
// "providers", does not define.
func (o *opts) known(obj map[string]any, path string, names ...string) {
	for k := range obj {
		if !slices.Contains(names, k) {
			o.fail(path+"."+k, "unknown field (known: %s)", strings.Join(names, ", "))
		}
	}
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func boolean(v any) bool {
	b, _ := v.(bool)
	return b
}

// model is the configured model, else the provider's defaultModel option,
// else the definition's default.
func model(c Config, o *opts, def string) string {
	if c.Model != "" {
		return c.Model
	}
	if m := o.str("defaultModel"); m != "" {
		return m
	}
	return def
}

func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

func newMessages(c Config) (providers.Provider, error) {
	o := &opts{id: "messages", m: c.Options}
	m := model(c, o, MessagesDefaultModel)
	if o.err != nil {
		return nil, o.err
	}
	return messages.New(messages.Options{APIKey: c.APIKey, BaseURL: or(c.BaseURL, MessagesBaseURL), DefaultModel: m, Timeout: c.Timeout, Client: c.Client})
}

func newResponses(c Config) (providers.Provider, error) {
	o := &opts{id: "responses", m: c.Options}
	ro := responses.Options{
		APIKey: c.APIKey, Client: c.Client, BaseURL: c.BaseURL, Timeout: c.Timeout,
		DefaultModel:   model(c, o, ResponsesDefaultModel),
		Organization:   o.str("organization"),
		APISurface:     responses.Surface(o.str("apiSurface")),
		ResponseFormat: responses.Format(o.str("responseFormat")),
	}
	if js := o.object("jsonSchema"); js != nil {
		o.known(js, "jsonSchema", "name", "description", "schema", "strict")
		schema, _ := o.field(js, "jsonSchema", "schema", "object").(map[string]any)
		raw, _ := json.Marshal(schema)
		if schema == nil {
			raw = nil
		}
		ro.JSONSchema = &responses.JSONSchema{
			Name: str(o.field(js, "jsonSchema", "name", "string")), Description: str(o.field(js, "jsonSchema", "description", "string")),
			Schema: raw, Strict: boolean(o.field(js, "jsonSchema", "strict", "bool")),
		}
	}
	if r := o.object("reasoning"); r != nil {
		o.known(r, "reasoning", "effort", "summary")
		ro.Reasoning = responses.Reasoning{Effort: str(o.field(r, "reasoning", "effort", "string")), Summary: str(o.field(r, "reasoning", "summary", "string"))}
	}
	if b, set := o.boolean("store"); set {
		ro.Store = &b
	}
	ro.IncludeEncryptedReasoning, _ = o.boolean("includeEncryptedReasoning")
	ro.StrictTools, _ = o.boolean("strictTools")
	if w := o.object("nativeWebTools"); w != nil {
		o.known(w, "nativeWebTools", "webSearch", "webFetch")
		ro.NativeWebTools = responses.NativeWebTools{WebSearch: boolean(o.field(w, "nativeWebTools", "webSearch", "bool")), WebFetch: boolean(o.field(w, "nativeWebTools", "webFetch", "bool"))}
	}
	if b, set := o.boolean("includeStreamUsage"); set {
		ro.OmitStreamUsage = !b
	}
	if o.err != nil {
		return nil, o.err
	}
	// The default surface rule (docs/providers.md, "responses
	// (`providers/responses`)") sees the base URL as the user set it: the
	// definition's default is the official endpoint anyway.
	return responses.New(ro)
}

func newGenai(c Config) (providers.Provider, error) {
	o := &opts{id: "genai", m: c.Options}
	g := genai.Options{
		APIKey: c.APIKey, BaseURL: c.BaseURL, Timeout: c.Timeout, Client: c.Client,
		DefaultModel:              model(c, o, GenaiDefaultModel),
		ResponseMimeType:          o.str("responseMimeType"),
		ResponseSchema:            o.raw("responseSchema"),
		ResponseJSONSchema:        o.raw("responseJsonSchema"),
		ToolConfig:                o.raw("toolConfig"),
		DefaultResponseModalities: o.strings("defaultResponseModalities"),
		ImageCapableModels:        o.strings("imageCapableModels"),
	}
	if tc := o.object("thinkingConfig"); tc != nil {
		o.known(tc, "thinkingConfig", "includeThoughts", "thinkingBudget")
		g.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: boolean(o.field(tc, "thinkingConfig", "includeThoughts", "bool"))}
		if v := o.field(tc, "thinkingConfig", "thinkingBudget", "number"); v != nil {
			f, _ := number(v)
			if f != math.Trunc(f) || f < -1 || f > 1<<20 {
				o.fail("thinkingConfig.thinkingBudget", "want a whole number of tokens from -1 up")
			}
			n := int(f)
			g.ThinkingConfig.ThinkingBudget = &n
		}
	}
	if v, ok := c.Options["safetySettings"]; ok && v != nil {
		list, ok := v.([]any)
		if !ok {
			o.fail("safetySettings", "want an array of {category, threshold}")
		}
		for i, e := range list {
			path := fmt.Sprintf("safetySettings[%d]", i)
			m, ok := e.(map[string]any)
			if !ok {
				o.fail(path, "want an object {category, threshold}")
				break
			}
			o.known(m, path, "category", "threshold")
			g.SafetySettings = append(g.SafetySettings, genai.SafetySetting{Category: str(o.field(m, path, "category", "string")), Threshold: str(o.field(m, path, "threshold", "string"))})
		}
	}
	if o.err != nil {
		return nil, o.err
	}
	return genai.New(g)
}

func newReasoning(c Config) (providers.Provider, error) {
	o := &opts{id: "reasoning", m: c.Options}
	r := chatcompat.ReasoningOptions{
		APIKey: c.APIKey, BaseURL: c.BaseURL, Timeout: c.Timeout, Client: c.Client,
		DefaultModel:    model(c, o, chatcompat.ReasoningDefaultModel),
		Thinking:        chatcompat.Thinking(o.str("thinking")),
		ReasoningEffort: providers.Effort(o.str("reasoningEffort")),
	}
	if o.err != nil {
		return nil, o.err
	}
	return chatcompat.NewReasoningProvider(r)
}

func newRegional(c Config) (providers.Provider, error) {
	o := &opts{id: "regional", m: c.Options}
	r := chatcompat.RegionalOptions{
		APIKey: c.APIKey, BaseURL: c.BaseURL, Timeout: c.Timeout, Client: c.Client,
		DefaultModel:     model(c, o, chatcompat.RegionalDefaultModel),
		Region:           o.str("region"),
		ResponsesBaseURL: o.str("responsesBaseURL"),
	}
	if w := o.object("builtInWebTools"); w != nil {
		o.known(w, "builtInWebTools", "webSearch", "webFetch")
		r.BuiltInWebTools = chatcompat.WebTools{WebSearch: boolean(o.field(w, "builtInWebTools", "webSearch", "bool")), WebFetch: boolean(o.field(w, "builtInWebTools", "webFetch", "bool"))}
	}
	if o.err != nil {
		return nil, o.err
	}
	return chatcompat.NewRegionalProvider(r)
}

func newLocal(c Config) (providers.Provider, error) {
	o := &opts{id: "local", m: c.Options}
	m := model(c, o, "")
	if o.err != nil {
		return nil, o.err
	}
	return chatcompat.NewLocalProvider(chatcompat.LocalOptions{APIKey: c.APIKey, BaseURL: c.BaseURL, DefaultModel: m, Timeout: c.Timeout, Client: c.Client})
}
