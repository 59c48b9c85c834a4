package sandbox

import (
	"errors"
	"fmt"
)

// SetupError is a failure of the sandbox before the command ran: the
// command did not run, and is not run unconfined in its place
// (docs/sandbox.md, "How").
type SetupError struct {
	Stage string
	Err   error
}

func (e *SetupError) Error() string {
	return fmt.Sprintf("sandbox setup failed (%s): %v; the command did not run", e.Stage, e.Err)
}
func (e *SetupError) Unwrap() error { return e.Err }

// ErrSetup matches every SetupError (errors.Is).
var ErrSetup = errors.New("sandbox setup failed")

// Is makes errors.Is(err, ErrSetup) true for a SetupError.
func (e *SetupError) Is(target error) bool { return target == ErrSetup }

// errNamespaces: the namespaces could not be made or set up; nothing ran,
// and the spawn is tried again without them.
var errNamespaces = errors.New("namespaces unavailable")

// CommandError: the sandbox was set up but the command could not be run
// (not found, not executable, its folder missing).
type CommandError struct{ Err error }

func (e *CommandError) Error() string { return e.Err.Error() }
func (e *CommandError) Unwrap() error { return e.Err }
