package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"testing"

	"agent/mcp/jsonrpc"
)

// Round trips of tools/call against the in-process fake server, the
// figures of docs/performance.md (targets: under 50 µs over stdio-like
// pipes, under 150 µs over loopback HTTP).

var benchArgs = json.RawMessage(`{"text":"hello"}`)

func benchCalls(b *testing.B, c *Client) {
	ctx := context.Background()
	if _, err := c.CallTool(ctx, "echo", benchArgs, CallOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := c.CallTool(ctx, "echo", benchArgs, CallOptions{})
		if err != nil || res.Content[0].Text != "hello" {
			b.Fatal(res, err)
		}
	}
}

func benchPipes(b *testing.B, versions []string, osPipe bool) {
	var cr, sr io.ReadCloser
	var cw, sw io.WriteCloser
	if osPipe {
		cr, sw, sr, cw = osPipes(b)
	} else {
		r1, w1 := io.Pipe()
		r2, w2 := io.Pipe()
		cr, sw, sr, cw = r1, w1, r2, w2
	}
	srv := newFakeServer(fakeConfig{versions: versions})
	srvConn, _ := srv.serveStream(jsonrpc.NewStream(sr, sw, jsonrpc.ReaderOptions{}))
	defer srvConn.Close()
	c, err := Connect(context.Background(), NewStreamTransport(cr, cw, 0), ClientOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	benchCalls(b, c)
}

func BenchmarkCallToolPipe(b *testing.B) {
	b.Run("io.Pipe/2025-11-25", func(b *testing.B) { benchPipes(b, legacyOnly, false) })
	b.Run("io.Pipe/2026-07-28", func(b *testing.B) { benchPipes(b, nil, false) })
	b.Run("os.Pipe/2025-11-25", func(b *testing.B) { benchPipes(b, legacyOnly, true) })
	b.Run("os.Pipe/2026-07-28", func(b *testing.B) { benchPipes(b, nil, true) })
}

func benchHTTP(b *testing.B, cfg fakeConfig) {
	srv := newFakeServer(cfg)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	tr, err := NewHTTPTransport(HTTPOptions{URL: hs.URL + "/mcp"})
	if err != nil {
		b.Fatal(err)
	}
	c, err := Connect(context.Background(), tr, ClientOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	benchCalls(b, c)
}

func BenchmarkCallToolHTTP(b *testing.B) {
	b.Run("json/2025-11-25", func(b *testing.B) { benchHTTP(b, fakeConfig{versions: legacyOnly, noGet: true}) })
	b.Run("json/2026-07-28", func(b *testing.B) { benchHTTP(b, fakeConfig{}) })
	b.Run("sse/2025-11-25", func(b *testing.B) { benchHTTP(b, fakeConfig{versions: legacyOnly, noGet: true, sse: true}) })
	b.Run("sse/2026-07-28", func(b *testing.B) { benchHTTP(b, fakeConfig{sse: true}) })
}

// osPipes returns two os.Pipe pairs: what the client reads and the server
// writes, then what the server reads and the client writes.
func osPipes(b *testing.B) (cr, sw, sr, cw *os.File) {
	r1, w1, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	r2, w2, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	return r1, w1, r2, w2
}
