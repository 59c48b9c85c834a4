package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agent/agent/tools"
	"agent/internal/fakemodel"
)

// ckHarness is a session with the built-in tools in a workspace, a
// transcript under a home, and every call allowed.
type ckHarness struct {
	*harness
	home, ws, id string
}

func newCkHarness(t *testing.T, replies ...fakemodel.Reply) *ckHarness {
	t.Helper()
	home := t.TempDir()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return openCkHarness(t, home, ws, "", replies...)
}

func openCkHarness(t *testing.T, home, ws, resume string, replies ...fakemodel.Reply) *ckHarness {
	t.Helper()
	id := resume
	var tr *Transcript
	var l *Loaded
	var err error
	if resume == "" {
		id = NewID()
		tr, err = CreateTranscript(home, Header{ID: id, Workspace: ws})
	} else {
		if l, err = LoadTranscript(home, resume); err == nil {
			tr, err = OpenTranscript(home, resume)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	opts := SessionOptions{ID: id, Transcript: tr, Workspace: ws, TodoWrite: true,
		Tools:       tools.Builtin(tools.Options{Workspace: ws, Home: home}),
		Permissions: NewChecker(CheckerOptions{Mode: "bypassPermissions", Workspace: ws, Home: home})}
	if l != nil {
		opts.History, opts.Resumed, opts.TurnsBefore = l.History, l, l.Turns
	}
	return &ckHarness{harness: newHarness(t, opts, replies...), home: home, ws: ws, id: id}
}

func (h *ckHarness) file(rel string) string { return filepath.Join(h.ws, rel) }

func (h *ckHarness) write(t *testing.T, rel, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(h.file(rel)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.file(rel), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (h *ckHarness) read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(h.file(rel))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func toolReply(id, name, args string) fakemodel.Reply {
	return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: id, Name: name, Args: args}}}
}

// Rewinding the code after Write (a new file and an existing one) and
// Edit brings every file back to what it was before the checkpoint's
// prompt; the checkpoints list each turn's files with their counts.
func TestRewindAfterWriteAndEdit(t *testing.T) {
	h := newCkHarness(t,
		toolReply("c1", "Write", `{"file_path":"new.txt","content":"fresh\n"}`),
		toolReply("c2", "Edit", `{"file_path":"old.go","old_string":"one","new_string":"uno"}`),
		toolReply("c3", "Edit", `{"file_path":"old.go","old_string":"two","new_string":"dos"}`),
		fakemodel.Reply{Text: "first done"},
		toolReply("c4", "Write", `{"file_path":"old.go","content":"rewritten\n"}`),
		fakemodel.Reply{Text: "second done"},
	)
	h.write(t, "old.go", "one\ntwo\n")
	run(t, h.sess, "make changes")
	run(t, h.sess, "rewrite it")
	if h.read(t, "old.go") != "rewritten\n" || h.read(t, "new.txt") != "fresh\n" {
		t.Fatalf("the turns did not write: %q %q", h.read(t, "old.go"), h.read(t, "new.txt"))
	}
	cps := h.sess.Checkpoints()
	if len(cps) != 2 || cps[0].Turn != 1 || cps[0].Prompt != "make changes" || cps[1].Turn != 2 {
		t.Fatalf("checkpoints %+v", cps)
	}
	first := cps[0].Files
	if len(first) != 2 || first[0].Path != h.file("new.txt") || first[0].Existed || first[1].Added != 2 || first[1].Removed != 2 {
		t.Fatalf("first checkpoint's files %+v", first)
	}
	if line := CheckpointLine(cps[0], h.ws); !strings.HasSuffix(line, "\tnew.txt +1 -0, old.go +2 -2") {
		t.Errorf("line %q", line)
	}
	// To the second checkpoint: the Write of old.go is undone only.
	rep, err := h.sess.RestoreCode(2)
	if err != nil || !rep.OK() || strings.Join(rep.Restored, ",") != "old.go" {
		t.Fatalf("%+v %v", rep, err)
	}
	if h.read(t, "old.go") != "uno\ndos\n" {
		t.Fatalf("old.go %q", h.read(t, "old.go"))
	}
	// Then to the first: the restored file is what the session left, so
	// there is no conflict; the new file goes.
	rep, err = h.sess.RestoreCode(1)
	if err != nil || !rep.OK() || strings.Join(rep.Restored, ",") != "old.go" || strings.Join(rep.Removed, ",") != "new.txt" {
		t.Fatalf("%+v %v\n%s", rep, err, rep.Text())
	}
	if h.read(t, "old.go") != "one\ntwo\n" || !strings.Contains(h.read(t, "new.txt"), "no such file") {
		t.Fatalf("old.go %q, new.txt %q", h.read(t, "old.go"), h.read(t, "new.txt"))
	}
	if _, err := h.sess.RestoreCode(7); err == nil || !strings.Contains(err.Error(), "no such checkpoint 7") {
		t.Errorf("checkpoint 7: %v", err)
	}
	// The saved contents are 0600 under the session's folder.
	ents, _ := os.ReadDir(filepath.Join(SessionDir(h.home, h.id), "files"))
	if len(ents) == 0 {
		t.Fatal("nothing saved")
	}
	for _, e := range ents {
		if fi, _ := e.Info(); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v", e.Name(), fi.Mode())
		}
	}
}

// A file changed since the session's last change (by Bash here) is a
// conflict: listed with a diff and never overwritten; the other files are
// restored.
func TestRewindConflictAfterBash(t *testing.T) {
	h := newCkHarness(t,
		toolReply("c1", "Edit", `{"file_path":"a.txt","old_string":"A","new_string":"B"}`),
		toolReply("c2", "Edit", `{"file_path":"b.txt","old_string":"A","new_string":"B"}`),
		toolReply("c3", "Bash", `{"command":"echo by-bash >> a.txt"}`),
		fakemodel.Reply{Text: "done"},
	)
	h.write(t, "a.txt", "A\n")
	h.write(t, "b.txt", "A\n")
	run(t, h.sess, "edit both")
	rep, err := h.sess.RestoreCode(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Conflicts) != 1 || rep.Conflicts[0].Path != "a.txt" || strings.Join(rep.Restored, ",") != "b.txt" {
		t.Fatalf("%+v", rep)
	}
	if want := "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n-A\n+B\n+by-bash\n"; rep.Conflicts[0].Diff != want {
		t.Errorf("diff %q", rep.Conflicts[0].Diff)
	}
	if h.read(t, "a.txt") != "B\nby-bash\n" || h.read(t, "b.txt") != "A\n" {
		t.Errorf("a.txt %q b.txt %q", h.read(t, "a.txt"), h.read(t, "b.txt"))
	}
	if !strings.Contains(rep.Text(), "conflict a.txt: changed since the session last changed it") {
		t.Errorf("%s", rep.Text())
	}
}

// A saved content that is missing or damaged makes that file
// unrestorable; the rest restores. A file over 8 MiB is not saved.
func TestRewindUnrestorable(t *testing.T) {
	big := strings.Repeat("x", MaxSavedFileSize+1)
	h := newCkHarness(t,
		toolReply("c1", "Write", `{"file_path":"a.txt","content":"new a"}`),
		toolReply("c2", "Write", `{"file_path":"b.txt","content":"new b"}`),
		toolReply("c3", "Write", `{"file_path":"c.txt","content":"new c"}`),
		toolReply("c4", "Write", `{"file_path":"big.txt","content":"small now"}`),
		fakemodel.Reply{Text: "done"},
	)
	h.write(t, "a.txt", "old a")
	h.write(t, "b.txt", "old b")
	h.write(t, "c.txt", "old c")
	h.write(t, "big.txt", big)
	run(t, h.sess, "write them")
	cp := h.sess.Checkpoints()[0]
	saved := func(i int) string { return savedPath(SessionDir(h.home, h.id), cp.Files[i].Before) }
	if err := os.Remove(saved(0)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(saved(1), []byte("tampered"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cp.Files[3].NotSaved != "over 8 MiB, not saved" || cp.Files[3].Before != "" {
		t.Fatalf("big file %+v", cp.Files[3])
	}
	if line := CheckpointLine(cp, h.ws); !strings.Contains(line, "a.txt +1 -1, ") || !strings.HasSuffix(line, " (over 8 MiB, not saved)") {
		t.Errorf("line %q", line)
	}
	rep, err := h.sess.RestoreCode(1)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, u := range rep.Unrestorable {
		got[u.Path] = u.Why
	}
	want := map[string]string{"a.txt": "its saved copy is missing", "b.txt": "its saved copy is damaged (the content does not match its hash)", "big.txt": "over 8 MiB, not saved"}
	if fmt.Sprint(got) != fmt.Sprint(want) || strings.Join(rep.Restored, ",") != "c.txt" {
		t.Fatalf("%+v", rep)
	}
	if h.read(t, "c.txt") != "old c" || h.read(t, "a.txt") != "new a" {
		t.Errorf("c %q a %q", h.read(t, "c.txt"), h.read(t, "a.txt"))
	}
}

// The conversation is restored by forking the transcript before the
// checkpoint's turn: the fork resumes with the conversation as it was, its
// checkpoints keep their saved contents, and the old session stays whole.
func TestForkTranscript(t *testing.T) {
	h := newCkHarness(t,
		toolReply("c1", "Write", `{"file_path":"a.txt","content":"one"}`),
		fakemodel.Reply{Text: "wrote one"},
		toolReply("c2", "Write", `{"file_path":"a.txt","content":"two"}`),
		fakemodel.Reply{Text: "wrote two"},
		fakemodel.Reply{Text: "third answer"},
	)
	run(t, h.sess, "first prompt")
	run(t, h.sess, "second prompt")
	run(t, h.sess, "third prompt")
	h.sess.Close()
	before, _ := os.ReadFile(TranscriptPath(h.home, h.id))
	f, err := ForkTranscript(h.home, h.id, h.ws, 2)
	if err != nil {
		t.Fatal(err)
	}
	if f.Prompt != "second prompt" || f.ID == h.id {
		t.Fatalf("%+v", f)
	}
	after, _ := os.ReadFile(TranscriptPath(h.home, h.id))
	if string(after) != string(before) {
		t.Error("the old transcript changed")
	}
	l, err := LoadTranscript(h.home, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	if l.Header.ForkedFrom != h.id || l.Header.ForkedAt != 2 || l.Turns != 1 {
		t.Errorf("header %+v, turns %d", l.Header, l.Turns)
	}
	text := fullText(l.History)
	if !strings.Contains(text, "first prompt") || !strings.Contains(text, "wrote one") || strings.Contains(text, "second prompt") {
		t.Errorf("fork's history:\n%s", text)
	}
	cps := l.Checkpoints()
	if len(cps) != 1 || cps[0].Turn != 1 {
		t.Fatalf("fork's checkpoints %+v", cps)
	}
	// The fork can rewind its own checkpoint (a.txt did not exist).
	if os.WriteFile(h.file("a.txt"), []byte("one"), 0o644) != nil {
		t.Fatal("write")
	}
	rep, err := RestoreStoredCode(h.home, f.ID, h.ws, 1)
	if err != nil || strings.Join(rep.Removed, ",") != "a.txt" {
		t.Fatalf("%+v %v", rep, err)
	}
	// A fork after the second checkpoint has its saved content (a.txt was
	// "one" before it) in its own folder, linked from the old session's.
	f3, err := ForkTranscript(h.home, h.id, h.ws, 3)
	if err != nil || f3.Prompt != "third prompt" {
		t.Fatalf("%+v %v", f3, err)
	}
	os.RemoveAll(SessionDir(h.home, h.id))
	os.WriteFile(h.file("a.txt"), []byte("two"), 0o644)
	rep, err = RestoreStoredCode(h.home, f3.ID, h.ws, 2)
	if err != nil || strings.Join(rep.Restored, ",") != "a.txt" || h.read(t, "a.txt") != "one" {
		t.Fatalf("%+v %v %q", rep, err, h.read(t, "a.txt"))
	}
	if _, err := ForkTranscript(h.home, h.id, h.ws, 9); err == nil || !strings.Contains(err.Error(), "checkpoints are 1 to 3") {
		t.Errorf("fork at 9: %v", err)
	}
	if _, err := RestoreStoredCode(h.home, h.id, "/elsewhere", 1); err == nil || !strings.Contains(err.Error(), "belongs to the workspace") {
		t.Errorf("another workspace: %v", err)
	}
	if _, err := ForkTranscript(h.home, h.id, "/elsewhere", 1); err == nil || !strings.Contains(err.Error(), "belongs to the workspace") {
		t.Errorf("a fork from another workspace: %v", err)
	}
}

// After a compaction the checkpoints, the restored files and the todo
// list live on in the boundary: a resumed session rewinds across it.
func TestRewindAfterCompaction(t *testing.T) {
	h := newCkHarness(t,
		toolReply("c1", "Write", `{"file_path":"a.txt","content":"changed"}`),
		toolReply("c2", "TodoWrite", `{"todos":[{"content":"Check a","status":"in_progress","activeForm":"Checking a"},{"content":"Ship","status":"pending","activeForm":"Shipping"}]}`),
		fakemodel.Reply{Text: strings.Repeat("a long answer. ", 200)},
		fakemodel.Reply{Text: "SUMMARY: a.txt was changed."},
		fakemodel.Reply{Text: "after the summary"},
	)
	h.write(t, "a.txt", "original")
	run(t, h.sess, "change a")
	ctx := t.Context()
	turn, err := h.sess.Submit(CompactRequest(""))
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := turn.Wait(ctx); res.Status != StatusComplete {
		t.Fatalf("compact: %+v", res)
	}
	hist := h.sess.History()
	if !isSummary(hist[0]) || !strings.Contains(fullText(hist[:1]), "The open todo list:\n[>] Check a\n[ ] Ship") {
		t.Fatalf("the summary does not carry the open list:\n%s", fullText(hist))
	}
	run(t, h.sess, "go on")
	h.sess.Close()
	l, err := LoadTranscript(h.home, h.id)
	if err != nil {
		t.Fatal(err)
	}
	if l.Boundary == nil || len(l.Todos) != 2 || len(l.Checkpoints()) != 2 {
		t.Fatalf("boundary %v, todos %+v, checkpoints %+v", l.Boundary, l.Todos, l.Checkpoints())
	}
	r := openCkHarness(t, h.home, h.ws, h.id)
	if len(r.sess.Todos()) != 2 {
		t.Errorf("resumed todos %+v", r.sess.Todos())
	}
	rep, err := r.sess.RestoreCode(1)
	if err != nil || strings.Join(rep.Restored, ",") != "a.txt" || h.read(t, "a.txt") != "original" {
		t.Fatalf("%+v %v %q", rep, err, h.read(t, "a.txt"))
	}
	// The restore is recorded: read back, the file's last hash is the
	// restored content's, so a second rewind has no conflict.
	r.sess.Close()
	l, _ = LoadTranscript(h.home, h.id)
	if got := l.daily.checkpoints.Last[h.file("a.txt")]; got != hashFile(h.file("a.txt")) {
		t.Errorf("last hash %q", got)
	}
}

// At most 100 checkpoints: the oldest goes, and with it the saved
// contents only it needed.
func TestCheckpointLimit(t *testing.T) {
	x := checkpointIndex{}
	for i := 1; i <= MaxCheckpoints; i++ {
		if x.open(Checkpoint{Turn: i, TurnID: fmt.Sprintf("s/%d", i)}) {
			t.Fatalf("dropped at %d", i)
		}
	}
	x.change("s/1", FileChange{Path: "/w/a", Before: "h1", Existed: true, After: "h2"})
	x.change("s/2", FileChange{Path: "/w/a", Before: "h2", Existed: true, After: "h3"})
	if !x.open(Checkpoint{Turn: 101, TurnID: "s/101"}) || len(x.Checkpoints) != MaxCheckpoints || x.Checkpoints[0].Turn != 2 {
		t.Fatalf("%d checkpoints from %d", len(x.Checkpoints), x.Checkpoints[0].Turn)
	}
	dir := t.TempDir()
	for _, hash := range []string{"h1", "h2"} {
		if err := storeSaved(dir, hash, []byte(hash)); err != nil {
			t.Fatal(err)
		}
	}
	pruneSaved(dir, x.saved())
	if _, err := os.Stat(savedPath(dir, "h1")); err == nil {
		t.Error("h1 kept")
	}
	if _, err := os.Stat(savedPath(dir, "h2")); err != nil {
		t.Error("h2 pruned")
	}
	if _, ok := x.find(1); ok {
		t.Error("checkpoint 1 still found")
	}
}

// A subagent's Write joins its parent's running checkpoint, and its usage
// the parent's /cost (docs/reference/runtime.md, "Checkpoints and
// /rewind", "Usage and cost").
func TestSubagentJoinsParentCheckpointAndCost(t *testing.T) {
	m := &routeModel{}
	usage := "data: {\"id\":\"1\",\"choices\":[],\"usage\":{\"prompt_tokens\":500,\"completion_tokens\":20}}\n\n"
	m.answer = func(r chatReq) string {
		switch {
		case r.child() && len(r.Messages) > 0 && r.Messages[len(r.Messages)-1].Role == "tool":
			return sseText("child done") + usage
		case r.child():
			return sseCallArgs("k1", "Write", `{"file_path":"out.txt","content":"by the child"}`) + usage
		case r.Messages[len(r.Messages)-1].Role == "tool":
			return sseText("done")
		}
		return sseCallArgs("c1", "Agent", `{"description":"write","prompt":"write out.txt","subagent_type":"writer"}`)
	}
	c, home, ws := startWith(t, m, "", StartOptions{PermissionMode: "acceptEdits"}, func(home, ws string) {
		writeFile(t, filepath.Join(ws, ".agent", "agents", "writer.md"), "---\nname: writer\ndescription: writes files\n---\nWrite.\n")
		writeFile(t, filepath.Join(ws, "out.txt"), "before\n")
	})
	runTurnOK(t, c, TurnRequest{Prompt: "have it written"})
	if b, _ := os.ReadFile(filepath.Join(ws, "out.txt")); string(b) != "by the child" {
		t.Fatalf("out.txt %q", b)
	}
	cps := c.Session.Checkpoints()
	if len(cps) != 1 || len(cps[0].Files) != 1 || cps[0].Files[0].Path != filepath.Join(ws, "out.txt") {
		t.Fatalf("the parent's checkpoints %+v", cps)
	}
	report := c.CostReport()
	if !strings.Contains(report, "1 agent") || !strings.Contains(report, "1,000") {
		t.Errorf("/cost:\n%s", report)
	}
	rep, err := c.Session.RestoreCode(1)
	if err != nil || strings.Join(rep.Restored, ",") != "out.txt" {
		t.Fatalf("%+v %v", rep, err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "out.txt")); string(b) != "before\n" {
		t.Fatalf("out.txt after the rewind %q", b)
	}
	// Read back, the parent's transcript holds the child's usage.
	id := c.Session.ID()
	c.Close()
	l, err := LoadTranscript(home, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, turns := l.daily.costs.snapshot(); len(turns) != 1 || turns[0].Agent == "" || turns[0].Usage.InputTokens != 1000 {
		t.Errorf("ledger %+v", turns)
	}
}
