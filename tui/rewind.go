package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"agent/agent"
	"agent/tui/keys"
)

// /rewind (docs/reference/runtime.md, "Checkpoints and /rewind"): a
// list-picker of the checkpoints, newest first (the prompt, the time, the
// files changed with their counts), then a menu-select of what to
// restore: code and conversation, conversation only (the default), code
// only. Restoring code never overwrites a file changed since; restoring
// the conversation switches to a fork of the session and puts the
// checkpoint's prompt back in the composer.

// RewindRequest is what /rewind restores.
type RewindRequest struct {
	Checkpoint         int
	Code, Conversation bool
}

// RewindResult is what a rewind did: the code restore's report, and for
// the conversation the forked session and the prompt to type again.
type RewindResult struct {
	Report   string
	Switched *Switched
	Prompt   string
	// Old is the session the conversation was forked from.
	Old string
}

var rewindChoices = []struct {
	label, help        string
	code, conversation bool
}{
	{"Code and conversation", "restore the files and fork the conversation", true, true},
	{"Conversation only", "fork the conversation; the files stay as they are", false, true},
	{"Code only", "restore the files; the conversation goes on", true, false},
}

func (s *state) openRewind() {
	if s.hooks.Checkpoints == nil || s.hooks.Rewind == nil {
		s.unavailable("/rewind")
		return
	}
	if s.busy {
		s.notice("A turn is running: wait for it to end, or abort it, then /rewind.")
		return
	}
	cps := s.hooks.Checkpoints()
	l := &listScreen{ctx: keys.ListPicker, title: "Rewind to a checkpoint (the state before its prompt)", empty: "No checkpoint yet: every prompt you send opens one."}
	for i := len(cps) - 1; i >= 0; i-- {
		cp := cps[i]
		l.items = append(l.items, listItem{id: fmt.Sprint(cp.Turn), label: cp.Prompt, detail: checkpointDetail(cp)})
	}
	l.do = func(s *state, l *listScreen, a keys.Action) {
		if a != keys.ActSelect || len(l.items) == 0 {
			return
		}
		s.openRewindMenu(cps, len(cps)-1-l.sel)
	}
	s.push(l)
}

// checkpointDetail is a checkpoint's time and files on one line.
func checkpointDetail(cp agent.Checkpoint) string {
	d := cp.Time.Local().Format(time.TimeOnly)
	if len(cp.Files) == 0 {
		return d + "  no file changes"
	}
	var parts []string
	for _, f := range cp.Files {
		parts = append(parts, fmt.Sprintf("%s +%d -%d", baseName(f.Path), f.Added, f.Removed))
	}
	return d + "  " + strings.Join(parts, ", ")
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// openRewindMenu asks what to restore to checkpoint cps[i], saying which
// files a code restore covers and what it cannot restore.
func (s *state) openRewindMenu(cps []agent.Checkpoint, i int) {
	cp := cps[i]
	var files, unsaved []string
	seen := map[string]bool{}
	for _, later := range cps[i:] {
		for _, f := range later.Files {
			if seen[f.Path] {
				continue
			}
			seen[f.Path] = true
			files = append(files, baseName(f.Path))
			if f.NotSaved != "" {
				unsaved = append(unsaved, baseName(f.Path)+" ("+f.NotSaved+")")
			}
		}
	}
	note := "No file was changed by Write or Edit since then."
	if len(files) > 0 {
		note = "Code: " + strings.Join(files, ", ") + "."
	}
	note += " Changes made by Bash commands are not restored."
	if len(unsaved) > 0 {
		note += " Not saved, so not restorable: " + strings.Join(unsaved, ", ") + "."
	}
	l := &listScreen{ctx: keys.MenuSelect, title: "Rewind to before: " + firstLine(cp.Prompt), note: note, sel: 1}
	for _, c := range rewindChoices {
		l.items = append(l.items, listItem{label: c.label, detail: c.help})
	}
	l.do = func(s *state, l *listScreen, a keys.Action) {
		if a != keys.ActSelect {
			return
		}
		c := rewindChoices[l.sel]
		req := RewindRequest{Checkpoint: cp.Turn, Code: c.code, Conversation: c.conversation}
		l.note = "rewinding…"
		s.async(func(ctx context.Context) func() {
			res, err := s.hooks.Rewind(ctx, req)
			return func() {
				if err != nil {
					l.note = "Could not rewind: " + err.Error()
					return
				}
				s.closeAll()
				s.rewound(req, res)
			}
		})
	}
	s.push(l)
}

// rewound shows a rewind's outcome: the forked conversation with the
// prompt back in the composer, and the code restore's report.
func (s *state) rewound(req RewindRequest, res RewindResult) {
	if res.Switched != nil {
		s.switchTo(*res.Switched)
		s.entries = s.entries[:max(len(s.entries)-1, 0)] // switchTo's "Resumed" line
		s.notice(fmt.Sprintf("Rewound the conversation to before checkpoint %d: this is a new session; the previous one is %s (/resume). Its prompt is back in the composer.", req.Checkpoint, res.Old))
		s.comp.set(res.Prompt)
		s.composerChanged()
	}
	if res.Report != "" {
		s.output("Code restored to checkpoint " + fmt.Sprint(req.Checkpoint) + ":\n" + res.Report)
	}
}
