package tools

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agent/internal/sandbox"
)

func TestBashExcluded(t *testing.T) {
	sb := &BashSandbox{Excluded: []string{"docker ps", "npm test:*", "make *"}}
	for _, c := range []struct {
		cmd  string
		want bool
	}{
		{"docker ps", true}, {" docker ps ", true}, {"docker ps -a", false}, {"docker psx", false},
		{"npm test", true}, {"npm test -- --watch", true}, {"npm testx", false},
		{"make", true}, {"make all", true}, {"maker", false}, {"ls", false},
	} {
		if got := sb.excluded(c.cmd); got != c.want {
			t.Errorf("%q: %v, want %v", c.cmd, got, c.want)
		}
	}
}

func TestBashEscalationChecks(t *testing.T) {
	dir := t.TempDir()
	sb := &BashSandbox{Escalation: true, Profile: sandbox.Profile{Mode: sandbox.WorkspaceWrite}}
	host := &BashSandbox{Escalation: true, Profile: sandbox.Profile{Mode: sandbox.WorkspaceWrite, Network: sandbox.NetHost}}
	off := &BashSandbox{Profile: sandbox.Profile{Mode: sandbox.WorkspaceWrite}}
	cases := []struct {
		name string
		sb   *BashSandbox
		a    bashArgs
		err  string
	}{
		{"network", sb, bashArgs{Justification: "fetch", Needs: "network"}, ""},
		{"one more path", sb, bashArgs{Justification: "build", Needs: "write:" + dir}, ""},
		{"no justification", sb, bashArgs{Needs: "network"}, "needs a justification"},
		{"a relative path", sb, bashArgs{Justification: "x", Needs: "write:out"}, "clean absolute path"},
		{"an unclean path", sb, bashArgs{Justification: "x", Needs: "write:" + dir + "/../x"}, "clean absolute path"},
		{"a missing path", sb, bashArgs{Justification: "x", Needs: "write:" + dir + "/none"}, "does not exist"},
		{"something else", sb, bashArgs{Justification: "x", Needs: "root"}, `needs must be "network"`},
		{"the network is there", host, bashArgs{Justification: "x", Needs: "network"}, "allows the network already"},
		{"escalation switched off", off, bashArgs{Justification: "x", Needs: "network"}, "allowUnsandboxedCommands is false"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.sb.checkEscalation(c.a)
			switch {
			case c.err == "" && err != nil:
				t.Fatal(err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrBadArguments)):
				t.Fatalf("error %v, want %q", err, c.err)
			}
		})
	}
}

// sandboxedBash is the Bash tool with a real box.
func sandboxedBash(t *testing.T, sb *BashSandbox) (ws string, tool Tool) {
	t.Helper()
	home := t.TempDir()
	ws = realTempDir(t)
	if sb.Box == nil {
		box, err := sandbox.New(sandbox.Options{Home: home, Workspace: ws, ID: "t"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { box.Close() })
		sb.Box = box
	}
	return newTestBash(t, Options{Workspace: ws, Sandbox: sb, Env: sb.Box.Env(os.Environ(), nil)})
}

func TestBashSandboxSpecAndTarget(t *testing.T) {
	_, bash := sandboxedBash(t, &BashSandbox{Profile: sandbox.Profile{Mode: sandbox.WorkspaceWrite}, Escalation: true, Excluded: []string{"docker ps"}})
	spec := bash.Spec()
	if !strings.Contains(spec.Description, "sandbox (mode workspace-write)") || !strings.Contains(string(spec.Schema), `"escalate"`) {
		t.Fatalf("%+v", spec)
	}
	tg, err := bash.Target(json.RawMessage(`{"command":"ls"}`))
	if err != nil || tg.Sandboxed != bash.(*bashTool).sb.Box.Support().Filesystem() || tg.Escalation != "" {
		t.Fatalf("%+v %v", tg, err)
	}
	tg, err = bash.Target(json.RawMessage(`{"command":"curl x","sandbox":"escalate","justification":"get it","needs":"network"}`))
	if err != nil || tg.Sandboxed || tg.Escalation != "network" || tg.Justification != "get it" {
		t.Fatalf("%+v %v", tg, err)
	}
	tg, err = bash.Target(json.RawMessage(`{"command":"docker ps","sandbox":"escalate","justification":"x","needs":"network"}`))
	if err != nil || tg.Sandboxed || tg.Escalation != "" {
		t.Fatalf("an excluded command: %+v %v", tg, err)
	}
	_, plain := sandboxedBash(t, &BashSandbox{Profile: sandbox.Profile{Mode: sandbox.WorkspaceWrite}})
	if s := string(plain.Spec().Schema); strings.Contains(s, "escalate") {
		t.Fatalf("escalation offered when switched off: %s", s)
	}
	_, full := sandboxedBash(t, &BashSandbox{Profile: sandbox.Profile{Mode: sandbox.FullAccess}, Escalation: true})
	if d := full.Spec().Description; strings.Contains(d, "sandbox") {
		t.Fatalf("full access describes a sandbox: %s", d)
	}
}

// TestBashSandboxRun: a confined command, a refusal named in the result,
// an allowed escalation that opens one path and nothing else.
func TestBashSandboxRun(t *testing.T) {
	if !sandbox.Detect().Filesystem() {
		if os.Getenv("CI") == "true" {
			t.Fatal("the CI machine should have Landlock")
		}
		t.Skip("no Landlock")
	}
	ws, bash := sandboxedBash(t, &BashSandbox{Profile: sandbox.Profile{Mode: sandbox.ReadOnly}, Escalation: true})
	res := runTool(t, bash, `{"command":"echo x > f"}`)
	if !res.IsError || !strings.Contains(res.Content, "[sandbox (read-only, network none) refused: writing "+ws+"/f") || !strings.HasSuffix(res.Content, "[exit code 1]") {
		t.Fatalf("%+v", res)
	}
	out := filepath.Join(ws, "out")
	os.Mkdir(out, 0o755)
	res = runTool(t, bash, `{"command":"echo x > out/f && echo done; echo y > g","sandbox":"escalate","justification":"write the output","needs":"write:`+out+`"}`)
	if !strings.Contains(res.Content, "done") || !strings.Contains(res.Content, "refused: writing "+ws+"/g") {
		t.Fatalf("%+v", res)
	}
}

func TestBashFailIfUnavailable(t *testing.T) {
	home, ws := t.TempDir(), realTempDir(t)
	box, err := sandbox.New(sandbox.Options{Home: home, Workspace: ws, ID: "t", Support: &sandbox.Support{NamespacesKnown: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	_, bash := sandboxedBash(t, &BashSandbox{Box: box, Profile: sandbox.Profile{Mode: sandbox.WorkspaceWrite}, FailIfUnavailable: true})
	res := runTool(t, bash, `{"command":"touch ran"}`)
	if !res.IsError || !strings.Contains(res.Content, "the command was not run") {
		t.Fatalf("%+v", res)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Fatal("it ran")
	}
	tg, _ := bash.Target(json.RawMessage(`{"command":"ls"}`))
	if tg.Sandboxed {
		t.Fatal("a call with no file-system confinement counts as sandboxed")
	}
}
