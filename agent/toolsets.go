package agent

import (
	"context"
	"sync"
	"time"

	"agent/agent/tools"
)

// Tool groups that change while the session runs, and what a running tool
// reports (docs/reference/runtime.md, "MCP tools and background tasks").

// SetToolsBetweenTurns replaces the tools of a group like SetTools, but a
// turn that runs keeps the list it started with: the change applies when
// it ends (an MCP server's list_changed; docs/reference/mcp.md, "Lists
// that change"). Without a running turn it applies at once. Of several
// changes of one group during a turn, the last wins.
func (s *Session) SetToolsBetweenTurns(group string, ts []tools.Tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil {
		s.setToolsLocked(group, ts)
		return
	}
	if s.staged == nil {
		s.staged = map[string][]tools.Tool{}
	}
	s.staged[group] = append([]tools.Tool(nil), ts...)
}

// applyStagedLocked applies the changes staged during the turn that
// ended; s.mu is held.
func (s *Session) applyStagedLocked() {
	for group, ts := range s.staged {
		s.setToolsLocked(group, ts)
	}
	s.staged = nil
}

// progressKey carries a running call's report function in the context
// Tool.Run gets.
type progressKey struct{}

// progressEvery bounds how often one call's progress reaches the event
// stream: a server may report thousands of times a second.
const progressEvery = 100 * time.Millisecond

// progressContext gives a call's context the function through which the
// tool reports progress: each report becomes an EventToolProgress for the
// call, at most one per progressEvery. A report that comes sooner waits
// for the end of the interval, replacing any that waits already, so the
// latest is never lost; done, called when the call returns, sends what
// still waits, before the call's result.
func (s *Session) progressContext(ctx context.Context, turn string, ev *ToolEvent) (_ context.Context, done func()) {
	// Sends happen under mu, so that none follows done.
	var (
		mu      sync.Mutex
		last    time.Time
		pending string
		waiting bool
		timer   *time.Timer
		ended   bool
	)
	send := func(text string) {
		last = time.Now()
		s.emit(Event{Kind: EventToolProgress, Turn: turn, Tool: &ToolEvent{CallID: ev.CallID, Name: ev.Name, Progress: text}})
	}
	flush := func() {
		mu.Lock()
		defer mu.Unlock()
		if waiting && !ended {
			waiting = false
			send(pending)
		}
	}
	report := func(text string) {
		mu.Lock()
		defer mu.Unlock()
		switch now := time.Now(); {
		case ended:
		case !waiting && now.Sub(last) >= progressEvery:
			send(text)
		default:
			pending = text
			if !waiting {
				waiting = true
				timer = time.AfterFunc(last.Add(progressEvery).Sub(now), flush)
			}
		}
	}
	done = func() {
		mu.Lock()
		defer mu.Unlock()
		if timer != nil {
			timer.Stop()
		}
		if waiting && !ended {
			send(pending)
		}
		ended, waiting = true, false
	}
	return context.WithValue(ctx, progressKey{}, report), done
}

// ReportProgress tells the user what the tool call running in ctx is
// doing; outside a call it does nothing.
func ReportProgress(ctx context.Context, text string) {
	if f, ok := ctx.Value(progressKey{}).(func(string)); ok {
		f(text)
	}
}
