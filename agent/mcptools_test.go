package agent

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"agent/config"
	"agent/internal/fakemodel"
	"agent/mcp"
)

var (
	echoOnce sync.Once
	echoDir  string // removed by TestMain
	echoPath string
	echoErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if echoDir != "" {
		os.RemoveAll(echoDir)
	}
	os.Exit(code)
}

// mcpechoBinary builds testdata/mcpecho, a small stdio MCP server.
func mcpechoBinary(t *testing.T) string {
	t.Helper()
	echoOnce.Do(func() {
		echoDir, echoErr = os.MkdirTemp("", "mcpecho")
		if echoErr != nil {
			return
		}
		echoPath = filepath.Join(echoDir, "mcpecho")
		out, err := exec.Command("go", "build", "-o", echoPath, "../testdata/mcpecho").CombinedOutput()
		if err != nil {
			echoErr = err
			t.Logf("%s", out)
		}
	})
	if echoErr != nil {
		t.Fatalf("building mcpecho: %v", echoErr)
	}
	return echoPath
}

// memStore is an embedder's approval store.
type memStore struct {
	mu sync.Mutex
	m  map[string]mcp.Record
}

func (s *memStore) Load(name string) (mcp.Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.m[name]
	return r, ok, nil
}

func (s *memStore) Save(name string, r mcp.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[name] = r
	return nil
}

type mcpSetup struct {
	home, ws, log string
	srv           *fakemodel.Server
	opts          StartOptions
	store         *memStore
}

// newMCPSetup: a trusted workspace whose user settings define the stdio
// server "echo" (mcpecho) plus extra settings keys, approved in an
// embedder's store, with a stdio authority for exactly that definition.
func newMCPSetup(t *testing.T, extra string, replies ...fakemodel.Reply) *mcpSetup {
	t.Helper()
	return newMCPSetupEnv(t, nil, extra, replies...)
}

// newMCPSetupEnv is newMCPSetup with more environment for the server.
func newMCPSetupEnv(t *testing.T, env map[string]string, extra string, replies ...fakemodel.Reply) *mcpSetup {
	t.Helper()
	bin := mcpechoBinary(t)
	st := &mcpSetup{srv: fakemodel.New(replies...), store: &memStore{m: map[string]mcp.Record{}}}
	t.Cleanup(st.srv.Close)
	st.home, st.ws = startSandbox(t, true)
	st.log = filepath.Join(t.TempDir(), "methods.log")
	serverEnv := map[string]string{"MCPECHO_LOG": st.log}
	for k, v := range env {
		serverEnv[k] = v
	}
	def := map[string]any{"type": "stdio", "command": bin, "env": serverEnv}
	b, _ := json.Marshal(map[string]any{"echo": def})
	settings := `{"mcpServers": ` + string(b) + extra + `}`
	os.MkdirAll(filepath.Join(st.home, ".agent"), 0o700)
	if err := os.WriteFile(filepath.Join(st.home, ".agent", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	// Approve it the way an embedder's earlier session did.
	ws, _ := config.RealPath(st.ws)
	s := config.Load(config.Options{Home: st.home, Workspace: ws, Trusted: true, Lookup: lookupNone})
	st.store.m["echo"] = mcp.Record{State: mcp.Approved, Fingerprint: mcp.Fingerprint(s.Servers["echo"], ws)}
	st.opts = StartOptions{Home: st.home, Workspace: st.ws, LookupEnv: lookupNone, Provider: "local", Model: "m", BaseURL: st.srv.URL(),
		Headless: true, Overrides: StartOverrides{NoTranscript: true}, MCPApprovalStore: st.store,
		MCPStdioAuthorities: map[string]mcp.StdioAuthority{"echo": {Command: bin, Env: serverEnv}}}
	return st
}

func toolNames(body []byte) []string {
	var req struct {
		Tools []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
	}
	json.Unmarshal(body, &req)
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Function.Name)
	}
	return out
}

// TestStartMCPStdio: with an approval store and a stdio authority the
// approved server connects at startup (docs/reference/mcp.md, "What
// connects and when", rule 3); its tools are offered as echo__*, follow the
// permission rules (a deny rule removes one, an allow rule lets one run
// headless), and the model can read /mcp status.
func TestStartMCPStdio(t *testing.T) {
	st := newMCPSetup(t, `, "permissions": {"allow": ["echo__*"], "deny": ["echo__fail"]}`,
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "echo__echo", Args: `{"text":"hello"}`}, {ID: "c2", Name: "MCPStatus", Args: `{}`}}},
		fakemodel.Reply{Text: "done"})
	c, err := Start(t.Context(), st.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Session.Run(t.Context(), "use the server")
	if err != nil || res.Text != "done" {
		t.Fatalf("%+v %v", res, err)
	}
	reqs := st.srv.Requests()
	names := strings.Join(toolNames(reqs[0]), ",")
	if !strings.Contains(names, "echo__echo") || !strings.Contains(names, "echo__slow") || strings.Contains(names, "echo__fail") || !strings.Contains(names, "MCPStatus") {
		t.Fatalf("offered %s", names)
	}
	second := string(reqs[1])
	if !strings.Contains(second, "echo: hello") {
		t.Fatalf("the server's answer did not reach the model: %s", second)
	}
	if !strings.Contains(second, `echo\tapproved\tuser\tstdio\tconnected, 3 tools`) {
		t.Fatalf("status tool: %s", second)
	}
}

// TestStartMCPHeadlessDenied: without an allow rule, a headless session
// denies an MCP call naming the rule that would allow it.
func TestStartMCPHeadlessDenied(t *testing.T) {
	st := newMCPSetup(t, "",
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "echo__echo", Args: `{"text":"hello"}`}}},
		fakemodel.Reply{Text: "denied"})
	c, err := Start(t.Context(), st.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Session.Run(t.Context(), "use the server")
	if second := string(st.srv.Requests()[1]); !strings.Contains(second, "echo__echo") || !strings.Contains(second, "denied") || strings.Contains(second, "echo: hello") {
		t.Fatalf("%s", second)
	}
}

// TestStartMCPNotConnected: without the authority, or without the store's
// approval, the stdio server does not connect, and approving it in the
// session does not connect it either (docs/reference/mcp.md, "What connects
// and when", rules 1 and 2).
func TestStartMCPNotConnected(t *testing.T) {
	st := newMCPSetup(t, "", fakemodel.Reply{Text: "a"})
	noAuth := st.opts
	noAuth.MCPStdioAuthorities = nil
	c, err := Start(t.Context(), noAuth)
	if err != nil {
		t.Fatal(err)
	}
	if l := c.MCP.Status(); l[0].State != mcp.Approved || l[0].Reason != mcp.ReasonMissingAuthority {
		t.Fatalf("%+v", l)
	}
	c.Close()

	noStore := st.opts
	noStore.MCPApprovalStore = nil
	c, err = Start(t.Context(), noStore)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if l := c.MCP.Status(); l[0].State != mcp.Pending {
		t.Fatalf("%+v", l)
	}
	if err := c.MCP.Approve("echo"); err != nil {
		t.Fatal(err)
	}
	if l := c.MCP.Status(); l[0].State != mcp.Approved || strings.HasPrefix(l[0].Reason, "connected") {
		t.Fatalf("approve connected the server: %+v", l)
	}
	if len(c.MCP.Tools()) != 0 {
		t.Fatal("tools after approve")
	}
	if data, _ := os.ReadFile(st.log); len(data) != 0 {
		t.Fatalf("the server process ran: %s", data)
	}
}

// TestMCPHandoff: a call that runs past autoBackgroundMs becomes a
// background task; the turn goes on; the result arrives as a background
// event and reaches the model with the next prompt. Print mode (no
// handoff) waits for the call.
func TestMCPHandoff(t *testing.T) {
	st := newMCPSetup(t, `, "permissions": {"allow": ["echo__*"]}, "mcp": {"autoBackgroundMs": 100, "callTimeoutMs": 20000}`,
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "echo__slow", Args: `{"text":"late","ms":1500}`}}},
		fakemodel.Reply{Text: "started it"},
		fakemodel.Reply{Text: "got it"})
	c, err := Start(t.Context(), st.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bg := make(chan string, 1)
	c.Session.Subscribe(func(ev Event) {
		if ev.Kind == EventBackground {
			bg <- ev.Text
		}
	})
	res, err := c.Session.Run(t.Context(), "run the slow one")
	if err != nil || res.Text != "started it" {
		t.Fatalf("%+v %v", res, err)
	}
	if second := string(st.srv.Requests()[1]); !strings.Contains(second, "background task 1") {
		t.Fatalf("%s", second)
	}
	select {
	case text := <-bg:
		if !strings.Contains(text, "echo: late") {
			t.Fatalf("background event %q", text)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no background event")
	}
	c.Session.Run(t.Context(), "next")
	if third := string(st.srv.Requests()[2]); !strings.Contains(third, "echo: late") {
		t.Fatalf("the background result did not reach the model: %s", third)
	}

	// Print mode: the same call runs to completion inside the turn.
	st2 := newMCPSetup(t, `, "permissions": {"allow": ["echo__*"]}, "mcp": {"autoBackgroundMs": 100, "callTimeoutMs": 20000}`,
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "echo__slow", Args: `{"text":"waited","ms":400}`}}},
		fakemodel.Reply{Text: "ok"})
	st2.opts.NoMCPHandoff = true
	c2, err := Start(t.Context(), st2.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.Session.Run(t.Context(), "run it")
	if second := string(st2.srv.Requests()[1]); !strings.Contains(second, "echo: waited") {
		t.Fatalf("print mode handed off: %s", second)
	}
}

// TestMCPCallTimeout: no call outlives mcp.callTimeoutMs.
func TestMCPCallTimeout(t *testing.T) {
	st := newMCPSetup(t, `, "permissions": {"allow": ["echo__*"]}, "mcp": {"autoBackgroundMs": 0, "callTimeoutMs": 300}`,
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "echo__slow", Args: `{"text":"never","ms":5000}`}}},
		fakemodel.Reply{Text: "gave up"})
	c, err := Start(t.Context(), st.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Session.Run(t.Context(), "run it")
	if second := string(st.srv.Requests()[1]); !strings.Contains(second, "did not finish within 300ms") {
		t.Fatalf("%s", second)
	}
}

// TestMCPServerEndsWithSession: closing the session ends the stdio
// server's process.
func TestMCPServerEndsWithSession(t *testing.T) {
	st := newMCPSetup(t, "")
	c, err := Start(t.Context(), st.opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.MCP.Tools()) != 3 {
		t.Fatalf("%+v", c.MCP.Tools())
	}
	// Find the server's process among our children.
	out, _ := exec.Command("pgrep", "-P", strconv.Itoa(os.Getpid()), "-f", "mcpecho").Output()
	pids := strings.Fields(string(out))
	if len(pids) != 1 {
		t.Skipf("cannot find the server process (pgrep: %q)", out)
	}
	c.Close()
	pid, _ := strconv.Atoi(pids[0])
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("the server process %d still runs after Close", pid)
	}
}

// TestMCPCommand: the /mcp handlers the terminal UI calls.
func TestMCPCommand(t *testing.T) {
	st := newMCPSetup(t, "")
	opts := st.opts
	opts.MCPApprovalStore = nil // the executable: approvals in memory
	c, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := t.Context()
	out, err := c.MCPCommand(ctx, nil)
	if err != nil || out != "echo\tpending\tuser\tstdio\t-\n" {
		t.Fatalf("%q %v", out, err)
	}
	if out2, _ := c.MCPCommand(ctx, []string{"status"}); out2 != out {
		t.Fatalf("%q", out2)
	}
	if _, err := c.MCPCommand(ctx, []string{"revoke", "echo"}); err == nil {
		t.Fatal("revoked a pending server")
	}
	if out, err := c.MCPCommand(ctx, []string{"approve", "echo"}); err != nil || !strings.Contains(out, "Approved MCP server echo") {
		t.Fatalf("%q %v", out, err)
	}
	if out, err := c.MCPCommand(ctx, []string{"revoke", "echo"}); err != nil || !strings.Contains(out, "Revoked") {
		t.Fatalf("%q %v", out, err)
	}
	if out, _ := c.MCPCommand(ctx, nil); !strings.Contains(out, "\trevoked\t") {
		t.Fatalf("%q", out)
	}
	if out, err := c.MCPCommand(ctx, []string{"reject", "echo"}); err != nil || !strings.Contains(out, "Rejected") {
		t.Fatalf("%q %v", out, err)
	}
	for _, bad := range [][]string{{"approve"}, {"approve", "a", "b"}, {"bogus"}, {"status", "x"}} {
		if _, err := c.MCPCommand(ctx, bad); !errors.Is(err, ErrUsage) {
			t.Errorf("%v: err = %v", bad, err)
		}
	}
	if _, err := c.MCPCommand(ctx, []string{"approve", "nope"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("err = %v", err)
	}
}

// TestMCPInstructionsReachTheSystemPrompt: a connected server's
// instructions are appended to the system prompt under its name
// (docs/reference/runtime.md, "System prompt and instruction files").
func TestMCPInstructionsReachTheSystemPrompt(t *testing.T) {
	st := newMCPSetupEnv(t, map[string]string{"MCPECHO_INSTRUCTIONS": "Call echo before anything else."}, "", fakemodel.Reply{Text: "ok"})
	c, err := Start(t.Context(), st.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Session.Run(t.Context(), "hi"); err != nil {
		t.Fatal(err)
	}
	first := string(st.srv.Requests()[0])
	if !strings.Contains(first, "Instructions from the MCP server echo") || !strings.Contains(first, "Call echo before anything else.") {
		t.Fatalf("the server's instructions are not in the system prompt: %s", first)
	}
}
