package main

import (
	"strings"
	"testing"

	"agent/internal/fakemodel"
)

// The interactive session with stdout not a terminal (the e2e runner
// pipes it, with TERM=dumb) is the plain fallback: the prompt from the
// argument, then one prompt per stdin line (architecture.md, the terminal
// renderer).
func TestE2EInteractivePlainFallback(t *testing.T) {
	s, srv := printSandbox(t,
		fakemodel.Reply{Text: "first \x1b[31manswer\x1b[0m"},
		fakemodel.Reply{Text: "second answer"},
		fakemodel.Reply{Text: "third"})
	r := s.run("line two\n\n/help\nline three\n", "the first prompt")
	if r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	// Model text is sanitised: no ESC reaches the output.
	if strings.Contains(r.Stdout, "\x1b") || !strings.Contains(r.Stdout, "first [31manswer[0m\nsecond answer\n") || !strings.HasSuffix(r.Stdout, "third\n") {
		t.Fatalf("stdout %q", r.Stdout)
	}
	if !strings.Contains(r.Stdout, "/mcp status") { // the /help output
		t.Fatalf("no /help output: %q", r.Stdout)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || !strings.Contains(string(reqs[0]), "the first prompt") || !strings.Contains(string(reqs[2]), "line three") {
		t.Fatalf("%d requests", len(reqs))
	}
	// One conversation: the third request carries the first exchange.
	if !strings.Contains(string(reqs[2]), "second answer") {
		t.Fatalf("the turns do not share the session: %s", reqs[2])
	}
}

func TestE2EInteractivePlainExitAndCommands(t *testing.T) {
	s, srv := printSandbox(t, fakemodel.Reply{Text: "never"})
	r := s.run("/mcp\n/keybindings\n/nope\n/exit\nnot sent\n")
	if r.Code != 0 || len(srv.Requests()) != 0 {
		t.Fatalf("%+v (%d requests)", r, len(srv.Requests()))
	}
	if !strings.Contains(r.Stdout, "No MCP servers are defined.") || !strings.Contains(r.Stdout, "Created "+s.Home+"/.agent/keybindings.json") {
		t.Fatalf("stdout %q", r.Stdout)
	}
	if !strings.Contains(r.Stderr, "unknown command /nope") {
		t.Fatalf("stderr %q", r.Stderr)
	}
}

func TestE2EInteractivePlainToolDenied(t *testing.T) {
	// Nobody can answer a permission prompt in the plain fallback: the
	// call is denied naming the rule, and the turn goes on.
	s, _ := printSandbox(t,
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Bash", Args: `{"command":"touch x"}`}}},
		fakemodel.Reply{Text: "could not run it"})
	r := s.run("", "make a file")
	if r.Code != 0 || r.Stdout != "could not run it\n" {
		t.Fatalf("%+v", r)
	}
	if !strings.Contains(r.Stderr, "⚙ Bash(command: touch x)") || !strings.Contains(r.Stderr, "Bash(touch x)") {
		t.Fatalf("stderr %q", r.Stderr)
	}
}

func TestE2EInteractiveUntrustedAndUsage(t *testing.T) {
	s := newSandbox(t)
	srv := fakemodel.New(fakemodel.Reply{Text: "user settings only"})
	t.Cleanup(srv.Close)
	s.write("~/.agent/settings.json", `{"defaultModel": {"provider": "local", "model": "m"}, "providers": {"local": {"baseURL": "`+srv.URL()+`"}}}`)
	// Project settings that would break the start if they were read.
	s.write(".agent/settings.json", `{"defaultModel": {"provider": "reasoning"}}`)
	r := s.run("", "hi there")
	if r.Code != 0 || r.Stdout != "user settings only\n" || !strings.Contains(r.Stderr, "not trusted") {
		t.Fatalf("%+v", r)
	}
	for _, args := range [][]string{
		{"--external-event-port", "9000"},
		{"--output-format", "json", "x y"},
		{"--permission-mode", "yolo"},
		{"a b", "c d"},
		{"bogus"},
	} {
		r := s.run("", args...)
		if r.Code != 2 || len(strings.Split(strings.TrimSpace(r.Stderr), "\n")) != 1 {
			t.Errorf("%v: %+v", args, r)
		}
	}
	if r := s.run("", "--external-event-port", "9000"); !strings.Contains(r.Stderr, "not part of this build yet") {
		t.Errorf("%+v", r)
	}
}
