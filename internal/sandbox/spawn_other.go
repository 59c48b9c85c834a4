//go:build !linux

package sandbox

import (
	"errors"
	"os/exec"
	"runtime"
)

// Off Linux the kernel offers nothing this package can use: the sandbox
// degrades (docs/sandbox.md, "Degrading").

// Detect reports that nothing is available.
func Detect() Support {
	return Support{Arch: runtime.GOARCH, NamespacesKnown: true, NamespaceErr: "not on Linux"}
}

func warmProcessStart() {}

// NoUserNamespace is false off Linux.
func NoUserNamespace() bool { return false }

func namespacesRefused() string { return "not on Linux" }

func namespacesLearned(bool, string) {}

type helperStart struct{}

func prepareHelper(*exec.Cmd, *Policy) (*helperStart, error) {
	return nil, errors.New("the sandbox needs Linux")
}

func (*helperStart) spawn() error { return errors.New("the sandbox needs Linux") }

func (*helperStart) handOver() error { return errors.New("the sandbox needs Linux") }
