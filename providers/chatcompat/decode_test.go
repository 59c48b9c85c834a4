package chatcompat

import (
	"testing"

	"agent/internal/sse"
	"agent/providers"
	pt "agent/providers/providertest"
)

func FuzzDecoder(f *testing.F) {
	pt.SeedFromTestdata(f)
	pt.SeedUsage(f, usageCases)
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":-5,\"id\":\"a\"},{\"id\":\"b\"},{}]}}]}\n\n"))
	f.Add([]byte("data: {\"error\":{\"code\":429}}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pt.CheckDecoder(t, func() providers.Decoder { return NewDecoder() }, data)
	})
}

// One typical chunk: a text delta with the envelope every server sends.
var textChunk = sse.Event{Data: `{"id":"chatcmpl-9x2Yk7","object":"chat.completion.chunk","created":1700000000,"model":"model-name-1","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}],"usage":null}`}

var toolChunk = sse.Event{Data: `{"id":"chatcmpl-9x2Yk7","object":"chat.completion.chunk","created":1700000000,"model":"model-name-1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"path\": \"a"}}]},"finish_reason":null}]}`}

func benchDecode(b *testing.B, ev sse.Event) {
	d := NewDecoder()
	out := make([]providers.Event, 0, 8)
	d.Decode(sse.Event{Data: `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f"}}]}}]}`}, out)
	b.ReportAllocs()
	b.SetBytes(int64(len(ev.Data)))
	for b.Loop() {
		evs, _, err := d.Decode(ev, out[:0])
		if err != nil || len(evs) != 1 {
			b.Fatal(err, evs)
		}
	}
}

func BenchmarkDecodeText(b *testing.B)     { benchDecode(b, textChunk) }
func BenchmarkDecodeToolArgs(b *testing.B) { benchDecode(b, toolChunk) }

// BenchmarkStream measures a whole response through the provider: SSE
// reading, decoding and the stream's bookkeeping, per event.
func BenchmarkStream(b *testing.B) {
	var body []byte
	const n = 1000
	for range n {
		body = append(body, "data: "+textChunk.Data+"\n\n"...)
	}
	body = append(body, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"...)
	p, err := NewLocalProvider(LocalOptions{DefaultModel: "m", Executor: pt.NewReplay(pt.Stream(body))})
	if err != nil {
		b.Fatal(err)
	}
	pt.BenchStream(b, p, hello(), body, n+1, n+1)
}

// A server that gives neither call ids nor a response id still gets call
// ids unique across responses, so that each tool result names its call.
func TestLocalCallIDs(t *testing.T) {
	chunk := sse.Event{Data: `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"Read","arguments":"{}"}}]}}]}`}
	seen := map[string]bool{}
	for range 3 {
		evs, _, err := NewDecoder().Decode(chunk, nil)
		if err != nil || len(evs) < 1 || evs[0].Type != providers.EventToolCallStart || evs[0].ID == "" || seen[evs[0].ID] {
			t.Fatalf("%+v %v (seen %v)", evs, err, seen)
		}
		seen[evs[0].ID] = true
	}
}

// usageStream is a stream whose last chunk, after the finish reason,
// reports usage, as stream_options.include_usage asks.
func usageStream(usage string) string {
	return "data: {\"id\":\"c-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"c-1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"id\":\"c-1\",\"choices\":[],\"usage\":" + usage + "}\n\n" +
		"data: [DONE]\n\n"
}

// usageCases: cache hits come as prompt_tokens_details.cached_tokens, or
// as the reasoning API's prompt_cache_hit_tokens; prompt_tokens counts
// them already.
var usageCases = []pt.UsageCase{
	pt.Usage("cached tokens in the details", usageStream(`{"prompt_tokens":2048,"completion_tokens":30,"total_tokens":2078,"prompt_tokens_details":{"cached_tokens":1920,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":12}}`),
		providers.Usage{InputTokens: 2048, OutputTokens: 30, CacheReadTokens: 1920, ReasoningTokens: 12}),
	pt.Usage("the reasoning API's hit count", usageStream(`{"prompt_tokens":1500,"completion_tokens":20,"total_tokens":1520,"prompt_cache_hit_tokens":1280,"prompt_cache_miss_tokens":220}`),
		providers.Usage{InputTokens: 1500, OutputTokens: 20, CacheReadTokens: 1280}),
	pt.Usage("both: the details win", usageStream(`{"prompt_tokens":1500,"completion_tokens":20,"prompt_cache_hit_tokens":1280,"prompt_cache_miss_tokens":220,"prompt_tokens_details":{"cached_tokens":1024}}`),
		providers.Usage{InputTokens: 1500, OutputTokens: 20, CacheReadTokens: 1024}),
	pt.Usage("no hit in the details, a hit count", usageStream(`{"prompt_tokens":1500,"completion_tokens":20,"prompt_tokens_details":{"cached_tokens":0},"prompt_cache_hit_tokens":640}`),
		providers.Usage{InputTokens: 1500, OutputTokens: 20, CacheReadTokens: 640}),
	pt.Usage("null details", usageStream(`{"prompt_tokens":9,"completion_tokens":2,"prompt_tokens_details":null,"completion_tokens_details":null}`),
		providers.Usage{InputTokens: 9, OutputTokens: 2}),
	pt.Usage("a negative count is none", usageStream(`{"prompt_tokens":-1,"completion_tokens":2,"prompt_cache_hit_tokens":-5,"prompt_tokens_details":{"cached_tokens":-5}}`),
		providers.Usage{OutputTokens: 2}),
}

// The cache reads reach Usage, whole and at every split.
func TestUsage(t *testing.T) {
	pt.RunUsage(t, func(t testing.TB, ex providers.Executor) providers.Provider {
		p, err := NewLocalProvider(LocalOptions{DefaultModel: "m", Executor: ex})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}, hello, usageCases)
}
