package providertest

import (
	"testing"
	"testing/synctest"

	"agent/providers"
)

// UsageCase is a row of a decoder's usage table: a whole stream, and the
// usage it must report last.
type UsageCase struct {
	Name   string
	Stream string
	Want   providers.Usage
}

// RunUsage replays each case's stream through a provider built over the
// replay, whole and split at every byte, and checks the last usage the
// stream reports (docs/providers.md, "Prompt caching": the cache counts
// of every surface). It runs in a synctest bubble, where a retry would
// cost no time.
func RunUsage(t *testing.T, build func(t testing.TB, ex providers.Executor) providers.Provider, req func() *providers.Request, cases []UsageCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				for split := 0; split < len(c.Stream); split++ {
					ex := NewReplay(Response{Body: []byte(c.Stream), Split: split})
					s, err := build(t, ex).Chat(t.Context(), req())
					if err != nil {
						t.Fatal(err)
					}
					evs, err := Drain(s)
					if err != nil {
						t.Fatalf("split at %d: %v", split, err)
					}
					var got providers.Usage
					seen := false
					for _, ev := range evs {
						if ev.Type == providers.EventUsage {
							got, seen = ev.Usage, true
						}
					}
					if !seen || got != c.Want || ex.Requests() != 1 {
						t.Fatalf("split at %d: usage %+v (reported: %v, %d requests), want %+v", split, got, seen, ex.Requests(), c.Want)
					}
				}
			})
		})
	}
}

// SeedUsage adds the streams of a usage table to a fuzz corpus.
func SeedUsage(f *testing.F, cases []UsageCase) {
	for _, c := range cases {
		f.Add([]byte(c.Stream))
	}
}

// Usage builds a UsageCase (tables read best positionally).
func Usage(name, stream string, want providers.Usage) UsageCase {
	return UsageCase{Name: name, Stream: stream, Want: want}
}
