package main

// A file named from outside (settings, keybindings, grants, transcripts,
// the trust store, credentials, instruction files, a file the model asks
// for) that is a FIFO is refused at once: opening it must never wait for a
// writer (docs/reference/cli.md, "Files"; internal/securefile.Open).

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"agent/internal/fakemodel"
	"agent/mcp/oauth"
)

// mkfifo makes a FIFO at path (under the workspace when relative, or ~/).
func (s *sandbox) mkfifo(path string) string {
	s.t.Helper()
	switch {
	case strings.HasPrefix(path, "~/"):
		path = filepath.Join(s.Home, path[2:])
	case !filepath.IsAbs(path):
		path = filepath.Join(s.Work, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		s.t.Fatal(err)
	}
	return path
}

// runGuarded is run with a short hang guard: a command that waits on a
// FIFO is killed and reported as hanging, rather than holding the test.
func (s *sandbox) runGuarded(stdin string, args ...string) result {
	s.t.Helper()
	return s.runWithin(20*time.Second, stdin, args...)
}

func TestE2EFIFOsAreRefusedWithoutWaiting(t *testing.T) {
	t.Run("the Read tool", func(t *testing.T) {
		s, srv := printSandbox(t, call("c1", "Read", `{"file_path":"pipe"}`), fakemodel.Reply{Text: "done"})
		s.mkfifo("pipe")
		r := s.runGuarded("", "-p", "read pipe")
		if r.Code != 0 || r.Stdout != "done\n" {
			t.Fatalf("%+v", r)
		}
		if res := secondRequest(t, srv); !strings.Contains(res, "not a regular file") || !strings.Contains(res, "FIFO") {
			t.Fatalf("tool result: %s", res)
		}
	})
	t.Run("the Edit tool", func(t *testing.T) {
		s, srv := printSandbox(t, call("c1", "Edit", `{"file_path":"pipe","old_string":"a","new_string":"b"}`), fakemodel.Reply{Text: "done"})
		s.mkfifo("pipe")
		r := s.runGuarded("", "-p", "--permission-mode", "acceptEdits", "edit pipe")
		if r.Code != 0 || !strings.Contains(secondRequest(t, srv), "not a regular file") {
			t.Fatalf("%+v; tool result %s", r, secondRequest(t, srv))
		}
		if fi, err := os.Lstat(filepath.Join(s.Work, "pipe")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Fatal("the FIFO was replaced")
		}
	})
	t.Run("the Grep tool over a folder with a FIFO", func(t *testing.T) {
		s, srv := printSandbox(t, call("c1", "Grep", `{"pattern":"needle","output_mode":"content"}`), fakemodel.Reply{Text: "done"})
		s.mkfifo("pipe")
		s.write("hay.txt", "a needle here\n")
		r := s.runGuarded("", "-p", "grep")
		if r.Code != 0 || !strings.Contains(secondRequest(t, srv), "a needle here") {
			t.Fatalf("%+v; tool result %s", r, secondRequest(t, srv))
		}
	})
	t.Run("a served Read call", func(t *testing.T) {
		s, _ := printSandbox(t)
		s.mkfifo("pipe")
		r := s.runGuarded(strings.Join([]string{initLine,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Read","arguments":{"file_path":"pipe"}}}`,
			`{"jsonrpc":"2.0","id":3,"method":"ping"}`}, "\n")+"\n", "mcp", "serve")
		if r.Code != 0 || !strings.Contains(r.Stdout, "not a regular file") || !strings.Contains(r.Stdout, `"id":3`) {
			t.Fatalf("%+v", r)
		}
	})
	for _, file := range []string{"~/.agent/settings.json", ".agent/settings.json", ".compat/settings.local.json"} {
		t.Run("settings file "+file, func(t *testing.T) {
			s := newSandbox(t)
			s.runGuarded("", "trust", "--yes")
			p := s.mkfifo(file)
			r := s.runGuarded("", "mcp", "list")
			if r.Code != 0 || !strings.Contains(r.Stdout, p+": cannot read: not a regular file (a FIFO)") {
				t.Fatalf("%+v", r)
			}
		})
	}
	t.Run("the keybindings file", func(t *testing.T) {
		s := newSandbox(t)
		s.mkfifo("~/.agent/keybindings.json")
		r := s.runGuarded("", "keybindings", "check")
		if r.Code != 1 || !strings.Contains(r.Stderr, "not a regular file") {
			t.Fatalf("%+v", r)
		}
		s.mkfifo("kb.json")
		r = s.runGuarded("", "keybindings", "check", "kb.json")
		if r.Code != 1 || !strings.Contains(r.Stderr, "kb.json") || !strings.Contains(r.Stderr, "not a regular file") {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("a grant file", func(t *testing.T) {
		s, _ := printSandbox(t)
		g := s.mkfifo("grant.json")
		r := s.runGuarded("", "session", "start", "--background", "--external-event-grant", g, "--external-event-port", "9999")
		if r.Code != 1 || !strings.Contains(r.Stderr, "grant.json") || !strings.Contains(r.Stderr, "not a regular file") {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("the trust store", func(t *testing.T) {
		s := newSandbox(t)
		s.mkfifo("~/.agent/trusted-workspaces.json")
		r := s.runGuarded("", "trust", "status")
		if r.Code != 1 || !strings.Contains(r.Stderr, "not a regular file") {
			t.Fatalf("%+v", r)
		}
	})
	// An instruction file or an import that is a FIFO is a diagnostic on
	// stderr naming it; the session runs with the other files.
	t.Run("instruction files and an import", func(t *testing.T) {
		s, srv := printSandbox(t, fakemodel.Reply{Text: "ok"})
		user := s.mkfifo("~/.agent/AGENTS.md")
		project := s.mkfifo("AGENTS.md")
		s.mkfifo("pipe.md")
		claude := s.write("CLAUDE.md", "Rule one.\n@pipe.md\n")
		r := s.runGuarded("", "-p", "hi")
		if r.Code != 0 || r.Stdout != "ok\n" {
			t.Fatalf("%+v", r)
		}
		for _, want := range []string{user + ": cannot be read: not a regular file (a FIFO)", project + ": cannot be read: not a regular file (a FIFO)", claude + ":2: @pipe.md"} {
			if !strings.Contains(r.Stderr, "agent: instructions: "+want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
			}
		}
		if !strings.Contains(string(srv.Requests()[0]), "Rule one.") {
			t.Errorf("CLAUDE.md did not reach the model: %s", srv.Requests()[0])
		}
	})
	t.Run("a credential file", func(t *testing.T) {
		s := newSandbox(t)
		settings := s.write("~/.agent/settings.json", `{"mcpServers": {"remote": {"type": "http", "url": "https://mcp.example.com/mcp", "oauth": {}}}}`)
		store := oauth.NewStore(filepath.Join(s.Home, ".agent"))
		if err := os.MkdirAll(store.Dir, 0o700); err != nil {
			t.Fatal(err)
		}
		p := store.Path(oauth.Identity{Name: "remote", Scope: "user", File: settings, URL: "https://mcp.example.com/mcp"})
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		r := s.runGuarded("", "mcp", "list")
		if r.Code != 0 || !strings.Contains(r.Stdout, "remote\tpending\tuser\thttp\tcredentials unreadable") {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("a transcript to resume", func(t *testing.T) {
		s, _ := printSandbox(t, fakemodel.Reply{Text: "x"})
		s.mkfifo("~/.agent/sessions/abc.jsonl")
		r := s.runGuarded("", "-p", "--resume", "abc", "hi")
		if r.Code != 1 || !strings.Contains(r.Stderr, "not a regular file") {
			t.Fatalf("%+v", r)
		}
	})
}
