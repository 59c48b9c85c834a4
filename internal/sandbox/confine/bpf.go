package confine

import "fmt"

// The seccomp filter, written here as classic BPF (docs/sandbox.md, "How"):
// on an architecture other than the one the filter was built for, or on
// amd64's x32 numbers, the process is killed (its system calls cannot be
// judged); sockets other than AF_UNIX are refused (AF_INET and AF_INET6
// too in the loopback mode, whose network namespace has nothing else);
// io_uring, ptrace and the process_vm calls are refused; in the none
// mode, connect(2) and unix datagram sockets are refused unless unix
// sockets are allowed (a filter cannot tell a unix connect from another,
// so the loopback and host modes leave connect alone);
// TIOCSTI and TIOCLINUX are refused; before Landlock ABI 6 can scope
// signals, signals to the agent and its process group, kill(-1, …), tkill
// and pidfd_open of a thread are refused; before ABI 3 can refuse
// truncation, truncate(2), an open that truncates without writing, and
// openat2 (whose flags a filter cannot read) are refused.

// sockFilter is struct sock_filter.
type sockFilter struct {
	Code uint16
	Jt   uint8
	Jf   uint8
	K    uint32
}

// BPF opcodes used here.
const (
	bpfLdWAbs = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeqK   = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJgeK   = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfJsetK  = 0x45 // BPF_JMP | BPF_JSET | BPF_K
	bpfJa     = 0x05 // BPF_JMP | BPF_JA
	bpfAndK   = 0x54 // BPF_ALU | BPF_AND | BPF_K
	bpfRetK   = 0x06 // BPF_RET | BPF_K
)

// Seccomp return values.
const (
	retKillProcess = 0x80000000
	retErrno       = 0x00050000
	retAllow       = 0x7fff0000
)

// filterSpec is what shapes the filter.
type filterSpec struct {
	network     NetMode
	unixConnect bool
	abi         int // Landlock ABI in use
	agentPid    int
	agentPgid   int
}

// asm assembles a program with symbolic jump targets: a jump names a label
// for its true and false branches ("" falls through).
type asm struct {
	ins    []sockFilter
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at     int
	jt, jf string
	ja     string
}

func (a *asm) label(name string) { a.labels[name] = len(a.ins) }
func (a *asm) ld(off uint32)     { a.ins = append(a.ins, sockFilter{Code: bpfLdWAbs, K: off}) }
func (a *asm) and(k uint32)      { a.ins = append(a.ins, sockFilter{Code: bpfAndK, K: k}) }
func (a *asm) ret(k uint32)      { a.ins = append(a.ins, sockFilter{Code: bpfRetK, K: k}) }
func (a *asm) jmp(code uint16, k uint32, jt, jf string) {
	a.fixups = append(a.fixups, fixup{at: len(a.ins), jt: jt, jf: jf})
	a.ins = append(a.ins, sockFilter{Code: code, K: k})
}
func (a *asm) ja(to string) {
	a.fixups = append(a.fixups, fixup{at: len(a.ins), ja: to})
	a.ins = append(a.ins, sockFilter{Code: bpfJa})
}

func (a *asm) assemble() ([]sockFilter, error) {
	off := func(from int, to string) (int, error) {
		if to == "" {
			return 0, nil
		}
		t, ok := a.labels[to]
		if !ok {
			return 0, fmt.Errorf("seccomp filter: no label %q", to)
		}
		d := t - from - 1
		if d < 0 {
			return 0, fmt.Errorf("seccomp filter: backward jump to %q", to)
		}
		return d, nil
	}
	for _, f := range a.fixups {
		if f.ja != "" {
			d, err := off(f.at, f.ja)
			if err != nil {
				return nil, err
			}
			a.ins[f.at].K = uint32(d)
			continue
		}
		dt, err := off(f.at, f.jt)
		if err != nil {
			return nil, err
		}
		df, err := off(f.at, f.jf)
		if err != nil {
			return nil, err
		}
		if dt > 255 || df > 255 {
			return nil, fmt.Errorf("seccomp filter: jump too far")
		}
		a.ins[f.at].Jt, a.ins[f.at].Jf = uint8(dt), uint8(df)
	}
	return a.ins, nil
}

// argLo is the offset of the low 32 bits of argument i in struct
// seccomp_data (nr, arch, instruction_pointer, args[6]). The kernel reads
// every argument the filter looks at as an int or unsigned int, so the
// low half is exactly what the call will use.
func (a *archInfo) argLo(i int) uint32 {
	off := uint32(16 + 8*i)
	if a.bigEndian {
		off += 4
	}
	return off
}

// buildFilter writes the filter for one architecture.
func buildFilter(a *archInfo, s filterSpec) ([]sockFilter, error) {
	p := &asm{labels: map[string]int{}}
	deny := uint32(retErrno | errnoEPERM)
	p.ld(4) // arch
	p.jmp(bpfJeqK, a.audit, "", "kill")
	p.ld(0) // nr
	if a.x32 {
		p.jmp(bpfJgeK, 0x40000000, "kill", "")
	}
	refuse := []string{"ptrace", "process_vm_readv", "process_vm_writev", "process_madvise",
		"io_uring_setup", "io_uring_enter", "io_uring_register", "socketcall"}
	if s.abi < 6 {
		refuse = append(refuse, "tkill")
	}
	if s.abi < 3 {
		refuse = append(refuse, "truncate")
	}
	for _, name := range refuse {
		if n, ok := a.call(name); ok {
			p.jmp(bpfJeqK, n, "deny", "")
		}
	}
	branch := func(name, to string) {
		if n, ok := a.call(name); ok {
			p.jmp(bpfJeqK, n, to, "")
		}
	}
	if s.network != NetHost {
		branch("socket", "socket")
	}
	if s.network == NetNone && !s.unixConnect {
		branch("connect", "deny")
	}
	branch("ioctl", "ioctl")
	if s.abi < 3 {
		branch("openat", "openat")
		branch("open", "open")
		if n, ok := a.call("openat2"); ok {
			p.jmp(bpfJeqK, n, "nosys", "")
		}
	}
	if s.abi < 6 {
		branch("kill", "kill_pid")
		branch("tgkill", "tgid")
		branch("rt_sigqueueinfo", "tgid")
		branch("rt_tgsigqueueinfo", "tgid")
		branch("pidfd_open", "pidfd")
		branch("fcntl", "fcntl")
	}
	p.ret(retAllow)

	if s.network != NetHost {
		p.label("socket")
		p.ld(a.argLo(0))
		if s.network == NetLoopback {
			p.jmp(bpfJeqK, afInet, "allow", "")
			p.jmp(bpfJeqK, afInet6, "allow", "")
		}
		p.jmp(bpfJeqK, afUnix, "", "deny")
		if s.network == NetNone && !s.unixConnect {
			p.ld(a.argLo(1))
			p.and(sockTypeMax)
			p.jmp(bpfJeqK, sockDgram, "deny", "")
		}
		p.ret(retAllow)
	}

	p.label("ioctl")
	p.ld(a.argLo(1))
	p.jmp(bpfJeqK, a.tiocsti, "deny", "")
	p.jmp(bpfJeqK, tiocLinux, "deny", "")
	p.ret(retAllow)

	if s.abi < 3 {
		// An open that truncates without asking to write.
		for _, c := range []struct {
			label string
			arg   int
		}{{"openat", 2}, {"open", 1}} {
			p.label(c.label)
			p.ld(a.argLo(c.arg))
			p.jmp(bpfJsetK, oTrunc, "", "allow")
			p.and(oAccMode)
			p.jmp(bpfJeqK, 0, "deny", "allow")
		}
		p.label("nosys")
		p.ret(retErrno | errnoENOSYS)
	}

	if s.abi < 6 {
		pid, negPgid := uint32(int32(s.agentPid)), uint32(-int32(s.agentPgid))
		p.label("kill_pid")
		p.ld(a.argLo(0))
		p.jmp(bpfJeqK, 0xffffffff, "deny", "") // kill(-1, …): every process the user has
		p.jmp(bpfJeqK, pid, "deny", "")
		if s.agentPgid > 0 {
			p.jmp(bpfJeqK, negPgid, "deny", "")
		}
		p.ret(retAllow)

		p.label("tgid")
		p.ld(a.argLo(0))
		p.jmp(bpfJeqK, pid, "deny", "allow")

		p.label("pidfd")
		p.ld(a.argLo(0))
		p.jmp(bpfJeqK, pid, "deny", "")
		p.ld(a.argLo(1))
		p.jmp(bpfJsetK, pidfdThread, "deny", "allow")

		p.label("fcntl")
		p.ld(a.argLo(1))
		p.jmp(bpfJeqK, fSetOwnEx, "deny", "")
		p.jmp(bpfJeqK, fSetOwn, "", "allow")
		p.ld(a.argLo(2))
		p.jmp(bpfJeqK, pid, "deny", "")
		if s.agentPgid > 0 {
			p.jmp(bpfJeqK, negPgid, "deny", "")
		}
		p.ja("allow")
	}

	p.label("allow")
	p.ret(retAllow)
	p.label("deny")
	p.ret(deny)
	p.label("kill")
	p.ret(retKillProcess)
	return p.assemble()
}
