package jose

import (
	"context"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
)

// wycheproofKey returns the first public key of the named json_web_key
// group, as a map.
func wycheproofKey(t *testing.T, group string) map[string]any {
	t.Helper()
	var f struct {
		TestGroups []struct {
			Comment string `json:"comment"`
			Public  struct {
				Keys []map[string]any `json:"keys"`
			} `json:"public"`
		} `json:"testGroups"`
	}
	readJSON(t, "json_web_key_test.json", &f)
	for _, g := range f.TestGroups {
		if g.Comment == group && len(g.Public.Keys) > 0 {
			return g.Public.Keys[0]
		}
	}
	t.Fatalf("group %s not found", group)
	return nil
}

func jwkOf(t testing.TB, pub any, extra map[string]any) map[string]any {
	t.Helper()
	enc := base64.RawURLEncoding.EncodeToString
	m := map[string]any{}
	switch p := pub.(type) {
	case *rsa.PublicKey:
		m = map[string]any{"kty": "RSA", "n": enc(p.N.Bytes()), "e": enc(big.NewInt(int64(p.E)).Bytes())}
	case *ecdsa.PublicKey:
		raw, err := p.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		n := (len(raw) - 1) / 2
		crv := map[int]string{32: "P-256", 48: "P-384", 66: "P-521"}[n]
		m = map[string]any{"kty": "EC", "crv": crv, "x": enc(raw[1 : 1+n]), "y": enc(raw[1+n:])}
	case ed25519.PublicKey:
		m = map[string]any{"kty": "OKP", "crv": "Ed25519", "x": enc(p)}
	}
	for k, v := range extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

func TestParseJWKSSkipsUnusableKeys(t *testing.T) {
	enc := base64.RawURLEncoding.EncodeToString
	rsaPub := &testKeys().rsa.PublicKey
	ecPub := &testKeys().ec.PublicKey
	edPub := testKeys().ed.Public().(ed25519.PublicKey)
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	x25519, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecRaw, _ := ecPub.Bytes()
	badY := append([]byte(nil), ecRaw[33:]...)
	badY[31] ^= 1
	usable := []any{
		jwkOf(t, rsaPub, map[string]any{"kid": "rsa", "use": "sig", "alg": "RS256"}),
		jwkOf(t, ecPub, map[string]any{"kid": "ec", "key_ops": []string{"verify"}}),
		jwkOf(t, edPub, map[string]any{"kid": "ed", "alg": "EdDSA", "x5t": "ignored", "ext": true}),
	}
	unusable := map[string]any{
		"RSA 1024 bits":          wycheproofKey(t, "keysize_too_small"),
		"RSA exponent 1":         wycheproofKey(t, "exponentOne"),
		"RSA ROCA modulus":       wycheproofKey(t, "jws_rsa_roca_key"),
		"RSA even modulus":       jwkOf(t, rsaPub, map[string]any{"n": enc(new(big.Int).Add(rsaPub.N, big.NewInt(1)).Bytes())}),
		"RSA exponent 2^32+1":    jwkOf(t, rsaPub, map[string]any{"e": "AQAAAAE"}),
		"RSA use enc":            jwkOf(t, rsaPub, map[string]any{"use": "enc"}),
		"RSA alg PS256":          jwkOf(t, rsaPub, map[string]any{"alg": "PS256"}),
		"RSA alg RSA-OAEP":       jwkOf(t, rsaPub, map[string]any{"alg": "RSA-OAEP"}),
		"RSA private":            jwkOf(t, rsaPub, map[string]any{"d": enc(testKeys().rsa.D.Bytes())}),
		"RSA n padded":           jwkOf(t, rsaPub, map[string]any{"n": enc(rsaPub.N.Bytes()) + "=="}),
		"RSA n missing":          jwkOf(t, rsaPub, map[string]any{"n": nil}),
		"RSA e a number":         jwkOf(t, rsaPub, map[string]any{"e": 65537}),
		"EC P-384":               jwkOf(t, &p384.PublicKey, nil),
		"EC P-256 marked P-384":  jwkOf(t, ecPub, map[string]any{"crv": "P-384"}),
		"EC alg ES384":           jwkOf(t, ecPub, map[string]any{"alg": "ES384"}),
		"EC point off the curve": jwkOf(t, ecPub, map[string]any{"y": enc(badY)}),
		"EC x of 31 bytes":       jwkOf(t, ecPub, map[string]any{"x": enc(ecRaw[2:33])}),
		"EC key_ops sign only":   jwkOf(t, ecPub, map[string]any{"key_ops": []string{"sign"}}),
		"EC key_ops not strings": jwkOf(t, ecPub, map[string]any{"key_ops": []any{"verify", 1}}),
		"EC private":             jwkOf(t, ecPub, map[string]any{"d": enc(ecRaw[1:33])}),
		"EC kty case variant":    jwkOf(t, ecPub, map[string]any{"kty": nil, "KTY": "EC"}),
		"EC kid not a string":    jwkOf(t, ecPub, map[string]any{"kid": 3}),
		"OKP X25519":             map[string]any{"kty": "OKP", "crv": "X25519", "x": enc(x25519.PublicKey().Bytes())},
		"OKP Ed448":              map[string]any{"kty": "OKP", "crv": "Ed448", "x": enc(make([]byte, 57))},
		"OKP x of 33 bytes":      jwkOf(t, edPub, map[string]any{"x": enc(append([]byte{0}, edPub...))}),
		"oct":                    map[string]any{"kty": "oct", "k": "c2VjcmV0"},
		"kty missing":            map[string]any{"n": "AQAB"},
		"not an object":          "RSA",
		"null":                   nil,
	}
	keys := append([]any{}, usable...)
	for _, k := range unusable {
		keys = append(keys, k)
	}
	set, err := ParseJWKS([]byte(mustJSON(map[string]any{"keys": keys, "other": 1})))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(set.Keys()); got != len(usable) {
		t.Errorf("%d usable keys, want %d; skipped: %v", got, len(usable), set.Skipped())
	}
	if got := len(set.Skipped()); got != len(unusable) {
		t.Errorf("%d skipped, want %d", got, len(unusable))
	}
	for _, err := range set.Skipped() {
		if !errors.Is(err, ErrUnusableKey) {
			t.Errorf("skip reason %v does not wrap ErrUnusableKey", err)
		}
	}
	// Each unusable key alone.
	for name, k := range unusable {
		if _, err := ParseJWK([]byte(mustJSON(k))); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for _, want := range []Algorithm{RS256, ES256, EdDSA} {
		k, err := set.Key(context.Background(), "", want)
		if err != nil || k.Algorithm() != want {
			t.Errorf("key for %s: %v", want, err)
		}
	}
}

func TestParseJWKSRefusesMalformedSets(t *testing.T) {
	for _, doc := range []string{
		``,
		`[]`,
		`{}`,
		`{"keys":{}}`,
		`{"keys":[],"keys":[]}`,
		`{"Keys":[]}`,
		`{"keys":[]} x`,
		`{"keys":[{"kty":"EC","kty":"RSA"}]}`,
		"{\"keys\":[\"\xff\"]}",
		strings.Repeat(`{"keys":[`, 20),
	} {
		if _, err := ParseJWKS([]byte(doc)); err == nil {
			t.Errorf("%q: accepted", doc)
		}
	}
}

// TestROCAFingerprint: the Wycheproof ROCA key is caught, and no other RSA
// modulus of the test data nor freshly generated ones are.
func TestROCAFingerprint(t *testing.T) {
	roca := wycheproofKey(t, "jws_rsa_roca_key")
	n, _ := base64.RawURLEncoding.DecodeString(roca["n"].(string))
	if !rocaFingerprint(n) {
		t.Error("ROCA key not detected")
	}
	var moduli [][]byte
	var f struct {
		TestGroups []struct {
			Public  json.RawMessage `json:"public"`
			Private json.RawMessage `json:"private"`
			KeyJwk  struct {
				N string `json:"n"`
			} `json:"keyJwk"`
		} `json:"testGroups"`
	}
	for _, file := range []string{"json_web_signature_test.json", "rsa_signature_2048_sha256_test.json"} {
		readJSON(t, file, &f)
		for _, g := range f.TestGroups {
			var k struct {
				N string `json:"n"`
			}
			_ = json.Unmarshal(g.Public, &k)
			for _, s := range []string{k.N, g.KeyJwk.N} {
				if b, err := base64.RawURLEncoding.DecodeString(s); err == nil && len(b) > 0 {
					moduli = append(moduli, b)
				}
			}
		}
	}
	for range 2 {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		moduli = append(moduli, k.N.Bytes())
	}
	for i, m := range moduli {
		if rocaFingerprint(m) {
			t.Errorf("modulus %d wrongly has the ROCA fingerprint", i)
		}
	}
	t.Logf("%d moduli checked", len(moduli))
}

func TestNewKey(t *testing.T) {
	k := testKeys()
	for _, tc := range []struct {
		name string
		pub  any
		alg  Algorithm
	}{{"RSA", &k.rsa.PublicKey, RS256}, {"ECDSA P-256", &k.ec.PublicKey, ES256}, {"Ed25519", k.ed.Public(), EdDSA}} {
		t.Run(tc.name, func(t *testing.T) {
			key, err := NewKey(tc.pub, "id")
			if err != nil {
				t.Fatal(err)
			}
			if key.Algorithm() != tc.alg || key.ID() != "id" {
				t.Errorf("%T: %s %q", tc.pub, key.Algorithm(), key.ID())
			}
			if eq, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !eq.Equal(tc.pub) {
				t.Errorf("%T: Public() differs", tc.pub)
			}
		})
	}
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	x, _ := ecdh.X25519().GenerateKey(rand.Reader)
	for name, pub := range map[string]any{
		"RSA 1024":      &small.PublicKey,
		"RSA e=1":       &rsa.PublicKey{N: k.rsa.N, E: 1},
		"P-384":         &p384.PublicKey,
		"short Ed25519": ed25519.PublicKey(make([]byte, 31)),
		"X25519":        x.PublicKey(),
		"private key":   k.ec,
	} {
		if _, err := NewKey(pub, ""); !errors.Is(err, ErrUnusableKey) {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

func TestKeySetSelection(t *testing.T) {
	ctx := context.Background()
	es, es2, rs := esSigner("a").key(t), esSigner("b").key(t), rsSigner("a").key(t)
	set := NewKeySet(es, es2, rs)
	if k, err := set.Key(ctx, "a", ES256); err != nil || k != es {
		t.Errorf("kid a ES256: %v", err)
	}
	if k, err := set.Key(ctx, "a", RS256); err != nil || k != rs {
		t.Errorf("kid a RS256: %v", err)
	}
	if _, err := set.Key(ctx, "b", RS256); !errors.Is(err, UnknownKey) {
		t.Errorf("kid b RS256: %v", err)
	}
	if _, err := set.Key(ctx, "", ES256); !errors.Is(err, AmbiguousKey) {
		t.Errorf("no kid ES256 with two EC keys: %v", err)
	}
	if k, err := set.Key(ctx, "", RS256); err != nil || k != rs {
		t.Errorf("no kid RS256 with one RSA key: %v", err)
	}
	if _, err := set.Key(ctx, "", EdDSA); !errors.Is(err, UnknownKey) {
		t.Errorf("no Ed25519 key: %v", err)
	}
}
