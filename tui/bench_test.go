package tui

import (
	"fmt"
	"testing"
	"time"

	"agent/agent"
	"agent/tui/keys"
	"agent/tui/screen"
)

// benchState is a session with a transcript of about 200 laid-out lines:
// prompts, markdown answers and tool output.
func benchState(b *testing.B) *state {
	s := newState(nil, time.Now)
	s.session = &fakeSession{}
	s.status = Status{Provider: "local", Model: "fake-model", Mode: "default"}
	for i := range 20 {
		turn := fmt.Sprintf("t/%d", i)
		s.event(agent.Event{Kind: agent.EventTurnStart, Turn: turn, Text: "Explain the parser, please, in some detail."})
		s.event(agent.Event{Kind: agent.EventText, Turn: turn, Text: "## Parser\n\nThe parser reads **tokens** and builds a tree; `Next` advances.\n\n- one\n- two\n\n```go\nfor p.Next() {\n}\n```\n"})
		s.event(agent.Event{Kind: agent.EventComplete, Turn: turn})
	}
	return s
}

// BenchmarkRenderTranscript draws and renders a full 200×50 frame of a
// 200-line transcript from scratch (layout caches cold, a full redraw).
func BenchmarkRenderTranscript(b *testing.B) {
	s := benchState(b)
	f := screen.NewFrame(200, 50)
	b.ReportAllocs()
	for b.Loop() {
		for _, e := range s.entries {
			e.changed()
		}
		r := screen.NewRenderer(screen.RendererOptions{})
		s.view(f)
		r.Render(f)
	}
}

// BenchmarkStreamDelta is the steady state of streaming: one text delta
// arrives, the frame is drawn and the diff against the last frame
// rendered (only the streaming entry is laid out again).
func BenchmarkStreamDelta(b *testing.B) {
	s := benchState(b)
	s.event(agent.Event{Kind: agent.EventTurnStart, Turn: "t/x", Text: "more"})
	f := screen.NewFrame(200, 50)
	r := screen.NewRenderer(screen.RendererOptions{})
	s.view(f)
	r.Render(f)
	b.ReportAllocs()
	var bytes int
	for i := 0; b.Loop(); i++ {
		s.event(agent.Event{Kind: agent.EventText, Turn: "t/x", Text: "word "})
		if i%40 == 39 {
			s.event(agent.Event{Kind: agent.EventText, Turn: "t/x", Text: "\n\n"})
		}
		s.view(f)
		bytes += len(r.Render(f))
	}
	b.ReportMetric(float64(bytes)/float64(b.N), "bytes/frame")
}

// BenchmarkKeystroke is a typed character from its bytes to the frame's
// bytes: decode, keymap, composer, draw, diff (200×50, a 200-line
// transcript on screen). bytes/key is what the terminal receives.
func BenchmarkKeystroke(b *testing.B) { benchKeys(b, benchState(b)) }

// benchKeys types characters into s and draws a 200×50 frame after each.
func benchKeys(b *testing.B, s *state) {
	f := screen.NewFrame(200, 50)
	r := screen.NewRenderer(screen.RendererOptions{})
	s.view(f)
	r.Render(f)
	var dec keys.Decoder
	var evs []keys.Event
	in := []byte("abcdefghijklmnopqrstuvwxyz ")
	b.ReportAllocs()
	var bytes int
	for i := 0; b.Loop(); i++ {
		if i%150 == 149 {
			s.comp.reset() // keep the composer on one or two rows
		}
		evs = dec.Feed(evs[:0], in[i%len(in):i%len(in)+1])
		for _, ev := range evs {
			s.key(ev)
		}
		s.view(f)
		bytes += len(r.Render(f))
	}
	b.ReportMetric(float64(bytes)/float64(b.N), "bytes/key")
}

// BenchmarkDecodeToAction is key bytes to an action: the decoder and the
// matcher of the focused contexts.
func BenchmarkDecodeToAction(b *testing.B) {
	s := benchState(b)
	var dec keys.Decoder
	var evs []keys.Event
	in := []byte("\x1b[A")
	b.ReportAllocs()
	now := time.Now()
	for b.Loop() {
		evs = dec.Feed(evs[:0], in)
		for _, ev := range evs {
			if m := s.matcher.Press(now, ev.Stroke, s.contexts()...); m.Outcome != keys.Matched {
				b.Fatal(m)
			}
		}
	}
}

// BenchmarkHistorySearch1000 types one character into a history search
// over 1000 stored prompts (the filter and the frame).
func BenchmarkHistorySearch1000(b *testing.B) {
	s := newState(nil, time.Now)
	s.session = &fakeSession{}
	for i := range MaxHistoryPrompts {
		s.histLoaded = append(s.histLoaded, HistoryPrompt{Text: fmt.Sprintf("prompt number %d about the build", i), Session: "x", Workspace: "/w"})
	}
	s.openHistorySearch()
	s.listAction(s.top(), keys.ActCycleScope)
	s.listAction(s.top(), keys.ActCycleScope)
	f := screen.NewFrame(200, 50)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		l := s.top()
		l.query = append(l.query[:0], []rune("build 9")...)
		l.query = l.query[:1+i%7]
		l.filter()
		s.view(f)
	}
}
