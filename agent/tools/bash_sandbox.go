package tools

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"agent/internal/sandbox"
)

// BashSandbox confines the Bash tool's commands (docs/sandbox.md): the
// session's box, the profile its commands run with, and what the settings
// say about leaving it.
type BashSandbox struct {
	Box     *sandbox.Box
	Profile sandbox.Profile
	// Excluded are commands that run unconfined (excludedCommands): an
	// entry matches the command exactly, or as a prefix of words when it
	// ends in " *" or ":*".
	Excluded []string
	// Escalation offers the model sandbox: "escalate"
	// (allowUnsandboxedCommands).
	Escalation bool
	// FailIfUnavailable refuses to run a command when the kernel gives no
	// file-system confinement.
	FailIfUnavailable bool
}

// bashEscalationSchema is the Bash schema with the escalation of
// docs/sandbox.md, "Escalation".
const bashEscalationSchema = `{"type":"object","properties":{` +
	`"command":{"type":"string","minLength":1,"description":"The shell command to run in the workspace"},` +
	`"timeout":{"type":"integer","minimum":1,"maximum":600000,"description":"Time limit in milliseconds (default 120000, at most 600000)"},` +
	`"description":{"type":"string","description":"A few words on what the command does, shown to the user"},` +
	`"sandbox":{"type":"string","enum":["escalate"],"description":"Ask the user to run this one command with more than the sandbox allows; only after the sandbox refused something the task needs"},` +
	`"justification":{"type":"string","minLength":1,"description":"With sandbox: why the command needs it, shown to the user"},` +
	`"needs":{"type":"string","pattern":"^(network|write:/.*)$","description":"With sandbox: what it needs, the narrowest: \"network\", or \"write:/absolute/path\" for one more writable path"}},` +
	`"required":["command"],"additionalProperties":false}`

func (t *bashTool) confining() bool { return t.sb != nil && t.sb.Profile.Confines() }

// describe tells the model what the sandbox allows and how to ask for
// more.
func (sb *BashSandbox) describe() string {
	p := sb.Profile
	what := "commands may write only the workspace and a private temporary folder ($TMPDIR)"
	if p.Mode == sandbox.ReadOnly {
		what = "commands may write only a private temporary folder ($TMPDIR)"
	}
	net := "have no network"
	switch p.Network {
	case sandbox.NetHost:
		net = "have the network"
	case sandbox.NetLoopback:
		net = "have only a loopback network of their own"
	}
	s := fmt.Sprintf("Commands run in a sandbox (mode %s): %s, cannot read credentials such as ~/.ssh, and %s; "+
		"changes to git hooks, .git/config program keys, .vscode/ and similar protected paths are undone. "+
		"A refused operation is named at the end of the result.", p.Mode, what, net)
	if sb.Escalation {
		s += ` If the task truly needs more, call Bash again with sandbox: "escalate", a justification, and needs: "network" or "write:/absolute/path"; the user is asked each time.`
	}
	return s
}

// excluded reports whether a command runs unconfined by excludedCommands.
func (sb *BashSandbox) excluded(cmd string) bool {
	cmd = strings.TrimSpace(cmd)
	for _, e := range sb.Excluded {
		e = strings.TrimSpace(e)
		prefix, wild := strings.CutSuffix(e, ":*")
		if !wild {
			prefix, wild = strings.CutSuffix(e, " *")
		}
		switch {
		case !wild && cmd == e:
			return true
		case wild && (cmd == prefix || strings.HasPrefix(cmd, prefix+" ")):
			return true
		}
	}
	return false
}

// checkEscalation validates what an escalating call asks for.
func (sb *BashSandbox) checkEscalation(a bashArgs) (string, error) {
	if !sb.Escalation {
		return "", badArgs("leaving the sandbox is switched off here (allowUnsandboxedCommands is false)")
	}
	if strings.TrimSpace(a.Justification) == "" {
		return "", badArgs(`sandbox: "escalate" needs a justification`)
	}
	switch {
	case a.Needs == "network":
		if sb.Profile.Network == sandbox.NetHost {
			return "", badArgs("the sandbox allows the network already; run the command without escalating")
		}
	case strings.HasPrefix(a.Needs, "write:"):
		p := strings.TrimPrefix(a.Needs, "write:")
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return "", badArgs("needs: %q must name a clean absolute path after write:", a.Needs)
		}
		if _, err := os.Stat(p); err != nil {
			return "", badArgs("needs: %s does not exist; ask for the folder it would go in", p)
		}
	default:
		return "", badArgs(`needs must be "network" or "write:/absolute/path"`)
	}
	return a.Needs, nil
}

// runConfined runs a command through the sandbox. An allowed escalation
// runs with what it asked for added to the profile, and nothing else.
func (t *bashTool) runConfined(call *bashCall, a bashArgs, build func() *exec.Cmd) Result {
	sb := t.sb
	if !sb.Box.Support().Filesystem() && sb.FailIfUnavailable {
		return errorResult("[the command was not run: the sandbox is enabled with failIfUnavailable, and this kernel gives no file-system confinement (no Landlock; see 'agent sandbox check')]")
	}
	prof := sb.Profile
	needs := ""
	if a.Sandbox == "escalate" {
		// The permission check asked the user: the call runs only when
		// it was allowed (docs/sandbox.md, "Escalation").
		n, err := sb.checkEscalation(a)
		if err != nil {
			return errorResult("%v", err)
		}
		needs = n
		if needs == "network" {
			prof.Network = sandbox.NetHost
		} else {
			prof.Write = append(append([]string(nil), prof.Write...), strings.TrimPrefix(needs, "write:"))
		}
	}
	run, err := sb.Box.Start(build, sandbox.Request{Label: "Bash", Command: a.Command, Profile: prof, Escalation: needs, Guard: prof.Mode == sandbox.WorkspaceWrite || needs != ""})
	var setup *sandbox.SetupError
	var cerr *sandbox.CommandError
	switch {
	case errors.As(err, &setup):
		return errorResult("[%v. It is not run outside the sandbox in its place; 'agent sandbox check' shows what this machine supports.]", setup)
	case errors.As(err, &cerr):
		return errorResult("could not start %s: %v", t.shell, cerr)
	case err != nil:
		return errorResult("could not start %s: %v", t.shell, err)
	}
	err = run.Cmd.Wait()
	rep := run.Finish(run.Cmd.ProcessState, call.out.String())
	return t.result(call, run.Cmd, err, rep.Lines())
}
