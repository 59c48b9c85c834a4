package main

import (
	"path/filepath"
	"strings"
	"testing"

	"agent/tui/keymap"
)

// End-to-end tests of "agent keybindings check" (docs/reference/cli.md,
// "Keybindings check"): exact output lines and exit codes through the built
// binary.

func TestE2EKeybindingsCheckDefaultFile(t *testing.T) {
	s := newSandbox(t)
	def := filepath.Join(s.Home, ".agent", "keybindings.json")

	r := s.run("", "keybindings", "check")
	if r.Code != 0 || r.Stdout != "ok: no overrides (defaults in use)\n" || r.Stderr != "" {
		t.Errorf("missing default file: %+v", r)
	}

	s.write("~/.agent/keybindings.json", keymap.Template)
	r = s.run("", "keybindings", "check")
	if r.Code != 0 || r.Stdout != "ok: "+def+"\n" || r.Stderr != "" {
		t.Errorf("the /keybindings template: %+v", r)
	}

	s.write("~/.agent/keybindings.json", `{
  "version": 1,
  "bindings": {
    "chat-input": {"submit": ["enter", "ctrl+m"], "history-search": "ctrl+x ctrl+r"},
    "thinking": {"abort": null},
    "list-picker": {"select": "ctrl+c"}
  }
}`)
	r = s.run("", "keybindings", "check")
	want := def + `: $.bindings.chat-input.submit[1]: duplicate item: "ctrl+m" is the same key as "enter" at $.bindings.chat-input.submit[0]` + "\n" +
		def + `: $.bindings.list-picker.select: "ctrl+c" cannot be bound: ctrl+c is reserved for interrupt and exit` + "\n"
	if r.Code != 1 || r.Stdout != "" || r.Stderr != want {
		t.Errorf("invalid default file: code %d\nstdout %q\nstderr %q\nwant   %q", r.Code, r.Stdout, r.Stderr, want)
	}
}

func TestE2EKeybindingsCheckExplicitFile(t *testing.T) {
	s := newSandbox(t)
	s.write("kb.json", `{"version": 1, "bindings": {"chat-input": {"submit": ["enter", "alt+enter"]}}}`)
	r := s.run("", "keybindings", "check", "kb.json")
	if r.Code != 0 || r.Stdout != "ok: kb.json\n" || r.Stderr != "" {
		t.Errorf("valid relative file: %+v", r)
	}
	abs := s.write(filepath.Join(s.Work, "sub", "abs.json"), `{"version": 1, "bindings": {}}`)
	if r := s.run("", "keybindings", "check", abs); r.Code != 0 || r.Stdout != "ok: "+abs+"\n" {
		t.Errorf("valid absolute file: %+v", r)
	}

	// A missing file given explicitly is a failure, with a clear message.
	r = s.run("", "keybindings", "check", "nope.json")
	if r.Code != 1 || r.Stdout != "" || r.Stderr != "agent keybindings check: nope.json: no such file\n" {
		t.Errorf("missing explicit file: %+v", r)
	}
	// So is something that is not a regular file.
	if r := s.run("", "keybindings", "check", "sub"); r.Code != 1 || !strings.Contains(r.Stderr, "sub") || r.Stdout != "" {
		t.Errorf("a directory: %+v", r)
	}

	// A file over the size bound is refused without being parsed.
	s.write("big.json", `{"version": 1, "bindings": {}}`+strings.Repeat(" ", 1<<20))
	if r := s.run("", "keybindings", "check", "big.json"); r.Code != 1 || r.Stdout != "" ||
		r.Stderr != "agent keybindings check: big.json: larger than 1048576 bytes: not a keybindings file\n" {
		t.Errorf("a file over 1 MiB: %+v", r)
	}

	// Every problem of a broken document, one line each.
	s.write("dup.json", "{\n  \"version\": 1,\n  \"version\": 1,\n  \"bindings\": {\"galaxy\": {}}\n}\n")
	r = s.run("", "keybindings", "check", "dup.json")
	want := "dup.json: $.version: duplicate key \"version\" (first at line 2)\n" +
		"dup.json: $.bindings.galaxy: unknown context \"galaxy\"\n"
	if r.Code != 1 || r.Stderr != want || r.Stdout != "" {
		t.Errorf("duplicate keys: code %d stderr %q, want %q", r.Code, r.Stderr, want)
	}
	s.write("syntax.json", `{"version": 1,}`)
	r = s.run("", "keybindings", "check", "syntax.json")
	if r.Code != 1 || r.Stderr != "syntax.json: $: not valid JSON: line 1, column 15: expected a string key, found '}'\n" {
		t.Errorf("syntax error: %+v", r)
	}
}

func TestE2EKeybindingsCheckWarnings(t *testing.T) {
	s := newSandbox(t)
	s.write("warn.json", `{"version": 1, "bindings": {"chat-input": {"history-search": "ctrl+b"}, "list-picker": {"select": "ctrl+K"}}}`)
	r := s.run("", "keybindings", "check", "warn.json")
	want := `warn.json: $.bindings.chat-input.history-search: warning: "ctrl+b": ctrl+b is the prefix key of terminal multiplexers such as tmux, which may not pass it on` + "\n" +
		`warn.json: $.bindings.list-picker.select: warning: "ctrl+K": many terminals cannot deliver ctrl+shift+k (ctrl+shift with a letter)` + "\n"
	if r.Code != 0 || r.Stdout != "ok: warn.json\n" || r.Stderr != want {
		t.Errorf("warnings only: code %d stdout %q\nstderr %q\nwant   %q", r.Code, r.Stdout, r.Stderr, want)
	}

	// Warnings do not change the exit code of an invalid file either.
	s.write("both.json", `{"version": 1, "bindings": {"list-picker": {"select": "ctrl+K", "next": "nope"}}}`)
	r = s.run("", "keybindings", "check", "both.json")
	lines := strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
	if r.Code != 1 || r.Stdout != "" || len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "both.json: $.bindings.list-picker.select: warning: ") ||
		lines[1] != `both.json: $.bindings.list-picker.next: invalid key string "nope": unknown key "nope"` {
		t.Errorf("invalid with a warning: %+v", r)
	}
}

func TestE2EKeybindingsCheckUsage(t *testing.T) {
	s := newSandbox(t)
	for _, args := range [][]string{
		{"keybindings", "check", "a.json", "b.json"},
		{"keybindings", "check", "--bogus"},
		{"keybindings", "check", "-x"},
		{"keybindings"},
		{"keybindings", "verify"},
	} {
		r := s.run("", args...)
		lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
		if r.Code != 2 || r.Stdout != "" || len(lines) != 1 || !strings.Contains(r.Stderr, "--help") {
			t.Errorf("agent %v: %+v", args, r)
		}
	}
	for _, args := range [][]string{{"keybindings", "check", "--help"}, {"help", "keybindings", "check"}} {
		r := s.run("", args...)
		if r.Code != 0 || !strings.HasPrefix(r.Stdout, "Usage: agent keybindings check [FILE]\n") || r.Stderr != "" {
			t.Errorf("agent %v: %+v", args, r)
		}
	}
	if r := s.run("", "keybindings", "--help"); r.Code != 0 || !strings.Contains(r.Stdout, "agent keybindings check [FILE]") {
		t.Errorf("group help: %+v", r)
	}
	if r := s.run("", "--help"); !strings.Contains(r.Stdout, "keybindings check") {
		t.Errorf("overview lacks the command: %q", r.Stdout)
	}
}
