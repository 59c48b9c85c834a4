package builtin

import "strings"

// Price is what a model costs, in US dollars per million tokens: input
// that no cache served, output (reasoning included), cache reads and cache
// writes (docs/providers.md, "Prices").
type Price struct {
	Input, Output, CacheRead, CacheWrite float64
}

type modelPrice struct {
	id    string
	price Price
}

// prices are the vendors' list prices of the catalog models whose price
// is flat, at the time the table was written (docs/providers.md,
// "Prices"); the settings key modelPrices overrides or adds an entry.
// Models priced by prompt length take their base rate (prompts up to
// 200,000 tokens); models priced by mode are left out (unknown).
//
// A slice of providers rather than a map: the compiler lays it out, and
// no command pays for building it when the package initialises.
var prices = []struct {
	provider string
	models   []modelPrice
}{
	{"messages", []modelPrice{
		{"claude-opus-4-6", Price{Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25}},
		{"claude-sonnet-4-5", Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}},
		{"claude-haiku-4-5", Price{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25}},
	}},
	{"responses", []modelPrice{
		{"gpt-5", Price{Input: 1.25, Output: 10, CacheRead: 0.125}},
		{"gpt-5-mini", Price{Input: 0.25, Output: 2, CacheRead: 0.025}},
		{"gpt-5-nano", Price{Input: 0.05, Output: 0.4, CacheRead: 0.005}},
		{"gpt-4.1", Price{Input: 2, Output: 8, CacheRead: 0.5}},
	}},
	{"genai", []modelPrice{
		{"gemini-2.5-pro", Price{Input: 1.25, Output: 10, CacheRead: 0.125}},
		{"gemini-2.5-flash", Price{Input: 0.3, Output: 2.5, CacheRead: 0.03}},
		{"gemini-2.5-flash-lite", Price{Input: 0.1, Output: 0.4, CacheRead: 0.01}},
	}},
	{"reasoning", []modelPrice{
		{"deepseek-chat", Price{Input: 0.28, Output: 0.42, CacheRead: 0.028}},
		{"deepseek-reasoner", Price{Input: 0.28, Output: 0.42, CacheRead: 0.028}},
	}},
}

// ModelPrice is the price of a model of provider id's catalog: the entry
// whose id is the model, or the entry a dated or versioned id extends
// (as ModelLimits finds it). ok is false when the price is not known.
func ModelPrice(id, model string) (Price, bool) {
	best := -1
	var list []modelPrice
	for _, p := range prices {
		if p.provider == id {
			list = p.models
			break
		}
	}
	for i, m := range list {
		if (model == m.id || strings.HasPrefix(model, m.id+"-")) && (best < 0 || len(m.id) > len(list[best].id)) {
			best = i
		}
	}
	if best < 0 || model == "" {
		return Price{}, false
	}
	return list[best].price, true
}
