package confine

import (
	"encoding/binary"
	"fmt"
	"testing"
)

// runBPF interprets the classic BPF subset the filter uses over one
// seccomp_data record, as the kernel would, and returns the filter's
// verdict. Any other instruction is an error, so a filter that grows an
// opcode this interpreter does not know fails its tests instead of
// passing them untested.
func runBPF(prog []sockFilter, data []byte) (uint32, error) {
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case bpfLdWAbs:
			if int(in.K)+4 > len(data) || in.K%4 != 0 {
				return 0, fmt.Errorf("pc %d: load out of range at %d", pc, in.K)
			}
			acc = binary.NativeEndian.Uint32(data[in.K:]) // data is laid out by the test for the arch
		case bpfAndK:
			acc &= in.K
		case bpfJeqK, bpfJgeK, bpfJsetK:
			var cond bool
			switch in.Code {
			case bpfJeqK:
				cond = acc == in.K
			case bpfJgeK:
				cond = acc >= in.K
			default:
				cond = acc&in.K != 0
			}
			if cond {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case bpfJa:
			pc += int(in.K)
		case bpfRetK:
			return in.K, nil
		default:
			return 0, fmt.Errorf("pc %d: opcode %#x not supported", pc, in.Code)
		}
		if pc+1 > len(prog) {
			return 0, fmt.Errorf("pc %d: jump past the end", pc)
		}
	}
	return 0, fmt.Errorf("fell off the end of the program")
}

// seccompData lays out struct seccomp_data for an architecture, so that a
// 32-bit load of the interpreter (native order) reads what the kernel's
// load would read on that architecture: each 32-bit word is stored in
// native order, the halves of each 64-bit argument in the arch's order.
func seccompData(a *archInfo, arch uint32, nr uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	put := func(off int, v uint32) { binary.NativeEndian.PutUint32(b[off:], v) }
	put(0, nr)
	put(4, arch)
	for i, v := range args {
		lo, hi := uint32(v), uint32(v>>32)
		off := 16 + 8*i
		if a.bigEndian {
			put(off, hi)
			put(off+4, lo)
		} else {
			put(off, lo)
			put(off+4, hi)
		}
	}
	return b
}

const (
	testAgent = 4242
	testPgid  = 4240
)

type bpfCase struct {
	name string
	call string // "" uses nr
	nr   uint32
	arch uint32 // 0: the arch's own
	args []uint64
	want uint32
}

func bpfCases(a *archInfo, s filterSpec) []bpfCase {
	deny, allow, nosys := uint32(retErrno|errnoEPERM), uint32(retAllow), uint32(retErrno|errnoENOSYS)
	pick := func(cond bool, yes, no uint32) uint32 {
		if cond {
			return yes
		}
		return no
	}
	none := s.network == NetNone
	old3, old6 := s.abi < 3, s.abi < 6
	cs := []bpfCase{
		{name: "another architecture", call: "getpid-like", nr: 39, arch: 0x40000003, want: retKillProcess},
		{name: "an ordinary call", nr: 1000, want: allow},
		{name: "socket AF_UNIX stream", call: "socket", args: []uint64{afUnix, 1}, want: allow},
		{name: "socket AF_UNIX stream, high bits in the domain", call: "socket", args: []uint64{1<<32 | afUnix, 1}, want: allow},
		{name: "socket AF_UNIX datagram", call: "socket", args: []uint64{afUnix, sockDgram | 0x80000}, want: pick(none && !s.unixConnect, deny, allow)},
		{name: "socket AF_INET", call: "socket", args: []uint64{afInet, 1}, want: pick(none, deny, allow)},
		{name: "socket AF_INET6 datagram", call: "socket", args: []uint64{afInet6, sockDgram}, want: pick(none, deny, allow)},
		{name: "socket AF_PACKET", call: "socket", args: []uint64{17, 3}, want: pick(s.network == NetHost, allow, deny)},
		{name: "socket AF_NETLINK", call: "socket", args: []uint64{16, 3}, want: pick(s.network == NetHost, allow, deny)},
		{name: "socketpair", call: "socketpair", args: []uint64{afUnix, 1}, want: allow},
		{name: "connect", call: "connect", args: []uint64{3, 0x1000, 16}, want: pick(none && !s.unixConnect, deny, allow)},
		{name: "ptrace", call: "ptrace", args: []uint64{16, testAgent}, want: deny},
		{name: "process_vm_readv", call: "process_vm_readv", args: []uint64{testAgent}, want: deny},
		{name: "process_vm_writev", call: "process_vm_writev", args: []uint64{testAgent}, want: deny},
		{name: "io_uring_setup", call: "io_uring_setup", want: deny},
		{name: "io_uring_enter", call: "io_uring_enter", want: deny},
		{name: "ioctl TIOCSTI", call: "ioctl", args: []uint64{0, uint64(a.tiocsti)}, want: deny},
		{name: "ioctl TIOCSTI, high bits set", call: "ioctl", args: []uint64{0, 0xffffffff00000000 | uint64(a.tiocsti)}, want: deny},
		{name: "ioctl TIOCLINUX", call: "ioctl", args: []uint64{0, tiocLinux}, want: deny},
		{name: "ioctl TIOCGWINSZ", call: "ioctl", args: []uint64{1, 0x5413}, want: allow},
		{name: "openat read-only", call: "openat", args: []uint64{0, 0x1000, 0}, want: allow},
		{name: "openat truncating read-only", call: "openat", args: []uint64{0, 0x1000, oTrunc}, want: pick(old3, deny, allow)},
		{name: "openat truncating for writing", call: "openat", args: []uint64{0, 0x1000, oTrunc | 1}, want: allow},
		{name: "truncate", call: "truncate", args: []uint64{0x1000, 0}, want: pick(old3, deny, allow)},
		{name: "openat2", call: "openat2", want: pick(old3, nosys, allow)},
		{name: "kill the agent", call: "kill", args: []uint64{testAgent, 15}, want: pick(old6, deny, allow)},
		{name: "kill the agent's group", call: "kill", args: []uint64{1<<32 - testPgid, 15}, want: pick(old6, deny, allow)},
		{name: "kill every process", call: "kill", args: []uint64{0xffffffff, 9}, want: pick(old6, deny, allow)},
		{name: "kill another process", call: "kill", args: []uint64{5000, 15}, want: allow},
		{name: "tkill", call: "tkill", args: []uint64{5000, 15}, want: pick(old6, deny, allow)},
		{name: "tgkill the agent", call: "tgkill", args: []uint64{testAgent, testAgent, 15}, want: pick(old6, deny, allow)},
		{name: "tgkill another", call: "tgkill", args: []uint64{5000, 5001, 15}, want: allow},
		{name: "rt_sigqueueinfo the agent", call: "rt_sigqueueinfo", args: []uint64{testAgent, 10}, want: pick(old6, deny, allow)},
		{name: "rt_tgsigqueueinfo the agent", call: "rt_tgsigqueueinfo", args: []uint64{testAgent, 1, 10}, want: pick(old6, deny, allow)},
		{name: "pidfd_open the agent", call: "pidfd_open", args: []uint64{testAgent, 0}, want: pick(old6, deny, allow)},
		{name: "pidfd_open a thread", call: "pidfd_open", args: []uint64{5000, pidfdThread}, want: pick(old6, deny, allow)},
		{name: "pidfd_open another", call: "pidfd_open", args: []uint64{5000, 0}, want: allow},
		{name: "fcntl F_SETOWN the agent", call: "fcntl", args: []uint64{3, fSetOwn, testAgent}, want: pick(old6, deny, allow)},
		{name: "fcntl F_SETOWN the agent's group", call: "fcntl", args: []uint64{3, fSetOwn, 1<<32 - testPgid}, want: pick(old6, deny, allow)},
		{name: "fcntl F_SETOWN another", call: "fcntl", args: []uint64{3, fSetOwn, 5000}, want: allow},
		{name: "fcntl F_SETOWN_EX", call: "fcntl", args: []uint64{3, fSetOwnEx, 0x1000}, want: pick(old6, deny, allow)},
		{name: "fcntl F_GETFL", call: "fcntl", args: []uint64{3, 3}, want: allow},
	}
	if a.x32 {
		cs = append(cs, bpfCase{name: "an x32 call", nr: 0x40000000 | 41, want: retKillProcess})
	}
	if _, ok := a.call("open"); ok {
		cs = append(cs, bpfCase{name: "open truncating read-only", call: "open", args: []uint64{0x1000, oTrunc}, want: pick(old3, deny, allow)})
	}
	if _, ok := a.call("socketcall"); ok {
		cs = append(cs, bpfCase{name: "socketcall", call: "socketcall", args: []uint64{1, 0x1000}, want: deny})
	}
	return cs
}

// TestFilterEveryArch runs the filter of every supported architecture,
// for every network mode and the Landlock ABIs that change it, through the
// interpreter.
func TestFilterEveryArch(t *testing.T) {
	for _, a := range archs {
		an := a.name
		for _, nm := range []NetMode{NetNone, NetLoopback, NetHost} {
			for _, uc := range []bool{false, true} {
				for _, abi := range []int{0, 1, 2, 3, 5, 6, 7} {
					s := filterSpec{network: nm, unixConnect: uc, abi: abi, agentPid: testAgent, agentPgid: testPgid}
					t.Run(fmt.Sprintf("%s/%s/unix=%v/abi%d", an, nm, uc, abi), func(t *testing.T) {
						prog, err := buildFilter(a, s)
						if err != nil {
							t.Fatal(err)
						}
						if len(prog) > 255 {
							t.Fatalf("%d instructions", len(prog))
						}
						for _, c := range bpfCases(a, s) {
							nr := c.nr
							if c.call != "" && c.call != "getpid-like" {
								n, ok := a.call(c.call)
								if !ok {
									continue // not on this architecture
								}
								nr = n
							}
							arch := a.audit
							if c.arch != 0 {
								arch = c.arch
							}
							got, err := runBPF(prog, seccompData(a, arch, nr, c.args...))
							if err != nil {
								t.Fatalf("%s: %v", c.name, err)
							}
							if got != c.want {
								t.Errorf("%s: got %#x, want %#x", c.name, got, c.want)
							}
						}
					})
				}
			}
		}
	}
}

// TestFilterCallsKnown: every call the filter names has a number on every
// supported architecture (except those that only some have).
func TestFilterCallsKnown(t *testing.T) {
	for _, a := range archs {
		an := a.name
		for _, c := range filterCalls {
			if _, ok := a.call(c); !ok {
				t.Errorf("%s: no number for %s", an, c)
			}
		}
		seen := map[uint32]string{}
		names := map[string]bool{}
		for _, c := range a.nr {
			if prev, dup := seen[c.nr]; dup {
				t.Errorf("%s: %s and %s share number %d", an, prev, c.name, c.nr)
			}
			if names[c.name] {
				t.Errorf("%s: %s is listed twice", an, c.name)
			}
			seen[c.nr], names[c.name] = c.name, true
		}
		if archNamed(an) != a {
			t.Errorf("archNamed(%q) is not the table's entry", an)
		}
	}
}
