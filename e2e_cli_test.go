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
	for _, args := range [][]string{{"bogus"}, {"--bogus"}, {"version", "--bogus"}, {"version", "extra"}, {"help", "nope"}} {
		r := s.run("", args...)
		lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
		if r.Code != 2 || len(lines) != 1 || !strings.Contains(r.Stderr, "--help") || r.Stdout != "" {
			t.Errorf("agent %v: code %d stdout %q stderr %q", args, r.Code, r.Stdout, r.Stderr)
		}
	}
}
