package confine

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// Landlock's system calls have the same numbers on every architecture.
const (
	sysLandlockCreateRuleset = 444
	sysLandlockAddRule       = 445
	sysLandlockRestrictSelf  = 446

	llRulePathBeneath = 1
)

// applyLandlock restricts the calling thread (and what it execs) to the
// policy's rules, handling exactly the rights the ABI knows, so that an
// older kernel enforces what it can and a newer one refuses nothing the
// policy did not mean to refuse (docs/sandbox.md, "How").
func applyLandlock(p *Policy, list lister) error {
	abi := p.ABI
	handledFS := fsRights(abi)
	// struct landlock_ruleset_attr grew with the ABI: pass the size the
	// kernel knows.
	var attr [3]uint64
	attr[0] = handledFS
	attr[1] = netRights(abi, p.Network)
	attr[2] = scopes(abi, p.UnixConnect)
	size := uintptr(8)
	switch {
	case abi >= 6:
		size = 24
	case abi >= 4:
		size = 16
	}
	fd, _, e := syscall.RawSyscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr[0])), size, 0)
	if e != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	rs := int(fd)
	defer syscall.Close(rs)
	for _, r := range planRules(p, list) {
		if err := addPathRule(rs, r, handledFS); err != nil {
			return err
		}
	}
	if _, _, e := syscall.RawSyscall(sysLandlockRestrictSelf, uintptr(rs), 0, 0); e != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", e)
	}
	return nil
}

// addPathRule adds one rule; a path that does not exist (or cannot be
// reached) is skipped: nothing is granted there.
func addPathRule(rs int, r pathRule, handled uint64) error {
	flags := oPath | syscall.O_CLOEXEC
	if r.noFollow {
		flags |= syscall.O_NOFOLLOW
	}
	fd, err := syscall.Open(r.path, flags, 0)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) {
			return nil
		}
		return fmt.Errorf("landlock: opening %s: %w", r.path, err)
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return fmt.Errorf("landlock: %s: %w", r.path, err)
	}
	access := r.access & handled
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
	case syscall.S_IFLNK:
		return nil
	default:
		access &= llFileRights
	}
	if access == 0 {
		return nil
	}
	// struct landlock_path_beneath_attr is packed: a u64, then an s32
	// at byte 8, which in a second u64 is its low half on a
	// little-endian machine and its high half on a big-endian one.
	attr := [2]uint64{access, uint64(uint32(int32(fd)))}
	if bigEndian() {
		attr[1] <<= 32
	}
	if _, _, e := syscall.RawSyscall6(sysLandlockAddRule, uintptr(rs), llRulePathBeneath, uintptr(unsafe.Pointer(&attr[0])), 0, 0, 0); e != 0 {
		return fmt.Errorf("landlock_add_rule %s: %w", r.path, e)
	}
	return nil
}

// osLister lists a folder for planRules without following links.
func osLister(dir string) ([]dirEntry, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]dirEntry, len(ents))
	for i, e := range ents {
		out[i] = dirEntry{name: e.Name(), typ: e.Type()}
	}
	return out, nil
}

// bigEndian reports the machine's byte order.
func bigEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 0
}

// oPath is O_PATH, which the syscall package does not name; its value is
// 010000000 on every architecture this package supports.
const oPath = 0o10000000
