package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"agent/internal/jsonschema"
)

type listStore struct{ list []Todo }

func (s *listStore) SetTodos(l []Todo) { s.list = l }

// TodoWrite replaces the list with a valid one and says how many items
// are in each state; a malformed list is an error that says what to fix,
// and the previous list stays (docs/reference/runtime.md, "The todo
// list").
func TestTodoWrite(t *testing.T) {
	valid := `{"todos":[{"content":"Run the tests","status":"completed","activeForm":"Running the tests"},` +
		`{"content":"Fix the parser","status":"in_progress","activeForm":"Fixing the parser"},` +
		`{"content":"Update the docs","status":"pending","activeForm":"Updating the docs"}]}`
	many := func(n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = `{"content":"step","status":"pending","activeForm":"stepping"}`
		}
		return `{"todos":[` + strings.Join(items, ",") + `]}`
	}
	cases := []struct {
		name, args string
		result     string // the whole result, or the start of an error
		isError    bool
		items      int
	}{
		{"a valid list", valid, "Todo list updated: 3 items (1 completed, 1 in progress, 1 pending).", false, 3},
		{"one item", `{"todos":[{"content":"a","status":"pending","activeForm":"doing a"}]}`, "Todo list updated: 1 item (0 completed, 0 in progress, 1 pending).", false, 1},
		{"an empty list", `{"todos":[]}`, "The todo list is now empty.", false, 0},
		{"a hundred items", many(100), "Todo list updated: 100 items", false, 100},
		{"two in progress", `{"todos":[{"content":"a","status":"in_progress","activeForm":"a-ing"},{"content":"b","status":"in_progress","activeForm":"b-ing"}]}`,
			"bad tool arguments: todos[0] and todos[1] are both in_progress; keep exactly one item in_progress. The previous list is unchanged", true, -1},
		{"over a hundred items", many(101), "bad tool arguments: the list has 101 items; at most 100", true, -1},
		{"an unknown status", `{"todos":[{"content":"a","status":"done","activeForm":"a-ing"}]}`, `bad tool arguments: todos[0].status is "done"; use pending, in_progress or completed`, true, -1},
		{"blank content", `{"todos":[{"content":"  ","status":"pending","activeForm":"a-ing"}]}`, "bad tool arguments: todos[0].content is empty", true, -1},
		{"a missing activeForm", `{"todos":[{"content":"a","status":"pending"}]}`, "bad tool arguments: todos[0].activeForm is empty", true, -1},
		{"a line break", `{"todos":[{"content":"a\nb","status":"pending","activeForm":"a-ing"}]}`, "bad tool arguments: todos[0] holds a line break", true, -1},
		{"no todos", `{}`, "bad tool arguments: todos is required", true, -1},
		{"not an array", `{"todos":"a, b"}`, "bad tool arguments:", true, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prev := []Todo{{Content: "before", Status: TodoPending, ActiveForm: "being before"}}
			st := &listStore{list: prev}
			r := NewTodoWrite(st).Run(context.Background(), json.RawMessage(c.args))
			if r.IsError != c.isError || !strings.HasPrefix(r.Content, c.result) {
				t.Fatalf("result %+v", r)
			}
			if c.isError {
				if len(st.list) != 1 || st.list[0] != prev[0] {
					t.Errorf("the previous list changed: %+v", st.list)
				}
				return
			}
			if len(st.list) != c.items {
				t.Errorf("%d items", len(st.list))
			}
		})
	}
	// The schema the model is given refuses what the runtime can check
	// before the tool runs.
	sch, err := jsonschema.Compile(NewTodoWrite(&listStore{}).Spec().Schema, jsonschema.Options{})
	mustNil(t, err)
	for _, bad := range []string{many(101), `{"todos":[{"content":"a","status":"done","activeForm":"b"}]}`, `{"todos":[{"content":"a","status":"pending","activeForm":"b","id":"1"}]}`} {
		if sch.Validate(json.RawMessage(bad)) == nil {
			t.Errorf("the schema accepts %.80s", bad)
		}
	}
	if err := sch.Validate(json.RawMessage(valid)); err != nil {
		t.Errorf("the schema refuses a valid list: %v", err)
	}
}

func TestTodoText(t *testing.T) {
	list := []Todo{{"Run the tests", TodoCompleted, "Running"}, {"Fix it", TodoInProgress, "Fixing"}, {"Ship", TodoPending, "Shipping"}}
	if got := TodoText(list); got != "[x] Run the tests\n[>] Fix it\n[ ] Ship\n" {
		t.Errorf("%q", got)
	}
	if !TodoOpen(list) || TodoOpen(list[:1]) || TodoOpen(nil) {
		t.Error("TodoOpen")
	}
}

// Previews say what a call will do without doing it
// (docs/reference/runtime.md, "Permission prompts").
func TestPreviews(t *testing.T) {
	ws, tl := newTestTools(t, Limits{})
	writeTestFile(t, filepath.Join(ws, "src/a.go"), "package a\n\nvar x = 1\n")
	writeTestFile(t, filepath.Join(ws, "bin.dat"), "a\x00b")
	cases := []struct {
		name, tool, args string
		want             Preview
	}{
		{"Write of a new file shows it", "Write", `{"file_path":"src/new.py","content":"print(1)\n"}`,
			Preview{Kind: PreviewFile, Title: "src/new.py (new file)", Text: "print(1)\n", Lang: "py"}},
		{"Write over a file shows the diff", "Write", `{"file_path":"src/a.go","content":"package a\n\nvar x = 2\n"}`,
			Preview{Kind: PreviewDiff, Title: "src/a.go", Lang: "go", Text: "--- a/src/a.go\n+++ b/src/a.go\n@@ -1,3 +1,3 @@\n package a\n \n-var x = 1\n+var x = 2\n"}},
		{"Write of the same content", "Write", `{"file_path":"src/a.go","content":"package a\n\nvar x = 1\n"}`,
			Preview{Kind: PreviewDiff, Title: "src/a.go", Lang: "go", Note: "(the content is the same as the file's)"}},
		{"Write over a binary file", "Write", `{"file_path":"bin.dat","content":"text"}`,
			Preview{Kind: PreviewDiff, Title: "bin.dat", Lang: "dat", Note: "(a binary file was replaced)"}},
		{"Write to a folder will fail", "Write", `{"file_path":"src","content":"x"}`,
			Preview{Kind: PreviewFile, Note: "This call will fail: " + ws + "/src is a folder"}},
		{"Edit shows the diff", "Edit", `{"file_path":"src/a.go","old_string":"x = 1","new_string":"x = 3"}`,
			Preview{Kind: PreviewDiff, Title: "src/a.go", Lang: "go", Text: "--- a/src/a.go\n+++ b/src/a.go\n@@ -1,3 +1,3 @@\n package a\n \n-var x = 1\n+var x = 3\n"}},
		{"Edit that will not match", "Edit", `{"file_path":"src/a.go","old_string":"y = 1","new_string":"y = 3"}`,
			Preview{Kind: PreviewDiff, Note: "This call will fail: old_string was not found in " + ws + "/src/a.go; it must match exactly, including white space and indentation (Read the file to see its current text)"}},
		{"Bash shows the command and its description", "Bash", `{"command":"go test ./...","description":" Run the tests "}`,
			Preview{Kind: PreviewCommand, Text: "go test ./...", Note: "Run the tests", Lang: "sh"}},
		{"WebFetch shows the URL", "WebFetch", `{"url":" https://example.com/a?b=1 "}`,
			Preview{Kind: PreviewURL, Text: "https://example.com/a?b=1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := tl[c.tool].(Previewer).Preview(json.RawMessage(c.args))
			if !ok || got != c.want {
				t.Errorf("preview %+v %v\nwant %+v", got, ok, c.want)
			}
		})
	}
	// Nothing was written.
	if b, _ := os.ReadFile(filepath.Join(ws, "src/a.go")); string(b) != "package a\n\nvar x = 1\n" {
		t.Errorf("a preview changed the file: %q", b)
	}
	if _, err := os.Stat(filepath.Join(ws, "src/new.py")); err == nil {
		t.Error("a preview created the file")
	}
}

func TestDiffCounts(t *testing.T) {
	d := UnifiedDiff("f", "a\nb\nc\n", "a\n++ x\nc\nd\n")
	if a, r := DiffCounts(d); a != 2 || r != 1 { // "+++ x" inside a hunk is an added line
		t.Errorf("added %d removed %d in\n%s", a, r, d)
	}
}

// Bash hands every piece of output to the sink in its context as it
// comes, and still returns the bounded result.
func TestBashOutputSink(t *testing.T) {
	_, tl := newTestTools(t, Limits{Output: 100})
	var mu sync.Mutex
	var seen bytes.Buffer
	ctx := WithOutput(context.Background(), func(p []byte) {
		mu.Lock()
		seen.Write(p)
		mu.Unlock()
	})
	r := tl["Bash"].Run(ctx, json.RawMessage(`{"command":"for i in $(seq 1 200); do echo line $i; done"}`))
	if r.IsError || !strings.Contains(r.Content, "output truncated") {
		t.Fatalf("%+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.HasPrefix(seen.String(), "line 1\n") || !strings.HasSuffix(seen.String(), "line 200\n") || strings.Count(seen.String(), "\n") != 200 {
		t.Errorf("the sink saw %d bytes", seen.Len())
	}
}

// FuzzParseTodos: whatever arguments come, ParseTodos returns an error or
// a list that keeps the rules.
func FuzzParseTodos(f *testing.F) {
	for _, s := range []string{`{"todos":[]}`, `{"todos":[{"content":"a","status":"in_progress","activeForm":"b"}]}`,
		`{"todos":[{"content":"a","status":"in_progress","activeForm":"b"},{"content":"a","status":"in_progress","activeForm":"b"}]}`,
		`{"todos":null}`, `{}`, `[]`, `{"todos":[{"content":"\n","status":"pending","activeForm":"x"}]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) {
		list, err := ParseTodos(json.RawMessage(args))
		if err != nil {
			return
		}
		doing := 0
		for _, it := range list {
			if it.Status == TodoInProgress {
				doing++
			}
			if it.Content == "" || it.ActiveForm == "" || strings.ContainsAny(it.Content+it.ActiveForm, "\r\n") {
				t.Fatalf("%+v", it)
			}
		}
		if len(list) > MaxTodos || doing > 1 {
			t.Fatalf("%d items, %d in progress", len(list), doing)
		}
	})
}
