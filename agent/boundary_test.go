package agent

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"agent/providers"
)

func textMsg(role providers.Role, text string) providers.Message {
	return providers.Message{Role: role, Content: []providers.Part{providers.Text{Text: text}}}
}

// writeTurn records one complete turn: a prompt and an answer.
func writeTurn(t testing.TB, tr *Transcript, id string, n int, prompt, answer string) {
	t.Helper()
	turn := fmt.Sprintf("%s/%d", id, n)
	for _, m := range []providers.Message{textMsg(providers.RoleUser, prompt), textMsg(providers.RoleAssistant, answer)} {
		if err := tr.write(record{Type: "message", Turn: turn, Role: string(m.Role), Parts: encodeParts(m.Content)}); err != nil {
			t.Fatal(err)
		}
	}
	tr.write(record{Type: "turn", Turn: turn, Status: string(StatusComplete)})
}

func historyText(h []providers.Message) string {
	var b []string
	for _, m := range h {
		for _, p := range m.Content {
			if tx, ok := p.(providers.Text); ok {
				b = append(b, string(m.Role)+":"+tx.Text)
			}
		}
	}
	return strings.Join(b, " | ")
}

func TestResumeStartsFromTheLastBoundary(t *testing.T) {
	cases := []struct {
		name   string
		write  func(t *testing.T, tr *Transcript, id string)
		damage func(t *testing.T, path string)
		want   string
		turns  int
		note   bool
	}{
		{"no boundary: the whole transcript", func(t *testing.T, tr *Transcript, id string) {
			writeTurn(t, tr, id, 1, "one", "first")
			writeTurn(t, tr, id, 2, "two", "second")
		}, nil, "user:one | assistant:first | user:two | assistant:second", 2, false},
		{"a boundary: its history, then what follows", func(t *testing.T, tr *Transcript, id string) {
			writeTurn(t, tr, id, 1, "one", "first")
			writeTurn(t, tr, id, 2, "two", "second")
			tr.WriteBoundary(Boundary{Trigger: "auto", TokensBefore: 900, TokensAfter: 100, Turns: 2, History: []providers.Message{textMsg(providers.RoleUser, "SUMMARY")}})
			writeTurn(t, tr, id, 3, "three", "third")
		}, nil, "user:SUMMARY | user:three | assistant:third", 3, false},
		{"the last of two boundaries", func(t *testing.T, tr *Transcript, id string) {
			writeTurn(t, tr, id, 1, "one", "first")
			tr.WriteBoundary(Boundary{Trigger: "auto", Turns: 1, History: []providers.Message{textMsg(providers.RoleUser, "S1")}})
			writeTurn(t, tr, id, 2, "two", "second")
			tr.WriteBoundary(Boundary{Trigger: "manual", Turns: 2, History: []providers.Message{textMsg(providers.RoleUser, "S2")}})
		}, nil, "user:S2", 2, false},
		{"a damaged last boundary: the one before it, said so", func(t *testing.T, tr *Transcript, id string) {
			writeTurn(t, tr, id, 1, "one", "first")
			tr.WriteBoundary(Boundary{Trigger: "auto", Turns: 1, History: []providers.Message{textMsg(providers.RoleUser, "S1")}})
			writeTurn(t, tr, id, 2, "two", "second")
			tr.write(map[string]any{"type": "compact-placeholder"})
		}, func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			s := strings.Replace(string(b), `{"type":"compact-placeholder"}`, `{"type":"compact","trigger":"auto","messages":[{"type":"mess`, 1)
			os.WriteFile(path, []byte(s), 0o600)
		}, "user:S1 | user:two | assistant:second", 2, true},
		{"boundary text inside a message is not a boundary", func(t *testing.T, tr *Transcript, id string) {
			writeTurn(t, tr, id, 1, `{"type":"compact","messages":[]}`, "quoted")
		}, nil, `user:{"type":"compact","messages":[]} | assistant:quoted`, 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			id := NewID()
			tr, err := CreateTranscript(home, Header{ID: id, Workspace: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			c.write(t, tr, id)
			tr.Close()
			if c.damage != nil {
				c.damage(t, TranscriptPath(home, id))
			}
			l, err := LoadTranscript(home, id)
			if err != nil {
				t.Fatal(err)
			}
			if got := historyText(l.History); got != c.want {
				t.Errorf("history %q, want %q", got, c.want)
			}
			if l.Turns != c.turns || l.Header.ID != id {
				t.Errorf("turns %d, header %+v", l.Turns, l.Header)
			}
			if (len(l.Notes) > 0) != c.note {
				t.Errorf("notes %v", l.Notes)
			}
		})
	}
}

// BenchmarkResumeAfterBoundary: a transcript of 10,000 records with a
// compaction boundary near the end resumes from the boundary
// (docs/performance.md, "Session runtime and print mode").
func BenchmarkResumeAfterBoundary(b *testing.B) {
	home := b.TempDir()
	id := NewID()
	tr, err := CreateTranscript(home, Header{ID: id, Workspace: "/w"})
	if err != nil {
		b.Fatal(err)
	}
	long := strings.Repeat("x", 2000)
	for n := 1; n <= 3300; n++ { // 3 records a turn: about 10,000
		writeTurn(b, tr, id, n, "prompt "+long, "answer "+long)
	}
	tr.WriteBoundary(Boundary{Trigger: "auto", Turns: 3300, History: []providers.Message{textMsg(providers.RoleUser, "summary")}})
	for n := 3301; n <= 3310; n++ {
		writeTurn(b, tr, id, n, "prompt", "answer")
	}
	tr.Close()
	b.ReportAllocs()
	for b.Loop() {
		l, err := LoadTranscript(home, id)
		if err != nil || len(l.History) != 21 {
			b.Fatalf("%v %d", err, len(l.History))
		}
	}
}
