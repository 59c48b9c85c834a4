//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// BenchmarkSpawnTrue times what a session's Bash tool pays per confined
// command, without the agent's own start (docs/performance.md,
// "Sandbox"): true run plainly, then confined by the box with the
// namespaces this machine offers and by Landlock and seccomp alone,
// interleaved. It reports the medians and the confined spawns' overhead.
func BenchmarkSpawnTrue(b *testing.B) {
	trueBin, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true")
	}
	sup := Detect()
	if !sup.Filesystem() {
		b.Skip("no Landlock here")
	}
	root := b.TempDir()
	home, ws := filepath.Join(root, "home"), filepath.Join(root, "ws")
	os.MkdirAll(ws, 0o755)
	noNS := sup
	noNS.Namespaces, noNS.NamespacesKnown, noNS.NamespaceErr = false, true, "benchmark"
	boxes := map[string]*Box{}
	for name, s := range map[string]*Support{"ns": nil, "landlock": &noNS} {
		box, err := New(Options{Home: home, Workspace: ws, ID: "bench-" + name, Support: s})
		if err != nil {
			b.Fatal(err)
		}
		defer box.Close()
		boxes[name] = box
	}
	build := func() *exec.Cmd {
		c := exec.Command(trueBin)
		c.Dir = ws
		return c
	}
	timeIt := func(box *Box) time.Duration {
		start := time.Now()
		if box == nil {
			if err := build().Run(); err != nil {
				b.Fatal(err)
			}
			return time.Since(start)
		}
		run, err := box.Start(build, Request{Label: "bench", Profile: Profile{Mode: WorkspaceWrite}, Guard: true})
		if err != nil {
			b.Fatal(err)
		}
		run.Cmd.Wait()
		run.Finish(run.Cmd.ProcessState, "")
		return time.Since(start)
	}
	timeIt(boxes["ns"]) // the first spawn learns whether namespaces work
	var plain, ns, ll []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		plain = append(plain, timeIt(nil))
		ns = append(ns, timeIt(boxes["ns"]))
		ll = append(ll, timeIt(boxes["landlock"]))
	}
	b.StopTimer()
	median := func(ds []time.Duration) float64 {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return float64(ds[len(ds)/2]) / 1e6
	}
	p := median(plain)
	b.ReportMetric(p, "ms-true")
	b.ReportMetric(median(ns)-p, "ms-overhead-"+boxes["ns"].Support().Tier())
	b.ReportMetric(median(ll)-p, "ms-overhead-landlock+seccomp")
}
