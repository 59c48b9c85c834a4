package early

import (
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// helperEnv and the descriptors start gives the helper (the policy on 3,
// the status on 4) are the helper's (confine.EnvVar, PolicyFD, StatusFD),
// which TestSameAsTheHelper holds; the capabilities are
// linux/capability.h's.
const (
	helperEnv = "AGENT_SANDBOX_HELPER"
	testCap   = "AGENT_SANDBOX_TEST_CAP"

	capSetPcap  = 8
	capNetAdmin = 12
	capSysAdmin = 21

	sysLandlockCreateRuleset = 444
	landlockRulesetVersion   = 1
)

// Helper is a helper started at init: its process, the agent's ends of its
// pipes (close-on-exec descriptors) and the namespaces it started in.
type Helper struct {
	Pid                       int
	PolicyW, StatusR, StderrR int
	// NS: a new mount namespace; UserNS: a new user namespace owning it.
	// The network namespace is never made here: the default network mode
	// needs none where seccomp is available (confine.Policy.NetNamespace).
	NS, UserNS bool
}

var (
	mu      sync.Mutex
	started *Helper
)

func init() {
	if v, _ := syscall.Getenv(helperEnv); v != "" {
		return // this is the helper
	}
	if v, _ := syscall.Getenv(testCap); v != "" {
		return // the test caps change what the sandbox does: no guessing
	}
	if !Wanted(os.Args) {
		return
	}
	ns, userns := Predict()
	if !ns && LandlockABI() <= 0 {
		return // nothing would confine the command: no helper runs
	}
	started = start(ns, userns)
}

// Take returns the helper started at init, once; nil when none was.
func Take() *Helper {
	mu.Lock()
	defer mu.Unlock()
	h := started
	started = nil
	return h
}

// Wanted reports whether a command line (program name first) runs
// `agent sandbox run` in a mode that confines: the words after the program
// are "sandbox run", and the flags before "--" neither ask for help nor set
// --mode to anything but a confining mode (danger-full-access runs no
// helper; a mode the flag parser refuses, or none after --mode, ends in a
// usage error). A line it misjudges costs a helper started in vain, or
// none started early: the command itself is not changed.
func Wanted(args []string) bool {
	if len(args) < 3 || args[1] != "sandbox" || args[2] != "run" {
		return false
	}
	for i := 3; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return true
		case a == "-h" || a == "-help" || a == "--help":
			return false
		case a == "--mode" || a == "-mode":
			if i+1 >= len(args) || !confining(args[i+1]) {
				return false
			}
			i++
		case hasPrefix(a, "--mode="):
			if !confining(a[len("--mode="):]) {
				return false
			}
		case hasPrefix(a, "-mode="):
			if !confining(a[len("-mode="):]) {
				return false
			}
		}
	}
	return true
}

// confining reports whether mode is a --mode value that confines.
func confining(mode string) bool { return mode == "read-only" || mode == "workspace-write" }

func hasPrefix(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

// Predict says which namespaces a spawn of the sandbox package starts its
// helper in on this machine, as it decides before its first spawn: a mount
// namespace unless the system settings refuse user namespaces to this
// user (NamespacesRefused), owned by a new user namespace unless the agent
// is root holding CAP_SYS_ADMIN (MountsAllowed).
func Predict() (ns, userns bool) {
	if NamespacesRefused() != "" {
		return false, false
	}
	return true, !MountsAllowed()
}

// MountsAllowed reports whether this process may make mount and network
// namespaces without a user namespace: root holding CAP_SYS_ADMIN in its
// effective set (docs/design.md, "Namespaces as root").
func MountsAllowed() bool { return syscall.Geteuid() == 0 && HasEffectiveCap(capSysAdmin) }

// HasEffectiveCap reports whether the calling thread holds capability c in
// its effective set (capget, linux/capability.h version 3: two words per
// set).
func HasEffectiveCap(c int) bool {
	hdr := struct {
		version uint32
		pid     int32
	}{0x20080522, 0}
	var data [2]struct{ effective, permitted, inheritable uint32 }
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPGET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return false
	}
	return c >= 0 && c < 64 && data[c/32].effective&(1<<(c%32)) != 0
}

// NamespacesRefused says which system setting refuses this user the user
// namespace a spawn needs; "" when none does (or none is needed).
func NamespacesRefused() string {
	if MountsAllowed() {
		return "" // no user namespace needed
	}
	if readSetting("/proc/sys/user/max_user_namespaces") == "0" {
		return "user namespaces are switched off (user.max_user_namespaces is 0)"
	}
	if syscall.Geteuid() == 0 {
		return ""
	}
	if readSetting("/proc/sys/kernel/unprivileged_userns_clone") == "0" {
		return "unprivileged user namespaces are switched off (kernel.unprivileged_userns_clone is 0)"
	}
	if readSetting("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1" {
		return "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns is 1)"
	}
	return ""
}

// readSetting reads a small /proc/sys file, without its newline.
func readSetting(p string) string {
	fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer syscall.Close(fd)
	var b [32]byte
	n, _ := syscall.Read(fd, b[:])
	for n > 0 && (b[n-1] == '\n' || b[n-1] == ' ') {
		n--
	}
	if n < 0 {
		n = 0
	}
	return string(b[:n])
}

// LandlockABI asks the kernel for its Landlock ABI; 0 when Landlock is
// missing or disabled.
func LandlockABI() int {
	r, _, e := syscall.RawSyscall(sysLandlockCreateRuleset, 0, 0, landlockRulesetVersion)
	if e != 0 {
		return 0
	}
	return int(r)
}

// start starts the helper as the sandbox package would (its helperFor):
// its streams are the agent's stdin and stdout and a pipe for stderr, read
// by the agent, which keeps its end to recognise refusals. Nil on any
// failure: the sandbox package then starts one itself, and reports what
// fails.
func start(ns, userns bool) *Helper {
	var policy, status, stderr [2]int
	if syscall.Pipe2(policy[:], syscall.O_CLOEXEC) != nil {
		return nil
	}
	if syscall.Pipe2(status[:], syscall.O_CLOEXEC) != nil {
		closeAll(policy[:])
		return nil
	}
	if syscall.Pipe2(stderr[:], syscall.O_CLOEXEC) != nil {
		closeAll(policy[:], status[:])
		return nil
	}
	pid, err := syscall.ForkExec("/proc/self/exe", []string{"agent-sandbox"}, &syscall.ProcAttr{
		Env:   HelperEnv(),
		Files: []uintptr{0, 1, uintptr(stderr[1]), uintptr(policy[0]), uintptr(status[1])},
		Sys:   HelperAttr(ns, false, userns),
	})
	syscall.Close(policy[0])
	syscall.Close(status[1])
	syscall.Close(stderr[1])
	if err != nil {
		closeAll([]int{policy[1], status[0], stderr[0]})
		return nil
	}
	return &Helper{Pid: pid, PolicyW: policy[1], StatusR: status[0], StderrR: stderr[0], NS: ns, UserNS: ns && userns}
}

// HelperEnv is the helper's whole environment: the mode's variable, one
// P and no collector (it lives for a millisecond). The command's own is
// in its policy.
func HelperEnv() []string { return []string{helperEnv + "=1", "GOMAXPROCS=1", "GOGC=off"} }

// HelperAttr is how every helper is started, here at init and by the
// sandbox package's spawns alike: a session of its own; in new mount (and,
// with netns, network) namespaces when ns; inside a user namespace that
// owns them when userns, holding as ambient only what it needs there
// (mounts, the loopback interface, emptying the bounding set, its ID
// maps), all dropped before the command's exec.
func HelperAttr(ns, netns, userns bool) *syscall.SysProcAttr {
	sys := &syscall.SysProcAttr{Setsid: true}
	if !ns {
		return sys
	}
	sys.Cloneflags = syscall.CLONE_NEWNS
	if netns {
		sys.Cloneflags |= syscall.CLONE_NEWNET
	}
	if userns {
		// vfork, as without a user namespace: syscall.ForkExec forks
		// whenever one is asked for, since a child whose ID maps the
		// parent writes must wait for them, but the helper writes its own
		// (docs/design.md, "The helper maps its own IDs"). A fork copies
		// the agent's page tables and makes its next write to each page a
		// fault: 0.5 ms of every unprivileged start.
		sys.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_VM | syscall.CLONE_VFORK
		sys.AmbientCaps = []uintptr{capSysAdmin, capNetAdmin, capSetPcap}
	}
	return sys
}

func closeAll(fds ...[]int) {
	for _, f := range fds {
		for _, fd := range f {
			syscall.Close(fd)
		}
	}
}
