package main

import (
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

func TestE2EUsageErrors(t *testing.T) {
	s := newSandbox(t)
	usage := func(t *testing.T, want string, args ...string) {
		t.Helper()
		r := s.run("", args...)
		lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
		if r.Code != 2 || len(lines) != 1 || !strings.Contains(r.Stderr, "--help") || !strings.Contains(r.Stderr, want) || r.Stdout != "" {
			t.Errorf("agent %v: code %d stdout %q stderr %q", args, r.Code, r.Stdout, r.Stderr)
		}
	}
	for _, args := range [][]string{{"bogus"}, {"--bogus"}, {"version", "--bogus"}, {"version", "extra"}, {"help", "nope"}} {
		usage(t, "", args...)
	}
	// Session flag values that cannot mean anything are usage errors on
	// every command that takes them, named before the trust check (the
	// sandbox's workspace is untrusted) or any settings are read.
	for _, c := range []struct {
		name          string
		cmd, operands []string
	}{
		{"print mode", []string{"-p"}, []string{"hi"}},
		{"interactive session", nil, []string{"hi"}},
		{"background session", []string{"session", "start", "--background"}, nil},
		{"mcp serve", []string{"mcp", "serve"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, flag := range [][]string{{"--provider", "vendorx"}, {"--provider", "Messages"}, {"--base-url", "ftp://x.example"}, {"--base-url", "/v1"}, {"--base-url", "http://"}, {"--base-url", "https://user:s3cret@x.example/v1"}, {"--permission-mode", "yolo"}} {
				usage(t, flag[0]+" must", append(append(append([]string{}, c.cmd...), flag...), c.operands...)...)
			}
		})
	}
	if r := s.run("", "-p", "--base-url", "https://user:s3cret@x.example/v1", "hi"); strings.Contains(r.Stderr, "s3cret") {
		t.Errorf("a credential in --base-url was echoed: %q", r.Stderr)
	}
}
