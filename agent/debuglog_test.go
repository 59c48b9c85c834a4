package agent

import (
	"os"
	"strings"
	"testing"
)

// TestDebugLogBounds: a line's message is cut at 4 KiB; the 4 MiB bound
// counts what a resumed session's log already holds; past it one line
// says so and later lines are dropped.
func TestDebugLogBounds(t *testing.T) {
	home := t.TempDir()
	l := newDebugLog(home, "s1")
	l.Logf("mcp:x", "%s", strings.Repeat("a", 10000))
	l.Close()
	data, _ := os.ReadFile(DebugLogPath(home, "s1"))
	if n := strings.Count(string(data), "a"); n != maxDebugLine || !strings.Contains(string(data), "…") {
		t.Fatalf("a long message kept %d bytes", n)
	}
	// Resumed: the file is nearly full already.
	f, _ := os.OpenFile(DebugLogPath(home, "s1"), os.O_WRONLY|os.O_APPEND, 0o600)
	f.WriteString(strings.Repeat("b", maxDebugLog-len(data)-10) + "\n")
	f.Close()
	l = newDebugLog(home, "s1")
	l.Logf("mcp:x", "one more line that does not fit")
	l.Logf("mcp:x", "the second")
	l.Close()
	data, _ = os.ReadFile(DebugLogPath(home, "s1"))
	if strings.Contains(string(data), "does not fit") || strings.Contains(string(data), "the second") ||
		!strings.Contains(string(data), "the debug log reached its bound") {
		t.Fatalf("the end of the log: %q", data[len(data)-200:])
	}
	if len(data) > maxDebugLog+200 {
		t.Fatalf("the log grew to %d bytes", len(data))
	}
}
