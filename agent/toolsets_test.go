package agent

import (
	"strings"
	"testing"
	"time"
)

// progressOf is the progress texts the harness saw, in order.
func (h *harness) progressOf() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, e := range h.events {
		if e.Kind == EventToolProgress {
			out = append(out, e.Tool.Progress)
		}
	}
	return strings.Join(out, "|")
}

// A call's progress: the first report goes out at once, reports within
// the interval wait and replace each other, the one that waits goes out at
// the interval's end or when the call returns, and nothing follows the
// call's end.
func TestProgressThrottle(t *testing.T) {
	cases := []struct {
		name string
		run  func(report func(string), done func())
		want string
	}{
		{"one report", func(r func(string), d func()) { r("a"); d() }, "a"},
		{"a burst keeps its first and its last", func(r func(string), d func()) { r("a"); r("b"); r("c"); d() }, "a|c"},
		{"the waiting report goes out at the interval's end", func(r func(string), d func()) {
			r("a")
			r("b")
			time.Sleep(3 * progressEvery)
			r("c")
			d()
		}, "a|b|c"},
		{"nothing after done", func(r func(string), d func()) { r("a"); d(); r("late"); time.Sleep(2 * progressEvery) }, "a"},
		{"done twice", func(r func(string), d func()) { r("a"); r("b"); d(); d() }, "a|b"},
		{"no reports", func(r func(string), d func()) { d() }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, SessionOptions{})
			ctx, done := h.sess.progressContext(t.Context(), "t1", &ToolEvent{CallID: "c1", Name: "x"})
			c.run(func(text string) { ReportProgress(ctx, text) }, done)
			if got := h.progressOf(); got != c.want {
				t.Fatalf("progress %q, want %q", got, c.want)
			}
		})
	}
}
