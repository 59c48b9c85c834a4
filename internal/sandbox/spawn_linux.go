package sandbox

import (
	"agent/internal/sandbox/confine"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
)

// nsState is what the first spawn (or probe) with namespaces learned, for
// the whole process: later spawns do not try again.
var nsState struct {
	sync.Mutex
	known, works bool
	err          string
}

func namespacesLearned(works bool, why string) {
	nsState.Lock()
	defer nsState.Unlock()
	if nsState.known {
		return
	}
	nsState.known, nsState.works, nsState.err = true, works, why
}

// warmProcessStart runs, in the background and once, the check the os
// package makes before a process's first child: whether pidfds work, by
// starting a throwaway child of its own. Begun when a box is made, it is
// done by the time the helper starts instead of delaying it
// (docs/performance.md, "Sandbox").
var warmProcessStart = sync.OnceFunc(func() {
	go func() {
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			p.Release()
		}
	}()
})

// mountsAllowed reports whether this process may make mount and network
// namespaces without a user namespace: root holding CAP_SYS_ADMIN. Then
// the helper starts without one, so Go starts it with vfork instead of
// copying the agent's memory (os/exec forks whenever a user namespace is
// asked for), and it needs no ID maps (docs/design.md, "Namespaces as
// root"). Root in a container without the capability takes the user
// namespace's way, as anyone else.
var mountsAllowed = sync.OnceValue(canMount)

// NoUserNamespace reports whether spawns here make their namespaces without
// a user namespace (root holding CAP_SYS_ADMIN), for agent sandbox check.
func NoUserNamespace() bool { return mountsAllowed() }

// canMount: root with CAP_SYS_ADMIN in its effective set.
func canMount() bool { return os.Geteuid() == 0 && confine.HasEffectiveCap(capSysAdmin) }

// Detect says what this machine offers without starting anything: the
// Landlock ABI and seccomp are asked of the kernel; namespaces are known
// once a spawn or Probe has tried them (the system settings that refuse
// them are read at once).
func Detect() Support {
	c := currentCaps()
	s := Support{KernelABI: confine.KernelABI(), Arch: runtime.GOARCH}
	s.ABI = s.KernelABI
	if c.abi >= 0 && c.abi < s.ABI {
		s.ABI = c.abi
	}
	s.Seccomp = confine.SeccompAvailable() && !c.noSeccomp
	if c.noNamesp {
		s.NamespacesKnown, s.NamespaceErr = true, "switched off by the test cap"
		return s
	}
	if why := namespacesRefused(); why != "" {
		s.NamespacesKnown, s.NamespaceErr = true, why
		return s
	}
	nsState.Lock()
	s.NamespacesKnown, s.Namespaces, s.NamespaceErr = nsState.known, nsState.works, nsState.err
	nsState.Unlock()
	return s
}

// namespacesRefused reads the system settings that refuse unprivileged
// user namespaces.
func namespacesRefused() string {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	if mountsAllowed() {
		return "" // no user namespace needed
	}
	if read("/proc/sys/user/max_user_namespaces") == "0" {
		return "user namespaces are switched off (user.max_user_namespaces is 0)"
	}
	if os.Geteuid() == 0 {
		return ""
	}
	if read("/proc/sys/kernel/unprivileged_userns_clone") == "0" {
		return "unprivileged user namespaces are switched off (kernel.unprivileged_userns_clone is 0)"
	}
	if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1" {
		return "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns is 1)"
	}
	return ""
}

// helperCmd turns cmd (as exec.Command built it: Path, Args, Env, Dir and
// the caller's streams) into the helper's command, and returns what
// startHelper needs to finish the start.
type helperStart struct {
	cmd              *exec.Cmd
	pol              *Policy
	policyW, statusR *os.File
	policyR, statusW *os.File
}

func prepareHelper(cmd *exec.Cmd, pol *Policy) (*helperStart, error) {
	// exec.Command looked the name up in the agent's PATH and may have
	// failed; the helper looks it up again in the command's own PATH.
	cmd.Err = nil
	pol.Path = cmd.Path
	if len(cmd.Args) > 0 && !strings.Contains(cmd.Args[0], "/") && cmd.Path != cmd.Args[0] {
		// exec.Command resolved the name in the agent's PATH; the helper
		// resolves it again in the command's own.
		pol.Path = cmd.Args[0]
	}
	pol.Args = cmd.Args
	pol.Env = cmd.Env
	if pol.Env == nil {
		pol.Env = os.Environ()
	}
	pol.Dir = cmd.Dir
	if pol.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		pol.Dir = wd
	}
	h := &helperStart{cmd: cmd, pol: pol}
	var err error
	if h.policyR, h.policyW, err = os.Pipe(); err != nil {
		return nil, err
	}
	if h.statusR, h.statusW, err = os.Pipe(); err != nil {
		h.policyR.Close()
		h.policyW.Close()
		return nil, err
	}
	cmd.Path = "/proc/self/exe"
	cmd.Args = []string{"agent-sandbox"}
	// One P and no collector: the helper lives for a millisecond.
	cmd.Env = []string{confine.EnvVar + "=1", "GOMAXPROCS=1", "GOGC=off"}
	cmd.Dir = ""
	cmd.ExtraFiles = []*os.File{h.policyR, h.statusW}
	attr := &syscall.SysProcAttr{Setsid: true}
	if pol.Namespaces {
		attr.Cloneflags = syscall.CLONE_NEWNS
		if pol.NetNamespace() {
			attr.Cloneflags |= syscall.CLONE_NEWNET
		}
		if !mountsAllowed() {
			// Anyone else needs a user namespace to own the others.
			// The helper maps its IDs itself (confine.mapIDs): with the
			// maps left to the agent, the child would wait for the agent
			// to write them before its exec. Until then it is nobody in
			// the new namespace, so the exec keeps only what is ambient:
			// what it needs there (mounts, the loopback interface,
			// emptying the bounding set, and the maps). It drops them
			// all before the command's exec.
			attr.Cloneflags |= syscall.CLONE_NEWUSER
			pol.UserNS, pol.UID, pol.GID = true, os.Getuid(), os.Getgid()
			attr.AmbientCaps = []uintptr{capSysAdmin, capNetAdmin, capSetPcap}
		}
	}
	cmd.SysProcAttr = attr
	return h, nil
}

func (h *helperStart) closeAll() {
	for _, f := range []*os.File{h.policyR, h.policyW, h.statusR, h.statusW} {
		f.Close()
	}
}

// spawn starts the helper, which waits for its policy (handOver). On a
// failure nothing runs and every pipe is closed.
func (h *helperStart) spawn() error {
	if err := h.cmd.Start(); err != nil {
		h.closeAll()
		if h.pol.Namespaces && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS) || errors.Is(err, syscall.EACCES)) {
			return fmt.Errorf("%w: %v", errNamespaces, err)
		}
		return &SetupError{Stage: "start", Err: err}
	}
	h.policyR.Close()
	h.statusW.Close()
	return nil
}

// handOver sends the started helper its policy and waits for the exec (or
// for its failure). On a failure the helper has been reaped.
func (h *helperStart) handOver() error {
	data, err := h.pol.Encode()
	if err != nil {
		// The helper gets nothing, says so and ends; the reason is ours.
		h.policyW.Close()
		io.Copy(io.Discard, h.statusR)
		h.statusR.Close()
		h.cmd.Wait()
		return &SetupError{Stage: "policy", Err: err}
	}
	_, werr := h.policyW.Write(data)
	h.policyW.Close()
	msg, rerr := io.ReadAll(io.LimitReader(h.statusR, 64<<10))
	h.statusR.Close()
	if len(msg) == 0 && rerr == nil && werr == nil {
		return nil // the exec happened
	}
	// Something failed before the exec: the helper exits on its own.
	h.cmd.Wait()
	st, derr := confine.DecodeStatus(msg)
	if len(msg) == 0 || derr != nil {
		why := errors.Join(werr, rerr)
		if why == nil {
			why = errors.New("the helper ended without a word")
		}
		return &SetupError{Stage: "helper", Err: why}
	}
	if st.OK {
		return nil
	}
	serr := error(errors.New(st.Msg))
	if st.Errno != 0 {
		serr = fmt.Errorf("%s: %w", st.Msg, syscall.Errno(st.Errno))
	}
	switch st.Stage {
	case "namespaces":
		return fmt.Errorf("%w: %v", errNamespaces, serr)
	case "exec", "chdir":
		return &CommandError{Err: serr}
	}
	return &SetupError{Stage: st.Stage, Err: serr}
}
