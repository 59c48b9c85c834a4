package compact

import (
	"fmt"
	"strings"

	"agent/providers"
)

// The summary (docs/reference/runtime.md, "Context management").
const (
	// KeepShare is the share of the window that the newest complete
	// turns kept after a summary may fill.
	KeepShare = 0.30
	// resultHead and resultTail are what the summary's input keeps of a
	// long tool output.
	resultHead = 1500
	resultTail = 1000
	// maxCallArgs bounds a tool call's arguments in the summary's input.
	maxCallArgs = 2000
	// maxText bounds one message's text in the summary's input before
	// turns are dropped.
	maxText = 24000
)

// SplitPoint is where the kept part of a history begins: the newest
// complete turns whose estimate fits budget tokens, split only before a
// user-role message, so that no tool call is ever separated from its
// result. It is len(msgs) when not even the newest turn fits.
func SplitPoint(msgs []providers.Message, budget int) int {
	split, size := len(msgs), 0
	for i := len(msgs) - 1; i >= 0; i-- {
		size += EstimateMessage(msgs[i])
		if size > budget {
			break
		}
		if msgs[i].Role == providers.RoleUser {
			split = i
		}
	}
	return split
}

// SummaryOptions say what the summary request is built with.
type SummaryOptions struct {
	// Budget is the most tokens the request's input may take.
	Budget int
	// Instructions are the words the user gave /compact.
	Instructions string
	// FileInstructions are the "Compact Instructions" sections of the
	// instruction files.
	FileInstructions string
}

// Summary is a summary request, ready to send.
type Summary struct {
	System, Prompt string
	// Dropped is how many of the oldest turns were left out to fit.
	Dropped int
	// Cut reports that the newest turn itself had to be cut to fit.
	Cut bool
}

// summarySystem is the summary request's system text.
const summarySystem = `You write the working summary of a coding session between a user and an AI coding agent. The session continues from your summary alone: the conversation it covers is removed from the agent's context. Be complete where it matters for continuing the work and brief everywhere else. Write plain Markdown. Never continue the work yourself and never call tools.`

// summaryTask asks for the sections of the summary.
const summaryTask = `Summarise the conversation above for the agent that continues it. Use these sections:

1. Goals: what the user wants, in their terms.
2. User instructions and constraints: every instruction, preference and constraint the user stated, quoted verbatim.
3. Files and changes: the files read, created or changed, with what changed and why; key code as short excerpts where it matters.
4. Errors and fixes: the errors met and how each was fixed (or that it is still open).
5. Decisions: what was decided and why.
6. Pending tasks: what is still to do.
7. Current work: exactly what was being worked on at the end, with file names.
8. Next step: the next step, in line with the user's latest request; quote the latest request verbatim.

Answer with the summary only.`

// SummaryRequest builds the request that summarises old: its input is old
// rendered as text, with long tool outputs cut to their head and tail and
// the oldest turns dropped until it fits the budget; the newest turn alone
// is cut in the middle if even it does not fit, so the request always fits.
func SummaryRequest(old []providers.Message, o SummaryOptions) Summary {
	task := summaryTask
	if s := strings.TrimSpace(o.FileInstructions); s != "" {
		task += "\n\nThe project's instruction files say about summaries:\n" + s
	}
	if s := strings.TrimSpace(o.Instructions); s != "" {
		task += "\n\nThe user asks for this summary: " + s
	}
	// The fixed text, the conversation's tags and notes, and the framing
	// of two messages.
	fixed := Tokens(len(summarySystem) + len(task) + 200 + 2*messageOverhead)
	turns := renderTurns(old)
	total := 0
	for _, t := range turns {
		total += len(t)
	}
	sum := Summary{System: summarySystem}
	room := max(o.Budget-fixed, 0) * 3 // tokens to bytes, the inverse of Tokens
	for len(turns) > 1 && total > room {
		total -= len(turns[0])
		turns = turns[1:]
		sum.Dropped++
	}
	var b strings.Builder
	b.Grow(min(total, room) + len(task) + 200)
	b.WriteString("<conversation>\n")
	if sum.Dropped > 0 {
		fmt.Fprintf(&b, "[The %d oldest turns are left out here: they did not fit.]\n\n", sum.Dropped)
	}
	body := strings.Join(turns, "")
	if len(body) > room {
		sum.Cut = true
		body = middleCut(body, room)
	}
	b.WriteString(body)
	b.WriteString("</conversation>\n\n")
	b.WriteString(task)
	sum.Prompt = b.String()
	return sum
}

// renderTurns renders msgs as text, one string per turn (a turn begins at
// a user-role message).
func renderTurns(msgs []providers.Message) []string {
	var turns []string
	var b strings.Builder
	names := map[string]string{}
	for _, m := range msgs {
		if m.Role == providers.RoleUser && b.Len() > 0 {
			turns = append(turns, b.String())
			b.Reset()
		}
		renderMessage(&b, m, names)
	}
	if b.Len() > 0 {
		turns = append(turns, b.String())
	}
	return turns
}

func renderMessage(b *strings.Builder, m providers.Message, names map[string]string) {
	switch m.Role {
	case providers.RoleSystem:
		return
	case providers.RoleUser:
		b.WriteString("User:\n")
	case providers.RoleAssistant:
		b.WriteString("Assistant:\n")
	}
	for _, p := range m.Content {
		switch p := p.(type) {
		case providers.Text:
			b.WriteString(middleCut(p.Text, maxText))
			b.WriteByte('\n')
		case providers.Image:
			b.WriteString("[an image]\n")
		case providers.ToolCall:
			names[p.ID] = p.Name
			fmt.Fprintf(b, "[tool call %s %s]\n", p.Name, middleCut(compactJSON(p.Arguments), maxCallArgs))
		case providers.ToolResult:
			text, images := p.TextAndImages()
			status := "result"
			if p.IsError {
				status = "error"
			}
			fmt.Fprintf(b, "[tool %s of %s]\n", status, names[p.CallID])
			if len(text) > resultHead+resultTail {
				fmt.Fprintf(b, "%s\n[… %d bytes cut …]\n%s\n", cutUTF8(text, resultHead), len(text)-resultHead-resultTail, tailUTF8(text, resultTail))
			} else if text != "" {
				b.WriteString(text)
				b.WriteByte('\n')
			}
			if len(images) > 0 {
				fmt.Fprintf(b, "[%d images]\n", len(images))
			}
		}
	}
	b.WriteByte('\n')
}

// middleCut keeps the head and tail of s within n bytes.
func middleCut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "\n[… cut …]\n"
	if n <= len(mark)+2 {
		return cutUTF8(s, n)
	}
	half := (n - len(mark)) / 2
	return cutUTF8(s, half) + mark + tailUTF8(s, half)
}

// tailUTF8 is the last at most n bytes of s, never inside a character.
func tailUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return s[i:]
}

// SummaryLead opens every summary message.
const SummaryLead = "This session continues an earlier conversation that no longer fit the context window."

// SummaryMessage is the user-role message that carries a summary into the
// rebuilt history, with a note that the session continues and where its
// full transcript is.
func SummaryMessage(summary, transcript string) providers.Message {
	var b strings.Builder
	b.WriteString(SummaryLead)
	b.WriteString(" The summary below covers it")
	if transcript != "" {
		fmt.Fprintf(&b, "; the full transcript is in %s (JSON lines) if a detail is missing", transcript)
	}
	b.WriteString(".\n\n<summary>\n")
	b.WriteString(strings.TrimSpace(summary))
	b.WriteString("\n</summary>\n\nContinue the work from where it stopped, without asking the user to repeat anything.")
	return providers.Message{Role: providers.RoleUser, Content: []providers.Part{providers.Text{Text: b.String()}}}
}

// Rebuild is the history after a summary: the summary message, then the
// kept turns, with the open todo list, when there is one, in the summary
// message (docs/reference/runtime.md, "Context management"). The framing
// (system prompt, context message) is not part of the history.
func Rebuild(summary providers.Message, kept []providers.Message, todos string) []providers.Message {
	if todos = strings.TrimSpace(todos); todos != "" {
		summary.Content = append(append([]providers.Part(nil), summary.Content...), providers.Text{Text: "The open todo list:\n" + todos})
	}
	out := make([]providers.Message, 0, len(kept)+1)
	out = append(out, summary)
	return append(out, kept...)
}
