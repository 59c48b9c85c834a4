package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"agent/agent/compact"
	"agent/internal/fakemodel"
)

// contextSandbox is a print-mode workspace with files to read whose model,
// the fake server, has a small context window that the settings tell
// (models), or that nothing tells when window is 0.
func contextSandbox(t *testing.T, window int, replies ...fakemodel.Reply) (*sandbox, *fakemodel.Server) {
	t.Helper()
	srv := fakemodel.New(replies...)
	t.Cleanup(srv.Close)
	s := newSandbox(t)
	models := ""
	if window > 0 {
		models = fmt.Sprintf(`, "models": {"fake-model": {"contextWindow": %d, "maxOutputTokens": 2000}}`, window)
	}
	s.write("~/.agent/settings.json", `{"defaultModel": {"provider": "local", "model": "fake-model"},
		"providers": {"local": {"baseURL": "`+srv.URL()+`"}}`+models+`}`)
	for i := range 12 {
		s.write(fmt.Sprintf("file%d.txt", i), strings.Repeat(fmt.Sprintf("line of file %d with some words in it\n", i), 600))
	}
	if r := s.run("", "trust", "--yes"); r.Code != 0 {
		t.Fatalf("trust: %+v", r)
	}
	return s, srv
}

// brief is a run's result cut for a failure message.
func brief(r result) string {
	cut := func(s string) string {
		if len(s) > 1500 {
			return s[:700] + " […] " + s[len(s)-700:]
		}
		return s
	}
	return fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s", r.Code, cut(r.Stdout), cut(r.Stderr))
}

// reads are replies that read the files from..to-1, one per step, then
// answer.
func reads(from, to int, answer string) []fakemodel.Reply {
	var out []fakemodel.Reply
	for i := from; i < to; i++ {
		out = append(out, fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: fmt.Sprint("r", i), Name: "Read", Args: fmt.Sprintf(`{"file_path":"file%d.txt"}`, i)}}})
	}
	return append(out, fakemodel.Reply{Text: answer})
}

// checkPaired checks every request the server received: each tool call
// answered by exactly one result right after it.
func checkPaired(t *testing.T, srv *fakemodel.Server) {
	t.Helper()
	for n, body := range srv.Requests() {
		var req struct {
			Messages []struct {
				Role       string `json:"role"`
				ToolCallID string `json:"tool_call_id"`
				ToolCalls  []struct {
					ID string `json:"id"`
				} `json:"tool_calls"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatalf("request %d: %v", n, err)
		}
		for i := 0; i < len(req.Messages); i++ {
			m := req.Messages[i]
			if m.Role == "tool" {
				t.Errorf("request %d, message %d: a result that answers no call before it", n, i)
			}
			for k, c := range m.ToolCalls {
				j := i + 1 + k
				if j >= len(req.Messages) || req.Messages[j].ToolCallID != c.ID {
					t.Errorf("request %d, message %d: call %s without its result after it", n, i, c.ID)
				}
			}
			i += len(m.ToolCalls)
		}
	}
}

// A print-mode turn that reads file after file crosses the threshold in
// the middle of its tool loop, is compacted, and completes; stream-json
// reports the compaction, and no request goes over the window.
func TestE2EPrintCompactsInTheMiddleOfAToolLoop(t *testing.T) {
	const window = 16000
	s, srv := contextSandbox(t, window, reads(0, 10, "all read")...)
	srv.SetContext(window, "SUMMARY of the reading so far.")
	r := s.run("", "-p", "--output-format", "stream-json", "read every file")
	if r.Code != 0 {
		t.Fatal(brief(r))
	}
	var compacts []map[string]any
	var last map[string]any
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if ev["type"] == "compact" {
			compacts = append(compacts, ev)
		}
		last = ev
	}
	if len(compacts) == 0 {
		t.Fatalf("no compact event:\n%s", r.Stdout)
	}
	for _, c := range compacts {
		if c["trigger"] != "auto" || c["error"] != nil || c["tokens_after"].(float64) >= c["tokens_before"].(float64) {
			t.Errorf("compact event %v", c)
		}
	}
	if last["result"] != "all read" {
		t.Errorf("final %v", last)
	}
	if srv.Refused() != 0 {
		t.Errorf("%d requests went over the window", srv.Refused())
	}
	checkPaired(t, srv)
}

// In text format the compaction is one line on stderr; stdout carries the
// answer only.
func TestE2EPrintCompactionLineOnStderr(t *testing.T) {
	const window = 16000
	s, srv := contextSandbox(t, window, reads(0, 10, "done")...)
	srv.SetContext(window, "SUMMARY")
	r := s.run("", "-p", "read every file")
	if r.Code != 0 || r.Stdout != "done\n" || !strings.Contains(r.Stderr, "agent: Context compacted: ") {
		t.Fatal(brief(r))
	}
}

// With the window unknown, the server's refusal compacts once and the
// turn goes on (the reactive path); --no-auto-compact says that it
// compacts anyway.
func TestE2EPrintReactiveCompaction(t *testing.T) {
	for _, c := range []struct {
		name  string
		flags []string
		note  bool
	}{
		{"window unknown", nil, false},
		{"automatic compaction off", []string{"--no-auto-compact"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, srv := contextSandbox(t, 0, reads(0, 10, "done")...)
			srv.SetContext(16000, "SUMMARY")
			r := s.run("", append([]string{"-p", "--output-format", "stream-json"}, append(c.flags, "read every file")...)...)
			if r.Code != 0 || !strings.Contains(r.Stdout, `"trigger":"reactive"`) {
				t.Fatal(brief(r))
			}
			if got := strings.Contains(r.Stdout, "although automatic compaction is off"); got != c.note {
				t.Errorf("the note %v:\n%s", got, r.Stdout)
			}
			if srv.Refused() == 0 {
				t.Error("the server refused nothing")
			}
			checkPaired(t, srv)
		})
	}
}

// A conversation that does not fit even after compacting: exit 1 with a
// message naming /compact and /clear.
func TestE2EPrintContextFullExitsOne(t *testing.T) {
	s, srv := contextSandbox(t, 0, reads(0, 1, "never")...)
	srv.SetContext(50, "SUMMARY")
	r := s.run("", "-p", "read a file")
	if r.Code != 1 || !strings.Contains(r.Stderr, "/compact") || !strings.Contains(r.Stderr, "/clear") || r.Stdout != "" {
		t.Fatal(brief(r))
	}
}

// --resume after a compaction sends the compacted conversation: the
// summary, not the old tool output. Two print-mode turns of one session
// (the second resumes the first) read more than the window holds: the
// second summarises the first; a third resumes from the boundary.
func TestE2EResumeAfterCompaction(t *testing.T) {
	const window = 16000
	// Long answers: text the cheap pass cannot clear, so only a summary
	// makes room.
	long := strings.Repeat("what the files say, at length. ", 800)
	s, srv := contextSandbox(t, window, reads(0, 3, "first read "+long)...)
	srv.SetContext(window, "SUMMARY-MARK of the reading.")
	r := s.run("", "-p", "--output-format", "json", "read the first files")
	if r.Code != 0 {
		t.Fatal(brief(r))
	}
	var res map[string]any
	json.Unmarshal([]byte(r.Stdout), &res)
	id := res["session_id"].(string)
	srv.Add(reads(3, 6, "second read "+long)...)
	if r = s.run("", "-p", "--resume", id, "read the next files"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "second read") || !strings.Contains(r.Stderr, "Context compacted") {
		t.Fatal(brief(r))
	}
	srv.Add(fakemodel.Reply{Text: "resumed"})
	before := len(srv.Requests())
	if r = s.run("", "-p", "--resume", id, "go on"); r.Code != 0 || r.Stdout != "resumed\n" {
		t.Fatal(brief(r))
	}
	body := string(srv.Requests()[before])
	if !strings.Contains(body, compact.SummaryLead) || !strings.Contains(body, "SUMMARY-MARK") {
		t.Fatalf("the resumed request lacks the summary: %.3000s", body)
	}
	if strings.Contains(body, "read the first files") {
		t.Error("the summarised prompt is sent again")
	}
	if len(body)/4 > window || srv.Refused() != 0 {
		t.Errorf("the resumed request (%d tokens) is over the window, or %d were refused", len(body)/4, srv.Refused())
	}
	checkPaired(t, srv)
}

// The plain interactive mode: /compact summarises now with the user's
// words; /clear starts a new session, the old one resumable.
func TestE2EPlainCompactAndClear(t *testing.T) {
	long := strings.Repeat("a long first answer. ", 400)
	s, srv := contextSandbox(t, 0, fakemodel.Reply{Text: long}, fakemodel.Reply{Text: "SUMMARY-NOW"}, fakemodel.Reply{Text: "after clear"})
	r := s.run("hello\n/compact keep the greeting\n/clear\nagain\n")
	if r.Code != 0 {
		t.Fatal(brief(r))
	}
	if !strings.Contains(r.Stderr, "Context compacted: ") || !strings.Contains(r.Stderr, "a new conversation") {
		t.Fatalf("stderr %q", r.Stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || !strings.Contains(string(reqs[1]), "keep the greeting") || !strings.Contains(string(reqs[1]), fakemodel.SummaryMarker) {
		t.Fatalf("requests %d: %s", len(reqs), reqs[1])
	}
	// After /clear, nothing of the first conversation is sent.
	if strings.Contains(string(reqs[2]), "hello") || strings.Contains(string(reqs[2]), "SUMMARY-NOW") {
		t.Errorf("the new conversation carries the old one: %s", reqs[2])
	}
}

// agent_submit through mcp serve compacts like any other turn.
func TestE2EServeSubmitCompacts(t *testing.T) {
	const window = 16000
	long := strings.Repeat("what the files say, at length. ", 800)
	replies := append(reads(0, 3, "first "+long), reads(3, 6, "second "+long)...)
	s, srv := contextSandbox(t, window, replies...)
	srv.SetContext(window, "SUMMARY of the served session.")
	msgs, r := stdioLines(t, s, nil,
		initLine,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"read the first files"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"read the next files"}}}`)
	got := byID(msgs)
	for _, id := range []string{"2", "3"} {
		text, isErr := resultText(t, got[id])
		if isErr || !strings.Contains(text, "what the files say") {
			t.Fatalf("agent_submit %s: %q %v\n%s", id, text, isErr, brief(r))
		}
	}
	summaries := 0
	for _, body := range srv.Requests() {
		if strings.Contains(string(body), fakemodel.SummaryMarker) {
			summaries++
		}
	}
	if summaries == 0 || srv.Refused() != 0 {
		t.Errorf("%d summaries, %d requests refused", summaries, srv.Refused())
	}
	checkPaired(t, srv)
}

// The settings' autoCompact: false and autoCompactAt reach the session:
// off, the window is crossed and the reactive path compacts (said); a
// lower autoCompactAt compacts earlier than the default threshold.
func TestE2EAutoCompactSettings(t *testing.T) {
	const window = 16000
	settings := func(s *sandbox, srv *fakemodel.Server, window int, extra string) {
		s.write("~/.agent/settings.json", fmt.Sprintf(`{"defaultModel": {"provider": "local", "model": "fake-model"},
			"providers": {"local": {"baseURL": "%s"}},
			"models": {"fake-model": {"contextWindow": %d, "maxOutputTokens": 2000}}, %s}`, srv.URL(), window, extra))
	}
	t.Run("autoCompact false", func(t *testing.T) {
		s, srv := contextSandbox(t, window, reads(0, 10, "done")...)
		settings(s, srv, window, `"autoCompact": false`)
		srv.SetContext(window, "SUMMARY")
		r := s.run("", "-p", "--output-format", "stream-json", "read every file")
		if r.Code != 0 || strings.Contains(r.Stdout, `"trigger":"auto"`) || !strings.Contains(r.Stdout, `"trigger":"reactive"`) || !strings.Contains(r.Stdout, "although automatic compaction is off") {
			t.Fatal(brief(r))
		}
	})
	t.Run("autoCompactAt lowers the threshold", func(t *testing.T) {
		// A 40k window: the threshold (25k) is above half the window,
		// which autoCompactAt 0.5 lowers to.
		first := func(extra string) float64 {
			s, srv := contextSandbox(t, 40000, reads(0, 10, "done")...)
			settings(s, srv, 40000, `"autoCompact": true`+extra)
			srv.SetContext(40000, "SUMMARY")
			r := s.run("", "-p", "--output-format", "stream-json", "read every file")
			for _, line := range strings.Split(r.Stdout, "\n") {
				var ev map[string]any
				if json.Unmarshal([]byte(line), &ev) == nil && ev["type"] == "compact" {
					return ev["tokens_before"].(float64)
				}
			}
			t.Fatalf("no compaction: %s", brief(r))
			return 0
		}
		if def, low := first(""), first(`, "autoCompactAt": 0.5`); low >= def {
			t.Errorf("the first compaction came at %v tokens with autoCompactAt 0.5, %v without", low, def)
		}
	})
}
