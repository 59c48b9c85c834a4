package config

import (
	"reflect"
	"testing"
)

func TestModelPricesSettings(t *testing.T) {
	cases := []struct {
		name    string
		fs      files
		trusted bool
		want    map[string]ModelPrice
		diags   []string
	}{
		{"none set", files{"user": `{}`}, true, nil, nil},
		{"all four prices", files{"user": `{"modelPrices":{"m":{"input":3,"output":15,"cacheRead":0.3,"cacheWrite":3.75}}}`}, true,
			map[string]ModelPrice{"m": {3, 15, 0.3, 3.75}}, nil},
		{"cache prices default to the input price", files{"user": `{"modelPrices":{"m":{"input":2,"output":8}}}`}, true,
			map[string]ModelPrice{"m": {2, 8, 2, 2}}, nil},
		{"zero is a price", files{"user": `{"modelPrices":{"free":{"input":0,"output":0}}}`}, true,
			map[string]ModelPrice{"free": {0, 0, 0, 0}}, nil},
		{"an entry is whole from the highest file", files{"user": `{"modelPrices":{"m":{"input":1,"output":2,"cacheRead":0.1},"u":{"input":5,"output":6}}}`, "project": `{"modelPrices":{"m":{"input":9,"output":9}}}`}, true,
			map[string]ModelPrice{"m": {9, 9, 9, 9}, "u": {5, 6, 5, 5}}, nil},
		{"an untrusted project's entries do not apply", files{"user": `{"modelPrices":{"m":{"input":1,"output":2}}}`, "project": `{"modelPrices":{"m":{"input":9,"output":9}}}`}, false,
			map[string]ModelPrice{"m": {1, 2, 1, 1}}, nil},
		{"not an object", files{"user": `{"modelPrices":[]}`}, true, nil, []string{"$.modelPrices: expected an object"}},
		{"an entry not an object", files{"user": `{"modelPrices":{"m":3}}`}, true, nil, []string{"$.modelPrices.m: expected an object"}},
		{"an empty model id", files{"user": `{"modelPrices":{"":{"input":1,"output":1}}}`}, true, nil, []string{`$.modelPrices[""]: an empty model id`}},
		{"a negative price", files{"user": `{"modelPrices":{"m":{"input":-1,"output":1}}}`}, true, nil, []string{"$.modelPrices.m.input: must be a number of US dollars"}},
		{"a price as a string", files{"user": `{"modelPrices":{"m":{"input":"3","output":1}}}`}, true, nil, []string{"$.modelPrices.m.input: must be a number"}},
		{"an absurd price", files{"user": `{"modelPrices":{"m":{"input":1e9,"output":1}}}`}, true, nil, []string{"$.modelPrices.m.input: must be a number"}},
		{"an unknown key", files{"user": `{"modelPrices":{"m":{"input":1,"output":1,"currency":"EUR"}}}`}, true, nil, []string{"$.modelPrices.m.currency: unknown key"}},
		{"output missing", files{"user": `{"modelPrices":{"m":{"input":1}}}`}, true, nil, []string{"$.modelPrices.m: input and output are required"}},
		{"one bad entry leaves the others", files{"user": `{"modelPrices":{"bad":{"input":1},"good":{"input":1,"output":4}}}`}, true,
			map[string]ModelPrice{"good": {1, 4, 1, 1}}, []string{"$.modelPrices.bad: input and output are required"}},
		{"an invalid entry keeps the lower file's", files{"user": `{"modelPrices":{"m":{"input":1,"output":2}}}`, "project": `{"modelPrices":{"m":{"input":1}}}`}, true,
			map[string]ModelPrice{"m": {1, 2, 1, 1}}, []string{"$.modelPrices.m: input and output are required"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := load(t, c.fs, c.trusted, nil)
			if !reflect.DeepEqual(s.Context.Prices, c.want) {
				t.Errorf("prices %v, want %v", s.Context.Prices, c.want)
			}
			wantDiag(t, s, c.diags...)
		})
	}
}
