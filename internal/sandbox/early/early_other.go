//go:build !linux

package early

// Helper is never started off Linux.
type Helper struct {
	Pid                       int
	PolicyW, StatusR, StderrR int
	NS, UserNS                bool
}

// Take returns nil off Linux.
func Take() *Helper { return nil }

// Wanted is false off Linux.
func Wanted([]string) bool { return false }

// Predict is false off Linux.
func Predict() (ns, userns bool) { return false, false }

// MountsAllowed is false off Linux.
func MountsAllowed() bool { return false }

// HasEffectiveCap is false off Linux.
func HasEffectiveCap(int) bool { return false }

// NamespacesRefused says there are none off Linux.
func NamespacesRefused() string { return "not on Linux" }

// LandlockABI is 0 off Linux.
func LandlockABI() int { return 0 }
