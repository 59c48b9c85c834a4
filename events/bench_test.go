package events

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"agent/internal/jose"
)

// countTarget takes every turn and counts them.
type countTarget struct{ n atomic.Int64 }

func (c *countTarget) SubmitExternal(context.Context, Event) (string, error) {
	return "s1/" + fmt.Sprint(c.n.Add(1)), nil
}

// benchServer runs a Server on loopback with the test keys, a real audit
// log, the real clock and 127.0.0.1 as a trusted proxy (so that a benchmark
// can spread its requests over client addresses with X-Forwarded-For).
func benchServer(b *testing.B, maxTokens int) (*Server, string, *countTarget) {
	b.Helper()
	log, err := OpenAuditLog(filepath.Join(b.TempDir(), "audit.jsonl"), AuditLogOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { log.Close() })
	target := &countTarget{}
	keys := allKeys(b)
	srv, err := New(Options{
		Grants:         []Grant{testGrant()},
		Target:         target,
		Audit:          log,
		Keys:           func(string) (jose.KeySource, error) { return keys, nil },
		TrustedProxies: []netip.Addr{netip.MustParseAddr("127.0.0.1")},
		MaxTokens:      maxTokens,
	})
	if err != nil {
		b.Fatal(err)
	}
	return srv, serve(b, srv), target
}

// mint makes n distinct ES256 tokens for the test grant.
func mint(n int) []string {
	now := time.Now()
	out := make([]string, n)
	for i := range out {
		out[i] = esSigner().sign(nil, claims(now, map[string]any{"exp": now.Unix() + 3600}))
	}
	return out
}

// BenchmarkLoopback is the load benchmark of the endpoint over loopback
// HTTP/1.1 with keep-alive, clients in parallel: admitted events per
// second with ES256 tokens, refused requests per second for the refusals
// that cost most (a bad signature: the whole verification) and least (a
// throttled address), and beside them the bare ES256 signature checks per
// second of the same machine at the same parallelism.
func BenchmarkLoopback(b *testing.B) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}}
	b.Cleanup(client.CloseIdleConnections)
	do := func(b *testing.B, url, token, xff string, want int) {
		r, _ := http.NewRequest("POST", url, strings.NewReader(goodBody))
		r.Header.Set("Authorization", "Bearer "+token)
		r.Header.Set("Content-Type", "application/json")
		if xff != "" {
			r.Header.Set("X-Forwarded-For", xff)
		}
		resp, err := client.Do(r)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			b.Fatalf("status %d, want %d", resp.StatusCode, want)
		}
	}
	perSecond := func(b *testing.B, unit string) {
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
	}

	b.Run("admitted", func(b *testing.B) {
		_, base, target := benchServer(b, 0)
		tokens := mint(b.N)
		var next atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				do(b, base+testPath, tokens[next.Add(1)-1], "", 202)
			}
		})
		b.StopTimer()
		perSecond(b, "events/s")
		if target.n.Load() != int64(b.N) {
			b.Fatalf("%d turns for %d events", target.n.Load(), b.N)
		}
	})

	b.Run("refused-bad-signature", func(b *testing.B) {
		_, base, _ := benchServer(b, 0)
		tok := mint(1)[0]
		bad := tok[:len(tok)-8] + "AAAAAAAA"
		var next atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				// A fresh client address each time, so that the throttle
				// does not answer first.
				i := next.Add(1)
				do(b, base+testPath, bad, fmt.Sprintf("10.%d.%d.%d", byte(i>>16), byte(i>>8), byte(i)), 401)
			}
		})
		b.StopTimer()
		perSecond(b, "refusals/s")
	})

	b.Run("refused-replay", func(b *testing.B) {
		_, base, _ := benchServer(b, 0)
		tok := mint(1)[0]
		do(b, base+testPath, tok, "", 202)
		var next atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := next.Add(1)
				do(b, base+testPath, tok, fmt.Sprintf("10.%d.%d.%d", byte(i>>16), byte(i>>8), byte(i)), 401)
			}
		})
		b.StopTimer()
		perSecond(b, "refusals/s")
	})

	b.Run("refused-throttled", func(b *testing.B) {
		_, base, _ := benchServer(b, 0)
		for range ThrottleFailures {
			do(b, base+testPath, "x", "", 401)
		}
		tok := mint(1)[0]
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				do(b, base+testPath, tok, "", 429)
			}
		})
		b.StopTimer()
		perSecond(b, "refusals/s")
	})

	b.Run("bare-ES256-verify", func(b *testing.B) {
		tok := mint(1)[0]
		dot := strings.LastIndexByte(tok, '.')
		sig, _ := base64.RawURLEncoding.DecodeString(tok[dot+1:])
		// The DER form the standard library verifies, made beforehand.
		der, err := asn1.Marshal(struct{ R, S *big.Int }{new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])})
		if err != nil {
			b.Fatal(err)
		}
		pub := &testKeys().ec.PublicKey
		input := []byte(tok[:dot])
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				h := sha256.Sum256(input)
				if !ecdsa.VerifyASN1(pub, h[:], der) {
					b.Fatal("bare check failed")
				}
			}
		})
		b.StopTimer()
		perSecond(b, "verifies/s")
	})
}

// BenchmarkHandler measures the endpoint without HTTP: ServeHTTP on an
// in-memory request, one goroutine, so the figures are the endpoint's own
// cost per request.
func BenchmarkHandler(b *testing.B) {
	e := newEnv(b, func(o *Options) {
		o.Now = nil
		o.Audit = nil
		o.TrustedProxies = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	})
	run := func(b *testing.B, tokens []string, xff bool, want int) {
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			r := httptest.NewRequest("POST", testPath, strings.NewReader(goodBody))
			r.RemoteAddr = "127.0.0.1:1"
			r.Header.Set("Authorization", "Bearer "+tokens[i%len(tokens)])
			if xff {
				r.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.%d", byte(i>>16), byte(i>>8), byte(i)))
			}
			w := httptest.NewRecorder()
			e.srv.ServeHTTP(w, r)
			if w.Code != want {
				b.Fatalf("status %d", w.Code)
			}
		}
	}
	b.Run("admitted", func(b *testing.B) { run(b, mint(b.N), false, 202) })
	b.Run("refused-no-token", func(b *testing.B) { run(b, []string{""}, true, 401) })
	b.Run("refused-bad-signature", func(b *testing.B) {
		tok := mint(1)[0]
		run(b, []string{tok[:len(tok)-8] + "AAAAAAAA"}, true, 401)
	})
}

// BenchmarkFlood sends a flood of distinct tokens, each from its own
// client address, and reports the heap retained afterwards. "valid" tokens
// outnumber what the single-use store holds (10 000 here), so the last
// ones get 503; "forged" tokens (distinct claims under a signature that
// does not match) each fail once from a fresh address, which fills the
// failure throttle to its bound. Both figures stay flat however long the
// flood: the store, the throttle and the verifier's header cache are
// bounded.
func BenchmarkFlood(b *testing.B) {
	const store = 10_000
	for _, kind := range []string{"valid", "forged"} {
		for _, n := range []int{20_000, 80_000} {
			b.Run(fmt.Sprintf("%s/%d", kind, n), func(b *testing.B) {
				tokens := make([]string, n)
				now := time.Now()
				forged := edSigner().sign(nil, claims(now, nil))
				sig := forged[strings.LastIndexByte(forged, '.'):]
				head := forged[:strings.IndexByte(forged, '.')]
				for i := range tokens {
					c := claims(now, map[string]any{"exp": now.Unix() + 3600})
					if kind == "valid" {
						// EdDSA: the cheapest to sign, so the setup stays short.
						tokens[i] = edSigner().sign(nil, c)
					} else {
						tokens[i] = head + "." + b64(mustJSON(c)) + sig
					}
				}
				for b.Loop() {
					e := newEnv(b, func(o *Options) {
						o.Now = nil
						o.Audit = nil
						o.MaxTokens = store
						o.Target = &countTarget{}
						o.TrustedProxies = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
					})
					runtime.GC()
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					codes := map[int]int{}
					for i, tok := range tokens {
						r := httptest.NewRequest("POST", testPath, strings.NewReader(goodBody))
						r.RemoteAddr = "127.0.0.1:1"
						r.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.%d", byte(i>>16), byte(i>>8), byte(i)))
						r.Header.Set("Authorization", "Bearer "+tok)
						w := httptest.NewRecorder()
						e.srv.ServeHTTP(w, r)
						codes[w.Code]++
					}
					runtime.GC()
					runtime.ReadMemStats(&after)
					if kind == "valid" && (codes[202] != store || codes[503] != n-store) || kind == "forged" && codes[401] != n {
						b.Fatalf("statuses %v", codes)
					}
					b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "retained-MiB")
					runtime.KeepAlive(e)
				}
			})
		}
	}
}
