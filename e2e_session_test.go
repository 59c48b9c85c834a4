package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"agent/agent"
	"agent/internal/fakemodel"
)

// control sends one request line to a background session's socket.
func control(t testing.TB, s *sandbox, id string, req string) agent.ControlResponse {
	t.Helper()
	c, err := net.Dial("unix", agent.SocketPath(agent.RunDir(s.Home, s.lookupEnv), id))
	if err != nil {
		t.Fatalf("dialing the control socket: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write([]byte(req + "\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	var resp agent.ControlResponse
	if err := json.Unmarshal(line, &resp); err != nil {
		t.Fatalf("answer %q: %v", line, err)
	}
	return resp
}

// bgStart starts a background session and stops it at cleanup.
func bgStart(t testing.TB, s *sandbox, args ...string) string {
	t.Helper()
	r := s.run("", append([]string{"session", "start", "--background"}, args...)...)
	id := strings.TrimSpace(r.Stdout)
	if r.Code != 0 || id == "" || strings.Contains(id, "\n") {
		t.Fatalf("session start: %+v", r)
	}
	t.Cleanup(func() { s.run("", "session", "stop", id) })
	return id
}

// TestE2EBackgroundSession: start prints only the id once the session is
// ready; list shows it; a turn submitted on the control socket runs with
// nobody attached, so an execute call is denied naming the rule; stop ends
// the process and removes the socket.
func TestE2EBackgroundSession(t *testing.T) {
	s, srv := printSandbox(t,
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Bash", Args: `{"command":"touch pwned"}`}}},
		fakemodel.Reply{Text: "could not run it"})
	s.askForBash()
	id := bgStart(t, s, "--name", "nightly")

	r := s.run("", "session", "list")
	fields := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\t")
	if r.Code != 0 || len(fields) != 4 || fields[0] != id || fields[1] != "nightly" || fields[2] != s.Work {
		t.Fatalf("session list: %+v", r)
	}
	if _, err := time.Parse(time.RFC3339, fields[3]); err != nil {
		t.Fatalf("started %q: %v", fields[3], err)
	}
	info := control(t, s, id, `{"op":"info"}`)
	if !info.OK || info.Info.PID <= 0 {
		t.Fatalf("info: %+v", info)
	}
	// Its own process group and session: detached from ours.
	if pgid, err := syscall.Getpgid(info.Info.PID); err != nil || pgid != info.Info.PID {
		t.Fatalf("pgid %d (%v), pid %d", pgid, err, info.Info.PID)
	}
	fi, err := os.Stat(filepath.Join(s.Home, ".agent", "run", id+".sock"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode: %v %v", fi, err)
	}
	if di, _ := os.Stat(filepath.Join(s.Home, ".agent", "run")); di.Mode().Perm() != 0o700 {
		t.Fatalf("run dir mode %v", di.Mode())
	}

	resp := control(t, s, id, `{"op":"submit","prompt":"make a file","wait":true}`)
	if !resp.OK || resp.Status != agent.StatusComplete || resp.Text != "could not run it" {
		t.Fatalf("submit: %+v", resp)
	}
	if _, err := os.Stat(filepath.Join(s.Work, "pwned")); err == nil {
		t.Fatal("a background session with nobody attached ran Bash")
	}
	if got := string(srv.Requests()[1]); !strings.Contains(got, "denied") || !strings.Contains(got, "Bash(") {
		t.Fatalf("the denial does not name the rule: %s", got)
	}
	if resp := control(t, s, id, `{"op":"nope"}`); resp.OK || !strings.Contains(resp.Error, "unknown op") {
		t.Fatalf("%+v", resp)
	}
	if resp := control(t, s, id, `not json`); resp.OK {
		t.Fatalf("%+v", resp)
	}

	if r := s.run("", "session", "stop", id); r.Code != 0 {
		t.Fatalf("stop: %+v", r)
	}
	if err := syscall.Kill(info.Info.PID, 0); err == nil {
		// The socket is gone before the process has quite exited; give
		// it a moment, then insist.
		deadline := time.Now().Add(10 * time.Second)
		for syscall.Kill(info.Info.PID, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if syscall.Kill(info.Info.PID, 0) == nil {
			t.Fatal("the background process is still running after stop")
		}
	}
	if r := s.run("", "session", "list"); r.Code != 0 || r.Stdout != "" {
		t.Fatalf("list after stop: %+v", r)
	}
	if r := s.run("", "session", "stop", id); r.Code != 1 || !strings.Contains(r.Stderr, "no such background session") {
		t.Fatalf("second stop: %+v", r)
	}
	// The transcript holds the turn, so the session can be resumed.
	if _, err := os.Stat(agent.TranscriptPath(s.Home, id)); err != nil {
		t.Fatal(err)
	}
}

// TestE2EBackgroundRefusals: the flag rules and the trust check.
func TestE2EBackgroundRefusals(t *testing.T) {
	s := newSandbox(t)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"start needs --background", []string{"session", "start"}, 2, "--background"},
		{"start takes no operand", []string{"session", "start", "--background", "extra"}, 2, "unexpected argument"},
		{"an unknown permission mode", []string{"session", "start", "--background", "--permission-mode", "yolo"}, 2, "--permission-mode"},
		{"an untrusted workspace", []string{"session", "start", "--background", "--provider", "local", "--base-url", "http://127.0.0.1:9/v1"}, 1, "agent trust --yes"},
		{"stop needs an ID", []string{"session", "stop"}, 2, "ID"},
		{"a path is no session ID", []string{"session", "stop", "../x"}, 1, "no such background session"},
		{"list takes no operand", []string{"session", "list", "x"}, 2, "unexpected argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.run("", c.args...)
			if r.Code != c.code || !strings.Contains(r.Stderr, c.want) || r.Stdout != "" {
				t.Errorf("%v: %+v", c.args, r)
			}
		})
	}
}

// TestE2EBackgroundStale: a socket left by a process that died is removed
// by list.
func TestE2EBackgroundStale(t *testing.T) {
	s := newSandbox(t)
	dir := filepath.Join(s.Home, ".agent", "run")
	os.MkdirAll(dir, 0o700)
	path := filepath.Join(dir, "20200101-000000-deadbeef.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if r := s.run("", "session", "list"); r.Code != 0 || r.Stdout != "" {
		t.Fatalf("%+v", r)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("the stale socket is still there")
	}
}

// TestE2EBackgroundStopAbortsTurn: stopping a session whose turn waits on
// the model ends it, keeping the turn in the transcript as interrupted.
func TestE2EBackgroundStopAbortsTurn(t *testing.T) {
	s, srv := printSandbox(t, fakemodel.Reply{Text: "partial", Hang: true})
	id := bgStart(t, s)
	if resp := control(t, s, id, `{"op":"submit","prompt":"long job"}`); !resp.OK || resp.Turn == "" {
		t.Fatalf("%+v", resp)
	}
	select {
	case <-srv.Started():
	case <-time.After(30 * time.Second):
		t.Fatal("the model was never called")
	}
	if r := s.run("", "session", "stop", id); r.Code != 0 {
		t.Fatalf("stop: %+v", r)
	}
	data, err := os.ReadFile(agent.TranscriptPath(s.Home, id))
	if err != nil || !strings.Contains(string(data), `"status":"interrupted"`) {
		t.Fatalf("transcript: %s %v", data, err)
	}
}

// TestE2EResume: print mode continues a stored session with --resume.
func TestE2EResume(t *testing.T) {
	s, srv := printSandbox(t, fakemodel.Reply{Text: "first"}, fakemodel.Reply{Text: "second"})
	r := s.run("", "-p", "--output-format", "json", "remember 7")
	var obj struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &obj); err != nil || obj.SessionID == "" {
		t.Fatalf("%+v", r)
	}
	r = s.run("", "-p", "--resume", obj.SessionID, "what number?")
	if r.Code != 0 || r.Stdout != "second\n" {
		t.Fatalf("%+v", r)
	}
	if body := string(srv.Requests()[1]); !strings.Contains(body, "remember 7") || !strings.Contains(body, "first") {
		t.Fatalf("the resumed request lacks the conversation: %s", body)
	}
	if r := s.run("", "-p", "--resume", "no-such", "x"); r.Code != 1 || !strings.Contains(r.Stderr, "no-such") {
		t.Fatalf("%+v", r)
	}
}

// TestE2EBackgroundQueue: prompts that arrive while a turn runs queue, at
// most 32; the 33rd waiting prompt is refused; stopping cancels them.
func TestE2EBackgroundQueue(t *testing.T) {
	s, srv := printSandbox(t, fakemodel.Reply{Text: "busy", Hang: true})
	id := bgStart(t, s)
	if resp := control(t, s, id, `{"op":"submit","prompt":"first"}`); !resp.OK {
		t.Fatalf("%+v", resp)
	}
	select {
	case <-srv.Started():
	case <-time.After(30 * time.Second):
		t.Fatal("the model was never called")
	}
	for i := 0; i < 32; i++ {
		if resp := control(t, s, id, `{"op":"submit","prompt":"queued"}`); !resp.OK {
			t.Fatalf("queued prompt %d: %+v", i+1, resp)
		}
	}
	if info := control(t, s, id, `{"op":"info"}`); !info.Info.Busy || info.Info.Queued != 32 {
		t.Fatalf("%+v", info.Info)
	}
	if resp := control(t, s, id, `{"op":"submit","prompt":"one too many"}`); resp.OK || !strings.Contains(resp.Error, "queue is full") {
		t.Fatalf("%+v", resp)
	}
	if r := s.run("", "session", "stop", id); r.Code != 0 {
		t.Fatalf("stop: %+v", r)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d model calls; the queued prompts should have been cancelled", n)
	}
}

// TestE2EAllowProjectPersisted: an embedder's prompt answered "allow for
// this project" writes the rule, generalised as the prompt showed it
// (docs/reference/runtime.md, "Permission prompts"), to
// .agent/settings.local.json, and a later print-mode run in the workspace,
// with nobody to ask, is allowed by it.
func TestE2EAllowProjectPersisted(t *testing.T) {
	s, srv := printSandbox(t,
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Bash", Args: `{"command":"touch made-by-embedder"}`}}},
		fakemodel.Reply{Text: "done once"},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c2", Name: "Bash", Args: `{"command":"touch made-by-embedder"}`}}},
		fakemodel.Reply{Text: "done twice"})
	s.askForBash()
	c, err := agent.Start(t.Context(), agent.StartOptions{Workspace: s.Work, Home: s.Home, Headless: true,
		LookupEnv: func(string) (string, bool) { return "", false }, Prompter: projectAnswerer{}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Session.Run(t.Context(), "make a file")
	c.Close()
	if err != nil || res.Text != "done once" {
		t.Fatalf("%+v %v", res, err)
	}
	data, err := os.ReadFile(filepath.Join(s.Work, ".agent", "settings.local.json"))
	if err != nil || !strings.Contains(string(data), `"Bash(touch:*)"`) {
		t.Fatalf("settings.local.json: %s %v", data, err)
	}
	if fi, _ := os.Stat(filepath.Join(s.Work, ".agent", "settings.local.json")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	made := filepath.Join(s.Work, "made-by-embedder")
	if err := os.Remove(made); err != nil {
		t.Fatal(err)
	}
	r := s.run("", "-p", "make it again")
	if r.Code != 0 || r.Stdout != "done twice\n" {
		t.Fatalf("%+v", r)
	}
	if _, err := os.Stat(made); err != nil {
		t.Fatalf("the saved rule did not allow the same call in print mode: %v\n%s", err, srv.Requests()[3])
	}
}

type projectAnswerer struct{}

func (projectAnswerer) AskPermission(ctx context.Context, req agent.PermissionRequest) (agent.Answer, error) {
	return agent.AllowProject, nil
}

type allowOnce struct{ asked chan agent.PermissionRequest }

func (a allowOnce) AskPermission(ctx context.Context, req agent.PermissionRequest) (agent.Answer, error) {
	a.asked <- req
	return agent.AllowOnce, nil
}

// TestE2EBackgroundAttach: a client attached to a background session sees
// its events and answers its permission questions (the call runs); once
// it detaches, questions are denied again.
func TestE2EBackgroundAttach(t *testing.T) {
	s, srv := printSandbox(t,
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Bash", Args: `{"command":"touch attached-ok"}`}}},
		fakemodel.Reply{Text: "made it"},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c2", Name: "Bash", Args: `{"command":"touch detached-no"}`}}},
		fakemodel.Reply{Text: "could not"})
	s.askForBash()
	id := bgStart(t, s)
	dir := filepath.Join(s.Home, ".agent", "run")
	p := allowOnce{asked: make(chan agent.PermissionRequest, 4)}
	a, err := agent.Attach(t.Context(), dir, id, p)
	if err != nil {
		t.Fatal(err)
	}
	if a.Info().ID != id {
		t.Fatalf("%+v", a.Info())
	}
	events := make(chan agent.Event, 64)
	a.Subscribe(func(ev agent.Event) { events <- ev })
	if _, err := a.Submit("make a file"); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	deadline := time.After(30 * time.Second)
wait:
	for {
		select {
		case ev := <-events:
			kinds = append(kinds, string(ev.Kind))
			if ev.Kind == agent.EventComplete {
				if ev.Result == nil || ev.Result.Text != "made it" {
					t.Fatalf("%+v", ev.Result)
				}
				break wait
			}
		case <-deadline:
			t.Fatalf("no completion; events %v", kinds)
		}
	}
	select {
	case req := <-p.asked:
		if req.Tool != "Bash" || !strings.Contains(string(req.Args), "attached-ok") {
			t.Fatalf("%+v", req)
		}
	default:
		t.Fatal("the question never reached the attached client")
	}
	if _, err := os.Stat(filepath.Join(s.Work, "attached-ok")); err != nil {
		t.Fatalf("the allowed call did not run: %v (events %v)", err, kinds)
	}
	if !strings.Contains(strings.Join(kinds, " "), "permission") {
		t.Fatalf("events %v", kinds)
	}
	a.Close()
	a.Close()

	resp := control(t, s, id, `{"op":"submit","prompt":"another","wait":true}`)
	if !resp.OK || resp.Text != "could not" {
		t.Fatalf("%+v", resp)
	}
	if _, err := os.Stat(filepath.Join(s.Work, "detached-no")); err == nil {
		t.Fatal("a call ran with nobody attached")
	}
	if body := string(srv.Requests()[3]); !strings.Contains(body, "nobody is attached") {
		t.Fatalf("%s", body)
	}
}
