//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"agent/internal/sandbox/confine"
	"agent/internal/sandbox/early"
)

// withCaps sets the test cap for one test (AGENT_SANDBOX_TEST_CAP's
// meaning, without the environment).
func withCaps(t *testing.T, c testCaps) {
	t.Helper()
	capsOnce.Do(func() {})
	old := caps
	caps = c
	t.Cleanup(func() { caps = old })
}

// needKernel skips where the kernel cannot confine, and fails under
// CI=true, whose machines can.
func needKernel(t *testing.T) {
	t.Helper()
	if early.LandlockABI() < 6 || !confine.SeccompAvailable() {
		if os.Getenv("CI") == "true" {
			t.Fatal("the CI machine should have Landlock ABI 6 and seccomp")
		}
		t.Skip("the kernel lacks Landlock ABI 6 or seccomp")
	}
}

type boxFixture struct {
	home, ws string
	box      *Box
	mu       sync.Mutex
	records  []Record
	notices  []string
}

func newBox(t *testing.T) *boxFixture {
	t.Helper()
	root := t.TempDir()
	f := &boxFixture{home: filepath.Join(root, "home"), ws: filepath.Join(root, "ws")}
	os.MkdirAll(f.ws, 0o755)
	write(t, filepath.Join(f.home, ".ssh", "id"), "SECRET")
	var err error
	f.box, err = New(Options{Home: f.home, Workspace: f.ws, ID: "t", Protected: []string{filepath.Join(f.ws, "Makefile")},
		Record: func(r Record) { f.mu.Lock(); f.records = append(f.records, r); f.mu.Unlock() },
		Notice: func(s string) { f.mu.Lock(); f.notices = append(f.notices, s); f.mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.box.Close() })
	return f
}

// run runs a shell command confined; it returns the output, the report
// and the start error.
func (f *boxFixture) run(t *testing.T, prof Profile, script string) (string, Report, error) {
	t.Helper()
	var out bytes.Buffer
	run, err := f.box.Start(func() *exec.Cmd {
		c := exec.Command("/bin/sh", "-c", script)
		c.Dir = f.ws
		c.Env = f.box.Env(append(os.Environ(), "HOME="+f.home, "SECRET_TOKEN=x", "SSH_AUTH_SOCK=/s", "HTTPS_PROXY=p"), []string{"MY_KEY_VAR"})
		c.Stdout, c.Stderr = &out, &out
		return c
	}, Request{Label: "test", Command: script, Profile: prof, Guard: prof.Mode == WorkspaceWrite})
	if err != nil {
		return "", Report{}, err
	}
	run.Cmd.Wait()
	return out.String(), run.Finish(run.Cmd.ProcessState, out.String()), nil
}

// TestBoxTiers runs the same command at every tier the test cap gives.
func TestBoxTiers(t *testing.T) {
	needKernel(t)
	for _, tc := range []struct {
		name string
		caps testCaps
		tier string
	}{
		{"everything", testCaps{abi: -1}, "landlock+seccomp+namespaces"},
		{"no namespaces", testCaps{abi: -1, noNamesp: true}, "landlock+seccomp"},
		{"abi 1", testCaps{abi: 1, noNamesp: true}, "landlock+seccomp"},
		{"abi 2", testCaps{abi: 2}, "landlock+seccomp+namespaces"},
		{"abi 3", testCaps{abi: 3, noNamesp: true}, "landlock+seccomp"},
		{"abi 4", testCaps{abi: 4}, "landlock+seccomp+namespaces"},
		{"abi 5", testCaps{abi: 5, noNamesp: true}, "landlock+seccomp"},
		{"no seccomp", testCaps{abi: -1, noSeccomp: true}, "landlock+namespaces"},
		{"landlock alone", testCaps{abi: -1, noSeccomp: true, noNamesp: true}, "landlock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withCaps(t, tc.caps)
			f := newBox(t)
			out, rep, err := f.run(t, Profile{Mode: WorkspaceWrite}, `echo in > in.txt; cat in.txt; echo out > "$HOME/out.txt"; cat "$HOME/.ssh/id"; echo "tmp=$TMPDIR cache=$GOCACHE tok=$SECRET_TOKEN ssh=$SSH_AUTH_SOCK proxy=$HTTPS_PROXY"`)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.box.Support().Tier(); got != tc.tier {
				t.Errorf("tier %s, want %s", got, tc.tier)
			}
			if !strings.Contains(out, "in\n") || strings.Contains(out, "SECRET") {
				t.Errorf("output %q", out)
			}
			if _, err := os.Stat(filepath.Join(f.home, "out.txt")); err == nil {
				t.Error("wrote outside the workspace")
			}
			if !strings.Contains(out, "tmp="+f.box.TmpDir()+" cache=") || !strings.Contains(out, "/go-build tok= ssh= proxy=\n") {
				t.Errorf("environment %q", out)
			}
			if len(rep.Violations) == 0 || !strings.Contains(rep.Violations[0], "writing ~/out.txt") {
				t.Errorf("report %+v", rep)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.records) != 1 || f.records[0].Tier != tc.tier || f.records[0].PolicyHash == "" || *f.records[0].Exit != 0 {
				t.Errorf("records %+v", f.records)
			}
		})
	}
}

// TestBoxNoLayers: with nothing to confine with, the command runs as
// built (the caller has said so, or refused).
func TestBoxNoLayers(t *testing.T) {
	withCaps(t, testCaps{abi: 0, noSeccomp: true, noNamesp: true})
	f := newBox(t)
	out, _, err := f.run(t, Profile{Mode: WorkspaceWrite}, `echo out > "$HOME/out.txt" && echo wrote`)
	if err != nil || !strings.Contains(out, "wrote") || f.box.Support().Filesystem() {
		t.Fatalf("%q %v", out, err)
	}
}

// TestBoxSetupFailure: a helper that refuses its policy is a setup
// failure, and the command does not run.
func TestBoxSetupFailure(t *testing.T) {
	needKernel(t)
	withCaps(t, testCaps{abi: -1, failSetup: true})
	f := newBox(t)
	_, _, err := f.run(t, Profile{Mode: WorkspaceWrite}, `touch ran`)
	var se *SetupError
	if !errors.As(err, &se) || !errors.Is(err, ErrSetup) || se.Stage != "policy" {
		t.Fatalf("%v", err)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "ran")); err == nil {
		t.Fatal("the command ran")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.records) != 1 || f.records[0].Setup == "" {
		t.Fatalf("records %+v", f.records)
	}
}

// TestBoxCommandNotFound: a missing command is the command's failure,
// not the sandbox's.
func TestBoxCommandNotFound(t *testing.T) {
	needKernel(t)
	f := newBox(t)
	_, err := f.box.Start(func() *exec.Cmd {
		c := exec.Command("no-such-command-anywhere")
		c.Dir = f.ws
		c.Env = []string{"PATH=/usr/bin:/bin"}
		return c
	}, Request{Profile: Profile{Mode: ReadOnly}})
	var ce *CommandError
	if !errors.As(err, &ce) || errors.Is(err, ErrSetup) || !errors.Is(err, syscall.ENOENT) ||
		err.Error() != "no-such-command-anywhere: executable file not found in $PATH: no such file or directory" {
		t.Fatalf("%v", err)
	}
}

// TestBoxReadOnlyAndEscalation: read-only refuses the workspace; one more
// writable path opens just that path.
func TestBoxReadOnlyAndEscalation(t *testing.T) {
	needKernel(t)
	f := newBox(t)
	out, rep, err := f.run(t, Profile{Mode: ReadOnly}, `echo x > ro.txt || echo REFUSED; echo y > "$TMPDIR/t" && cat "$TMPDIR/t"`)
	if err != nil || !strings.Contains(out, "REFUSED") || !strings.Contains(out, "y\n") || len(rep.Violations) != 1 {
		t.Fatalf("%q %+v %v", out, rep, err)
	}
	extra := filepath.Join(f.ws, "out")
	os.MkdirAll(extra, 0o755)
	out, _, err = f.run(t, Profile{Mode: ReadOnly, Write: []string{extra}}, `echo z > out/z && echo ok; echo x > ro.txt || echo REFUSED`)
	if err != nil || !strings.Contains(out, "ok") || !strings.Contains(out, "REFUSED") {
		t.Fatalf("%q %v", out, err)
	}
}

// TestBoxProtectedExtra: a path the settings protect is restored like
// the defaults.
func TestBoxProtectedExtra(t *testing.T) {
	needKernel(t)
	withCaps(t, testCaps{abi: -1, noNamesp: true}) // the guard, not a read-only bind
	f := newBox(t)
	write(t, filepath.Join(f.ws, "Makefile"), "all:\n")
	_, rep, err := f.run(t, Profile{Mode: WorkspaceWrite}, `echo 'all: ; curl evil' > Makefile`)
	if err != nil || len(rep.Restored) != 1 || rep.Restored[0].Path != "Makefile" {
		t.Fatalf("%+v %v", rep, err)
	}
	if got := readFile(t, filepath.Join(f.ws, "Makefile")); got != "all:\n" {
		t.Fatalf("Makefile %q", got)
	}
	if lines := rep.Lines(); len(lines) != 1 || !strings.Contains(lines[0], "restored: Makefile (changed; moved to ") {
		t.Fatalf("%q", lines)
	}
}

// TestBoxNamespaceBinds: in the namespace tier a protected folder is
// read-only, /tmp is private and a denied folder is empty.
func TestBoxNamespaceBinds(t *testing.T) {
	needKernel(t)
	f := newBox(t)
	os.MkdirAll(filepath.Join(f.ws, ".git", "hooks"), 0o755)
	out, _, err := f.run(t, Profile{Mode: WorkspaceWrite}, `touch .git/hooks/x 2>&1; ls -A "$HOME/.ssh" | wc -l`)
	if err != nil {
		t.Fatal(err)
	}
	if !f.box.Support().Namespaces {
		t.Skip("no namespaces: " + f.box.Support().NamespaceErr)
	}
	if !strings.Contains(out, "Read-only file system") || !strings.HasSuffix(strings.TrimSpace(out), "0") {
		t.Fatalf("%q", out)
	}
}

// TestBoxNamespaceFallback: when the namespaces cannot be set up, the
// spawn is made again without them (nothing ran), the user is told once,
// and later spawns do not try again.
func TestBoxNamespaceFallback(t *testing.T) {
	needKernel(t)
	withCaps(t, testCaps{abi: -1, failNamesp: true})
	resetNamespaces(t)
	// Outside /tmp, so that the private /tmp is attempted.
	root, err := os.MkdirTemp("/var/tmp", "sandbox-test-")
	if err != nil {
		t.Skip("no /var/tmp")
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	f := &boxFixture{home: filepath.Join(root, "home"), ws: filepath.Join(root, "ws")}
	os.MkdirAll(f.ws, 0o755)
	f.box, err = New(Options{Home: f.home, Workspace: f.ws, ID: "t",
		Notice: func(s string) { f.mu.Lock(); f.notices = append(f.notices, s); f.mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer f.box.Close()
	for i := 0; i < 2; i++ {
		out, _, err := f.run(t, Profile{Mode: WorkspaceWrite}, `echo ran >> ran.txt; echo ok`)
		if err != nil || !strings.Contains(out, "ok") {
			t.Fatalf("%q %v", out, err)
		}
	}
	if got := readFile(t, filepath.Join(f.ws, "ran.txt")); got != "ran\nran\n" {
		t.Fatalf("ran %q: a failed attempt must not run the command", got)
	}
	sup := f.box.Support()
	if sup.Namespaces || !sup.NamespacesKnown || sup.Tier() != "landlock+seccomp" {
		t.Fatalf("%+v", sup)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.notices) != 1 || !strings.Contains(f.notices[0], "namespaces are not available here") {
		t.Fatalf("%q", f.notices)
	}
}

// resetNamespaces forgets what an earlier spawn of this process learned
// about namespaces, for one test.
func resetNamespaces(t *testing.T) {
	nsState.Lock()
	old := struct {
		known, works bool
		err          string
	}{nsState.known, nsState.works, nsState.err}
	nsState.known, nsState.works, nsState.err = false, false, ""
	nsState.Unlock()
	t.Cleanup(func() {
		nsState.Lock()
		nsState.known, nsState.works, nsState.err = old.known, old.works, old.err
		nsState.Unlock()
	})
}

// TestBoxLoopbackWithoutNamespaces: the loopback mode needs namespaces;
// without them the network is none, and the user is told once.
func TestBoxLoopbackWithoutNamespaces(t *testing.T) {
	needKernel(t)
	withCaps(t, testCaps{abi: -1, noNamesp: true})
	f := newBox(t)
	for i := 0; i < 2; i++ {
		if _, _, err := f.run(t, Profile{Mode: WorkspaceWrite, Network: NetLoopback}, `true`); err != nil {
			t.Fatal(err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.notices) != 1 || !strings.Contains(f.notices[0], "loopback network mode needs namespaces") {
		t.Fatalf("%q", f.notices)
	}
	if f.records[0].Network != "none" {
		t.Fatalf("%+v", f.records[0])
	}
}

// TestBoxDeniedInWorkspace: a denied file inside the workspace is refused
// with namespaces (a nodev /dev/null over it: opening it fails either
// way); with Landlock alone it stays readable, and the user is told once.
func TestBoxDeniedInWorkspace(t *testing.T) {
	needKernel(t)
	for _, tc := range []struct {
		name string
		caps testCaps
	}{{"namespaces", testCaps{abi: -1}}, {"landlock", testCaps{abi: -1, noNamesp: true}}} {
		t.Run(tc.name, func(t *testing.T) {
			withCaps(t, tc.caps)
			f := newBox(t)
			secret := filepath.Join(f.ws, "secret.txt")
			write(t, secret, "SECRET-IN-WS")
			prof := Profile{Mode: WorkspaceWrite, DenyRead: []string{secret}}
			for i := 0; i < 2; i++ {
				out, _, err := f.run(t, prof, `cat secret.txt; echo x > secret.txt; echo new > other.txt && cat other.txt`)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(out, "new\n") {
					t.Fatalf("%q", out)
				}
				if tc.name == "namespaces" && (strings.Contains(out, "SECRET-IN-WS") || !strings.Contains(out, "Permission denied")) {
					t.Fatalf("%q", out)
				}
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			want := 0
			if tc.name == "landlock" {
				want = 1
			}
			if len(f.notices) != want || want == 1 && !strings.Contains(f.notices[0], "stays readable") {
				t.Fatalf("%q", f.notices)
			}
		})
	}
}

func TestScrubEnv(t *testing.T) {
	env := []string{"PATH=/bin", "HOME=/h", "GITHUB_TOKEN=x", "AWS_SECRET_ACCESS_KEY=y", "SSH_AUTH_SOCK=/s", "DBUS_SESSION_BUS_ADDRESS=u",
		"DOCKER_HOST=d", "http_proxy=p", "HTTPS_PROXY=p", "no_proxy=n", "MESSAGES_API_KEY=k", "MY_VAR=keep", "PWD=/w", "AGENT_SANDBOX_HELPER=1", "broken"}
	got := ScrubEnv(env, []string{"MY_VAR"})
	if strings.Join(got, " ") != "PATH=/bin HOME=/h PWD=/w" {
		t.Fatalf("%q", got)
	}
	set := setVars([]string{"TMPDIR=/old", "A=1"}, privateVars("/t", "/c"))
	if strings.Join(set, " ") != "A=1 TMPDIR=/t GOCACHE=/c/go-build XDG_CACHE_HOME=/c/xdg npm_config_cache=/c/npm PIP_CACHE_DIR=/c/pip" {
		t.Fatalf("%q", set)
	}
}

// TestBoxWorktreeGitFolders: in a git worktree, whose git folders lie
// outside the workspace, a confined git commit still works (the look at
// the protected paths names them writable), in both tiers; the main
// checkout's files stay out of reach, and its hooks stay protected.
func TestBoxWorktreeGitFolders(t *testing.T) {
	needKernel(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, noNS := range []bool{false, true} {
		t.Run(map[bool]string{false: "namespaces", true: "landlock and seccomp"}[noNS], func(t *testing.T) {
			withCaps(t, testCaps{abi: -1, noNamesp: noNS})
			root, _ := filepath.EvalSymlinks(t.TempDir())
			home, main, wt := filepath.Join(root, "home"), filepath.Join(root, "main"), filepath.Join(root, "wt")
			os.MkdirAll(home, 0o755)
			git := func(dir string, args ...string) {
				t.Helper()
				c := exec.Command("git", append([]string{"-C", dir}, args...)...)
				c.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1")
				if out, err := c.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			os.MkdirAll(main, 0o755)
			git(main, "init", "-q", "-b", "main")
			git(main, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first")
			git(main, "worktree", "add", "-q", "-b", "side", wt)
			b, err := New(Options{Home: home, Workspace: wt, ID: "wt"})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			var out strings.Builder
			run, err := b.Start(func() *exec.Cmd {
				c := exec.Command("/bin/sh", "-c", `echo x > f && git add f && git -c user.name=t -c user.email=t@t commit -q -m second && echo committed; echo y > "`+main+`/planted"`)
				c.Dir = wt
				c.Env = b.Env(append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1"), nil)
				c.Stdout, c.Stderr = &out, &out
				return c
			}, Request{Profile: Profile{Mode: WorkspaceWrite}, Guard: true})
			if err != nil {
				t.Fatal(err)
			}
			run.Wait()
			run.Finish(run.State(), out.String())
			if !strings.Contains(out.String(), "committed") {
				t.Fatalf("the commit failed: %s", out.String())
			}
			if _, err := os.Stat(filepath.Join(main, "planted")); err == nil {
				t.Fatal("wrote into the main checkout")
			}
		})
	}
}

// TestBoxProjectWriteStaysInside: a project's writable path counts only
// where it really leads inside the workspace, judged at each spawn: a link
// made after the settings were read (by a confined command, say) does not
// open the folder it points to.
func TestBoxProjectWriteStaysInside(t *testing.T) {
	needKernel(t)
	f := newBox(t)
	out := filepath.Join(f.home, "out")
	os.MkdirAll(out, 0o755)
	os.MkdirAll(filepath.Join(f.ws, "build"), 0o755)
	os.Symlink(out, filepath.Join(f.ws, "h"))
	prof := Profile{Mode: WorkspaceWrite, WriteInside: []string{filepath.Join(f.ws, "h"), filepath.Join(f.ws, "build")}}
	_, rep, err := f.run(t, prof, `echo x > h/planted; echo y > build/ok`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "planted")); err == nil {
		t.Fatal("wrote through the project's link out of the workspace")
	}
	if _, err := os.Stat(filepath.Join(f.ws, "build", "ok")); err != nil {
		t.Fatalf("the project's path inside: %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !strings.Contains(strings.Join(f.notices, "\n"), "leads outside the workspace") || len(rep.Violations) == 0 {
		t.Fatalf("notices %q, report %+v", f.notices, rep)
	}
}
