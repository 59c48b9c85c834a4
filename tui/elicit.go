package tui

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"agent/internal/elicit"
	"agent/tui/keys"
)

// MCP servers' questions (elicitation; docs/reference/mcp.md,
// "Elicitation"), asked with the prompt screens the UI has: first the
// server's message with the choice to answer or decline, then one screen
// per field (a text prompt for text and numbers, masked for secrets; a
// confirm prompt for yes/no; a menu for a choice; a multi-select for
// several), then the answers to review: send, change them, or decline.
// Escape on a text prompt or a menu, and Ctrl-C on any of the screens,
// cancel. A URL is shown in full with its host, and opened only if the
// user says yes. One question is asked at a time; at most maxElicits wait.

// maxElicits bounds the questions open at once (a server that asks many
// gets the rest cancelled).
const maxElicits = 4

// elicitRun is one question being asked.
type elicitRun struct {
	req    elicit.Request
	ctx    context.Context
	reply  chan elicit.Result // buffered: the loop never blocks on it
	values map[string]any
	field  int    // the field on screen; len(fields) is the review
	err    string // why the last answer to it was refused
	typed  string // that answer, shown again to be corrected
	// The screen showing it, one of the three.
	confirm *confirmPrompt
	text    *textPrompt
	list    *listScreen
	done    bool
}

// Elicit asks the user an MCP server's question (agent.Elicitor): it waits
// for the answer, or for ctx (the server gave up), which withdraws the
// question.
func (a *App) Elicit(ctx context.Context, req elicit.Request) (elicit.Result, error) {
	r := &elicitRun{req: req, ctx: ctx, reply: make(chan elicit.Result, 1), values: map[string]any{}}
	if !a.post(func() { a.st.askElicit(r) }) {
		return elicit.Result{Action: elicit.Cancel}, ErrExit
	}
	select {
	case res := <-r.reply:
		return res, nil
	case <-ctx.Done():
		a.post(func() { a.st.withdrawElicits() })
		return elicit.Result{Action: elicit.Cancel}, ctx.Err()
	case <-a.cmdCtx.Done():
		return elicit.Result{Action: elicit.Cancel}, ErrExit
	}
}

func (s *state) askElicit(r *elicitRun) {
	if len(s.elicits) >= maxElicits {
		s.notice(fmt.Sprintf("MCP server %s asked a question while %d others wait; it was cancelled.", r.req.Server, maxElicits))
		r.reply <- elicit.Result{Action: elicit.Cancel}
		return
	}
	s.elicits = append(s.elicits, r)
	s.resumeElicit()
	s.dirty = true
}

// resumeElicit shows the first question when the screen is free: one that
// came while another dialog was open (a sign-in question, a text prompt)
// waits for it to close, and one whose screen another dialog took comes
// back where it was when that dialog closes.
func (s *state) resumeElicit() {
	if len(s.elicits) == 0 || s.confirm != nil || s.textPrompt != nil {
		return
	}
	r := s.elicits[0]
	switch {
	case r.confirm != nil:
		s.confirm = r.confirm
	case r.text != nil:
		s.textPrompt = r.text
	case r.list != nil:
		return // a list is a screen of its own, still there
	default:
		s.elicitIntro(r)
	}
	s.dirty = true
}

// onScreen reports whether one of r's screens is the one shown.
func (r *elicitRun) onScreen(s *state) bool {
	return r.confirm != nil && s.confirm == r.confirm || r.text != nil && s.textPrompt == r.text || r.list != nil && s.top() == r.list
}

// clear removes r's screen.
func (s *state) clearElicit(r *elicitRun) {
	if r.confirm != nil && s.confirm == r.confirm {
		s.confirm = nil
	}
	if r.text != nil && s.textPrompt == r.text {
		s.textPrompt = nil
	}
	if r.list != nil {
		s.popScreen(r.list)
	}
	r.confirm, r.text, r.list = nil, nil, nil
	s.dirty = true
}

// finishElicit answers r and asks the next question.
func (s *state) finishElicit(r *elicitRun, res elicit.Result) {
	if r.done {
		return
	}
	r.done = true
	s.clearElicit(r)
	r.reply <- res
	if i := slices.Index(s.elicits, r); i >= 0 {
		s.elicits = slices.Delete(s.elicits, i, i+1)
	}
	if res.Action != elicit.Accept {
		s.notice(fmt.Sprintf("MCP server %s's question: %s.", r.req.Server, map[elicit.Action]string{elicit.Decline: "declined", elicit.Cancel: "cancelled"}[res.Action]))
	}
	s.resumeElicit()
}

// withdrawElicits drops the questions whose server gave up.
func (s *state) withdrawElicits() {
	for _, r := range slices.Clone(s.elicits) {
		if r.ctx.Err() != nil {
			s.finishElicit(r, elicit.Result{Action: elicit.Cancel})
		}
	}
}

func (s *state) showConfirm(r *elicitRun, title, question string, yes bool, reply func(bool)) {
	s.clearElicit(r)
	r.confirm = &confirmPrompt{title: title, question: question, yes: yes, reply: reply,
		cancel: func() { s.finishElicit(r, elicit.Result{Action: elicit.Cancel}) }}
	s.confirm = r.confirm
	s.matcher.Cancel()
}

func (s *state) elicitIntro(r *elicitRun) {
	if r.req.Mode == elicit.ModeURL {
		s.elicitURL(r)
		return
	}
	q := r.req.Message
	if n := len(r.req.Form.Fields); n > 0 {
		q += fmt.Sprintf("\n\nYes: answer (%d %s). No: decline. Ctrl-C: cancel.", n, plural(n, "question", "questions"))
	} else {
		q += "\n\nYes: accept. No: decline. Ctrl-C: cancel."
	}
	s.showConfirm(r, "MCP server "+r.req.Server+" asks", q, true, func(yes bool) {
		r.confirm = nil
		if !yes {
			s.finishElicit(r, elicit.Result{Action: elicit.Decline})
			return
		}
		r.field = 0
		s.elicitField(r)
	})
}

// isASCII reports whether s is plain ASCII: a host that is not (Cyrillic
// letters, direction marks) may look like another site's, as a punycode
// one (xn--) may.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// elicitURL shows the URL in full with its host, and opens it only on yes
// (2025-11-25 client/elicitation "Safe URL Handling").
func (s *state) elicitURL(r *elicitRun) {
	host := ""
	if u, err := url.Parse(r.req.URL); err == nil {
		host = u.Hostname()
	}
	q := r.req.Message + "\n\n" + r.req.URL + "\n\nSite: " + host
	if strings.Contains(host, "xn--") || !isASCII(host) {
		q += " (an internationalised name: it may imitate another site's)"
	}
	q += "\n\nOpen it in your browser? No declines; Ctrl-C cancels."
	s.showConfirm(r, "MCP server "+r.req.Server+" asks you to open a web page", q, false, func(yes bool) {
		r.confirm = nil
		if !yes {
			s.finishElicit(r, elicit.Result{Action: elicit.Decline})
			return
		}
		link := r.req.URL
		switch {
		case s.hooks.OpenURL == nil:
			s.notice("Open this address in your browser: " + link)
		default:
			open := s.hooks.OpenURL
			s.async(func(ctx context.Context) func() {
				if err := open(ctx, link); err != nil {
					return func() {
						s.notice(fmt.Sprintf("The browser was not opened (%v); open this address yourself: %s", err, link))
					}
				}
				return nil
			})
		}
		s.finishElicit(r, elicit.Result{Action: elicit.Accept})
	})
}

// elicitField asks field r.field, or shows the review after the last.
func (s *state) elicitField(r *elicitRun) {
	fields := r.req.Form.Fields
	if r.field >= len(fields) {
		s.elicitReview(r)
		return
	}
	f := &fields[r.field]
	title := fmt.Sprintf("%s asks (%d/%d): %s", r.req.Server, r.field+1, len(fields), f.Label())
	if f.Required {
		title += " (required)"
	}
	detail := f.Description
	if r.err != "" {
		detail = strings.TrimSpace(r.err + "\n" + detail)
	}
	cur, has := r.values[f.Name]
	if !has && f.Default != nil {
		cur, has = f.Default, true
	}
	next := func(v any, set bool) {
		if set {
			r.values[f.Name] = v
		} else {
			delete(r.values, f.Name)
		}
		r.err = ""
		r.field++
		s.elicitField(r)
	}
	switch f.Kind {
	case elicit.Boolean:
		yes, _ := cur.(bool)
		s.showConfirm(r, title, strings.TrimSpace(r.req.Message+"\n\n"+detail), yes, func(y bool) { r.confirm = nil; next(y, true) })
	case elicit.Choice, elicit.MultiChoice:
		s.elicitChoice(r, f, title, detail, cur, next)
	default:
		s.clearElicit(r)
		if f.Format != "" {
			title += " — " + f.Format
		}
		t := &textPrompt{title: title, detail: detail, masked: f.Secret}
		switch {
		case r.err != "":
			t.buf = []rune(r.typed)
		case has && f.Secret:
			// Edited from its value, never its bullets; writeOnly makes a
			// number secret too.
			t.buf = []rune(fmt.Sprint(cur))
		case has:
			t.buf = []rune(f.Show(cur))
		}
		t.reply = func(text string, ok bool) {
			r.typed = text
			r.text = nil
			if !ok {
				s.finishElicit(r, elicit.Result{Action: elicit.Cancel})
				return
			}
			if strings.TrimSpace(text) == "" {
				if !f.Required {
					next(nil, false)
					return
				}
				r.err = f.Label() + " is required"
				s.elicitField(r)
				return
			}
			v, err := f.Parse(text)
			if err != nil {
				r.err = err.Error()
				s.elicitField(r)
				return
			}
			next(v, true)
		}
		r.text = t
		s.textPrompt = t
		s.matcher.Cancel()
	}
}

// elicitChoice asks a choice on a menu, several on a multi-select.
func (s *state) elicitChoice(r *elicitRun, f *elicit.Field, title, detail string, cur any, next func(any, bool)) {
	s.clearElicit(r)
	l := &listScreen{ctx: keys.MenuSelect, title: title, header: detail}
	if f.Kind == elicit.MultiChoice {
		l.ctx = keys.MultiSelect
		l.note = "Space toggles; Enter confirms"
	}
	chosen, _ := cur.([]string)
	for _, o := range f.Options {
		it := listItem{id: o.Value, label: o.Title, on: slices.Contains(chosen, o.Value)}
		if o.Title != o.Value {
			it.detail = o.Value
		}
		l.items = append(l.items, it)
		if v, ok := cur.(string); ok && v == o.Value {
			l.sel = len(l.items) - 1
		}
	}
	if f.Kind == elicit.Choice && !f.Required {
		l.items = append(l.items, listItem{label: "(no answer)"})
	}
	l.do = func(s *state, l *listScreen, a keys.Action) {
		switch {
		case a == keys.ActToggle && l.ctx == keys.MultiSelect && l.sel < len(l.items):
			l.items[l.sel].on = !l.items[l.sel].on
		case a == keys.ActConfirm && l.ctx == keys.MultiSelect:
			vs := []string{}
			for _, it := range l.items {
				if it.on {
					vs = append(vs, it.id)
				}
			}
			if err := f.Check(vs); err != nil {
				l.note = err.Error()
				return
			}
			r.list = nil
			s.popScreen(l)
			next(vs, true)
		case a == keys.ActSelect && l.ctx == keys.MenuSelect && l.sel < len(l.items):
			it := l.items[l.sel]
			r.list = nil
			s.popScreen(l)
			next(it.id, it.id != "" || f.Required)
		}
	}
	l.closed = func(s *state, l *listScreen) {
		r.list = nil
		s.finishElicit(r, elicit.Result{Action: elicit.Cancel})
	}
	r.list = l
	s.push(l)
}

// elicitReview shows the answers (secrets as bullets) with the choice to
// send them, change them or decline.
func (s *state) elicitReview(r *elicitRun) {
	s.clearElicit(r)
	var b strings.Builder
	b.WriteString(r.req.Message + "\n")
	for i := range r.req.Form.Fields {
		f := &r.req.Form.Fields[i]
		v, ok := r.values[f.Name]
		shown := "(no answer)"
		if ok {
			shown = f.Show(v)
		}
		fmt.Fprintf(&b, "\n  %s: %s", f.Label(), shown)
	}
	l := &listScreen{ctx: keys.MenuSelect, title: "Send these answers to MCP server " + r.req.Server + "?", header: b.String(),
		items: []listItem{{id: "send", label: "Send"}, {id: "change", label: "Change the answers"}, {id: "decline", label: "Decline"}}}
	if err := r.req.Form.Validate(r.values); err != nil {
		l.note = err.Error()
	}
	l.do = func(s *state, l *listScreen, a keys.Action) {
		it, ok := l.current()
		if a != keys.ActSelect || !ok {
			return
		}
		r.list = nil
		s.popScreen(l)
		switch it.id {
		case "send":
			if err := r.req.Form.Validate(r.values); err != nil {
				s.elicitReview(r)
				return
			}
			content := make(map[string]any, len(r.values))
			for k, v := range r.values {
				content[k] = v
			}
			s.finishElicit(r, elicit.Result{Action: elicit.Accept, Content: content})
		case "change":
			r.field = 0
			s.elicitField(r)
		default:
			s.finishElicit(r, elicit.Result{Action: elicit.Decline})
		}
	}
	l.closed = func(s *state, l *listScreen) {
		r.list = nil
		s.finishElicit(r, elicit.Result{Action: elicit.Cancel})
	}
	r.list = l
	s.push(l)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
