package config

import (
	"strconv"

	"agent/internal/strictjson"
)

// The keys of context management (docs/reference/settings.md, "autoCompact,
// autoCompactAt, models"): autoCompact turns proactive compaction on and
// off, autoCompactAt lowers its threshold, models gives a model's context
// window and longest answer where the built-in table does not know them or
// knows them wrong.

// ModelLimits are one entry of the models key; a zero field is not set.
type ModelLimits struct {
	ContextWindow   int
	MaxOutputTokens int
}

// ContextSettings are the context management keys.
type ContextSettings struct {
	AutoCompact   *bool   // nil: on
	AutoCompactAt float64 // 0: not set
	// Models are the models entries by model id; each entry is whole
	// from the file of highest precedence that sets it validly.
	Models map[string]ModelLimits
	// Prices are the modelPrices entries by model id (prices.go), whole
	// from the file of highest precedence that sets them validly.
	Prices map[string]ModelPrice
}

// maxTokenCount bounds a token count in settings: far above any window.
const maxTokenCount = 1 << 30

func (l *loader) autoCompact(f File, p strictjson.Path, v *strictjson.Value) {
	if v.Kind != strictjson.Bool {
		l.diag(f.Path, p, "expected true or false, found %s; ignored", v.Kind)
		return
	}
	b := v.Bool
	l.s.Context.AutoCompact = &b
}

func (l *loader) autoCompactAt(f File, p strictjson.Path, v *strictjson.Value) {
	if v.Kind != strictjson.Number {
		l.diag(f.Path, p, "expected a fraction from 0.5 to 0.95, found %s; ignored", v.Kind)
		return
	}
	x, err := strconv.ParseFloat(v.Str, 64)
	if err != nil || x < 0.5 || x > 0.95 {
		l.diag(f.Path, p, "must be a fraction from 0.5 to 0.95 (it can only lower the threshold); ignored")
		return
	}
	l.s.Context.AutoCompactAt = x
}

// modelEntries calls entry with each member of an object keyed by model
// id (models, modelPrices) that passes the checks both keys share: the
// value is an object, the id is not empty, each entry is an object.
// shape is what an entry looks like, for the diagnostics.
func (l *loader) modelEntries(f File, p strictjson.Path, v *strictjson.Value, shape string, entry func(id string, mp strictjson.Path, members []strictjson.Member)) {
	if v.Kind != strictjson.Object {
		l.diag(f.Path, p, "expected an object {\"MODEL\": %s}, found %s; ignored", shape, v.Kind)
		return
	}
	for _, m := range v.Members {
		mp := p.Key(m.Key)
		switch {
		case m.Key == "":
			l.diag(f.Path, mp, "an empty model id; ignored")
		case m.Value.Kind != strictjson.Object:
			l.diag(f.Path, mp, "expected an object %s, found %s; ignored", shape, m.Value.Kind)
		default:
			entry(m.Key, mp, m.Value.Members)
		}
	}
}

func (l *loader) models(f File, p strictjson.Path, v *strictjson.Value) {
	l.modelEntries(f, p, v, `{"contextWindow": N, "maxOutputTokens": N}`, func(id string, mp strictjson.Path, members []strictjson.Member) {
		var ml ModelLimits
		ok := true
		for _, k := range members {
			kp := mp.Key(k.Key)
			var dst *int
			switch k.Key {
			case "contextWindow":
				dst = &ml.ContextWindow
			case "maxOutputTokens":
				dst = &ml.MaxOutputTokens
			default:
				l.diag(f.Path, kp, "unknown key (known: contextWindow, maxOutputTokens); the entry is ignored")
				ok = false
				continue
			}
			n, valid := positiveInt(k.Value, maxTokenCount)
			if !valid {
				l.diag(f.Path, kp, "must be a whole number of tokens from 1 to 1073741824; the entry is ignored")
				ok = false
				continue
			}
			*dst = int(n)
		}
		if ml.ContextWindow > 0 && ml.MaxOutputTokens >= ml.ContextWindow {
			l.diag(f.Path, mp, "maxOutputTokens must be smaller than contextWindow; the entry is ignored")
			ok = false
		}
		if !ok {
			return
		}
		if l.s.Context.Models == nil {
			l.s.Context.Models = map[string]ModelLimits{}
		}
		l.s.Context.Models[id] = ml
	})
}
