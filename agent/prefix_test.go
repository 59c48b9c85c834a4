package agent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agent/agent/tools"
	"agent/internal/fakemodel"
	"agent/providers"
	"agent/providers/messages"
)

// cacheMark is how the messages provider marks the end of a cached
// prefix.
const cacheMark = `,"cache_control":{"type":"ephemeral"}`

// withoutMarks removes the cache marks from a request body and returns
// where each stood in what is left.
func withoutMarks(body []byte) ([]byte, []int) {
	var out []byte
	var at []int
	for {
		i := bytes.Index(body, []byte(cacheMark))
		if i < 0 {
			return append(out, body...), at
		}
		out = append(out, body[:i]...)
		at = append(at, len(out))
		body = body[i+len(cacheMark):]
	}
}

// TestToolLoopKeepsTheCachePrefix: a turn of 20 tool calls through the
// runtime, with the real framing (the static prompt, the environment
// block, the instruction files) and a file below the workspace attaching
// its instruction file on the way. Each request, as the messages
// provider sends it, repeats the bytes of the request before it up to
// that request's last cache mark and marks that place again, with four
// marks at most; from the third request on at least 80% of its bytes lie
// in that prefix, which the API serves from its cache (docs/providers.md,
// "Prompt caching").
func TestToolLoopKeepsTheCachePrefix(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write := func(rel, text string) {
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("AGENTS.md", strings.Repeat("- Run the package's tests after every change, and say which ran.\n", 40))
	write("parser/AGENTS.md", "In parser/, every function has a table test.\n")
	const steps = 20
	var replies []fakemodel.Reply
	for i := range steps {
		write(fmt.Sprintf("parser/part%02d.go", i), fmt.Sprintf("package parser\n\n// part %d\nfunc part%d(s string) string { return s }\n", i, i))
		replies = append(replies, fakemodel.Reply{Text: fmt.Sprintf("Reading part %d.", i),
			ToolCalls: []fakemodel.ToolCall{{ID: fmt.Sprintf("call_%02d", i), Name: "Read", Args: fmt.Sprintf(`{"file_path":"parser/part%02d.go"}`, i)}}})
	}
	replies = append(replies, fakemodel.Reply{Text: "Read them all."})

	in := newInstructions(context.Background(), instructionOptions{workspace: ws, trusted: true, model: "family-4-5", mode: "default"})
	h := newHarness(t, SessionOptions{Framing: in.framing(), Attach: in.attach,
		Tools: tools.Builtin(tools.Options{Workspace: ws}), Permissions: &rulePerms{}}, replies...)
	// Each request as the messages provider would send it, encoded when
	// the runtime hands it over.
	mp, err := messages.New(messages.Options{APIKey: "test", DefaultModel: "family-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	var bodies [][]byte
	id, model := h.sess.Model()
	h.sess.SetModel(id, encoder{Provider: h.sess.provider, encode: func(req *providers.Request) {
		r := *req
		r.Model = ""
		body, _, err := mp.Body(&r)
		if err != nil {
			t.Errorf("request %d: %v", len(bodies), err)
		}
		bodies = append(bodies, body)
	}}, model)
	if res := run(t, h.sess, "Read the parts of the parser one by one."); res.Status != StatusComplete {
		t.Fatalf("%+v", res)
	}
	if len(bodies) != steps+1 {
		t.Fatalf("%d requests", len(bodies))
	}
	if !bytes.Contains(bodies[1], []byte("every function has a table test")) || bytes.Contains(bodies[0], []byte("every function has a table test")) {
		t.Error("parser/AGENTS.md was not attached to the first Read below parser/")
	}
	var prev []byte
	var prevMarks []int
	for n, body := range bodies {
		cur, at := withoutMarks(body)
		if len(at) == 0 || len(at) > 4 {
			t.Fatalf("request %d: %d cache marks", n+1, len(at))
		}
		if n > 0 {
			end := prevMarks[len(prevMarks)-1]
			if !bytes.HasPrefix(cur, prev[:end]) {
				i := 0
				for i < end && cur[i] == prev[i] {
					i++
				}
				t.Fatalf("request %d departs from the cached prefix at byte %d of %d:\n%s", n+1, i, end, cur[max(i-80, 0):min(i+80, len(cur))])
			}
			found := false
			for _, a := range at {
				found = found || a == end
			}
			if !found {
				t.Errorf("request %d does not mark where request %d ended (%d): %v", n+1, n, end, at)
			}
			share := float64(end) / float64(len(cur))
			t.Logf("request %2d: %6d bytes, %6d cacheable (%.1f%%)", n+1, len(cur), end, 100*share)
			if n >= 2 && share < 0.8 {
				t.Errorf("request %d: only %.1f%% of it is cacheable", n+1, 100*share)
			}
		}
		prev, prevMarks = cur, at
	}
}

// encoder passes each request to encode before the provider sends it.
type encoder struct {
	providers.Provider
	encode func(*providers.Request)
}

func (e encoder) Chat(ctx context.Context, req *providers.Request) (*providers.Stream, error) {
	e.encode(req)
	return e.Provider.Chat(ctx, req)
}
