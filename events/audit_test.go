package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agent/internal/strictjson"
)

// TestAuditLog: one JSON line per decision, mode 0600, with time, grant,
// outcome and status, and never the token, the content, the conversation
// id or the claimed name.
func TestAuditLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events-audit.jsonl")
	log, err := OpenAuditLog(path, AuditLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(o *Options) { o.Audit = log })
	const conv, content, claimed = "conv-SECRET-1", "content-SECRET-2", "name-SECRET-3"
	body := `{"kind":"message","conversationId":"` + conv + `","content":"` + content + `","claimedName":"` + claimed + `"}`
	tok := e.token(map[string]any{"jti": "jti-SECRET-4"})
	turnID(t, e.do(req{token: tok, body: body}))
	wantStatus(t, e.do(req{token: tok, body: body}), 401)
	wantStatus(t, e.do(req{token: e.token(nil), body: strings.Replace(body, "message", "other", 1)}), 400)
	wantStatus(t, e.do(req{path: "/events/guess-SECRET-5", token: tok, body: body}), 404)
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	if err := log.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	log.Audit(Record{Outcome: "after close"}) // dropped, no panic

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	data, _ := os.ReadFile(path)
	for _, s := range []string{tok, "SECRET", "Bearer"} {
		if bytes.Contains(data, []byte(s)) {
			t.Fatalf("audit log holds %q:\n%s", s, data)
		}
	}
	var recs []Record
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// Each line is strict JSON with only the documented members.
		var r Record
		if err := strictjson.Unmarshal(sc.Bytes(), &r, strictjson.Options{}); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	want := []struct {
		grant, outcome string
		status         int
	}{{"ci", OutcomeAdmitted, 202}, {"ci", OutcomeRefused, 401}, {"ci", OutcomeRefused, 400}, {"", OutcomeRefused, 404}}
	if len(recs) != len(want) {
		t.Fatalf("%d records:\n%s", len(recs), data)
	}
	for i, w := range want {
		r := recs[i]
		if r.Grant != w.grant || r.Outcome != w.outcome || r.Status != w.status || !r.Time.Equal(testNow) || r.Addr != "203.0.113.7" {
			t.Errorf("record %d: %+v, want %+v", i, r, w)
		}
	}
	if recs[0].TurnID != "s1/1" || recs[1].Reason != reasonReplay {
		t.Errorf("records %+v", recs[:2])
	}
}

// TestAuditLogBounded: the log rotates to PATH.1, so the two files stay
// under twice MaxBytes.
func TestAuditLogBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := OpenAuditLog(path, AuditLogOptions{MaxBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	for i := range 10_000 {
		log.Audit(Record{Time: time.Unix(int64(i), 0), Grant: "ci", Outcome: OutcomeRefused, Status: 401, Reason: reasonNoToken, Addr: "198.51.100.1"})
	}
	if err := log.Err(); err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, p := range []string{path, path + ".1"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 4096 || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %d bytes, mode %v", p, fi.Size(), fi.Mode())
		}
		total += fi.Size()
	}
	// The newest record is in the live file, whole.
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var last Record
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Time.Unix() != 9999 {
		t.Fatalf("last record %q: %v", lines[len(lines)-1], err)
	}
}

// TestAuditLogRefusesOpenFile: a log others can read is refused.
func TestAuditLogRefusesOpenFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "audit.jsonl")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenAuditLog(p, AuditLogOptions{}); err == nil {
		t.Fatal("opened a 0644 log")
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(filepath.Join(dir, "target"), link); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenAuditLog(link, AuditLogOptions{}); err == nil {
		t.Fatal("followed a symbolic link")
	}
}
