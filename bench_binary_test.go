package main

// Benchmarks that run the built binary (issue targets: `agent --version`
// and `agent mcp list` with 50 server definitions each under 5 ms wall and
// 12 MB peak RSS). Run: go test -run x -bench Binary .
//
// The runs go through testdata/rssprobe, which reports the true peak RSS
// of each child (see its doc comment).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
