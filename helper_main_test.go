package main

import (
	"os"
	"testing"

	sbox "agent/internal/sandbox"
)

// TestMain serves as the sandbox helper when an in-process test confines a
// command: the helper is /proc/self/exe, which is this test binary.
func TestMain(m *testing.M) {
	if sbox.IsHelper() {
		os.Exit(sbox.HelperMain())
	}
	os.Exit(m.Run())
}
