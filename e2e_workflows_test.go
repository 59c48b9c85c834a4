package main

import (
	"encoding/json"
	"strings"
	"testing"

	"agent/internal/fakemodel"
)

// A custom command from .compat/commands runs in print mode as /name, its
// arguments filled and its allowed-tools pre-approving its Bash call.
func TestE2ECustomCommandInPrintMode(t *testing.T) {
	s, srv := printSandbox(t, call("c1", "Bash", `{"command":"echo ok > released.txt"}`), fakemodel.Reply{Text: "released"})
	s.write(".compat/commands/release.md", "---\ndescription: Cut a release\nargument-hint: [version]\nallowed-tools: Bash(echo:*)\n---\nRelease version $1 now.\n")
	r := s.run("", "-p", "/release 1.4.0")
	if r.Code != 0 || r.Stdout != "released\n" {
		t.Fatal(brief(r))
	}
	if body := string(srv.Requests()[0]); !strings.Contains(body, "Release version 1.4.0 now.") {
		t.Fatalf("first request %.800s", body)
	}
	if s.read(s.Work+"/released.txt") != "ok\n" {
		t.Error("the pre-approved Bash call did not run")
	}
	// A prompt that names no command is sent as it is.
	srv.Add(fakemodel.Reply{Text: "plain"})
	if r := s.run("", "-p", "/nosuch thing"); r.Code != 0 || !strings.Contains(string(srv.Requests()[len(srv.Requests())-1]), "/nosuch thing") {
		t.Fatal(brief(r))
	}
}

// A skill invoked by the user as /name: its body is the prompt.
func TestE2ESkillByTheUser(t *testing.T) {
	s, srv := printSandbox(t, fakemodel.Reply{Text: "done"})
	s.write(".agent/skills/changelog/SKILL.md", "---\nname: changelog\ndescription: Write the changelog entry for a change\n---\nWRITE THE CHANGELOG for $ARGUMENTS\n")
	if r := s.run("", "-p", "/changelog the parser fix"); r.Code != 0 {
		t.Fatal(brief(r))
	}
	body := string(srv.Requests()[0])
	if !strings.Contains(body, "WRITE THE CHANGELOG for the parser fix") || !strings.Contains(body, "- changelog: Write the changelog entry") {
		t.Fatalf("request %.1200s", body)
	}
}

// --agents defines a subagent for one run; the model uses it; its report
// comes back with the figures line.
func TestE2EAgentsFlag(t *testing.T) {
	s, srv := printSandbox(t,
		call("c1", "Agent", `{"description":"review","prompt":"Review the diff","subagent_type":"reviewer"}`),
		fakemodel.Reply{Text: "LGTM from the reviewer"},
		fakemodel.Reply{Text: "the review is done"})
	agents := `{"reviewer": {"description": "Reviews diffs", "prompt": "You review code carefully.", "tools": ["Read", "Grep"]}}`
	r := s.run("", "-p", "--agents", agents, "review my change")
	if r.Code != 0 || r.Stdout != "the review is done\n" {
		t.Fatal(brief(r))
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || !strings.Contains(string(reqs[1]), "You review code carefully.") {
		t.Fatalf("%d requests; child %.600s", len(reqs), reqs[1])
	}
	var child struct {
		Tools []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
	}
	json.Unmarshal(reqs[1], &child)
	if len(child.Tools) != 2 {
		t.Errorf("the child's tools %+v", child.Tools)
	}
	if !strings.Contains(string(reqs[2]), "LGTM from the reviewer") || !strings.Contains(string(reqs[2]), "tool calls") {
		t.Errorf("the parent's last request %.800s", reqs[2])
	}
	if r := s.run("", "-p", "--agents", `{"x": {}}`, "hi"); r.Code != 2 || !strings.Contains(r.Stderr, "--agents") {
		t.Fatal(brief(r))
	}
}

// /agents lists the definitions and their problems; a broken one is
// reported on stderr with its file at the start.
func TestE2EAgentsListing(t *testing.T) {
	s, _ := printSandbox(t, fakemodel.Reply{Text: "ok"})
	s.write(".agent/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews code\nfavourite: tea\n---\nReview.\n")
	s.write(".agent/agents/broken.md", "---\nname: broken\n---\n")
	r := s.run("/agents\n")
	if r.Code != 0 || !strings.Contains(r.Stdout, "reviewer") || !strings.Contains(r.Stdout, "Explore") || !strings.Contains(r.Stdout, "general-purpose") || !strings.Contains(r.Stdout, "the description is missing") {
		t.Fatal(brief(r))
	}
	if !strings.Contains(r.Stderr, "broken.md: the description is missing") || !strings.Contains(r.Stderr, `unknown key "favourite"`) {
		t.Fatal(brief(r))
	}
}
