package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// The helper's pipes, as ExtraFiles place them.
const (
	policyFD = 3
	statusFD = 4
)

// helperStatus is the one message a helper writes on its status pipe: a
// failure before the exec (or, for a probe, its success). An exec that
// happens closes the pipe with nothing written.
type helperStatus struct {
	Stage string `json:"stage,omitempty"`
	Errno int    `json:"errno,omitempty"`
	Msg   string `json:"msg,omitempty"`
	OK    bool   `json:"ok,omitempty"`
}

// IsHelper reports whether this process was started as the sandbox helper.
// main calls it first thing, before parsing flags (docs/design.md, "The
// sandbox helper is the agent's own binary").
func IsHelper() bool { return os.Getenv(helperEnv) == "1" }

// HelperMain runs the helper: it confines its own thread and execs the
// command of the policy on its pipe. It returns only on a failure, with
// the exit code the process should end with (125); the failure is on the
// status pipe already.
func HelperMain() int {
	runtime.LockOSThread() // every restriction below is the calling thread's
	status := os.NewFile(statusFD, "status")
	fail := func(stage string, err error) int {
		st := helperStatus{Stage: stage, Msg: err.Error()}
		var en syscall.Errno
		if errors.As(err, &en) {
			st.Errno = int(en)
		}
		b, _ := json.Marshal(st)
		if status != nil {
			status.Write(b)
		} else {
			fmt.Fprintf(os.Stderr, "agent: sandbox helper: %s: %v\n", stage, err)
		}
		return 125
	}
	in := os.NewFile(policyFD, "policy")
	if in == nil || status == nil {
		return fail("policy", errors.New("not started by the agent (no policy pipe)"))
	}
	data, err := io.ReadAll(io.LimitReader(in, maxPolicy+1))
	in.Close()
	if err != nil {
		return fail("policy", err)
	}
	p, err := decodePolicy(data)
	if err != nil {
		return fail("policy", err)
	}
	if p.Namespaces {
		if err := setupNamespaces(p); err != nil {
			return fail("namespaces", err)
		}
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
		b, _ := json.Marshal(helperStatus{OK: true})
		status.Write(b)
		return 0
	}
	err = syscall.Exec(path, p.Args, p.Env)
	return fail("exec", err)
}

// lookPath finds a command the way a shell would, in the command's own
// PATH (not the agent's), relative to its own folder.
func lookPath(file, pathEnv, dir string) (string, error) {
	if strings.Contains(file, "/") {
		if !filepath.IsAbs(file) {
			file = filepath.Join(dir, file)
		}
		return file, nil
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, file)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w", file, exec.ErrNotFound)
}
