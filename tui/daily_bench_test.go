package tui

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agent/agent"
	"agent/agent/tools"
	"agent/internal/fakemodel"
	"agent/providers/chatcompat"
)

// BenchmarkKeystrokeLongTranscript is BenchmarkKeystroke with a
// transcript of 100,000 laid-out lines and the todo panel open
// (docs/performance.md, "The daily loop"): a typed character from its
// bytes to the frame's bytes. Only what is on screen is laid out, so the
// transcript's length costs nothing per key.
func BenchmarkKeystrokeLongTranscript(b *testing.B) {
	s := newState(nil, time.Now)
	s.session = &fakeSession{}
	s.status = Status{Provider: "local", Model: "fake-model", Mode: "default"}
	answer := "## Step\n\nThe parser reads **tokens** and builds a tree; `Next` advances.\n\n"
	for i := range 20 {
		answer += fmt.Sprintf("- point %d of the answer, long enough to be a line\n", i)
	}
	lines := 0
	for i := 0; lines < 100000; i++ {
		turn := fmt.Sprintf("t/%d", i)
		s.event(agent.Event{Kind: agent.EventTurnStart, Turn: turn, Text: "Explain the parser, please, in some detail."})
		s.event(agent.Event{Kind: agent.EventText, Turn: turn, Text: answer})
		s.event(agent.Event{Kind: agent.EventComplete, Turn: turn})
		for _, e := range s.entries[len(s.entries)-2:] {
			lines += len(e.lines(200, s)) + 1
		}
	}
	s.event(agent.Event{Kind: agent.EventTodos, Todos: testTodos[1:]})
	benchKeys(b, s)
	b.ReportMetric(float64(lines), "transcript-lines")
}

// BenchmarkStream50MB runs a Bash command that prints 50 MB through a
// real session into the UI on the in-memory terminal (200×50), typing a
// key every 20 ms meanwhile (docs/performance.md, "The daily loop"). It
// reports the frames drawn per second, the peak heap in use, and the
// time from a key's bytes to the next frame written (an upper bound of
// keystroke to frame), median and worst; and how many views of the
// command's output the session sent per second (at most 20).
func BenchmarkStream50MB(b *testing.B) {
	ws := b.TempDir()
	srv := fakemodel.New()
	defer srv.Close()
	p, err := chatcompat.NewLocalProvider(chatcompat.LocalOptions{BaseURL: srv.URL(), DefaultModel: "fake"})
	if err != nil {
		b.Fatal(err)
	}
	sess, err := agent.NewSession(agent.SessionOptions{Provider: p, Workspace: ws,
		Tools:       tools.Builtin(tools.Options{Workspace: ws}),
		Permissions: agent.NewChecker(agent.CheckerOptions{Mode: "bypassPermissions", Workspace: ws})})
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	term := newFakeTerm(200, 50)
	app := New(Options{Terminal: term})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		app.Run(ctx, FromAgent(sess), Status{}, "")
		app.Close()
	}()
	defer func() { cancel(); <-done }()
	var views atomic.Int64 // the command's views the session sent
	defer sess.Subscribe(func(ev agent.Event) {
		if ev.Kind == agent.EventToolOutput {
			views.Add(1)
		}
	})()
	const cmd = `head -c 50000000 /dev/zero | tr '\0' x | fold -w 100`
	var frames int
	var seconds float64
	var peak uint64
	var lat []time.Duration
	for b.Loop() {
		srv.Add(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "Bash", Args: fmt.Sprintf(`{"command":%q}`, cmd)}}}, fakemodel.Reply{Text: "printed"})
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { // the heap, sampled
			defer wg.Done()
			var ms runtime.MemStats
			for !stop.Load() {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
				time.Sleep(50 * time.Millisecond)
			}
		}()
		go func() { // a key every 20 ms, and the time to the next frame
			defer wg.Done()
			for !stop.Load() {
				term.mu.Lock()
				before := term.writes
				term.mu.Unlock()
				t0 := time.Now()
				term.feed("k")
				for !stop.Load() {
					term.mu.Lock()
					w := term.writes
					term.mu.Unlock()
					if w != before {
						lat = append(lat, time.Since(t0))
						break
					}
					time.Sleep(100 * time.Microsecond)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
		term.mu.Lock()
		w0 := term.writes
		term.mu.Unlock()
		start := time.Now()
		res, err := sess.Run(ctx, "print a lot")
		if err != nil || res.Status != agent.StatusComplete {
			b.Fatal(res, err)
		}
		seconds += time.Since(start).Seconds()
		stop.Store(true)
		wg.Wait()
		term.mu.Lock()
		frames += term.writes - w0
		term.mu.Unlock()
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(frames)/seconds, "frames/s")
	b.ReportMetric(float64(views.Load())/seconds, "views/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "key-ms-p50")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "key-ms-max")
	}
}
