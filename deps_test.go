package main

// The dependency policy (CONTRIBUTING.md, "Dependency policy" and "Import
// direction") enforced as a test: go.mod requires only the allowed modules,
// every package's imports follow the direction rules, and nothing outside
// the standard library and the allowed modules is built into the binary.

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const modulePath = "agent"

// allowedModules are the only modules go.mod may require (x/sys, x/net and
// x/text arrive indirectly through the three).
var allowedModules = map[string]bool{
	"golang.org/x/term":   true,
	"golang.org/x/crypto": true,
	"golang.org/x/oauth2": true,
	"golang.org/x/sys":    true,
	"golang.org/x/net":    true,
	"golang.org/x/text":   true,
}

type listedPackage struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Deps       []string
	Module     *struct{ Path string }
}

func goList(t *testing.T, args ...string) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func TestGoModRequiresOnlyAllowedModules(t *testing.T) {
	out, err := exec.Command("go", "mod", "edit", "-json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var mod struct {
		Require []struct{ Path string }
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	for _, r := range mod.Require {
		if !allowedModules[r.Path] {
			t.Errorf("go.mod requires %s: only golang.org/x/term, x/crypto and x/oauth2 (and what they pull in) are allowed", r.Path)
		}
	}
}

// rel returns the import path relative to the module ("" for the root).
func rel(path string) string {
	if path == modulePath {
		return ""
	}
	return strings.TrimPrefix(path, modulePath+"/")
}

func under(p, prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }

// allowedImport decides whether package from (relative path) may import imp
// (a full import path) under the rules of CONTRIBUTING.md, "Import
// direction".
func allowedImport(from, imp string, std bool) (bool, string) {
	if ok, why, decided := sandboxImport(from, imp, std); decided {
		return ok, why
	}
	pure := from == "mcp/jsonrpc" || from == "tui/keys" || from == "tui/screen" || under(from, "internal")
	if (from == "tui/keys" || from == "tui/screen" || from == "internal/ignore") && (imp == "os" || imp == "syscall" || imp == "net" || strings.HasPrefix(imp, "net/") || strings.HasPrefix(imp, "os/")) {
		return false, "tui/keys, tui/screen and internal/ignore import no os, syscall or net"
	}
	if std {
		return true, ""
	}
	switch {
	case under(imp, "golang.org/x/term"):
		return from == "tui/term", "only tui/term imports x/term"
	case under(imp, "golang.org/x/oauth2"):
		return from == "mcp/oauth" || from == "" || under(from, "interop"), "only mcp/oauth (and main) import x/oauth2"
	case under(imp, "golang.org/x/crypto"):
		return !pure || from == "internal/jose", "pure packages use the standard library only"
	case under(imp, "golang.org/x/sys"):
		return from == "tui/term" || from == "", "x/sys only in tui/term"
	case !under(imp, modulePath):
		return false, "module outside the allowed list"
	}
	to := rel(imp)
	if pure {
		// Pure leaves may use strictjson, itself a pure leaf, so that every
		// parser of outside JSON shares one strict decoder; jsonlex, the
		// lexical layer under it, so that the JSON readers that cannot use
		// a tree (the JSON-RPC single pass) read tokens with the same code;
		// and quote, so that every diagnostic cuts what it quotes
		// (docs/design.md). Internal packages may use other internal
		// primitives.
		return to == "internal/strictjson" || to == "internal/jsonlex" || to == "internal/quote" || under(from, "internal") && under(to, "internal"), "pure leaves import the standard library only"
	}
	switch {
	case from == "" || under(from, "interop"):
		return true, ""
	case from == "config":
		return under(to, "internal"), "config imports only internal"
	case from == "providers":
		return under(to, "internal"), "providers imports only internal"
	case under(from, "providers"):
		return to == "providers" || under(to, "internal") || (under(to, "providers") && to != from && !strings.HasPrefix(to, from+"/") && okProviderSibling(from, to)), "providers/* import providers and internal"
	case from == "mcp/oauth":
		return under(to, "internal") || to == "config" || to == "mcp/jsonrpc", "mcp/oauth imports internal, config and mcp/jsonrpc"
	case under(from, "mcp"):
		return to == "mcp/jsonrpc" || to == "mcp/oauth" || to == "config" || under(to, "internal") || (under(to, "mcp") && to != "mcp" && from != to), "mcp imports mcp/jsonrpc, mcp/oauth, config and internal"
	case under(from, "events"):
		return under(to, "internal"), "events imports only internal (it declares the interface it needs)"
	case from == "agent/tools":
		// The tools are told what they need (workspace, network policy,
		// limits); they read no settings, and the runtime that offers them
		// imports them, never the reverse (docs/design.md).
		return under(to, "internal"), "agent/tools imports only internal"
	case from == "agent/prompt":
		// The prompt builder is given the workspace, the home and the
		// limits; it reads instruction files and runs git, never the
		// runtime that calls it (docs/reference/runtime.md, "System prompt
		// and instruction files").
		return to == "config" || under(to, "internal"), "agent/prompt imports only config and internal"
	case from == "agent/extend":
		// The readers of subagent, command and skill files are pure
		// parsers and directory walks; the runtime runs what they find
		// (docs/reference/runtime.md, "Subagents, commands and skills").
		return under(to, "internal"), "agent/extend imports only internal"
	case from == "agent/hooks":
		// Hooks read their definitions from the settings and run
		// processes; the runtime applies what they decide
		// (docs/reference/runtime.md, "Hooks").
		return to == "config" || under(to, "internal"), "agent/hooks imports only config and internal"
	case from == "agent/compact":
		// Compaction's arithmetic and history rewriting work on the
		// message types alone; the runtime makes the model calls
		// (docs/reference/runtime.md, "Context management").
		return to == "providers" || under(to, "internal"), "agent/compact imports only providers and internal"
	case under(from, "agent"):
		// The runtime's sub-packages serve it and never import it.
		return to == "config" || under(to, "providers") || under(to, "mcp") || under(to, "internal") || (under(to, "agent") && to != "agent" && to != from), "agent imports config, providers, mcp, internal and its sub-packages, which do not import agent"
	case under(from, "tui"):
		return to == "agent" || under(to, "agent") || to == "config" || under(to, "internal") || (under(to, "tui") && to != "tui" && to != from), "tui imports agent, config, internal and tui/*"
	}
	return false, "package outside the layout of CONTRIBUTING.md, \"Import direction\""
}

// confineStd are the only packages the sandbox helper may import: it runs
// while it initialises, so its imports must be initialised before most of
// the agent's (docs/design.md, "The sandbox helper is the agent's own
// binary"). encoding/json, os/exec, net and crypto would each pull it
// behind dozens of other packages.
var confineStd = map[string]bool{
	"errors": true, "fmt": true, "io": true, "io/fs": true, "os": true, "path": true, "runtime": true,
	"sort": true, "strconv": true, "strings": true, "syscall": true, "unsafe": true,
}

// earlyStd are the only packages internal/sandbox/early may import: its
// init starts the helper of agent sandbox run, and runs among the first
// only while it waits for little more than os and syscall (docs/design.md, "agent
// sandbox run starts its helper at init").
var earlyStd = map[string]bool{"os": true, "sync": true, "syscall": true, "unsafe": true}

// sandboxImport decides the imports that concern the sandbox
// (CONTRIBUTING.md, "Import direction"): the helper imports only
// confineStd and the early start only earlyStd; only internal/sandbox
// imports either; only main, agent, agent/tools, mcp and config import
// internal/sandbox. decided is false for every other import.
func sandboxImport(from, imp string, std bool) (ok bool, why string, decided bool) {
	to := rel(imp)
	switch {
	case from == "internal/sandbox/confine":
		return std && confineStd[imp], "internal/sandbox/confine imports only errors, fmt, io, io/fs, os, path, runtime, sort, strconv, strings, syscall and unsafe", true
	case from == "internal/sandbox/early":
		return std && earlyStd[imp], "internal/sandbox/early imports only os, sync, syscall and unsafe", true
	case !std && (to == "internal/sandbox/confine" || to == "internal/sandbox/early"):
		return from == "internal/sandbox" || from == "", "only internal/sandbox imports internal/sandbox/confine and internal/sandbox/early", true
	case !std && to == "internal/sandbox":
		return from == "" || from == "agent" || from == "agent/tools" || from == "mcp" || from == "config" || under(from, "interop"),
			"only main, agent, agent/tools, mcp and config import internal/sandbox", true
	}
	return false, "", false
}

// okProviderSibling: API-surface packages may reuse another surface's client
// (responses on the chat-completions surface reuses chatcompat), and
// builtin constructs every provider.
func okProviderSibling(from, to string) bool {
	return to == "providers/chatcompat" || from == "providers/builtin"
}

func TestImportDirection(t *testing.T) {
	pkgs := goList(t, "./...")
	std := map[string]bool{}
	for _, p := range goList(t, "std") {
		std[p.ImportPath] = true
	}
	for _, p := range pkgs {
		from := rel(p.ImportPath)
		for _, imp := range p.Imports {
			if imp == "C" {
				t.Errorf("%s imports C: the binary is static and cgo-free", p.ImportPath)
				continue
			}
			if ok, why := allowedImport(from, imp, std[imp]); !ok {
				t.Errorf("%s imports %s: %s", p.ImportPath, imp, why)
			}
		}
	}
}

func TestBinaryDependencies(t *testing.T) {
	for _, p := range goList(t, "-deps", ".") {
		if p.Standard || p.Module == nil {
			continue
		}
		if p.Module.Path != modulePath && !allowedModules[p.Module.Path] {
			t.Errorf("the binary builds %s from module %s, outside the allowed list", p.ImportPath, p.Module.Path)
		}
	}
}

func TestImportRuleTable(t *testing.T) {
	cases := []struct {
		name      string
		from, imp string
		std, ok   bool
	}{
		{"tui/keys imports no os", "tui/keys", "os", true, false},
		{"tui/screen imports no net", "tui/screen", "net/http", true, false},
		{"tui/keys may import the standard library", "tui/keys", "unicode/utf8", true, true},
		{"internal/ignore imports no os (patterns in, decisions out)", "internal/ignore", "os", true, false},
		{"internal/ignore imports no syscall", "internal/ignore", "syscall", true, false},
		{"internal/ignore may import the standard library", "internal/ignore", "strings", true, true},
		{"internal/search may import internal/ignore", "internal/search", "agent/internal/ignore", false, true},
		{"internal/search may use syscall (it walks and reads)", "internal/search", "syscall", true, true},
		{"internal/search imports no tools", "internal/search", "agent/agent/tools", false, false},
		{"a pure leaf may import strictjson", "tui/keys", "agent/internal/strictjson", false, true},
		{"a pure leaf imports no other internal package", "tui/keys", "agent/internal/securefile", false, false},
		{"mcp/jsonrpc may import strictjson", "mcp/jsonrpc", "agent/internal/strictjson", false, true},
		{"mcp/jsonrpc may import the lexer", "mcp/jsonrpc", "agent/internal/jsonlex", false, true},
		{"mcp/jsonrpc imports no jsonscan", "mcp/jsonrpc", "agent/internal/jsonscan", false, false},
		{"jsonscan may import the lexer", "internal/jsonscan", "agent/internal/jsonlex", false, true},
		{"tui/keymap may import tui/keys", "tui/keymap", "agent/tui/keys", false, true},
		{"tui/keymap may import internal packages", "tui/keymap", "agent/internal/securefile", false, true},
		{"an internal package imports no config", "internal/strictjson", "agent/config", false, false},
		{"an internal package may import another internal one", "internal/jose", "agent/internal/strictjson", false, true},
		{"internal/jose may import x/crypto", "internal/jose", "golang.org/x/crypto/ed25519", false, true},
		{"config imports no providers", "config", "agent/providers", false, false},
		{"config may import internal packages", "config", "agent/internal/securefile", false, true},
		{"a provider may import providers", "providers/messages", "agent/providers", false, true},
		{"a provider imports no config", "providers/messages", "agent/config", false, false},
		{"events imports no agent", "events", "agent/agent", false, false},
		{"mcp imports no agent", "mcp", "agent/agent", false, false},
		{"agent imports no tui", "agent", "agent/tui", false, false},
		{"agent may import its tools", "agent", "agent/agent/tools", false, true},
		{"the tools import no agent", "agent/tools", "agent/agent", false, false},
		{"the tools import no config", "agent/tools", "agent/config", false, false},
		{"the tools import no mcp", "agent/tools", "agent/mcp", false, false},
		{"the tools import no providers", "agent/tools", "agent/providers", false, false},
		{"the tools may import internal packages", "agent/tools", "agent/internal/netguard", false, true},
		{"agent may import the prompt builder", "agent", "agent/agent/prompt", false, true},
		{"the prompt builder imports no agent", "agent/prompt", "agent/agent", false, false},
		{"agent may import compaction", "agent", "agent/agent/compact", false, true},
		{"agent may import hooks", "agent", "agent/agent/hooks", false, true},
		{"agent may import extend", "agent", "agent/agent/extend", false, true},
		{"extend imports no agent", "agent/extend", "agent/agent", false, false},
		{"extend imports no config", "agent/extend", "agent/config", false, false},
		{"hooks import no agent", "agent/hooks", "agent/agent", false, false},
		{"hooks import no providers", "agent/hooks", "agent/providers", false, false},
		{"hooks may import config", "agent/hooks", "agent/config", false, true},
		{"compaction imports no agent", "agent/compact", "agent/agent", false, false},
		{"compaction imports no provider surface", "agent/compact", "agent/providers/messages", false, false},
		{"compaction may import the message types", "agent/compact", "agent/providers", false, true},
		{"the prompt builder imports no mcp", "agent/prompt", "agent/mcp", false, false},
		{"the prompt builder imports no providers", "agent/prompt", "agent/providers", false, false},
		{"the prompt builder imports no tui", "agent/prompt", "agent/tui", false, false},
		{"the prompt builder imports no tools", "agent/prompt", "agent/agent/tools", false, false},
		{"the prompt builder may import config", "agent/prompt", "agent/config", false, true},
		{"the prompt builder may import internal packages", "agent/prompt", "agent/internal/securefile", false, true},
		{"tui may import the tools", "tui", "agent/agent/tools", false, true},
		{"tui may import agent", "tui", "agent/agent", false, true},
		{"tui imports no providers", "tui", "agent/providers", false, false},
		{"tui imports no x/term (only tui/term does)", "tui", "golang.org/x/term", false, false},
		{"tui/term may import x/term", "tui/term", "golang.org/x/term", false, true},
		{"mcp imports no x/oauth2", "mcp", "golang.org/x/oauth2", false, false},
		{"mcp/oauth may import x/oauth2", "mcp/oauth", "golang.org/x/oauth2", false, true},
		{"main may import the module's packages", "", "agent/events", false, true},
		{"the sandbox helper imports syscall", "internal/sandbox/confine", "syscall", true, true},
		{"the sandbox helper imports no encoding/json", "internal/sandbox/confine", "encoding/json", true, false},
		{"the sandbox helper imports no os/exec", "internal/sandbox/confine", "os/exec", true, false},
		{"the sandbox helper imports no x/sys", "internal/sandbox/confine", "golang.org/x/sys/unix", false, false},
		{"the sandbox helper imports no internal package", "internal/sandbox/confine", "agent/internal/quote", false, false},
		{"the sandbox imports its helper", "internal/sandbox", "agent/internal/sandbox/confine", false, true},
		{"the early start imports syscall", "internal/sandbox/early", "syscall", true, true},
		{"the early start imports no os/exec", "internal/sandbox/early", "os/exec", true, false},
		{"the early start imports no helper", "internal/sandbox/early", "agent/internal/sandbox/confine", false, false},
		{"the sandbox imports its early start", "internal/sandbox", "agent/internal/sandbox/early", false, true},
		{"only the sandbox imports its early start", "agent", "agent/internal/sandbox/early", false, false},
		{"only the sandbox imports its helper", "agent", "agent/internal/sandbox/confine", false, false},
		{"the sandbox imports no x/sys", "internal/sandbox", "golang.org/x/sys/unix", false, false},
		{"the sandbox may import internal packages", "internal/sandbox", "agent/internal/redact", false, true},
		{"the tools may import the sandbox", "agent/tools", "agent/internal/sandbox", false, true},
		{"mcp may import the sandbox", "mcp", "agent/internal/sandbox", false, true},
		{"config may import the sandbox", "config", "agent/internal/sandbox", false, true},
		{"tui imports no sandbox", "tui", "agent/internal/sandbox", false, false},
		{"providers import no sandbox", "providers/messages", "agent/internal/sandbox", false, false},
		{"events imports no sandbox", "events", "agent/internal/sandbox", false, false},
		{"a module outside the allowed list is refused", "agent", "github.com/some/thing", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if ok, _ := allowedImport(c.from, c.imp, c.std); ok != c.ok {
				t.Errorf("allowedImport(%q, %q) = %v, want %v", c.from, c.imp, ok, c.ok)
			}
		})
	}
}
