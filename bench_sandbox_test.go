package main

// The sandbox's start-up cost (docs/performance.md, "Sandbox"; issue
// target: `agent sandbox run -- true` within 4 ms of `true` run
// unconfined, median). Run: go test -run '^$' -bench SandboxRun .

import (
	"os"
	"os/exec"
	"sort"
	"testing"
	"time"
)

func BenchmarkSandboxRunTrue(b *testing.B) {
	needSandbox(b, false)
	bin := agentBinary(b)
	s := newSandbox(b)
	trueBin, err := exec.LookPath("true")
	if err != nil {
		b.Fatal(err)
	}
	env := []string{"HOME=" + s.Home, "PATH=" + os.Getenv("PATH")}
	timeIt := func(name string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = s.Work, env
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s %v: %v", name, args, err)
		}
		return time.Since(start)
	}
	// Warm the page cache and the private folders once.
	timeIt(bin, "sandbox", "run", "--", trueBin)
	// AGENT_BENCH_BASE names another build (an earlier commit's) to run
	// interleaved too, for before-and-after figures on a noisy machine
	// (docs/performance.md, "Sandbox").
	base := os.Getenv("AGENT_BENCH_BASE")
	var plain, confined, full, baseline []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Interleaved, so that the machine's load falls on all alike.
		plain = append(plain, timeIt(trueBin))
		confined = append(confined, timeIt(bin, "sandbox", "run", "--", trueBin))
		full = append(full, timeIt(bin, "sandbox", "run", "--mode", "danger-full-access", "--", trueBin))
		if base != "" {
			baseline = append(baseline, timeIt(base, "sandbox", "run", "--", trueBin))
		}
	}
	b.StopTimer()
	// The median is the target's measure; the tenth percentile shows what
	// a machine without other load gives (the runs a busy neighbour did
	// not slow down).
	quantile := func(ds []time.Duration, q float64) float64 {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return float64(ds[int(float64(len(ds)-1)*q)]) / 1e6
	}
	p, c, f := quantile(plain, 0.5), quantile(confined, 0.5), quantile(full, 0.5)
	b.ReportMetric(p, "ms-true")
	b.ReportMetric(c, "ms-sandbox-run")
	b.ReportMetric(f, "ms-full-access")
	b.ReportMetric(c-p, "ms-overhead")
	b.ReportMetric(quantile(confined, 0.1)-quantile(plain, 0.1), "ms-overhead-p10")
	if base != "" {
		b.ReportMetric(quantile(baseline, 0.5)-p, "ms-overhead-base")
	}
}
