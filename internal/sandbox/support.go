package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Support is what this machine offers the sandbox (agent sandbox check;
// docs/sandbox.md, "Degrading").
type Support struct {
	// KernelABI is the Landlock ABI the kernel reports; ABI is what is
	// used (lower under the test cap). 0: no Landlock.
	KernelABI, ABI int
	// Seccomp: the kernel takes seccomp filters and this architecture has
	// one.
	Seccomp bool
	// Namespaces: user, mount and network namespaces can be made and set
	// up. NamespacesKnown is false until a spawn or a probe has tried;
	// NamespaceErr says why they cannot.
	Namespaces      bool
	NamespacesKnown bool
	NamespaceErr    string
	Arch            string
}

// Filesystem reports whether commands get file-system confinement: the
// condition of docs/sandbox.md, "Degrading".
func (s Support) Filesystem() bool { return s.ABI > 0 }

// Tier names the layers in effect, as records and agent sandbox check
// show them.
func (s Support) Tier() string {
	var parts []string
	if s.ABI > 0 {
		parts = append(parts, "landlock")
	}
	if s.Seccomp {
		parts = append(parts, "seccomp")
	}
	if s.Namespaces {
		parts = append(parts, "namespaces")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "+")
}

// Features says in words what the Landlock ABI in use covers.
func Features(abi int) string {
	if abi <= 0 {
		return "none"
	}
	f := []string{"file system"}
	if abi >= 2 {
		f = append(f, "moves between folders")
	}
	if abi >= 3 {
		f = append(f, "truncation")
	}
	if abi >= 4 {
		f = append(f, "TCP")
	}
	if abi >= 5 {
		f = append(f, "device ioctls")
	}
	if abi >= 6 {
		f = append(f, "signal and abstract-socket scoping")
	}
	return strings.Join(f, ", ")
}

// testCaps lowers what the machine offers, so that tests run every degrade
// branch on a kernel that has everything (docs/sandbox.md, "Testing the
// degrade branches"). Only a test build sets it (capsFromEnv): the
// released binary always uses what the kernel offers.
type testCaps struct {
	abi        int // -1: no cap
	noSeccomp  bool
	noNamesp   bool
	failSetup  bool // send the helper a policy it refuses (setup=fail)
	failNamesp bool // make the namespace stage fail (namespaces=fail)
	configured bool
}

var (
	capsOnce sync.Once
	caps     = testCaps{abi: -1}
	// capsFromEnv is set by the test build (captest.go) and by this
	// package's tests: AGENT_SANDBOX_TEST_CAP="abi=N,seccomp=off,namespaces=off".
	capsFromEnv bool
)

func currentCaps() testCaps {
	capsOnce.Do(func() {
		if !capsFromEnv {
			return
		}
		c, err := parseCaps(os.Getenv("AGENT_SANDBOX_TEST_CAP"))
		if err == nil {
			caps = c
		}
	})
	return caps
}

func parseCaps(s string) (testCaps, error) {
	c := testCaps{abi: -1}
	if s == "" {
		return c, nil
	}
	c.configured = true
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		switch k {
		case "abi":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return c, fmt.Errorf("test cap: abi=%q", v)
			}
			c.abi = n
		case "seccomp":
			c.noSeccomp = v == "off"
		case "namespaces":
			c.noNamesp = v == "off"
			c.failNamesp = v == "fail"
		case "setup":
			c.failSetup = v == "fail"
		default:
			return c, fmt.Errorf("test cap: unknown %q", k)
		}
	}
	return c, nil
}
