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
	pt "agent/providers/providertest"
)

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
	pt.CheckCachePrefix(t, bodies, `,"cache_control":{"type":"ephemeral"}`)
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
