package agent

// A running command's output for the front ends (docs/reference/runtime.md,
// "Bash"): the last lines, sent at most every 50 ms (a frame rate the
// terminal can follow), whatever the command prints. Only the last 4 KiB
// are kept, so a command that prints gigabytes costs this much memory
// plus what the tool keeps for the model.

import (
	"bytes"
	"sync"
	"time"

	"agent/providers"
)

// Bounds of the live view.
const (
	liveEvery = 50 * time.Millisecond
	liveTail  = 4 << 10
	liveLines = 8
)

type liveOutput struct {
	s        *Session
	turn     string
	id, name string
	mu       sync.Mutex
	tail     []byte
	last     time.Time
	timer    *time.Timer
	stopped  bool
}

func (s *Session) newLiveOutput(turn string, c providers.ToolCall) *liveOutput {
	return &liveOutput{s: s, turn: turn, id: c.ID, name: c.Name}
}

// write takes a piece of output (the tool's goroutine).
func (l *liveOutput) write(p []byte) {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return
	}
	if len(p) >= liveTail {
		l.tail = append(l.tail[:0], p[len(p)-liveTail:]...)
	} else {
		l.tail = append(l.tail, p...)
		if len(l.tail) > 2*liveTail {
			l.tail = append(l.tail[:0], l.tail[len(l.tail)-liveTail:]...)
		}
	}
	if l.timer != nil {
		l.mu.Unlock()
		return // a view is due: it will show this too
	}
	now := time.Now()
	if wait := liveEvery - now.Sub(l.last); wait > 0 {
		l.timer = time.AfterFunc(wait, l.flush)
		l.mu.Unlock()
		return
	}
	text := l.viewLocked(now)
	l.mu.Unlock()
	l.send(text)
}

// flush sends what came since the last view (the timer).
func (l *liveOutput) flush() {
	l.mu.Lock()
	l.timer = nil
	if l.stopped {
		l.mu.Unlock()
		return
	}
	text := l.viewLocked(time.Now())
	l.mu.Unlock()
	l.send(text)
}

// viewLocked is the last lines of the output; the caller holds l.mu.
func (l *liveOutput) viewLocked(now time.Time) string {
	l.last = now
	t := l.tail
	if len(t) > liveTail {
		t = t[len(t)-liveTail:]
	}
	t = bytes.TrimRight(t, "\n")
	for i, n := len(t)-1, 0; i >= 0; i-- {
		if t[i] == '\n' {
			if n++; n == liveLines {
				t = t[i+1:]
				break
			}
		}
	}
	return string(t)
}

func (l *liveOutput) send(text string) {
	l.s.emit(Event{Kind: EventToolOutput, Turn: l.turn, Tool: &ToolEvent{CallID: l.id, Name: l.name}, Text: text})
}

// stop ends the view before the call's end is reported.
func (l *liveOutput) stop() {
	l.mu.Lock()
	l.stopped = true
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.mu.Unlock()
}
