// Package extend reads the user's own workflows from files, in the formats
// Claude Code reads (docs/reference/runtime.md, "Subagents, commands and
// skills"): subagent definitions (agents/*.md), custom slash commands
// (commands/**/*.md) and skills (skills/<name>/SKILL.md), from .agent/ and
// .compat/ in the workspace and the home folder (and .agents/skills), each
// a Markdown body after a small front matter ([ParseFrontMatter]: scalars,
// quoted strings, lists, inline lists, block scalars). A file with a
// problem is reported with its path and line and listed, never dropped
// silently. Command and skill bodies are read when used, so discovering
// hundreds of them costs only their front matter.
//
// Imports: the standard library and agent/internal/*.
package extend
