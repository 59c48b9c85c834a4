package genai

import (
	"testing"

	"agent/internal/sse"
	"agent/providers"
	pt "agent/providers/providertest"
)

func FuzzDecoder(f *testing.F) {
	pt.SeedFromTestdata(f)
	f.Add([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"inlineData\":{\"data\":\"!!\"}}]}}]}\n\n"))
	f.Add([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\",\"args\":null}}]},\"finishReason\":\"STOP\"}]}\n\n"))
	f.Add([]byte("data: [{\"error\":{}}]\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pt.CheckDecoder(t, func() providers.Decoder { return NewDecoder() }, data)
		ParseError(data)
	})
}

var textEvent = sse.Event{Data: `{"candidates":[{"content":{"parts":[{"text":" the"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":12,"totalTokenCount":20},"modelVersion":"gemini-2.5-flash","responseId":"abcdefghijklmnopqrstuv"}`}

var toolEvent = sse.Event{Data: `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"Read","args":{"path":"a \"b\".go"}}}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"abcdefghijklmnopqrstuv"}`}

func benchDecode(b *testing.B, ev sse.Event, n int) {
	d := NewDecoder()
	out := make([]providers.Event, 0, 8)
	b.ReportAllocs()
	b.SetBytes(int64(len(ev.Data)))
	for b.Loop() {
		evs, _, err := d.Decode(ev, out[:0])
		if err != nil || len(evs) != n {
			b.Fatal(err, evs)
		}
	}
}

func BenchmarkDecodeText(b *testing.B)     { benchDecode(b, textEvent, 1) }
func BenchmarkDecodeToolCall(b *testing.B) { benchDecode(b, toolEvent, 3) }

// BenchmarkStream measures a whole response through the provider: SSE
// reading, decoding and the stream's bookkeeping, per event.
func BenchmarkStream(b *testing.B) {
	var body []byte
	const n = 1000
	for range n {
		body = append(body, "data: "+textEvent.Data+"\n\n"...)
	}
	body = append(body, "data: {\"candidates\":[{\"content\":{\"parts\":[],\"role\":\"model\"},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":8,\"candidatesTokenCount\":1000}}\n\n"...)
	p, err := New(Options{APIKey: "k", Executor: pt.NewReplay(pt.Stream(body))})
	if err != nil {
		b.Fatal(err)
	}
	pt.BenchStream(b, p, hello(), body, n+2, n+1)
}
