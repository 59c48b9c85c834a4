package jsonrpc

import "testing"

// Typical traffic of an MCP session: a tools/call request and its result
// (text content with escapes), each decoded as a receiver does.
var (
	benchRequest  = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"docs/design.md","limit":200,"offset":0},"_meta":{"progressToken":"p-42"}}}`)
	benchResponse = []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"# Design notes\n\nDeliberate departures from \"architecture.md\" and the reasons for them.\n\tcaf\u00e9 \ud83d\ude00"}],"isError":false,"structuredContent":{"lines":3,"ratio":0.5e1}}}`)
)

func benchDecode(b *testing.B, msg []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if _, err := Decode(msg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeRequest(b *testing.B)  { benchDecode(b, benchRequest) }
func BenchmarkDecodeResponse(b *testing.B) { benchDecode(b, benchResponse) }
