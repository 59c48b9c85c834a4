package sandbox

import (
	"agent/internal/sandbox/confine"
	"agent/internal/sandbox/early"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
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
//
// Not when a helper was started at init and adopted (AdoptEarly): that
// process is started already, and the check would cost agent sandbox run
// a process start it does not need; a box that cannot use that helper
// makes the check when it starts its own.
var warmProcessStart = sync.OnceFunc(func() {
	if earlyAdopted.Load() {
		return
	}
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
var mountsAllowed = sync.OnceValue(early.MountsAllowed)

// NoUserNamespace reports whether spawns here make their namespaces without
// a user namespace (root holding CAP_SYS_ADMIN), for agent sandbox check.
func NoUserNamespace() bool { return mountsAllowed() }

// Detect says what this machine offers without starting anything: the
// Landlock ABI and seccomp are asked of the kernel; namespaces are known
// once a spawn or Probe has tried them (the system settings that refuse
// them are read at once).
func Detect() Support {
	c := currentCaps()
	s := Support{KernelABI: early.LandlockABI(), Arch: runtime.GOARCH}
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

// namespacesRefused says which system setting refuses the user namespace
// a spawn needs ("" when none does): early's reading, which the helper
// started at init goes by too.
func namespacesRefused() string { return early.NamespacesRefused() }

// helperStart is a helper being started for a command: the command's
// exec.Cmd turned into the helper's (prepareHelper, helperFor), with the
// pipes that carry its policy and its status.
type helperStart struct {
	cmd              *exec.Cmd // nil for a helper started at init
	early            *Early    // its adoption then
	policyW, statusR *os.File
	policyR, statusW *os.File
	// The namespaces it starts in (userns: a user namespace of its own).
	ns, netns, userns bool
}

// prepareHelper completes pol with the command cmd describes (describe)
// and turns cmd into the helper's command, in the namespaces pol asks for.
func prepareHelper(cmd *exec.Cmd, pol *Policy) (*helperStart, error) {
	if err := describe(pol, cmd); err != nil {
		return nil, err
	}
	return helperFor(cmd, pol.Namespaces, pol.NetNamespace())
}

// describe puts the command of cmd (as exec.Command built it: Path, Args,
// Env, Dir) in the policy, for the helper to exec.
func describe(pol *Policy, cmd *exec.Cmd) error {
	pol.Path = cmd.Path
	if len(cmd.Args) > 0 && !strings.Contains(cmd.Args[0], "/") && cmd.Path != cmd.Args[0] {
		// exec.Command resolved the name in the agent's PATH (and may
		// have failed to); the helper resolves it again in the command's
		// own.
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
			return err
		}
		pol.Dir = wd
	}
	return nil
}

// helperFor turns cmd (its streams, Cancel and WaitDelay kept) into the
// helper's command, to start in a new mount namespace when ns says so and
// a new network namespace too when netns does.
func helperFor(cmd *exec.Cmd, ns, netns bool) (*helperStart, error) {
	h := &helperStart{cmd: cmd, ns: ns, netns: ns && netns}
	var err error
	if h.policyR, h.policyW, err = os.Pipe(); err != nil {
		return nil, err
	}
	if h.statusR, h.statusW, err = os.Pipe(); err != nil {
		h.policyR.Close()
		h.policyW.Close()
		return nil, err
	}
	cmd.Err = nil // exec.Command's lookup in the agent's PATH: describe
	cmd.Path = "/proc/self/exe"
	cmd.Args = []string{"agent-sandbox"}
	cmd.Env = early.HelperEnv()
	cmd.Dir = ""
	cmd.ExtraFiles = []*os.File{h.policyR, h.statusW}
	// Anyone but root holding CAP_SYS_ADMIN needs a user namespace to own
	// the others; the helper maps its IDs itself (confine.mapIDs), so it
	// need not wait for the agent before its exec.
	h.userns = h.ns && !mountsAllowed()
	cmd.SysProcAttr = early.HelperAttr(h.ns, h.netns, h.userns)
	return h, nil
}

// fits reports whether the helper started in the namespaces pol needs.
func (h *helperStart) fits(pol *Policy) bool {
	return h.ns == pol.Namespaces && h.netns == (pol.Namespaces && pol.NetNamespace())
}

// Early is the helper `agent sandbox run` started while the agent was
// initialising (package early), adopted for its command: the two program
// starts overlap, and the helper's with the agent's reading of its
// settings and making of its box (docs/design.md, "agent sandbox run
// starts its helper at init"). Box.Start uses it when it started in the
// namespaces the policy needs and ends it otherwise; the Run then waits
// through it (Run.Wait), as the helper is not an exec.Cmd of this process.
type Early struct {
	h      *helperStart
	pid    int
	used   bool // taken or ended
	taken  bool // its Run waits for it
	proc   *os.Process
	stderr *os.File
	copied chan struct{} // closed when the helper's stderr is copied out
	ctx    context.Context

	state *os.ProcessState
	err   error
}

// AdoptEarly returns the helper started at init, if any: its stderr is
// copied to stderr from now on, and ctx's end interrupts its command's
// process group (SIGINT, then SIGKILL after waitDelay) as
// exec.CommandContext's Cancel and WaitDelay would.
func AdoptEarly(ctx context.Context, stderr io.Writer) *Early {
	eh := early.Take()
	if eh == nil {
		return nil
	}
	earlyAdopted.Store(true)
	e := &Early{pid: eh.Pid, copied: make(chan struct{}), ctx: ctx}
	e.h = &helperStart{early: e, policyW: os.NewFile(uintptr(eh.PolicyW), "policy"), statusR: os.NewFile(uintptr(eh.StatusR), "status"),
		ns: eh.NS, userns: eh.UserNS}
	// Non-blocking, so that closing it ends the copy's read (a process the
	// command left behind may hold the other end: wait).
	syscall.SetNonblock(eh.StderrR, true)
	e.stderr = os.NewFile(uintptr(eh.StderrR), "stderr")
	go func() {
		defer close(e.copied)
		io.Copy(stderr, e.stderr)
	}()
	// The process handle by pid, as os.FindProcess makes one where pidfds
	// are not available (newPIDProcess): it waits with wait4 and signals by
	// pid, which cannot be reused before this process, its parent, has
	// waited. os.FindProcess would first check, once per process, that
	// pidfds work, by starting a throwaway child: a process start more
	// (docs/performance.md, "Sandbox").
	e.proc = &os.Process{Pid: e.pid}
	return e
}

// earlyAdopted is set once AdoptEarly has returned a helper.
var earlyAdopted atomic.Bool

// waitDelay is how long an interrupted command has to end before it is
// killed, and how long its stderr may stay open after it ended (a
// background process holding it), as sandboxCmd's WaitDelay.
const waitDelay = 2 * time.Second

// wait waits for the helper's process (the command once exec'd) and for
// its stderr; idempotent.
func (e *Early) wait() error {
	if e.state != nil || e.err != nil {
		return e.err
	}
	// Once the process is reaped its pid, and so its group's, may be
	// another's: no signal goes to it after that (reaped, under mu).
	var mu sync.Mutex
	reaped := false
	signal := func(sig syscall.Signal) {
		mu.Lock()
		defer mu.Unlock()
		if !reaped {
			syscall.Kill(-e.pid, sig)
		}
	}
	var kill *time.Timer
	stop := context.AfterFunc(e.ctx, func() {
		signal(syscall.SIGINT)
		mu.Lock()
		if !reaped {
			kill = time.AfterFunc(waitDelay, func() { signal(syscall.SIGKILL) })
		}
		mu.Unlock()
	})
	defer stop()
	// The reap itself is held off while a signal goes out (wait4 after
	// waitid's WNOWAIT, as os does).
	e.state, e.err = e.waitReaped(&mu, &reaped)
	mu.Lock()
	if kill != nil {
		kill.Stop()
	}
	mu.Unlock()
	select {
	case <-e.copied:
	case <-time.After(waitDelay):
		e.stderr.Close() // something the command started holds its stderr
		<-e.copied
	}
	e.stderr.Close()
	if e.err == nil && !e.state.Success() {
		e.err = &exec.ExitError{ProcessState: e.state}
	}
	return e.err
}

// waitReaped waits until the process has ended, sets *reaped under mu
// (from then on no signal goes to its pid), and reaps it. Until the reap
// the pid stays the ended process's, so a signal sent before is harmless.
func (e *Early) waitReaped(mu *sync.Mutex, reaped *bool) (*os.ProcessState, error) {
	const pPID, wNOWAIT = 1, 0x1000000
	var info [128]byte // siginfo_t
	for {
		_, _, en := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(e.pid), uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|wNOWAIT, 0, 0)
		if en != syscall.EINTR {
			break // on another error, Wait below says it
		}
	}
	mu.Lock()
	*reaped = true
	mu.Unlock()
	return e.proc.Wait()
}

// take returns the early helper when it started in the namespaces pol
// needs, and ends it otherwise (nil).
func (e *Early) take(pol *Policy) *helperStart {
	if e == nil || e.used {
		return nil
	}
	e.used = true
	if !e.h.fits(pol) {
		e.h.end()
		return nil
	}
	e.taken = true
	return e.h
}

// release ends a helper take returned whose command then could not be
// described: Close waits for it.
func (e *Early) release() {
	e.taken = false
	e.h.end()
}

// Close ends the helper if Box.Start has not taken it (a caller that
// returns before starting its command), and waits for it: the agent exits
// next, and must leave no child behind; idempotent.
func (e *Early) Close() {
	if e == nil || e.taken {
		return
	}
	if !e.used {
		e.used = true
		e.h.end()
	}
	e.h.reap()
}

// EndEarly ends and waits for the helper started at init when nothing
// adopted it (the command line was refused before agent sandbox run ran):
// main calls it before exiting, so that no child is left behind.
func EndEarly() {
	eh := early.Take()
	if eh == nil {
		return
	}
	syscall.Close(eh.PolicyW) // the helper reads no policy and ends
	syscall.Close(eh.StatusR)
	syscall.Close(eh.StderrR)
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(eh.Pid, &ws, 0, nil); err != syscall.EINTR {
			return
		}
	}
}

// discard ends an early helper Box.Start did not take. Close waits for it
// (not a goroutine, which the agent's exit could outrun, leaving the
// helper to whoever adopts orphans).
func (e *Early) discard() {
	if e == nil || e.used {
		return
	}
	e.used = true
	e.h.end()
}

// statusError is the failure a helper reported: its message, which wraps
// its errno; the errno's text is added only where the message lacks it.
func statusError(st confine.Status) error {
	if st.Errno == 0 {
		return errors.New(st.Msg)
	}
	en := syscall.Errno(st.Errno)
	if st.Msg == en.Error() || strings.HasSuffix(st.Msg, ": "+en.Error()) {
		return &errnoError{msg: st.Msg, errno: en}
	}
	return fmt.Errorf("%s: %w", st.Msg, en)
}

// errnoError is a message that already says its errno.
type errnoError struct {
	msg   string
	errno syscall.Errno
}

func (e *errnoError) Error() string { return e.msg }
func (e *errnoError) Unwrap() error { return e.errno }

// reap waits for a helper that failed, or that ended untaken (end).
func (h *helperStart) reap() {
	if h.early != nil {
		h.early.wait()
		return
	}
	h.cmd.Wait()
}

// end closes the helper's policy and status pipes: a helper still waiting
// for its policy reads none and exits.
func (h *helperStart) end() {
	h.policyW.Close()
	h.statusR.Close()
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
		if h.ns && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS) || errors.Is(err, syscall.EACCES)) {
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
func (h *helperStart) handOver(pol *Policy) error {
	if h.userns {
		pol.UserNS, pol.UID, pol.GID = true, os.Getuid(), os.Getgid()
	}
	data, err := pol.Encode()
	if err != nil {
		// The helper gets nothing, says so and ends; the reason is ours.
		h.policyW.Close()
		io.Copy(io.Discard, h.statusR)
		h.statusR.Close()
		h.reap()
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
	h.reap()
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
	serr := statusError(st)
	switch st.Stage {
	case "namespaces":
		return fmt.Errorf("%w: %v", errNamespaces, serr)
	case "exec", "chdir":
		return &CommandError{Err: serr}
	}
	return &SetupError{Stage: st.Stage, Err: serr}
}
