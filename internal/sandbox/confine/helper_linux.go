package confine

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"syscall"
)

// The helper is dispatched when this package initialises: before main,
// and before the packages of the agent that the helper does not need
// initialise (this package imports little, and the runtime initialises
// packages in import-path order as soon as their imports are ready).
// That saves every confined command most of the agent's start-up
// (docs/design.md, "The sandbox helper is the agent's own binary";
// docs/performance.md, "Sandbox").
func init() {
	if IsHelper() {
		os.Exit(helperMain())
	}
}

// IsHelper reports whether this process was started as the sandbox helper.
func IsHelper() bool { return os.Getenv(EnvVar) == "1" }

// helperMain runs the helper: it confines its own thread and execs the
// command of the policy on its pipe. It returns only on a failure, with
// the exit code the process should end with (125); the failure is on the
// status pipe already.
//
// It runs only from init: while packages initialise, the runtime keeps
// the main goroutine on the main thread, so every restriction below is
// the thread's that execs. runtime.LockOSThread would add nothing but
// the runtime's template thread: one more thread to start, and to end at
// the exec (docs/performance.md, "Sandbox").
func helperMain() int {
	status := os.NewFile(StatusFD, "status")
	fail := func(stage string, err error) int {
		st := Status{Stage: stage, Msg: err.Error()}
		var en syscall.Errno
		if errors.As(err, &en) {
			st.Errno = int(en)
		}
		st.Msg = strings.ReplaceAll(st.Msg, "\x00", " ")
		if status != nil {
			status.Write(st.Encode())
		} else {
			fmt.Fprintf(os.Stderr, "agent: sandbox helper: %s: %v\n", stage, err)
		}
		return 125
	}
	in := os.NewFile(PolicyFD, "policy")
	if in == nil || status == nil {
		return fail("policy", errors.New("not started by the agent (no policy pipe)"))
	}
	data, err := readPolicy(in)
	in.Close()
	if err != nil {
		return fail("policy", err)
	}
	p, err := DecodePolicy(data)
	if err != nil {
		return fail("policy", err)
	}
	if p.Namespaces {
		if err := setupNamespaces(p); err != nil {
			return fail("namespaces", err)
		}
		p.Deny = nil // hidden by the mounts: Landlock need not list around them
	}
	path := p.Path
	if !p.Probe {
		if path, err = lookPath(p.Path, envValue(p.Env, "PATH"), p.Dir); err != nil {
			return fail("exec", err)
		}
		if err := syscall.Chdir(p.Dir); err != nil {
			return fail("chdir", err)
		}
	}
	if err := dropCapabilities(); err != nil {
		return fail("capabilities", err)
	}
	if err := prctl(prSetNoNewPrivs, 1, 0); err != nil {
		return fail("no_new_privs", err)
	}
	if err := closeDescriptors(); err != nil {
		return fail("descriptors", err)
	}
	if p.ABI > 0 {
		if err := applyLandlock(p, osLister); err != nil {
			return fail("landlock", err)
		}
	}
	if p.Seccomp {
		if err := installFilter(p); err != nil {
			return fail("seccomp", err)
		}
	}
	if p.Probe {
		status.Write((&Status{OK: true}).Encode())
		return 0
	}
	err = syscall.Exec(path, p.Args, p.Env)
	return fail("exec", err)
}

// lookPath finds a command the way a shell would, in the command's own
// PATH (not the agent's), relative to its own folder.
func lookPath(file, pathEnv, dir string) (string, error) {
	if strings.Contains(file, "/") {
		if !path.IsAbs(file) {
			file = path.Join(dir, file)
		}
		return file, nil
	}
	for _, d := range strings.Split(pathEnv, ":") {
		if d == "" {
			d = "."
		}
		if !path.IsAbs(d) {
			d = path.Join(dir, d)
		}
		p := path.Join(d, file)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: executable file not found in $PATH: %w", file, syscall.ENOENT)
}
