// Package events is the external-event endpoint: an outside system starts
// a turn in a running session by posting a small JSON message with an
// access token, and the session admits it only under a grant the user gave
// at start (seed-mcp-events.md §1 item 3, §2.7, §4.4, §4.5, §5.3, §6.1,
// §7.2, §8; decisions.md §4).
//
// The parts:
//
//   - Grant, ParseGrant, LoadGrants: the grant files, validated whole at
//     start; an error names the file and the field, never a value.
//   - Event, ParseEvent: the request body, strict JSON (pure).
//   - Server: the HTTP endpoint on 127.0.0.1. It runs the checks of
//     decisions.md §4 in their order, verifies tokens with internal/jose
//     against each grant, admits each (issuer, jti) once, counts the rate
//     windows, throttles addresses that keep failing, and hands admitted
//     events to a Target, the small interface through which the session
//     takes a turn. Revoke and Status serve `/events` and
//     `agent session events`.
//   - Auditor, AuditLog: one record per decision (JSON lines, 0600,
//     bounded), never the token, content, conversation id or claimed name.
//
// Imports: the standard library and internal/* only (architecture.md); the
// session is reached through Target, so this package does not import agent.
package events
