//go:build !unix

package mcp

import (
	"os"
	"os/exec"
)

var (
	sigTerm = os.Interrupt
	sigKill = os.Kill
)

func setProcessGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, sig os.Signal) {
	if sig == os.Kill {
		cmd.Process.Kill() //nolint:errcheck // best effort
		return
	}
	cmd.Process.Signal(sig) //nolint:errcheck // best effort
}
