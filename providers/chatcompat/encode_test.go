package chatcompat

import (
	"encoding/json"
	"testing"

	"agent/providers"
)

// The hand-written conversation is byte for byte what encoding/json writes.
func TestAppendMessagesMatchesEncodingJSON(t *testing.T) {
	r := "thinking <about> it"
	cases := []struct {
		name string
		ms   []wireMessage
	}{
		{"none", []wireMessage{}},
		{"system and user text", []wireMessage{{Role: "system", Content: "be \"brief\""}, {Role: "user", Content: "hi\n<there> & \u2028"}}},
		{"content parts with an image", []wireMessage{{Role: "user", Content: []wirePart{{Type: "text", Text: "look"}, {Type: "image_url", ImageURL: &wireImageURL{URL: "data:image/png;base64,AAAA"}}}}}},
		{"an assistant with tool calls and no text", []wireMessage{{Role: "assistant", ToolCalls: []wireToolCall{{ID: "c1", Type: "function", Function: wireCallFunc{Name: "Read", Arguments: `{"file_path":"a.go"}`}}, {ID: "c2", Type: "function", Function: wireCallFunc{Name: "Bash", Arguments: "{}"}}}}}},
		{"reasoning content", []wireMessage{{Role: "assistant", Content: "ok", ReasoningContent: &r}}},
		{"a tool result", []wireMessage{{Role: "tool", ToolCallID: "c1", Content: "output\x00\xff"}}},
		{"an empty text part", []wireMessage{{Role: "user", Content: []wirePart{{Type: "text"}}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, _ := json.Marshal(c.ms)
			if got := appendMessages(nil, c.ms); string(got) != string(want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			body, _ := json.Marshal(map[string]any{"max_tokens": 5, "messages": json.RawMessage("0"), "model": "m"})
			full, _ := json.Marshal(map[string]any{"max_tokens": 5, "messages": c.ms, "model": "m"})
			if got := spliceMessages(body, appendMessages(nil, c.ms)); string(got) != string(full) {
				t.Errorf("spliced %s\nwant    %s", got, full)
			}
		})
	}
}

// The encoding cache gives the bytes a fresh encoding gives, whatever
// happened to the messages since the latest request.
func TestEncodeCacheMatchesFreshEncoding(t *testing.T) {
	text := func(role providers.Role, s string) providers.Message {
		return providers.Message{Role: role, Content: []providers.Part{providers.Text{Text: s}}}
	}
	call := func(id, args string) providers.Message {
		return providers.Message{Role: providers.RoleAssistant, Content: []providers.Part{providers.ToolCall{ID: id, Name: "Read", Arguments: json.RawMessage(args)}}}
	}
	result := func(id, s string) providers.Message {
		return providers.Message{Role: providers.RoleTool, Content: []providers.Part{providers.ToolResult{CallID: id, Content: []providers.Part{providers.Text{Text: s}}}}}
	}
	base := []providers.Message{text(providers.RoleSystem, "sys"), text(providers.RoleUser, "q"), call("c1", `{"a":1}`), result("c1", "out <1>"), text(providers.RoleAssistant, "done")}
	cases := []struct {
		name   string
		replay ReasoningReplay
		change func(ms []providers.Message) []providers.Message
	}{
		{"the same conversation again", ReplayNone, func(ms []providers.Message) []providers.Message { return ms }},
		{"a message appended", ReplayNone, func(ms []providers.Message) []providers.Message {
			return append(ms, text(providers.RoleUser, "next"))
		}},
		{"a part replaced in place", ReplayNone, func(ms []providers.Message) []providers.Message {
			ms[3].Content[0] = providers.ToolResult{CallID: "c1", Content: []providers.Part{providers.Text{Text: "[cleared]"}}}
			return ms
		}},
		{"arguments changed in place", ReplayNone, func(ms []providers.Message) []providers.Message {
			ms[2].Content[0].(providers.ToolCall).Arguments[5] = '2'
			return ms
		}},
		{"a part added in the same array", ReplayNone, func(ms []providers.Message) []providers.Message {
			ms[4].Content = append(ms[4].Content[:1:1], providers.Text{Text: " more"})
			return ms
		}},
		{"a message removed", ReplayNone, func(ms []providers.Message) []providers.Message { return append(ms[:1], ms[4:]...) }},
		{"a turn that becomes a tool turn", ReplayToolTurns, func(ms []providers.Message) []providers.Message {
			return append(ms, text(providers.RoleUser, "again"), text(providers.RoleAssistant, "a"), call("c2", "{}"), result("c2", "r"))
		}},
		{"an image in a tool result", ReplayNone, func(ms []providers.Message) []providers.Message {
			return append(ms, call("c3", "{}"), providers.Message{Role: providers.RoleTool, Content: []providers.Part{providers.ToolResult{CallID: "c3",
				Content: []providers.Part{providers.Text{Text: "see"}, providers.Image{MediaType: "image/png", Data: []byte{1, 2}}}}}})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ms := make([]providers.Message, len(base))
			for i, m := range base {
				ms[i] = providers.Message{Role: m.Role, Content: append([]providers.Part(nil), m.Content...)}
				if tc, ok := m.Content[0].(providers.ToolCall); ok {
					tc.Arguments = append(json.RawMessage(nil), tc.Arguments...)
					ms[i].Content[0] = tc
				}
			}
			var cache encodeCache
			if got, want := cache.encode(nil, ms, c.replay, 0), appendMessages(nil, wireMessages(ms, c.replay)); string(got) != string(want) {
				t.Fatalf("first encoding\n%s\nwant\n%s", got, want)
			}
			ms = c.change(ms)
			if got, want := cache.encode(nil, ms, c.replay, 0), appendMessages(nil, wireMessages(ms, c.replay)); string(got) != string(want) {
				t.Errorf("after the change\n%s\nwant\n%s", got, want)
			}
			if got, want := cache.encode([]byte("x"), ms, c.replay, 0), append([]byte("x"), appendMessages(nil, wireMessages(ms, c.replay))...); string(got) != string(want) {
				t.Errorf("from the cache\n%s\nwant\n%s", got, want)
			}
		})
	}
}
