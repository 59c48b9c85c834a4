package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"agent/internal/fakemodel"
)

func toolCall(id, name, args string) fakemodel.Reply {
	return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: id, Name: name, Args: args}}}
}

// sessionIDOf finds the session id print mode's json output names.
var sessionIDRe = regexp.MustCompile(`"session_id":"([^"]+)"`)

func sessionIDOf(t *testing.T, stdout string) string {
	t.Helper()
	m := sessionIDRe.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no session id in %q", stdout)
	}
	return m[1]
}

// Rewinding a headless session (docs/reference/cli.md, "Checkpoints"):
// the checkpoints of a print-mode session, the code restored where the
// files are as the session left them, a file changed since kept and
// shown as a conflict (exit 1), and the conversation forked so that a
// resumed session continues from before the checkpoint.
func TestE2ESessionRewind(t *testing.T) {
	s, srv := printSandbox(t,
		toolCall("c1", "Write", `{"file_path":"notes.md","content":"# Notes\nfirst\n"}`),
		toolCall("c2", "Edit", `{"file_path":"main.go","old_string":"old","new_string":"new"}`),
		fakemodel.Reply{Text: "wrote the notes"},
		toolCall("c3", "Edit", `{"file_path":"notes.md","old_string":"first","new_string":"second"}`),
		fakemodel.Reply{Text: "edited the notes"},
		fakemodel.Reply{Text: "continued in the fork"},
	)
	s.write("main.go", "package main // old\n")
	r := s.run("", "-p", "--permission-mode", "acceptEdits", "--output-format", "json", "write the notes")
	if r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	id := sessionIDOf(t, r.Stdout)
	if r := s.run("", "-p", "--permission-mode", "acceptEdits", "--resume", id, "edit the notes"); r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	cp := s.run("", "session", "checkpoints", id)
	lines := strings.Split(strings.TrimRight(cp.Stdout, "\n"), "\n")
	if cp.Code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "1\t") || !strings.HasSuffix(lines[0], "\tnotes.md +2 -0, main.go +1 -1\twrite the notes") ||
		!strings.HasSuffix(lines[1], "\tnotes.md +1 -1\tedit the notes") {
		t.Fatalf("checkpoints %+v", cp)
	}
	// The user changes main.go: a code rewind to 1 restores notes.md only.
	s.write("main.go", "package main // mine\n")
	rw := s.run("", "session", "rewind", id, "1", "--code")
	if rw.Code != 1 || !strings.Contains(rw.Stdout, "removed notes.md (it did not exist at the checkpoint)\n") ||
		!strings.Contains(rw.Stdout, "conflict main.go: changed since the session last changed it") ||
		!strings.Contains(rw.Stdout, "-package main // old\n+package main // mine\n") || !strings.Contains(rw.Stderr, "some files were not restored") {
		t.Fatalf("rewind %+v", rw)
	}
	if s.read(filepath.Join(s.Work, "main.go")) != "package main // mine\n" {
		t.Fatalf("the conflict was overwritten: %q", s.read(filepath.Join(s.Work, "main.go")))
	}
	if _, err := os.Stat(filepath.Join(s.Work, "notes.md")); err == nil {
		t.Fatal("notes.md was not removed")
	}
	// Again: nothing is left to restore but the conflict.
	if rw := s.run("", "session", "rewind", id, "1", "--code"); rw.Code != 1 || strings.Contains(rw.Stdout, "notes.md") {
		t.Fatalf("second rewind %+v", rw)
	}
	// The conversation, forked before checkpoint 2.
	fk := s.run("", "session", "rewind", id, "2")
	m := regexp.MustCompile(`as (\S+); continue it with 'agent --resume (\S+)'`).FindStringSubmatch(fk.Stdout)
	if fk.Code != 0 || m == nil || m[1] != m[2] || !strings.HasSuffix(fk.Stdout, "The checkpoint's prompt:\nedit the notes\n") {
		t.Fatalf("fork %+v", fk)
	}
	if r := s.run("", "-p", "--resume", m[1], "go on"); r.Code != 0 || r.Stdout != "continued in the fork\n" {
		t.Fatalf("resumed fork %+v", r)
	}
	last := string(srv.Requests()[len(srv.Requests())-1])
	if !strings.Contains(last, "write the notes") || strings.Contains(last, "edit the notes") {
		t.Fatalf("the fork's request %s", last)
	}
	// Bad input: an unknown checkpoint, another workspace, an unknown session.
	if r := s.run("", "session", "rewind", id, "9", "--code"); r.Code != 1 || !strings.Contains(r.Stderr, "no such checkpoint 9: the session's checkpoints are 1 to 2") {
		t.Errorf("%+v", r)
	}
	if r := s.run("", "session", "rewind", "20200101-000000-00000000", "1"); r.Code != 1 || !strings.Contains(r.Stderr, "no such file") {
		t.Errorf("%+v", r)
	}
}

// /todos, /cost and a "!" command in plain line mode; /rewind says it
// needs the terminal UI.
func TestE2ETodosAndCost(t *testing.T) {
	s, _ := printSandbox(t,
		toolCall("c1", "TodoWrite", `{"todos":[{"content":"Read the code","status":"completed","activeForm":"Reading"},{"content":"Fix it","status":"in_progress","activeForm":"Fixing it"}]}`),
		fakemodel.Reply{Text: "planned", InputTokens: 1200, OutputTokens: 30},
	)
	s.write("~/.agent/settings.json", strings.Replace(s.read(filepath.Join(s.Home, ".agent", "settings.json")), `"providers"`, `"modelPrices": {"fake-model": {"input": 2, "output": 10}}, "providers"`, 1))
	r := s.run("/todos\n/cost\n/rewind\n!echo from-the-shell\n", "plan the fix")
	if r.Code != 0 || !strings.Contains(r.Stdout, "[x] Read the code\n[>] Fix it\n") || !strings.Contains(r.Stdout, "local/fake-model") ||
		!strings.Contains(r.Stdout, "$0.0027") || !strings.Contains(r.Stderr, "needs the terminal UI") || !strings.HasSuffix(r.Stdout, "from-the-shell\n") {
		t.Fatalf("%+v", r)
	}
}

// A leading "!" in the terminal UI runs the command in the workspace and
// adds its output to the conversation; /rewind then restores a file a
// turn wrote and forks the conversation, the prompt back in the composer.
func TestE2ETerminalShellAndRewind(t *testing.T) {
	s, srv := printSandbox(t,
		fakemodel.Reply{Text: "I saw the listing"},
		toolCall("c1", "Write", `{"file_path":"plan.txt","content":"the plan\n"}`),
		fakemodel.Reply{Text: "planned it"},
		fakemodel.Reply{Text: "answered-in-the-fork"},
	)
	s.write("hello.txt", "hi from the file\n")
	m, out, done := startTUI(t, s)
	out.waitFor(t, "Type a prompt")
	m.Write([]byte("!cat hello.txt\r"))
	out.waitFor(t, "hi from the file")
	if len(srv.Requests()) != 0 {
		t.Fatal("the ! command called the model")
	}
	m.Write([]byte("what was in it?\r"))
	out.waitFor(t, "listing") // the answer streams: its words may come in separate frames
	if !strings.Contains(string(srv.Requests()[0]), `$ cat hello.txt\nhi from the file`) {
		t.Fatalf("the output did not join the conversation: %s", srv.Requests()[0])
	}
	m.Write([]byte("write the plan\r"))
	out.waitFor(t, "Allow Write?")
	out.waitFor(t, "plan.txt (new file)")
	out.waitFor(t, "Write(plan.txt)")
	m.Write([]byte("y"))
	out.waitFor(t, "planned")
	if s.read(filepath.Join(s.Work, "plan.txt")) != "the plan\n" {
		t.Fatalf("plan.txt %q", s.read(filepath.Join(s.Work, "plan.txt")))
	}
	m.Write([]byte("/rewind\r"))
	out.waitFor(t, "Rewind to a checkpoint")
	m.Write([]byte("\r")) // the newest: write the plan
	out.waitFor(t, "Rewind to before: write the plan")
	m.Write([]byte("\x1b[A\r")) // code and conversation
	out.waitFor(t, "Rewound the conversation to before checkpoint 3")
	out.waitFor(t, "removed plan.txt")
	if _, err := os.Stat(filepath.Join(s.Work, "plan.txt")); err == nil {
		t.Fatal("plan.txt was not removed")
	}
	m.Write([]byte("\r")) // the prompt is back in the composer: send it again
	out.waitFor(t, "answered-in-the-fork")
	last := string(srv.Requests()[len(srv.Requests())-1])
	if !strings.Contains(last, "hi from the file") || strings.Count(last, "write the plan") != 1 || strings.Contains(last, "planned it") {
		t.Fatalf("the fork's request %s", last)
	}
	if strings.Contains(out.String(), "[The user ran a shell command") {
		t.Error("the fork's replay shows the command's message, not the command as typed")
	}
	ctrlCTwice(t, m, out, done)
}
