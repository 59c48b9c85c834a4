package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agent/internal/fakemodel"
)

// hookSandbox is a trusted print-mode workspace whose user settings hold
// the given hooks (user hooks run without approval).
func hookSandbox(t *testing.T, hooksJSON string, replies ...fakemodel.Reply) (*sandbox, *fakemodel.Server) {
	t.Helper()
	s, srv := printSandbox(t, replies...)
	s.write("~/.agent/settings.json", `{"defaultModel": {"provider": "local", "model": "fake-model"},
		"providers": {"local": {"baseURL": "`+srv.URL()+`"}},
		"permissions": {"allow": ["Bash", "Write"]},
		"hooks": `+hooksJSON+`}`)
	return s, srv
}

// A PreToolUse hook that exits 2 blocks the Bash call; its stderr reaches
// the model in the next request, and the command never runs.
func TestE2EHookBlocksBashWithExit2(t *testing.T) {
	s, srv := hookSandbox(t, `{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
		"command": "grep -q 'rm -rf' && { echo 'no rm -rf here, use trash' >&2; exit 2; }; exit 0"}]}]}`,
		call("c1", "Bash", `{"command":"rm -rf victim"}`), fakemodel.Reply{Text: "understood"})
	s.write("victim/file", "keep me")
	r := s.run("", "-p", "clean up")
	if r.Code != 0 || r.Stdout != "understood\n" {
		t.Fatal(brief(r))
	}
	if _, err := os.Stat(filepath.Join(s.Work, "victim", "file")); err != nil {
		t.Fatal("the blocked command ran")
	}
	if body := string(srv.Requests()[1]); !strings.Contains(body, "no rm -rf here, use trash") || !strings.Contains(body, "A hook blocked this Bash call") {
		t.Fatalf("the second request lacks the reason: %.1500s", body)
	}
}

// A PostToolUse hook formats the file Write wrote; its context reaches the
// model.
func TestE2EHookFormatsAfterWrite(t *testing.T) {
	s, srv := hookSandbox(t, `{"PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command",
		"command": "f=$(sed -n 's/.*\"file_path\":\"\\([^\"]*\\)\".*/\\1/p'); tr a-z A-Z < \"$f\" > \"$f.tmp\" && mv \"$f.tmp\" \"$f\"; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"formatted to upper case\"}}'"}]}]}`,
		call("c1", "Write", `{"file_path":"notes.txt","content":"hello hooks\n"}`), fakemodel.Reply{Text: "written"})
	r := s.run("", "-p", "write notes")
	if r.Code != 0 {
		t.Fatal(brief(r))
	}
	if got := s.read(filepath.Join(s.Work, "notes.txt")); got != "HELLO HOOKS\n" {
		t.Fatalf("the file is %q", got)
	}
	if body := string(srv.Requests()[1]); !strings.Contains(body, "formatted to upper case") {
		t.Fatalf("the context did not reach the model: %.1500s", body)
	}
}

// UserPromptSubmit adds context to the prompt; a blocking one stops the
// prompt before it is sent.
func TestE2EHookPromptSubmit(t *testing.T) {
	t.Run("context", func(t *testing.T) {
		s, srv := hookSandbox(t, `{"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'The sprint ends on Friday.'"}]}]}`, fakemodel.Reply{Text: "ok"})
		if r := s.run("", "-p", "plan the week"); r.Code != 0 {
			t.Fatal(brief(r))
		}
		if body := string(srv.Requests()[0]); !strings.Contains(body, "The sprint ends on Friday.") || !strings.Contains(body, "plan the week") {
			t.Fatalf("first request: %.1500s", body)
		}
	})
	t.Run("block", func(t *testing.T) {
		s, srv := hookSandbox(t, `{"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo '{\"decision\":\"block\",\"reason\":\"no secrets in prompts\"}'"}]}]}`, fakemodel.Reply{Text: "never"})
		r := s.run("", "-p", "my password is hunter2")
		if r.Code != 1 || !strings.Contains(r.Stderr, "no secrets in prompts") || len(srv.Requests()) != 0 {
			t.Fatalf("%s; %d requests", brief(r), len(srv.Requests()))
		}
	})
}

// A Stop hook that asks to go on once (stop_hook_active tells it it did).
func TestE2EHookStopContinuesOnce(t *testing.T) {
	s, srv := hookSandbox(t, `{"Stop": [{"hooks": [{"type": "command",
		"command": "grep -q '\"stop_hook_active\":true' && exit 0; echo 'run the tests before you stop' >&2; exit 2"}]}]}`,
		fakemodel.Reply{Text: "done"}, fakemodel.Reply{Text: "tests pass, done"})
	r := s.run("", "-p", "fix it")
	if r.Code != 0 || r.Stdout != "tests pass, done\n" || len(srv.Requests()) != 2 {
		t.Fatalf("%s; %d requests", brief(r), len(srv.Requests()))
	}
	if body := string(srv.Requests()[1]); !strings.Contains(body, "Stop hook feedback:\\nrun the tests before you stop") {
		t.Fatalf("second request: %.1500s", body)
	}
}

// A failing hook is reported on stderr and blocks nothing; with failClosed
// it blocks.
func TestE2EHookFailures(t *testing.T) {
	for _, c := range []struct {
		name       string
		failClosed bool
		ran        bool
	}{{"fails open", false, true}, {"fails closed", true, false}} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := hookSandbox(t, fmt.Sprintf(`{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/nonexistent/check", "failClosed": %v}]}]}`, c.failClosed),
				call("c1", "Bash", `{"command":"touch ran"}`), fakemodel.Reply{Text: "ok"})
			r := s.run("", "-p", "go")
			if r.Code != 0 || !strings.Contains(r.Stderr, "agent: hook failed: PreToolUse: hook /nonexistent/check") {
				t.Fatal(brief(r))
			}
			if _, err := os.Stat(filepath.Join(s.Work, "ran")); (err == nil) != c.ran {
				t.Errorf("the command ran: %v", err == nil)
			}
		})
	}
}

// A project hook runs only once approved: pending, print mode skips it
// with one stderr line; approved, it runs; its script changed, it is
// pending again.
func TestE2EProjectHookApproval(t *testing.T) {
	s, _ := printSandbox(t, fakemodel.Reply{Text: "one"}, fakemodel.Reply{Text: "two"}, fakemodel.Reply{Text: "three"})
	s.write(".compat/hooks/mark.sh", "#!/bin/sh\ntouch \"$CLAUDE_PROJECT_DIR/marked\"\n")
	os.Chmod(filepath.Join(s.Work, ".compat/hooks/mark.sh"), 0o755)
	s.write(".compat/settings.json", `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.compat/hooks/mark.sh"}]}]}}`)
	marked := filepath.Join(s.Work, "marked")

	r := s.run("", "-p", "hi")
	if r.Code != 0 || strings.Count(r.Stderr, "is not approved: it does not run here") != 1 {
		t.Fatal(brief(r))
	}
	if _, err := os.Stat(marked); err == nil {
		t.Fatal("a pending project hook ran")
	}
	list := s.run("", "hooks", "list")
	if list.Code != 0 || !strings.Contains(list.Stdout, "pending") || !strings.Contains(list.Stdout, "UserPromptSubmit") {
		t.Fatal(brief(list))
	}
	if r := s.run("", "hooks", "approve"); r.Code != 1 || !strings.Contains(r.Stderr, "not on a terminal") {
		t.Fatal(brief(r))
	}
	if r := s.run("", "hooks", "approve", "--all"); r.Code != 0 || !strings.Contains(r.Stdout, "Approved 1 hook") {
		t.Fatal(brief(r))
	}
	if fi, err := os.Stat(filepath.Join(s.Home, ".agent", "hook-approvals.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("approvals file: %v", err)
	}
	if r := s.run("", "-p", "hi"); r.Code != 0 || strings.Contains(r.Stderr, "not approved") {
		t.Fatal(brief(r))
	}
	if _, err := os.Stat(marked); err != nil {
		t.Fatal("the approved hook did not run")
	}
	os.Remove(marked)
	s.write(".compat/hooks/mark.sh", "#!/bin/sh\ntouch \"$CLAUDE_PROJECT_DIR/marked\"; echo changed\n")
	if r := s.run("", "-p", "hi"); r.Code != 0 || !strings.Contains(r.Stderr, "is not approved") {
		t.Fatal(brief(r))
	}
	if _, err := os.Stat(marked); err == nil {
		t.Fatal("a hook whose script changed ran")
	}
}

// Write asks before changing a settings file whatever the mode; headless,
// that is a denial naming the rule that allows it.
func TestE2EWriteToSettingsAsks(t *testing.T) {
	s, srv := printSandbox(t, call("c1", "Write", `{"file_path":".agent/settings.json","content":"{\"hooks\":{}}"}`), fakemodel.Reply{Text: "ok"})
	r := s.run("", "-p", "--permission-mode", "bypassPermissions", "change settings")
	if r.Code != 0 {
		t.Fatal(brief(r))
	}
	if _, err := os.Stat(filepath.Join(s.Work, ".agent", "settings.json")); err == nil {
		t.Fatal("the settings file was written")
	}
	if body := string(srv.Requests()[1]); !strings.Contains(body, "settings file") {
		t.Fatalf("second request: %.1500s", body)
	}
}
