package messages

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"agent/internal/sse"
	"agent/providers"
	pt "agent/providers/providertest"
)

// decodeAll runs the pure decoder over an event stream and checks the
// stream invariants: known event types only, nothing after the end marker
// or an error, and Finish last.
func decodeAll(t testing.TB, data []byte) {
	rd := sse.NewReader(bytes.NewReader(data), sse.Options{MaxLine: 1 << 16})
	d := NewDecoder()
	var out []providers.Event
	check := func(evs []providers.Event) {
		for i, ev := range evs {
			if ev.Type < providers.EventTextDelta || ev.Type > providers.EventFinish {
				t.Fatalf("unknown event type %d", ev.Type)
			}
			if ev.Type == providers.EventFinish && i != len(evs)-1 {
				t.Fatalf("finish is not last: %+v", evs)
			}
		}
	}
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			evs, _ := d.End(out[:0])
			check(evs)
			return
		}
		if err != nil {
			return
		}
		evs, done, err := d.Decode(ev, out[:0])
		check(evs)
		if done || err != nil {
			if done && (len(evs) == 0 || evs[len(evs)-1].Type != providers.EventFinish) {
				t.Fatalf("done without finish: %+v", evs)
			}
			return
		}
		for _, e := range evs {
			if e.Type == providers.EventFinish {
				t.Fatalf("finish before the end marker")
			}
		}
		out = evs
	}
}

func FuzzDecoder(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.sse")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("data: {\"type\":\"content_block_delta\",\"index\":99,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n"))
	f.Add([]byte("data: {\"type\":\"content_block_start\",\"index\":-1,\"content_block\":{}}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeAll(t, data)
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
	req := hello()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		s, err := p.Chat(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		evs := 0
		for {
			_, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			evs++
		}
		if evs != n+2 {
			b.Fatal(evs)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(n+6)), "ns/event")
}
