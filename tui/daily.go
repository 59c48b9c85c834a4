package tui

import (
	"fmt"
	"time"

	"agent/agent"
	"agent/agent/tools"
	"agent/tui/screen"
)

// The daily loop's parts of the UI (docs/reference/runtime.md, "The todo
// list", "Bash"; docs/reference/keybindings.md, "Which context handles a
// key"): the todo panel above the composer with the in-progress item in
// the spinner, a running command's last lines with its elapsed time, and
// the composer's @path completion (mention.go) and editor (editor.go).

// dailyUI is the state of those parts; only the loop touches it.
type dailyUI struct {
	todos []tools.Todo
	files *fileIndex // @path completion's workspace files (mention.go)
	// editing: the prompt is open in the external editor; the UI waits.
	editing bool
}

// Bounds of the todo panel and a running command's view.
const (
	todoRows = 5
	liveRows = 5
)

// todoLines is the todo panel: shown while any item is open, at most five
// rows, the window starting just before the first open item, "+N more"
// for the rest.
func (s *state) todoLines(w int) []screen.Line {
	list := s.daily.todos
	if !tools.TodoOpen(list) {
		return nil
	}
	start := 0
	for i, it := range list {
		if it.Status != tools.TodoCompleted {
			start = max(i-1, 0)
			break
		}
	}
	n := min(len(list), todoRows)
	if len(list) > todoRows {
		n = todoRows - 1
	}
	start = min(start, len(list)-n)
	var out []screen.Line
	for _, it := range list[start : start+n] {
		mark, st := "○ ", screen.Style{}
		switch it.Status {
		case tools.TodoCompleted:
			mark, st = "✔ ", s.th.dim
		case tools.TodoInProgress:
			mark, st = "▸ ", s.th.user
		}
		out = append(out, truncLine(screen.Line{{Text: " " + mark, Style: st}, {Text: screen.SanitizeLine(it.Content), Style: st}}, w))
	}
	if hidden := len(list) - n; hidden > 0 {
		out = append(out, screen.Line{{Text: fmt.Sprintf("   … +%d more (/todos)", hidden), Style: s.th.dim}})
	}
	return out
}

// activeForm is the in-progress item's activeForm, for the spinner.
func (s *state) activeForm() string {
	for _, it := range s.daily.todos {
		if it.Status == tools.TodoInProgress {
			return it.ActiveForm
		}
	}
	return ""
}

// toolOutput shows a running call's last lines; a view that arrives
// after the call ended is dropped.
func (s *state) toolOutput(ev agent.Event) {
	if ev.Tool == nil {
		return
	}
	for i := len(s.entries) - 1; i >= 0; i-- {
		e := s.entries[i]
		if e.kind == entTool && e.tool.callID == ev.Tool.CallID {
			if !e.tool.done {
				e.tool.live = ev.Text
				e.changed()
			}
			return
		}
	}
}

// runningLines are a running call's lines under its head: its elapsed
// time, then its output's last lines; when it ends they give way to the
// collapsed result.
func (s *state) runningLines(t *toolEntry, w int) []screen.Line {
	elapsed := s.now().Sub(t.started).Truncate(time.Second)
	out := []screen.Line{{{Text: "  ⎿ running… " + elapsed.String(), Style: s.th.dim}}}
	if t.live == "" {
		return out
	}
	lines := screen.Clip(t.live, w, s.th.dim)
	if len(lines) > liveRows {
		lines = lines[len(lines)-liveRows:]
	}
	return append(out, indent(indent(lines))...)
}

// refreshRunning lays out again the running calls whose elapsed second
// changed.
func (s *state) refreshRunning(now time.Time) {
	for i := len(s.entries) - 1; i >= 0 && i >= len(s.entries)-8; i-- {
		e := s.entries[i]
		if e.kind != entTool || e.tool.done {
			continue
		}
		if now.Sub(e.tool.started)/time.Second != e.tool.shownElapsed {
			e.tool.shownElapsed = now.Sub(e.tool.started) / time.Second
			e.changed()
			s.dirty = true
		}
	}
}
