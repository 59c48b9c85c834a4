package agent

import (
	"sync"
	"time"
)

// TaskState is where a background task is.
type TaskState string

// The states of a background task.
const (
	TaskRunning  TaskState = "running"
	TaskFinished TaskState = "finished"
	TaskFailed   TaskState = "failed"
)

// Bounds of the registry: a session can hand off many calls, and a result
// can be large; the list and each result are capped (every byte from
// outside is bounded; docs/reference/runtime.md, "MCP tools and background
// tasks").
const (
	maxTasks      = 64
	maxTaskResult = 64 << 10
)

// TaskInfo is one background task: a tool call handed off after
// mcp.autoBackgroundMs (docs/reference/settings.md, "mcp"), as the terminal
// UI's background list shows it (docs/reference/keybindings.md, "Contexts":
// background-list).
type TaskInfo struct {
	ID      int
	Tool    string
	Started time.Time
	Ended   time.Time // zero while running
	State   TaskState
	Result  string // the result text once ended, cut at 64 KiB
}

// Tasks is a session's registry of background tasks. The zero value is
// ready; it is safe for concurrent use. It keeps every running task and
// the newest finished ones (64 in all).
type Tasks struct {
	mu    sync.Mutex
	next  int
	tasks []*TaskInfo // oldest first
	now   func() time.Time
}

func (t *Tasks) clock() time.Time {
	if t.now != nil {
		return t.now()
	}
	return time.Now()
}

// Start records a running task and returns its number (1, 2, …).
func (t *Tasks) Start(tool string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	t.tasks = append(t.tasks, &TaskInfo{ID: t.next, Tool: tool, Started: t.clock(), State: TaskRunning})
	t.trim()
	return t.next
}

// Finish records a task's end and result.
func (t *Tasks) Finish(id int, failed bool, result string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ti := range t.tasks {
		if ti.ID == id && ti.State == TaskRunning {
			ti.State, ti.Ended = TaskFinished, t.clock()
			if failed {
				ti.State = TaskFailed
			}
			if len(result) > maxTaskResult {
				result = result[:maxTaskResult] + "\n[… cut at 64 KiB]"
			}
			ti.Result = result
		}
	}
	t.trim()
}

// trim drops the oldest finished tasks beyond the bound.
func (t *Tasks) trim() {
	for len(t.tasks) > maxTasks {
		i := 0
		for i < len(t.tasks) && t.tasks[i].State == TaskRunning {
			i++
		}
		if i == len(t.tasks) {
			return // all running: they are kept
		}
		t.tasks = append(t.tasks[:i], t.tasks[i+1:]...)
	}
}

// List returns copies of the tasks, newest first.
func (t *Tasks) List() []TaskInfo {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]TaskInfo, 0, len(t.tasks))
	for i := len(t.tasks) - 1; i >= 0; i-- {
		out = append(out, *t.tasks[i])
	}
	return out
}

// Get returns one task.
func (t *Tasks) Get(id int) (TaskInfo, bool) {
	if t == nil {
		return TaskInfo{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ti := range t.tasks {
		if ti.ID == id {
			return *ti, true
		}
	}
	return TaskInfo{}, false
}
