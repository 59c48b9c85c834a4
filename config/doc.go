// Package config loads the settings files with their scopes and precedence,
// validates MCP server definitions, header-helper allow lists, the mcp
// timing keys, the address allow list, permission rules, and the provider
// settings, and keeps the workspace trust store. What it reads and reports
// is described in docs/reference/settings.md.
//
// Loading never stops at the first problem: every problem becomes one
// Diagnostic naming the file and the JSONPath of the server or key, a file
// that is not valid JSON is reported with its line and column and skipped,
// and a server definition with problems is kept, marked refused, so that it
// is listed and never silently dropped (docs/reference/settings.md,
// "Diagnostics" and "mcpServers").
//
// UpdateSettingsFile is the one writer of settings files (edit.go): every
// change (a permission rule allowed for the project, the first-run
// provider setup) is spliced into the file's text, so the user's keys keep
// their order and formatting, and the file is replaced atomically.
//
// Imports: the standard library and agent/internal/* only (README.md, "A
// walk through the code").
package config
