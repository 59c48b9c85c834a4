package early

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"agent/internal/sandbox/confine"
)

func TestWanted(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want bool
	}{
		{"sandbox run with a command", []string{"agent", "sandbox", "run", "--", "true"}, true},
		{"sandbox run without --", []string{"agent", "sandbox", "run", "true"}, true},
		{"a confining mode", []string{"agent", "sandbox", "run", "--mode", "read-only", "--", "true"}, true},
		{"a confining mode with =", []string{"agent", "sandbox", "run", "--mode=workspace-write", "--", "true"}, true},
		{"full access", []string{"agent", "sandbox", "run", "--mode", "danger-full-access", "--", "true"}, false},
		{"full access with =", []string{"agent", "sandbox", "run", "--mode=danger-full-access", "--", "true"}, false},
		{"full access with one dash", []string{"agent", "sandbox", "run", "-mode", "danger-full-access", "--", "true"}, false},
		{"full access with one dash and =", []string{"agent", "sandbox", "run", "-mode=danger-full-access", "--", "true"}, false},
		{"full access named after --", []string{"agent", "sandbox", "run", "--", "echo", "--mode", "danger-full-access"}, true},
		{"help", []string{"agent", "sandbox", "run", "--help"}, false},
		{"help, short", []string{"agent", "sandbox", "run", "-h"}, false},
		{"help after --", []string{"agent", "sandbox", "run", "--", "ls", "-h"}, true},
		{"--mode last, without its value", []string{"agent", "sandbox", "run", "--mode"}, false},
		{"an unknown mode", []string{"agent", "sandbox", "run", "--mode", "yolo", "--", "true"}, false},
		{"an unknown mode with =", []string{"agent", "sandbox", "run", "--mode=yolo", "--", "true"}, false},
		{"an unknown mode with one dash and =", []string{"agent", "sandbox", "run", "-mode=", "--", "true"}, false},
		{"read-only with one dash and =", []string{"agent", "sandbox", "run", "-mode=read-only", "--", "true"}, true},
		{"the mode's name in another case", []string{"agent", "sandbox", "run", "--mode", "Read-Only", "--", "true"}, false},
		{"sandbox check", []string{"agent", "sandbox", "check"}, false},
		{"another command", []string{"agent", "mcp", "serve"}, false},
		{"the program alone", []string{"agent"}, false},
		{"nothing", nil, false},
		{"the helper", []string{"agent-sandbox"}, false},
		{"run before sandbox", []string{"agent", "run", "sandbox"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Wanted(c.args); got != c.want {
				t.Errorf("Wanted(%q) = %v, want %v", c.args, got, c.want)
			}
		})
	}
}

// FuzzWanted: any command line is judged without a panic, and only one
// that runs agent sandbox run is wanted.
func FuzzWanted(f *testing.F) {
	f.Add("agent\x00sandbox\x00run\x00--\x00true")
	f.Add("agent\x00sandbox\x00run\x00--mode\x00danger-full-access")
	f.Add("agent\x00sandbox\x00run\x00--mode")
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		if Wanted(args) && (len(args) < 3 || args[1] != "sandbox" || args[2] != "run") {
			t.Fatalf("Wanted(%q) for another command", args)
		}
	})
}

// TestSameAsTheHelper: the descriptors and the marker this package starts
// the helper with are the helper's.
func TestSameAsTheHelper(t *testing.T) {
	if helperEnv != confine.EnvVar || confine.PolicyFD != 3 || confine.StatusFD != 4 {
		t.Fatalf("helperEnv %q, confine.EnvVar %q, PolicyFD %d, StatusFD %d: start passes the policy as descriptor 3 and the status as 4",
			helperEnv, confine.EnvVar, confine.PolicyFD, confine.StatusFD)
	}
}

// TestStartedHelper: the helper started here reads its policy on its pipe
// and reports on its status pipe; given none, it says so there, writes
// nothing on the stderr pipe and ends with 125. Its namespaces are those
// Predict gave (a user namespace: the helper is not in ours).
func TestStartedHelper(t *testing.T) {
	ns, userns := Predict()
	h := start(ns, userns)
	if h == nil {
		if ns {
			t.Skip("namespaces refused here although the system settings allow them")
		}
		t.Fatal("start failed")
	}
	if h.NS != ns || h.UserNS != (ns && userns) {
		t.Fatalf("started in NS=%v UserNS=%v, asked %v %v", h.NS, h.UserNS, ns, userns)
	}
	if userns {
		mine, _ := os.Readlink("/proc/self/ns/user")
		theirs, err := os.Readlink("/proc/" + strconv.Itoa(h.Pid) + "/ns/user")
		if err == nil && theirs == mine {
			t.Fatalf("the helper shares this user namespace (%s)", mine)
		}
	}
	syscall.Close(h.PolicyW)
	status := readAll(t, h.StatusR)
	stderr := readAll(t, h.StderrR)
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(h.Pid, &ws, 0, nil); err != nil {
		t.Fatal(err)
	}
	st, err := confine.DecodeStatus(status)
	if err != nil || st.Stage != "policy" || ws.ExitStatus() != 125 || len(stderr) != 0 {
		t.Fatalf("status %q (%+v, %v), exit %v, stderr %q", status, st, err, ws, stderr)
	}
}

func readAll(t *testing.T, fd int) []byte {
	t.Helper()
	defer syscall.Close(fd)
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := syscall.Read(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return out
		}
		out = append(out, buf[:n]...)
	}
}

// TestTake gives the helper once: none was started in a test binary.
func TestTake(t *testing.T) {
	mu.Lock()
	started = &Helper{Pid: -1}
	mu.Unlock()
	if h := Take(); h == nil || h.Pid != -1 {
		t.Fatalf("Take() = %+v", h)
	}
	if h := Take(); h != nil {
		t.Fatalf("second Take() = %+v", h)
	}
}
