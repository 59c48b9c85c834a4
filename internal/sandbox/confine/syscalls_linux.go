package confine

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"
)

// prctl options and the values they take (include/uapi/linux/prctl.h,
// capability.h, seccomp.h).
const (
	prSetSeccomp        = 22
	prCapbsetDrop       = 24
	prSetNoNewPrivs     = 38
	prCapAmbient        = 47
	prCapAmbientClear   = 4
	seccompModeFilter   = 2
	linuxCapVersion3    = 0x20080522
	closeRangeCloexec   = 1 << 2
	sysCloseRange       = 436
	seccompGetActionAvl = 2
)

func prctl(op, a, b uintptr) error {
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, op, a, b, 0, 0, 0); e != 0 {
		return e
	}
	return nil
}

// capHeader and capData are the kernel's structures for capget and
// capset (linux/capability.h, version 3: two words per set).
type capHeader struct {
	version uint32
	pid     int32
}

type capData [2]struct{ effective, permitted, inheritable uint32 }

// dropCapabilities empties the ambient, bounding, effective, permitted and
// inheritable sets of the calling thread, so that even a command run as
// root (or as root of the user namespace) gains nothing at exec and cannot
// read another process's /proc files (docs/sandbox.md, "Process").
func dropCapabilities() error {
	if err := prctl(prCapAmbient, prCapAmbientClear, 0); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("clearing the ambient capabilities: %w", err)
	}
	for c := 0; c < 64; c++ {
		err := prctl(prCapbsetDrop, uintptr(c), 0)
		if errors.Is(err, syscall.EINVAL) {
			break // past the last capability this kernel knows
		}
		if err != nil {
			// Without CAP_SETPCAP the bounding set stays, which matters
			// only to a process that exec's as root: refuse that.
			if os.Geteuid() == 0 {
				return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
			}
			break
		}
	}
	hdr := capHeader{linuxCapVersion3, 0}
	var data capData
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("capset: %w", e)
	}
	return nil
}

// nativeArch is the architecture this binary runs on; nil where the filter
// is not supported (the tier then has no seccomp layer).
func nativeArch() *archInfo { return archNamed(runtime.GOARCH) }

// installFilter installs the seccomp filter built for this architecture.
func installFilter(p *Policy) error {
	a := nativeArch()
	if a == nil {
		return errors.New("seccomp: no filter for this architecture")
	}
	prog, err := buildFilter(a, filterSpec{network: p.Network, unixConnect: p.UnixConnect, abi: p.ABI, agentPid: p.AgentPid, agentPgid: p.AgentPgid})
	if err != nil {
		return err
	}
	fprog := struct {
		n      uint16
		_      [6]byte
		filter *sockFilter
	}{n: uint16(len(prog)), filter: &prog[0]}
	if err := prctl(prSetSeccomp, seccompModeFilter, uintptr(unsafe.Pointer(&fprog))); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

// SeccompAvailable reports whether the kernel takes filters that return an
// errno (seccomp(SECCOMP_GET_ACTION_AVAIL)) and this architecture has one.
func SeccompAvailable() bool {
	a := nativeArch()
	if a == nil {
		return false
	}
	nr, ok := map[string]uintptr{"amd64": 317, "arm64": 277, "riscv64": 277, "loong64": 277, "ppc64le": 358, "ppc64": 358, "s390x": 348}[a.name]
	if !ok {
		return false
	}
	action := uint32(retErrno)
	_, _, e := syscall.RawSyscall(nr, seccompGetActionAvl, 0, uintptr(unsafe.Pointer(&action)))
	return e == 0
}

// closeDescriptors marks every descriptor above 2 close-on-exec, so that
// the command inherits only its standard streams; the status pipe is
// among them and closes at the exec, which is how the parent learns that
// the exec happened.
func closeDescriptors() error {
	if _, _, e := syscall.RawSyscall(sysCloseRange, 3, ^uintptr(0)>>32, closeRangeCloexec); e == 0 {
		return nil
	}
	// Kernels before 5.11: one by one.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("listing descriptors: %w", err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		if _, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFD, syscall.FD_CLOEXEC); e != 0 && e != syscall.EBADF {
			return fmt.Errorf("descriptor %d: %w", fd, e)
		}
	}
	return nil
}
