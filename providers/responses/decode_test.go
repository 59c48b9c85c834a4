package responses

import (
	"testing"

	"agent/internal/sse"
	"agent/providers"
	pt "agent/providers/providertest"
)

func FuzzDecoder(f *testing.F) {
	pt.SeedFromTestdata(f)
	pt.SeedUsage(f, usageCases)
	f.Add([]byte("data: {\"type\":\"response.output_text.delta\",\"output_index\":99,\"delta\":\"x\"}\n\n"))
	f.Add([]byte("data: {\"type\":\"response.output_item.added\",\"output_index\":-1,\"item\":{}}\n\n"))
	f.Add([]byte("data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"arguments\":{}}}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pt.CheckDecoder(t, func() providers.Decoder { return NewDecoder() }, data)
	})
}

var textEvent = sse.Event{Type: "response.output_text.delta", Data: `{"type":"response.output_text.delta","sequence_number":12,"item_id":"msg_0123456789abcdef0123456789abcdef","output_index":0,"content_index":0,"delta":" the","logprobs":[]}`}

var toolEvent = sse.Event{Type: "response.function_call_arguments.delta", Data: `{"type":"response.function_call_arguments.delta","sequence_number":12,"item_id":"fc_0123456789abcdef0123456789abcdef","output_index":1,"delta":"\"path\": \"a"}`}

func benchDecode(b *testing.B, ev sse.Event) {
	d := NewDecoder()
	out := make([]providers.Event, 0, 8)
	d.Decode(sse.Event{Data: `{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`}, out)
	d.Decode(sse.Event{Data: `{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_1","type":"function_call","call_id":"c","name":"f","arguments":""}}`}, out)
	b.ReportAllocs()
	b.SetBytes(int64(len(ev.Data)))
	for b.Loop() {
		evs, _, err := d.Decode(ev, out[:0])
		if err != nil || len(evs) != 1 {
			b.Fatal(err, evs)
		}
	}
}

func BenchmarkDecodeText(b *testing.B)     { benchDecode(b, textEvent) }
func BenchmarkDecodeToolArgs(b *testing.B) { benchDecode(b, toolEvent) }

// BenchmarkStream measures a whole response through the provider: SSE
// reading, decoding and the stream's bookkeeping, per event.
func BenchmarkStream(b *testing.B) {
	body := []byte("event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\",\"status\":\"in_progress\"}}\n\n" +
		"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"msg_0123456789abcdef0123456789abcdef\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\n")
	const n = 1000
	for range n {
		body = append(body, "event: response.output_text.delta\ndata: "+textEvent.Data+"\n\n"...)
	}
	body = append(body, "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"status\":\"completed\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1000}}}\n\n"...)
	p, err := New(Options{APIKey: "k", Executor: pt.NewReplay(pt.Stream(body))})
	if err != nil {
		b.Fatal(err)
	}
	pt.BenchStream(b, p, hello(), body, n+2, n+3)
}

// usageStream is a stream that ends with typ carrying usage.
func usageStream(typ, usage string) string {
	return "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\n" +
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"hi\"}\n\n" +
		"event: " + typ + "\ndata: {\"type\":\"" + typ + "\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"usage\":" + usage + "}}\n\n"
}

// usageCases: cache hits come as input_tokens_details.cached_tokens;
// input_tokens counts them already, and the API reports no writes.
var usageCases = []pt.UsageCase{
	pt.Usage("cached tokens", usageStream("response.completed", `{"input_tokens":9000,"input_tokens_details":{"cached_tokens":8704},"output_tokens":50,"output_tokens_details":{"reasoning_tokens":10},"total_tokens":9050}`),
		providers.Usage{InputTokens: 9000, OutputTokens: 50, CacheReadTokens: 8704, ReasoningTokens: 10}),
	pt.Usage("an incomplete response", usageStream("response.incomplete", `{"input_tokens":4096,"input_tokens_details":{"cached_tokens":3072},"output_tokens":100}`),
		providers.Usage{InputTokens: 4096, OutputTokens: 100, CacheReadTokens: 3072}),
	pt.Usage("no details", usageStream("response.completed", `{"input_tokens":12,"output_tokens":3}`),
		providers.Usage{InputTokens: 12, OutputTokens: 3}),
	pt.Usage("null details", usageStream("response.completed", `{"input_tokens":12,"input_tokens_details":null,"output_tokens":3,"output_tokens_details":null}`),
		providers.Usage{InputTokens: 12, OutputTokens: 3}),
}

// The cache reads reach Usage, whole and at every split.
func TestUsage(t *testing.T) {
	pt.RunUsage(t, func(t testing.TB, ex providers.Executor) providers.Provider { return newWith(t, Options{Executor: ex}) }, hello, usageCases)
}
