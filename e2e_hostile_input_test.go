package main

// Outsized input: a diagnostic quotes at most the first 80 bytes of what
// it was given (internal/quote), and stdio `mcp serve` answers a line over
// its 16 MiB bound with a parse error and goes on.

import (
	"strings"
	"testing"

	"agent/internal/fakemodel"
)

func TestE2EDiagnosticsCutWhatTheyQuote(t *testing.T) {
	s := newSandbox(t)
	big := strings.Repeat("a", 100_000) // under the 128 KiB limit of one argument
	cases := []struct {
		name string
		args []string
	}{
		{"unknown command", []string{big}},
		{"unknown subcommand", []string{"mcp", big}},
		{"unknown flag", []string{"--" + big}},
		{"unknown short flag", []string{"-" + big}},
		{"a bad permission mode", []string{"--permission-mode", big, "-p", "hi"}},
		{"a bad provider", []string{"--provider", big, "-p", "hi"}},
		{"a bad port", []string{"mcp", "serve", "--http-port", big}},
		{"a bad base URL", []string{"--base-url", "http://" + big, "-p", "hi"}},
		{"an unexpected operand", []string{"trust", big}},
		{"a keybindings file name", []string{"keybindings", "check", big}},
		{"a session id", []string{"session", "stop", big}},
		{"a server name", []string{"mcp", "login", big}},
		{"a help topic", []string{"help", big}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.run("", c.args...)
			if r.Code == 0 || len(r.Stderr) > 400 || len(r.Stdout) > 400 {
				t.Fatalf("exit %d, %d bytes on stderr: %.300q", r.Code, len(r.Stderr), r.Stderr)
			}
		})
	}
}

// TestE2ESettingsDiagnosticsCutWhatTheyQuote: a settings file's long keys
// (in the JSON path of a diagnostic) and long template names are cut too.
func TestE2ESettingsDiagnosticsCutWhatTheyQuote(t *testing.T) {
	s, _ := printSandbox(t, fakemodel.Reply{Text: "done"})
	big := strings.Repeat("k", 200_000)
	s.write(".agent/settings.json", `{"mcpServers": {"`+big+`": {"type": 5}, "t": {"type": "http", "url": "https://example.com/${`+big+`}"}},
		"providers": {"`+big+`": {}, "local": {"`+big+`": 1}}, "permissions": {"deny": ["`+big+`("]}}`)
	r := s.run("", "-p", "hi")
	if r.Code != 0 || r.Stdout != "done\n" {
		t.Fatalf("exit %d: %.500s", r.Code, r.Stderr)
	}
	for _, want := range []string{"$.mcpServers[", "$.mcpServers.t.url: ${", "$.providers[", "$.providers.local[", "$.permissions.deny[0]"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if len(r.Stderr) > 4000 || strings.Contains(r.Stderr, strings.Repeat("k", 100)) {
		t.Fatalf("stderr quotes the input whole: %d bytes", len(r.Stderr))
	}
}

func TestE2EServeStdioSkipsAnOversizedLine(t *testing.T) {
	s, _ := printSandbox(t)
	huge := `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"` + strings.Repeat("x", 17<<20) + `"}}`
	bigID := strings.Repeat("i", 500_000)
	msgs, r := stdioLines(t, s, nil,
		initLine,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		huge,
		`{"jsonrpc":"2.0","id":"`+bigID+`","result":{}}`, // a response nobody asked for
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
	)
	if r.Code != 0 {
		t.Fatalf("exit %d: %.500s", r.Code, r.Stderr)
	}
	got := byID(msgs)
	// Its id is read from the line's start: the refusal answers it.
	if e, ok := got["5"]["error"].(map[string]any); !ok || e["code"].(float64) != -32700 {
		t.Fatalf("the oversized line: %v", got["5"])
	}
	if _, ok := got["2"]["result"]; !ok {
		t.Fatalf("the ping after it was not answered: %v", msgs)
	}
	if !strings.Contains(r.Stderr, "line over 16777216 bytes") {
		t.Fatalf("stderr does not say so: %.500q", r.Stderr)
	}
	if len(r.Stderr) > 2000 || strings.Contains(r.Stderr, strings.Repeat("i", 100)) {
		t.Fatalf("stderr quotes the input whole: %d bytes", len(r.Stderr))
	}
}
