package main

// Benchmarks that run the built binary (issue targets: `agent --version`
// and `agent mcp list` with 50 server definitions each under 5 ms wall and
// 12 MB peak RSS). Run: go test -run '^$' -bench Binary .
//
// The runs go through testdata/rssprobe, which reports the true peak RSS
// of each child (see its doc comment).

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"agent/internal/fakemodel"
)

func buildProbe(b *testing.B) string {
	p := filepath.Join(b.TempDir(), "rssprobe")
	if out, err := exec.Command("go", "build", "-o", p, "./testdata/rssprobe").CombinedOutput(); err != nil {
		b.Fatalf("building rssprobe: %v\n%s", err, out)
	}
	return p
}

func benchBinary(b *testing.B, s *sandbox, args ...string) {
	bin := agentBinary(b)
	probe := buildProbe(b)
	b.ResetTimer()
	cmd := exec.Command(probe, append([]string{strconv.Itoa(b.N), bin}, args...)...)
	cmd.Dir = s.Work
	cmd.Env = []string{"HOME=" + s.Home, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("%v: %v", args, err)
	}
	var ns, rssKiB int64
	if _, err := fmt.Sscan(string(out), &ns, &rssKiB); err != nil {
		b.Fatalf("probe output %q: %v", out, err)
	}
	b.ReportMetric(float64(ns)/1e6, "ms/run")
	b.ReportMetric(float64(rssKiB)/1024, "peak-RSS-MiB")
}

func BenchmarkBinaryVersion(b *testing.B) {
	benchBinary(b, newSandbox(b), "--version")
}

func BenchmarkBinaryMCPList50(b *testing.B) {
	s := newSandbox(b)
	var defs []string
	for i := range 50 {
		switch i % 3 {
		case 0:
			defs = append(defs, fmt.Sprintf(`"srv%02d": {"type": "stdio", "command": "server-%d", "args": ["--port", "${PORT:-%d}"], "env": {"TOKEN": "${TOKEN}"}}`, i, i, 9000+i))
		case 1:
			defs = append(defs, fmt.Sprintf(`"srv%02d": {"type": "http", "url": "https://mcp%d.example.com/mcp", "oauth": {"scopes": ["read"]}}`, i, i))
		default:
			defs = append(defs, fmt.Sprintf(`"srv%02d": {"type": "streamable-http", "url": "https://h%d.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}`, i, i))
		}
	}
	s.write("~/.agent/settings.json", `{"mcpServers": {`+strings.Join(defs, ",\n")+`}}`)
	benchBinary(b, s, "mcp", "list")
}

// BenchmarkBinaryPrint: a whole print-mode run against a fake model on
// loopback (issue target: peak RSS under 20 MB).
func BenchmarkBinaryPrint(b *testing.B) {
	srv := fakemodel.New()
	defer srv.Close()
	s := printBenchSandbox(b, srv.URL())
	benchBinary(b, s, "-p", "what is the answer?")
}

// printBenchSandbox is a trusted workspace whose default model is at url.
func printBenchSandbox(b *testing.B, url string) *sandbox {
	s := newSandbox(b)
	s.write("~/.agent/settings.json", `{"defaultModel": {"provider": "local", "model": "fake-model"},
		"providers": {"local": {"baseURL": "`+url+`"}}}`)
	if r := s.run("", "trust", "--yes"); r.Code != 0 {
		b.Fatalf("trust: %+v", r)
	}
	return s
}

// firstByteListener records when the first byte of each connection
// arrives.
type firstByteListener struct {
	net.Listener
	arrived chan time.Time
}

func (l *firstByteListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &firstByteConn{Conn: c, arrived: l.arrived}, nil
}

type firstByteConn struct {
	net.Conn
	arrived chan time.Time
	once    sync.Once
}

func (c *firstByteConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.once.Do(func() {
			select {
			case c.arrived <- time.Now():
			default:
			}
		})
	}
	return n, err
}

// BenchmarkBinaryPrintFirstByte: from starting `agent -p` to the first
// byte of the model request arriving on loopback (issue target: under
// 10 ms).
func BenchmarkBinaryPrintFirstByte(b *testing.B) {
	arrived := make(chan time.Time, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"id\":\"1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	srv.Listener = &firstByteListener{Listener: srv.Listener, arrived: arrived}
	srv.Start()
	defer srv.Close()
	s := printBenchSandbox(b, srv.URL+"/v1")
	bin := agentBinary(b)
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin, "-p", "what is the answer?")
		cmd.Dir = s.Work
		cmd.Env = []string{"HOME=" + s.Home, "PATH=" + os.Getenv("PATH")}
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		select {
		case t := <-arrived:
			total += t.Sub(start)
		case <-time.After(30 * time.Second):
			b.Fatal("no request arrived")
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-to-first-byte")
}
