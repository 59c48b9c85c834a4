package jose

import (
	"encoding/base64"
	"strings"

	"agent/internal/strictjson"
)

// JWS is a parsed, unverified JWS in compact serialisation (RFC 7515 §7.1).
// It is what ParseCompact returns; nothing in it is trusted until
// VerifySignature succeeds.
type JWS struct {
	Algorithm string            // the alg header as written
	KeyID     string            // kid, "" when absent
	Type      string            // typ, "" when absent
	Header    *strictjson.Value // the whole protected header
	Payload   []byte

	signingInput string // ASCII(BASE64URL(header) '.' BASE64URL(payload)), RFC 7515 §5.2
	signature    []byte
}

// headerJSON bounds the header and claims documents. A token is already
// capped in size; the depth cap keeps a hostile nesting from costing stack.
var headerJSON = strictjson.Options{MaxDepth: 16}

// strictB64 refuses padding, and non-zero trailing bits (RFC 7515 §2 and
// Appendix C: base64url without padding; a second encoding of the same bytes
// would make the signed text malleable).
var strictB64 = base64.RawURLEncoding.Strict()

// b64Alphabet marks the base64url characters. The encoding/base64 decoder
// skips CR and LF, which the compact form does not allow, so every byte is
// checked against the alphabet first.
var b64Alphabet = func() (t [256]bool) {
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" {
		t[c] = true
	}
	return t
}()

func decodeSegment(s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if !b64Alphabet[s[i]] {
			return nil, false
		}
	}
	b, err := strictB64.DecodeString(s)
	return b, err == nil
}

// refusedHeaders are header parameters this package never honours:
// crit (RFC 7515 §4.1.11: extensions we do not understand must make the JWS
// invalid, and we understand none), b64 (RFC 7797, only meaningful under
// crit), and every way for a token to name its own key — jku, x5u, jwk and
// x5c (RFC 7515 §4.1.2–4.1.6) — since keys come only from the issuer's
// published set (decisions.md §3).
var refusedHeaders = []string{"crit", "b64", "jku", "x5u", "jwk", "x5c"}

// headerNames are the names read or refused above. A key that matches one
// of them but for case ("Alg", "JWK") is refused: RFC 7515 names are
// case-sensitive, but a peer that compares them loosely would read a
// different header than we do.
var headerNames = append([]string{"alg", "kid", "typ"}, refusedHeaders...)

// ParseCompact parses a JWS in compact serialisation without verifying it:
// exactly three segments, each unpadded base64url, a protected header that
// is a strict JSON object (duplicate keys refused) with a string alg, and no
// header this package refuses. The payload and signature may be empty here;
// verification refuses them later. Every error is an *Error with Reason
// Malformed.
func ParseCompact(token string) (*JWS, error) {
	h, rest, ok := strings.Cut(token, ".")
	if !ok {
		return nil, refuse(Malformed, "not three segments")
	}
	p, s, ok := strings.Cut(rest, ".")
	if !ok || strings.IndexByte(s, '.') >= 0 {
		return nil, refuse(Malformed, "not three segments")
	}
	if h == "" {
		return nil, refuse(Malformed, "empty header")
	}
	hb, ok := decodeSegment(h)
	if !ok {
		return nil, refuse(Malformed, "header is not unpadded base64url")
	}
	payload, ok := decodeSegment(p)
	if !ok {
		return nil, refuse(Malformed, "payload is not unpadded base64url")
	}
	sig, ok := decodeSegment(s)
	if !ok {
		return nil, refuse(Malformed, "signature is not unpadded base64url")
	}
	header, err := strictjson.Parse(hb, headerJSON)
	if err != nil {
		return nil, &Error{Reason: Malformed, Msg: "header is not strict JSON", Err: err}
	}
	if header.Kind != strictjson.Object {
		return nil, refuse(Malformed, "header is not a JSON object")
	}
	if m := caseVariant(header, headerNames); m != "" {
		return nil, refuse(Malformed, "header has a case variant of "+m)
	}
	for _, name := range refusedHeaders {
		if header.Get(name) != nil {
			return nil, refuse(Malformed, "header "+name+" is not accepted")
		}
	}
	j := &JWS{Header: header, Payload: payload, signingInput: token[:len(h)+1+len(p)], signature: sig}
	alg := header.Get("alg")
	if alg == nil || alg.Kind != strictjson.String || alg.Str == "" {
		return nil, refuse(Malformed, "header alg missing or not a string")
	}
	j.Algorithm = alg.Str
	if j.KeyID, ok = optionalString(header, "kid"); !ok {
		return nil, refuse(Malformed, "header kid is not a string")
	}
	if j.Type, ok = optionalString(header, "typ"); !ok {
		return nil, refuse(Malformed, "header typ is not a string")
	}
	return j, nil
}

// VerifySignature checks the signature with key. The token's alg must be
// the key's algorithm: the key decides, never the token alone (RFC 8725
// §3.1; decisions.md §3).
func (j *JWS) VerifySignature(key *Key) error {
	if Algorithm(j.Algorithm) != key.alg {
		return refuse(UnsupportedAlgorithm, "alg does not match the key")
	}
	if !key.verify(j.signingInput, j.signature) {
		return refuse(BadSignature, "")
	}
	return nil
}

// optionalString reads a member that must be a string when present.
func optionalString(obj *strictjson.Value, key string) (string, bool) {
	v := obj.Get(key)
	if v == nil {
		return "", true
	}
	if v.Kind != strictjson.String {
		return "", false
	}
	return v.Str, true
}

// caseVariant returns the first of names that obj holds under a key equal
// to it but for case, or "".
func caseVariant(obj *strictjson.Value, names []string) string {
	for _, m := range obj.Members {
		for _, n := range names {
			// EqualFold also folds U+212A KELVIN SIGN to k, as encoding/json does.
			if m.Key != n && strings.EqualFold(m.Key, n) {
				return n
			}
		}
	}
	return ""
}
