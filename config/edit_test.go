package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"agent/internal/strictjson"
)

// addAllowRule is the change "allow for this project" makes.
func addAllowRule(data []byte, rule string) ([]byte, bool, error) {
	return EditSettings(data, AppendUnique(rule, "permissions", "allow"))
}

func TestEditSettingsAppendsARule(t *testing.T) {
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

func TestEditSettingsRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    string
		shape bool
		msg   string
	}{
		{"a syntax error names its line and column", "{\n  \"a\": 1,\n}", false, "line 3, column 1"},
		{"a duplicate key", `{"a":1,"a":2}`, false, "duplicate"},
		{"an empty file", ``, false, "empty document"},
		{"a root that is not an object", `[]`, true, "the root is array"},
		{"permissions that is not an object", `{"permissions":[]}`, true, "permissions is array"},
		{"permissions.allow that is not a list", `{"permissions":{"allow":"Read"}}`, true, "permissions.allow is string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := addAllowRule([]byte(tc.in), "Read")
			if err == nil || !strings.Contains(err.Error(), tc.msg) || errors.Is(err, ErrSettingsShape) != tc.shape {
				t.Errorf("%q: %v", tc.in, err)
			}
		})
	}
}

// FuzzEditSettingsAppend: whatever the file holds, the edit either refuses or
// yields valid JSON that keeps every member and holds the rule once.
func FuzzEditSettingsAppend(f *testing.F) {
	for _, s := range []string{"{}", `{"permissions":{"allow":["Read"]}}`, "{\n  \"a\": [1, {\"b\": \"]\"}]\n}", `{"permissions":{}}`, "{\r\n\"permissions\" : { \"allow\" : [ ] } }"} {
		f.Add(s, "Bash(go test ./...)")
	}
	f.Fuzz(func(t *testing.T, in, rule string) {
		out, changed, err := addAllowRule([]byte(in), rule)
		if err != nil {
			return
		}
		after, perr := strictjson.Parse(out, strictjson.Options{MaxBytes: 2 * MaxSettingsFile})
		if perr != nil {
			t.Fatalf("output does not parse: %v\n%s", perr, out)
		}
		before, _ := strictjson.Parse([]byte(in), strictjson.Options{MaxBytes: MaxSettingsFile})
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

func TestEditSettingsSets(t *testing.T) {
	setup := []SettingsChange{
		Set(Object{{"provider", "local"}, {"model", "m1"}}, "defaultModel"),
		Set("http://127.0.0.1:1234/v1", "providers", "local", "baseURL"),
	}
	tests := []struct {
		name    string
		in      string
		changes []SettingsChange
		want    string
	}{
		{"empty root", "{}\n", setup,
			"{\n  \"defaultModel\": {\n    \"provider\": \"local\",\n    \"model\": \"m1\"\n  },\n  \"providers\": {\n    \"local\": {\n      \"baseURL\": \"http://127.0.0.1:1234/v1\"\n    }\n  }\n}\n"},
		{"keys keep their order and a replaced value its place",
			"{\n    \"zeta\": 1,\n    \"defaultModel\": {\"provider\": \"genai\"},\n    \"alpha\": [1, 2]\n}\n", setup[:1],
			"{\n    \"zeta\": 1,\n    \"defaultModel\": {\n        \"provider\": \"local\",\n        \"model\": \"m1\"\n    },\n    \"alpha\": [1, 2]\n}\n"},
		{"a member added inside an existing object",
			"{\n  \"providers\": {\n    \"local\": {\n      \"timeout\": 5000\n    }\n  }\n}\n", setup[1:],
			"{\n  \"providers\": {\n    \"local\": {\n      \"timeout\": 5000,\n      \"baseURL\": \"http://127.0.0.1:1234/v1\"\n    }\n  }\n}\n"},
		{"a scalar replaced in place", "{\"providers\": {\"local\": {\"baseURL\": \"http://old\", \"x\": true}}}", setup[1:],
			"{\"providers\": {\"local\": {\"baseURL\": \"http://127.0.0.1:1234/v1\", \"x\": true}}}"},
		{"one-line document", `{"a":1}`, setup[:1], `{"a":1, "defaultModel": {"provider": "local", "model": "m1"}}`},
		{"tabs", "{\n\t\"a\": 1\n}", setup[1:], "{\n\t\"a\": 1,\n\t\"providers\": {\n\t\t\"local\": {\n\t\t\t\"baseURL\": \"http://127.0.0.1:1234/v1\"\n\t\t}\n\t}\n}"},
		{"CRLF", "{\r\n  \"a\": 1\r\n}\r\n", setup[:1], "{\r\n  \"a\": 1,\r\n  \"defaultModel\": {\r\n    \"provider\": \"local\",\r\n    \"model\": \"m1\"\r\n  }\r\n}\r\n"},
		{"numbers, booleans, null and arrays", "{}", []SettingsChange{Set(2.5, "n"), Set(false, "b"), Set(nil, "z"), Set([]string{"x", "<y>"}, "l")},
			"{\n  \"n\": 2.5,\n  \"b\": false,\n  \"z\": null,\n  \"l\": [\n    \"x\",\n    \"<y>\"\n  ]\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, changed, err := EditSettings([]byte(tt.in), tt.changes...)
			if err != nil {
				t.Fatal(err)
			}
			if !changed || string(out) != tt.want {
				t.Fatalf("got (changed=%v)\n%s\nwant\n%s", changed, out, tt.want)
			}
			again, changed, err := EditSettings(out, tt.changes...)
			if err != nil || changed || string(again) != string(out) {
				t.Errorf("the same changes again: changed=%v err=%v", changed, err)
			}
		})
	}
}

func TestEditSettingsSetRefusals(t *testing.T) {
	for _, tc := range []struct{ name, in, msg string }{
		{"a scalar on the path", `{"providers": "x"}`, "providers is string, not an object"},
		{"deeper", `{"providers": {"local": [1]}}`, "providers.local is array, not an object"},
		{"not JSON", `{"providers": `, "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := EditSettings([]byte(tc.in), Set("u", "providers", "local", "baseURL"))
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("%v", err)
			}
		})
	}
}

func TestUpdateSettingsFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".agent", "settings.json")
	// A missing file and folder are created: 0600 in 0700.
	if changed, err := UpdateSettingsFile(path, KeepPerm, Set("x", "a")); err != nil || !changed {
		t.Fatal(changed, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v", fi.Mode())
	}
	// Unchanged content is not rewritten.
	before, _ := os.Stat(path)
	if changed, err := UpdateSettingsFile(path, KeepPerm, Set("x", "a")); err != nil || changed {
		t.Fatal(changed, err)
	}
	if after, _ := os.Stat(path); !after.ModTime().Equal(before.ModTime()) {
		t.Error("rewritten without a change")
	}
	// Invalid JSON is refused, naming the file, and left alone.
	os.WriteFile(path, []byte("{,"), 0o644)
	if _, err := UpdateSettingsFile(path, KeepPerm, Set("x", "a")); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("%v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{," {
		t.Errorf("changed to %q", b)
	}
	// A FIFO in its place is refused without waiting.
	os.Remove(path)
	if err := mkfifo(path); err != nil {
		t.Skip(err)
	}
	if _, err := UpdateSettingsFile(path, KeepPerm, Set("x", "a")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("%v", err)
	}
}

// FuzzEditSettingsSet: whatever the file holds, a change either refuses
// or yields valid JSON that keeps every other top-level member and holds
// the value.
func FuzzEditSettingsSet(f *testing.F) {
	for _, s := range []string{"{}", `{"providers":{"local":{"baseURL":"x"}}}`, "{\n  \"a\": [1, {\"b\": \"]\"}]\n}", `{"providers":{}}`, "{\r\n\"providers\" : { } }"} {
		f.Add(s, "local", "http://h/v1")
	}
	f.Fuzz(func(t *testing.T, in, id, value string) {
		if !utf8.ValidString(id) || !utf8.ValidString(value) {
			return // encoded with U+FFFD in place of the bad bytes
		}
		out, _, err := EditSettings([]byte(in), Set(value, "providers", id, "baseURL"))
		if err != nil {
			return
		}
		after, perr := strictjson.Parse(out, strictjson.Options{MaxBytes: 2 * MaxSettingsFile})
		if perr != nil {
			t.Fatalf("output does not parse: %v\n%s", perr, out)
		}
		before, _ := strictjson.Parse([]byte(in), strictjson.Options{MaxBytes: MaxSettingsFile})
		for _, m := range before.Members {
			if after.Get(m.Key) == nil {
				t.Fatalf("member %q lost", m.Key)
			}
		}
		if v := after.Get("providers").Get(id).Get("baseURL"); v == nil || v.Str != value {
			t.Fatalf("value not set:\n%s", out)
		}
	})
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
