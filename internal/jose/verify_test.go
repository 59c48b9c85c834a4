package jose

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestVerifyAccepts(t *testing.T) {
	set := standardSet(t)
	for _, s := range []signer{rsSigner("rs"), esSigner("es"), edSigner("ed")} {
		t.Run(string(s.alg), func(t *testing.T) {
			v := newVerifier(t, testOptions(set))
			c, err := v.Verify(context.Background(), s.sign(nil, goodClaims(nil)))
			if err != nil {
				t.Fatal(err)
			}
			if c.Issuer != testIssuer || c.Subject != testSubject || c.ClientID != testClient ||
				c.ID != "token-1" || c.Algorithm != s.alg || c.KeyID != s.kid ||
				!slices.Equal(c.Audience, []string{testAudience}) ||
				!slices.Equal(c.Scopes, []string{"events:write", "read"}) ||
				!c.Expiry.Equal(testNow.Add(300*time.Second)) || !c.IssuedAt.Equal(testNow.Add(-10*time.Second)) ||
				!c.NotBefore.IsZero() || c.Raw.Get("iss") == nil {
				t.Errorf("claims: %+v", c)
			}
		})
	}
}

// TestVerifyPolicies: the shapes a valid token may take, and the policy
// options of the two callers.
func TestVerifyPolicies(t *testing.T) {
	es := esSigner("es")
	set := standardSet(t)
	eventGrant := testOptions(set)
	eventGrant.Subjects = nil
	eventGrant.Clients = []string{testClient}
	eventGrant.Algorithms = []Algorithm{ES256}
	serve := testOptions(set)
	serve.Subjects = []string{"bob", testSubject}
	serve.Scopes = []string{"mcp", "read"}
	serve.RequireID = false
	cases := []struct {
		name   string
		opts   Options
		token  string
		reason Reason // 0: accepted
	}{
		{"aud array containing ours", testOptions(set), es.sign(nil, goodClaims(map[string]any{"aud": []string{"https://other.example", testAudience}})), 0},
		{"scp array", testOptions(set), es.sign(nil, goodClaims(map[string]any{"scope": nil, "scp": []string{"read", "events:write"}})), 0},
		{"scope with extra spaces", testOptions(set), es.sign(nil, goodClaims(map[string]any{"scope": "  events:write  "})), 0},
		{"scope and scp together", serve, es.sign(nil, goodClaims(map[string]any{"scope": "mcp", "scp": []string{"read"}})), 0},
		{"typ application/at+jwt", testOptions(set), es.sign(map[string]any{"alg": "ES256", "kid": "es", "typ": "application/at+jwt"}, goodClaims(nil)), 0},
		{"typ in upper case", testOptions(set), es.sign(map[string]any{"alg": "ES256", "kid": "es", "typ": "AT+JWT"}, goodClaims(nil)), 0},
		{"fractional exp", testOptions(set), es.sign(nil, goodClaims(map[string]any{"exp": float64(testNow.Unix()) + 0.5})), 0},
		{"expired within leeway", testOptions(set), es.sign(nil, goodClaims(map[string]any{"exp": testNow.Unix() - 59})), 0},
		{"nbf within leeway", testOptions(set), es.sign(nil, goodClaims(map[string]any{"nbf": testNow.Unix() + 60})), 0},
		{"unknown claims ignored", testOptions(set), es.sign(nil, goodClaims(map[string]any{"cnf": map[string]any{"x": 1}, "Custom": true})), 0},
		{"event grant by client", eventGrant, es.sign(nil, goodClaims(map[string]any{"sub": "someone"})), 0},
		{"event grant by client without sub", eventGrant, es.sign(nil, goodClaims(map[string]any{"sub": nil})), 0},
		{"event grant refuses other algorithms", eventGrant, rsSigner("rs").sign(nil, goodClaims(nil)), UnsupportedAlgorithm},
		{"event grant: sub equal to the client is not client_id", eventGrant, es.sign(nil, goodClaims(map[string]any{"sub": testClient, "client_id": nil})), PrincipalNotAllowed},
		{"serve: second subject", serve, es.sign(nil, goodClaims(map[string]any{"sub": "bob", "scope": "read mcp", "jti": nil})), 0},
		{"serve: missing one of two scopes", serve, es.sign(nil, goodClaims(map[string]any{"scope": "read"})), MissingScope},
		{"serve: subject not listed", serve, es.sign(nil, goodClaims(map[string]any{"sub": "mallory", "scope": "read mcp"})), PrincipalNotAllowed},
		{"serve: client_id does not stand for a subject", serve, es.sign(nil, goodClaims(map[string]any{"sub": nil, "client_id": testSubject, "scope": "read mcp"})), PrincipalNotAllowed},
		{"no leeway", func() Options { o := testOptions(set); o.Leeway = -1; return o }(), es.sign(nil, goodClaims(map[string]any{"exp": testNow.Unix()})), Expired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newVerifier(t, tc.opts).Verify(context.Background(), tc.token)
			if got := ReasonOf(err); got != tc.reason || (tc.reason == 0) != (err == nil) {
				t.Fatalf("got %v, want reason %q", err, tc.reason)
			}
		})
	}
}

// rawToken assembles segments without signing.
func rawToken(header, payload string, sig []byte) string {
	return b64(header) + "." + b64(payload) + "." + base64.RawURLEncoding.EncodeToString(sig)
}

type attackCase struct {
	name   string
	token  string
	keys   KeySource // nil: the standard set
	reason Reason
}

// attackCases is the attack table of the issue: each token must be refused
// with the given reason by testOptions over the standard set (or keys).
// The fuzz targets start from it too.
func attackCases(t testing.TB) []attackCase {
	rs, es, ed := rsSigner("rs"), esSigner("es"), edSigner("ed")
	claims := mustJSON(goodClaims(nil))
	good := es.sign(nil, goodClaims(nil))
	hParts := strings.Split(good, ".")

	// HMAC with the RSA public key as the secret, in each form a confused
	// verifier might use: DER, PEM and the JWK's n.
	der, err := x509.MarshalPKIXPublicKey(testKeys().rsa.Public())
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	hs := func(secret []byte, kid string) string {
		input := b64(`{"alg":"HS256","typ":"at+jwt","kid":"`+kid+`"}`) + "." + b64(claims)
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(input))
		return input + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}

	// A self-made key embedded in the header: signed with a key the set
	// does not hold, and refused before any key is looked at.
	attackerJWK := `{"kty":"OKP","crv":"Ed25519","x":"` + base64.RawURLEncoding.EncodeToString(ed.priv.Public().(ed25519.PublicKey)) + `"}`

	// Signature of the good token in DER instead of r||s.
	sig, _ := base64.RawURLEncoding.DecodeString(hParts[2])
	derSig := p1363ToDER(nil, sig)

	// One bit of the signature itself flipped, re-encoded: always valid
	// base64url (flipping a bit of the text could leave the alphabet).
	flippedSig := append([]byte(nil), sig...)
	flippedSig[3] ^= 1
	flipped := base64.RawURLEncoding.EncodeToString(flippedSig)

	big := goodClaims(map[string]any{"pad": ""})
	base := len(es.sign(nil, big))
	big["pad"] = strings.Repeat("x", (DefaultMaxTokenBytes-base)*3/4+8)

	two := NewKeySet(es.key(t), esSigner("es2").key(t))
	twoNoKid := NewKeySet(esSigner("").key(t), esSigner("").key(t))
	return []attackCase{
		// Algorithm attacks.
		{"alg none, no signature", rawToken(`{"alg":"none","typ":"at+jwt"}`, claims, nil), nil, UnsupportedAlgorithm},
		{"alg none, signature kept", b64(`{"alg":"none","typ":"at+jwt","kid":"es"}`) + "." + hParts[1] + "." + hParts[2], nil, UnsupportedAlgorithm},
		{"alg NONE", rawToken(`{"alg":"NONE","typ":"at+jwt"}`, claims, nil), nil, UnsupportedAlgorithm},
		{"HS256 with the RSA key as DER", hs(der, "rs"), nil, UnsupportedAlgorithm},
		{"HS256 with the RSA key as PEM", hs(pemKey, "rs"), nil, UnsupportedAlgorithm},
		{"HS256 with the JWK n", hs(testKeys().rsa.N.Bytes(), "rs"), nil, UnsupportedAlgorithm},
		{"PS256", rawToken(`{"alg":"PS256","typ":"at+jwt","kid":"rs"}`, claims, make([]byte, 256)), nil, UnsupportedAlgorithm},
		{"alg with different case", rawToken(`{"alg":"es256","typ":"at+jwt","kid":"es"}`, claims, sig), nil, UnsupportedAlgorithm},
		{"alg not a string", rawToken(`{"alg":["ES256"],"typ":"at+jwt"}`, claims, sig), nil, Malformed},
		{"alg missing", rawToken(`{"typ":"at+jwt","kid":"es"}`, claims, sig), nil, Malformed},
		// Key confusion.
		{"kid of the RSA key, ES256 token", es.sign(map[string]any{"alg": "ES256", "typ": "at+jwt", "kid": "rs"}, goodClaims(nil)), nil, UnknownKey},
		{"kid of the EC key, RS256 token", rs.sign(map[string]any{"alg": "RS256", "typ": "at+jwt", "kid": "es"}, goodClaims(nil)), nil, UnknownKey},
		{"kid unknown", esSigner("nope").sign(nil, goodClaims(nil)), nil, UnknownKey},
		{"kid not a string", es.sign(map[string]any{"alg": "ES256", "typ": "at+jwt", "kid": 1}, goodClaims(nil)), nil, Malformed},
		{"no kid, two keys fit", esSigner("").sign(nil, goodClaims(nil)), two, AmbiguousKey},
		{"kid shared by two keys", es.sign(nil, goodClaims(nil)), NewKeySet(es.key(t), es.key(t)), AmbiguousKey},
		{"no kid, keys without kid", esSigner("").sign(nil, goodClaims(nil)), twoNoKid, AmbiguousKey},
		{"signed by another key under a known kid", signer{ES256, "es", mustECKey(t)}.sign(nil, goodClaims(nil)), nil, BadSignature},
		// Headers that are refused.
		{"crit", es.sign(map[string]any{"alg": "ES256", "typ": "at+jwt", "kid": "es", "crit": []string{"exp"}}, goodClaims(nil)), nil, Malformed},
		{"crit empty", es.sign(map[string]any{"alg": "ES256", "typ": "at+jwt", "kid": "es", "crit": []string{}}, goodClaims(nil)), nil, Malformed},
		{"b64 false", es.sign(map[string]any{"alg": "ES256", "typ": "at+jwt", "kid": "es", "b64": false}, goodClaims(nil)), nil, Malformed},
		{"jku", es.sign(map[string]any{"alg": "ES256", "typ": "at+jwt", "kid": "es", "jku": "https://evil.example/jwks"}, goodClaims(nil)), nil, Malformed},
		{"x5u", es.sign(map[string]any{"alg": "ES256", "typ": "at+jwt", "kid": "es", "x5u": "https://evil.example/cert"}, goodClaims(nil)), nil, Malformed},
		{"x5c", es.sign(map[string]any{"alg": "ES256", "typ": "at+jwt", "kid": "es", "x5c": []string{"MIIB"}}, goodClaims(nil)), nil, Malformed},
		{"embedded jwk", edSigner("ed").signRaw(`{"alg":"EdDSA","typ":"at+jwt","jwk":`+attackerJWK+`}`, claims), nil, Malformed},
		{"embedded jwk, case variant", edSigner("ed").signRaw(`{"alg":"EdDSA","typ":"at+jwt","JWK":`+attackerJWK+`}`, claims), nil, Malformed},
		{"header case variant Alg", es.signRaw(`{"alg":"ES256","Alg":"none","typ":"at+jwt","kid":"es"}`, claims), nil, Malformed},
		{"header case variant with Kelvin sign", es.signRaw(`{"alg":"ES256","typ":"at+jwt","kid":"es","\u212aid":"rs"}`, claims), nil, Malformed},
		{"duplicate alg", es.signRaw(`{"alg":"ES256","alg":"none","typ":"at+jwt","kid":"es"}`, claims), nil, Malformed},
		{"header not an object", es.signRaw(`["ES256"]`, claims), nil, Malformed},
		{"header with trailing data", es.signRaw(`{"alg":"ES256","typ":"at+jwt","kid":"es"} {}`, claims), nil, Malformed},
		// Type.
		{"typ missing", es.sign(map[string]any{"alg": "ES256", "kid": "es"}, goodClaims(nil)), nil, WrongType},
		{"typ JWT", es.sign(map[string]any{"alg": "ES256", "kid": "es", "typ": "JWT"}, goodClaims(nil)), nil, WrongType},
		{"typ not a string", es.sign(map[string]any{"alg": "ES256", "kid": "es", "typ": 1}, goodClaims(nil)), nil, Malformed},
		// Claims keys.
		{"duplicate exp", es.signRaw(es.headerJSON(), strings.Replace(claims, `"exp":`, `"exp":9999999999,"exp":`, 1)), nil, Malformed},
		{"duplicate sub", es.signRaw(es.headerJSON(), strings.Replace(claims, `"sub":`, `"sub":"admin","sub":`, 1)), nil, Malformed},
		{"case-variant Exp beside exp", es.sign(nil, goodClaims(map[string]any{"Exp": 9999999999})), nil, Malformed},
		{"case-variant Aud only", es.sign(nil, goodClaims(map[string]any{"aud": nil, "Aud": testAudience})), nil, Malformed},
		{"case-variant SUB", es.sign(nil, goodClaims(map[string]any{"SUB": "admin"})), nil, Malformed},
		{"claims not an object", es.signRaw(es.headerJSON(), `[1]`), nil, Malformed},
		{"claims empty", es.signRaw(es.headerJSON(), ``), nil, Malformed},
		{"claims with invalid UTF-8", es.signRaw(es.headerJSON(), "{\"sub\":\"\xff\"}"), nil, Malformed},
		// Encoding and structure.
		{"padding on the signature", good + "==", nil, Malformed},
		{"padding on the payload", hParts[0] + "." + hParts[1] + "=." + hParts[2], nil, Malformed},
		{"standard base64 alphabet", hParts[0] + "." + strings.NewReplacer("-", "+", "_", "/").Replace(hParts[1]) + "+." + hParts[2], nil, Malformed},
		{"newline inside a segment", hParts[0] + "." + hParts[1][:4] + "\n" + hParts[1][4:] + "." + hParts[2], nil, Malformed},
		{"space after the token", good + " ", nil, Malformed},
		{"extra segment", good + ".", nil, Malformed},
		{"extra segment with content", good + "." + hParts[2], nil, Malformed},
		{"two segments", hParts[0] + "." + hParts[1], nil, Malformed},
		{"one segment", hParts[0], nil, Malformed},
		{"empty", "", nil, Malformed},
		{"empty header", "." + hParts[1] + "." + hParts[2], nil, Malformed},
		{"JWE compact form", hParts[0] + ".." + hParts[1] + ".." + hParts[2], nil, Malformed},
		{"JSON serialisation", `{"payload":"` + hParts[1] + `","signatures":[{"protected":"` + hParts[0] + `","signature":"` + hParts[2] + `"}]}`, nil, Malformed},
		{"oversize", es.sign(nil, big), nil, Oversize},
		{"oversize garbage", strings.Repeat("a", DefaultMaxTokenBytes+1), nil, Oversize},
		// Signatures.
		{"flipped signature bit", hParts[0] + "." + hParts[1] + "." + flipped, nil, BadSignature},
		{"DER signature", hParts[0] + "." + hParts[1] + "." + base64.RawURLEncoding.EncodeToString(derSig), nil, BadSignature},
		{"signature missing", hParts[0] + "." + hParts[1] + ".", nil, BadSignature},
		{"payload swapped", hParts[0] + "." + b64(mustJSON(goodClaims(map[string]any{"sub": "admin"}))) + "." + hParts[2], nil, BadSignature},
		{"RSA signature with trailing zero bytes", rs.sign(nil, goodClaims(nil)) + "AA", nil, BadSignature},
		// Time.
		{"exp missing", es.sign(nil, goodClaims(map[string]any{"exp": nil})), nil, Malformed},
		{"exp a string", es.sign(nil, goodClaims(map[string]any{"exp": "9999999999"})), nil, Malformed},
		{"exp negative", es.sign(nil, goodClaims(map[string]any{"exp": -1})), nil, Malformed},
		{"exp huge", es.sign(nil, goodClaims(map[string]any{"exp": 1e300})), nil, Malformed},
		{"expired", es.sign(nil, goodClaims(map[string]any{"exp": testNow.Unix() - 61})), nil, Expired},
		{"expired at exactly the leeway", es.sign(nil, goodClaims(map[string]any{"exp": testNow.Unix() - 60})), nil, Expired},
		{"nbf in the future", es.sign(nil, goodClaims(map[string]any{"nbf": testNow.Unix() + 61})), nil, NotYetValid},
		{"nbf not a number", es.sign(nil, goodClaims(map[string]any{"nbf": "0"})), nil, Malformed},
		{"iat in the future", es.sign(nil, goodClaims(map[string]any{"iat": testNow.Unix() + 3600})), nil, NotYetValid},
		// Issuer and audience.
		{"wrong iss", es.sign(nil, goodClaims(map[string]any{"iss": "https://evil.example/tenant"})), nil, WrongIssuer},
		{"iss with trailing slash", es.sign(nil, goodClaims(map[string]any{"iss": testIssuer + "/"})), nil, WrongIssuer},
		{"iss missing", es.sign(nil, goodClaims(map[string]any{"iss": nil})), nil, WrongIssuer},
		{"iss not a string", es.sign(nil, goodClaims(map[string]any{"iss": []string{testIssuer}})), nil, Malformed},
		{"aud missing", es.sign(nil, goodClaims(map[string]any{"aud": nil})), nil, WrongAudience},
		{"aud other", es.sign(nil, goodClaims(map[string]any{"aud": "https://agent.example/other"})), nil, WrongAudience},
		{"aud prefix of ours", es.sign(nil, goodClaims(map[string]any{"aud": "https://agent.example"})), nil, WrongAudience},
		{"aud with trailing slash", es.sign(nil, goodClaims(map[string]any{"aud": testAudience + "/"})), nil, WrongAudience},
		{"aud empty array", es.sign(nil, goodClaims(map[string]any{"aud": []string{}})), nil, WrongAudience},
		{"aud number", es.sign(nil, goodClaims(map[string]any{"aud": 1})), nil, Malformed},
		{"aud object", es.sign(nil, goodClaims(map[string]any{"aud": map[string]any{"aud": testAudience}})), nil, Malformed},
		{"aud null", es.sign(nil, goodClaims(map[string]any{"aud": []any{nil}})), nil, Malformed},
		{"aud array with a number", es.sign(nil, goodClaims(map[string]any{"aud": []any{testAudience, 1}})), nil, Malformed},
		{"aud nested array", es.sign(nil, goodClaims(map[string]any{"aud": []any{[]string{testAudience}}})), nil, Malformed},
		// Principal, id and scopes.
		{"sub other", es.sign(nil, goodClaims(map[string]any{"sub": "mallory"})), nil, PrincipalNotAllowed},
		{"sub missing", es.sign(nil, goodClaims(map[string]any{"sub": nil})), nil, PrincipalNotAllowed},
		{"sub not a string", es.sign(nil, goodClaims(map[string]any{"sub": 7})), nil, Malformed},
		{"jti missing", es.sign(nil, goodClaims(map[string]any{"jti": nil})), nil, Malformed},
		{"jti not a string", es.sign(nil, goodClaims(map[string]any{"jti": 1})), nil, Malformed},
		{"scope missing", es.sign(nil, goodClaims(map[string]any{"scope": nil})), nil, MissingScope},
		{"scope as a prefix", es.sign(nil, goodClaims(map[string]any{"scope": "events:writer"})), nil, MissingScope},
		{"scope with other separator", es.sign(nil, goodClaims(map[string]any{"scope": "read,events:write"})), nil, MissingScope},
		{"scope an array", es.sign(nil, goodClaims(map[string]any{"scope": []string{"events:write"}})), nil, Malformed},
		{"scp a string", es.sign(nil, goodClaims(map[string]any{"scope": nil, "scp": "events:write"})), nil, Malformed},
		{"scp holding a number", es.sign(nil, goodClaims(map[string]any{"scope": nil, "scp": []any{"events:write", 1}})), nil, Malformed},
	}
}

func TestVerifyAttacks(t *testing.T) {
	set := standardSet(t)
	for _, tc := range attackCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			keys := tc.keys
			if keys == nil {
				keys = set
			}
			_, err := newVerifier(t, testOptions(keys)).Verify(context.Background(), tc.token)
			if err == nil {
				t.Fatal("accepted")
			}
			var e *Error
			if !errors.As(err, &e) || e.Reason != tc.reason || !errors.Is(err, tc.reason) {
				t.Fatalf("got %v, want reason %q", err, tc.reason)
			}
			// Refusals are logged: no token content in them.
			for _, s := range []string{"evil", "admin", "mallory", "none"} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("refusal %q quotes the token", err)
				}
			}
		})
	}
}

func mustECKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func (s signer) headerJSON() string { return mustJSON(s.header()) }

// TestVerifyMaxBytes: a token of exactly the limit is parsed and accepted;
// one byte more is refused unparsed.
func TestVerifyMaxBytes(t *testing.T) {
	ed := edSigner("ed")
	v := newVerifier(t, testOptions(standardSet(t)))
	c := goodClaims(map[string]any{"pad": ""})
	// Payload lengths step by 1 or 2 base64 characters; a header parameter
	// of 0 to 3 bytes (ignored by the verifier) shifts the total so that one
	// combination lands on the limit exactly.
	for hp := 0; hp < 4; hp++ {
		h := ed.header()
		h["x-pad"] = strings.Repeat("y", hp)
		c["pad"] = ""
		start := (DefaultMaxTokenBytes-len(ed.sign(h, c)))*3/4 - 4
		for pad := start; ; pad++ {
			c["pad"] = strings.Repeat("x", pad)
			tok := ed.sign(h, c)
			if len(tok) < DefaultMaxTokenBytes {
				continue
			}
			if len(tok) > DefaultMaxTokenBytes {
				break
			}
			if _, err := v.Verify(context.Background(), tok); err != nil {
				t.Fatalf("token of exactly %d bytes: %v", len(tok), err)
			}
			if _, err := v.Verify(context.Background(), tok+"A"); !errors.Is(err, Oversize) {
				t.Fatalf("token of %d bytes: got %v, want oversize", len(tok)+1, err)
			}
			return
		}
	}
	t.Fatal("no padding gave a token of exactly the limit")
}

func TestNewVerifierRefusesBadOptions(t *testing.T) {
	set := standardSet(t)
	for name, change := range map[string]func(*Options){
		"no issuer":           func(o *Options) { o.Issuer = "" },
		"no audience":         func(o *Options) { o.Audience = "" },
		"no principal":        func(o *Options) { o.Subjects = nil },
		"empty subject":       func(o *Options) { o.Subjects = []string{""} },
		"empty scope":         func(o *Options) { o.Scopes = []string{"a", ""} },
		"empty algorithms":    func(o *Options) { o.Algorithms = []Algorithm{} },
		"HS256 allowed":       func(o *Options) { o.Algorithms = []Algorithm{"HS256"} },
		"discovery over http": func(o *Options) { o.Keys = nil; o.Issuer = "http://issuer.example" },
	} {
		o := testOptions(set)
		change(&o)
		if _, err := NewVerifier(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestVerifyKeySourceErrors: a plain error from a KeySource becomes
// KeysUnavailable; refusals pass through.
func TestVerifyKeySourceErrors(t *testing.T) {
	tok := esSigner("es").sign(nil, goodClaims(nil))
	cause := errors.New("disk on fire")
	for _, tc := range []struct {
		name string
		err  error
		want Reason
	}{
		{"a plain error means keys unavailable", cause, KeysUnavailable},
		{"a refusal passes through", refuse(AmbiguousKey, ""), AmbiguousKey},
		{"a keys-unavailable error passes through", &Error{Reason: KeysUnavailable, Err: context.DeadlineExceeded}, KeysUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newVerifier(t, testOptions(failingSource{tc.err})).Verify(context.Background(), tok)
			if ReasonOf(err) != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("source error %v: got %v", tc.err, err)
			}
		})
	}
}

type failingSource struct{ err error }

func (f failingSource) Key(context.Context, string, Algorithm) (*Key, error) { return nil, f.err }

func TestErrorText(t *testing.T) {
	err := &Error{Reason: KeysUnavailable, Msg: "issuer keys", Err: errors.New("HTTP 500")}
	if got, want := err.Error(), "token refused: keys unavailable: issuer keys: HTTP 500"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if Reason(0).String() != "unknown reason" || Reason(99).String() != "unknown reason" {
		t.Error("out-of-range reasons")
	}
	if ReasonOf(errors.New("x")) != 0 || ReasonOf(nil) != 0 {
		t.Error("ReasonOf of a foreign error")
	}
	if errors.Is(err, Expired) || !errors.Is(err, KeysUnavailable) {
		t.Error("errors.Is by reason")
	}
}

// TestVerifyHeaderCache: many distinct headers from many goroutines (more
// than the cache holds, so entries are evicted while others read), each
// token verified against its own key. Run under -race.
func TestVerifyHeaderCache(t *testing.T) {
	const n = 3 * headerCacheEntries
	keys := make([]*Key, n)
	signers := make([]signer, n)
	for i := range n {
		seed := sha256.Sum256([]byte{byte(i), byte(i >> 8)})
		signers[i] = signer{EdDSA, fmt.Sprint("k", i), ed25519.NewKeyFromSeed(seed[:])}
		keys[i] = signers[i].key(t)
	}
	v := newVerifier(t, testOptions(NewKeySet(keys...)))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for r := range 3 * n {
				s := signers[(r*7+g)%n]
				tok := s.sign(nil, goodClaims(nil))
				c, err := v.Verify(context.Background(), tok)
				if err != nil || c.KeyID != s.kid {
					t.Errorf("kid %s: %v", s.kid, err)
					return
				}
				// The same header with another key's signature fails.
				other := signers[(r*7+g+1)%n]
				forged := tok[:strings.LastIndexByte(tok, '.')+1] +
					base64.RawURLEncoding.EncodeToString(other.signature(tok[:strings.LastIndexByte(tok, '.')]))
				if _, err := v.Verify(context.Background(), forged); !errors.Is(err, BadSignature) {
					t.Errorf("forged under kid %s: %v", s.kid, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := len(v.headers.m); got > headerCacheEntries {
		t.Errorf("header cache holds %d entries, bound %d", got, headerCacheEntries)
	}
}

// TestVerifierDiscoversByDefault: with no KeySource the Verifier discovers
// keys from its issuer; an issuer that cannot be reached is KeysUnavailable.
func TestVerifierDiscoversByDefault(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	opts := testOptions(nil)
	opts.Issuer = "https://" + addr
	v := newVerifier(t, opts)
	if _, ok := v.keys.(*RemoteKeys); !ok {
		t.Fatalf("default key source is %T", v.keys)
	}
	tok := esSigner("es").sign(nil, goodClaims(map[string]any{"iss": opts.Issuer}))
	if _, err := v.Verify(context.Background(), tok); !errors.Is(err, KeysUnavailable) {
		t.Fatalf("unreachable issuer: %v", err)
	}
}
