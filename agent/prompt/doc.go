// Package prompt builds what the model is told besides the conversation
// (docs/reference/runtime.md, "System prompt and instruction files"):
//
//   - the system prompt ([SystemPrompt]): the [Static] part (or the
//     user's replacement), the environment block ([Environment], with
//     [DetectHost] for the machine's facts), then appended [Section]s (the
//     user's appendSystemPrompt, MCP servers' instructions);
//   - the context message ([ContextMessage]), the first user-role message:
//     the instruction files and the git snapshot ([TakeGitSnapshot]);
//   - the instruction files ([Loader]): the walk from the repository root
//     ([FindGitRoot]) down to the workspace, the user's own files, the
//     files of folders below the workspace attached as tools reach them
//     ([Loader.Attach], [AttachmentText]), @path imports ([ScanImports]),
//     the limits, and a [Diagnostic] for every file that is not loaded.
//
// Detection (files, git) is apart from formatting, which depends only on
// its inputs. Nothing here fails a session's start: a problem is a
// diagnostic or an absent part.
//
// Imports: the standard library, agent/config and agent/internal/*; never
// agent, which calls this package, nor mcp, providers or tui. Every file is
// opened with securefile.Open, so a FIFO never blocks.
package prompt
