package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"agent/internal/securefile"
)

// Options configure a Box.
type Options struct {
	Home      string // the user's home folder
	Workspace string // the workspace's real path
	// ID names the private temporary folder (the session's id).
	ID string
	// RunDirs are folders holding the agent's control sockets: denied like
	// the default denied paths.
	RunDirs []string
	// Protected are protected besides the defaults (absolute).
	Protected []string
	// Support is what the machine offers; nil: Detect.
	Support *Support
	// Record receives one record per confined spawn, guard check and
	// escalation decision (docs/sandbox.md, "What is recorded"); nil
	// drops them. It may be called from several goroutines.
	Record func(Record)
	// Notice receives what the user should hear once (namespaces
	// unavailable, a loopback network that cannot be had). nil drops it.
	Notice func(string)
}

// Box is the sandbox of one session: its private folders, its guard, what
// the machine offers, and the spawns. Safe for concurrent use.
type Box struct {
	opts  Options
	tmp   string // private TMPDIR, removed by Close
	cache string // private per-workspace build caches
	guard *Guard

	mu        sync.Mutex
	sup       Support
	noticed   map[string]bool
	closed    bool
	spareOnce sync.Once
}

// Record is what is recorded of one confined spawn, guard check or
// escalation (docs/sandbox.md, "What is recorded").
type Record struct {
	Event      string   `json:"event"`             // "spawn", "guard", "escalation"
	Label      string   `json:"label,omitempty"`   // "Bash", "mcp:NAME", "helper:NAME"
	Command    string   `json:"command,omitempty"` // the Bash command
	Tier       string   `json:"tier,omitempty"`
	ABI        int      `json:"abi,omitempty"`
	Mode       string   `json:"mode,omitempty"`
	Network    string   `json:"network,omitempty"`
	PolicyHash string   `json:"policyHash,omitempty"`
	Exit       *int     `json:"exit,omitempty"`
	Signal     string   `json:"signal,omitempty"`
	Setup      string   `json:"setup,omitempty"` // a setup failure
	Violations []string `json:"violations,omitempty"`
	Restored   []string `json:"restored,omitempty"`
	Escalation string   `json:"escalation,omitempty"` // what was asked: "network", "write:/p"
	Decision   string   `json:"decision,omitempty"`   // of an escalation: allowed, denied, …
}

// SandboxDir is where the private folders live: ~/.agent/sandbox, denied
// to every command but for the spawn's own folders.
func SandboxDir(home string) string { return filepath.Join(home, ".agent", "sandbox") }

// New makes a session's box: its private temporary folder (0700, removed
// by Close) and its workspace's build caches.
func New(opts Options) (*Box, error) {
	warmProcessStart()
	b := &Box{opts: opts, noticed: map[string]bool{}}
	if opts.Support != nil {
		b.sup = *opts.Support
	} else {
		b.sup = Detect()
	}
	root := SandboxDir(opts.Home)
	sum := sha256.Sum256([]byte(opts.Workspace))
	b.tmp = filepath.Join(root, "tmp", safeName(opts.ID))
	b.cache = filepath.Join(root, "cache", hex.EncodeToString(sum[:8]))
	for _, d := range []string{filepath.Join(opts.Home, ".agent"), root, filepath.Join(root, "tmp"), filepath.Join(root, "cache"), b.cache} {
		if err := securefile.EnsureDir(d); err != nil {
			return nil, fmt.Errorf("sandbox folders: %w", err)
		}
	}
	if err := makeTmp(b.tmp); err != nil {
		return nil, fmt.Errorf("sandbox temporary folder: %w", err)
	}
	b.guard = NewGuard(GuardOptions{Workspace: opts.Workspace, Home: opts.Home, ID: safeName(opts.ID), Extra: opts.Protected, Skip: []string{root}})
	return b, nil
}

func safeName(id string) string {
	id = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, id)
	if id == "" {
		id = fmt.Sprintf("run-%d-%d", os.Getpid(), time.Now().UnixNano())
	}
	return id
}

// spares is how many fresh private folders are kept ready for the next
// boxes: where folders live on ext4, the rename that takes one costs a
// fifth of the mkdir it replaces (docs/performance.md, "Sandbox"). A spare
// is made new, in the background while a command runs (refillSpares),
// never a folder a box used: a process a command left running keeps its
// folder (its working directory, its Landlock rule), and must not reach
// another session's files through it. Their names start with a dot, which
// no box ID gives.
const spares = 2

func spareName(tmp string, i int) string {
	return filepath.Join(filepath.Dir(tmp), ".spare-"+strconv.Itoa(i))
}

// makeTmp makes the private folder tmp, mode 0700: one left by a box of
// the same ID (a process that ended without closing its box) is kept, a
// spare is taken where there is one, and a new one made otherwise. What is
// taken is an empty folder of this user's, never a link or a file.
func makeTmp(tmp string) error {
	if fi, err := os.Lstat(tmp); err == nil {
		if fi.IsDir() && securefile.OwnedByMe(fi) {
			return os.Chmod(tmp, 0o700)
		}
		// A link or a file where the folder goes: gone, not followed.
		if err := os.Remove(tmp); err != nil {
			return err
		}
	}
	for i := 0; i < spares; i++ {
		if os.Rename(spareName(tmp, i), tmp) != nil {
			continue
		}
		// Only this user writes the folder the spares are in; still, what
		// was taken must be an empty folder of this user's, mode 0700.
		if fi, err := os.Lstat(tmp); err == nil && fi.IsDir() && securefile.OwnedByMe(fi) && fi.Mode().Perm() == 0o700 {
			if f, err := os.Open(tmp); err == nil {
				names, _ := f.Readdirnames(1)
				f.Close()
				if len(names) == 0 {
					return nil
				}
			}
		}
		if err := removeTmp(tmp); err != nil {
			return err
		}
		break
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	return nil
}

// refillSpares makes the spares that are missing, once per box: fresh
// folders no process has been given (a confined command cannot reach
// them: they are not among its folders, and ~/.agent is denied to it).
func (b *Box) refillSpares() {
	b.spareOnce.Do(func() {
		go func() {
			for i := 0; i < spares; i++ {
				sp := spareName(b.tmp, i)
				if _, err := os.Lstat(sp); errors.Is(err, fs.ErrNotExist) {
					os.Mkdir(sp, 0o700)
				}
			}
		}()
	})
}

// removeTmp removes a private folder and what it holds (a link at its
// place, not what it leads to), opening up the read-only folders a
// command may have left.
func removeTmp(tmp string) error {
	if os.RemoveAll(tmp) == nil {
		return nil
	}
	filepath.WalkDir(tmp, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(tmp)
}

// Close removes the private temporary folder (sandbox.md §3); idempotent.
func (b *Box) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	return removeTmp(b.tmp)
}

// Support is what the machine offers, as this box has learned it.
func (b *Box) Support() Support {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sup
}

// TmpDir is the private temporary folder.
func (b *Box) TmpDir() string { return b.tmp }

// Guard is the box's guard of the protected paths.
func (b *Box) Guard() *Guard { return b.guard }

// Env is a confined command's environment made from env: scrubbed (extra
// names more), and pointed at the private folders.
func (b *Box) Env(env, extra []string) []string {
	return setVars(ScrubEnv(env, extra), privateVars(b.tmp, b.cache))
}

// PrivateEnv points env at the private folders and removes nothing: for a
// process whose whole environment was named by whoever started it (an MCP
// server's authority).
func (b *Box) PrivateEnv(env []string) []string {
	return setVars(env, privateVars(b.tmp, b.cache))
}

func (b *Box) notice(key, msg string) {
	b.mu.Lock()
	seen := b.noticed[key]
	b.noticed[key] = true
	b.mu.Unlock()
	if !seen && b.opts.Notice != nil {
		b.opts.Notice(msg)
	}
}

// Request describes one confined spawn.
type Request struct {
	Label   string // "Bash", "mcp:NAME", "helper:NAME"
	Command string // the Bash command, for the record
	Profile Profile
	// Escalation is what an allowed escalation granted ("network",
	// "write:/p"), for the record.
	Escalation string
	// Guard checks the protected paths around the spawn (Before now,
	// After at Finish).
	Guard bool
	// Early is the helper started at init for this command (AdoptEarly);
	// Start uses it or ends it.
	Early *Early
}

// Run is a confined command that has started.
type Run struct {
	// Cmd is the command's (the helper's, which became the command); nil
	// when the run took a helper started at init (Request.Early): Wait and
	// State serve both.
	Cmd     *exec.Cmd
	early   *Early
	box     *Box
	req     Request
	pol     *Policy
	tier    string
	guarded bool
}

// Start starts a command confined as req says. build makes the command
// the way exec.Command would (Path, Args, Env, Dir, its streams, Cancel,
// WaitDelay); Start may call it twice, when a first attempt with
// namespaces fails before anything ran. A profile that does not confine
// (danger-full-access) runs the command as built.
//
// A *SetupError means the sandbox could not be set up: the command did not
// run, and the caller must not run it unconfined in its place. A
// *CommandError means the command itself could not be started.
func (b *Box) Start(build func() *exec.Cmd, req Request) (*Run, error) {
	return b.start(build, req, false)
}

// Probe confines a helper that reports success instead of running a
// command: what agent sandbox check runs to show what this machine
// offers. It tries namespaces even when a spawn of this process found
// them unavailable.
func (b *Box) Probe() (Support, error) {
	b.mu.Lock()
	b.sup.NamespacesKnown, b.sup.Namespaces, b.sup.NamespaceErr = false, false, ""
	if c := currentCaps(); c.noNamesp {
		b.sup.NamespacesKnown, b.sup.NamespaceErr = true, "switched off by the test cap"
	} else if why := namespacesRefused(); why != "" {
		b.sup.NamespacesKnown, b.sup.NamespaceErr = true, why
	}
	b.mu.Unlock()
	build := func() *exec.Cmd { return exec.Command("/proc/self/exe") }
	_, err := b.start(build, Request{Label: "probe", Profile: Profile{Mode: WorkspaceWrite}}, true)
	return b.Support(), err
}

func (b *Box) start(build func() *exec.Cmd, req Request, probe bool) (*Run, error) {
	r := &Run{box: b, req: req}
	early := req.Early
	defer early.discard() // when not taken
	if !req.Profile.Confines() || b.Support().Tier() == "none" && b.Support().NamespacesKnown {
		// Nothing to confine with (docs/sandbox.md, "Degrading"): the
		// caller has said so to the user, or refused to run.
		r.Cmd = build()
		r.tier = "none"
		return r, r.Cmd.Start()
	}
	for attempt := 0; ; attempt++ {
		sup := b.Support()
		useNS := sup.Namespaces || !sup.NamespacesKnown
		pol := b.policyHead(req.Profile, sup, useNS)
		cmd := build()
		pol.Probe = probe
		var err error
		h := early.take(pol)
		if h != nil {
			// The helper is running: the command built is only read.
			err = describe(pol, cmd)
			cmd = nil
		} else {
			if h, err = prepareHelper(cmd, pol); err != nil {
				r.unguard()
				return nil, &SetupError{Stage: "start", Err: err}
			}
			// The helper starts first and waits for its policy: the
			// guard's snapshot and the policy's paths are made while its
			// runtime starts, and the command cannot run before the
			// policy is sent (docs/performance.md, "Sandbox").
			err = h.spawn()
		}
		if err == nil {
			// One look at the protected paths serves the snapshot, the
			// binds and the git folders.
			var look Protected
			if req.Guard && !r.guarded || req.Profile.Mode == WorkspaceWrite {
				look = b.guard.Look()
			}
			if req.Guard && !r.guarded {
				b.guard.BeforeLook(look)
				r.guarded = true
			}
			b.policyPaths(pol, req.Profile, useNS, look)
			err = h.handOver(pol)
		} else if h.early != nil {
			h.early.release() // its command could not be described
		}
		if errors.Is(err, errNamespaces) && attempt == 0 {
			b.learnNamespaces(false, err.Error())
			continue
		}
		if err != nil {
			r.unguard()
			b.record(Record{Event: "spawn", Label: req.Label, Command: req.Command, Tier: sup.Tier(), ABI: pol.ABI,
				Mode: pol.Mode.String(), Network: pol.Network.String(), PolicyHash: policyHash(pol), Setup: err.Error(), Escalation: req.Escalation})
			if errors.Is(err, errNamespaces) {
				err = &SetupError{Stage: "namespaces", Err: err}
			}
			return nil, err
		}
		if useNS {
			b.learnNamespaces(true, "")
		}
		if probe {
			cmd.Wait()
		}
		r.Cmd, r.early, r.pol = cmd, h.early, pol
		r.tier = b.Support().Tier()
		b.refillSpares() // while the command runs: off the start's path
		return r, nil
	}
}

// Wait waits for the command to end and for what it wrote to be copied
// out, as exec.Cmd.Wait.
func (r *Run) Wait() error {
	if r.early != nil {
		return r.early.wait()
	}
	return r.Cmd.Wait()
}

// State is how the command ended, once Wait has returned.
func (r *Run) State() *os.ProcessState {
	if r.early != nil {
		return r.early.state
	}
	return r.Cmd.ProcessState
}

func (r *Run) unguard() {
	if r.guarded {
		r.box.guard.After()
		r.guarded = false
	}
}

func (b *Box) learnNamespaces(works bool, why string) {
	namespacesLearned(works, why)
	b.mu.Lock()
	known := b.sup.NamespacesKnown
	if !known {
		b.sup.NamespacesKnown, b.sup.Namespaces, b.sup.NamespaceErr = true, works, why
	}
	b.mu.Unlock()
	if !known && !works {
		b.notice("namespaces", "sandbox: namespaces are not available here ("+why+"); commands are confined by Landlock and seccomp alone")
	}
}

// policyHead is the part of a profile's policy that decides how the
// helper starts (namespaces, the network): no file-system work, so that
// the helper can start before the rest is known (policyPaths).
func (b *Box) policyHead(prof Profile, sup Support, useNS bool) *Policy {
	p := &Policy{
		Mode: prof.Mode, Network: prof.Network, ABI: sup.ABI, Seccomp: sup.Seccomp,
		Namespaces: useNS, Read: []string{"/"}, Devices: DeviceFiles, TmpDir: b.tmp,
		UnixConnect: prof.AllUnixSockets || len(prof.UnixSockets) > 0,
		AgentPid:    os.Getpid(), AgentPgid: syscall.Getpgrp(),
	}
	if currentCaps().failSetup {
		// The test cap's setup failure: a mode the helper refuses, so the
		// spawn fails where a real one would (docs/sandbox.md, "Testing
		// the degrade branches").
		p.Mode = FullAccess + 1
	}
	if currentCaps().failNamesp && useNS {
		// The test cap's namespace failure: a file to put over /tmp,
		// which the helper's mount refuses, as a kernel that does not
		// let it set namespaces up would.
		p.TmpDir = "/proc/self/exe"
	}
	if p.Network == NetLoopback && !useNS {
		b.notice("loopback", "sandbox: the loopback network mode needs namespaces, which are not available here; commands get no network")
		p.Network = NetNone
	}
	return p
}

// policyPaths completes p with the paths of the profile, resolved now:
// what may be written, what is denied, what the namespaces protect (look:
// the guard's look at the protected paths, taken for a workspace-write
// profile).
func (b *Box) policyPaths(p *Policy, prof Profile, useNS bool, look Protected) {
	write := []string{b.tmp, b.cache}
	if prof.Mode == WorkspaceWrite {
		write = append(write, b.opts.Workspace)
		// git keeps a worktree's (or a subfolder's) repository outside
		// the workspace: git commit must still work.
		if look.Common != "" {
			write = append(write, look.GitDir, look.Common)
		}
	}
	write = append(write, prof.Write...)
	r := resolver{}
	p.Write = r.paths(write)
	if len(prof.WriteInside) > 0 {
		ws, _ := r.real(filepath.Clean(b.opts.Workspace))
		for _, w := range r.paths(prof.WriteInside) {
			if ws != "" && (w == ws || strings.HasPrefix(w, ws+"/")) {
				p.Write = append(p.Write, w)
				continue
			}
			b.notice("write-outside:"+w, "sandbox: a project's allowWrite path leads outside the workspace ("+w+"); not writable")
		}
	}
	p.AllowRead = r.paths(prof.AllowRead)
	var deny []string
	for _, d := range DefaultDenyRead {
		deny = append(deny, filepath.Join(b.opts.Home, d))
	}
	deny = append(deny, SandboxDir(b.opts.Home))
	deny = append(deny, b.opts.RunDirs...)
	deny = append(deny, prof.DenyRead...)
	for _, d := range r.paths(deny) {
		if withinAny(d, p.AllowRead) {
			continue // re-opened by allowRead
		}
		p.Deny = append(p.Deny, d)
		if !useNS && withinAny(d, p.Write) {
			b.notice("deny-in-write:"+d, "sandbox: without namespaces, "+d+" (a denied path inside a writable folder) stays readable: Landlock grants a writable folder whole")
		}
	}
	if useNS && prof.Mode == WorkspaceWrite {
		p.Protected = b.guard.ProtectedNow(look)
	}
}

// resolver resolves links as filepath.EvalSymlinks does, remembering what
// it found of every folder on the way: the paths of one policy share most
// of their folders (the home, ~/.agent/sandbox), which EvalSymlinks would
// look at again for each (docs/performance.md, "Sandbox"). An entry is the
// real path, or "" for a path that does not exist.
type resolver map[string]string

// paths resolves the absolute paths of ps that exist, and drops the
// others (a missing path grants or denies nothing; settings diagnostics
// name them).
func (r resolver) paths(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		if real, ok := r.real(filepath.Clean(p)); ok {
			out = append(out, real)
		}
	}
	return out
}

// real resolves the clean absolute path p: its folder first (remembered),
// then its last element, which a link sends to EvalSymlinks.
func (r resolver) real(p string) (string, bool) {
	if p == "/" {
		return p, true
	}
	if v, ok := r[p]; ok {
		return v, v != ""
	}
	var out string
	if dir, ok := r.real(filepath.Dir(p)); ok {
		cand := filepath.Join(dir, filepath.Base(p))
		if fi, err := os.Lstat(cand); err == nil {
			out = cand
			if fi.Mode()&fs.ModeSymlink != 0 {
				out, _ = filepath.EvalSymlinks(cand)
			}
		}
	}
	r[p] = out
	return out, out != ""
}

// Report is what Finish found: the refusals recognised in the output and
// the protected paths restored.
type Report struct {
	Mode       Mode
	Network    NetMode
	Violations []string
	Restored   []Restore
}

// Lines are the report's lines for a tool result or a terminal
// (docs/sandbox.md, "When something is refused").
func (r Report) Lines() []string {
	var out []string
	if len(r.Violations) > 0 {
		out = append(out, fmt.Sprintf("[sandbox (%s, network %s) refused: %s]", r.Mode, r.Network, strings.Join(r.Violations, "; ")))
	}
	if len(r.Restored) > 0 {
		parts := make([]string, len(r.Restored))
		for i, x := range r.Restored {
			parts[i] = x.String()
		}
		out = append(out, "[sandbox: the command changed protected paths, which were restored: "+strings.Join(parts, "; ")+"]")
	}
	return out
}

// Finish ends a run: the protected paths are checked (and restored), the
// output is read for refusals, and the spawn is recorded. state is the
// command's (nil when it did not end normally); output what it printed,
// as far as the caller kept it.
func (r *Run) Finish(state *os.ProcessState, output string) Report {
	rep := Report{Mode: r.req.Profile.Mode, Network: r.req.Profile.Network}
	if r.pol != nil {
		rep.Network = r.pol.Network
		home := r.box.opts.Home
		rep.Violations = recognise(output, policyView{mode: r.pol.Mode, network: r.pol.Network, write: r.pol.Write, deny: r.pol.Deny, home: home, dir: r.pol.Dir})
	}
	if r.guarded {
		rep.Restored = r.box.guard.After()
		r.guarded = false
	}
	if r.box.opts.Record == nil {
		return rep // nobody keeps the record (agent sandbox run)
	}
	rec := Record{Event: "spawn", Label: r.req.Label, Command: r.req.Command, Tier: r.tier,
		Mode: r.req.Profile.Mode.String(), Network: rep.Network.String(), Violations: rep.Violations, Escalation: r.req.Escalation}
	if r.pol != nil {
		rec.ABI, rec.PolicyHash = r.pol.ABI, policyHash(r.pol)
	}
	for _, x := range rep.Restored {
		rec.Restored = append(rec.Restored, x.String())
	}
	if state != nil {
		if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			rec.Signal = ws.Signal().String()
		} else {
			code := state.ExitCode()
			rec.Exit = &code
		}
	}
	r.box.record(rec)
	return rep
}

// Guarded runs f (a call to a long-running confined process: a stdio MCP
// server's tool) between a look at the protected paths before and a check
// after, and records what it restored.
func (b *Box) Guarded(label string, f func()) []Restore {
	b.guard.Before()
	f()
	rs := b.guard.After()
	if len(rs) > 0 {
		rec := Record{Event: "guard", Label: label}
		for _, x := range rs {
			rec.Restored = append(rec.Restored, x.String())
		}
		b.record(rec)
	}
	return rs
}

// RecordEscalation records an escalation's decision.
func (b *Box) RecordEscalation(label, command, needs, decision string) {
	b.record(Record{Event: "escalation", Label: label, Command: command, Escalation: needs, Decision: decision})
}

func (b *Box) record(r Record) {
	if b.opts.Record != nil {
		b.opts.Record(r)
	}
}

// policyHash identifies the limits of a policy, not its command or
// environment: two spawns with the same hash were confined alike (the
// records of docs/sandbox.md, "What is recorded").
func policyHash(p *Policy) string {
	q := *p
	q.Path, q.Args, q.Env, q.Dir, q.AgentPid, q.AgentPgid = "", nil, nil, "", 0, 0
	b, _ := q.Encode() // what is left holds no NUL
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
