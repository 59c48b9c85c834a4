//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup signals the server's process group (its pid, from Setpgid),
// so that a wrapper such as npx does not leave the real server running.
// It is only called while the process has not been reaped, so the group id
// cannot have been reused.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
		cmd.Process.Signal(sig) //nolint:errcheck // best effort; the caller waits and escalates
	}
}
