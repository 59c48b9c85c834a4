// Package events is the external-event endpoint: an outside system starts a
// turn in a running session by posting a small JSON message with an access
// token, and the session admits it only under a grant the user gave at
// start. What it does is described in docs/reference/events.md.
//
// The parts:
//
//   - Grant, ParseGrant, LoadGrants: the grant files, validated whole at
//     start; an error names the file and the field, never a value.
//   - Event, ParseEvent: the request body, strict JSON (pure).
//   - Server: the HTTP endpoint on 127.0.0.1. It runs the checks of
//     docs/reference/events.md, "Order of checks", in their order, verifies
//     tokens with internal/jose against each grant, admits each (issuer,
//     jti) once, counts the rate windows, throttles addresses that keep
//     failing, and hands admitted events to a Target, the small interface
//     through which the session takes a turn. Revoke and Status serve
//     `/events` and `agent session events`.
//   - Auditor, AuditLog: one record per decision (JSON lines, 0600,
//     bounded), never the token, content, conversation id or claimed name.
//
// Choices where the specification is silent (docs/reference/events.md,
// "Differences from the specification"):
//
//   - Bounds of a grant beyond the specification's, so that nothing a file
//     says can overflow or grow without limit: a rate window is at most 366
//     days and 100 000 turns; a scope is an RFC 6749 §3.3 scope token
//     (tokens carry scopes space-separated, so a scope with a space could
//     never match); subject and client are at most 1024 bytes without
//     control characters (they are shown by `/events`); URLs are at most
//     2048 bytes; the issuer has no query either (RFC 8414 §2).
//   - The failure throttle is the one of `mcp serve` (internal/throttle;
//     docs/reference/events.md, "Throttle"): after 20 refused requests
//     (400, 401, 403, 404, 405, 413) from one client within 60 s, its
//     further failing requests are answered 429 with Retry-After in place
//     of their refusal; a request whose token verifies for its grant is
//     never refused by it. A full rate window (429) and 503 do not count.
//     An IPv6 client counts by its /64.
//   - The method is checked (405) once the grant is known, before the
//     token; the grant's protected-resource metadata (RFC 9728) is served
//     to GET and HEAD at /.well-known/oauth-protected-resource<path>, for a
//     revoked grant too. 401 and 403 carry the Bearer challenge of
//     RFC 6750 §3 with resource_metadata.
//   - A token is spent when it passes step 7 of the check order (not used
//     before), even if the rate windows or the session then refuse the
//     event: the sender mints a new token to retry. A token refused for
//     its body (400) is not spent.
//   - The single-use store is shared by all grants; when it is full, new
//     tokens get 503.
//
// Imports: the standard library and internal/* only (README.md, "A walk
// through the code"); the session is reached through Target, so this
// package does not import agent.
package events
