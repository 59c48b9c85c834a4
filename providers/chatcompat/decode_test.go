package chatcompat

import (
	"testing"

	"agent/internal/sse"
	"agent/providers"
	pt "agent/providers/providertest"
)

func FuzzDecoder(f *testing.F) {
	pt.SeedFromTestdata(f)
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
