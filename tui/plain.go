package tui

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"agent/agent"
	"agent/tui/screen"
)

// maxPlainLine bounds one prompt line read in the plain fallback.
const maxPlainLine = 1 << 20

// PlainOptions configure the plain fallback. In, Out and Err are
// required.
type PlainOptions struct {
	In       io.Reader // prompts, one per line
	Out      io.Writer // the answers
	Err      io.Writer // tool activity, notices and errors
	Commands CommandRunner
	// NewConversation starts a new session in place of s (/clear); nil:
	// /clear does nothing here.
	NewConversation func(ctx context.Context) (Session, error)
	// Extra lists the custom commands and skills, which Commands runs.
	Extra func() []agent.SlashCommand
}

// RunPlain is the line-oriented fallback for a stdout that is not a
// terminal or TERM=dumb (docs/reference/cli.md, "The interactive session"):
// the same session without screens. It runs prompt (when not empty), then
// each line of In as a prompt or a slash command, streaming each answer
// (sanitised) to Out and tool activity to Err, until EOF or /exit.
// Permission prompts cannot be answered here; the session denies them
// naming the rule that would allow the call. It returns 0, or 1 when the
// last turn failed; ctx ending aborts the running turn and returns ctx's
// error.
func RunPlain(ctx context.Context, s Session, opts PlainOptions, prompt string) (int, error) {
	p := &plain{opts: opts, ends: map[string]chan agent.Event{}, ended: map[string]agent.Event{}}
	unsub := s.Subscribe(p.observe)
	defer func() { unsub() }()
	code := 0
	run := func(line string) (bool, error) {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			return true, nil
		}
		if strings.TrimSpace(line) == "/clear" && opts.NewConversation != nil {
			ns, err := opts.NewConversation(ctx)
			if err != nil {
				fmt.Fprintf(p.opts.Err, "agent: /clear: %s\n", screen.SanitizeLine(err.Error()))
				return true, nil
			}
			unsub()
			s, unsub = ns, ns.Subscribe(p.observe)
			fmt.Fprintln(p.opts.Err, "agent: a new conversation (the previous one stays for --resume)")
			return true, nil
		}
		if strings.HasPrefix(line, "/") {
			return p.command(ctx, line), nil
		}
		c, err := p.turn(ctx, s, line)
		code = c
		return true, err
	}
	if prompt != "" {
		if more, err := run(prompt); err != nil || !more {
			return code, err
		}
	}
	if opts.In == nil {
		return code, nil
	}
	sc := bufio.NewScanner(opts.In)
	sc.Buffer(make([]byte, 0, 64<<10), maxPlainLine)
	for sc.Scan() {
		if more, err := run(sc.Text()); err != nil || !more {
			return code, err
		}
	}
	if err := sc.Err(); err != nil {
		return 1, fmt.Errorf("reading prompts from stdin: %w", err)
	}
	return code, nil
}

type plain struct {
	opts    PlainOptions
	mu      sync.Mutex
	ends    map[string]chan agent.Event
	ended   map[string]agent.Event // ends that came before their waiter
	midLine bool
	// texted: the running turn's answer streamed; a "!" command's turn,
	// which streams none, prints its output when it ends.
	texted bool
}

// observe prints as events arrive (from the session's goroutine, in
// order) and hands the end of a turn to its waiter.
func (p *plain) observe(ev agent.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev.Kind {
	case agent.EventTurnStart:
		p.texted = false
	case agent.EventText:
		p.texted = true
		t := screen.Sanitize(ev.Text)
		io.WriteString(p.opts.Out, t)
		if t != "" {
			p.midLine = !strings.HasSuffix(t, "\n")
		}
	case agent.EventToolStart:
		fmt.Fprintf(p.opts.Err, "agent: ⚙ %s(%s)\n", screen.SanitizeLine(ev.Tool.Name), screen.SanitizeLine(screen.TruncateEllipsis(argSummary(ev.Tool.Args), 200)))
	case agent.EventToolEnd:
		if r := ev.Tool.Result; r != nil && (r.IsError || ev.Tool.Denied) {
			fmt.Fprintf(p.opts.Err, "agent: %s: %s\n", screen.SanitizeLine(ev.Tool.Name), screen.SanitizeLine(firstLine(r.Content)))
		}
	case agent.EventBackground, agent.EventNotice:
		fmt.Fprintf(p.opts.Err, "agent: %s\n", screen.SanitizeLine(ev.Text))
	case agent.EventCompactStart:
		fmt.Fprintln(p.opts.Err, "agent: compacting the conversation…")
	case agent.EventHookFailure:
		fmt.Fprintf(p.opts.Err, "agent: hook failed: %s\n", screen.SanitizeLine(ev.Text))
	case agent.EventCompact:
		fmt.Fprintf(p.opts.Err, "agent: %s\n", screen.SanitizeLine(ev.Compact.Line()))
	case agent.EventComplete, agent.EventInterrupted, agent.EventError, agent.EventCancelled:
		if r := ev.Result; r != nil && !p.texted && r.StopReason == agent.StopShell {
			t := screen.Sanitize(r.Text)
			io.WriteString(p.opts.Out, t)
			p.midLine = !strings.HasSuffix(t, "\n")
		}
		if p.midLine {
			io.WriteString(p.opts.Out, "\n")
			p.midLine = false
		}
		if ch, ok := p.ends[ev.Turn]; ok {
			ch <- ev
			delete(p.ends, ev.Turn)
		} else {
			p.ended[ev.Turn] = ev
		}
	}
}

// turn runs one prompt and waits for its end.
func (p *plain) turn(ctx context.Context, s Session, prompt string) (int, error) {
	ch := make(chan agent.Event, 1)
	// Submit may call the observer (a queued event) on this goroutine, so
	// no lock is held across it; an end that comes before the waiter is
	// registered is kept in ended.
	id, err := s.Submit(prompt)
	if err != nil {
		fmt.Fprintf(p.opts.Err, "agent: %v\n", err)
		return 1, nil
	}
	p.mu.Lock()
	if ev, ok := p.ended[id]; ok {
		delete(p.ended, id)
		ch <- ev
	} else {
		p.ends[id] = ch
	}
	p.mu.Unlock()
	var end agent.Event
	select {
	case end = <-ch:
	case <-ctx.Done():
		s.Abort()
		return 130, ctx.Err()
	}
	switch end.Kind {
	case agent.EventComplete:
		return 0, nil
	case agent.EventInterrupted:
		fmt.Fprintln(p.opts.Err, "agent: the turn was interrupted")
		return 1, nil
	}
	msg := "the turn failed"
	if end.Err != nil {
		msg += ": " + screen.SanitizeLine(end.Err.Error())
	}
	fmt.Fprintf(p.opts.Err, "agent: %s\n", msg)
	return 1, nil
}

// command runs a slash command line and reports whether to go on.
func (p *plain) command(ctx context.Context, line string) bool {
	words := strings.Fields(line)
	switch words[0] {
	case "/exit", "/quit":
		return false
	case "/help":
		for _, c := range append(slashCommands[:len(slashCommands):len(slashCommands)], p.extra()...) {
			fmt.Fprintf(p.opts.Out, "  %-22s %s\n", c.text, c.help)
		}
		return true
	case "/clear":
		return true
	}
	if !knownCommand(words[0], p.extra()) || p.opts.Commands == nil {
		fmt.Fprintf(p.opts.Err, "agent: unknown command %s (see /help)\n", screen.SanitizeLine(words[0]))
		return true
	}
	out, err := p.opts.Commands(ctx, words)
	switch {
	case errors.Is(err, agent.ErrUsage):
		fmt.Fprintf(p.opts.Err, "agent: usage: %s\n", strings.TrimPrefix(err.Error(), agent.ErrUsage.Error()+": "))
	case err != nil:
		fmt.Fprintf(p.opts.Err, "agent: %s: %s\n", strings.Join(words, " "), screen.SanitizeLine(err.Error()))
	default:
		io.WriteString(p.opts.Out, screen.Sanitize(out))
	}
	return true
}

// extra are the custom commands and skills.
func (p *plain) extra() []slashCommand {
	if p.opts.Extra == nil {
		return nil
	}
	var out []slashCommand
	for _, c := range p.opts.Extra() {
		out = append(out, slashCommand{text: c.Name, help: c.Description})
	}
	return out
}
