package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"agent/providers"
	pt "agent/providers/providertest"
)

// The session's key goes as prompt_cache_key on the responses surface
// only, and within the length the API takes (docs/providers.md, "Prompt
// caching").
func TestCacheKey(t *testing.T) {
	long := strings.Repeat("k", 65)
	for _, c := range []struct {
		name  string
		opts  Options
		cache providers.Cache
		want  string // the member sent; "" for none
	}{
		{"a session's key", Options{}, providers.Cache{Key: "20250101-120000-0a1b2c3d"}, `"prompt_cache_key":"20250101-120000-0a1b2c3d"`},
		{"no key", Options{}, providers.Cache{}, ""},
		{"off", Options{}, providers.Cache{Key: "s", Off: true}, ""},
		{"64 characters go as they are", Options{}, providers.Cache{Key: long[:64]}, `"prompt_cache_key":"` + long[:64] + `"`},
		{"a longer key goes as its hash", Options{}, providers.Cache{Key: long}, `"prompt_cache_key":"` + cacheKey(long) + `"`},
		{"not on the chat-completions surface", Options{APISurface: SurfaceChatCompletions}, providers.Cache{Key: "s"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := hello()
			req.Cache = c.cache
			body, _, err := newWith(t, c.opts).Body(req)
			if err != nil {
				t.Fatal(err)
			}
			has := bytes.Contains(body, []byte(`"prompt_cache_key"`))
			if c.want == "" && has || c.want != "" && !bytes.Contains(body, []byte(c.want)) {
				t.Errorf("%s, want %s", body, c.want)
			}
		})
	}
	if k := cacheKey(strings.Repeat("k", 100)); len(k) != 64 || k == cacheKey(long) {
		t.Errorf("hashed keys: %q %q", k, cacheKey(long))
	}
}

// loopAnswer is the answer to call n of the scripted loop: a reasoning
// item with encrypted content, a sentence, and one call of Read.
func loopAnswer(n int) []byte {
	var b strings.Builder
	ev := func(typ, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, data) }
	ev("response.created", fmt.Sprintf(`{"type":"response.created","response":{"id":"resp_%d","status":"in_progress","output":[]}}`, n))
	ev("response.output_item.added", fmt.Sprintf(`{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_%d","type":"reasoning","summary":[]}}`, n))
	ev("response.output_item.done", fmt.Sprintf(`{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_%d","type":"reasoning","summary":[],"encrypted_content":"gAAAAB%03dxyz"}}`, n, n))
	ev("response.output_item.added", fmt.Sprintf(`{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_%d","type":"message","role":"assistant","content":[]}}`, n))
	ev("response.output_text.delta", fmt.Sprintf(`{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":"Reading file %d."}`, n))
	ev("response.output_item.done", fmt.Sprintf(`{"type":"response.output_item.done","output_index":1,"item":{"id":"msg_%d","type":"message","role":"assistant","content":[]}}`, n))
	ev("response.output_item.added", fmt.Sprintf(`{"type":"response.output_item.added","output_index":2,"item":{"id":"fc_%d","type":"function_call","call_id":"call_%02d","name":"Read","arguments":""}}`, n, n))
	ev("response.function_call_arguments.delta", fmt.Sprintf(`{"type":"response.function_call_arguments.delta","output_index":2,"delta":"{\"path\":\"src/file_%d.go\"}"}`, n))
	ev("response.output_item.done", fmt.Sprintf(`{"type":"response.output_item.done","output_index":2,"item":{"id":"fc_%d","type":"function_call","call_id":"call_%02d","name":"Read","arguments":"{\"path\":\"src/file_%d.go\"}"}}`, n, n, n))
	ev("response.completed", fmt.Sprintf(`{"type":"response.completed","response":{"id":"resp_%d","status":"completed","usage":{"input_tokens":10,"output_tokens":30}}}`, n))
	return []byte(b.String())
}

// Over a scripted tool loop of 20 calls, the input of each request starts
// with the whole input of the request before it, byte for byte (the
// reasoning items too), and everything else stays as it was: the API
// caches prefixes by itself, with no marks (docs/providers.md, "Prompt
// caching"). From the third call on at least 80% of each request repeats
// the one before.
func TestToolLoopInputPrefix(t *testing.T) {
	bodies := pt.ToolLoop{
		Build: func(t testing.TB, url string, c *http.Client) providers.Provider {
			return newWith(t, Options{BaseURL: url + "/v1", APISurface: SurfaceResponses, Client: c, IncludeEncryptedReasoning: true})
		},
		First: pt.LoopRequest(), Steps: 20, Answer: loopAnswer, Result: pt.LoopResult,
	}.Run(t)
	if len(bodies) != 20 {
		t.Fatalf("%d requests", len(bodies))
	}
	// split returns the input's raw text and the rest of the body.
	split := func(body []byte) ([]byte, map[string]json.RawMessage) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		input := m["input"]
		delete(m, "input")
		return input, m
	}
	prev, prevRest := split(bodies[0])
	if string(prevRest["prompt_cache_key"]) != `"session-1"` {
		t.Fatalf("no key: %s", bodies[0])
	}
	for n, body := range bodies[1:] {
		input, rest := split(body)
		for k, v := range rest {
			if !bytes.Equal(v, prevRest[k]) {
				t.Errorf("call %d changes %s: %s", n+2, k, v)
			}
		}
		if len(rest) != len(prevRest) {
			t.Errorf("call %d: members %d, were %d", n+2, len(rest), len(prevRest))
		}
		head := prev[:len(prev)-1] // without the closing bracket
		if !bytes.HasPrefix(input, head) || input[len(head)] != ',' {
			t.Fatalf("call %d does not repeat the input before it:\n%s\n%s", n+2, prev, input)
		}
		// What is new is the end of the input; the instructions, the
		// tools and the settings repeat too.
		share := 1 - float64(len(input)-len(head))/float64(len(body))
		t.Logf("call %2d: %6d bytes, %6d repeated (%.1f%%)", n+2, len(body), len(body)-len(input)+len(head), 100*share)
		if n+2 >= 3 && share < 0.8 {
			t.Errorf("call %d: only %.1f%% of the request repeats the one before", n+2, 100*share)
		}
		prev, prevRest = input, rest
	}
}
