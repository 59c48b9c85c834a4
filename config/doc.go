// Package config loads the settings files of seed-mcp-events.md §2.1 with
// their scopes and precedence, validates MCP server definitions (§2.2),
// header-helper allow lists (§2.3), the mcp timing keys (§2.4), the address
// allow list, permission rules, and the provider settings of cli.md, and
// keeps the workspace trust store.
//
// Loading never stops at the first problem: every problem becomes one
// Diagnostic naming the file and the JSONPath of the server or key, a file
// that is not valid JSON is reported with its line and column and skipped,
// and a server definition with problems is kept, marked refused, so that it
// is listed and never silently dropped (§2.2 rule 5).
//
// UpdateSettingsFile is the one writer of settings files (edit.go): every
// change (a permission rule allowed for the project, the first-run
// provider setup) is spliced into the file's text, so the user's keys keep
// their order and formatting, and the file is replaced atomically.
//
// Imports: the standard library and agent/internal/* only
// (architecture.md, import direction).
package config
