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
	}
}
