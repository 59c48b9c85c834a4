package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"agent/internal/netguard"
	"agent/internal/search"
)

// Options configure the built-in tools (docs/reference/runtime.md,
// "Built-in tools"). Only Workspace matters in most cases; every other zero
// value is the documented default.
type Options struct {
	// Workspace is the workspace's real path: relative file paths start
	// here, Bash runs here, and containment is judged against it. ""
	// means the current directory (resolved when the tools are built).
	Workspace string
	// Home expands "~" and "~/..." in file paths; "" leaves them as
	// ordinary names.
	Home string
	// Network is WebFetch's address policy, the same as for MCP URLs
	// (docs/reference/mcp.md, "Address policy"): checked at dial time, no
	// proxy, no redirects. The zero value refuses every address that is not
	// public.
	Network netguard.Policy
	// Shell runs Bash commands with "-c"; "" means /bin/bash when it
	// exists, else /bin/sh.
	Shell string
	// Env is the environment of Bash commands; nil means the process's.
	// Glob and Grep read HOME (when Home is empty), XDG_CONFIG_HOME and
	// GIT_CONFIG_GLOBAL from it to find the user's git configuration.
	Env []string
	// Sandbox confines Bash commands (docs/sandbox.md); nil runs them
	// unconfined, as the Agent API does.
	Sandbox *BashSandbox
	Limits  Limits
}

// Limits bound what the tools read, run and return. Zero values mean
// the defaults given.
type Limits struct {
	Output         int           // bytes of Bash, Glob, Grep and WebFetch output for the model; 30000
	ReadLines      int           // lines Read returns when the call gives no limit; 2000
	LineLength     int           // bytes of one line of Read or Grep output before it is cut; 2000
	ReadBytes      int           // bytes one Read returns at most; 256 KiB
	FileBytes      int64         // largest file Edit edits and Grep searches; 16 MiB
	WalkEntries    int           // folder entries one Glob or Grep visits; 200000
	BashTimeout    time.Duration // a command's time when the call gives none; 2 min
	BashMaxTimeout time.Duration // the most a call may ask for; 10 min
	FetchTimeout   time.Duration // one WebFetch, connection to last byte; 30 s
	FetchBytes     int64         // largest response body WebFetch reads; 5 MiB
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.Output, 30000)
	def(&l.ReadLines, 2000)
	def(&l.LineLength, 2000)
	def(&l.ReadBytes, 256<<10)
	def(&l.WalkEntries, 200000)
	if l.FileBytes <= 0 {
		l.FileBytes = 16 << 20
	}
	if l.BashTimeout <= 0 {
		l.BashTimeout = 2 * time.Minute
	}
	if l.BashMaxTimeout <= 0 {
		l.BashMaxTimeout = 10 * time.Minute
	}
	if l.BashTimeout > l.BashMaxTimeout {
		l.BashTimeout = l.BashMaxTimeout
	}
	if l.FetchTimeout <= 0 {
		l.FetchTimeout = 30 * time.Second
	}
	if l.FetchBytes <= 0 {
		l.FetchBytes = 5 << 20
	}
	return l
}

// Builtin returns Read, Write, Edit, Glob, Grep, Bash and WebFetch,
// in that order.
func Builtin(opts Options) []Tool {
	ws := opts.Workspace
	if ws == "" {
		if wd, err := os.Getwd(); err == nil {
			ws = wd
		}
	}
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	ws = filepath.Clean(ws)
	lim := opts.Limits.withDefaults()
	ps := toolPaths{ws: ws, home: opts.Home}
	shell := opts.Shell
	if shell == "" {
		shell = "/bin/sh"
		if _, err := os.Stat("/bin/bash"); err == nil {
			shell = "/bin/bash"
		}
	}
	sh := &searchShared{env: searchEnv(opts), said: &problemsSeen{}}
	return []Tool{
		&readTool{ps: ps, lim: lim},
		&writeTool{ps: ps, lim: lim},
		&editTool{ps: ps, lim: lim},
		&globTool{ps: ps, lim: lim, sh: sh},
		&grepTool{ps: ps, lim: lim, sh: sh},
		&bashTool{ws: ws, shell: shell, env: opts.Env, lim: lim, sb: opts.Sandbox},
		newWebFetch(opts.Network, lim),
	}
}

// searchEnv finds the user's git configuration for the search tools'
// ignore rules: the home of opts (else $HOME), $XDG_CONFIG_HOME and
// $GIT_CONFIG_GLOBAL of the tools' environment (the process's when
// opts.Env is nil).
func searchEnv(opts Options) search.Env {
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	get := func(name string) string {
		v := ""
		for _, kv := range env {
			if k, val, ok := strings.Cut(kv, "="); ok && k == name {
				v = val // the last one wins, as in the process environment
			}
		}
		return v
	}
	e := search.Env{Home: opts.Home, XDGConfigHome: get("XDG_CONFIG_HOME"), GitConfigGlobal: get("GIT_CONFIG_GLOBAL")}
	if e.Home == "" {
		e.Home = get("HOME")
	}
	return e
}

// decodeToolArgs reads a call's arguments. The runtime has checked them
// against the schema already; this is the tool's own defence, so a bad
// call is an error result and never a panic.
func decodeToolArgs(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, v); err != nil {
		return badArgs("%v", err)
	}
	return nil
}

func errorResult(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// truncateOutput cuts s to at most max bytes (at a character boundary) and says
// how much was cut, so the model knows the output is partial.
func truncateOutput(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("\n[output truncated: %d of %d bytes shown, %d cut]", n, len(s), len(s)-n)
}

// cutLine shortens one line of file content for output.
func cutLine(line string, max int) string {
	if len(line) <= max {
		return line
	}
	n := max
	for n > 0 && !utf8.RuneStart(line[n]) {
		n--
	}
	return line[:n] + fmt.Sprintf(" [… line cut: %d more bytes]", len(line)-n)
}

// sniffLen is how much of a file binary detection looks at.
const sniffLen = 8 << 10

// isBinary reports whether the start of a file looks binary: a NUL byte,
// as git and grep decide. Text in any ASCII-compatible encoding passes;
// UTF-16 and the like count as binary.
func isBinary(head []byte) bool {
	if len(head) > sniffLen {
		head = head[:sniffLen]
	}
	return bytes.IndexByte(head, 0) >= 0
}

// textOf makes file or command bytes safe to put in a JSON string for the
// model: invalid UTF-8 becomes U+FFFD.
func textOf(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
