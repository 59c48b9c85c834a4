package agent

// The todo list (docs/reference/runtime.md, "The todo list"): TodoWrite
// (agent/tools/todo.go) replaces the session's list; the list is shown by
// the front ends (an EventTodos per change), recorded in the transcript
// (a "todos" record, and in every compaction boundary), restored on
// resume, and carried across a compaction while any item is open.

import (
	"sync"

	"agent/agent/tools"
)

// todoState is a session's todo list; its own lock, so that readers never
// wait for the session's.
type todoState struct {
	mu   sync.Mutex
	list []tools.Todo
}

// todoStore is the session as TodoWrite's store.
type todoStore struct{ s *Session }

func (t todoStore) SetTodos(list []tools.Todo) { t.s.setTodos(list) }

func (s *Session) setTodos(list []tools.Todo) {
	list = append([]tools.Todo(nil), list...)
	s.td.mu.Lock()
	s.td.list = list
	s.td.mu.Unlock()
	if s.opts.Transcript != nil {
		if err := s.opts.Transcript.write(todosRecord{Type: "todos", Todos: list}); err != nil {
			s.log.Warn("transcript", "err", err)
		}
	}
	s.emit(Event{Kind: EventTodos, Todos: list})
}

// Todos returns a copy of the session's todo list.
func (s *Session) Todos() []tools.Todo {
	s.td.mu.Lock()
	defer s.td.mu.Unlock()
	return append([]tools.Todo(nil), s.td.list...)
}

// openTodos is the list a compaction keeps: the whole list while any item
// is open, else nothing.
func (s *Session) openTodos() string {
	list := s.Todos()
	if !tools.TodoOpen(list) {
		return ""
	}
	return tools.TodoText(list)
}

// todosRecord is a change of the list in the transcript.
type todosRecord struct {
	Type  string       `json:"type"` // "todos"
	Todos []tools.Todo `json:"todos"`
}

// TodosCommand is /todos: the list, or a line saying there is none.
func (s *Session) TodosCommand() string {
	list := s.Todos()
	if len(list) == 0 {
		return "There is no todo list in this session (the model keeps one with TodoWrite).\n"
	}
	return tools.TodoText(list)
}
