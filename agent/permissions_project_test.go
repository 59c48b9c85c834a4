package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agent/config"
	"agent/internal/strictjson"
)

func TestAddAllowRule(t *testing.T) {
	const rule = "Bash(go test ./...)"
	tests := []struct{ name, in, want string }{
		{"empty root", "{}\n", "{\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(go test ./...)\"\n    ]\n  }\n}\n"},
		{"other keys kept, four spaces",
			"{\n    \"model\": \"x\",\n    \"mcpServers\": {\"a\": {\"command\": \"b\"}}\n}\n",
			"{\n    \"model\": \"x\",\n    \"mcpServers\": {\"a\": {\"command\": \"b\"}},\n    \"permissions\": {\n        \"allow\": [\n            \"Bash(go test ./...)\"\n        ]\n    }\n}\n"},
		{"tabs",
			"{\n\t\"permissions\": {\n\t\t\"deny\": [\"WebFetch\"]\n\t}\n}",
			"{\n\t\"permissions\": {\n\t\t\"deny\": [\"WebFetch\"],\n\t\t\"allow\": [\n\t\t\t\"Bash(go test ./...)\"\n\t\t]\n\t}\n}"},
		{"append to a list on lines",
			"{\n  \"permissions\": {\n    \"allow\": [\n      \"Read\",\n      \"Edit(src/**)\"\n    ],\n    \"defaultMode\": \"default\"\n  }\n}\n",
			"{\n  \"permissions\": {\n    \"allow\": [\n      \"Read\",\n      \"Edit(src/**)\",\n      \"Bash(go test ./...)\"\n    ],\n    \"defaultMode\": \"default\"\n  }\n}\n"},
		{"append to a one-line list",
			"{\n  \"permissions\": {\"allow\": [\"Read\"]}\n}\n",
			"{\n  \"permissions\": {\"allow\": [\"Read\", \"Bash(go test ./...)\"]}\n}\n"},
		{"empty list on its own line",
			"{\n  \"permissions\": {\n    \"allow\": []\n  }\n}\n",
			"{\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(go test ./...)\"\n    ]\n  }\n}\n"},
		{"one-line document", `{"permissions":{"allow":[]}}`, `{"permissions":{"allow":["Bash(go test ./...)"]}}`},
		{"one-line document without permissions", `{"model":"x"}`, `{"model":"x", "permissions": {"allow": ["Bash(go test ./...)"]}}`},
		{"one-line empty permissions", `{"a":1,"permissions":{}}`, `{"a":1,"permissions":{"allow": ["Bash(go test ./...)"]}}`},
		{"empty permissions on lines",
			"{\n  \"permissions\": {}\n}",
			"{\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(go test ./...)\"\n    ]\n  }\n}"},
		{"tricky strings before the insertion point",
			"{\n  \"x\": \"a]}\\\"[{\",\n  \"permissions\": {\n    \"allow\": [\"Read(\\\"]\\\")\"]\n  }\n}",
			"{\n  \"x\": \"a]}\\\"[{\",\n  \"permissions\": {\n    \"allow\": [\"Read(\\\"]\\\")\", \"Bash(go test ./...)\"]\n  }\n}"},
		{"numbers and literals as last values",
			"{\n  \"n\": 1.5e3,\n  \"b\": true\n}",
			"{\n  \"n\": 1.5e3,\n  \"b\": true,\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(go test ./...)\"\n    ]\n  }\n}"},
		{"CRLF file", "{\r\n  \"a\": 1\r\n}\r\n", "{\r\n  \"a\": 1,\r\n  \"permissions\": {\r\n    \"allow\": [\r\n      \"Bash(go test ./...)\"\r\n    ]\r\n  }\r\n}\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, changed, err := addAllowRule([]byte(tt.in), rule)
			if err != nil {
				t.Fatal(err)
			}
			if !changed || string(out) != tt.want {
				t.Errorf("got (changed=%v)\n%s\nwant\n%s", changed, out, tt.want)
			}
			// Semantically: every original member is still there.
			before, _ := strictjson.Parse([]byte(tt.in), strictjson.Options{})
			after, err := strictjson.Parse(out, strictjson.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range before.Members {
				if after.Get(m.Key) == nil {
					t.Errorf("member %s lost", m.Key)
				}
			}
			// A second add changes nothing.
			again, changed, err := addAllowRule(out, rule)
			if err != nil || changed || string(again) != string(out) {
				t.Errorf("second add: changed=%v err=%v", changed, err)
			}
		})
	}
}

func TestAddAllowRuleRefusals(t *testing.T) {
	for _, tc := range []struct {
		in    string
		shape bool
		msg   string
	}{
		{"{\n  \"a\": 1,\n}", false, "line 3, column 1"},
		{`{"a":1,"a":2}`, false, "duplicate"},
		{``, false, "empty document"},
		{`[]`, true, "the root is array"},
		{`{"permissions":[]}`, true, "permissions is array"},
		{`{"permissions":{"allow":"Read"}}`, true, "permissions.allow is string"},
	} {
		_, _, err := addAllowRule([]byte(tc.in), "Read")
		if err == nil || !strings.Contains(err.Error(), tc.msg) || errors.Is(err, ErrSettingsShape) != tc.shape {
			t.Errorf("%q: %v", tc.in, err)
		}
	}
}

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
	if string(data) != string(newLocalSettings("Bash(go test ./...)")) {
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

// FuzzAddAllowRule: whatever the file holds, the edit either refuses or
// yields valid JSON that keeps every member and holds the rule once.
func FuzzAddAllowRule(f *testing.F) {
	for _, s := range []string{"{}", `{"permissions":{"allow":["Read"]}}`, "{\n  \"a\": [1, {\"b\": \"]\"}]\n}", `{"permissions":{}}`, "{\r\n\"permissions\" : { \"allow\" : [ ] } }"} {
		f.Add(s, "Bash(go test ./...)")
	}
	f.Fuzz(func(t *testing.T, in, rule string) {
		out, changed, err := addAllowRule([]byte(in), rule)
		if err != nil {
			return
		}
		after, perr := strictjson.Parse(out, strictjson.Options{MaxBytes: 2 * config.MaxSettingsFile})
		if perr != nil {
			t.Fatalf("output does not parse: %v\n%s", perr, out)
		}
		before, _ := strictjson.Parse([]byte(in), strictjson.Options{MaxBytes: config.MaxSettingsFile})
		for _, m := range before.Members {
			if after.Get(m.Key) == nil {
				t.Fatalf("member %q lost", m.Key)
			}
		}
		n := 0
		for _, it := range after.Get("permissions").Get("allow").Items {
			if it.Kind == strictjson.String && it.Str == rule {
				n++
			}
		}
		if n == 0 || (changed && n != 1) {
			t.Fatalf("rule present %d times (changed=%v)", n, changed)
		}
	})
}
