//go:build !linux

package main

import (
	"os"
	"syscall"
)

// fatalSignals: see signals_linux.go.
var fatalSignals = []os.Signal{
	syscall.SIGQUIT, syscall.SIGILL, syscall.SIGTRAP, syscall.SIGABRT, syscall.SIGSYS,
}
