package sandbox

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"

	"agent/internal/sandbox/confine"
	"agent/internal/sandbox/early"
)

// TestEarlyNeedsNoNetworkNamespace: the helper agent sandbox run starts
// at init has no network namespace of its own, which the default network
// mode must not need where seccomp is available (else Box.Start ends that
// helper and starts another, and the early start gains nothing). Its other
// namespaces are decided by the same functions as a spawn's
// (early.NamespacesRefused, early.MountsAllowed).
func TestEarlyNeedsNoNetworkNamespace(t *testing.T) {
	if (&Policy{Network: NetNone, Seccomp: true}).NetNamespace() {
		t.Error("the default network mode asks for a network namespace with seccomp: the early start must make one")
	}
	ns, userns := early.Predict()
	if ns != (namespacesRefused() == "") || ns && userns == mountsAllowed() {
		t.Errorf("early.Predict() %v %v; namespacesRefused %q, mountsAllowed %v", ns, userns, namespacesRefused(), mountsAllowed())
	}
}

// TestEarlyModesAgree: early.Wanted, which cannot import the mode table,
// starts a helper for exactly the --mode values that parse to a confining
// mode.
func TestEarlyModesAgree(t *testing.T) {
	for _, name := range []string{"read-only", "workspace-write", "danger-full-access", "yolo", "", "READ-ONLY"} {
		m, ok := ParseMode(name)
		want := ok && m != confine.FullAccess
		for _, args := range [][]string{{"agent", "sandbox", "run", "--mode", name, "--", "true"}, {"agent", "sandbox", "run", "--mode=" + name, "--", "true"}} {
			if got := early.Wanted(args); got != want {
				t.Errorf("early.Wanted(%q) = %v; ParseMode(%q) = %v, %v", args, got, name, m, ok)
			}
		}
	}
}

// TestHelperVforks: the helper is started with vfork in a user namespace
// too (syscall.ForkExec would fork: the page tables copied, and a fault at
// the agent's next write to each page); without one, ForkExec vforks by
// itself. Both branches run: as root here, unprivileged in CI.
func TestHelperVforks(t *testing.T) {
	h, err := helperFor(exec.Command("true"), true, false)
	if err != nil {
		t.Fatal(err)
	}
	defer h.closeAll()
	fl := h.cmd.SysProcAttr.Cloneflags
	if fl&syscall.CLONE_NEWUSER != 0 != h.userns || h.userns == mountsAllowed() {
		t.Fatalf("flags %#x, userns %v, mountsAllowed %v", fl, h.userns, mountsAllowed())
	}
	if h.userns && fl&(syscall.CLONE_VM|syscall.CLONE_VFORK) != syscall.CLONE_VM|syscall.CLONE_VFORK {
		t.Errorf("a helper in a user namespace is forked: flags %#x", fl)
	}
}

// TestStatusError: a helper's reported failure says its errno's text once,
// and wraps the errno.
func TestStatusError(t *testing.T) {
	cases := []struct {
		name string
		st   confine.Status
		want string
	}{
		{"the errno alone", confine.Status{Stage: "exec", Msg: "no such file or directory", Errno: int(syscall.ENOENT)}, "no such file or directory"},
		{"a message ending with the errno", confine.Status{Stage: "exec", Msg: "x: executable file not found in $PATH: no such file or directory", Errno: int(syscall.ENOENT)},
			"x: executable file not found in $PATH: no such file or directory"},
		{"a message without it", confine.Status{Stage: "landlock", Msg: "adding a rule for /w", Errno: int(syscall.EPERM)}, "adding a rule for /w: operation not permitted"},
		{"no errno", confine.Status{Stage: "policy", Msg: "an item without its end"}, "an item without its end"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := statusError(c.st)
			if err.Error() != c.want || c.st.Errno != 0 && !errors.Is(err, syscall.Errno(c.st.Errno)) {
				t.Fatalf("%q (errno %v)", err, errors.Is(err, syscall.Errno(c.st.Errno)))
			}
		})
	}
}
