package agent

// InitTools are the tools of an /init turn: the read-only ones to learn
// the repository, and Write and Edit for AGENTS.md, which go through the
// permission prompt like any write (docs/reference/runtime.md, "System
// prompt and instruction files").
var InitTools = []string{"Read", "Glob", "Grep", "Write", "Edit"}

// initPrompt asks the model to write or improve AGENTS.md: what a
// newcomer (or a model) needs to work in this repository and cannot see in
// one file.
const initPrompt = `Write or improve the file AGENTS.md at the root of this workspace: the instructions an agent (or a new developer) needs to work in this repository.

First learn the repository: read the existing AGENTS.md, CLAUDE.md and README files if there are any, the build files (go.mod, package.json, Makefile, Cargo.toml, pyproject.toml and the like), the CI configuration, and enough of the code to see how it is organised. Use Glob and Grep to find things; do not guess.

AGENTS.md should hold, concisely:
- the exact commands to build, to run all tests, to run one test, and to lint or format, as they work in this repository;
- the architecture that takes several files to see: the main parts, how a request or a change flows through them, where to add a typical feature;
- the rules that are not obvious from the code: conventions, constraints, things that break easily, generated files not to edit.
Leave out what any developer knows and what one file shows at a glance. Keep it under about 150 lines. If AGENTS.md exists, keep what is still true, fix what is wrong, add what is missing; edit it rather than rewrite it. Then say in two or three sentences what you wrote.`

// InitRequest is the turn of /init.
func InitRequest() TurnRequest {
	return TurnRequest{Prompt: initPrompt, Tools: InitTools, Display: "/init: write or improve AGENTS.md"}
}
