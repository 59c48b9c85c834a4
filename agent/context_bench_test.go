package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"agent/agent/compact"
	"agent/agent/tools"
	"agent/providers"
	"agent/providers/chatcompat"
)

// loopModel answers from memory, as fast as the runtime can ask: a
// summary request with a short summary, a request whose last message is a
// tool result with text, any other with a call of the Big tool. It reports
// usage as a server would (the body's bytes / 4), so that the accounting
// runs as it does against a real provider.
type loopModel struct{ calls atomic.Int64 }

var summaryMarker = []byte("You write the working summary")

func (m *loopModel) Do(req *http.Request) (*http.Response, error) {
	// One read into a buffer of the body's size: the model's own work is
	// not what the benchmark measures.
	body := make([]byte, max(req.ContentLength, 0))
	if _, err := io.ReadFull(req.Body, body); err != nil {
		return nil, err
	}
	req.Body.Close()
	n := m.calls.Add(1)
	var sse string
	switch {
	case bytes.Contains(body[:min(len(body), 4096)], summaryMarker):
		sse = sseText("SUMMARY: files were read and their contents discussed; nothing is pending.")
	case lastRoleTool(body):
		sse = sseText("Read it; the file holds output lines.")
	default:
		sse = sseCall(fmt.Sprintf("call-%d", n))
	}
	sse += fmt.Sprintf("data: {\"id\":\"1\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":12}}\n\ndata: [DONE]\n\n", len(body)/4)
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader(sse)), Request: req}, nil
}

// lastRoleTool reports whether the request's last message is a tool
// result, looking only at the end of the body (a result's placeholder or
// text is short after the cheap pass, the newest one at most 100 KB).
func lastRoleTool(body []byte) bool {
	tail := body[max(len(body)-(128<<10), 0):]
	i := bytes.LastIndex(tail, []byte(`{"role":"`))
	return i >= 0 && bytes.HasPrefix(tail[i+9:], []byte("tool"))
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func maxRSSMiB() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024 // KiB on Linux
}

// BenchmarkLongSession is a scripted 500-turn session against an
// in-memory model with a 200k window: each turn reads 100 KB of tool
// output (50 MB in all), with the transcript written. It reports the mean
// local CPU time of turns 451-500 against turns 11-60, the early turns by
// which compaction already runs in its steady state (docs/performance.md:
// within 1.2×), the compactions, and the process's peak RSS (under 60 MB).
func BenchmarkLongSession(b *testing.B) {
	for b.Loop() {
		home := b.TempDir()
		tr, err := CreateTranscript(home, Header{ID: "long", Workspace: "/w"})
		if err != nil {
			b.Fatal(err)
		}
		p, err := chatcompat.NewLocalProvider(chatcompat.LocalOptions{DefaultModel: "m", Executor: &loopModel{}})
		if err != nil {
			b.Fatal(err)
		}
		s, err := NewSession(SessionOptions{ID: "long", Provider: p, SystemPrompt: DefaultSystemPrompt, Transcript: tr,
			Tools: []tools.Tool{bigTool{100 << 10}}, Permissions: &rulePerms{},
			Context: ContextOptions{Limits: compact.Limits{Window: 200000, MaxOutput: 64000}}})
		if err != nil {
			b.Fatal(err)
		}
		compactions := 0
		s.Subscribe(func(ev Event) {
			if ev.Kind == EventCompact && ev.Compact.Err == nil {
				compactions++
			}
		})
		ctx := context.Background()
		var early, late time.Duration
		var earlyAlloc, lateAlloc uint64
		var ms runtime.MemStats
		for turn := 1; turn <= 500; turn++ {
			runtime.ReadMemStats(&ms)
			alloc0 := ms.TotalAlloc
			start := cpuTime()
			res, err := s.Run(ctx, fmt.Sprintf("read the next file (%d)", turn))
			if err != nil || res.Status != StatusComplete {
				b.Fatalf("turn %d: %v %+v", turn, err, res)
			}
			d := cpuTime() - start
			runtime.ReadMemStats(&ms)
			a := ms.TotalAlloc - alloc0
			switch {
			case turn >= 11 && turn <= 60:
				early += d
				earlyAlloc += a
			case turn >= 451:
				late += d
				lateAlloc += a
			}
		}
		if err := compact.Paired(s.History()); err != nil {
			b.Fatal(err)
		}
		s.Close()
		b.ReportMetric(float64(late)/float64(early), "turn500/turn10")
		b.ReportMetric(float64(early/50)/1e6, "ms/turn-early")
		b.ReportMetric(float64(late/50)/1e6, "ms/turn-late")
		b.ReportMetric(float64(compactions), "compactions")
		// Bytes allocated per turn do not depend on what else the machine
		// runs: the same ratio without the noise of a shared CPU.
		b.ReportMetric(float64(lateAlloc)/float64(earlyAlloc), "alloc500/alloc10")
		b.ReportMetric(maxRSSMiB(), "peak-RSS-MiB")
	}
}

// BenchmarkCompaction150k is the local work of one compaction of a
// 150k-token history (docs/performance.md: under 20 ms): the cheap pass,
// the split, the summary request's input and its encoding, the rebuilt
// history and the boundary record; the model's answer comes from memory at
// once.
func BenchmarkCompaction150k(b *testing.B) {
	home := b.TempDir()
	tr, err := CreateTranscript(home, Header{ID: "c150", Workspace: "/w"})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	p, err := chatcompat.NewLocalProvider(chatcompat.LocalOptions{DefaultModel: "m", Executor: &loopModel{}})
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewSession(SessionOptions{ID: "c150", Provider: p, SystemPrompt: DefaultSystemPrompt, Transcript: tr,
		Tools: []tools.Tool{bigTool{100}}, Permissions: &rulePerms{},
		Context: ContextOptions{Limits: compact.Limits{Window: 200000, MaxOutput: 64000}}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// 150k tokens at 4 bytes a token: 100 turns of a prompt, a call, a
	// 5 KB result and a 1 KB answer.
	var hist []providers.Message
	for i := range 100 {
		id := fmt.Sprint("c", i)
		hist = append(hist,
			textMsg(providers.RoleUser, fmt.Sprintf("step %d: read the next part", i)),
			providers.Message{Role: providers.RoleAssistant, Content: []providers.Part{providers.ToolCall{ID: id, Name: "Big", Arguments: json.RawMessage(`{"file_path":"x.go"}`)}}},
			providers.Message{Role: providers.RoleTool, Content: []providers.Part{providers.ToolResult{CallID: id, Content: []providers.Part{providers.Text{Text: strings.Repeat("some output text\n", 5000/17)}}}}},
			textMsg(providers.RoleAssistant, strings.Repeat("an answer about it. ", 50)))
	}
	tokens := compact.Estimate(hist) * 3 / 4
	t := &Turn{ID: "c150/1", ctx: context.Background()}
	b.ReportAllocs()
	for b.Loop() {
		s.mu.Lock()
		s.history = append([]providers.Message(nil), hist...)
		s.mu.Unlock()
		_, _, info := s.compactHistory(context.Background(), t, compaction{trigger: TriggerManual, summarise: true}, nil)
		if info.Err != nil {
			b.Fatal(info.Err)
		}
	}
	b.ReportMetric(float64(tokens), "history-tokens")
}
