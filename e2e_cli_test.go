package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestE2EVersionAndHelp(t *testing.T) {
	s := newSandbox(t)
	for _, args := range [][]string{{"--version"}, {"version"}} {
		r := s.run("", args...)
		if r.Code != 0 || !regexp.MustCompile(`^agent \S+ \(go\S+ \w+/\w+\)\n$`).MatchString(r.Stdout) {
			t.Errorf("agent %v: code %d stdout %q", args, r.Code, r.Stdout)
		}
	}
	for _, args := range [][]string{{"--help"}, {"help"}, {"version", "--help"}, {"help", "version"}} {
		r := s.run("", args...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "agent") || r.Stderr != "" {
			t.Errorf("agent %v: code %d stdout %q stderr %q", args, r.Code, r.Stdout, r.Stderr)
		}
	}
}

// runInProcess runs the command line through run() in this process, with
// HOME and the working directory in a temporary folder.
func runInProcess(t *testing.T, args ...string) result {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Chdir(dir)
	var out, errb strings.Builder
	code := run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	return result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// TestUsageErrors: a command line that cannot mean anything exits 2 with
// one line on stderr that points at --help, before anything else is read
// (run in process; TestE2EUsageErrorThroughTheBinary checks the binary).
func TestUsageErrors(t *testing.T) {
	usage := func(t *testing.T, want string, args ...string) {
		t.Helper()
		r := runInProcess(t, args...)
		lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
		if r.Code != 2 || len(lines) != 1 || !strings.Contains(r.Stderr, "--help") || !strings.Contains(r.Stderr, want) || r.Stdout != "" {
			t.Errorf("agent %v: code %d stdout %q stderr %q", args, r.Code, r.Stdout, r.Stderr)
		}
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"a mistyped command", []string{"bogus"}},
		{"an unknown flag", []string{"--bogus"}},
		{"an unknown flag of a command", []string{"version", "--bogus"}},
		{"an operand a command does not take", []string{"version", "extra"}},
		{"help for an unknown command", []string{"help", "nope"}},
		{"rewind without a checkpoint", []string{"session", "rewind", "20260101-120000-0a1b2c3d"}},
		{"rewind at a checkpoint that is not a number", []string{"session", "rewind", "20260101-120000-0a1b2c3d", "two"}},
		{"rewind at checkpoint zero", []string{"session", "rewind", "20260101-120000-0a1b2c3d", "0"}},
		{"rewind with an unknown flag", []string{"session", "rewind", "x", "1", "--files"}},
		{"checkpoints without an id", []string{"session", "checkpoints"}},
	} {
		t.Run(c.name, func(t *testing.T) { usage(t, "", c.args...) })
	}
	// Session flag values that cannot mean anything are usage errors on
	// every command that takes them, named before the trust check (the
	// workspace is untrusted) or any settings are read.
	for _, c := range []struct {
		name          string
		cmd, operands []string
	}{
		{"print mode", []string{"-p"}, []string{"hi"}},
		{"interactive session", nil, []string{"hi"}},
		{"background session", []string{"session", "start", "--background"}, nil},
		{"mcp serve", []string{"mcp", "serve"}, nil},
	} {
		for _, flag := range [][]string{{"--provider", "vendorx"}, {"--provider", "Messages"}, {"--base-url", "ftp://x.example"}, {"--base-url", "/v1"}, {"--base-url", "http://"}, {"--base-url", "https://user:s3cret@x.example/v1"}, {"--permission-mode", "yolo"}} {
			t.Run(c.name+" "+flag[0]+" "+flag[1], func(t *testing.T) {
				usage(t, flag[0]+" must", append(append(append([]string{}, c.cmd...), flag...), c.operands...)...)
			})
		}
	}
	if r := runInProcess(t, "-p", "--base-url", "https://user:s3cret@x.example/v1", "hi"); strings.Contains(r.Stderr, "s3cret") {
		t.Errorf("a credential in --base-url was echoed: %q", r.Stderr)
	}
}

// TestE2EUsageErrorThroughTheBinary: the binary maps a usage error to
// exit 2 as run() does.
func TestE2EUsageErrorThroughTheBinary(t *testing.T) {
	r := newSandbox(t).run("", "--permission-mode", "yolo", "-p", "hi")
	if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, "--permission-mode must") || !strings.Contains(r.Stderr, "--help") {
		t.Fatalf("%+v", r)
	}
}

// TestE2EHomeMustBeAbsolute: a HOME that is unset or relative is refused
// before anything is read or made (a relative one would put ~/.agent, with
// its grants and settings, under the working directory, the workspace),
// for every command but --version and help.
func TestE2EHomeMustBeAbsolute(t *testing.T) {
	for _, home := range []string{"", "rel", "./rel", "~", "rel/../rel"} {
		for _, args := range [][]string{{"mcp", "list"}, {"sandbox", "check"}, {"sandbox", "run", "--", "true"}, {"-p", "hi"}} {
			s := newSandbox(t)
			s.Env = []string{"HOME=" + home}
			r := s.run("", args...)
			want := "HOME is not set"
			if home != "" {
				want = fmt.Sprintf("HOME is %q, not an absolute path", home)
			}
			if r.Code == 0 || !strings.Contains(r.Stderr, want) {
				t.Errorf("HOME=%q agent %q: %+v", home, args, r)
			}
			if ents, _ := os.ReadDir(s.Work); len(ents) != 0 {
				t.Errorf("HOME=%q agent %q made %v in the working directory", home, args, ents)
			}
		}
	}
	s := newSandbox(t)
	s.Env = []string{"HOME=rel"}
	if r := s.run("", "--version"); r.Code != 0 {
		t.Errorf("--version: %+v", r)
	}
}
