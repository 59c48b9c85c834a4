package early

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestHasEffectiveCapAgreesWithProc: every capability bit capget reports
// is the one /proc/self/status shows (CapEff), as root and otherwise.
func TestHasEffectiveCapAgreesWithProc(t *testing.T) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	var eff uint64
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
			eff, err = strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	for c := 0; c < 64; c++ {
		if got, want := HasEffectiveCap(c), eff&(1<<c) != 0; got != want {
			t.Errorf("capability %d: %v, /proc says %v", c, got, want)
		}
	}
	if HasEffectiveCap(-1) || HasEffectiveCap(64) {
		t.Error("a capability out of range is held")
	}
}
