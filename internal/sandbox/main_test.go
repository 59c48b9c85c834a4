package sandbox

import (
	"os"
	"testing"
)

// TestMain serves as the helper when a test starts /proc/self/exe in the
// helper mode (the test binary is /proc/self/exe here), and lets the
// tests lower what the machine offers (AGENT_SANDBOX_TEST_CAP).
func TestMain(m *testing.M) {
	capsFromEnv = true
	if IsHelper() {
		os.Exit(HelperMain())
	}
	os.Exit(m.Run())
}
