package agent

// What a session keeps besides its conversation for the daily loop
// (docs/reference/runtime.md, "The todo list", "Checkpoints and /rewind",
// "Permission prompts"): the todo list, the checkpoints and the usage per
// turn, carried across compactions in the boundary record and restored on
// resume; and the steps around a tool call that serve them.

import (
	"context"
	"encoding/json"
	"strings"

	"agent/agent/tools"
	"agent/providers"
)

// dailyRecord is the daily state a compaction boundary carries.
type dailyRecord struct {
	Todos       []tools.Todo     `json:"todos,omitempty"`
	Checkpoints *checkpointIndex `json:"checkpoints,omitempty"`
	// Usage is the usage of every turn so far, by provider and model.
	Usage []ModelUsage `json:"usage,omitempty"`
}

// dailyLoaded is the daily state read back from a transcript.
type dailyLoaded struct {
	checkpoints checkpointIndex
	costs       costLedger
}

// startDaily takes the state a boundary carried.
func (l *Loaded) startDaily(d *dailyRecord) {
	if d == nil {
		return
	}
	l.Todos = d.Todos
	if d.Checkpoints != nil {
		l.daily.checkpoints = d.Checkpoints.clone()
	}
	l.daily.costs.earlier = append([]ModelUsage(nil), d.Usage...)
}

// readDaily applies a record of the daily state; a record that does not
// decode is skipped like a torn line.
func (l *Loaded) readDaily(typ string, line []byte) {
	switch typ {
	case "todos":
		var r todosRecord
		if json.Unmarshal(line, &r) == nil {
			l.Todos = r.Todos
		}
	case "checkpoint":
		var r checkpointRecord
		if json.Unmarshal(line, &r) == nil {
			n, _ := turnNumber(r.Turn)
			l.daily.checkpoints.open(Checkpoint{Turn: n, TurnID: r.Turn, Prompt: r.Prompt, Time: r.Time})
		}
	case "file":
		var r fileRecord
		if json.Unmarshal(line, &r) == nil && r.Path != "" {
			l.daily.checkpoints.change(r.Turn, r.FileChange)
		}
	case "usage":
		var r agentUsageRecord
		if json.Unmarshal(line, &r) == nil && r.Usage != nil {
			l.daily.costs.add(TurnCost{Turn: r.Turn, Agent: r.Agent, Provider: r.Provider, Model: r.Model, Usage: r.Usage.usage()})
		}
	case "restore":
		var r restoreRecord
		if json.Unmarshal(line, &r) == nil {
			if l.daily.checkpoints.Last == nil {
				l.daily.checkpoints.Last = map[string]string{}
			}
			for p, h := range r.Files {
				l.daily.checkpoints.Last[p] = h
			}
		}
	}
}

// Checkpoints are a stored session's checkpoints, oldest first.
func (l *Loaded) Checkpoints() []Checkpoint { return l.daily.checkpoints.clone().Checkpoints }

// dailySnapshot is the state a boundary record carries.
func (s *Session) dailySnapshot() *dailyRecord {
	d := &dailyRecord{Todos: s.Todos(), Usage: s.cost.byModel()}
	s.cp.mu.Lock()
	if len(s.cp.idx.Checkpoints) > 0 || len(s.cp.idx.Last) > 0 {
		idx := s.cp.idx.clone()
		d.Checkpoints = &idx
	}
	s.cp.mu.Unlock()
	return d
}

// initDaily sets up a new session's daily state: TodoWrite and the list a
// compaction keeps, the checkpoints' folder beside the transcript, and
// what a resumed transcript carried.
func (s *Session) initDaily() {
	if s.opts.TodoWrite {
		s.opts.Tools = append(s.opts.Tools[:len(s.opts.Tools):len(s.opts.Tools)], tools.NewTodoWrite(todoStore{s}))
		if s.opts.Context.Todos == nil {
			s.opts.Context.Todos = s.openTodos
		}
	}
	if tr := s.opts.Transcript; tr != nil {
		s.cp.dir = strings.TrimSuffix(tr.Path(), ".jsonl")
	}
	if l := s.opts.Resumed; l != nil {
		s.td.list = append([]tools.Todo(nil), l.Todos...)
		s.cp.idx = l.daily.checkpoints.clone()
		s.cost.earlier = append([]ModelUsage(nil), l.daily.costs.earlier...)
		s.cost.turns = append([]TurnCost(nil), l.daily.costs.turns...)
	}
}

// execute runs an allowed call: the file's content is saved first for the
// checkpoint, a command's output streams to the front ends while it runs
// (docs/reference/runtime.md, "Bash").
func (s *Session) execute(ctx context.Context, t *Turn, tool tools.Tool, target tools.Target, c providers.ToolCall) tools.Result {
	spec := tool.Spec()
	s.beforeChange(t, spec, target)
	turnID := ""
	if t != nil {
		turnID = t.ID
	}
	live := s.newLiveOutput(turnID, c)
	r := tool.Run(tools.WithOutput(ctx, live.write), c.Arguments)
	live.stop()
	s.afterChange(t, spec, target, r)
	return r
}

// preview is what a call will do, for its permission prompt.
func (s *Session) preview(c providers.ToolCall) *tools.Preview {
	pv, ok := s.findTool(c.Name).(tools.Previewer)
	if !ok {
		return nil
	}
	p, ok := pv.Preview(c.Arguments)
	if !ok {
		return nil
	}
	return &p
}

// answerRules are the rules "allow for this session" and "allow for this
// project" record: the checker's generalisation when it has one (a
// guarded call keeps its exact rule), else the suggested rule.
func (s *Session) answerRules(spec tools.Spec, target tools.Target, v Verdict) []string {
	if g, ok := s.opts.Permissions.(interface {
		Generalise(tools.Spec, tools.Target) []string
	}); ok && !v.Guarded {
		if rules := g.Generalise(spec, target); len(rules) > 0 {
			return rules
		}
	}
	if v.Suggest == "" {
		return nil
	}
	return []string{v.Suggest}
}
