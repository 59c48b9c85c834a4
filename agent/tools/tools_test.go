package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agent/internal/jsonschema"
	"agent/internal/securefile"
)

// realTempDir is a temporary folder by its real path, as the workspace is
// (Builtin resolves the workspace's links).
func realTempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	mustNil(t, err)
	return d
}

func mustNil(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// newTestTools builds the built-in tools over a fresh workspace.
func newTestTools(t *testing.T, lim Limits) (ws string, byName map[string]Tool) {
	t.Helper()
	ws = realTempDir(t)
	byName = map[string]Tool{}
	for _, tl := range Builtin(Options{Workspace: ws, Home: "/home/nobody-here", Limits: lim}) {
		byName[tl.Spec().Name] = tl
	}
	return ws, byName
}

func runTool(t *testing.T, tl Tool, args string) Result {
	t.Helper()
	return tl.Run(context.Background(), json.RawMessage(args))
}

func writeTestFile(t *testing.T, p, content string) {
	t.Helper()
	mustNil(t, os.MkdirAll(filepath.Dir(p), 0o755))
	mustNil(t, os.WriteFile(p, []byte(content), 0o644))
}

func TestBuiltinSpecs(t *testing.T) {
	want := []struct {
		name string
		risk Risk
	}{{"Read", RiskInspect}, {"Write", RiskModify}, {"Edit", RiskModify}, {"Glob", RiskInspect}, {"Grep", RiskInspect}, {"Bash", RiskExecute}, {"WebFetch", RiskExecute}}
	ts := Builtin(Options{Workspace: realTempDir(t)})
	if len(ts) != len(want) {
		t.Fatalf("%d tools", len(ts))
	}
	for i, tl := range ts {
		s := tl.Spec()
		if s.Name != want[i].name || s.Risk != want[i].risk || s.Description == "" {
			t.Errorf("tool %d: %s %v", i, s.Name, s.Risk)
		}
		if _, err := jsonschema.Compile(s.Schema, jsonschema.Options{}); err != nil {
			t.Errorf("%s schema: %v", s.Name, err)
		}
	}
}

func TestSchemasCheckArguments(t *testing.T) {
	_, ts := newTestTools(t, Limits{})
	for _, tc := range []struct {
		name       string
		tool, args string
		ok         bool
	}{
		{"Read with offset and limit", "Read", `{"file_path":"a.go","offset":10,"limit":5}`, true},
		{"Read with an empty path", "Read", `{"file_path":""}`, false},
		{"Read with limit 0", "Read", `{"file_path":"a","limit":0}`, false},
		{"Read without file_path", "Read", `{"path":"a"}`, false},
		{"Write with empty content", "Write", `{"file_path":"a","content":""}`, true},
		{"Write without content", "Write", `{"file_path":"a"}`, false},
		{"Edit with replace_all", "Edit", `{"file_path":"a","old_string":"x","new_string":"y","replace_all":true}`, true},
		{"Edit with an empty old_string", "Edit", `{"file_path":"a","old_string":"","new_string":"y"}`, false},
		{"Glob with a path", "Glob", `{"pattern":"**/*.go","path":"src"}`, true},
		{"Grep with every option", "Grep", `{"pattern":"x","output_mode":"content","-i":true,"-n":false,"-C":2,"head_limit":10,"glob":"*.go"}`, true},
		{"Grep with an unknown output_mode", "Grep", `{"pattern":"x","output_mode":"lines"}`, false},
		{"Grep with negative context", "Grep", `{"pattern":"x","-A":-1}`, false},
		{"Bash at the longest timeout", "Bash", `{"command":"ls","timeout":600000,"description":"list"}`, true},
		{"Bash past the longest timeout", "Bash", `{"command":"ls","timeout":600001}`, false},
		{"Bash with a fractional timeout", "Bash", `{"command":"ls","timeout":1.5}`, false},
		{"WebFetch raw", "WebFetch", `{"url":"https://example.com","raw":true}`, true},
		{"WebFetch with a number for url", "WebFetch", `{"url":1}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := jsonschema.Compile(ts[tc.tool].Spec().Schema, jsonschema.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate([]byte(tc.args)); (err == nil) != tc.ok {
				t.Errorf("%s %s: %v", tc.tool, tc.args, err)
			}
		})
	}
}

// TestBadArgumentsNeverCrash runs every tool on arguments that the schema
// would have refused: each must answer with an error result.
func TestBadArgumentsNeverCrash(t *testing.T) {
	_, ts := newTestTools(t, Limits{})
	for name, tl := range ts {
		for _, args := range []string{``, `null`, `[]`, `"x"`, `{}`, `{"file_path":5}`, `{"command":["ls"]}`, `{"url":"ftp://x"}`, `{`, `{"file_path":"a\u0000b","command":"","url":""}`} {
			res := tl.Run(context.Background(), json.RawMessage(args))
			if !res.IsError && !(name == "Read" && args == `{"file_path":"a\u0000b","command":"","url":""}`) {
				t.Errorf("%s(%s): not an error: %.200s", name, args, res.Content)
			}
			tl.Target(json.RawMessage(args)) // must not panic either
		}
	}
}

func TestRead(t *testing.T) {
	ws, ts := newTestTools(t, Limits{ReadLines: 3, LineLength: 10})
	read := ts["Read"]
	writeTestFile(t, ws+"/a.txt", "one\ntwo\r\nthree\nfour\nfive")
	writeTestFile(t, ws+"/long.txt", strings.Repeat("x", 25)+"\nshort\n")
	writeTestFile(t, ws+"/empty.txt", "")
	mustNil(t, os.WriteFile(ws+"/bin.dat", []byte("abc\x00def"), 0o644))
	for _, tc := range []struct {
		name       string
		args, want string
		isErr      bool
	}{
		{"first page says where to continue", `{"file_path":"a.txt"}`, "     1\tone\n     2\ttwo\n     3\tthree\n[more lines follow: continue with offset 4]\n", false},
		{"offset to the end", `{"file_path":"a.txt","offset":4}`, "     4\tfour\n     5\tfive\n", false},
		{"offset and limit", `{"file_path":"a.txt","offset":2,"limit":1}`, "     2\ttwo\n[more lines follow: continue with offset 3]\n", false},
		{"offset 0 is the first line", `{"file_path":"` + ws + `/a.txt","offset":0,"limit":1}`, "     1\tone\n[more lines follow: continue with offset 2]\n", false},
		{"offset past the end", `{"file_path":"a.txt","offset":6}`, ws + "/a.txt has 5 lines; offset 6 is past the end", true},
		{"long line cut", `{"file_path":"long.txt"}`, "     1\txxxxxxxxxx [… line cut: 15 more bytes]\n     2\tshort\n", false},
		{"empty file", `{"file_path":"empty.txt"}`, "[" + ws + "/empty.txt is empty]", false},
		{"binary file", `{"file_path":"bin.dat"}`, ws + "/bin.dat is a binary file; Read shows text files only", true},
		{"missing file", `{"file_path":"missing"}`, ws + "/missing does not exist", true},
		{"folder", `{"file_path":"."}`, ws + " is a folder; use Glob to list it", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runTool(t, read, tc.args)
			if res.Content != tc.want || res.IsError != tc.isErr {
				t.Errorf("%s:\n got %q (error %v)\nwant %q", tc.args, res.Content, res.IsError, tc.want)
			}
		})
	}
}

func TestReadBounded(t *testing.T) {
	ws, ts := newTestTools(t, Limits{ReadBytes: 100})
	writeTestFile(t, ws+"/big.txt", strings.Repeat("line of text\n", 1000))
	res := runTool(t, ts["Read"], `{"file_path":"big.txt"}`)
	if len(res.Content) > 200 || !strings.Contains(res.Content, "[more lines follow: continue with offset 6]") {
		t.Errorf("%d bytes: %q", len(res.Content), res.Content)
	}
}

func TestWrite(t *testing.T) {
	ws, ts := newTestTools(t, Limits{})
	wr := ts["Write"]
	res := runTool(t, wr, `{"file_path":"new/dir/f.txt","content":"hello\n"}`)
	if res.IsError || res.Content != "Created "+ws+"/new/dir/f.txt (6 bytes)" {
		t.Fatalf("%+v", res)
	}
	if res.Display != "--- /dev/null\n+++ b/new/dir/f.txt\n@@ -0,0 +1 @@\n+hello\n" {
		t.Errorf("display %q", res.Display)
	}
	fi, _ := os.Stat(ws + "/new/dir/f.txt")
	if fi.Mode().Perm() != newFileMode {
		t.Errorf("mode %v", fi.Mode())
	}
	// An existing file keeps its mode.
	mustNil(t, os.Chmod(ws+"/new/dir/f.txt", 0o755))
	res = runTool(t, wr, `{"file_path":"new/dir/f.txt","content":"hello\nworld"}`)
	if res.IsError || !strings.HasPrefix(res.Content, "Wrote ") {
		t.Fatalf("%+v", res)
	}
	if fi, _ := os.Stat(ws + "/new/dir/f.txt"); fi.Mode().Perm() != 0o755 {
		t.Errorf("mode became %v", fi.Mode())
	}
	if res.Display != "--- a/new/dir/f.txt\n+++ b/new/dir/f.txt\n@@ -1 +1,2 @@\n hello\n+world\n\\ No newline at end of file\n" {
		t.Errorf("display %q", res.Display)
	}
	if res := runTool(t, wr, `{"file_path":"new","content":"x"}`); !res.IsError {
		t.Error("wrote over a folder")
	}
	entries, _ := os.ReadDir(ws + "/new/dir")
	if len(entries) != 1 {
		t.Errorf("%d entries: a temporary file was left", len(entries))
	}
}

func TestWriteAtomicFailure(t *testing.T) {
	ws, ts := newTestTools(t, Limits{})
	writeTestFile(t, ws+"/keep.txt", "original")
	replaceFile = func(string, []byte, fs.FileMode) error { return errors.New("disk on fire") }
	defer func() { replaceFile = securefile.ReplaceFile }()
	for _, args := range []string{
		`{"file_path":"keep.txt","content":"new"}`,
		`{"file_path":"fresh.txt","content":"new"}`,
	} {
		if res := runTool(t, ts["Write"], args); !res.IsError || !strings.Contains(res.Content, "disk on fire") {
			t.Errorf("%s: %+v", args, res)
		}
	}
	if res := runTool(t, ts["Edit"], `{"file_path":"keep.txt","old_string":"orig","new_string":"X"}`); !res.IsError {
		t.Errorf("edit: %+v", res)
	}
	if data, _ := os.ReadFile(ws + "/keep.txt"); string(data) != "original" {
		t.Errorf("file changed to %q", data)
	}
	entries, _ := os.ReadDir(ws)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("entries %v: a temporary file was left", names)
	}
}

func TestEdit(t *testing.T) {
	ws, ts := newTestTools(t, Limits{})
	ed := ts["Edit"]
	src := "package a\n\nfunc f() {\n\treturn 1\n}\n\nfunc g() {\n\treturn 1\n}\n"
	writeTestFile(t, ws+"/a.go", src)
	mustNil(t, os.Chmod(ws+"/a.go", 0o600))
	for _, tc := range []struct {
		name       string
		args, want string
		isErr      bool
	}{
		{"ambiguous old_string", `{"file_path":"a.go","old_string":"return 1","new_string":"return 2"}`, "old_string occurs 2 times in " + ws + "/a.go; include more surrounding lines to make it unique, or set replace_all to replace every occurrence", true},
		{"old_string not found", `{"file_path":"a.go","old_string":"return 3","new_string":"x"}`, "old_string was not found in " + ws + "/a.go; it must match exactly, including white space and indentation (Read the file to see its current text)", true},
		{"no change", `{"file_path":"a.go","old_string":"f()","new_string":"f()"}`, "old_string and new_string are the same; there is nothing to change", true},
		{"empty old_string", `{"file_path":"a.go","old_string":"","new_string":"x"}`, "old_string is empty; use Write to create or replace a whole file", true},
		{"missing file", `{"file_path":"nope.go","old_string":"a","new_string":"b"}`, ws + "/nope.go does not exist; Edit changes existing files (use Write to create one)", true},
		{"missing new_string", `{"file_path":"a.go","old_string":"a"}`, "old_string and new_string are required", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runTool(t, ed, tc.args)
			if res.Content != tc.want || res.IsError != tc.isErr {
				t.Errorf("%s:\n got %q (error %v)\nwant %q", tc.args, res.Content, res.IsError, tc.want)
			}
		})
	}
	// The edits that succeed change the file one after another.
	res := runTool(t, ed, `{"file_path":"a.go","old_string":"func f() {\n\treturn 1","new_string":"func f() {\n\treturn 10"}`)
	if want := "Edited " + ws + "/a.go: replaced 1 occurrence"; res.Content != want || res.IsError {
		t.Errorf("unique replacement:\n got %q (error %v)\nwant %q", res.Content, res.IsError, want)
	}
	data, _ := os.ReadFile(ws + "/a.go")
	if string(data) != strings.Replace(src, "return 1", "return 10", 1) {
		t.Errorf("file:\n%s", data)
	}
	if fi, _ := os.Stat(ws + "/a.go"); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode became %v", fi.Mode())
	}
	res = runTool(t, ed, `{"file_path":"a.go","old_string":"return 1\n","new_string":"return 2\n","replace_all":true}`)
	if res.Content != "Edited "+ws+"/a.go: replaced 1 occurrence" {
		t.Errorf("%q", res.Content)
	}
	res = runTool(t, ed, `{"file_path":"a.go","old_string":"return","new_string":"yield","replace_all":true}`)
	if res.Content != "Edited "+ws+"/a.go: replaced 2 occurrences" {
		t.Errorf("%q", res.Content)
	}
	want := "--- a/a.go\n+++ b/a.go\n@@ -1,9 +1,9 @@\n package a\n \n func f() {\n-\treturn 10\n+\tyield 10\n }\n \n func g() {\n-\treturn 2\n+\tyield 2\n }\n"
	if res.Display != want {
		t.Errorf("display:\n%s\nwant\n%s", res.Display, want)
	}

	// CRLF files take "\n" edits.
	writeTestFile(t, ws+"/w.txt", "a\r\nb\r\nc\r\n")
	res = runTool(t, ed, `{"file_path":"w.txt","old_string":"a\nb","new_string":"a\nB"}`)
	if data, _ := os.ReadFile(ws + "/w.txt"); res.IsError || string(data) != "a\r\nB\r\nc\r\n" {
		t.Errorf("CRLF edit: %+v %q", res, data)
	}
	mustNil(t, os.WriteFile(ws+"/b.bin", []byte("a\x00b"), 0o644))
	if res := runTool(t, ed, `{"file_path":"b.bin","old_string":"a","new_string":"b"}`); !res.IsError {
		t.Error("edited a binary file")
	}
}

func TestUnifiedDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n"
	b := "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n15\n16\n"
	want := "--- a/f\n+++ b/f\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n@@ -11,5 +11,5 @@\n 11\n 12\n 13\n-14\n 15\n+16\n"
	if got := unifiedDiff("f", a, b); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if unifiedDiff("f", a, a) != "" {
		t.Error("equal inputs gave a diff")
	}
	// Random edits: the operations rebuild both sides, and are as few as
	// the longest common subsequence allows.
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 300; i++ {
		la, lb := randLines(r), randLines(r)
		ops := diffLines(la, lb)
		var ra, rb []string
		changes := 0
		for _, op := range ops {
			if op.kind != '+' {
				ra = append(ra, op.line)
			}
			if op.kind != '-' {
				rb = append(rb, op.line)
			}
			if op.kind != ' ' {
				changes++
			}
		}
		if fmt.Sprint(ra) != fmt.Sprint(la) || fmt.Sprint(rb) != fmt.Sprint(lb) {
			t.Fatalf("ops do not rebuild the inputs: %q %q", la, lb)
		}
		if want := len(la) + len(lb) - 2*lcs(la, lb); changes != want {
			t.Fatalf("%d changes, minimum %d: %q %q", changes, want, la, lb)
		}
	}
}

func randLines(r *rand.Rand) []string {
	n := r.IntN(12)
	out := make([]string, n)
	for i := range out {
		out[i] = string(rune('a'+r.IntN(4))) + "\n"
	}
	return out
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// searchTree lays out a workspace for Glob and Grep.
func searchTree(t *testing.T, ws, outside string) {
	writeTestFile(t, ws+"/main.go", "package main\n// TODO: one\nfunc main() {}\n")
	writeTestFile(t, ws+"/b.txt", "Alpha\nbeta\nTODO two\n")
	writeTestFile(t, ws+"/src/x.go", "package src\n\nvar a = 1 // todo\nvar b = 2\nvar c = 3\nvar d = 4\nvar e = 5 // TODO: three\n")
	writeTestFile(t, ws+"/src/deep/y.go", "package deep\n")
	writeTestFile(t, ws+"/src/deep/y.ts", "let y = 1 // TODO\n")
	writeTestFile(t, ws+"/.git/notes", "TODO in git\n")
	writeTestFile(t, ws+"/.hidden.go", "package hidden // TODO\n")
	mustNil(t, os.WriteFile(ws+"/blob.bin", []byte("TODO\x00binary"), 0o644))
	writeTestFile(t, outside+"/secret.go", "TODO outside\n")
	mustNil(t, os.Symlink(outside, ws+"/linkdir"))
	mustNil(t, os.Symlink(outside+"/secret.go", ws+"/link.go"))
	// Every file gets the same time, so that Glob's newest-first order
	// falls back to the path; the links (made now) come first.
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	mustNil(t, filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			err = os.Chtimes(p, old, old)
		}
		return err
	}))
}

func TestGlob(t *testing.T) {
	ws, ts := newTestTools(t, Limits{})
	outside := realTempDir(t)
	searchTree(t, ws, outside)
	glob := ts["Glob"]
	for _, tc := range []struct {
		name string
		args string
		want []string
	}{
		{"star stays in the top folder", `{"pattern":"*.go"}`, []string{"link.go", ".hidden.go", "main.go"}},
		{"double star crosses folders", `{"pattern":"**/*.go"}`, []string{"link.go", ".hidden.go", "main.go", "src/deep/y.go", "src/x.go"}},
		{"braces", `{"pattern":"src/**/*.{go,ts}"}`, []string{"src/deep/y.go", "src/deep/y.ts", "src/x.go"}},
		{"star for a folder", `{"pattern":"*/*.go"}`, []string{"src/x.go"}},
		{"the path option", `{"pattern":"*.go","path":"src"}`, []string{"src/x.go"}},
		{"absolute pattern", `{"pattern":"` + ws + `/src/*/y.?s"}`, []string{"src/deep/y.ts"}},
		{"literal path", `{"pattern":"src/x.go"}`, []string{"src/x.go"}},
		{"the .git folder is not searched", `{"pattern":"**/notes"}`, nil},
		{"character class", `{"pattern":"[bm]*"}`, []string{"b.txt", "blob.bin", "main.go"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runTool(t, glob, tc.args)
			var want []string
			for _, w := range tc.want {
				want = append(want, ws+"/"+w)
			}
			got := strings.Fields(res.Content)
			if len(want) == 0 {
				if res.Content != "No files found" {
					t.Errorf("%s: %q", tc.args, res.Content)
				}
				return
			}
			if res.IsError || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s:\n got %q\nwant %q", tc.args, got, want)
			}
		})
	}
	// The folder searched is the permission target.
	for _, tc := range []struct {
		name        string
		args, value string
		outside     bool
	}{
		{"target is the workspace by default", `{"pattern":"**/*.go"}`, ws, false},
		{"target is the path option", `{"pattern":"*.go","path":"src/deep"}`, ws + "/src/deep", false},
		{"target of a dot-dot pattern is the parent", `{"pattern":"../*"}`, filepath.Dir(ws), true},
		{"target of an absolute pattern is its folder", `{"pattern":"/etc/*.conf"}`, "/etc", true},
		{"target through a link is outside", `{"pattern":"linkdir/*.go"}`, outside, true},
		{"target of dot-dot after a wildcard is the parent", `{"pattern":"src/*/../../../x*"}`, filepath.Dir(ws), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tgt, err := glob.Target(json.RawMessage(tc.args))
			if err != nil || tgt.Kind != TargetPath || tgt.Value != tc.value || tgt.OutsideWorkspace != tc.outside {
				t.Errorf("%s: %+v %v, want %s outside=%v", tc.args, tgt, err, tc.value, tc.outside)
			}
		})
	}
}

func TestGlobLimits(t *testing.T) {
	ws, ts := newTestTools(t, Limits{Output: 200, WalkEntries: 50})
	for i := range 40 {
		writeTestFile(t, fmt.Sprintf("%s/d/f%02d.txt", ws, i), "")
	}
	res := runTool(t, ts["Glob"], `{"pattern":"**/*.txt"}`)
	if len(res.Content) > 300 || !strings.Contains(res.Content, "more files not shown") {
		t.Errorf("%q", res.Content)
	}
	for i := range 40 {
		writeTestFile(t, fmt.Sprintf("%s/e/f%02d.txt", ws, i), "")
	}
	res = runTool(t, ts["Glob"], `{"pattern":"**/nothing"}`)
	if !strings.Contains(res.Content, "the search stopped after 50 entries") {
		t.Errorf("%q", res.Content)
	}
}

func TestGrep(t *testing.T) {
	ws, ts := newTestTools(t, Limits{})
	searchTree(t, ws, realTempDir(t))
	grep := ts["Grep"]
	for _, tc := range []struct {
		name       string
		args, want string
	}{
		{"files with matches by default", `{"pattern":"TODO"}`, ".hidden.go\nb.txt\nmain.go\nsrc/deep/y.ts\nsrc/x.go\n"},
		{"case-insensitive, filtered by glob", `{"pattern":"todo","-i":true,"glob":"*.go"}`, ".hidden.go\nmain.go\nsrc/x.go\n"},
		{"glob with a double star", `{"pattern":"TODO","glob":"src/**/*.ts"}`, "src/deep/y.ts\n"},
		{"count under a folder", `{"pattern":"TODO","output_mode":"count","path":"src"}`, "src/deep/y.ts:1\nsrc/x.go:1\n"},
		{"content with line numbers", `{"pattern":"TODO: \\w+","output_mode":"content"}`, "main.go:2:// TODO: one\nsrc/x.go:7:var e = 5 // TODO: three\n"},
		{"content of one file without line numbers", `{"pattern":"^var [bd]","output_mode":"content","-n":false,"path":"src/x.go"}`, "src/x.go:var b = 2\nsrc/x.go:var d = 4\n"},
		{"lines before", `{"pattern":"var [ae]","output_mode":"content","-B":1,"path":"src"}`, "src/x.go-2-\nsrc/x.go:3:var a = 1 // todo\n--\nsrc/x.go-6-var d = 4\nsrc/x.go:7:var e = 5 // TODO: three\n"},
		{"lines around", `{"pattern":"var [bc]","output_mode":"content","-C":1,"path":"src"}`, "src/x.go-3-var a = 1 // todo\nsrc/x.go:4:var b = 2\nsrc/x.go:5:var c = 3\nsrc/x.go-6-var d = 4\n"},
		{"head_limit cuts the output", `{"pattern":"var","output_mode":"content","head_limit":2,"path":"src"}`, "src/x.go:3:var a = 1 // todo\nsrc/x.go:4:var b = 2\n[more results not shown: the output limit was reached; narrow the search or use head_limit]\n"},
		{"no match", `{"pattern":"nothing here"}`, "No matches found\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runTool(t, grep, tc.args)
			want := strings.ReplaceAll(tc.want, "\n", "\n"+ws+"/")
			want = strings.TrimSuffix(ws+"/"+want, ws+"/")
			want = strings.ReplaceAll(want, ws+"/--\n", "--\n")
			want = strings.ReplaceAll(want, ws+"/No matches", "No matches")
			want = strings.ReplaceAll(want, ws+"/[more", "[more")
			if res.IsError || res.Content != want {
				t.Errorf("%s:\n got %q\nwant %q", tc.args, res.Content, want)
			}
		})
	}
	if res := runTool(t, grep, `{"pattern":"("}`); !res.IsError || !strings.Contains(res.Content, "RE2") {
		t.Errorf("bad regexp: %+v", res)
	}
	if res := runTool(t, grep, `{"pattern":"x","path":"missing"}`); !res.IsError {
		t.Errorf("missing path: %+v", res)
	}
	tgt, _ := grep.Target(json.RawMessage(`{"pattern":"x","path":"linkdir"}`))
	if !tgt.OutsideWorkspace {
		t.Errorf("grep through a link: %+v", tgt)
	}
}

func TestGrepSkipsLargeFiles(t *testing.T) {
	ws, ts := newTestTools(t, Limits{FileBytes: 10})
	writeTestFile(t, ws+"/big.txt", "TODO and more than ten bytes\n")
	res := runTool(t, ts["Grep"], `{"pattern":"TODO"}`)
	if res.Content != "No matches found\n[1 files larger than 10 bytes were not searched]\n" {
		t.Errorf("%q", res.Content)
	}
}

func TestSearchHonoursCancel(t *testing.T) {
	ws, ts := newTestTools(t, Limits{})
	for i := range 600 {
		writeTestFile(t, fmt.Sprintf("%s/d%d/f.txt", ws, i), "x\n")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, name := range []string{"Glob", "Grep"} {
		res := ts[name].Run(ctx, json.RawMessage(`{"pattern":"**/x"}`))
		if !res.IsError {
			t.Errorf("%s ran on after cancel: %.100q", name, res.Content)
		}
	}
}

func TestExpandBraces(t *testing.T) {
	for in, want := range map[string]string{
		"a{b,c}d":      "[abd acd]",
		"{a,b}{1,2}":   "[a1 a2 b1 b2]",
		"x{a,{b,c}}":   "[xa xb xc]",
		"{a}":          "[{a}]",
		"{a,b":         "[{a,b]",
		`\{a,b}`:       `[\{a,b}]`,
		"*.{go,ts,js}": "[*.go *.ts *.js]",
		"{}{x,y}":      "[{}x {}y]",
	} {
		if got := fmt.Sprint(expandBraces(in)); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	if n := len(expandBraces(strings.Repeat("{a,b}", 10))); n != maxBraceExpansions {
		t.Errorf("%d expansions", n)
	}
}

func TestSearchSkipsWhatGitIgnores(t *testing.T) {
	ws, ts := newTestTools(t, Limits{})
	writeTestFile(t, ws+"/.git/HEAD", "ref: refs/heads/main\n")
	writeTestFile(t, ws+"/.gitignore", "build/\n*.log\n")
	writeTestFile(t, ws+"/src/a.go", "TODO a\n")
	writeTestFile(t, ws+"/build/gen.go", "TODO gen\n")
	writeTestFile(t, ws+"/trace.log", "TODO log\n")
	for i, name := range []string{"src/a.go", "build/gen.go", "trace.log"} {
		at := time.Date(2024, 1, 1+i, 0, 0, 0, 0, time.UTC)
		mustNil(t, os.Chtimes(ws+"/"+name, at, at))
	}
	writeTestFile(t, ws+"/src/b.go", "TODO b\n") // the newest
	for _, tc := range []struct {
		name, tool, args, want string
	}{
		{"Grep skips ignored files", "Grep", `{"pattern":"TODO"}`, "src/a.go\nsrc/b.go\n"},
		{"Grep searches an ignored folder named as path", "Grep", `{"pattern":"TODO","path":"build"}`, "build/gen.go\n"},
		{"Grep searches an ignored file named as path", "Grep", `{"pattern":"TODO","path":"trace.log"}`, "trace.log\n"},
		{"Glob lists newest first and skips ignored files", "Glob", `{"pattern":"**/*.go"}`, "src/b.go\nsrc/a.go\n"},
		{"Glob finds an ignored file named literally", "Glob", `{"pattern":"trace.log"}`, "trace.log\n"},
		{"Glob searches below an ignored folder named in the pattern", "Glob", `{"pattern":"build/*.go"}`, "build/gen.go\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runTool(t, ts[tc.tool], tc.args)
			want := ws + "/" + strings.ReplaceAll(strings.TrimSuffix(tc.want, "\n"), "\n", "\n"+ws+"/") + "\n"
			if res.IsError || res.Content != want {
				t.Errorf("%s:\n got %q\nwant %q", tc.args, res.Content, want)
			}
		})
	}
}
