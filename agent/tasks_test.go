package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestTasksRegistry(t *testing.T) {
	clock := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	r := &Tasks{now: func() time.Time { return clock }}
	a := r.Start("github.search")
	b := r.Start("db.query")
	clock = clock.Add(time.Second)
	r.Finish(a, false, "three results")
	r.Finish(b, true, strings.Repeat("x", maxTaskResult+10))
	r.Finish(b, false, "ignored: a task ends once")
	l := r.List()
	if len(l) != 2 || l[0].ID != b || l[1].ID != a {
		t.Fatalf("list %+v", l)
	}
	if l[1].State != TaskFinished || l[1].Result != "three results" || !l[1].Ended.Equal(clock) {
		t.Fatalf("a: %+v", l[1])
	}
	if l[0].State != TaskFailed || len(l[0].Result) > maxTaskResult+64 || !strings.HasSuffix(l[0].Result, "cut at 64 KiB]") {
		t.Fatalf("b: %s %d", l[0].State, len(l[0].Result))
	}
	if _, ok := r.Get(99); ok {
		t.Fatal("Get(99) found a task")
	}
	var nilTasks *Tasks
	if nilTasks.List() != nil {
		t.Fatal("nil registry lists tasks")
	}
}

// The registry keeps every running task and drops the oldest finished
// ones beyond the bound.
func TestTasksBounded(t *testing.T) {
	r := &Tasks{}
	running := r.Start("slow")
	for i := range maxTasks * 2 {
		id := r.Start(fmt.Sprint("t", i))
		r.Finish(id, false, "ok")
	}
	l := r.List()
	if len(l) != maxTasks {
		t.Fatalf("%d tasks kept", len(l))
	}
	if ti, ok := r.Get(running); !ok || ti.State != TaskRunning {
		t.Fatalf("the running task was dropped: %+v %v", ti, ok)
	}
}
