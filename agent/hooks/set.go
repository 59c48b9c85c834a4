package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"agent/config"
	"agent/internal/securefile"
)

// State says whether a handler runs.
type State string

// Handler states.
const (
	Active      State = "active"      // runs when its event matches
	Pending     State = "pending"     // a project or local handler not approved (or changed since)
	Disabled    State = "disabled"    // disableAllHooks
	Unsupported State = "unsupported" // a type other than command
)

// Handler is one handler of the settings with its state.
type Handler struct {
	config.HookHandler
	// ID names the handler in /hooks and agent hooks: the first 12 hex
	// digits of its hash.
	ID string
	// Hash is the SHA-256 of its definition and of the scripts under the
	// workspace its command names, hex: what an approval is kept under.
	Hash string
	// Scripts are those scripts, as real paths.
	Scripts []string
	State   State

	match *regexp.Regexp // nil: matches everything; names: exact names
	names []string
}

// Options say where a Set's handlers run.
type Options struct {
	Workspace string // the workspace's real path: the handlers' working folder
	Home      string // for ~/.agent/hook-approvals.json
	// Env is the environment handlers start from; nil: the process's.
	Env []string
}

// Set is the hooks of one session. Its methods are safe for concurrent
// use.
type Set struct {
	opts     Options
	mu       sync.Mutex
	handlers []*Handler
	active   map[string]bool // events with an active handler
}

// New builds the session's hooks from the merged settings: project and
// local handlers come only from a trusted workspace (config applies its
// trust gating before), and run only once approved.
func New(s *config.Settings, o Options) *Set {
	set := &Set{opts: o}
	approved := LoadApprovals(o.Home)
	for _, hh := range s.Hooks {
		h := &Handler{HookHandler: hh}
		h.match, h.names = compileMatcher(hh.Matcher)
		h.Scripts = scriptsOf(hh, o.Workspace)
		h.Hash = handlerHash(hh, h.Scripts)
		h.ID = h.Hash[:12]
		switch {
		case disabled(s.HooksDisabled, hh.Scope):
			h.State = Disabled
		case hh.Unsupported != "":
			h.State = Unsupported
		case hh.Scope == config.User || approved.Has(h.Hash):
			h.State = Active
		default:
			h.State = Pending
		}
		set.handlers = append(set.handlers, h)
	}
	set.index()
	return set
}

// disabled: disableAllHooks in a user file turns every handler off; in a
// project or local file it turns off the handlers of those scopes, so a
// repository cannot switch off the user's own hooks.
func disabled(scopes []config.Scope, s config.Scope) bool {
	for _, d := range scopes {
		if d == config.User || s != config.User {
			return true
		}
	}
	return false
}

func (s *Set) index() {
	s.active = map[string]bool{}
	for _, h := range s.handlers {
		if h.State == Active {
			s.active[h.Event] = true
		}
	}
}

// Has reports whether any handler of event runs: the runtime asks before
// it builds an event's input, so that a session without hooks pays
// nothing.
func (s *Set) Has(event string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active[event]
}

// Handlers are the handlers with their states, in settings order.
func (s *Set) Handlers() []Handler {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Handler, len(s.handlers))
	for i, h := range s.handlers {
		out[i] = *h
	}
	return out
}

// Pending are the handlers waiting for approval.
func (s *Set) Pending() []Handler {
	var out []Handler
	for _, h := range s.Handlers() {
		if h.State == Pending {
			out = append(out, h)
		}
	}
	return out
}

// Approve approves the pending handlers whose ID is in ids (all of them
// when ids is nil), records the approvals, and returns how many it
// approved.
func (s *Set) Approve(ids []string) (int, error) {
	if s == nil {
		return 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	want := func(id string) bool {
		if ids == nil {
			return true
		}
		for _, x := range ids {
			if x == id {
				return true
			}
		}
		return false
	}
	var approve []*Handler
	for _, h := range s.handlers {
		if h.State == Pending && want(h.ID) {
			approve = append(approve, h)
		}
	}
	if len(approve) == 0 {
		return 0, nil
	}
	err := updateApprovals(s.opts.Home, func(a *Approvals) {
		for _, h := range approve {
			a.add(h)
		}
	})
	if err != nil {
		return 0, err
	}
	for _, h := range approve {
		h.State = Active
	}
	s.index()
	return len(approve), nil
}

// Revoke withdraws the approval of the project or local handler id; it
// is pending again.
func (s *Set) Revoke(id string) error {
	if s == nil {
		return fmt.Errorf("no hook %s", id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.handlers {
		if h.ID != id {
			continue
		}
		if h.Scope == config.User {
			return fmt.Errorf("hook %s is the user's own: it needs no approval (remove it from %s)", id, h.File)
		}
		if err := updateApprovals(s.opts.Home, func(a *Approvals) { delete(a.Approved, h.Hash) }); err != nil {
			return err
		}
		if h.State == Active {
			h.State = Pending
		}
		s.index()
		return nil
	}
	return fmt.Errorf("no hook %s (see /hooks)", id)
}

// Protected are the scripts of approved project and local handlers:
// Write and Edit ask before changing them (docs/reference/runtime.md,
// "Hooks").
func (s *Set) Protected() []string {
	var out []string
	for _, h := range s.Handlers() {
		if h.State == Active && h.Scope != config.User {
			out = append(out, h.Scripts...)
		}
	}
	return out
}

// compileMatcher reads a matcher as Claude Code does: empty or "*" matches
// everything; letters, digits, '_', '-' and '|' alone name tools exactly;
// anything else is a regular expression that must match the whole value.
// A regular expression that does not compile matches nothing (the
// settings loader does not know the events' values).
func compileMatcher(m string) (*regexp.Regexp, []string) {
	switch m {
	case "", "*":
		return nil, nil
	}
	plain := true
	for _, r := range m {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '|') {
			plain = false
			break
		}
	}
	if plain {
		return nil, strings.Split(m, "|")
	}
	re, err := regexp.Compile("^(?:" + m + ")$")
	if err != nil {
		return regexp.MustCompile(`[^\s\S]`), nil // matches nothing
	}
	return re, nil
}

// matches reports whether the handler takes value (for an MCP tool, both
// "mcp__server__tool" and "server__tool" are tried).
func (h *Handler) matches(values ...string) bool {
	if h.match == nil && h.names == nil {
		return true
	}
	for _, v := range values {
		if v == "" {
			continue
		}
		if h.match != nil && h.match.MatchString(v) {
			return true
		}
		for _, n := range h.names {
			if n == v {
				return true
			}
		}
	}
	return false
}

// handlerHash is the approval key: the definition (file, event, matcher,
// handler) in a canonical form, then each script's path and content hash.
func handlerHash(hh config.HookHandler, scripts []string) string {
	def, _ := json.Marshal(struct {
		File, Event, Matcher, Type, Command, StatusMessage string
		Args                                               []string
		HasArgs                                            bool
		Timeout                                            int
		FailClosed                                         bool
	}{hh.File, hh.Event, hh.Matcher, hh.Type, hh.Command, hh.StatusMessage, hh.Args, hh.HasArgs, hh.Timeout, hh.FailClosed})
	sum := sha256.New()
	sum.Write(def)
	for _, p := range scripts {
		sum.Write([]byte("\n" + p + "\x00"))
		data, err := securefile.ReadFile(p, 64<<20)
		if err != nil {
			sum.Write([]byte("unreadable: " + err.Error()))
			continue
		}
		c := sha256.Sum256(data)
		sum.Write(c[:])
	}
	return hex.EncodeToString(sum.Sum(nil))
}

// scriptsOf are the files under the workspace that a handler's command
// names: each word of the command (or the program and its arguments in
// the exec form), with $AGENT_PROJECT_DIR, $CLAUDE_PROJECT_DIR and ~/
// expanded and relative paths taken from the workspace, that is a regular
// file whose real path lies in the workspace.
func scriptsOf(hh config.HookHandler, ws string) []string {
	if ws == "" {
		return nil
	}
	words := append([]string{hh.Command}, hh.Args...)
	if !hh.HasArgs {
		words = shellWords(hh.Command)
	}
	seen := map[string]bool{}
	var out []string
	for _, w := range words {
		for _, v := range []string{"$AGENT_PROJECT_DIR", "${AGENT_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR", "${CLAUDE_PROJECT_DIR}"} {
			w = strings.ReplaceAll(w, v, ws)
		}
		if w == "" || strings.ContainsAny(w, "$`*?") {
			continue
		}
		if !filepath.IsAbs(w) {
			w = filepath.Join(ws, w)
		}
		real, err := filepath.EvalSymlinks(w)
		if err != nil || !within(ws, real) || seen[real] {
			continue
		}
		if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		seen[real] = true
		out = append(out, real)
	}
	return out
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// shellWords splits a command line into words as a shell would for the
// simple cases that name scripts: blanks separate, quotes group, a
// backslash escapes; operators (;, &&, |, redirections) separate too.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	flush := func() {
		if in {
			out = append(out, cur.String())
		}
		cur.Reset()
		in = false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			cur.WriteString(s[i+1 : i+1+j])
			in, i = true, i+1+j
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				cur.WriteByte(s[j])
			}
			in, i = true, j
		case c == '\\' && i+1 < len(s):
			cur.WriteByte(s[i+1])
			in, i = true, i+1
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' || c == '>' || c == '(' || c == ')':
			flush()
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	flush()
	return out
}
