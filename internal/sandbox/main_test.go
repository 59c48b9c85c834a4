package sandbox

import (
	"os"
	"testing"
)

// TestMain lets the tests lower what the machine offers
// (AGENT_SANDBOX_TEST_CAP). The helper itself needs nothing here: package
// confine dispatches it when this test binary is started as the helper.
func TestMain(m *testing.M) {
	capsFromEnv = true
	os.Exit(m.Run())
}
