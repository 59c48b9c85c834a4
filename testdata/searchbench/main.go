// Command searchbench runs one Glob or Grep call through the built-in
// tools, as a session would, for interop/bench-search.sh:
//
//	searchbench WORKSPACE TOOL JSON-ARGUMENTS
//
// It prints the result's size and first line on stderr when -v is given
// first, and exits 1 when the tool reports an error.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"agent/agent/tools"
)

func main() {
	args := os.Args[1:]
	verbose := len(args) > 0 && args[0] == "-v"
	if verbose {
		args = args[1:]
	}
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: searchbench [-v] WORKSPACE TOOL JSON-ARGUMENTS")
		os.Exit(2)
	}
	for _, t := range tools.Builtin(tools.Options{Workspace: args[0]}) {
		if t.Spec().Name != args[1] {
			continue
		}
		res := t.Run(context.Background(), json.RawMessage(args[2]))
		if verbose {
			first, _, _ := strings.Cut(res.Content, "\n")
			fmt.Fprintf(os.Stderr, "%d bytes, %d lines; first: %s\n", len(res.Content), strings.Count(res.Content, "\n"), first)
		}
		if res.IsError {
			fmt.Fprintln(os.Stderr, "searchbench:", res.Content)
			os.Exit(1)
		}
		return
	}
	fmt.Fprintf(os.Stderr, "searchbench: no tool %s\n", args[1])
	os.Exit(2)
}
