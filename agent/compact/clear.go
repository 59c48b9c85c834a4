package compact

import (
	"fmt"
	"strings"

	"agent/providers"
)

// KeepToolTokens is how much of the newest tool output the cheap pass
// leaves in place (docs/reference/runtime.md, "Context management").
const KeepToolTokens = 40000

// clearedPrefix starts the text that replaces a cleared result.
const clearedPrefix = "[This tool result was cleared to free context"

// maxPlaceholderArgs bounds the arguments a placeholder repeats.
const maxPlaceholderArgs = 300

// ClearOldResults is the cheap pass: the bodies of tool results are
// replaced by one line that says how to get them again, oldest first,
// except the newest keep tokens of tool output and everything from
// protect on (the current turn). It returns the new history, the tokens
// freed and the ids of the calls whose results it cleared (what the
// transcript records, so that resuming clears the same); msgs is not
// modified, and messages it does not change are shared.
func ClearOldResults(msgs []providers.Message, protect, keep int) ([]providers.Message, int, []string) {
	protect = min(max(protect, 0), len(msgs))
	// Walk back from the newest result, counting what is kept.
	kept := 0
	cut := -1 // results in messages before this index are cleared
	for i := len(msgs) - 1; i >= 0 && cut < 0; i-- {
		if msgs[i].Role != providers.RoleTool {
			continue
		}
		for k := len(msgs[i].Content) - 1; k >= 0; k-- {
			r, ok := msgs[i].Content[k].(providers.ToolResult)
			if !ok || cleared(r) {
				continue
			}
			kept += resultSize(r)
			if kept > keep {
				cut = i + 1
				break
			}
		}
	}
	if cut < 0 {
		return msgs, 0, nil
	}
	cut = min(cut, protect)
	var ids []string
	for i := 0; i < cut; i++ {
		if msgs[i].Role != providers.RoleTool {
			continue
		}
		for _, p := range msgs[i].Content {
			if r, ok := p.(providers.ToolResult); ok && worthClearing(r) {
				ids = append(ids, r.CallID)
			}
		}
	}
	out, freed := clearResults(msgs, cut, ids)
	return out, freed, ids
}

// ClearResults replaces the bodies of the results that answer the calls
// ids, as the cheap pass does (resuming a transcript applies its records
// of cleared results with it). It returns the new history and the tokens
// freed; msgs is not modified.
func ClearResults(msgs []providers.Message, ids []string) ([]providers.Message, int) {
	return clearResults(msgs, len(msgs), ids)
}

// clearResults clears the results of ids in msgs[:end].
func clearResults(msgs []providers.Message, end int, ids []string) ([]providers.Message, int) {
	if len(ids) == 0 {
		return msgs, 0
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	calls := map[string]providers.ToolCall{}
	var out []providers.Message
	freed := 0
	for i := 0; i < end; i++ {
		m := msgs[i]
		switch m.Role {
		case providers.RoleAssistant:
			for _, p := range m.Content {
				if c, ok := p.(providers.ToolCall); ok {
					calls[c.ID] = c
				}
			}
			continue
		case providers.RoleTool:
		default:
			continue
		}
		var content []providers.Part
		for k, p := range m.Content {
			r, ok := p.(providers.ToolResult)
			if !ok || !want[r.CallID] || !worthClearing(r) {
				continue
			}
			if content == nil {
				content = append([]providers.Part(nil), m.Content...)
			}
			before := resultSize(r)
			content[k] = providers.ToolResult{CallID: r.CallID, IsError: r.IsError,
				Content: []providers.Part{providers.Text{Text: placeholder(calls[r.CallID], before)}}}
			freed += before - resultSize(content[k].(providers.ToolResult))
		}
		if content != nil {
			if out == nil {
				out = append([]providers.Message(nil), msgs...)
			}
			out[i] = providers.Message{Role: m.Role, Content: content}
		}
	}
	if out == nil {
		return msgs, 0
	}
	return out, freed
}

// worthClearing: a result not cleared yet and larger than its placeholder.
func worthClearing(r providers.ToolResult) bool {
	return !cleared(r) && resultSize(r) > placeholderTokens
}

// placeholderTokens is about the size of a placeholder: a result no larger
// stays as it is.
const placeholderTokens = 80

func cleared(r providers.ToolResult) bool {
	if len(r.Content) != 1 {
		return false
	}
	t, ok := r.Content[0].(providers.Text)
	return ok && strings.HasPrefix(t.Text, clearedPrefix)
}

// placeholder is the line that replaces a result: what it was and the
// call that gets it again.
func placeholder(c providers.ToolCall, tokens int) string {
	if c.Name == "" {
		return fmt.Sprintf("%s (about %d tokens). Run the tool call again if you need its output.]", clearedPrefix, tokens)
	}
	args := compactJSON(c.Arguments)
	if len(args) > maxPlaceholderArgs {
		args = cutUTF8(args, maxPlaceholderArgs) + "…"
	}
	return fmt.Sprintf("%s (about %d tokens). To see it again, call %s with %s.]", clearedPrefix, tokens, c.Name, args)
}

// cutUTF8 is s cut to at most n bytes, never inside a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
