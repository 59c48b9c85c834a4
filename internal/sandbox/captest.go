//go:build sandboxtest

package sandbox

// A binary built with -tags sandboxtest reads AGENT_SANDBOX_TEST_CAP, so
// that the end-to-end tests run every degrade branch on a kernel that has
// everything (docs/sandbox.md, "Testing the degrade branches"). The
// released binary is built without the tag and ignores the variable.
func init() { capsFromEnv = true }
