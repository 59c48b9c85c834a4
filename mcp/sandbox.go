package mcp

import (
	"os"
	"os/exec"
	"strings"

	"agent/config"
	"agent/internal/sandbox"
)

// Sandbox confines the processes MCP starts: stdio servers (started
// through an embedder's authority) and header helpers, each with its
// profile (docs/sandbox.md, "Profiles"; docs/reference/mcp.md, "Sandbox").
// A stdio server's profile comes from its definition and is part of its
// approval fingerprint.
type Sandbox struct {
	Box           *sandbox.Box
	ServerProfile func(d *config.ServerDef) sandbox.Profile
	HelperProfile func(h *config.HeaderHelper) sandbox.Profile
}

// confine sets so up to start a confined server (StdioOptions.Start) and
// to record its spawn, with how it ended, when it ends (Exited;
// docs/sandbox.md, "What is recorded").
func (sb *Sandbox) confine(d *config.ServerDef, so *StdioOptions) {
	prof := sb.ServerProfile(d)
	var run *sandbox.Run
	so.Start = func(build func() *exec.Cmd) (*exec.Cmd, error) {
		// The authority named the whole environment: only the private
		// folders are added.
		wrapped := func() *exec.Cmd {
			cmd := build()
			cmd.Env = sb.Box.PrivateEnv(cmd.Env)
			return cmd
		}
		r, err := sb.Box.Start(wrapped, sandbox.Request{Label: "mcp:" + d.Name, Profile: prof})
		if err != nil {
			return nil, err
		}
		run = r
		return r.Cmd, nil
	}
	so.Exited = func(st *os.ProcessState) {
		if run != nil {
			run.Finish(st, "")
		}
	}
}

// writesWorkspace reports whether a server's profile can change the
// workspace, so that its calls are followed by a check of the protected
// paths.
func (sb *Sandbox) writesWorkspace(d *config.ServerDef) bool {
	return sb != nil && d != nil && d.Type == "stdio" && sb.ServerProfile(d).Mode == sandbox.WorkspaceWrite
}

// guardCall runs a confined server's call between two looks at the
// protected paths (docs/sandbox.md, "Protected paths"), and says in the
// result what was restored.
func (sb *Sandbox) guardCall(server string, call func() (*CallToolResult, error)) (*CallToolResult, error) {
	var r *CallToolResult
	var err error
	rs := sb.Box.Guarded("mcp:"+server, func() { r, err = call() })
	if len(rs) > 0 && r != nil {
		parts := make([]string, len(rs))
		for i, x := range rs {
			parts[i] = x.String()
		}
		r.Content = append(r.Content, Content{Type: "text", Text: "[sandbox: the server changed protected paths, which were restored: " + strings.Join(parts, "; ") + "]"})
	}
	return r, err
}
