package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agent/agent/tools"
	"agent/config"
)

// FuzzGeneralise: whatever command the model sends, the rules an answer
// would record parse, and together they allow that very command.
func FuzzGeneralise(f *testing.F) {
	for _, s := range []string{"ls -la", "cat hello.txt && ls -la", `grep "a && b" f`, "echo $(rm -rf /)", "npm run test:unit -- --watch",
		`"./my script.sh" --fast`, `./my\ script.sh run`, "GOOS=linux go build", "ls `pwd`", "a | b ; c & d", `echo "unclosed`, "(cd x && make)", "> out echo", "*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		if strings.TrimSpace(cmd) == "" {
			return
		}
		c := NewChecker(CheckerOptions{Workspace: "/w"})
		spec := tools.Spec{Name: "Bash", Risk: tools.RiskExecute}
		target := tools.Target{Kind: tools.TargetCommand, Value: cmd}
		sess := NewChecker(CheckerOptions{Workspace: "/w"})
		for _, r := range c.Generalise(spec, target) {
			rule, err := config.ParseRule(r)
			if err != nil {
				return // a command the rule syntax cannot hold (a ')' inside): the answer stands for the call only
			}
			sess.AllowForSession(rule)
		}
		if v := sess.Check(spec, target); v.Decision != Allow {
			t.Fatalf("the rules for %q do not allow it: %+v", cmd, v)
		}
	})
}

// FuzzMentions: every mention found lies inside the prompt and starts at
// an '@'.
func FuzzMentions(f *testing.F) {
	for _, s := range []string{"look at @main.go", `@"my file" and @x`, "me@example.com", "@", `@"`, "\t@a\n@b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, prompt string) {
		for _, m := range Mentions(prompt) {
			if m.Start < 0 || m.End > len(prompt) || m.Start >= m.End || prompt[m.Start] != '@' || m.Path == "" {
				t.Fatalf("%q: %+v", prompt, m)
			}
		}
	})
}

// FuzzTranscriptDaily: damaged records of the daily state in a transcript
// never stop it from loading.
func FuzzTranscriptDaily(f *testing.F) {
	for _, s := range []string{
		`{"type":"todos","todos":[{"content":"a","status":"pending","activeForm":"b"}]}`,
		`{"type":"checkpoint","turn":"s/1","time":"2026-01-01T00:00:00Z","prompt":"p"}`,
		`{"type":"file","turn":"s/1","path":"/w/a","before":"00","existed":true,"after":"11","added":1,"removed":2}`,
		`{"type":"restore","checkpoint":1,"files":{"/w/a":""}}`,
		`{"type":"turn","turn":"s/1","status":"complete","usage":{"input":1,"output":2},"provider":"p","model":"m"}`,
		`{"type":"file","turn":7}`, `{"type":"todos","todos":"x"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		home := t.TempDir()
		path := TranscriptPath(home, "s")
		os.MkdirAll(filepath.Dir(path), 0o700)
		body := `{"type":"session","version":1,"id":"s","workspace":"/w"}` + "\n" +
			`{"type":"checkpoint","turn":"s/1","prompt":"p"}` + "\n" + strings.ReplaceAll(line, "\n", " ") + "\n"
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := LoadTranscript(home, "s")
		if err != nil {
			return
		}
		l.Checkpoints()
		l.daily.costs.byModel()
		for _, it := range l.Todos {
			_ = it.Content
		}
	})
}
