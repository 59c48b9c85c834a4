package jose

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"agent/internal/strictjson"
)

// fuzzSeeds returns tokens from the vector files and the attack table.
func fuzzSeeds(f *testing.F) []string {
	var seeds []string
	var w wycheproofJWS
	readJSON(f, "json_web_signature_test.json", &w)
	for _, g := range w.TestGroups {
		for _, tc := range g.Tests {
			seeds = append(seeds, vectorToken(tc.JWS))
		}
	}
	var r struct {
		Vectors []struct {
			JWS string `json:"jws"`
		} `json:"vectors"`
	}
	readJSON(f, "rfc_jws_vectors.json", &r)
	for _, v := range r.Vectors {
		seeds = append(seeds, v.JWS)
	}
	for _, a := range attackCases(f) {
		if len(a.token) <= 2*DefaultMaxTokenBytes {
			seeds = append(seeds, a.token)
		}
	}
	return seeds
}

func FuzzParseCompact(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		j, err := ParseCompact(token)
		if err != nil {
			if ReasonOf(err) != Malformed {
				t.Fatalf("refusal with reason %v: %v", ReasonOf(err), err)
			}
			return
		}
		if strings.Count(token, ".") != 2 || j.Algorithm == "" || j.Header.Kind != strictjson.Object {
			t.Fatalf("accepted a token of the wrong form: %+v", j)
		}
		last := strings.LastIndexByte(token, '.')
		if string(j.signingInput) != token[:last] {
			t.Fatal("signing input is not the first two segments")
		}
		// Decoding is canonical: encoding the parts again gives the token.
		re := b64(string(headerBytes(t, token))) + "." + b64(string(j.Payload)) + "." + b64(string(j.signature))
		if re != token {
			t.Fatalf("token %q decodes to parts that encode as %q", token, re)
		}
	})
}

func headerBytes(t *testing.T, token string) []byte {
	h, _, _ := strings.Cut(token, ".")
	b, ok := decodeSegment(h)
	if !ok {
		t.Fatal("header of an accepted token does not decode")
	}
	return b
}

// FuzzVerify: no input panics, every refusal is an *Error with a known
// reason, and nothing is accepted that was not signed by a test key: an
// accepted token's header and payload are those of a token minted here.
func FuzzVerify(f *testing.F) {
	set := standardSet(f)
	signed := map[string]bool{}
	for _, s := range []signer{rsSigner("rs"), esSigner("es"), edSigner("ed"), rsSigner(""), esSigner(""), edSigner("")} {
		for _, c := range []map[string]any{
			goodClaims(nil),
			goodClaims(map[string]any{"aud": []string{"x", testAudience}, "scope": nil, "scp": []string{"events:write"}}),
			goodClaims(map[string]any{"nbf": testNow.Unix(), "sub": nil, "client_id": testSubject}),
		} {
			tok := s.sign(nil, c)
			signed[tok[:strings.LastIndexByte(tok, '.')]] = true
			f.Add(tok)
		}
	}
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	opts := testOptions(set)
	opts.Clients = []string{testSubject}
	v := newVerifier(f, opts)
	f.Fuzz(func(t *testing.T, token string) {
		c, err := v.Verify(context.Background(), token)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Reason < Malformed || e.Reason > PrincipalNotAllowed {
				t.Fatalf("refusal without a reason: %v", err)
			}
			return
		}
		if !signed[token[:strings.LastIndexByte(token, '.')]] {
			t.Fatalf("accepted a token no test key signed: %q", token)
		}
		if c.Issuer != testIssuer || c.Expiry.Before(testNow.Add(-time.Minute)) {
			t.Fatalf("accepted claims %+v", c)
		}
	})
}

// FuzzParseJWKS: no key set panics the parser, and every key kept is one
// this package can verify with.
func FuzzParseJWKS(f *testing.F) {
	var w wycheproofJWS
	readJSON(f, "json_web_key_test.json", &w)
	for _, g := range w.TestGroups {
		f.Add([]byte(g.Public))
		f.Add([]byte(g.Private))
	}
	f.Add([]byte(jwksOf(f, esJWK(f, "a"), edJWK(f, "b"), jwkOf(f, &testKeys().rsa.PublicKey, nil))))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := ParseJWKS(data)
		if err != nil {
			return
		}
		for _, k := range set.Keys() {
			if algIndex(k.Algorithm()) < 0 || k.Public() == nil {
				t.Fatalf("kept key %+v", k)
			}
		}
		for _, e := range set.Skipped() {
			if !errors.Is(e, ErrUnusableKey) {
				t.Fatalf("skip reason %v", e)
			}
		}
	})
}
