package config

import (
	"math"
	"strconv"

	"agent/internal/strictjson"
)

// The modelPrices key (docs/reference/settings.md, "modelPrices"): what a
// model costs, for /cost, where the built-in price table does not know it
// or knows it wrong.

// ModelPrice is one entry of modelPrices, in US dollars per million
// tokens. CacheRead and CacheWrite are the input price when the entry
// does not give them.
type ModelPrice struct {
	Input, Output, CacheRead, CacheWrite float64
}

// maxPrice bounds a price in settings: dollars per million tokens.
const maxPrice = 100000

func (l *loader) modelPrices(f File, p strictjson.Path, v *strictjson.Value) {
	l.modelEntries(f, p, v, `{"input": N, "output": N, "cacheRead": N, "cacheWrite": N}`, func(id string, mp strictjson.Path, members []strictjson.Member) {
		var e ModelPrice
		set := map[string]bool{}
		ok := true
		for _, k := range members {
			kp := mp.Key(k.Key)
			var dst *float64
			switch k.Key {
			case "input":
				dst = &e.Input
			case "output":
				dst = &e.Output
			case "cacheRead":
				dst = &e.CacheRead
			case "cacheWrite":
				dst = &e.CacheWrite
			default:
				l.diag(f.Path, kp, "unknown key (known: input, output, cacheRead, cacheWrite); the entry is ignored")
				ok = false
				continue
			}
			x, valid := price(k.Value)
			if !valid {
				l.diag(f.Path, kp, "must be a number of US dollars per million tokens from 0 to 100000; the entry is ignored")
				ok = false
				continue
			}
			*dst, set[k.Key] = x, true
		}
		if ok && (!set["input"] || !set["output"]) {
			l.diag(f.Path, mp, "input and output are required; the entry is ignored")
			ok = false
		}
		if !ok {
			return
		}
		if !set["cacheRead"] {
			e.CacheRead = e.Input
		}
		if !set["cacheWrite"] {
			e.CacheWrite = e.Input
		}
		if l.s.Context.Prices == nil {
			l.s.Context.Prices = map[string]ModelPrice{}
		}
		l.s.Context.Prices[id] = e
	})
}

// price reads a non-negative, finite number of dollars.
func price(v *strictjson.Value) (float64, bool) {
	if v.Kind != strictjson.Number {
		return 0, false
	}
	x, err := strconv.ParseFloat(v.Str, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > maxPrice {
		return 0, false
	}
	return x, true
}
