package tools

import (
	"os"
	"testing"

	"agent/internal/sandbox"
)

// TestMain serves as the sandbox helper when a test confines a command:
// the helper is /proc/self/exe, which is this test binary.
func TestMain(m *testing.M) {
	if sandbox.IsHelper() {
		os.Exit(sandbox.HelperMain())
	}
	os.Exit(m.Run())
}
