package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agent/internal/fakemodel"
)

// The search tools through the binary: what git ignores is skipped, a
// path named explicitly is searched anyway, Glob lists newest first, and
// an invalid .gitignore line is said once (docs/reference/runtime.md,
// "What the search tools skip").
func TestE2ESearchToolsSeeWhatGitSees(t *testing.T) {
	s, srv := printSandbox(t,
		call("c1", "Grep", `{"pattern":"needle"}`),
		call("c2", "Grep", `{"pattern":"needle","path":"node_modules"}`),
		call("c3", "Glob", `{"pattern":"**/*.js"}`),
		fakemodel.Reply{Text: "done"})
	s.write(".git/HEAD", "ref: refs/heads/main\n")
	s.write(".gitignore", "node_modules/\n*.log\n[broken\n")
	s.write("src/app.js", "const needle = 1\n")
	s.write("src/.hidden.js", "// needle\n")
	s.write("node_modules/dep/index.js", "module.exports = 'needle'\n")
	s.write("debug.log", "needle\n")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(s.Work, "src/app.js"), old, old); err != nil {
		t.Fatal(err)
	}
	r := s.runGuarded("", "-p", "search")
	if r.Code != 0 || r.Stdout != "done\n" {
		t.Fatalf("%+v", r)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests", len(reqs))
	}
	grep, named, glob := string(reqs[1]), string(reqs[2]), string(reqs[3])
	work := s.Work
	if !strings.Contains(grep, work+"/src/app.js") || !strings.Contains(grep, work+"/src/.hidden.js") ||
		strings.Contains(grep, "node_modules/dep") || strings.Contains(grep, "debug.log") {
		t.Errorf("Grep over the workspace: %s", grep)
	}
	if !strings.Contains(grep, `.gitignore:3: pattern \"[broken\" is ignored: a character class is not closed`) {
		t.Errorf("the invalid pattern is not said: %s", grep)
	}
	if !strings.Contains(named, work+"/node_modules/dep/index.js") {
		t.Errorf("Grep of an ignored folder named as path: %s", named)
	}
	if strings.Count(glob, "[broken") != strings.Count(named, "[broken") {
		t.Errorf("the invalid pattern was said again")
	}
	glob = glob[strings.LastIndex(glob, `"tool_call_id":"c2"`):] // the last result only
	hidden, app := strings.Index(glob, work+"/src/.hidden.js"), strings.Index(glob, work+"/src/app.js")
	if hidden < 0 || app < 0 || hidden > app || strings.Contains(glob, "node_modules/dep") {
		t.Errorf("Glob: not newest first or not ignoring: %s", glob)
	}
}
