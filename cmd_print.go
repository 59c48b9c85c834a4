package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"agent/agent"
	"agent/internal/quote"
	"agent/providers"
	"agent/tui/screen"
	"agent/tui/term"
)

// printCommand is "agent -p [flags] PROMPT": print mode. Like the
// interactive session it has no words of its own: run chooses it when the
// command line asks for print mode.
func printCommand() *command {
	return &command{
		path:     "",
		synopsis: "-p [flags] PROMPT",
		summary:  "print mode: run one turn, print the answer on stdout, exit",
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			sf := &sessionFlags{}
			sf.registerRoot(f)
			return func(ctx context.Context, e *env, ops []string) error { return printMode(ctx, e, sf, f, ops) }
		},
	}
}

// printMode runs `agent -p`: one turn, the answer on stdout
// (docs/reference/cli.md, "Print mode").
func printMode(ctx context.Context, e *env, sf *sessionFlags, f *flagSet, ops []string) error {
	if len(sf.eventGrants) > 0 || sf.eventPort != "" || len(sf.eventProxies) > 0 {
		return usagef("", "the --external-event-* flags are accepted only by the interactive session and 'agent session start --background'")
	}
	switch sf.outputFormat {
	case "", "text", "json", "stream-json":
	default:
		return usagef("", "--output-format must be text, json or stream-json, not %q", quote.V(sf.outputFormat))
	}
	if err := checkModelFlags("", sf); err != nil {
		return err
	}
	if err := checkAgentsFlag("", sf.agentsJSON); err != nil {
		return err
	}
	prompt, err := printPrompt(e, ops)
	if err != nil {
		return err
	}
	opts := e.startOptions(sf, f, printFront)
	c, err := agent.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	sess, id := c.Session, c.Session.ID()

	out := &lockedWriter{w: e.out}
	if f, ok := e.out.(*os.File); ok && term.IsTerminal(f) {
		out.terminal = true // model text must not drive the terminal
	}
	if sf.outputFormat == "stream-json" {
		sess.Subscribe(func(ev agent.Event) {
			if line := streamJSON(ev); line != nil {
				out.writeJSON(line)
			}
		})
	}
	if sf.outputFormat != "stream-json" {
		sess.Subscribe(func(ev agent.Event) { printNotice(e, ev) })
	}
	req, err := printRequest(ctx, c, prompt)
	if err != nil {
		return err
	}
	turn, err := sess.Submit(req)
	if err != nil {
		return err
	}
	var res agent.TurnResult
	select {
	case <-turn.Done():
		res, _ = turn.Wait(context.Background())
	case <-ctx.Done():
		sess.Abort()
		res, _ = turn.Wait(context.Background())
	}
	switch sf.outputFormat {
	case "json", "stream-json":
		out.writeJSON(finalJSON(id, res, instructionPaths(c)))
	default:
		if res.Status == agent.StatusComplete || res.Text != "" {
			out.writeText(res.Text)
		}
	}
	return turnError(ctx, res)
}

// printNotice writes to stderr what print mode's text and json formats
// say besides the answer: failed tool calls, compactions, notices, failed
// hooks (tool chatter never reaches stdout; docs/reference/cli.md, "Print
// mode").
func printNotice(e *env, ev agent.Event) {
	switch {
	case ev.Kind == agent.EventToolEnd && ev.Tool.Result.IsError:
		fmt.Fprintf(e.err, "agent: %s: %s\n", ev.Tool.Name, sanitizeLine(firstLine(ev.Tool.Result.Content)))
	case ev.Kind == agent.EventCompact:
		fmt.Fprintf(e.err, "agent: %s\n", sanitizeLine(ev.Compact.Line()))
	case ev.Kind == agent.EventNotice:
		fmt.Fprintf(e.err, "agent: %s\n", sanitizeLine(ev.Text))
	case ev.Kind == agent.EventHookFailure:
		fmt.Fprintf(e.err, "agent: hook failed: %s\n", sanitizeLine(ev.Text))
	}
}

// printRequest is the turn of print mode's prompt: a prompt that starts
// with /name runs that custom command or skill, as in the UI
// (docs/reference/runtime.md, "Subagents, commands and skills"); any other
// is sent as it is.
func printRequest(ctx context.Context, c *agent.WorkspaceSession, prompt string) (agent.TurnRequest, error) {
	if strings.HasPrefix(prompt, "/") {
		name, args, _ := strings.Cut(strings.TrimSpace(prompt), " ")
		req, ok, err := c.CommandTurn(ctx, name, strings.TrimSpace(args))
		if ok {
			return req, err
		}
	}
	return agent.TurnRequest{Prompt: prompt}, nil
}

// printPrompt is the prompt of print mode: the one operand, or stdin when
// there is none or it is "-".
func printPrompt(e *env, ops []string) (string, error) {
	if len(ops) > 1 {
		return "", usagef("", "print mode takes one PROMPT (quote it), got %d arguments", len(ops))
	}
	prompt := ""
	if len(ops) == 1 && ops[0] != "-" {
		prompt = ops[0]
	} else {
		b, err := io.ReadAll(io.LimitReader(e.in, 16<<20))
		if err != nil {
			return "", fmt.Errorf("reading the prompt from stdin: %w", err)
		}
		prompt = strings.TrimRight(string(b), "\n")
	}
	if strings.TrimSpace(prompt) == "" {
		return "", usagef("", "print mode needs a prompt (an argument, or on stdin)")
	}
	return prompt, nil
}

// turnError is the command's error for how the turn ended: none, the
// interruption (exit 130), or the failure.
func turnError(ctx context.Context, res agent.TurnResult) error {
	switch res.Status {
	case agent.StatusComplete:
		return nil
	case agent.StatusInterrupted:
		return ctx.Err() // the signal: exit 130
	}
	if res.Err != nil {
		return fmt.Errorf("the turn failed: %w", res.Err)
	}
	return errors.New("the turn failed")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// lockedWriter writes print mode's stdout. Piped, the model's text goes out
// byte for byte; on a terminal it is sanitised as the UI does
// (docs/reference/cli.md, "Print mode": no ESC, no C0 but tab and newline,
// no C1, no bidi overrides), so an answer cannot retitle the window, move
// the cursor or write to the clipboard.
type lockedWriter struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
}

func (l *lockedWriter) writeLine(b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(append(b, '\n'))
}

// writeText writes the answer's text and a newline.
func (l *lockedWriter) writeText(s string) {
	if l.terminal {
		s = screen.Sanitize(s)
	}
	l.writeLine([]byte(s))
}

// writeJSON writes one JSON line. encoding/json already escapes C0; on a
// terminal the C1 controls and the bidi formatting characters are escaped
// too (\u0085 means the same to a JSON reader, and nothing to a terminal).
func (l *lockedWriter) writeJSON(b []byte) {
	if l.terminal {
		b = escapeTerminalRunes(b)
	}
	l.writeLine(b)
}

// escapeTerminalRunes rewrites U+0080–U+009F, U+202A–U+202E and
// U+2066–U+2069 in a JSON text as \u escapes. Outside strings JSON has
// only ASCII, so every such rune is inside a string.
func escapeTerminalRunes(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			if out == nil {
				out = append(make([]byte, 0, len(b)+16), b[:i]...)
			}
			out = fmt.Appendf(out, `\u%04x`, r)
		} else if out != nil {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	if out == nil {
		return b
	}
	return out
}

type usageJSON struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	CacheReadTokens  int `json:"cache_read_input_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_creation_input_tokens,omitempty"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
}

func toUsage(u providers.Usage) usageJSON {
	return usageJSON{u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens}
}

// finalJSON is the one object of the json format and the last line of
// stream-json: the answer under "result", the session id, usage and stop
// reason (docs/reference/cli.md, "Output formats").
func finalJSON(id string, res agent.TurnResult, instructionFiles []string) []byte {
	v := struct {
		Type             string    `json:"type"`
		Subtype          string    `json:"subtype"`
		IsError          bool      `json:"is_error"`
		Result           string    `json:"result"`
		SessionID        string    `json:"session_id"`
		StopReason       string    `json:"stop_reason"`
		Usage            usageJSON `json:"usage"`
		InstructionFiles []string  `json:"instruction_files"`
		Error            string    `json:"error,omitempty"`
	}{Type: "result", Subtype: string(res.Status), IsError: res.Status != agent.StatusComplete, Result: res.Text,
		SessionID: id, StopReason: res.StopReason, Usage: toUsage(res.Usage), InstructionFiles: instructionFiles}
	if res.Err != nil {
		v.Error = res.Err.Error()
	}
	b, _ := json.Marshal(v)
	return b
}

// streamJSON renders one event as a line of the stream-json format; text
// deltas go under "delta".
func streamJSON(ev agent.Event) []byte {
	var v map[string]any
	switch ev.Kind {
	case agent.EventText, agent.EventReasoning:
		v = map[string]any{"type": string(ev.Kind), "delta": ev.Text}
	case agent.EventToolStart:
		var input any = ev.Tool.Args
		if !json.Valid(ev.Tool.Args) {
			input = string(ev.Tool.Args) // what the model sent, even when malformed
		}
		v = map[string]any{"type": "tool_start", "id": ev.Tool.CallID, "name": ev.Tool.Name, "input": input}
	case agent.EventToolEnd:
		v = map[string]any{"type": "tool_end", "id": ev.Tool.CallID, "name": ev.Tool.Name, "is_error": ev.Tool.Result.IsError, "denied": ev.Tool.Denied, "content": ev.Tool.Result.Content}
	case agent.EventUsage:
		v = map[string]any{"type": "usage", "usage": toUsage(*ev.Usage)}
	case agent.EventTurnStart:
		v = map[string]any{"type": "turn_start", "session_id": ev.Session, "time": time.Now().UTC().Format(time.RFC3339Nano)}
	case agent.EventCompact:
		// docs/reference/cli.md, "Output formats": one per compaction.
		c := ev.Compact
		v = map[string]any{"type": "compact", "trigger": c.Trigger, "tokens_before": c.TokensBefore, "tokens_after": c.TokensAfter,
			"duration_ms": c.Duration.Milliseconds(), "cleared_only": c.Cleared && c.Err == nil, "usage": toUsage(c.Usage)}
		if c.Err != nil {
			v["error"] = c.Err.Error()
			delete(v, "tokens_after")
		}
	case agent.EventNotice:
		v = map[string]any{"type": "notice", "text": ev.Text}
	case agent.EventHookFailure:
		v = map[string]any{"type": "hook_failure", "text": ev.Text}
	default:
		return nil // the final object closes the stream
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// instructionPaths are the instruction files the session loaded at its
// start, for --output-format json; never null.
func instructionPaths(c *agent.WorkspaceSession) []string {
	out := []string{}
	if set := c.Instructions.Files(); set != nil {
		for _, f := range set.Files {
			out = append(out, f.Path)
		}
	}
	return out
}
