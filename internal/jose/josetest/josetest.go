// Package josetest signs JWS and builds public JWKs for tests of token
// verification: the algorithm follows the key (RS256 for RSA, ES256 with
// the raw r||s form for P-256, EdDSA for Ed25519), as RFC 7515 and RFC 7518
// §3.4 and RFC 8037 give them. It is written apart from package jose so that
// a test's tokens are not made by the code under test.
//
// Imports: the standard library only. Only tests import it.
package josetest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// B64 is unpadded base64url.
func B64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// Signature signs the JWS signing input with priv.
func Signature(priv crypto.Signer, input string) []byte {
	h := sha256.Sum256([]byte(input))
	switch p := priv.(type) {
	case *rsa.PrivateKey:
		sig, err := rsa.SignPKCS1v15(nil, p, crypto.SHA256, h[:])
		if err != nil {
			panic(err)
		}
		return sig
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, p, h[:])
		if err != nil {
			panic(err)
		}
		sig := make([]byte, 64) // r || s, each 32 bytes (RFC 7518 §3.4)
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:])
		return sig
	case ed25519.PrivateKey:
		return ed25519.Sign(p, []byte(input))
	}
	panic(fmt.Sprintf("josetest: unsupported key %T", priv))
}

// SignRaw signs a header and payload given as JSON text (tests that need
// duplicate keys or odd shapes).
func SignRaw(priv crypto.Signer, header, payload string) string {
	input := B64([]byte(header)) + "." + B64([]byte(payload))
	return input + "." + B64(Signature(priv, input))
}

// Sign signs claims under header.
func Sign(priv crypto.Signer, header, claims map[string]any) string {
	h, err := json.Marshal(header)
	if err != nil {
		panic(err)
	}
	c, err := json.Marshal(claims)
	if err != nil {
		panic(err)
	}
	return SignRaw(priv, string(h), string(c))
}

// PublicJWK is the public JWK of priv with kid, use "sig" and alg.
func PublicJWK(priv crypto.Signer, kid, alg string) map[string]any {
	m := map[string]any{"kid": kid, "use": "sig", "alg": alg}
	switch p := priv.Public().(type) {
	case *ecdsa.PublicKey:
		raw, err := p.Bytes() // 0x04 || X || Y
		if err != nil {
			panic(err)
		}
		m["kty"], m["crv"], m["x"], m["y"] = "EC", "P-256", B64(raw[1:33]), B64(raw[33:])
	case ed25519.PublicKey:
		m["kty"], m["crv"], m["x"] = "OKP", "Ed25519", B64(p)
	case *rsa.PublicKey:
		m["kty"], m["n"], m["e"] = "RSA", B64(p.N.Bytes()), B64([]byte{1, 0, 1})
	default:
		panic(fmt.Sprintf("josetest: unsupported key %T", p))
	}
	return m
}
