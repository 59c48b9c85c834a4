package messages

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"agent/providers"
	pt "agent/providers/providertest"
)

// mark is a cache mark as the provider writes it. It cannot occur inside
// a JSON string, where every quote is escaped.
const mark = `,"cache_control":{"type":"ephemeral"}`

func unmarked(body []byte) ([]byte, []int) { return pt.Unmarked(body, mark) }

// marks lists the places of a body's cache marks: tools/I, system/I,
// messages/I/J.
func marks(t *testing.T, body []byte) []string {
	t.Helper()
	type item struct {
		Cache json.RawMessage `json:"cache_control"`
	}
	var w struct {
		Tools    []item          `json:"tools"`
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Content []item `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatal(err)
	}
	var system []item
	if len(w.System) > 0 && w.System[0] == '[' {
		if err := json.Unmarshal(w.System, &system); err != nil {
			t.Fatal(err)
		}
	}
	var out []string
	for i, it := range w.Tools {
		if it.Cache != nil {
			out = append(out, fmt.Sprintf("tools/%d", i))
		}
	}
	for i, it := range system {
		if it.Cache != nil {
			out = append(out, fmt.Sprintf("system/%d", i))
		}
	}
	for i, m := range w.Messages {
		for j, it := range m.Content {
			if it.Cache != nil {
				out = append(out, fmt.Sprintf("messages/%d/%d", i, j))
			}
		}
	}
	return out
}

func text(role providers.Role, texts ...string) providers.Message {
	m := providers.Message{Role: role}
	for _, s := range texts {
		m.Content = append(m.Content, providers.Text{Text: s})
	}
	return m
}

// calls is an assistant message that says something and calls Read n
// times, with ids from first on.
func calls(first, n int) providers.Message {
	m := text(providers.RoleAssistant, "Reading.")
	for i := first; i < first+n; i++ {
		m.Content = append(m.Content, providers.ToolCall{ID: fmt.Sprintf("toolu_%d", i), Name: "Read", Arguments: json.RawMessage(`{"path":"a.go"}`)})
	}
	return m
}

func results(first, n int) providers.Message {
	m := providers.Message{Role: providers.RoleTool}
	for i := first; i < first+n; i++ {
		m.Content = append(m.Content, providers.ToolResult{CallID: fmt.Sprintf("toolu_%d", i), Content: []providers.Part{providers.Text{Text: "package a"}}})
	}
	return m
}

// Where the cache marks go (docs/providers.md, "Prompt caching"): after
// the tools and the static system text, after the stable prefix, where
// the request before this step ended, and on the newest block; never
// more than four, never on thinking.
func TestCacheMarks(t *testing.T) {
	tools := []providers.Tool{{Name: "Read"}, {Name: "Bash"}}
	static, volatile := text(providers.RoleSystem, "Be brief."), text(providers.RoleSystem, "Today is Monday.")
	context, prompt := text(providers.RoleUser, "<instructions>"), text(providers.RoleUser, "Fix the bug.")
	loop := []providers.Message{static, volatile, context, prompt, calls(0, 1), results(0, 1), calls(1, 1), results(1, 1)}
	signed := providers.Message{Role: providers.RoleAssistant, Content: []providers.Part{providers.Reasoning{Text: "hm", Signature: "c2ln"}}}
	for _, c := range []struct {
		name string
		req  providers.Request
		want []string
	}{
		{"one user message", providers.Request{Messages: []providers.Message{prompt}}, []string{"messages/0/0"}},
		{"tools without a system text", providers.Request{Messages: []providers.Message{prompt}, Tools: tools}, []string{"tools/1", "messages/0/0"}},
		{"the system text covers the tools", providers.Request{Messages: []providers.Message{static, volatile, prompt}, Tools: tools}, []string{"system/0", "messages/0/0"}},
		{"the static system text apart from the rest", providers.Request{Messages: []providers.Message{static, volatile, prompt}, Tools: tools, Cache: providers.Cache{StaticSystem: 1}}, []string{"system/0", "messages/0/0"}},
		{"the context message merged with the prompt", providers.Request{Messages: loop[:4], Tools: tools, Cache: providers.Cache{StaticSystem: 1, Prefix: 3}}, []string{"system/0", "messages/0/0", "messages/0/1"}},
		{"a prefix of system messages only", providers.Request{Messages: loop[:4], Cache: providers.Cache{Prefix: 2}}, []string{"system/0", "messages/0/1"}},
		{"the second step reads where the first ended", providers.Request{Messages: loop[:6], Tools: tools, Cache: providers.Cache{StaticSystem: 1, Prefix: 3}}, []string{"system/0", "messages/0/0", "messages/0/1", "messages/2/0"}},
		{"the third step: four marks", providers.Request{Messages: loop, Tools: tools, Cache: providers.Cache{StaticSystem: 1, Prefix: 3}}, []string{"system/0", "messages/0/0", "messages/2/0", "messages/4/0"}},
		// Twelve parallel calls put the last step's end 25 blocks back,
		// beyond the API's look-back from a mark: it is marked itself.
		{"a step of twelve calls", providers.Request{Messages: append(loop[:6:6], calls(1, 12), results(1, 12)), Cache: providers.Cache{Prefix: 3}}, []string{"system/0", "messages/0/0", "messages/2/0", "messages/4/11"}},
		{"a prefix that ends where the last step did", providers.Request{Messages: loop[:6], Cache: providers.Cache{Prefix: 4}}, []string{"system/0", "messages/0/1", "messages/2/0"}},
		// The API refuses a mark on thinking: the block before it takes it.
		{"a newest message of thinking alone", providers.Request{Messages: []providers.Message{prompt, signed}}, []string{"messages/0/0"}},
		{"a newest assistant message (a prefill)", providers.Request{Messages: []providers.Message{prompt, calls(0, 1), results(0, 1), text(providers.RoleAssistant, "Done.")}}, []string{"tools/0", "messages/0/0", "messages/3/0"}},
		{"off", providers.Request{Messages: loop, Tools: tools, Cache: providers.Cache{Off: true, StaticSystem: 1, Prefix: 3}}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.req.Model = "family-4-5"
			body, _, err := newWith(t, Options{}).Body(&c.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := marks(t, body); !slices.Equal(got, c.want) {
				t.Errorf("marks %q, want %q\n%s", got, c.want, body)
			}
			if _, at := unmarked(body); len(at) > 4 {
				t.Errorf("%d marks: the API takes four", len(at))
			}
		})
	}
}

// The system text without marks goes as before caching: one string; with
// them, the same text in blocks.
func TestCacheSystemText(t *testing.T) {
	msgs := []providers.Message{text(providers.RoleSystem, "A", "B"), text(providers.RoleSystem, "C"), text(providers.RoleUser, "hi")}
	for _, c := range []struct {
		name  string
		cache providers.Cache
		want  string
	}{
		{"off", providers.Cache{Off: true}, `"system":"A\n\nB\n\nC"`},
		{"one block", providers.Cache{}, `"system":[{"type":"text","text":"A\n\nB\n\nC","cache_control":{"type":"ephemeral"}}]`},
		{"static and the rest", providers.Cache{StaticSystem: 1}, `"system":[{"type":"text","text":"A\n\nB","cache_control":{"type":"ephemeral"}},{"type":"text","text":"C"}]`},
		{"every message static", providers.Cache{StaticSystem: 2}, `"system":[{"type":"text","text":"A\n\nB\n\nC","cache_control":{"type":"ephemeral"}}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			body, _, err := newWith(t, Options{}).Body(&providers.Request{Model: "m", Messages: msgs, Cache: c.cache})
			if err != nil || !strings.Contains(string(body), c.want) {
				t.Errorf("%s %v, want %s", body, err, c.want)
			}
		})
	}
}

// loopAnswer is the answer to call n of the scripted loop: a sentence
// and one call of Read.
func loopAnswer(n int) []byte {
	var b strings.Builder
	ev := func(typ, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, data) }
	ev("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_%d","type":"message","role":"assistant","content":[],"model":"family-4-5","usage":{"input_tokens":10,"output_tokens":1}}}`, n))
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Reading file %d."}}`, n))
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_%02d","name":"Read","input":{}}}`, n))
	ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"src/file_%d.go\"}"}}`, n))
	ev("content_block_stop", `{"type":"content_block_stop","index":1}`)
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return []byte(b.String())
}

// Over a scripted tool loop of 20 calls, each request repeats the bytes of
// the request before it up to that request's last cache mark (marks
// aside), marks that place again, and from the third call on at least 80%
// of its bytes lie in that prefix, which the API serves from its cache
// (docs/providers.md, "Prompt caching").
func TestToolLoopCachePrefix(t *testing.T) {
	bodies := pt.ToolLoop{
		Build: func(t testing.TB, url string, c *http.Client) providers.Provider {
			return newWith(t, Options{BaseURL: url, Client: c})
		},
		First: pt.LoopRequest(), Steps: 20, Answer: loopAnswer, Result: pt.LoopResult,
	}.Run(t)
	if len(bodies) != 20 {
		t.Fatalf("%d requests", len(bodies))
	}
	pt.CheckCachePrefix(t, bodies, mark)
}
