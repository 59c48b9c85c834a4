package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"agent/internal/fakemodel"
)

// printSandbox is a trusted workspace whose default model is the fake
// server, through the local provider.
func printSandbox(t testing.TB, replies ...fakemodel.Reply) (*sandbox, *fakemodel.Server) {
	t.Helper()
	srv := fakemodel.New(replies...)
	t.Cleanup(srv.Close)
	s := newSandbox(t)
	s.write("~/.agent/settings.json", `{"defaultModel": {"provider": "local", "model": "fake-model"},
		"providers": {"local": {"baseURL": "`+srv.URL()+`"}}}`)
	if r := s.run("", "trust", "--yes"); r.Code != 0 {
		t.Fatalf("trust: %+v", r)
	}
	return s, srv
}

func TestE2EPrintText(t *testing.T) {
	s, srv := printSandbox(t, fakemodel.Reply{Text: "The answer is 42.", InputTokens: 9, OutputTokens: 5})
	r := s.run("", "-p", "what is the answer?")
	if r.Code != 0 || r.Stdout != "The answer is 42.\n" {
		t.Fatalf("%+v", r)
	}
	var req map[string]any
	json.Unmarshal(srv.Requests()[0], &req)
	if req["model"] != "fake-model" || !strings.Contains(string(srv.Requests()[0]), "what is the answer?") {
		t.Fatalf("request %s", srv.Requests()[0])
	}
}

func TestE2EPrintStdinAndFlags(t *testing.T) {
	s, srv := printSandbox(t, fakemodel.Reply{Text: "from stdin"}, fakemodel.Reply{Text: "dash"})
	if r := s.run("prompt on stdin\n", "--print", "--model", "other-model", "--system-prompt", "SYS"); r.Code != 0 || r.Stdout != "from stdin\n" {
		t.Fatalf("%+v", r)
	}
	body := string(srv.Requests()[0])
	if !strings.Contains(body, `"model":"other-model"`) || !strings.Contains(body, "prompt on stdin") || !strings.Contains(body, `"content":"SYS"`) {
		t.Fatalf("request %s", body)
	}
	if r := s.run("dash prompt", "-p", "-"); r.Code != 0 || r.Stdout != "dash\n" {
		t.Fatalf("%+v", r)
	}
}

func TestE2EPrintJSON(t *testing.T) {
	s, _ := printSandbox(t, fakemodel.Reply{Text: "json answer", InputTokens: 3, OutputTokens: 2}, fakemodel.Reply{Text: "streamed answer"})
	r := s.run("", "-p", "--output-format", "json", "q")
	var obj map[string]any
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &obj) != nil || strings.Count(r.Stdout, "\n") != 1 {
		t.Fatalf("%+v", r)
	}
	if obj["result"] != "json answer" || obj["session_id"] == "" || obj["stop_reason"] != "stop" || obj["usage"].(map[string]any)["input_tokens"].(float64) != 3 {
		t.Fatalf("%v", obj)
	}
	r = s.run("", "-p", "--output-format=stream-json", "q")
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	var deltas strings.Builder
	for _, l := range lines {
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if ev["type"] == "text" {
			deltas.WriteString(ev["delta"].(string))
		}
	}
	var last map[string]any
	json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	if r.Code != 0 || deltas.String() != "streamed answer" || last["type"] != "result" || last["result"] != "streamed answer" {
		t.Fatalf("%+v", r)
	}
}

func TestE2EPrintRefusals(t *testing.T) {
	s := newSandbox(t)
	// An untrusted workspace: exit 1 with the remedy.
	r := s.run("", "-p", "hi", "--provider", "local")
	if r.Code != 1 || !strings.Contains(r.Stderr, "agent trust --yes") || r.Stdout != "" {
		t.Fatalf("untrusted: %+v", r)
	}
	s.run("", "trust", "--yes")
	// A missing key names the variable, before any request.
	r = s.run("", "-p", "hi", "--provider", "reasoning")
	if r.Code != 1 || !strings.Contains(r.Stderr, "REASONING_API_KEY") {
		t.Fatalf("missing key: %+v", r)
	}
	r = s.run("", "-p", "hi")
	if r.Code != 1 || !strings.Contains(r.Stderr, "--provider") {
		t.Fatalf("no provider: %+v", r)
	}
	for _, args := range [][]string{
		{"-p", "hi", "--external-event-port", "9000"},
		{"-p", "hi", "--output-format", "xml"},
		{"-p", "hi", "--permission-mode", "yolo"},
		{"-p", "a", "b"},
		{"-p", "--bogus", "x"},
	} {
		r := s.run("", args...)
		if r.Code != 2 || len(strings.Split(strings.TrimSpace(r.Stderr), "\n")) != 1 {
			t.Errorf("%v: %+v", args, r)
		}
	}
	if r := s.run("", "-p"); r.Code != 2 {
		t.Errorf("empty prompt: %+v", r)
	}
}

func TestE2EPrintFailedTurn(t *testing.T) {
	s, _ := printSandbox(t, fakemodel.Reply{Status: 401, Body: `{"error":{"message":"bad key","type":"authentication_error"}}`})
	r := s.run("", "-p", "hi")
	if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, "the turn failed") {
		t.Fatalf("%+v", r)
	}
}

// Ctrl-C during a print-mode turn aborts it and exits 130
// (docs/reference/cli.md, "Print mode").
func TestE2EPrintInterrupted(t *testing.T) {
	s, srv := printSandbox(t, fakemodel.Reply{Text: "never finishing", Hang: true})
	cmd := exec.Command(agentBinary(t), "-p", "wait")
	cmd.Dir = s.Work
	cmd.Env = []string{"HOME=" + s.Home, "PATH=" + os.Getenv("PATH")}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.Started():
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("no model request")
	}
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("did not exit after SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d, stdout %q stderr %q", code, out.String(), errb.String())
	}
}

// TestE2ESystemPromptSettingsAndFlags: systemPrompt replaces the built-in
// text and appendSystemPrompt adds to it; the flags win over the settings.
func TestE2ESystemPromptSettingsAndFlags(t *testing.T) {
	cases := []struct {
		name     string
		settings string
		args     []string
		want     []string
		not      []string
	}{
		{"the built-in text", ``, nil, []string{"You are agent"}, nil},
		{"appendSystemPrompt adds", `"appendSystemPrompt": "Always answer in French."`, nil, []string{"You are agent", "Always answer in French."}, nil},
		{"the append flag wins", `"appendSystemPrompt": "from settings"`, []string{"--append-system-prompt", "from the flag"}, []string{"from the flag"}, []string{"from settings"}},
		{"systemPrompt replaces", `"systemPrompt": "You are a terse bot."`, nil, []string{"You are a terse bot."}, []string{"You are agent"}},
		{"the replace flag wins", `"systemPrompt": "setting text"`, []string{"--system-prompt", "flag text"}, []string{"flag text"}, []string{"setting text"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, srv := printSandbox(t, fakemodel.Reply{Text: "ok"})
			if c.settings != "" {
				s.write(".agent/settings.json", "{"+c.settings+"}")
			}
			r := s.run("", append([]string{"-p", "hi"}, c.args...)...)
			if r.Code != 0 {
				t.Fatalf("%+v", r)
			}
			var req struct {
				Messages []struct {
					Role    string `json:"role"`
					Content any    `json:"content"`
				} `json:"messages"`
			}
			json.Unmarshal(srv.Requests()[0], &req)
			system := ""
			for _, m := range req.Messages {
				if m.Role == "system" {
					system += fmt.Sprint(m.Content) + "\n"
				}
			}
			if system == "" {
				t.Fatalf("no system message: %s", srv.Requests()[0])
			}
			for _, w := range c.want {
				if !strings.Contains(system, w) {
					t.Errorf("system message lacks %q: %s", w, system)
				}
			}
			for _, n := range c.not {
				if strings.Contains(system, n) {
					t.Errorf("system message has %q: %s", n, system)
				}
			}
		})
	}
}

// TestE2EInitWritesAgentsFile: /init asks the model, with the read-only
// tools and Write and Edit only, to write AGENTS.md; the write goes
// through the permission check.
func TestE2EInitWritesAgentsFile(t *testing.T) {
	s, srv := printSandbox(t,
		call("c1", "Write", `{"file_path":"AGENTS.md","content":"# Agents\n\nRun go test ./...\n"}`),
		fakemodel.Reply{Text: "Wrote AGENTS.md."})
	r := s.run("/init\n", "--permission-mode", "acceptEdits")
	if r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	if got := s.read(s.Work + "/AGENTS.md"); !strings.Contains(got, "Run go test") {
		t.Fatalf("AGENTS.md %q; stdout %q stderr %q", got, r.Stdout, r.Stderr)
	}
	var req struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	json.Unmarshal(srv.Requests()[0], &req)
	var names []string
	for _, tl := range req.Tools {
		names = append(names, tl.Function.Name)
	}
	if strings.Join(names, ",") != "Read,Write,Edit,Glob,Grep" {
		t.Fatalf("tools offered to /init: %v", names)
	}
	if !strings.Contains(string(srv.Requests()[0]), "AGENTS.md") {
		t.Fatalf("the /init prompt: %s", srv.Requests()[0])
	}
}

// TestE2EInstructionFilesReachTheModel: the first request carries the
// environment block and, in the context message, the user's and the
// repository's instruction files and the git snapshot; a file below the
// workspace is attached to the result of the first tool call that reaches
// its folder; a missing import is a diagnostic on stderr, not a failure.
func TestE2EInstructionFilesReachTheModel(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	s, srv := printSandbox(t, call("c1", "Read", `{"file_path":"sub/code.txt"}`), fakemodel.Reply{Text: "done"})
	s.write("~/.agent/AGENTS.md", "Prefer tabs (user rule).\n")
	agents := s.write("AGENTS.md", "Run the tests with make check.\n@docs/extra.md\n@docs/missing.md\n")
	s.write("docs/extra.md", "Imported: never edit generated files.\n")
	s.write("sub/AGENTS.md", "In sub, names are kebab-case.\n")
	s.write("sub/code.txt", "hello\n")
	s.gitCommitAll("trunk", "the first commit")
	r := s.run("", "-p", "go")
	if r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	first := string(srv.Requests()[0])
	for _, want := range []string{
		s.Work,                                  // the environment block names the workspace
		"trunk",                                 // and the branch
		"Prefer tabs (user rule).",              // the user's file
		"Run the tests with make check.",        // the project's file
		"Imported: never edit generated files.", // its import
		"the first commit",                      // the git snapshot
	} {
		if !strings.Contains(first, want) {
			t.Errorf("the first request lacks %q", want)
		}
	}
	if strings.Contains(first, "kebab-case") {
		t.Error("a file below the workspace was sent before a tool reached its folder")
	}
	if second := string(srv.Requests()[1]); !strings.Contains(second, "kebab-case") {
		t.Errorf("the Read result in sub/ lacks sub/AGENTS.md: %s", second)
	}
	// The diagnostic names the file and the line, once.
	if want := "agent: instructions: " + agents + ":3: @docs/missing.md: no such file\n"; strings.Count(r.Stderr, want) != 1 {
		t.Errorf("stderr does not hold %q once: %q", want, r.Stderr)
	}
}

// TestE2EMemoryAndContextCommands: /memory lists the instruction files
// with their sizes and problems, /memory reload reads them again, /context
// breaks the context down; --output-format json names the files loaded.
func TestE2EMemoryAndContextCommands(t *testing.T) {
	s, _ := printSandbox(t, fakemodel.Reply{Text: "ok"})
	agents := s.write("AGENTS.md", "Use make.\n@gone.md\n")
	r := s.run("/memory\n/context\n/memory reload\n")
	if r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	for _, want := range []string{agents, "project instructions", "problem:", "gone.md", "system prompt", "tool definitions", "instruction files", "Reloaded the instruction files"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("plain session output lacks %q:\n%s", want, r.Stdout)
		}
	}
	r = s.run("", "-p", "--output-format", "json", "hi")
	var out struct {
		InstructionFiles []string `json:"instruction_files"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || len(out.InstructionFiles) != 1 || out.InstructionFiles[0] != agents {
		t.Fatalf("instruction_files %v (%v): %s", out.InstructionFiles, err, r.Stdout)
	}
}
