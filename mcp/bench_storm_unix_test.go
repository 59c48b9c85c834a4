//go:build unix

package mcp

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"agent/mcp/jsonrpc"
)

// BenchmarkListChangedStorm is the figure of docs/performance.md, "A
// list_changed storm": a server sends 10 000 notifications/tools/list_changed
// within one second over a real pipe (stdio framing); the client must fetch
// the list once, and the whole storm (reading, decoding, coalescing, the one
// refresh) must cost under 50 ms of CPU. The notifications are written as
// 100 bursts of 100, 9 ms apart, each burst one write, so that the server's
// side costs next to nothing and the CPU measured (the process's, from
// getrusage) is the client's.
func BenchmarkListChangedStorm(b *testing.B) {
	const storm, bursts = 10000, 100
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n")
	burst := bytes.Repeat(note, storm/bursts)
	var refreshes, cpu float64
	for b.Loop() {
		r1, w1, r2, w2 := osPipes(b)
		srv := newFakeServer(fakeConfig{versions: legacyOnly, listChanged: true})
		srvConn, _ := srv.serveStream(jsonrpc.NewStream(r2, w1, jsonrpc.ReaderOptions{}))
		var changed atomic.Int32
		c, err := Connect(context.Background(), NewStreamTransport(r1, w2, 0), ClientOptions{OnToolsChanged: func([]Tool) { changed.Add(1) }})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.ListTools(context.Background()); err != nil {
			b.Fatal(err)
		}
		before := strings.Count(strings.Join(srv.methods(), " "), "tools/list")
		cpu0 := cpuTime()
		for range bursts {
			if _, err := w1.Write(burst); err != nil {
				b.Fatal(err)
			}
			time.Sleep(9 * time.Millisecond)
		}
		deadline := time.Now().Add(3 * time.Second)
		for changed.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		cpu += float64(cpuTime()-cpu0) / float64(time.Millisecond)
		time.Sleep(1500 * time.Millisecond) // a second refresh would come now
		refreshes += float64(strings.Count(strings.Join(srv.methods(), " "), "tools/list") - before)
		if changed.Load() != 1 {
			b.Fatalf("%d refreshes reported", changed.Load())
		}
		c.Close()
		srvConn.Close()
	}
	b.ReportMetric(refreshes/float64(b.N), "refreshes/op")
	b.ReportMetric(cpu/float64(b.N), "cpu-ms/op")
}

// cpuTime is the user and system time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
