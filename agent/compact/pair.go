package compact

import (
	"fmt"

	"agent/providers"
)

// Unavailable is the result given to a tool call whose result is missing
// from the history.
const Unavailable = "The result of this tool call is unavailable: it was lost from the conversation. Run the call again if you need it."

// Pair is the pairing check made before every request
// (docs/reference/runtime.md, "Context management"): every tool call gets
// exactly one result, in the tool message right after the assistant message
// that made it, in the order of the calls. A result that answers no call
// just before it (an orphan) or answers a call twice is removed; a call
// without a result gets one saying the result is unavailable; a call
// without an id, a call outside an assistant message and a result outside a
// tool message are removed; a message left empty is removed. It returns
// msgs itself when nothing needed fixing (the usual case, which allocates
// nothing), else a new slice and the number of fixes; msgs is never
// modified.
func Pair(msgs []providers.Message) ([]providers.Message, int) {
	if Paired(msgs) == nil {
		return msgs, 0
	}
	out := make([]providers.Message, 0, len(msgs)+1)
	fixes := 0
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case providers.RoleTool:
			// Not right after an assistant message with calls: each of its
			// results answers nothing here.
			fixes += max(len(m.Content), 1)
			continue
		case providers.RoleAssistant:
			kept, calls, f := assistantCalls(m)
			fixes += f
			j := i + 1
			if len(calls) == 0 {
				if len(kept.Content) > 0 {
					out = append(out, kept)
				} else {
					fixes++
				}
				continue
			}
			results := map[string]providers.ToolResult{}
			tools := 0
			for ; j < len(msgs) && msgs[j].Role == providers.RoleTool; j++ {
				tools++
				for _, p := range msgs[j].Content {
					r, ok := p.(providers.ToolResult)
					if _, seen := results[r.CallID]; !ok || seen || !calls[r.CallID] {
						fixes++
						continue
					}
					results[r.CallID] = r
				}
			}
			if tools > 1 {
				fixes += tools - 1 // results spread over several messages, joined
			}
			answer := providers.Message{Role: providers.RoleTool, Content: make([]providers.Part, 0, len(calls))}
			for _, p := range kept.Content {
				c, ok := p.(providers.ToolCall)
				if !ok {
					continue
				}
				r, ok := results[c.ID]
				if !ok {
					fixes++
					r = providers.ToolResult{CallID: c.ID, IsError: true, Content: []providers.Part{providers.Text{Text: Unavailable}}}
				}
				answer.Content = append(answer.Content, r)
			}
			out = append(out, kept, answer)
			i = j - 1
		default:
			kept := providers.Message{Role: m.Role, Content: make([]providers.Part, 0, len(m.Content))}
			for _, p := range m.Content {
				switch p.(type) {
				case providers.ToolCall, providers.ToolResult:
					fixes++
					continue
				}
				kept.Content = append(kept.Content, p)
			}
			if len(kept.Content) < len(m.Content) && len(kept.Content) == 0 {
				continue
			}
			out = append(out, kept)
		}
	}
	// Results put back in the order of their calls are a fix too.
	return out, max(fixes, 1)
}

// assistantCalls is an assistant message without the calls that cannot be
// answered (no id, an id used twice in the message), the ids it keeps,
// and how many it removed.
func assistantCalls(m providers.Message) (providers.Message, map[string]bool, int) {
	var calls map[string]bool
	fixes := 0
	kept := providers.Message{Role: m.Role, Content: make([]providers.Part, 0, len(m.Content))}
	for _, p := range m.Content {
		switch p := p.(type) {
		case providers.ToolCall:
			if p.ID == "" || calls[p.ID] {
				fixes++
				continue
			}
			if calls == nil {
				calls = map[string]bool{}
			}
			calls[p.ID] = true
		case providers.ToolResult:
			fixes++
			continue
		}
		kept.Content = append(kept.Content, p)
	}
	return kept, calls, fixes
}

// Paired reports the first way msgs break the pairing rule of Pair, or
// nil when every tool call has exactly one result right after it.
func Paired(msgs []providers.Message) error {
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		var ids []string
		for _, p := range m.Content {
			switch p := p.(type) {
			case providers.ToolCall:
				if m.Role != providers.RoleAssistant {
					return fmt.Errorf("message %d (%s): a tool call outside an assistant message", i, m.Role)
				}
				if p.ID == "" {
					return fmt.Errorf("message %d: a tool call without an id", i)
				}
				for _, id := range ids {
					if id == p.ID {
						return fmt.Errorf("message %d: the call id %q appears twice", i, p.ID)
					}
				}
				ids = append(ids, p.ID)
			case providers.ToolResult:
				if m.Role != providers.RoleTool {
					return fmt.Errorf("message %d (%s): a tool result outside a tool message", i, m.Role)
				}
			}
		}
		switch m.Role {
		case providers.RoleTool:
			return fmt.Errorf("message %d: tool results that answer no call just before them", i)
		case providers.RoleAssistant:
			if len(m.Content) == 0 {
				return fmt.Errorf("message %d: an empty assistant message", i)
			}
			if len(ids) == 0 {
				continue
			}
			if i+1 >= len(msgs) || msgs[i+1].Role != providers.RoleTool {
				return fmt.Errorf("message %d: %d tool calls without results after them", i, len(ids))
			}
			next := msgs[i+1].Content
			if len(next) != len(ids) {
				return fmt.Errorf("message %d: %d tool calls, %d results after them", i, len(ids), len(next))
			}
			for k, p := range next {
				r, ok := p.(providers.ToolResult)
				if !ok || r.CallID != ids[k] {
					return fmt.Errorf("message %d: result %d does not answer call %q", i+1, k, ids[k])
				}
			}
			i++ // the tool message is checked
		}
	}
	return nil
}
