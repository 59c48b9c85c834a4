package jose

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// vectorAlg reads a vector token's alg with encoding/json, independently of
// the code under test; "" when the header cannot be read.
func vectorAlg(token string) string {
	h, _, ok := strings.Cut(token, ".")
	if !ok {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		return ""
	}
	var hdr struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(b, &hdr) != nil {
		return ""
	}
	return hdr.Alg
}

func ours(alg string) bool { return algIndex(Algorithm(alg)) >= 0 }

// vectorToken returns a vector's jws, which is a string for the compact
// form and an object for the JSON serialisation (which must be refused).
func vectorToken(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// checkSignature runs the signature path of Verify: parse, key selection
// from set, signature. It returns nil when the token would pass it.
func checkSignature(token string, set KeySource) error {
	j, err := ParseCompact(token)
	if err != nil {
		return err
	}
	if !ours(j.Algorithm) {
		return refuse(UnsupportedAlgorithm, "")
	}
	k, err := set.Key(context.Background(), j.KeyID, Algorithm(j.Algorithm))
	if err != nil {
		return err
	}
	return j.VerifySignature(k)
}

// checkAlgorithmGate checks that a Verifier refuses token as
// UnsupportedAlgorithm when its alg is not allowed: every algorithm outside
// ours, and each of ours when the caller's subset leaves it out.
func checkAlgorithmGate(t *testing.T, name, token string, set KeySource) {
	t.Helper()
	alg := vectorAlg(token)
	if alg == "" {
		return
	}
	if _, err := ParseCompact(token); err != nil {
		return // refused earlier as Malformed
	}
	var allowed []Algorithm
	for _, a := range Algorithms() {
		if string(a) != alg {
			allowed = append(allowed, a)
		}
	}
	opts := testOptions(set)
	opts.Algorithms = allowed
	_, err := newVerifier(t, opts).Verify(context.Background(), token)
	if !errors.Is(err, UnsupportedAlgorithm) {
		t.Errorf("%s: alg %s not allowed: got %v, want unsupported algorithm", name, alg, err)
	}
}

type wycheproofJWS struct {
	NumberOfTests int `json:"numberOfTests"`
	TestGroups    []struct {
		Comment string          `json:"comment"`
		Public  json.RawMessage `json:"public"`
		Private json.RawMessage `json:"private"`
		Tests   []struct {
			TcID    int             `json:"tcId"`
			Comment string          `json:"comment"`
			JWS     json.RawMessage `json:"jws"`
			Result  string          `json:"result"`
		} `json:"tests"`
	} `json:"testGroups"`
}

// TestWycheproofJWS: every case of json_web_signature_test.json. A case is
// accepted exactly when the file says valid and its alg is one of ours;
// valid cases in other algorithms (HS*, PS*, RS384, ES521...) are refused.
func TestWycheproofJWS(t *testing.T) {
	var f wycheproofJWS
	readJSON(t, "json_web_signature_test.json", &f)
	accepted := map[string]int{}
	total := 0
	for _, g := range f.TestGroups {
		keyJSON := g.Public
		if len(keyJSON) == 0 || string(keyJSON) == "null" {
			keyJSON = g.Private
		}
		set := NewKeySet()
		if k, err := ParseJWK(keyJSON); err == nil {
			set = NewKeySet(k)
		} else if !errors.Is(err, ErrUnusableKey) {
			t.Errorf("group %s: key: %v", g.Comment, err)
		}
		for _, tc := range g.Tests {
			total++
			token := vectorToken(tc.JWS)
			name := g.Comment + "/" + tc.Comment
			want := tc.Result == "valid" && ours(vectorAlg(token))
			err := checkSignature(token, set)
			if got := err == nil; got != want {
				t.Errorf("tcId %d %s: accepted=%v want %v (file: %s): %v", tc.TcID, name, got, want, tc.Result, err)
			}
			if err == nil {
				accepted[vectorAlg(token)]++
			}
			checkAlgorithmGate(t, name, token, set)
		}
	}
	t.Logf("%d cases; accepted per alg: %v", total, accepted)
	checkCount(t, "json_web_signature_test.json", total, f.NumberOfTests)
	for _, a := range []string{"RS256", "ES256"} {
		if accepted[a] == 0 {
			t.Errorf("no %s case accepted", a)
		}
	}
}

// TestWycheproofJWK: every case of json_web_key_test.json, with the
// group's key set parsed as a JWKS (the public set when given, else the
// private one, whose keys must all be refused).
func TestWycheproofJWK(t *testing.T) {
	var f wycheproofJWS
	readJSON(t, "json_web_key_test.json", &f)
	total := 0
	defer func() { checkCount(t, "json_web_key_test.json", total, f.NumberOfTests) }()
	for _, g := range f.TestGroups {
		keyJSON := g.Public
		if len(keyJSON) == 0 || string(keyJSON) == "null" {
			keyJSON = g.Private
		}
		set, err := ParseJWKS(keyJSON)
		if err != nil {
			t.Errorf("group %s: %v", g.Comment, err)
			continue
		}
		for _, tc := range g.Tests {
			total++
			token := vectorToken(tc.JWS)
			want := tc.Result == "valid" && ours(vectorAlg(token))
			err := checkSignature(token, set)
			if got := err == nil; got != want {
				t.Errorf("tcId %d %s/%s: accepted=%v want %v (file: %s): %v; skipped keys: %v",
					tc.TcID, g.Comment, tc.Comment, got, want, tc.Result, err, set.Skipped())
			}
			checkAlgorithmGate(t, g.Comment+"/"+tc.Comment, token, set)
		}
	}
}

type wycheproofSig struct {
	NumberOfTests int `json:"numberOfTests"`
	TestGroups    []struct {
		PublicKeyJwk json.RawMessage `json:"publicKeyJwk"`
		KeyJwk       json.RawMessage `json:"keyJwk"`
		PublicKey    struct {
			Uncompressed string `json:"uncompressed"`
		} `json:"publicKey"`
		Tests []struct {
			TcID    int      `json:"tcId"`
			Comment string   `json:"comment"`
			Msg     string   `json:"msg"`
			Sig     string   `json:"sig"`
			Result  string   `json:"result"`
			Flags   []string `json:"flags"`
		} `json:"tests"`
	} `json:"testGroups"`
}

// TestWycheproofSignatures: the raw signature vectors for ES256 (P1363
// form), EdDSA and RS256, each key given as the file's JWK.
func TestWycheproofSignatures(t *testing.T) {
	for _, file := range []string{
		"ecdsa_secp256r1_sha256_p1363_test.json",
		"ed25519_test.json",
		"rsa_signature_2048_sha256_test.json",
	} {
		t.Run(file, func(t *testing.T) {
			var f wycheproofSig
			readJSON(t, file, &f)
			n := 0
			for gi, g := range f.TestGroups {
				jwk := g.PublicKeyJwk
				if len(jwk) == 0 {
					jwk = g.KeyJwk
				}
				if len(jwk) == 0 {
					// A few ECDSA groups give only the point: the same key
					// as a JWK, so it goes through ParseJWK like the rest.
					pt, err := hex.DecodeString(g.PublicKey.Uncompressed)
					if err != nil || len(pt) != 65 {
						t.Fatalf("group %d: no JWK and no uncompressed point", gi)
					}
					jwk = json.RawMessage(mustJSON(map[string]string{"kty": "EC", "crv": "P-256",
						"x": base64.RawURLEncoding.EncodeToString(pt[1:33]),
						"y": base64.RawURLEncoding.EncodeToString(pt[33:])}))
				}
				key, err := ParseJWK(jwk)
				if err != nil {
					// Every key in these files is a sound key of our kind.
					t.Errorf("group %d: key refused: %v", gi, err)
					continue
				}
				for _, tc := range g.Tests {
					n++
					msg, err1 := hex.DecodeString(tc.Msg)
					sig, err2 := hex.DecodeString(tc.Sig)
					if err1 != nil || err2 != nil {
						t.Fatalf("tcId %d: bad hex", tc.TcID)
					}
					got := key.verify(msg, sig)
					switch tc.Result {
					case "valid", "invalid":
						if want := tc.Result == "valid"; got != want {
							t.Errorf("tcId %d (%s %v): verified=%v, file says %s", tc.TcID, tc.Comment, tc.Flags, got, tc.Result)
						}
					default: // "acceptable": either verdict is allowed
						t.Logf("tcId %d (%s %v): acceptable, verified=%v", tc.TcID, tc.Comment, tc.Flags, got)
					}
				}
			}
			t.Logf("%d cases", n)
			checkCount(t, file, n, f.NumberOfTests)
		})
	}
}

// TestRFCVectors: the RFC 7515, 7520 and 8037 examples and their derived
// negative cases.
func TestRFCVectors(t *testing.T) {
	var f struct {
		Vectors []struct {
			Name   string          `json:"name"`
			JWK    json.RawMessage `json:"jwk"`
			JWS    string          `json:"jws"`
			Result string          `json:"result"`
		} `json:"vectors"`
	}
	readJSON(t, "rfc_jws_vectors.json", &f)
	if len(f.Vectors) < 10 {
		t.Fatalf("rfc_jws_vectors.json: %d vectors read, the file holds 10", len(f.Vectors))
	}
	for _, v := range f.Vectors {
		key, err := ParseJWK(v.JWK)
		if err != nil {
			t.Errorf("%s: key: %v", v.Name, err)
			continue
		}
		set := NewKeySet(key)
		err = checkSignature(v.JWS, set)
		if got, want := err == nil, v.Result == "valid"; got != want {
			t.Errorf("%s: accepted=%v, file says %s: %v", v.Name, got, v.Result, err)
		}
		checkAlgorithmGate(t, v.Name, v.JWS, set)
		// None of them is an access token (no typ at+jwt; A.2 and A.3
		// expired in 2011): the full check refuses each.
		if _, err := newVerifier(t, testOptions(set)).Verify(context.Background(), v.JWS); err == nil {
			t.Errorf("%s: Verify accepted a token that is no access token", v.Name)
		}
	}
}

// checkCount fails when a vector file's cases did not all run: a case
// silently skipped (a group whose key failed to parse, a renamed field)
// would otherwise pass as "nothing wrong".
func checkCount(t *testing.T, file string, ran, declared int) {
	t.Helper()
	if declared == 0 || ran != declared {
		t.Errorf("%s: %d cases run, the file declares %d", file, ran, declared)
	}
}

// TestVectorFilesAllRead: every vector file in testdata is read by one of
// the tests above, so a copied file cannot sit unused.
func TestVectorFilesAllRead(t *testing.T) {
	used := map[string]bool{
		"json_web_signature_test.json":           true,
		"json_web_key_test.json":                 true,
		"ecdsa_secp256r1_sha256_p1363_test.json": true,
		"ed25519_test.json":                      true,
		"rsa_signature_2048_sha256_test.json":    true,
		"rfc_jws_vectors.json":                   true,
	}
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") && !used[e.Name()] {
			t.Errorf("testdata/%s is read by no vector test", e.Name())
		}
	}
	for name := range used {
		if _, err := os.Stat(filepath.Join("testdata", name)); err != nil {
			t.Errorf("vector file missing: %v", err)
		}
	}
}
