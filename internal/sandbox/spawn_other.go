//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"io"
	"os"
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

type helperStart struct {
	cmd   *exec.Cmd
	early *Early
}

func prepareHelper(*exec.Cmd, *Policy) (*helperStart, error) {
	return nil, errors.New("the sandbox needs Linux")
}

func describe(*Policy, *exec.Cmd) error { return errors.New("the sandbox needs Linux") }

func (*helperStart) spawn() error { return errors.New("the sandbox needs Linux") }

func (*helperStart) handOver(*Policy) error { return errors.New("the sandbox needs Linux") }

// Early is nothing off Linux.
type Early struct{ state *os.ProcessState }

// AdoptEarly adopts nothing off Linux.
func AdoptEarly(context.Context, io.Writer) *Early { return nil }

func (*Early) take(*Policy) *helperStart { return nil }

func (*Early) discard() {}

func (*Early) release() {}

func (*Early) wait() error { return errors.New("the sandbox needs Linux") }

// Close does nothing off Linux.
func (*Early) Close() {}

// EndEarly does nothing off Linux.
func EndEarly() {}
