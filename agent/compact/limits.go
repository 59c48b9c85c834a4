package compact

// Limits are a model's context window and the longest answer it writes,
// in tokens. A zero Window is unknown: no proactive compaction, only the
// reactive path (docs/reference/runtime.md, "Context management").
type Limits struct {
	Window    int
	MaxOutput int
}

// Known reports whether the window is known.
func (l Limits) Known() bool { return l.Window > 0 }

// Reserve is what a request leaves free of the window for the answer and
// for the error of the estimate: min(maxOutput, 20000) plus max(13000, 5%
// of the window). An unknown maximum answer counts as 20000.
func Reserve(l Limits) int {
	out := l.MaxOutput
	if out <= 0 || out > 20000 {
		out = 20000
	}
	return out + max(13000, l.Window/20)
}

// Threshold is the estimate above which a request is compacted first:
// window − reserve, never below half the window; at, when set (a
// fraction from 0.5 to 0.95, the autoCompactAt setting), only lowers it.
// It is 0 when the window is unknown.
func Threshold(l Limits, at float64) int {
	if l.Window <= 0 {
		return 0
	}
	t := max(l.Window-Reserve(l), l.Window/2)
	if at >= 0.5 && at <= 0.95 {
		t = min(t, int(at*float64(l.Window)))
	}
	return t
}
