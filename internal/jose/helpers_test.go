package jose

import (
	"agent/internal/jose/josetest"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"os"
	"sync"
	"testing"
	"time"
)

// Fixed test keys, so that tokens and fuzz corpora mean the same thing
// from one run to the next.
var testKeys = sync.OnceValue(func() (k struct {
	rsa *rsa.PrivateKey
	ec  *ecdsa.PrivateKey
	ed  ed25519.PrivateKey
}) {
	// The RSA key is Wycheproof's "kid-rsa-sign" (json_web_signature_test.json).
	var f struct {
		TestGroups []struct {
			Private map[string]any `json:"private"`
		} `json:"testGroups"`
	}
	readJSON(nil, "json_web_signature_test.json", &f)
	for _, g := range f.TestGroups {
		if g.Private["kid"] == "kid-rsa-sign" && g.Private["alg"] == "RS256" {
			k.rsa = rsaPrivateFromJWK(g.Private)
			break
		}
	}
	if k.rsa == nil {
		panic("kid-rsa-sign not found in testdata")
	}
	d := sha256.Sum256([]byte("jose test ES256 key"))
	var err error
	if k.ec, err = ecdsa.ParseRawPrivateKey(elliptic.P256(), d[:]); err != nil {
		panic(err)
	}
	seed := sha256.Sum256([]byte("jose test EdDSA key"))
	k.ed = ed25519.NewKeyFromSeed(seed[:])
	return k
})

func rsaPrivateFromJWK(m map[string]any) *rsa.PrivateKey {
	num := func(name string) *big.Int {
		b, err := base64.RawURLEncoding.DecodeString(m[name].(string))
		if err != nil {
			panic(err)
		}
		return new(big.Int).SetBytes(b)
	}
	k := &rsa.PrivateKey{
		PublicKey: rsa.PublicKey{N: num("n"), E: int(num("e").Int64())},
		D:         num("d"),
		Primes:    []*big.Int{num("p"), num("q")},
	}
	k.Precompute()
	if err := k.Validate(); err != nil {
		panic(err)
	}
	return k
}

func readJSON(t testing.TB, name string, v any) {
	data, err := os.ReadFile("testdata/" + name)
	if err == nil {
		err = json.Unmarshal(data, v)
	}
	if err != nil {
		if t == nil {
			panic(err)
		}
		t.Helper()
		t.Fatalf("reading testdata/%s: %v", name, err)
	}
}

// signer mints tokens with one of the test keys.
type signer struct {
	alg  Algorithm
	kid  string
	priv crypto.Signer
}

func rsSigner(kid string) signer { return signer{RS256, kid, testKeys().rsa} }
func esSigner(kid string) signer { return signer{ES256, kid, testKeys().ec} }
func edSigner(kid string) signer { return signer{EdDSA, kid, testKeys().ed} }

func (s signer) key(t testing.TB) *Key {
	t.Helper()
	k, err := NewKey(s.priv.Public(), s.kid)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// signRaw signs header and payload given as raw JSON text, so tests can
// write duplicate keys and odd shapes.
func (s signer) signRaw(header, payload string) string {
	input := b64(header) + "." + b64(payload)
	return input + "." + base64.RawURLEncoding.EncodeToString(s.signature(input))
}

func (s signer) signature(input string) []byte { return josetest.Signature(s.priv, input) }

// header returns the usual header for s.
func (s signer) header() map[string]any {
	h := map[string]any{"alg": string(s.alg), "typ": "at+jwt"}
	if s.kid != "" {
		h["kid"] = s.kid
	}
	return h
}

// sign signs header and claims maps (nil header: the usual one).
func (s signer) sign(header, claims map[string]any) string {
	if header == nil {
		header = s.header()
	}
	return s.signRaw(mustJSON(header), mustJSON(claims))
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// The policy most tests verify against.
const (
	testIssuer   = "https://issuer.example/tenant"
	testAudience = "https://agent.example/mcp"
	testSubject  = "alice"
	testClient   = "client-7"
)

var testNow = time.Unix(1_700_000_000, 0)

// goodClaims returns a claims set that passes testOptions, with changes:
// a nil value deletes the claim.
func goodClaims(changes map[string]any) map[string]any {
	c := map[string]any{
		"iss":       testIssuer,
		"sub":       testSubject,
		"aud":       testAudience,
		"exp":       testNow.Unix() + 300,
		"iat":       testNow.Unix() - 10,
		"jti":       "token-1",
		"scope":     "events:write read",
		"client_id": testClient,
	}
	for k, v := range changes {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func testOptions(keys KeySource) Options {
	return Options{
		Issuer:    testIssuer,
		Audience:  testAudience,
		Scopes:    []string{"events:write"},
		Subjects:  []string{testSubject},
		Keys:      keys,
		RequireID: true,
		Now:       func() time.Time { return testNow },
	}
}

func newVerifier(t testing.TB, opts Options) *Verifier {
	t.Helper()
	v, err := NewVerifier(opts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// standardSet holds the three test keys under kids rs, es and ed.
func standardSet(t testing.TB) *KeySet {
	return NewKeySet(rsSigner("rs").key(t), esSigner("es").key(t), edSigner("ed").key(t))
}
