package main

import (
	"os"
	"syscall"
)

// fatalSignals are the catchable signals on which a Go program exits
// (os/signal, "Default behavior of signals in Go programs") other than
// SIGINT, SIGTERM and SIGHUP, which end a command as an interruption:
// these end it with a stack dump. Other signals Go catches and ignores,
// so the process lives on and keeps its files. A broken pipe on stdout
// or stderr (SIGPIPE) is not caught: a notified SIGPIPE would arrive for
// every pipe, a stdio MCP server's included; the cleanup child covers it.
var fatalSignals = []os.Signal{
	syscall.SIGQUIT, syscall.SIGILL, syscall.SIGTRAP, syscall.SIGABRT, syscall.SIGSYS,
	syscall.SIGSTKFLT,
}
