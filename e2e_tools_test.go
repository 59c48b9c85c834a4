package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agent/internal/fakemodel"
)

func call(id, name, args string) fakemodel.Reply {
	return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: id, Name: name, Args: args}}}
}

// secondRequest returns the body of the request that carried the tool result.
func secondRequest(t *testing.T, srv *fakemodel.Server) string {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) < 2 {
		t.Fatalf("only %d model requests", len(reqs))
	}
	return string(reqs[1])
}

func TestE2EToolLoopRead(t *testing.T) {
	s, srv := printSandbox(t, call("c1", "Read", `{"file_path":"notes.txt"}`), fakemodel.Reply{Text: "read it"})
	s.write("notes.txt", "the secret word is marmalade\n")
	r := s.run("", "-p", "read notes.txt")
	if r.Code != 0 || r.Stdout != "read it\n" {
		t.Fatalf("%+v", r)
	}
	if !strings.Contains(secondRequest(t, srv), "marmalade") {
		t.Fatalf("the file content did not reach the model: %s", secondRequest(t, srv))
	}
}

func TestE2EPermissionModes(t *testing.T) {
	write := `{"file_path":"out.txt","content":"hello"}`
	cases := []struct {
		name     string
		args     []string
		settings string
		written  bool
		inResult string
	}{
		{"default mode denies a write headless", nil, "", false, "Write("},
		{"acceptEdits writes", []string{"--permission-mode", "acceptEdits"}, "", true, ""},
		{"bypassPermissions writes", []string{"--permission-mode", "bypassPermissions"}, "", true, ""},
		{"plan denies", []string{"--permission-mode", "plan"}, "", false, "plan"},
		{"an allow rule writes", nil, `"allow": ["Write(out.txt)"]`, true, ""},
		{"deny beats bypass", []string{"--permission-mode", "bypassPermissions"}, `"deny": ["Write"]`, false, "no tool named"},
		{"settings defaultMode", nil, `"defaultMode": "acceptEdits"`, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, srv := printSandbox(t, call("c1", "Write", write), fakemodel.Reply{Text: "done"})
			if c.settings != "" {
				s.write(".agent/settings.json", `{"permissions": {`+c.settings+`}}`)
			}
			r := s.run("", append([]string{"-p", "write a file"}, c.args...)...)
			if r.Code != 0 || r.Stdout != "done\n" {
				t.Fatalf("%+v", r)
			}
			_, err := os.Stat(filepath.Join(s.Work, "out.txt"))
			if (err == nil) != c.written {
				t.Fatalf("written=%v, want %v; second request: %s", err == nil, c.written, secondRequest(t, srv))
			}
			if c.inResult != "" && !strings.Contains(secondRequest(t, srv), c.inResult) {
				t.Fatalf("tool result lacks %q: %s", c.inResult, secondRequest(t, srv))
			}
		})
	}
}

func TestE2EBashRules(t *testing.T) {
	s, srv := printSandbox(t, call("c1", "Bash", `{"command":"echo hi-from-bash"}`), fakemodel.Reply{Text: "ran"})
	s.askForBash()
	s.write(".agent/settings.local.json", `{"permissions": {"allow": ["Bash(echo *)"]}}`)
	r := s.run("", "-p", "run it")
	if r.Code != 0 || !strings.Contains(secondRequest(t, srv), "hi-from-bash") {
		t.Fatalf("%+v\n%s", r, secondRequest(t, srv))
	}
	// A chained command is not allowed by the echo rule.
	s2, srv2 := printSandbox(t, call("c1", "Bash", `{"command":"echo a && touch pwned"}`), fakemodel.Reply{Text: "no"})
	s2.askForBash()
	s2.write(".agent/settings.local.json", `{"permissions": {"allow": ["Bash(echo *)"]}}`)
	s2.run("", "-p", "run it")
	if _, err := os.Stat(filepath.Join(s2.Work, "pwned")); err == nil {
		t.Fatalf("a chained command ran: %s", secondRequest(t, srv2))
	}
}

func TestE2EBadAndUnknownCalls(t *testing.T) {
	s, srv := printSandbox(t, fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
		{ID: "c1", Name: "Nope", Args: `{}`},
		{ID: "c2", Name: "Read", Args: `{"path":"x"}`},
		{ID: "c3", Name: "Read", Args: `{"file_path":`},
	}}, fakemodel.Reply{Text: "recovered"})
	r := s.run("", "-p", "go")
	body := secondRequest(t, srv)
	if r.Code != 0 || r.Stdout != "recovered\n" || !strings.Contains(body, `no tool named \"Nope\"`) || strings.Count(body, "Invalid arguments for Read") != 2 {
		t.Fatalf("%+v\n%s", r, body)
	}
}
