package jose

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// BenchmarkVerify sets the whole check of a token (parse, header policy,
// key selection, signature, claims) beside the bare standard-library check
// of the same signature over the same signing input, hashing included. The
// target is full within 1.15x of bare (docs/performance.md).
func BenchmarkVerify(b *testing.B) {
	ctx := context.Background()
	v := newVerifier(b, testOptions(standardSet(b)))
	k := testKeys()
	for _, s := range []signer{esSigner("es"), edSigner("ed"), rsSigner("rs")} {
		token := s.sign(nil, goodClaims(nil))
		dot := strings.LastIndexByte(token, '.')
		input := token[:dot]
		sig, err := base64.RawURLEncoding.DecodeString(token[dot+1:])
		if err != nil {
			b.Fatal(err)
		}
		var bare func() bool
		switch s.alg {
		case ES256:
			der := p1363ToDER(nil, sig) // the bare check takes the DER form the standard library verifies
			bare = func() bool {
				h := sha256.Sum256([]byte(input))
				return ecdsa.VerifyASN1(&k.ec.PublicKey, h[:], der)
			}
		case EdDSA:
			pub := k.ed.Public().(ed25519.PublicKey)
			bare = func() bool { return ed25519.Verify(pub, []byte(input), sig) }
		case RS256:
			bare = func() bool {
				h := sha256.Sum256([]byte(input))
				return rsa.VerifyPKCS1v15(&k.rsa.PublicKey, crypto.SHA256, h[:], sig) == nil
			}
		}
		b.Run(string(s.alg)+"/full", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Verify(ctx, token); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(string(s.alg)+"/bare", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !bare() {
					b.Fatal("bare check failed")
				}
			}
		})
		// The two side by side, alternating every iteration, so that load
		// from other processes weighs on both alike: the ratio is the
		// figure to compare with the 1.15x target.
		b.Run(string(s.alg)+"/ratio", func(b *testing.B) {
			var full, bareT time.Duration
			var err error
			i := 0
			for b.Loop() {
				t0 := time.Now()
				if i%2 == 0 {
					_, err = v.Verify(ctx, token)
				} else if !bare() {
					b.Fatal("bare check failed")
				}
				t1 := time.Now()
				if i%2 == 0 {
					if !bare() {
						b.Fatal("bare check failed")
					}
				} else {
					_, err = v.Verify(ctx, token)
				}
				t2 := time.Now()
				if err != nil {
					b.Fatal(err)
				}
				if i%2 == 0 {
					full, bareT = full+t1.Sub(t0), bareT+t2.Sub(t1)
				} else {
					full, bareT = full+t2.Sub(t1), bareT+t1.Sub(t0)
				}
				i++
			}
			b.ReportMetric(float64(full)/float64(bareT), "full/bare")
			b.ReportMetric(float64(full.Nanoseconds())/float64(i), "full-ns")
			b.ReportMetric(float64(bareT.Nanoseconds())/float64(i), "bare-ns")
		})
	}
}
