package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"agent/config"
	"agent/internal/sandbox"
)

// testSandbox is a Sandbox over a real box; it skips where the kernel
// cannot confine (and fails under CI=true, whose machines can).
type testSB struct {
	*Sandbox
	ws string
}

func testSandbox(t *testing.T, server, helper sandbox.Profile, record ...func(sandbox.Record)) (testSB, string) {
	t.Helper()
	if !sandbox.Detect().Filesystem() {
		if os.Getenv("CI") == "true" {
			t.Fatal("the CI machine should have Landlock")
		}
		t.Skip("no Landlock")
	}
	home, ws := t.TempDir(), t.TempDir()
	opts := sandbox.Options{Home: home, Workspace: ws, ID: "t"}
	if len(record) > 0 {
		opts.Record = record[0]
	}
	box, err := sandbox.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { box.Close() })
	return testSB{&Sandbox{Box: box,
		ServerProfile: func(*config.ServerDef) sandbox.Profile { return server },
		HelperProfile: func(*config.HeaderHelper) sandbox.Profile { return helper },
	}, ws}, home
}

// TestStdioConfined: a stdio server started through the sandbox speaks
// MCP as before, and cannot write outside what its profile allows; its
// spawn is recorded, with how it ended, when it ends.
func TestStdioConfined(t *testing.T) {
	var mu sync.Mutex
	var recs []sandbox.Record
	sb, _ := testSandbox(t, sandbox.Profile{Mode: sandbox.ReadOnly}, sandbox.Profile{}, func(r sandbox.Record) {
		mu.Lock()
		recs = append(recs, r)
		mu.Unlock()
	})
	opts := helper(t, "serve")
	opts.Dir = t.TempDir()
	d := &config.ServerDef{Name: "echo", Type: "stdio"}
	sb.confine(d, &opts)
	tr, err := StartStdio(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		tr.Close()
		mu.Lock()
		defer mu.Unlock()
		if len(recs) != 1 || recs[0].Event != "spawn" || recs[0].Label != "mcp:echo" || recs[0].PolicyHash == "" ||
			recs[0].Exit == nil && recs[0].Signal == "" {
			t.Errorf("records %+v", recs)
		}
	}()
	c, err := Connect(context.Background(), tr, ClientOptions{})
	if err != nil {
		t.Fatalf("Connect: %v (stderr: %s)", err, tr.Stderr())
	}
	defer c.Close()
	if _, err := c.ListTools(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The environment it got: the authority's, with the private folders.
	if e := tr.Stderr(); !strings.Contains(e, "MCP_TEST_HELPER=serve") || !strings.Contains(e, "TMPDIR="+sb.Box.TmpDir()) {
		t.Fatalf("stderr %s", e)
	}
	if sb.writesWorkspace(d) {
		t.Fatal("a read-only server counts as writing the workspace")
	}
}

// TestHeaderHelperConfined: a helper runs with its profile; what it may
// not read stays unread, and its output still becomes headers.
func TestHeaderHelperConfined(t *testing.T) {
	sb, home := testSandbox(t, sandbox.Profile{}, sandbox.Profile{Mode: sandbox.ReadOnly})
	secret := filepath.Join(home, ".ssh", "id")
	os.MkdirAll(filepath.Dir(secret), 0o700)
	os.WriteFile(secret, []byte("KEY"), 0o600)
	script := writeScript(t, `k=$(cat "$1" 2>/dev/null || echo none); printf '{"X-Key": "%s"}' "$k"`)
	allowed := []config.HeaderHelper{{Command: script, Args: []string{secret}}}
	h, err := RunHeaderHelper(context.Background(), helperDef(script, []string{secret}, config.User),
		HelperOptions{Allowed: allowed, Environ: []string{"PATH=/usr/bin:/bin"}, Sandbox: sb.Sandbox})
	if err != nil || h.Get("X-Key") != "none" {
		t.Fatalf("%v %v", h, err)
	}
	// Its mcpHeaderHelpers entry may open what it needs.
	sb.HelperProfile = func(*config.HeaderHelper) sandbox.Profile {
		return sandbox.Profile{Mode: sandbox.ReadOnly, AllowRead: []string{filepath.Dir(secret)}}
	}
	h, err = RunHeaderHelper(context.Background(), helperDef(script, []string{secret}, config.User),
		HelperOptions{Allowed: allowed, Environ: []string{"PATH=/usr/bin:/bin"}, Sandbox: sb.Sandbox})
	if err != nil || h.Get("X-Key") != "KEY" {
		t.Fatalf("%v %v", h, err)
	}
}

// TestGuardCall: a server that writes the workspace has each call
// looked at; what it changed in a protected path is undone and said in
// the result, what changed between calls (the user) is kept.
func TestGuardCall(t *testing.T) {
	sb, _ := testSandbox(t, sandbox.Profile{Mode: sandbox.WorkspaceWrite}, sandbox.Profile{})
	d := &config.ServerDef{Name: "fs", Type: "stdio"}
	if !sb.writesWorkspace(d) || (*Sandbox)(nil).writesWorkspace(d) {
		t.Fatal("writesWorkspace")
	}
	ws := sb.ws
	os.MkdirAll(filepath.Join(ws, ".vscode"), 0o755)
	os.WriteFile(filepath.Join(ws, ".vscode", "settings.json"), []byte("{}"), 0o644) // the user's, before
	r, err := sb.guardCall("fs", func() (*CallToolResult, error) {
		os.WriteFile(filepath.Join(ws, ".vscode", "tasks.json"), []byte("{}"), 0o644) // the server's
		return &CallToolResult{Content: []Content{{Type: "text", Text: "ok"}}}, nil
	})
	if err != nil || len(r.Content) != 2 || !strings.Contains(r.Content[1].Text, ".vscode/tasks.json (a new file") {
		t.Fatalf("%+v %v", r, err)
	}
	if _, err := os.Stat(filepath.Join(ws, ".vscode", "settings.json")); err != nil {
		t.Fatal("the user's file was undone")
	}
	if _, err := os.Stat(filepath.Join(ws, ".vscode", "tasks.json")); err == nil {
		t.Fatal("the server's file stayed")
	}
}
