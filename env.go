package main

// The process environment every command receives, and the process-wide
// cleanups that must run however the process ends (main.go's signal
// handling; docs/design.md, "A token file is removed however the process
// ends").

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// stdio is the process's standard streams, injected for tests.
type stdio struct {
	in  io.Reader
	out io.Writer
	err io.Writer
}

// env is what every command receives.
type env struct {
	stdio
	getenv func(string) string
	home   string // the user's home directory ($HOME)
	cwd    string // the working directory: the workspace
}

// exitError ends a command with a code after it has printed its own
// diagnostics.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// errInterrupted is the cancellation cause when SIGINT or SIGTERM arrives.
var errInterrupted = errors.New("interrupted")

// exitHooks are cleanups that must happen even when a second signal ends
// the process at once (docs/design.md, "A token file is removed however the
// process ends").
var exitHooks struct {
	sync.Mutex
	next int
	m    map[int]func()
}

// onExit registers a last-resort cleanup and returns its removal.
func onExit(f func()) (remove func()) {
	catchFatalSignals()
	exitHooks.Lock()
	defer exitHooks.Unlock()
	if exitHooks.m == nil {
		exitHooks.m = map[int]func(){}
	}
	id := exitHooks.next
	exitHooks.next++
	exitHooks.m[id] = f
	return func() {
		exitHooks.Lock()
		delete(exitHooks.m, id)
		exitHooks.Unlock()
	}
}

func runExitHooks() {
	exitHooks.Lock()
	defer exitHooks.Unlock()
	for _, f := range exitHooks.m {
		f()
	}
}
