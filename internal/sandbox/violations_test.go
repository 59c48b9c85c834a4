package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestRecognise(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	home := filepath.Join(root, "home")
	os.MkdirAll(filepath.Join(ws, "sub"), 0o755)
	os.MkdirAll(filepath.Join(home, "target"), 0o755)
	os.Symlink(filepath.Join(home, "target"), filepath.Join(ws, "link"))
	wsWrite := policyView{mode: WorkspaceWrite, network: NetNone, write: []string{ws, "/tmp/private"}, deny: []string{filepath.Join(home, ".ssh")}, home: home, dir: ws}
	readOnly := wsWrite
	readOnly.mode, readOnly.write = ReadOnly, []string{"/tmp/private"}
	host := wsWrite
	host.network = NetHost
	cases := []struct {
		name string
		v    policyView
		out  string
		want []string
	}{
		{"nothing refused", wsWrite, "all good\n", nil},
		{"a write outside, dash", wsWrite, "sh: 1: cannot create /etc/foo: Permission denied\n", []string{"writing /etc/foo (outside the writable folders)"}},
		{"a write outside, bash", wsWrite, "/bin/bash: line 1: /etc/foo: Permission denied\n", []string{"writing /etc/foo (outside the writable folders)"}},
		{"coreutils quoting", wsWrite, "touch: cannot touch '/etc/x': Permission denied\n", []string{"writing /etc/x (outside the writable folders)"}},
		{"the last quoted path", wsWrite, "mv: cannot move 'a' to '/etc/b': Permission denied\n", []string{"writing /etc/b (outside the writable folders)"}},
		{"after the words", wsWrite, "PermissionError: [Errno 13] Permission denied: '/usr/lib/x'\n", []string{"writing /usr/lib/x (outside the writable folders)"}},
		{"a home path", wsWrite, "cat: " + home + "/.ssh/id: Permission denied\n", []string{"reading ~/.ssh/id (a denied path)"}},
		{"through a link in the workspace", wsWrite, "/bin/bash: line 1: link/f: Permission denied\n", []string{"writing ~/target/f (outside the writable folders)"}},
		{"inside the workspace is not the sandbox", wsWrite, "cat: sub/x: Permission denied\n", nil},
		{"read-only refuses the workspace", readOnly, "/bin/sh: 1: cannot create f: Permission denied\n", []string{"writing " + ws + "/f (outside the writable folders)"}},
		{"a read-only mount", wsWrite, "touch: cannot touch '.git/hooks/x': Read-only file system\n", []string{"writing " + ws + "/.git/hooks/x (protected)"}},
		{"another process", wsWrite, "cat: /proc/42/environ: Permission denied\n", []string{"reading /proc/42/environ (another process)"}},
		{"the command's own /proc cannot be judged", wsWrite, "sh: /proc/self/fd/3/x: Permission denied\n", nil},
		{"a device", wsWrite, "sh: /dev/tty: Permission denied\n", nil},
		{"a socket", wsWrite, "ping: socket: Operation not permitted\n", []string{"network access (network mode none)"}},
		{"a resolver", wsWrite, "curl: (6) Could not resolve host: example.com\n", []string{"network access (network mode none)"}},
		{"go's dialer", wsWrite, "dial tcp 1.2.3.4:443: socket: operation not permitted\n", []string{"network access (network mode none)"}},
		{"network allowed", host, "curl: (6) Could not resolve host: example.com\n", nil},
		{"ptrace", wsWrite, "strace: attach: ptrace(PTRACE_SEIZE, 1): Operation not permitted\n", []string{"tracing another process"}},
		{"a signal", wsWrite, "sh: 1: kill: Operation not permitted\n", []string{"signalling a process outside the sandbox"}},
		{"repeated once", wsWrite, "cat: /etc/a: Permission denied\ncat: /etc/a: Permission denied\n", []string{"writing /etc/a (outside the writable folders)"}},
		{"at most four", wsWrite, "x: /a: Permission denied\nx: /b: Permission denied\nx: /c: Permission denied\nx: /d: Permission denied\nx: /e: Permission denied\n",
			[]string{"writing /a (outside the writable folders)", "writing /b (outside the writable folders)", "writing /c (outside the writable folders)", "writing /d (outside the writable folders)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := recognise(c.out, c.v); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func FuzzRecognise(f *testing.F) {
	for _, s := range []string{"sh: 1: cannot create /etc/foo: Permission denied", "touch: cannot touch '/x': Permission denied", "a 'b: Operation not permitted", "'\"`: Read-only file system"} {
		f.Add(s)
	}
	v := policyView{mode: WorkspaceWrite, write: []string{"/ws"}, deny: []string{"/home/u/.ssh"}, home: "/home/u", dir: "/ws"}
	f.Fuzz(func(t *testing.T, out string) {
		if got := recognise(out, v); len(got) > recogniseMax {
			t.Fatalf("%d refusals", len(got))
		}
	})
}
