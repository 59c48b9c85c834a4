//go:build !linux

package confine

// Off Linux there is no helper: the kernel offers nothing it could use.

// IsHelper is false off Linux.
func IsHelper() bool { return false }

// SeccompAvailable is false off Linux.
func SeccompAvailable() bool { return false }
