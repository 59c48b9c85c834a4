package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agent/config"
)

func TestAllowForProject(t *testing.T) {
	ws := realTempDir(t)
	rule := mkRules(t, "Bash(go test ./...)")[0]
	path := config.LocalSettingsPath(ws)

	// Creates the folder and the file.
	mustNil(t, AllowForProject(ws, rule))
	fi, err := os.Stat(path)
	mustNil(t, err)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v", fi.Mode())
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("new folder mode %v", di.Mode())
	}
	data, _ := os.ReadFile(path)
	if string(data) != "{\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(go test ./...)\"\n    ]\n  }\n}\n" {
		t.Errorf("new file:\n%s", data)
	}
	// The loader reads it back as a local allow rule.
	s := config.Load(config.Options{Home: realTempDir(t), Workspace: ws, Trusted: true})
	if len(s.Permissions.Allow) != 1 || s.Permissions.Allow[0].String() != "Bash(go test ./...)" || s.Permissions.Allow[0].Scope != config.Local {
		t.Errorf("loaded %+v, diagnostics %v", s.Permissions.Allow, s.Diagnostics)
	}

	// No duplicate; the file is not even rewritten.
	mustNil(t, os.Chmod(path, 0o640))
	mustNil(t, AllowForProject(ws, rule))
	data2, _ := os.ReadFile(path)
	if string(data2) != string(data) {
		t.Error("duplicate added")
	}

	// Another rule keeps the mode and the rest.
	mustNil(t, AllowForProject(ws, mkRules(t, "WebFetch(docs.example.com)")[0]))
	fi, _ = os.Stat(path)
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("mode became %v", fi.Mode())
	}
	data, _ = os.ReadFile(path)
	if !strings.Contains(string(data), "\"Bash(go test ./...)\",\n      \"WebFetch(docs.example.com)\"\n") {
		t.Errorf("after a second rule:\n%s", data)
	}

	// Invalid JSON is never overwritten; the error names file and position.
	bad := "{\n  \"permissions\": {\n    \"allow\": [\"Read\",]\n  }\n}\n"
	mustNil(t, os.WriteFile(path, []byte(bad), 0o600))
	err = AllowForProject(ws, rule)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "line 3, column") {
		t.Errorf("invalid JSON: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != bad {
		t.Error("invalid file changed")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries (temporary file left?)", len(entries))
	}

	// A symbolic link in place of the file is refused.
	mustNil(t, os.Remove(path))
	mustNil(t, os.Symlink(filepath.Join(ws, "elsewhere.json"), path))
	if err := AllowForProject(ws, rule); err == nil {
		t.Error("wrote through a symbolic link")
	}
	if _, err := os.Stat(filepath.Join(ws, "elsewhere.json")); err == nil {
		t.Error("link target created")
	}
}

func TestAllowForProjectLinkedFolder(t *testing.T) {
	ws := realTempDir(t)
	mustNil(t, os.Symlink(realTempDir(t), filepath.Join(ws, ".agent")))
	if err := AllowForProject(ws, mkRules(t, "Read")[0]); err == nil {
		t.Error("wrote into a linked .agent folder")
	}
}
