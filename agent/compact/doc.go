// Package compact keeps a long conversation inside the model's context
// window (docs/reference/runtime.md, "Context management"). It holds the
// parts that depend only on their inputs, so that each can be tested and
// measured alone:
//
//   - accounting: [Estimate] turns what was sent into tokens (UTF-8 bytes
//     / 4, with a 4/3 safety factor) where no usage was reported yet;
//   - limits: [Limits] and [Threshold], the arithmetic of when to compact;
//   - the cheap pass: [ClearOldResults] replaces the bodies of old tool
//     results with a line that says how to get them again;
//   - the summary: [SplitPoint] chooses the turns kept whole,
//     [SummaryRequest] builds a request that always fits, and
//     [SummaryMessage] and [Rebuild] make the history that follows it;
//   - the pairing check: [Pair] gives every tool call exactly one result
//     right after it, whatever history it is given.
//
// The runtime (package agent) decides when to compact and makes the model
// call; nothing here blocks or does I/O.
//
// Imports: the standard library, agent/providers (the message types) and
// agent/internal/*.
package compact
