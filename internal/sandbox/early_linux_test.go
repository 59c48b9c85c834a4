package sandbox

import (
	"testing"

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
