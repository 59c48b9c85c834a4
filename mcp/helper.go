package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"agent/config"
	"agent/internal/quote"
	"agent/internal/sandbox"
	"agent/internal/strictjson"
)

// ErrHelperNotAllowed is returned when a definition's header helper is not
// listed, with exactly its command and arguments, in the user's
// mcpHeaderHelpers (docs/reference/settings.md, "mcpHeaderHelpers").
var ErrHelperNotAllowed = errors.New("header helper not allowed")

// Header helper bounds.
const (
	DefaultHelperTimeout = 10 * time.Second
	maxHelperOutput      = 64 << 10
)

// HelperOptions configure RunHeaderHelper. The zero value uses the process
// environment, the default timeout and the current directory.
type HelperOptions struct {
	Allowed []config.HeaderHelper // from user settings only
	Environ []string              // nil: os.Environ()
	Timeout time.Duration         // 0: DefaultHelperTimeout
	Dir     string                // working directory (the workspace)
	// Sandbox confines the helper with its profile (its mcpHeaderHelpers
	// entry's sandbox, docs/sandbox.md, "Profiles"); nil: unconfined.
	Sandbox *Sandbox
}

// RunHeaderHelper runs a definition's header helper and returns the headers
// it printed. The command runs directly (never through a shell), only when
// allowed, within a timeout, and for a project or local definition without
// the user's credential-shaped environment variables
// (docs/reference/mcp.md, "Header helpers"). Its output must be one JSON
// object of string values. Errors never include what the helper printed: it
// is made of secrets.
func RunHeaderHelper(ctx context.Context, d *config.ServerDef, opts HelperOptions) (http.Header, error) {
	h := d.HeadersHelper
	if h == nil {
		return nil, nil
	}
	// The entry that allows the helper also gives its sandbox.
	var allowedAs *config.HeaderHelper
	for i, a := range opts.Allowed {
		if a.Equal(*h) {
			allowedAs = &opts.Allowed[i]
			break
		}
	}
	if allowedAs == nil {
		return nil, fmt.Errorf("%w: server %s: add {\"command\": %q, \"args\": [...]} with its exact arguments to mcpHeaderHelpers in ~/.agent/settings.json",
			ErrHelperNotAllowed, d.Name, quote.V(h.Command))
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultHelperTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	env := opts.Environ
	if env == nil {
		env = os.Environ()
	}
	if d.Scope != config.User {
		env = scrubCredentials(env)
	}
	var out limitedBuffer
	out.limit = maxHelperOutput
	build := func() *exec.Cmd {
		cmd := exec.CommandContext(ctx, h.Command, h.Args...)
		cmd.Env = env
		cmd.Dir = opts.Dir
		cmd.WaitDelay = time.Second
		cmd.Stdout = &out
		cmd.Stderr = nil // discarded: it may echo secrets
		return cmd
	}
	err := runHelper(build, d.Name, allowedAs, opts.Sandbox)
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return nil, fmt.Errorf("header helper of server %s: no answer within %v", d.Name, timeout)
	case err != nil:
		return nil, fmt.Errorf("header helper of server %s: %w", d.Name, err)
	case out.over:
		return nil, fmt.Errorf("header helper of server %s: output over %d bytes", d.Name, maxHelperOutput)
	}
	return parseHelperOutput(d.Name, out.Bytes())
}

// runHelper runs the helper's command, confined when there is a sandbox.
// Its output is secret: nothing of it goes into the sandbox's report.
func runHelper(build func() *exec.Cmd, server string, h *config.HeaderHelper, sb *Sandbox) error {
	if sb == nil {
		return build().Run()
	}
	wrapped := func() *exec.Cmd {
		cmd := build()
		cmd.Env = sb.Box.PrivateEnv(cmd.Env)
		return cmd
	}
	run, err := sb.Box.Start(wrapped, sandbox.Request{Label: "helper:" + server, Profile: sb.HelperProfile(h)})
	if err != nil {
		return err
	}
	err = run.Cmd.Wait()
	run.Finish(run.Cmd.ProcessState, "")
	return err
}

// parseHelperOutput decodes the helper's JSON object of header values.
func parseHelperOutput(server string, data []byte) (http.Header, error) {
	v, err := strictjson.Parse(bytes.TrimSpace(data), strictjson.Options{MaxBytes: maxHelperOutput})
	if err != nil {
		var se *strictjson.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("header helper of server %s: output is not valid JSON (line %d, column %d)", server, se.Line, se.Col)
		}
		return nil, fmt.Errorf("header helper of server %s: output is not valid JSON", server)
	}
	if v.Kind != strictjson.Object {
		return nil, fmt.Errorf("header helper of server %s: output must be a JSON object of headers, found %s", server, v.Kind)
	}
	hdr := http.Header{}
	for _, m := range v.Members {
		if m.Value.Kind != strictjson.String {
			return nil, fmt.Errorf("header helper of server %s: header %q: expected a string value, found %s", server, quote.V(m.Key), m.Value.Kind)
		}
		if !config.ValidHeaderName(m.Key) {
			return nil, fmt.Errorf("header helper of server %s: %q is not a valid header name", server, quote.V(m.Key))
		}
		if strings.ContainsAny(m.Value.Str, "\r\n\x00") {
			return nil, fmt.Errorf("header helper of server %s: header %q: value contains a line break or NUL", server, quote.V(m.Key))
		}
		hdr.Set(m.Key, m.Value.Str)
	}
	return hdr, nil
}

// scrubCredentials drops credential-shaped variables (which names are:
// docs/reference/settings.md, "Templates").
func scrubCredentials(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !config.IsCredentialName(name) {
			out = append(out, kv)
		}
	}
	return out
}

// limitedBuffer keeps at most limit bytes and notes overflow. It must not
// embed bytes.Buffer: io.Copy would use the embedded ReadFrom and bypass
// the limit.
type limitedBuffer struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.buf.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

// Bytes returns what was kept.
func (b *limitedBuffer) Bytes() []byte { return b.buf.Bytes() }
