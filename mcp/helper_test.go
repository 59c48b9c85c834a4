package mcp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agent/config"
)

// writeScript writes an executable shell script used as a helper. The
// helper itself is run without a shell; the script's interpreter line is
// the kernel's business.
func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "helper.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func helperDef(cmd string, args []string, scope config.Scope) *config.ServerDef {
	return &config.ServerDef{Name: "srv", Scope: scope, Type: "http", HeadersHelper: &config.HeaderHelper{Command: cmd, Args: args}}
}

func TestHeaderHelper(t *testing.T) {
	ctx := context.Background()
	ok := writeScript(t, `printf '{"Authorization": "Bearer %s", "X-Env": "%s"}' "$1" "${MY_TOKEN:-none}"`)
	allowed := []config.HeaderHelper{{Command: ok, Args: []string{"abc"}}}
	env := []string{"PATH=/usr/bin:/bin", "MY_TOKEN=secret"}

	h, err := RunHeaderHelper(ctx, helperDef(ok, []string{"abc"}, config.User), HelperOptions{Allowed: allowed, Environ: env})
	if err != nil || h.Get("Authorization") != "Bearer abc" || h.Get("X-Env") != "secret" {
		t.Fatalf("%v %v", h, err)
	}
	// A project's helper runs without credential-shaped variables
	// (docs/reference/mcp.md, "Header helpers").
	h, err = RunHeaderHelper(ctx, helperDef(ok, []string{"abc"}, config.Project), HelperOptions{Allowed: allowed, Environ: env})
	if err != nil || h.Get("X-Env") != "none" {
		t.Fatalf("%v %v", h, err)
	}
	// Exact command and arguments only (docs/reference/settings.md,
	// "mcpHeaderHelpers").
	for _, args := range [][]string{{"abcd"}, {"abc", "x"}, nil} {
		if _, err := RunHeaderHelper(ctx, helperDef(ok, args, config.User), HelperOptions{Allowed: allowed, Environ: env}); !errors.Is(err, ErrHelperNotAllowed) {
			t.Errorf("args %v: %v", args, err)
		}
	}
	// No shell: metacharacters in arguments are plain arguments.
	inj := []string{"abc; touch " + filepath.Join(t.TempDir(), "pwned")}
	if _, err := RunHeaderHelper(ctx, helperDef(ok, inj, config.User), HelperOptions{Allowed: []config.HeaderHelper{{Command: ok, Args: inj}}, Environ: env}); err != nil {
		t.Fatal(err)
	}
}

func TestHeaderHelperBadOutput(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, body, want string
	}{
		{"output that is not JSON", `echo 'not json SECRETVALUE'`, "not valid JSON"},
		{"a JSON array", `echo '["a"]'`, "must be a JSON object"},
		{"a value that is not a string", `echo '{"A": 1}'`, "expected a string value"},
		{"an invalid header name", `echo '{"A b": "x"}'`, "not a valid header name"},
		{"a line break in a value", `printf '{"A": "x\\r\\nB: y"}'`, "line break"},
		{"a duplicate name", `echo '{"A":"x","A":"y"}'`, "not valid JSON"},
		{"a helper that fails", `exit 3`, "exit status 3"},
		{"output over the bound", `head -c 70000 /dev/zero | tr '\0' 'a'`, "output over"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeScript(t, c.body)
			_, err := RunHeaderHelper(ctx, helperDef(p, nil, config.User), HelperOptions{Allowed: []config.HeaderHelper{{Command: p}}})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want %q", c.body, err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "SECRETVALUE") {
				t.Errorf("helper output leaked into the error")
			}
		})
	}
	slow := writeScript(t, `sleep 5`)
	start := time.Now()
	_, err := RunHeaderHelper(ctx, helperDef(slow, nil, config.User), HelperOptions{Allowed: []config.HeaderHelper{{Command: slow}}, Timeout: 200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no answer within") || time.Since(start) > 3*time.Second {
		t.Fatalf("timeout: %v after %v", err, time.Since(start))
	}
}
