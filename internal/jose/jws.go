package jose

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

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

	signingInput []byte // ASCII(BASE64URL(header) '.' BASE64URL(payload)), RFC 7515 §5.2
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
	if !inAlphabet(s) {
		return nil, false
	}
	b, err := strictB64.DecodeString(s)
	return b, err == nil
}

func inAlphabet[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if !b64Alphabet[s[i]] {
			return false
		}
	}
	return true
}

// decodeInto decodes src into the front of dst and returns the decoded bytes
// (capacity-capped, so appending never reaches the next segment) and the
// rest of dst.
func decodeInto(dst, src []byte) (seg, rest []byte, ok bool) {
	if !inAlphabet(src) {
		return nil, nil, false
	}
	n, err := strictB64.Decode(dst, src)
	if err != nil {
		return nil, nil, false
	}
	return dst[:n:n], dst[n:], true
}

// refusedHeaders are header parameters this package never honours: crit
// (RFC 7515 §4.1.11: extensions we do not understand must make the JWS
// invalid, and we understand none), b64 (RFC 7797, only meaningful under
// crit), and every way for a token to name its own key — jku, x5u, jwk and
// x5c (RFC 7515 §4.1.2–4.1.6) — since keys come only from the issuer's
// published set (docs/reference/mcp.md, "Access-token verification").
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
func ParseCompact(token string) (*JWS, error) { return parseCompact(token, nil) }

// parseCompact is ParseCompact with an optional cache of headers.
func parseCompact(token string, cache *headerCache) (*JWS, error) {
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
	hdr, cached := cache.get(h)
	// One buffer holds a copy of the token (the signing input is its
	// front) and the decoded segments after it.
	n := len(token)
	size := n + strictB64.DecodedLen(len(p)) + strictB64.DecodedLen(len(s))
	if !cached {
		size += strictB64.DecodedLen(len(h))
	}
	buf := make([]byte, size)
	copy(buf, token)
	free := buf[n:]
	if !cached {
		var hb []byte
		if hb, free, ok = decodeInto(free, buf[:len(h)]); !ok {
			return nil, refuse(Malformed, "header is not unpadded base64url")
		}
		var err error
		if hdr, err = parseHeader(hb); err != nil {
			return nil, err
		}
		cache.put(h, hdr)
	}
	payload, free, ok := decodeInto(free, buf[len(h)+1:len(h)+1+len(p)])
	if !ok {
		return nil, refuse(Malformed, "payload is not unpadded base64url")
	}
	sig, _, ok := decodeInto(free, buf[len(h)+1+len(p)+1:n])
	if !ok {
		return nil, refuse(Malformed, "signature is not unpadded base64url")
	}
	in := len(h) + 1 + len(p)
	return &JWS{Algorithm: hdr.alg, KeyID: hdr.kid, Type: hdr.typ, Header: hdr.raw,
		Payload: payload, signingInput: buf[:in:in], signature: sig}, nil
}

// header is what this package reads from a protected header.
type header struct {
	alg, kid, typ string
	raw           *strictjson.Value
}

func parseHeader(b []byte) (header, error) {
	raw, err := strictjson.Parse(b, headerJSON)
	if err != nil {
		return header{}, jsonRefusal("header", err)
	}
	if raw.Kind != strictjson.Object {
		return header{}, refuse(Malformed, "header is not a JSON object")
	}
	h := header{raw: raw}
	for _, m := range raw.Members {
		var dst *string
		switch m.Key {
		case "alg":
			dst = &h.alg
		case "kid":
			dst = &h.kid
		case "typ":
			dst = &h.typ
		case "crit", "b64", "jku", "x5u", "jwk", "x5c": // refusedHeaders
			return header{}, refuse(Malformed, "header "+m.Key+" is not accepted")
		default:
			if n := variantOf(m.Key, headerNames); n != "" {
				return header{}, refuse(Malformed, "header has a case variant of "+n)
			}
			continue
		}
		if m.Value.Kind != strictjson.String {
			return header{}, refuse(Malformed, "header "+m.Key+" is not a string")
		}
		*dst = m.Value.Str
	}
	if h.alg == "" {
		return header{}, refuse(Malformed, "header alg missing or empty")
	}
	return h, nil
}

// headerCache remembers protected headers that parsed: an issuer signs its
// tokens under a handful of headers, so a Verifier need not decode and
// parse the same one for every token. It is bounded, and a hostile stream
// of distinct headers only costs it its hits. Safe for concurrent use; a
// nil *headerCache caches nothing. Cached trees are shared and read-only.
type headerCache struct {
	mu sync.RWMutex
	m  map[string]header
}

const (
	headerCacheEntries = 64
	headerCacheMaxLen  = 512 // longer header segments are not cached
)

func (c *headerCache) get(seg string) (header, bool) {
	if c == nil {
		return header{}, false
	}
	c.mu.RLock()
	h, ok := c.m[seg]
	c.mu.RUnlock()
	return h, ok
}

func (c *headerCache) put(seg string, h header) {
	if c == nil || len(seg) > headerCacheMaxLen {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]header, headerCacheEntries)
	}
	if len(c.m) >= headerCacheEntries {
		for k := range c.m { // evict one, in map order
			delete(c.m, k)
			break
		}
	}
	// Clone: seg is a slice of the token, which the map must not pin.
	c.m[strings.Clone(seg)] = h
}

// VerifySignature checks the signature with key. The token's alg must be
// the key's algorithm: the key decides, never the token alone
// (RFC 8725 §3.1; docs/reference/mcp.md, "Access-token verification").
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

// jsonRefusal reports a header or claims set that strictjson refused. Only
// the position is kept: strictjson's message quotes the offending text, and
// refusals must not carry token content (see Error).
func jsonRefusal(what string, err error) *Error {
	var se *strictjson.SyntaxError
	if errors.As(err, &se) {
		return refuse(Malformed, fmt.Sprintf("%s is not strict JSON (line %d, column %d)", what, se.Line, se.Col))
	}
	return refuse(Malformed, what+" is not strict JSON")
}

// variantOf returns the name in names that key equals but for case, or "".
// key must not be one of names itself. strings.EqualFold also folds U+212A
// KELVIN SIGN to k and U+017F LATIN SMALL LETTER LONG S to s, as
// encoding/json does.
func variantOf(key string, names []string) string {
	for _, n := range names {
		if strings.EqualFold(key, n) {
			return n
		}
	}
	return ""
}

// caseVariant returns the first of names that obj holds under a key equal
// to it but for case, or "".
func caseVariant(obj *strictjson.Value, names []string) string {
	for _, m := range obj.Members {
		// The names differ from each other even under folding, so a key
		// that is one of them exactly is no variant of another.
		if !slices.Contains(names, m.Key) {
			if n := variantOf(m.Key, names); n != "" {
				return n
			}
		}
	}
	return ""
}
