package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"agent/internal/fakemodel"
)

// framingOf splits the first model request into what came before the
// prompt (the system messages and the context message, as role: text
// lines) and the prompt.
func framingOf(t *testing.T, body []byte) (framing []string, prompt string) {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) < 2 {
		t.Fatalf("request %s: %v", body, err)
	}
	for _, m := range req.Messages {
		framing = append(framing, m.Role+": "+fmt.Sprint(m.Content))
	}
	n := len(framing)
	return framing[:n-1], framing[n-1]
}

// TestE2ESamePrompt: print mode, the
// interactive session (its plain line mode), a background session and
// mcp serve take --system-prompt and --append-system-prompt over the
// settings systemPrompt and appendSystemPrompt, and send the same system
// prompt (the text, then the environment block) and the same context
// message (the instruction files, the git snapshot) before the prompt
// (docs/reference/runtime.md, "System prompt and instruction files").
func TestE2ESamePrompt(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	flags := []string{"--system-prompt", "You are the flag's agent.", "--append-system-prompt", "Appended by the flag."}
	// Short row names: a background session's socket path holds them.
	cases := []struct {
		name string
		run  func(t *testing.T, s *sandbox)
	}{
		{"print", func(t *testing.T, s *sandbox) {
			if r := s.run("", append([]string{"-p", "go on"}, flags...)...); r.Code != 0 {
				t.Fatalf("%+v", r)
			}
		}},
		{"interactive", func(t *testing.T, s *sandbox) {
			if r := s.run("go on\n", flags...); r.Code != 0 {
				t.Fatalf("%+v", r)
			}
		}},
		{"background", func(t *testing.T, s *sandbox) {
			id := bgStart(t, s, flags...)
			if resp := control(t, s, id, `{"op":"submit","prompt":"go on","wait":true}`); !resp.OK {
				t.Fatalf("submit: %+v", resp)
			}
		}},
		{"serve", func(t *testing.T, s *sandbox) {
			msgs, r := stdioLines(t, s, flags, initLine,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"go on"}}}`)
			if text, isErr := resultText(t, byID(msgs)["2"]); r.Code != 0 || isErr || text != "ok" {
				t.Fatalf("agent_submit %q %v: %+v", text, isErr, r)
			}
		}},
	}
	var first []string
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, srv := printSandbox(t, fakemodel.Reply{Text: "ok"})
			s.write(".agent/settings.json", `{"systemPrompt": "The setting's text.", "appendSystemPrompt": "Appended by the setting."}`)
			s.write("AGENTS.md", "Project rule: build with make.\n")
			s.gitCommitAll("trunk", "the first commit")
			c.run(t, s)
			reqs := srv.Requests()
			if len(reqs) == 0 {
				t.Fatal("no model request")
			}
			framing, prompt := framingOf(t, reqs[0])
			if !strings.Contains(prompt, "go on") {
				t.Errorf("the last message is not the prompt: %s", prompt)
			}
			all := strings.Join(framing, "\n")
			for _, want := range []string{"system: You are the flag's agent.", "# Environment", "Workspace: " + s.Work,
				"Appended by the flag.", "Project rule: build with make.", "the first commit"} {
				if !strings.Contains(all, want) {
					t.Errorf("the framing lacks %q:\n%s", want, all)
				}
			}
			for _, not := range []string{"The setting's text.", "Appended by the setting.", "You are agent,"} {
				if strings.Contains(all, not) {
					t.Errorf("the framing holds %q:\n%s", not, all)
				}
			}
			// Apart from the workspace (each row has its own), every
			// front end sends the same framing.
			for i := range framing {
				framing[i] = strings.ReplaceAll(framing[i], s.Work, "WORKSPACE")
			}
			if first == nil {
				first = framing
			} else if strings.Join(framing, "\n") != strings.Join(first, "\n") {
				t.Errorf("the framing differs from print mode's:\n%s\n--- print mode:\n%s", strings.Join(framing, "\n"), strings.Join(first, "\n"))
			}
		})
	}
}

// TestE2EInstructionFilesOverTheLimit: over instructions.maxBytes the
// farthest file is left out whole, and that is said on stderr (print
// mode), in the context message and in /context; never silently.
func TestE2EInstructionFilesOverTheLimit(t *testing.T) {
	s, srv := printSandbox(t, fakemodel.Reply{Text: "ok"})
	s.write(".agent/settings.json", `{"instructions": {"maxBytes": 100}}`)
	agents := s.write("AGENTS.md", "Farther: "+strings.Repeat("a", 70)+"\n")
	s.write("CLAUDE.md", "Closer: "+strings.Repeat("c", 70)+"\n")
	r := s.run("", "-p", "hi")
	if r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	if want := "agent: instructions: " + agents + ": left out"; !strings.Contains(r.Stderr, want) {
		t.Errorf("stderr lacks %q: %q", want, r.Stderr)
	}
	framing, _ := framingOf(t, srv.Requests()[0])
	all := strings.Join(framing, "\n")
	if !strings.Contains(all, "Closer: ") || strings.Contains(all, "Farther: ") || !strings.Contains(all, "[Left out to stay within 100 bytes of instructions: "+agents) {
		t.Errorf("the context message:\n%s", all)
	}
	if r := s.run("/context\n"); r.Code != 0 || !strings.Contains(r.Stdout, "left out over the limit: "+agents) {
		t.Errorf("/context: %+v", r)
	}
}
