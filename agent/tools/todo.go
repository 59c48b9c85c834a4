package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// The todo list (docs/reference/runtime.md, "The todo list"): TodoWrite
// replaces the whole list with Claude Code's schema; the list itself lives
// in the session, which the tool tells through a TodoStore.

// Todo statuses.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
)

// MaxTodos bounds a todo list.
const MaxTodos = 100

// maxTodoText bounds one item's content and activeForm.
const maxTodoText = 1000

// Todo is one item of the todo list.
type Todo struct {
	Content    string `json:"content"`
	Status     string `json:"status"`
	ActiveForm string `json:"activeForm"`
}

// TodoStore keeps a session's todo list. SetTodos replaces it; it is
// called from the session's turn, one call at a time.
type TodoStore interface {
	SetTodos([]Todo)
}

const todoSchema = `{"type":"object","properties":{"todos":{"type":"array","maxItems":100,` +
	`"description":"The complete updated todo list (it replaces the previous one)","items":{"type":"object","properties":{` +
	`"content":{"type":"string","minLength":1,"maxLength":1000,"description":"What to do, in the imperative: Run the tests"},` +
	`"status":{"type":"string","enum":["pending","in_progress","completed"]},` +
	`"activeForm":{"type":"string","minLength":1,"maxLength":1000,"description":"The same in the present continuous, shown while it is in progress: Running the tests"}},` +
	`"required":["content","status","activeForm"],"additionalProperties":false}}},` +
	`"required":["todos"],"additionalProperties":false}`

// NewTodoWrite returns the TodoWrite tool over a session's list.
func NewTodoWrite(store TodoStore) Tool { return &todoTool{store: store} }

type todoTool struct{ store TodoStore }

func (t *todoTool) Spec() Spec {
	return Spec{
		Name: "TodoWrite",
		Description: "Create and update the todo list of this session: the user sees it while you work. Send the whole list " +
			"each time (it replaces the previous one): each item's content (imperative), status (pending, in_progress, completed) " +
			"and activeForm (present continuous). Keep exactly one item in_progress while you work; mark an item completed as soon as it is done.",
		Schema: json.RawMessage(todoSchema),
		Risk:   RiskInspect, // it changes nothing outside the session
	}
}

func (t *todoTool) Target(json.RawMessage) (Target, error) { return Target{}, nil }

func (t *todoTool) Run(ctx context.Context, args json.RawMessage) Result {
	list, err := ParseTodos(args)
	if err != nil {
		return errorResult("%v. The previous list is unchanged; send the whole list again.", err)
	}
	t.store.SetTodos(list)
	return Result{Content: TodoCount(list)}
}

// ParseTodos reads TodoWrite's arguments and checks what the schema
// cannot say: at most one item in progress, text on one line. The error
// says what to fix.
func ParseTodos(args json.RawMessage) ([]Todo, error) {
	var a struct {
		Todos *[]Todo `json:"todos"`
	}
	if err := decodeToolArgs(args, &a); err != nil {
		return nil, err
	}
	if a.Todos == nil {
		return nil, badArgs("todos is required (an array of {content, status, activeForm})")
	}
	list := *a.Todos
	if len(list) > MaxTodos {
		return nil, badArgs("the list has %d items; at most %d are allowed", len(list), MaxTodos)
	}
	inProgress := -1
	for i := range list {
		it := &list[i]
		it.Content, it.ActiveForm = strings.TrimSpace(it.Content), strings.TrimSpace(it.ActiveForm)
		switch {
		case it.Content == "":
			return nil, badArgs("todos[%d].content is empty", i)
		case it.ActiveForm == "":
			return nil, badArgs("todos[%d].activeForm is empty", i)
		case len(it.Content) > maxTodoText || len(it.ActiveForm) > maxTodoText:
			return nil, badArgs("todos[%d] is longer than %d bytes", i, maxTodoText)
		case strings.ContainsAny(it.Content+it.ActiveForm, "\n\r"):
			return nil, badArgs("todos[%d] holds a line break; keep each item on one line", i)
		}
		switch it.Status {
		case TodoPending, TodoCompleted:
		case TodoInProgress:
			if inProgress >= 0 {
				return nil, badArgs("todos[%d] and todos[%d] are both in_progress; keep exactly one item in_progress", inProgress, i)
			}
			inProgress = i
		default:
			return nil, badArgs("todos[%d].status is %q; use pending, in_progress or completed", i, it.Status)
		}
	}
	return list, nil
}

// TodoCount is TodoWrite's result: one line of counts, not the list.
func TodoCount(list []Todo) string {
	if len(list) == 0 {
		return "The todo list is now empty."
	}
	var done, doing int
	for _, it := range list {
		switch it.Status {
		case TodoCompleted:
			done++
		case TodoInProgress:
			doing++
		}
	}
	noun := "items"
	if len(list) == 1 {
		noun = "item"
	}
	return fmt.Sprintf("Todo list updated: %d %s (%d completed, %d in progress, %d pending).", len(list), noun, done, doing, len(list)-done-doing)
}

// TodoOpen reports whether any item is not completed.
func TodoOpen(list []Todo) bool {
	for _, it := range list {
		if it.Status != TodoCompleted {
			return true
		}
	}
	return false
}

// TodoText is the list as plain lines: "[x] done", "[>] doing", "[ ]
// pending" (/todos, and the open list a compaction keeps).
func TodoText(list []Todo) string {
	var b strings.Builder
	for _, it := range list {
		mark := "[ ]"
		switch it.Status {
		case TodoCompleted:
			mark = "[x]"
		case TodoInProgress:
			mark = "[>]"
		}
		b.WriteString(mark + " " + it.Content + "\n")
	}
	return b.String()
}
