package messages

import (
	"testing"

	"agent/internal/sse"
	"agent/providers"
	pt "agent/providers/providertest"
)

func FuzzDecoder(f *testing.F) {
	pt.SeedFromTestdata(f)
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
