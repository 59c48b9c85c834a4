package jose

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sync"

	"agent/internal/strictjson"
)

// Algorithm is a JWS alg value (RFC 7518 §3.1, RFC 8037 §3.1).
type Algorithm string

// The only algorithms this package verifies (docs/reference/mcp.md,
// "Access-token verification"). Each key type admits exactly one of them,
// so the key decides the algorithm.
const (
	RS256 Algorithm = "RS256" // RSASSA-PKCS1-v1_5 with SHA-256, RSA keys of 2048 bits or more
	ES256 Algorithm = "ES256" // ECDSA P-256 with SHA-256, signature as raw r||s
	EdDSA Algorithm = "EdDSA" // Ed25519
)

// Algorithms is every algorithm this package verifies.
func Algorithms() []Algorithm { return []Algorithm{RS256, ES256, EdDSA} }

// Limits on RSA keys. Under 2048 bits is refused (docs/reference/mcp.md,
// "Access-token verification"); over 8192 bits only costs the verifier
// time, and no issuer uses such keys.
const (
	minRSABits = 2048
	maxRSABits = 8192
)

// ErrUnusableKey is wrapped by every refusal of a key: a type, curve, size,
// use or algorithm this package does not verify with, a malformed member, or
// private key material.
var ErrUnusableKey = errors.New("unusable key")

// Key is a public key usable for one algorithm. It is immutable and safe for
// concurrent use.
type Key struct {
	id  string
	alg Algorithm
	rsa *rsa.PublicKey
	ec  *ecdsa.PublicKey
	ed  ed25519.PublicKey
}

// ID returns the key's kid, or "" when it has none.
func (k *Key) ID() string { return k.id }

// Algorithm returns the one algorithm this key verifies.
func (k *Key) Algorithm() Algorithm { return k.alg }

// Public returns the key as *rsa.PublicKey, *ecdsa.PublicKey or
// ed25519.PublicKey.
func (k *Key) Public() crypto.PublicKey {
	switch k.alg {
	case RS256:
		return k.rsa
	case ES256:
		return k.ec
	}
	return k.ed
}

// NewKey wraps a public key under the same rules as a JWK: RSA of 2048 to
// 8192 bits with a sane exponent and without the ROCA fingerprint, ECDSA on
// P-256, or Ed25519.
func NewKey(pub crypto.PublicKey, kid string) (*Key, error) {
	switch p := pub.(type) {
	case *rsa.PublicKey:
		if err := checkRSA(p.N, p.E); err != nil {
			return nil, err
		}
		return &Key{id: kid, alg: RS256, rsa: &rsa.PublicKey{N: new(big.Int).Set(p.N), E: p.E}}, nil
	case *ecdsa.PublicKey:
		if p.Curve != elliptic.P256() {
			return nil, fmt.Errorf("%w: ECDSA curve is not P-256", ErrUnusableKey)
		}
		raw, err := p.Bytes()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnusableKey, err)
		}
		return ecKey(kid, raw)
	case ed25519.PublicKey:
		if len(p) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("%w: Ed25519 key is not 32 bytes", ErrUnusableKey)
		}
		return &Key{id: kid, alg: EdDSA, ed: slices.Clone(p)}, nil
	}
	return nil, fmt.Errorf("%w: key type %T", ErrUnusableKey, pub)
}

func ecKey(kid string, uncompressed []byte) (*Key, error) {
	// ParseUncompressedPublicKey refuses points off the curve and the point
	// at infinity (invalid-curve attacks; Wycheproof json_web_key invalid_point).
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), uncompressed)
	if err != nil {
		return nil, fmt.Errorf("%w: EC point: %v", ErrUnusableKey, err)
	}
	return &Key{id: kid, alg: ES256, ec: pub}, nil
}

func checkRSA(n *big.Int, e int) error {
	switch bits := n.BitLen(); {
	case bits < minRSABits:
		return fmt.Errorf("%w: RSA key of %d bits, under %d", ErrUnusableKey, bits, minRSABits)
	case bits > maxRSABits:
		return fmt.Errorf("%w: RSA key of %d bits, over %d", ErrUnusableKey, bits, maxRSABits)
	case n.Bit(0) == 0:
		return fmt.Errorf("%w: RSA modulus is even", ErrUnusableKey)
	case e < 3 || e&1 == 0 || e > 1<<31-1:
		// e = 1 makes every "signature" its own message (Wycheproof
		// exponentOne); an even e is no RSA key at all.
		return fmt.Errorf("%w: RSA exponent %d", ErrUnusableKey, e)
	case rocaFingerprint(n.Bytes()):
		return fmt.Errorf("%w: RSA modulus has the ROCA fingerprint (CVE-2017-15361)", ErrUnusableKey)
	}
	return nil
}

// rocaResidues holds, for each odd prime p up to 701, the residues mod p
// reachable as powers of 65537. The flawed generator of CVE-2017-15361 builds
// primes k·M + (65537^a mod M), where M is a primorial that contains every
// prime up to 701 for keys of 1984 bits and more; so the modulus of such a
// key is a power of 65537 modulo each of these primes. A random modulus
// passes all of them with probability about 4e-51.
var rocaResidues = sync.OnceValue(func() (t []struct {
	p     uint32
	inSub []bool
}) {
	for p := uint32(3); p <= 701; p += 2 {
		prime := true
		for d := uint32(3); d*d <= p; d += 2 {
			if p%d == 0 {
				prime = false
				break
			}
		}
		if !prime {
			continue
		}
		in := make([]bool, p)
		for x := uint32(1); !in[x]; x = x * 65537 % p {
			in[x] = true
		}
		t = append(t, struct {
			p     uint32
			inSub []bool
		}{p, in})
	}
	return t
})

func rocaFingerprint(n []byte) bool {
	for _, r := range rocaResidues() {
		var m uint32
		for _, b := range n {
			m = (m<<8 | uint32(b)) % r.p
		}
		if !r.inSub[m] {
			return false
		}
	}
	return true
}

// verify reports whether sig is a valid signature of signingInput.
func (k *Key) verify(signingInput, sig []byte) bool {
	switch k.alg {
	case RS256:
		h := sha256.Sum256(signingInput)
		// VerifyPKCS1v15 requires len(sig) to be the modulus size exactly
		// and compares the whole encoded block, so no BER leniency
		// (Wycheproof rsa_signature ModifiedPadding cases).
		return rsa.VerifyPKCS1v15(k.rsa, crypto.SHA256, h[:], sig) == nil
	case ES256:
		// RFC 7518 §3.4: R and S as 32-byte big-endian integers, nothing
		// else — a DER signature or one of any other length is refused.
		if len(sig) != 64 {
			return false
		}
		h := sha256.Sum256(signingInput)
		var der [72]byte
		return ecdsa.VerifyASN1(k.ec, h[:], p1363ToDER(der[:0], sig))
	case EdDSA:
		return len(sig) == ed25519.SignatureSize && ed25519.Verify(k.ed, signingInput, sig)
	}
	return false
}

// p1363ToDER appends the ASN.1 DER form of a 64-byte r||s signature to b.
// The verifier then checks 0 < r, s < n itself.
func p1363ToDER(b, sig []byte) []byte {
	b = append(b, 0x30, 0)
	b = appendDERInt(b, sig[:32])
	b = appendDERInt(b, sig[32:])
	b[1] = byte(len(b) - 2) // at most 70: short form
	return b
}

func appendDERInt(b, v []byte) []byte {
	for len(v) > 1 && v[0] == 0 {
		v = v[1:]
	}
	if v[0]&0x80 != 0 {
		b = append(b, 0x02, byte(len(v)+1), 0)
	} else {
		b = append(b, 0x02, byte(len(v)))
	}
	return append(b, v...)
}

// jwkNames are the members read (or refused) in a JWK; case variants of
// them make the key unusable, as for headers.
var jwkNames = []string{"kty", "use", "key_ops", "alg", "kid", "crv", "x", "y", "n", "e",
	"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

// privateMembers mark private or symmetric key material (RFC 7518 §6.2.2,
// §6.3.2, §6.4). A published key set must not carry any; a key that does is
// not used (Wycheproof json_web_key MixedKeySet).
var privateMembers = []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

// ParseJWK parses one JSON Web Key (RFC 7517 §4) strictly and keeps it only
// if it is usable: kty RSA, EC with crv P-256, or OKP with crv Ed25519
// (RFC 8037 §2); use, when present, "sig"; key_ops, when present, including
// "verify"; alg, when present, the one algorithm of the key type. Errors for
// keys that parse but do not qualify wrap ErrUnusableKey.
func ParseJWK(data []byte) (*Key, error) {
	v, err := strictjson.Parse(data, strictjson.Options{MaxDepth: 8})
	if err != nil {
		return nil, fmt.Errorf("JWK: %w", err)
	}
	return keyFromJWK(v)
}

func keyFromJWK(v *strictjson.Value) (*Key, error) {
	unusable := func(why string) error { return fmt.Errorf("%w: %s", ErrUnusableKey, why) }
	if v.Kind != strictjson.Object {
		return nil, unusable("not a JSON object")
	}
	if n := caseVariant(v, jwkNames); n != "" {
		return nil, unusable("case variant of member " + n)
	}
	for _, m := range privateMembers {
		if v.Get(m) != nil {
			return nil, unusable("carries private or symmetric key material")
		}
	}
	var str [5]string
	for i, name := range [...]string{"kty", "use", "alg", "kid", "crv"} {
		s, ok := optionalString(v, name)
		if !ok {
			return nil, unusable(name + " is not a string")
		}
		str[i] = s
	}
	kty, use, alg, kid, crv := str[0], str[1], str[2], str[3], str[4]
	if use != "" && use != "sig" {
		return nil, unusable("use is not sig")
	}
	if ops := v.Get("key_ops"); ops != nil {
		if ops.Kind != strictjson.Array {
			return nil, unusable("key_ops is not an array")
		}
		verify := false
		for _, op := range ops.Items {
			if op.Kind != strictjson.String {
				return nil, unusable("key_ops holds a non-string")
			}
			verify = verify || op.Str == "verify"
		}
		if !verify {
			return nil, unusable("key_ops lacks verify")
		}
	}
	bytesOf := func(name string) ([]byte, error) {
		m := v.Get(name)
		if m == nil || m.Kind != strictjson.String {
			return nil, unusable(name + " missing or not a string")
		}
		b, ok := decodeSegment(m.Str)
		if !ok || len(b) == 0 {
			return nil, unusable(name + " is not unpadded base64url")
		}
		return b, nil
	}
	var key *Key
	switch kty {
	case "RSA":
		n, err := bytesOf("n")
		if err != nil {
			return nil, err
		}
		eb, err := bytesOf("e")
		if err != nil {
			return nil, err
		}
		if len(eb) > 4 {
			return nil, unusable("RSA exponent too large")
		}
		var e int
		for _, b := range eb {
			e = e<<8 | int(b)
		}
		nn := new(big.Int).SetBytes(n)
		if err := checkRSA(nn, e); err != nil {
			return nil, err
		}
		key = &Key{id: kid, alg: RS256, rsa: &rsa.PublicKey{N: nn, E: e}}
	case "EC":
		if crv != "P-256" {
			return nil, unusable("EC curve is not P-256")
		}
		x, err := bytesOf("x")
		if err != nil {
			return nil, err
		}
		y, err := bytesOf("y")
		if err != nil {
			return nil, err
		}
		// RFC 7518 §6.2.1.2–3: each coordinate is the full 32 bytes.
		if len(x) != 32 || len(y) != 32 {
			return nil, unusable("EC coordinates are not 32 bytes each")
		}
		if key, err = ecKey(kid, append(append([]byte{4}, x...), y...)); err != nil {
			return nil, err
		}
	case "OKP":
		if crv != "Ed25519" {
			return nil, unusable("OKP curve is not Ed25519")
		}
		x, err := bytesOf("x")
		if err != nil {
			return nil, err
		}
		if len(x) != ed25519.PublicKeySize {
			return nil, unusable("Ed25519 key is not 32 bytes")
		}
		key = &Key{id: kid, alg: EdDSA, ed: ed25519.PublicKey(x)}
	case "":
		return nil, unusable("kty missing")
	default:
		return nil, unusable("key type is not RSA, EC or OKP")
	}
	if alg != "" && Algorithm(alg) != key.alg {
		// A key marked for another algorithm (PS256, ES521, RSA1_5...) is
		// not ours to use under a different one (RFC 7517 §4.4).
		return nil, unusable("alg does not match the key type")
	}
	return key, nil
}

// KeySet is a set of usable keys, as parsed from a JWKS (RFC 7517 §5). It is
// immutable and safe for concurrent use, and it is itself a KeySource that
// never refreshes.
type KeySet struct {
	keys    []*Key
	skipped []error
}

// NewKeySet makes a set of the given keys.
func NewKeySet(keys ...*Key) *KeySet { return &KeySet{keys: slices.Clone(keys)} }

// ParseJWKS parses a JWK Set strictly: a JSON object (duplicate keys
// refused) whose "keys" member is an array. Keys that are unusable are
// skipped, not fatal (docs/reference/mcp.md, "Access-token verification"),
// and listed by Skipped.
func ParseJWKS(data []byte) (*KeySet, error) {
	v, err := strictjson.Parse(data, strictjson.Options{MaxDepth: 8})
	if err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	if v.Kind != strictjson.Object {
		return nil, errors.New("JWKS: not a JSON object")
	}
	if caseVariant(v, []string{"keys"}) != "" {
		return nil, errors.New(`JWKS: case variant of member "keys"`)
	}
	keys := v.Get("keys")
	if keys == nil || keys.Kind != strictjson.Array {
		return nil, errors.New(`JWKS: "keys" missing or not an array`)
	}
	s := &KeySet{}
	for i, item := range keys.Items {
		k, err := keyFromJWK(item)
		if err != nil {
			s.skipped = append(s.skipped, fmt.Errorf("JWKS key %d: %w", i, err))
			continue
		}
		s.keys = append(s.keys, k)
	}
	return s, nil
}

// Keys returns the usable keys.
func (s *KeySet) Keys() []*Key { return slices.Clone(s.keys) }

// Skipped says why each skipped key of a parsed set was not used.
func (s *KeySet) Skipped() []error { return slices.Clone(s.skipped) }

// Key selects the one key for a token's kid and alg. With a kid, the key
// must carry that kid; without one, exactly one usable key may fit the
// algorithm (docs/reference/mcp.md, "Access-token verification"). Two
// fitting keys are AmbiguousKey, none is UnknownKey.
func (s *KeySet) Key(_ context.Context, kid string, alg Algorithm) (*Key, error) {
	var found *Key
	for _, k := range s.keys {
		if k.alg != alg || (kid != "" && k.id != kid) {
			continue
		}
		if found != nil {
			return nil, refuse(AmbiguousKey, "several keys fit the token")
		}
		found = k
	}
	if found == nil {
		return nil, refuse(UnknownKey, "no key fits the token's kid and alg")
	}
	return found, nil
}
