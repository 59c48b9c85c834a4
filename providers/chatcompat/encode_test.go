package chatcompat

import (
	"encoding/json"
	"testing"
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
			if got := spliceMessages(body, c.ms); string(got) != string(full) {
				t.Errorf("spliced %s\nwant    %s", got, full)
			}
		})
	}
}
