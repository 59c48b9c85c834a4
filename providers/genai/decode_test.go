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
	pt.SeedUsage(f, usageCases)
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

// usageStream is a stream of two chunks that report usage1 and usage2:
// each chunk's usage replaces the one before.
func usageStream(usage1, usage2 string) string {
	return "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}],\"role\":\"model\"},\"index\":0}],\"usageMetadata\":" + usage1 + "}\n\n" +
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\".\"}],\"role\":\"model\"},\"index\":0,\"finishReason\":\"STOP\"}],\"usageMetadata\":" + usage2 + "}\n\n"
}

// usageCases: cache hits (implicit caching) come as
// cachedContentTokenCount; promptTokenCount counts them already.
var usageCases = []pt.UsageCase{
	pt.Usage("cached tokens in the last chunk", usageStream(`{"promptTokenCount":5000,"candidatesTokenCount":1,"totalTokenCount":5001}`, `{"promptTokenCount":5000,"candidatesTokenCount":9,"totalTokenCount":5009,"cachedContentTokenCount":4096}`),
		providers.Usage{InputTokens: 5000, OutputTokens: 9, CacheReadTokens: 4096}),
	pt.Usage("cached tokens and thoughts", usageStream(`{"promptTokenCount":3000,"cachedContentTokenCount":2048,"thoughtsTokenCount":40}`, `{"promptTokenCount":3000,"candidatesTokenCount":7,"thoughtsTokenCount":40,"cachedContentTokenCount":2048,"promptTokensDetails":[{"modality":"TEXT","tokenCount":3000}],"cacheTokensDetails":[{"modality":"TEXT","tokenCount":2048}]}`),
		providers.Usage{InputTokens: 3000, OutputTokens: 47, CacheReadTokens: 2048, ReasoningTokens: 40}),
	pt.Usage("no cached tokens", usageStream(`{"promptTokenCount":8,"candidatesTokenCount":1}`, `{"promptTokenCount":8,"candidatesTokenCount":2}`),
		providers.Usage{InputTokens: 8, OutputTokens: 2}),
}

// The cache reads reach Usage, whole and at every split.
func TestUsage(t *testing.T) {
	pt.RunUsage(t, func(t testing.TB, ex providers.Executor) providers.Provider { return newWith(t, Options{Executor: ex}) }, hello, usageCases)
}
