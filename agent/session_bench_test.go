package agent

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"agent/agent/hooks"
	"agent/agent/tools"
	"agent/config"
	"agent/providers/chatcompat"
)

// cannedModel answers every request from memory, so a benchmark measures
// the runtime (and the stream decoding) without a model or a network.
// Odd calls ask for a Read of a small file when tools is set; even calls
// answer with text.
type cannedModel struct {
	tools bool
	n     atomic.Int64
}

const (
	cannedText = "data: {\"id\":\"1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"The answer is 42.\"}}]}\n\n" +
		"data: {\"id\":\"1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":5}}\n\ndata: [DONE]\n\n"
	cannedTool = "data: {\"id\":\"1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"Read\",\"arguments\":\"{\\\"file_path\\\":\\\"notes.txt\\\"}\"}}]}}]}\n\n" +
		"data: {\"id\":\"1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"
)

func (m *cannedModel) Do(req *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, req.Body)
	req.Body.Close()
	body := cannedText
	if m.tools && m.n.Add(1)%2 == 1 {
		body = cannedTool
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

func benchTurns(b *testing.B, withTools, framing bool) { benchTurnsHooks(b, withTools, framing, nil) }

// benchTurnsHooks is benchTurns with the given hooks.
func benchTurnsHooks(b *testing.B, withTools, framing bool, hs []config.HookHandler) {
	ws := b.TempDir()
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("some notes\n"), 0o600)
	p, err := chatcompat.NewLocalProvider(chatcompat.LocalOptions{DefaultModel: "m", Executor: &cannedModel{tools: withTools}})
	if err != nil {
		b.Fatal(err)
	}
	so := SessionOptions{Provider: p, SystemPrompt: "You are a test assistant.", Workspace: ws,
		Tools:       tools.Builtin(tools.Options{Workspace: ws}),
		Permissions: NewChecker(CheckerOptions{Workspace: ws})}
	if hs != nil {
		for i := range hs {
			hs[i].Type, hs[i].File, hs[i].Scope = "command", "/u/.agent/settings.json", config.User
		}
		so.Hooks = hooks.New(&config.Settings{Hooks: hs}, hooks.Options{Workspace: ws, Home: b.TempDir()})
	}
	if framing {
		// What a workspace session sends first: the static prompt, the
		// environment block, the context message with an instruction file.
		os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte(strings.Repeat("- Run the tests after a change.\n", 100)), 0o600)
		in := newInstructions(context.Background(), instructionOptions{workspace: ws, trusted: true, model: "m", mode: "default"})
		so.Framing, so.Attach = in.framing(), in.attach
	}
	s, err := NewSession(so)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// A fresh conversation each time would hide the cost of a long
		// one; keep the history short by resetting every 20 turns.
		if i%20 == 0 {
			s.mu.Lock()
			s.history = nil
			s.mu.Unlock()
		}
		res, err := s.Run(ctx, "what is the answer?")
		if err != nil || res.Status != StatusComplete {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

// BenchmarkTurnText: one turn, one model call answering text (issue
// target: runtime overhead per turn under 1 ms, excluding the model).
func BenchmarkTurnText(b *testing.B) { benchTurns(b, false, false) }

// BenchmarkTurnTextFramed: BenchmarkTurnText with a workspace session's
// framing (about 13 KB of system prompt and context message), built once
// at the start: what it adds per turn is only sending its bytes.
func BenchmarkTurnTextFramed(b *testing.B) { benchTurns(b, false, true) }

// BenchmarkTurnWithTool: one turn with two model calls and a Read in
// between (schema validation, permission check, the tool, its result).
func BenchmarkTurnWithTool(b *testing.B) { benchTurns(b, true, false) }

// BenchmarkTurnWithToolNoHooks: BenchmarkTurnWithTool with a hooks Set
// that has no handlers (docs/performance.md: no added cost).
func BenchmarkTurnWithToolNoHooks(b *testing.B) {
	benchTurnsHooks(b, true, false, []config.HookHandler{})
}

// BenchmarkTurnWithToolNoopHook: a PreToolUse handler that matches every
// call and does nothing ("true"): what one hook process adds to a tool
// call (docs/performance.md: under 5 ms).
func BenchmarkTurnWithToolNoopHook(b *testing.B) {
	benchTurnsHooks(b, true, false, []config.HookHandler{{Event: "PreToolUse", Command: "true"}})
}
