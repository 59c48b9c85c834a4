package config

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"agent/internal/quote"
	"agent/internal/securefile"
	"agent/internal/strictjson"
)

// Scope is where a settings file sits (docs/reference/settings.md, "Files
// and scopes").
type Scope int

// The scopes, in increasing precedence.
const (
	User Scope = iota
	Project
	Local
)

func (s Scope) String() string {
	switch s {
	case User:
		return "user"
	case Project:
		return "project"
	case Local:
		return "local"
	}
	return "unknown"
}

// MaxSettingsFile bounds one settings file.
const MaxSettingsFile = 4 << 20

// Diagnostic is one problem found while loading, shown at startup, by
// `agent mcp list` and in /mcp. It never holds the value of a header, an
// environment variable or a secret (docs/reference/settings.md,
// "Diagnostics").
type Diagnostic struct {
	File string          // the settings file
	Path strictjson.Path // the key, e.g. $.mcpServers.github.url; empty for the whole file
	Msg  string
}

func (d Diagnostic) String() string {
	switch {
	case d.File == "":
		return d.Msg
	case d.Path == "":
		return d.File + ": " + d.Msg
	}
	return d.File + ": " + string(d.Path) + ": " + d.Msg
}

// File is one candidate settings file and what became of it.
type File struct {
	Path   string
	Scope  Scope
	Status FileStatus
}

// FileStatus says whether a settings file was used.
type FileStatus int

// File statuses.
const (
	Missing   FileStatus = iota // no file
	Loaded                      // read and applied
	Invalid                     // unreadable or not valid JSON: skipped
	Untrusted                   // project or local file in an untrusted workspace: not applied
)

// SettingsFiles lists the six settings files in increasing precedence:
// within a scope the .agent file takes precedence over the .compat file.
func SettingsFiles(home, workspace string) []File {
	return []File{
		{Path: filepath.Join(home, ".compat", "settings.json"), Scope: User},
		{Path: filepath.Join(home, ".agent", "settings.json"), Scope: User},
		{Path: filepath.Join(workspace, ".compat", "settings.json"), Scope: Project},
		{Path: filepath.Join(workspace, ".agent", "settings.json"), Scope: Project},
		{Path: filepath.Join(workspace, ".compat", "settings.local.json"), Scope: Local},
		{Path: filepath.Join(workspace, ".agent", "settings.local.json"), Scope: Local},
	}
}

// LocalSettingsPath is the file that "allow for this project" writes to
// (docs/reference/settings.md, "Writing settings").
func LocalSettingsPath(workspace string) string {
	return filepath.Join(workspace, ".agent", "settings.local.json")
}

// UserDir is ~/.agent.
func UserDir(home string) string { return filepath.Join(home, ".agent") }

// Options say what to load.
type Options struct {
	Home      string     // the user's home directory
	Workspace string     // the workspace's real path
	Trusted   bool       // whether project and local files apply (docs/reference/settings.md, "Trust gating")
	Lookup    LookupFunc // environment; nil means os.LookupEnv
}

// Defaults of docs/reference/settings.md, "mcp".
const (
	DefaultAutoBackground = 120 * time.Second
	DefaultCallTimeout    = 600 * time.Second
)

// MCPSettings are the mcp keys after precedence and the handoff rule
// (docs/reference/settings.md, "mcp").
type MCPSettings struct {
	AutoBackground time.Duration // 0: handoff off
	CallTimeout    time.Duration
}

// Settings is the merged result of loading.
type Settings struct {
	Files           []File
	Servers         map[string]*ServerDef // by name: the winning definition (docs/reference/settings.md, "Precedence")
	HeaderHelpers   []HeaderHelper        // from user files only (docs/reference/settings.md, "mcpHeaderHelpers")
	MCP             MCPSettings
	AllowedNetworks []netip.Prefix // mcpAllowedNetworks, user files only (docs/reference/settings.md, "mcpAllowedNetworks")
	Permissions     Permissions
	DefaultModel    *ModelRef
	Providers       map[string]*ProviderSettings
	Prompt          PromptSettings  // systemPrompt, appendSystemPrompt, instructions (prompt.go)
	Context         ContextSettings // autoCompact, autoCompactAt, models (context.go)
	Sandbox         SandboxSettings // the sandbox keys (sandbox.go)
	// Hooks are the handlers of every file that applies, in file order
	// (hooks.go); HooksDisabled the scopes whose files set
	// disableAllHooks: true.
	Hooks         []HookHandler
	HooksDisabled []Scope
	Diagnostics   []Diagnostic
}

// ServerNames returns the server names, sorted.
func (s *Settings) ServerNames() []string {
	names := make([]string, 0, len(s.Servers))
	for n := range s.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// loader carries state while the files are read.
type loader struct {
	opts  Options
	s     *Settings
	diags []Diagnostic
	// per-key precedence for the two mcp keys (docs/reference/settings.md,
	// "Precedence")
	autoBG, callTO   *int64
	autoBGf, callTOf string
}

func (l *loader) diag(file string, path strictjson.Path, format string, args ...any) {
	l.diags = append(l.diags, Diagnostic{File: file, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// Load reads the settings files. It never fails: every problem is a
// diagnostic in the result.
func Load(opts Options) *Settings {
	if opts.Lookup == nil {
		opts.Lookup = os.LookupEnv
	}
	l := &loader{opts: opts, s: &Settings{
		Servers:   map[string]*ServerDef{},
		Providers: map[string]*ProviderSettings{},
		Sandbox:   DefaultSandbox(),
	}}
	untrustedDefs := map[string]*ServerDef{}
	for _, f := range SettingsFiles(opts.Home, opts.Workspace) {
		data, err := securefile.ReadFile(f.Path, MaxSettingsFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			f.Status = Missing
			l.s.Files = append(l.s.Files, f)
			continue
		case err != nil:
			f.Status = Invalid
			l.diag(f.Path, "", "cannot read: %v; file skipped", unwrapPath(err))
			l.s.Files = append(l.s.Files, f)
			continue
		}
		root, err := strictjson.Parse(data, strictjson.Options{MaxBytes: MaxSettingsFile})
		if err != nil {
			f.Status = Invalid
			l.diag(f.Path, "", "not valid JSON: %v; file skipped", err)
			l.s.Files = append(l.s.Files, f)
			continue
		}
		if root.Kind != strictjson.Object {
			f.Status = Invalid
			l.diag(f.Path, strictjson.Root, "expected an object, found %s; file skipped", root.Kind)
			l.s.Files = append(l.s.Files, f)
			continue
		}
		if f.Scope != User && !opts.Trusted {
			// Project and local definitions are listed as untrusted and
			// nothing else of the file applies (docs/reference/settings.md,
			// "Trust gating"). Templates are not expanded: an untrusted
			// file does not read the environment.
			f.Status = Untrusted
			l.s.Files = append(l.s.Files, f)
			if servers := root.Get("mcpServers"); servers != nil && servers.Kind == strictjson.Object {
				for _, m := range servers.Members {
					untrustedDefs[m.Key] = &ServerDef{Name: m.Key, Scope: f.Scope, File: f.Path, Untrusted: true, Type: rawType(m.Value)}
				}
			}
			l.diag(f.Path, "", "not loaded: the workspace is not trusted (run: agent trust --yes)")
			continue
		}
		f.Status = Loaded
		l.s.Files = append(l.s.Files, f)
		l.file(f, root)
	}
	// An untrusted definition is listed only where no loaded one has its name.
	for name, d := range untrustedDefs {
		if _, ok := l.s.Servers[name]; !ok {
			l.s.Servers[name] = d
		}
	}
	l.finishMCP()
	l.s.Diagnostics = l.diags
	return l.s
}

// unwrapPath drops the path from an *fs.PathError, which the diagnostic
// names already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func rawType(v *strictjson.Value) string {
	if t := v.Get("type"); t != nil && t.Kind == strictjson.String {
		return normaliseType(t.Str)
	}
	return ""
}

func (l *loader) file(f File, root *strictjson.Value) {
	for _, m := range root.Members {
		// Other top-level keys belong to other tools sharing these files
		// (the .compat files): they are left alone.
		if load := topLevelKeys()[m.Key]; load != nil {
			load(l, f, strictjson.Root.Key(m.Key), m.Value)
		}
	}
}

// userOnly reads a key that only user settings may set; elsewhere it is
// ignored, with a diagnostic that names what it would allow.
func userOnly(what string, read func(l *loader, f File, p strictjson.Path, v *strictjson.Value)) func(l *loader, f File, p strictjson.Path, v *strictjson.Value) {
	return func(l *loader, f File, p strictjson.Path, v *strictjson.Value) {
		if f.Scope != User {
			l.diag(f.Path, p, "ignored: only user settings may allow %s", what)
			return
		}
		read(l, f, p, v)
	}
}

// topLevelKeys reads each top-level key of a settings file
// (docs/reference/settings.md).
var topLevelKeys = sync.OnceValue(func() map[string]func(l *loader, f File, p strictjson.Path, v *strictjson.Value) {
	return map[string]func(l *loader, f File, p strictjson.Path, v *strictjson.Value){
		"mcpServers":         (*loader).servers,
		"mcpHeaderHelpers":   userOnly("a header helper (move the list to ~/.agent/settings.json)", (*loader).headerHelpers),
		"mcp":                (*loader).mcp,
		"mcpAllowedNetworks": userOnly("extra networks", (*loader).allowedNetworks),
		"permissions":        (*loader).permissions,
		"defaultModel":       (*loader).defaultModel,
		"providers":          (*loader).providers,
		"systemPrompt": func(l *loader, f File, p strictjson.Path, v *strictjson.Value) {
			if t := l.textSetting(f, p, v); t != nil {
				l.s.Prompt.SystemPrompt = t
			}
		},
		"appendSystemPrompt": func(l *loader, f File, p strictjson.Path, v *strictjson.Value) {
			if t := l.textSetting(f, p, v); t != nil {
				l.s.Prompt.AppendSystemPrompt = t
			}
		},
		"instructions":    (*loader).instructions,
		"autoCompact":     (*loader).autoCompact,
		"autoCompactAt":   (*loader).autoCompactAt,
		"models":          (*loader).models,
		"sandbox":         (*loader).sandboxKeys,
		"modelPrices":     (*loader).modelPrices,
		"hooks":           (*loader).hooks,
		"disableAllHooks": (*loader).disableAllHooks,
	}
})

func (l *loader) servers(f File, p strictjson.Path, v *strictjson.Value) {
	if v.Kind != strictjson.Object {
		l.diag(f.Path, p, "expected an object of server definitions, found %s", v.Kind)
		return
	}
	for _, m := range v.Members {
		sp := p.Key(m.Key)
		d := parseServer(m.Key, f, sp, m.Value, l.opts)
		for _, pr := range d.problems {
			l.diags = append(l.diags, Diagnostic{File: f.Path, Path: pr.path, Msg: pr.msg})
		}
		for _, n := range d.notes {
			l.diags = append(l.diags, Diagnostic{File: f.Path, Path: n.path, Msg: n.msg})
		}
		if prev, ok := l.s.Servers[m.Key]; ok && prev.Scope == f.Scope {
			l.diag(prev.File, p.Key(m.Key), "shadowed by the definition in %s", f.Path)
		}
		l.s.Servers[m.Key] = d
	}
}

func (l *loader) headerHelpers(f File, p strictjson.Path, v *strictjson.Value) {
	if v.Kind != strictjson.Array {
		l.diag(f.Path, p, "expected an array of {command, args}, found %s", v.Kind)
		return
	}
	for i, it := range v.Items {
		h, probs := parseHelper(it, p.Index(i), &l.opts)
		for _, pr := range probs {
			l.diag(f.Path, pr.path, "%s", pr.msg)
		}
		if len(probs) == 0 {
			l.s.HeaderHelpers = append(l.s.HeaderHelpers, h)
		}
	}
}

// mcp applies docs/reference/settings.md, "mcp": each key on its own with
// scope precedence; a negative or non-integer value discards the file's
// whole mcp object.
func (l *loader) mcp(f File, p strictjson.Path, v *strictjson.Value) {
	if v.Kind != strictjson.Object {
		l.diag(f.Path, p, "expected an object, found %s; ignored", v.Kind)
		return
	}
	var auto, call *int64
	for _, m := range v.Members {
		kp := p.Key(m.Key)
		switch m.Key {
		case "autoBackgroundMs", "callTimeoutMs":
			n, ok := m.Value.Int()
			if !ok || n < 0 {
				l.diag(f.Path, kp, "must be a non-negative integer; this file's whole mcp object is ignored")
				return
			}
			if n > math.MaxInt64/int64(time.Millisecond) {
				l.diag(f.Path, kp, "too large; this file's whole mcp object is ignored")
				return
			}
			if m.Key == "autoBackgroundMs" {
				auto = &n
			} else {
				call = &n
			}
		default:
			l.diag(f.Path, kp, "unknown key; ignored")
		}
	}
	if auto != nil {
		l.autoBG, l.autoBGf = auto, f.Path
	}
	if call != nil {
		l.callTO, l.callTOf = call, f.Path
	}
}

func (l *loader) finishMCP() {
	m := MCPSettings{AutoBackground: DefaultAutoBackground, CallTimeout: DefaultCallTimeout}
	if l.autoBG != nil {
		m.AutoBackground = time.Duration(*l.autoBG) * time.Millisecond
	}
	if l.callTO != nil {
		m.CallTimeout = time.Duration(*l.callTO) * time.Millisecond
	}
	// Rule 3: the handoff must come before the call's upper bound.
	if m.AutoBackground != 0 && m.AutoBackground >= m.CallTimeout {
		file := l.autoBGf
		if file == "" {
			file = l.callTOf
		}
		l.diag(file, strictjson.Root.Key("mcp"), "autoBackgroundMs (%d) is not smaller than callTimeoutMs (%d): background handoff is off",
			m.AutoBackground.Milliseconds(), m.CallTimeout.Milliseconds())
		m.AutoBackground = 0
	}
	l.s.MCP = m
}

func (l *loader) allowedNetworks(f File, p strictjson.Path, v *strictjson.Value) {
	if v.Kind != strictjson.Array {
		l.diag(f.Path, p, "expected an array of CIDR strings, found %s", v.Kind)
		return
	}
	for i, it := range v.Items {
		if it.Kind != strictjson.String {
			l.diag(f.Path, p.Index(i), "expected a CIDR string such as \"127.0.0.0/8\", found %s", it.Kind)
			continue
		}
		pfx, err := netip.ParsePrefix(it.Str)
		if err != nil {
			l.diag(f.Path, p.Index(i), "not a CIDR network: %q", quote.V(it.Str))
			continue
		}
		if pfx.Addr().Is4In6() {
			pfx = netip.PrefixFrom(pfx.Addr().Unmap(), pfx.Bits()-96)
		}
		l.s.AllowedNetworks = append(l.s.AllowedNetworks, pfx.Masked())
	}
}

// oneOf formats allowed values for messages.
func oneOf(vals ...string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = "'" + v + "'"
	}
	return strings.Join(q, ", ")
}
