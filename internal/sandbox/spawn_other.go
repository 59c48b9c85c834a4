//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
)

// Off Linux the kernel offers nothing this package can use: the sandbox
// degrades (docs/sandbox.md, "Degrading").

// Detect reports that nothing is available.
func Detect() Support {
	return Support{Arch: runtime.GOARCH, NamespacesKnown: true, NamespaceErr: "not on Linux"}
}

func namespacesRefused() string { return "not on Linux" }

func namespacesLearned(bool, string) {}

// SetupError is a failure of the sandbox before the command ran.
type SetupError struct {
	Stage string
	Err   error
}

func (e *SetupError) Error() string {
	return fmt.Sprintf("sandbox setup failed (%s): %v; the command did not run", e.Stage, e.Err)
}
func (e *SetupError) Unwrap() error        { return e.Err }
func (e *SetupError) Is(target error) bool { return target == ErrSetup }

// ErrSetup matches every SetupError.
var ErrSetup = errors.New("sandbox setup failed")

var errNamespaces = errors.New("namespaces unavailable")

// CommandError: the command itself could not be started.
type CommandError struct{ Err error }

func (e *CommandError) Error() string { return e.Err.Error() }
func (e *CommandError) Unwrap() error { return e.Err }

type helperStart struct{}

func prepareHelper(*exec.Cmd, *Policy) (*helperStart, error) {
	return nil, errors.New("the sandbox needs Linux")
}

func (*helperStart) start() error { return errors.New("the sandbox needs Linux") }
