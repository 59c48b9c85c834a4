package agent

import (
	"fmt"
	"sync"
	"testing"

	"agent/agent/tools"
	"agent/config"
)

// benchChecker holds a few dozen rules of every kind, as a project with
// user, project and local settings might.
func benchChecker(b testing.TB) (*Checker, string) {
	ws := realTempDir(b)
	var allow, deny []string
	for i := range 8 {
		allow = append(allow, fmt.Sprintf("Bash(go test ./pkg%d/...)", i), fmt.Sprintf("Edit(src/mod%d/**/*.go)", i), fmt.Sprintf("WebFetch(*.site%d.example)", i))
		deny = append(deny, fmt.Sprintf("Bash(rm -rf /data%d*)", i))
	}
	allow = append(allow, "Bash(npm run test:*)", "Bash(git status)", "Bash(git diff *)", "Read(~/.config/**)", "github__*", "Write(docs/**)")
	deny = append(deny, "Read(secrets/**)", "slack__*", "WebFetch(*.internal)")
	return NewChecker(CheckerOptions{Mode: config.ModeDefault, Allow: mkRules(b, allow...), Deny: mkRules(b, deny...), Workspace: ws, Home: "/home/u"}), ws
}

func BenchmarkCheck(b *testing.B) {
	ch, ws := benchChecker(b)
	for _, bc := range []struct {
		name string
		spec tools.Spec
		t    tools.Target
		want Decision
	}{
		{"Read inside (mode allows)", readSpec, tools.Target{Kind: tools.TargetPath, Value: ws + "/src/a/b.go"}, Allow},
		{"Edit allowed by rule", editSpec, tools.Target{Kind: tools.TargetPath, Value: ws + "/src/mod7/x/y/z.go"}, Allow},
		{"Edit asks", editSpec, tools.Target{Kind: tools.TargetPath, Value: ws + "/other/z.go"}, Ask},
		{"Bash allowed by rule", bashSpec, tools.Target{Kind: tools.TargetCommand, Value: "git diff HEAD~3 -- agent/"}, Allow},
		{"Bash chain allowed", bashSpec, tools.Target{Kind: tools.TargetCommand, Value: "git status && go test ./pkg3/..."}, Allow},
		{"Bash denied", bashSpec, tools.Target{Kind: tools.TargetCommand, Value: "rm -rf /data3/x"}, Deny},
		{"WebFetch allowed", fetchSpec, tools.Target{Kind: tools.TargetHost, Value: "docs.site5.example"}, Allow},
		{"MCP server rule", mcpSpec, tools.Target{}, Allow},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if v := ch.Check(bc.spec, bc.t); v.Decision != bc.want {
				b.Fatalf("%v (%s)", v.Decision, v.Reason)
			}
			b.ReportAllocs()
			for b.Loop() {
				ch.Check(bc.spec, bc.t)
			}
		})
	}
}

func TestCheckConcurrentWithSessionRules(t *testing.T) {
	ch, ws := benchChecker(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				r := mkRules(t, fmt.Sprintf("Bash(make t%d-%d)", g, i))[0]
				ch.AllowForSession(r)
				if v := ch.Check(bashSpec, tools.Target{Kind: tools.TargetCommand, Value: fmt.Sprintf("make t%d-%d", g, i)}); v.Decision != Allow {
					t.Errorf("rule %s not applied: %v", r, v.Decision)
					return
				}
				ch.Check(editSpec, tools.Target{Kind: tools.TargetPath, Value: ws + "/x"})
			}
		}()
	}
	wg.Wait()
	if n := ch.allow.Load().n; n != 30+800 {
		t.Errorf("%d allow rules", n)
	}
}
