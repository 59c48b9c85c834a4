// Package jose verifies OAuth access tokens that are JWTs (RFC 9068) signed
// as compact JWS (RFC 7515), with keys that the issuer publishes as a JWK
// Set (RFC 7517) found through its metadata (RFC 8414, then OpenID Connect
// discovery). It serves `agent mcp serve` in remote mode and the
// external-event endpoint (docs/reference/mcp.md, "Access-token
// verification"; docs/reference/events.md, "Tokens and single use").
//
// Only RS256, ES256 and EdDSA (Ed25519) are verified, and the key decides the
// algorithm. Every refusal is an *Error carrying a Reason that callers map
// to an HTTP status. The parts:
//
//   - ParseCompact and JWS: the strict compact form (pure).
//   - ParseJWK, ParseJWKS, Key, KeySet: keys and key selection (pure).
//   - Verifier: the whole check of a token against an Options policy.
//   - RemoteKeys: discovery and the key-set cache (the only I/O).
//   - SingleUse: the (issuer, jti) store that admits each token once.
//
// Imports: the standard library and internal/strictjson (README.md, "A walk
// through the code"; docs/design.md, "Pure leaves may import
// `internal/strictjson` and `internal/quote`").
package jose
