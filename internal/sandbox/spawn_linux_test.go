package sandbox

import (
	"errors"
	"syscall"
	"testing"

	"agent/internal/sandbox/confine"
	"agent/internal/sandbox/early"
)

// TestEarlyPredictsTheSpawn: the helper agent sandbox run starts at init
// is in the namespaces a spawn of this package starts its helper in (when
// it is not, Box.Start ends it and starts another, and the early start
// gains nothing). The network namespace is left out on purpose: the
// default network mode needs none where seccomp is available.
func TestEarlyPredictsTheSpawn(t *testing.T) {
	ns, userns := early.Predict()
	if want := namespacesRefused() == ""; ns != want {
		t.Errorf("early.Predict() namespaces %v, namespacesRefused() %q", ns, namespacesRefused())
	}
	if ns && userns != !mountsAllowed() {
		t.Errorf("early.Predict() user namespace %v, mountsAllowed() %v", userns, mountsAllowed())
	}
	if sup := Detect(); sup.Seccomp && (&Policy{Network: NetNone, Seccomp: true}).NetNamespace() {
		t.Error("the default network mode asks for a network namespace with seccomp: the early start must make one")
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
