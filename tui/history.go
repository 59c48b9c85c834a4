package tui

import (
	"context"
	"time"

	"agent/tui/keys"
)

// HistoryPrompt is one prompt of a stored session (history search's
// project and all scopes).
type HistoryPrompt struct {
	Text      string
	Session   string
	Workspace string
	Time      time.Time
}

// MaxHistoryPrompts bounds the stored prompts history search loads (the
// newest ones); the History hook applies it.
const MaxHistoryPrompts = 1000

// The scopes of history search, in cycling order
// (docs/reference/keybindings.md, "Contexts": history-search).
const (
	scopeSession = iota
	scopeProject
	scopeAll
)

var scopeNames = [...]string{"this session", "this project", "all projects"}

// openHistorySearch opens the reverse search (Ctrl+R): newest first,
// starting in the session scope with what the composer holds as the
// query. The stored prompts load once, off the loop.
func (s *state) openHistorySearch() {
	l := &listScreen{ctx: keys.HistorySearch, search: true, empty: "No matching prompt."}
	l.query = append(l.query, s.comp.buf...)
	scope := scopeSession
	fill := func() {
		l.title = "History search · " + scopeNames[scope]
		l.all = s.historyItems(scope)
		l.filter()
	}
	fill()
	l.do = func(s *state, l *listScreen, a keys.Action) {
		switch a {
		case keys.ActCycleScope:
			scope = (scope + 1) % len(scopeNames)
			fill()
		case keys.ActInsert, keys.ActExecute:
			it, ok := l.current()
			if !ok {
				return
			}
			s.popScreen(l)
			s.comp.set(it.label)
			s.composerChanged()
			if a == keys.ActExecute {
				s.chatAction(keys.ActSubmit)
			}
		}
	}
	s.push(l)
	if s.hooks.History != nil && !s.histLoading && s.histLoaded == nil {
		s.histLoading = true
		s.async(func(ctx context.Context) func() {
			ps, err := s.hooks.History(ctx)
			return func() {
				s.histLoading = false
				s.histLoaded = ps
				if s.histLoaded == nil {
					s.histLoaded = []HistoryPrompt{}
				}
				if err != nil {
					l.note = "Stored prompts could not be read: " + err.Error()
				}
				if s.top() == l {
					q, sel := l.query, l.sel
					fill()
					l.query, l.sel = q, min(sel, max(len(l.items)-1, 0))
				}
			}
		})
	}
}

// historyItems are the prompts of a scope, newest first, without
// duplicates: this UI's own prompts first, then the stored ones.
func (s *state) historyItems(scope int) []listItem {
	seen := map[string]bool{}
	var out []listItem
	add := func(text, detail string) {
		if seen[text] || text == "" {
			return
		}
		seen[text] = true
		out = append(out, listItem{label: text, detail: detail})
	}
	for i := len(s.comp.history) - 1; i >= 0; i-- {
		add(s.comp.history[i], "")
	}
	for _, p := range s.histLoaded {
		switch scope {
		case scopeSession:
			if p.Session != s.status.SessionID || p.Session == "" {
				continue
			}
		case scopeProject:
			if p.Workspace != s.hooks.Workspace {
				continue
			}
		}
		d := ""
		if scope == scopeAll && p.Workspace != s.hooks.Workspace {
			d = p.Workspace
		}
		add(p.Text, d)
	}
	return out
}
