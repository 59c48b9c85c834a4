package messages

import (
	"testing"

	"agent/internal/sse"
	"agent/providers"
	pt "agent/providers/providertest"
)

func FuzzDecoder(f *testing.F) {
	pt.SeedFromTestdata(f)
	pt.SeedUsage(f, usageCases)
	f.Add([]byte("data: {\"type\":\"content_block_delta\",\"index\":99,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n"))
	f.Add([]byte("data: {\"type\":\"content_block_start\",\"index\":-1,\"content_block\":{}}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pt.CheckDecoder(t, func() providers.Decoder { return NewDecoder() }, data)
	})
}

var textEvent = sse.Event{Type: "content_block_delta", Data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" the"}}`}

var toolEvent = sse.Event{Type: "content_block_delta", Data: `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"path\": \"a"}}`}

func benchDecode(b *testing.B, ev sse.Event) {
	d := NewDecoder()
	out := make([]providers.Event, 0, 8)
	d.Decode(sse.Event{Data: `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`}, out)
	d.Decode(sse.Event{Data: `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}`}, out)
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
	body := []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	const n = 1000
	for range n {
		body = append(body, "event: content_block_delta\ndata: "+textEvent.Data+"\n\n"...)
	}
	body = append(body, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1000}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...)
	p, err := New(Options{APIKey: "k", BaseURL: "https://api.example.com", Executor: pt.NewReplay(pt.Stream(body))})
	if err != nil {
		b.Fatal(err)
	}
	pt.BenchStream(b, p, hello(), body, n+2, n+6)
}

// usageStream is a stream that reports start at message_start and delta
// at message_delta.
func usageStream(start, delta string) string {
	return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":" + start + "}}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":" + delta + "}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
}

// usageCases: the API reports the uncached input apart from the cache
// reads and writes; Usage.InputTokens counts all three.
var usageCases = []pt.UsageCase{
	pt.Usage("reads and writes at the start", usageStream(`{"input_tokens":20,"cache_creation_input_tokens":1500,"cache_read_input_tokens":8000,"output_tokens":1}`, `{"output_tokens":40}`),
		providers.Usage{InputTokens: 9520, OutputTokens: 40, CacheReadTokens: 8000, CacheWriteTokens: 1500}),
	pt.Usage("the last delta repeats the input side", usageStream(`{"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}`, `{"input_tokens":20,"cache_creation_input_tokens":100,"cache_read_input_tokens":9000,"output_tokens":40}`),
		providers.Usage{InputTokens: 9120, OutputTokens: 40, CacheReadTokens: 9000, CacheWriteTokens: 100}),
	pt.Usage("null counts and the breakdown by lifetime", usageStream(`{"input_tokens":5,"cache_creation_input_tokens":null,"cache_read_input_tokens":700,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":1}`, `{"output_tokens":2}`),
		providers.Usage{InputTokens: 705, OutputTokens: 2, CacheReadTokens: 700}),
	pt.Usage("a write alone", usageStream(`{"input_tokens":3,"cache_creation_input_tokens":4096,"output_tokens":1}`, `{"output_tokens":2}`),
		providers.Usage{InputTokens: 4099, OutputTokens: 2, CacheWriteTokens: 4096}),
	pt.Usage("no cache counts", usageStream(`{"input_tokens":12,"output_tokens":1}`, `{"output_tokens":7}`),
		providers.Usage{InputTokens: 12, OutputTokens: 7}),
}

// The cache reads and writes reach Usage, whole and at every split.
func TestUsage(t *testing.T) {
	pt.RunUsage(t, func(t testing.TB, ex providers.Executor) providers.Provider { return newWith(t, Options{Executor: ex}) }, hello, usageCases)
}
