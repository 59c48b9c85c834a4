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
