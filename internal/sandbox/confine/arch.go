package confine

// archInfo is what the seccomp filter needs to know about one
// architecture: its audit identifier, its byte order, its system call
// numbers and the few constants that differ between architectures. The
// numbers come from the kernel's system call tables; those from 424 on are
// the same on every architecture.
type archInfo struct {
	name      string
	audit     uint32 // AUDIT_ARCH_*
	bigEndian bool
	x32       bool // amd64: refuse the x32 ABI (numbers with bit 30 set)
	nr        []sysNr
	tiocsti   uint32
}

// sysNr is a system call's name and its number: the tables are slices
// the compiler lays out, so that neither the agent nor the helper builds
// them when the package initialises (docs/performance.md, "Sandbox").
type sysNr struct {
	name string
	nr   uint32
}

// The system calls the filter names. "open" and "socketcall" exist on some
// architectures only.
var filterCalls = []string{
	"socket", "socketpair", "connect", "ptrace", "process_vm_readv", "process_vm_writev",
	"ioctl", "openat", "truncate", "kill", "tkill", "tgkill", "rt_sigqueueinfo",
	"rt_tgsigqueueinfo", "fcntl",
}

// Numbers shared by every architecture (include/uapi/asm-generic/unistd.h
// from 424 on).
var commonCalls = []sysNr{
	{"pidfd_send_signal", 424}, {"io_uring_setup", 425}, {"io_uring_enter", 426},
	{"io_uring_register", 427}, {"pidfd_open", 434}, {"openat2", 437},
	{"process_madvise", 440},
}

// The generic table (arm64, riscv64, loong64).
var genericCalls = []sysNr{
	{"fcntl", 25}, {"ioctl", 29}, {"truncate", 45}, {"openat", 56}, {"ptrace", 117},
	{"kill", 129}, {"tkill", 130}, {"tgkill", 131}, {"rt_sigqueueinfo", 138}, {"socket", 198},
	{"socketpair", 199}, {"connect", 203}, {"rt_tgsigqueueinfo", 240},
	{"process_vm_readv", 270}, {"process_vm_writev", 271},
}

// archs are the architectures the filter supports.
var archs = []*archInfo{
	{name: "amd64", audit: 0xC000003E, x32: true, tiocsti: 0x5412, nr: []sysNr{
		{"open", 2}, {"ioctl", 16}, {"socket", 41}, {"connect", 42}, {"socketpair", 53},
		{"kill", 62}, {"fcntl", 72}, {"truncate", 76}, {"ptrace", 101}, {"rt_sigqueueinfo", 129},
		{"tkill", 200}, {"tgkill", 234}, {"openat", 257}, {"rt_tgsigqueueinfo", 297},
		{"process_vm_readv", 310}, {"process_vm_writev", 311},
	}},
	{name: "arm64", audit: 0xC00000B7, tiocsti: 0x5412, nr: genericCalls},
	{name: "riscv64", audit: 0xC00000F3, tiocsti: 0x5412, nr: genericCalls},
	{name: "loong64", audit: 0xC0000102, tiocsti: 0x5412, nr: genericCalls},
	{name: "ppc64le", audit: 0xC0000015, tiocsti: 0x80017472, nr: ppcCalls},
	{name: "ppc64", audit: 0x80000015, bigEndian: true, tiocsti: 0x80017472, nr: ppcCalls},
	{name: "s390x", audit: 0x80000016, bigEndian: true, tiocsti: 0x5412, nr: []sysNr{
		{"open", 5}, {"ptrace", 26}, {"kill", 37}, {"ioctl", 54}, {"fcntl", 55},
		{"truncate", 92}, {"socketcall", 102}, {"rt_sigqueueinfo", 178}, {"tkill", 237},
		{"tgkill", 241}, {"openat", 288}, {"rt_tgsigqueueinfo", 330}, {"process_vm_readv", 340},
		{"process_vm_writev", 341}, {"socket", 359}, {"socketpair", 360}, {"connect", 362},
	}},
}

var ppcCalls = []sysNr{
	{"open", 5}, {"ptrace", 26}, {"kill", 37}, {"ioctl", 54}, {"fcntl", 55}, {"truncate", 92},
	{"socketcall", 102}, {"rt_sigqueueinfo", 177}, {"tkill", 208}, {"tgkill", 250},
	{"openat", 286}, {"rt_tgsigqueueinfo", 322}, {"socket", 326}, {"connect", 328},
	{"socketpair", 333}, {"process_vm_readv", 351}, {"process_vm_writev", 352},
}

// call returns a system call's number on the architecture.
func (a *archInfo) call(name string) (uint32, bool) {
	for _, t := range [][]sysNr{a.nr, commonCalls} {
		for _, c := range t {
			if c.name == name {
				return c.nr, true
			}
		}
	}
	return 0, false
}

// archNamed returns the architecture GOARCH calls name; nil when the
// filter does not support it.
func archNamed(name string) *archInfo {
	for _, a := range archs {
		if a.name == name {
			return a
		}
	}
	return nil
}

// Constants of the filter that are the same on every supported
// architecture.
const (
	afUnix      = 1
	afInet      = 2
	afInet6     = 10
	sockDgram   = 2
	sockTypeMax = 0xf
	oTrunc      = 0o1000
	oAccMode    = 3
	fSetOwn     = 8
	fSetOwnEx   = 15
	pidfdThread = 0o200 // O_EXCL
	tiocLinux   = 0x541C
	errnoEPERM  = 1
	errnoENOSYS = 38
)
