package agent

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"agent/agent/tools"
	"agent/config"
	"agent/internal/pathglob"
	"agent/internal/quote"
	"agent/internal/securefile"
)

// CheckerOptions configure a Checker. The zero Mode is "default".
type CheckerOptions struct {
	Mode        string        // a config.Mode* value; "" or an unknown value means default
	Allow, Deny []config.Rule // from the merged settings (config.Permissions)
	Workspace   string        // the workspace's real path: relative patterns start here (without it they match nothing)
	Home        string        // "~/" in patterns; "" leaves such patterns unmatched
	// AutoAllowSandboxed runs a Bash call the sandbox confines without
	// asking (autoAllowBashIfSandboxed; docs/sandbox.md, "Permissions").
	AutoAllowSandboxed bool
	// OnEscalation is told every decision Check makes about a call that
	// asks to leave the sandbox (for the records); nil: nobody.
	OnEscalation func(t tools.Target, v Verdict)
}

// Checker decides tool calls by the permission mode, the risk class of the
// tool and the rules (docs/reference/settings.md, "Decision order";
// docs/reference/runtime.md, "Permission modes and rules"). It is safe for
// concurrent use: rules allowed for the session and mode changes are
// published atomically, so Check never blocks.
//
// The decision, in order:
//  1. A deny rule that matches denies; nothing overrides it.
//  2. Plan mode denies every tool that does not inspect.
//  3. The mode runs the call when it covers the tool's risk class — except
//     a file tool whose real path lies outside the workspace: the mode
//     alone never allows that (docs/reference/runtime.md, "Permission modes
//     and rules": outside the workspace).
//     3a. A Bash call that asks to leave the sandbox is asked, always
//     (docs/sandbox.md, "Escalation"); one the sandbox confines runs when
//     autoAllowBashIfSandboxed is on.
//  4. An allow rule (from settings or allowed for the session) allows.
//  5. Otherwise the user is asked; but a path outside the workspace is
//     denied in plan and bypassPermissions modes, which are meant to run
//     without questions and so must not widen the workspace on their own.
type Checker struct {
	ws, home  string
	autoAllow bool
	onEscal   func(tools.Target, Verdict)
	deny      *ruleSet
	allow     atomic.Pointer[ruleSet] // settings rules, then session rules
	mode      atomic.Int32
	mu        sync.Mutex // serialises AllowForSession
	// parent is the checker a subagent's was narrowed from (Narrow):
	// rules allowed for the session go there too.
	parent *Checker
}

type permMode int32

const (
	permDefault permMode = iota
	permPlan
	permAcceptEdits
	permBypass
)

func parsePermMode(s string) permMode {
	switch s {
	case config.ModePlan:
		return permPlan
	case config.ModeAcceptEdits:
		return permAcceptEdits
	case config.ModeBypass:
		return permBypass
	}
	return permDefault
}

var permModeNames = [...]string{config.ModeDefault, config.ModePlan, config.ModeAcceptEdits, config.ModeBypass}

// compiledRule is a rule with its pattern prepared for each target kind;
// which preparation applies depends on the call's Target.
type compiledRule struct {
	rule   config.Rule
	server string // "name__" for a "name__*" rule

	cmd       string // the pattern as written
	cmdPrefix string // "npm run test" for the compatible form "npm run test:*"
	cmdWords  string // "npm run test *", the same with arguments
	host      string // lower case
	paths     []pathPattern

	allowReason, denyReason string // prepared, so Check allocates nothing for them
}

// pathPattern is a file pattern split at its first wildcard: a literal
// prefix compared in one step, then segments for pathglob.Match.
type pathPattern struct {
	prefix string // "/ws/src" (no trailing '/'); "" when the pattern starts with a wildcard
	rest   []string
}

func newPathPattern(segs []string) pathPattern {
	k := 0
	for k < len(segs) && !pathglob.HasMeta(segs[k]) {
		k++
	}
	var pp pathPattern
	if k > 0 {
		pp.prefix = "/" + strings.Join(segs[:k], "/")
	}
	pp.rest = segs[k:]
	return pp
}

func (pp *pathPattern) match(p string) bool {
	if pp.prefix != "" {
		if !strings.HasPrefix(p, pp.prefix) {
			return false
		}
		p = p[len(pp.prefix):]
		if p == "" {
			p = "/"
		} else if p[0] != '/' {
			return false
		}
	}
	return pathglob.Match(pp.rest, p)
}

type ruleSet struct {
	byTool  map[string][]*compiledRule
	servers []*compiledRule
	n       int
}

func (s *ruleSet) add(r *compiledRule) {
	s.n++
	if r.server != "" {
		s.servers = append(s.servers, r)
		return
	}
	s.byTool[r.rule.Tool] = append(s.byTool[r.rule.Tool], r)
}

func (s *ruleSet) clone() *ruleSet {
	c := &ruleSet{byTool: make(map[string][]*compiledRule, len(s.byTool)), n: s.n}
	for k, v := range s.byTool {
		c.byTool[k] = v[:len(v):len(v)]
	}
	c.servers = s.servers[:len(s.servers):len(s.servers)]
	return c
}

// each calls f with every rule naming the tool, stopping when f returns
// true, and returns that rule.
func (s *ruleSet) each(tool string, f func(*compiledRule) bool) *compiledRule {
	for _, r := range s.byTool[tool] {
		if f(r) {
			return r
		}
	}
	for _, r := range s.servers {
		if strings.HasPrefix(tool, r.server) && f(r) {
			return r
		}
	}
	return nil
}

// forTool returns the rules naming the tool itself and the server
// wildcards, which apply where their prefix matches the tool's name.
func (s *ruleSet) forTool(tool string) (own, servers []*compiledRule) {
	return s.byTool[tool], s.servers
}

// NewChecker prepares the rules. Patterns are compiled once here, so each
// Check costs a few comparisons per rule naming the tool.
func NewChecker(opts CheckerOptions) *Checker {
	c := &Checker{ws: filepath.Clean(opts.Workspace), home: opts.Home, autoAllow: opts.AutoAllowSandboxed, onEscal: opts.OnEscalation}
	if opts.Workspace == "" {
		c.ws = ""
	}
	c.mode.Store(int32(parsePermMode(opts.Mode)))
	c.deny = &ruleSet{byTool: map[string][]*compiledRule{}}
	for _, r := range opts.Deny {
		c.deny.add(c.compile(r))
	}
	allow := &ruleSet{byTool: map[string][]*compiledRule{}}
	for _, r := range opts.Allow {
		allow.add(c.compile(r))
	}
	c.allow.Store(allow)
	return c
}

// SetMode switches the permission mode (the UI's mode cycle); an unknown
// name is refused.
func (c *Checker) SetMode(m string) error {
	if !config.ValidMode(m) {
		return fmt.Errorf("unknown permission mode %q", quote.V(m))
	}
	c.mode.Store(int32(parsePermMode(m)))
	return nil
}

// Mode returns the current permission mode.
func (c *Checker) Mode() string { return permModeNames[c.mode.Load()] }

// AllowForSession adds an allow rule for the rest of the session (the
// prompt answer "allow for this session").
func (c *Checker) AllowForSession(r config.Rule) {
	if c.parent != nil {
		c.parent.AllowForSession(r)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.allow.Load()
	if cur.each(r.Tool, func(x *compiledRule) bool { return x.rule.String() == r.String() }) != nil {
		return
	}
	next := cur.clone()
	next.add(c.compile(r))
	c.allow.Store(next)
}

func (c *Checker) compile(r config.Rule) *compiledRule {
	if r.Tool == "Task" {
		r.Tool = "Agent" // Claude Code's older name of the Agent tool
	}
	cr := &compiledRule{rule: r}
	cr.allowReason = "allowed by the rule " + describeRule(r)
	cr.denyReason = "denied by the rule " + describeRule(r)
	if strings.HasSuffix(r.Tool, "__*") {
		cr.server = strings.TrimSuffix(r.Tool, "*")
	}
	if !r.HasPattern {
		return cr
	}
	cr.cmd = strings.TrimSpace(r.Pattern)
	if p, ok := strings.CutSuffix(cr.cmd, ":*"); ok {
		cr.cmdPrefix, cr.cmdWords = p, p+" *"
	}
	cr.host = strings.ToLower(cr.cmd)
	cr.paths = c.pathPatterns(r.Pattern)
	return cr
}

// pathPatterns normalises a file pattern: relative to the workspace, "~/"
// in the home, a trailing '/' meaning everything below. The literal
// folders before the first wildcard are also resolved through symbolic
// links, because targets are real paths: a rule written for /tmp/** must
// still match on a system where /tmp is a link.
func (c *Checker) pathPatterns(p string) []pathPattern {
	tree := strings.HasSuffix(p, "/") && len(p) > 1
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if c.home == "" {
			return nil
		}
		p = c.home + p[1:]
	case filepath.IsAbs(p):
	default:
		if c.ws == "" {
			return nil
		}
		p = c.ws + "/" + p
	}
	p = filepath.Clean(p)
	if tree {
		p += "/**"
	}
	segs := pathglob.Split(p)
	out := []pathPattern{newPathPattern(segs)}
	k := 0
	for k < len(segs) && !pathglob.HasMeta(segs[k]) {
		k++
	}
	prefix := "/" + strings.Join(segs[:k], "/")
	if real, err := securefile.RealPath("", prefix); err == nil && real != prefix {
		out = append(out, newPathPattern(append(pathglob.Split(real), segs[k:]...)))
	}
	return out
}

// ruleCall is what one Check works out once about its target. It lives
// on the caller's stack.
type ruleCall struct {
	t           tools.Target
	host        string
	segs        []string // Bash: the simple commands
	substitutes bool
}

// makeRuleCall works out the call; buf is stack space for Bash's simple
// commands. It returns a value, not a pointer, so that the call and buf
// stay on the caller's stack.
func makeRuleCall(t tools.Target, buf []string) ruleCall {
	var cl ruleCall
	cl.t = t
	switch t.Kind {
	case tools.TargetCommand:
		cmd := strings.TrimSpace(t.Value)
		segs, subs := splitCommand(cmd, buf)
		cl.t.Value, cl.segs, cl.substitutes = cmd, segs, subs
	case tools.TargetPath:
		cl.t.Value = filepath.Clean(t.Value)
	case tools.TargetHost:
		cl.host = strings.ToLower(t.Value)
	}
	return cl
}

func (r *compiledRule) matchCommand(s string) bool {
	if r.cmdPrefix != "" && (matchStar(r.cmdPrefix, s) || matchStar(r.cmdWords, s)) {
		return true
	}
	return matchStar(r.cmd, s)
}

// denying returns the first deny rule that matches the call.
func (s *ruleSet) denying(tool string, cl *ruleCall) *compiledRule {
	own, servers := s.forTool(tool)
	for _, r := range own {
		if r.denies(cl) {
			return r
		}
	}
	for _, r := range servers {
		if strings.HasPrefix(tool, r.server) && r.denies(cl) {
			return r
		}
	}
	return nil
}

// denies reports whether a deny rule matches: for Bash the whole command or
// any one of its simple commands, so `Bash(rm *)` also catches
// `make && rm -rf build`.
func (r *compiledRule) denies(cl *ruleCall) bool {
	if !r.rule.HasPattern {
		return true
	}
	switch cl.t.Kind {
	case tools.TargetCommand:
		if r.matchCommand(cl.t.Value) {
			return true
		}
		for _, s := range cl.segs {
			if r.matchCommand(s) {
				return true
			}
		}
	case tools.TargetPath:
		return r.matchesPath(cl.t.Value)
	case tools.TargetHost:
		return matchStar(r.host, cl.host)
	}
	return false
}

func (r *compiledRule) matchesPath(p string) bool {
	for i := range r.paths {
		if r.paths[i].match(p) {
			return true
		}
	}
	return false
}

// allowsWhole reports whether an allow rule covers the whole call.
func (r *compiledRule) allowsWhole(cl *ruleCall) bool {
	if !r.rule.HasPattern {
		return true
	}
	switch cl.t.Kind {
	case tools.TargetCommand:
		return r.cmd == cl.t.Value
	case tools.TargetPath:
		return r.matchesPath(cl.t.Value)
	case tools.TargetHost:
		return matchStar(r.host, cl.host)
	}
	return false
}

// allowedBy finds the allow rule for a call. A Bash command is allowed
// when a rule names it exactly, or when it substitutes no commands and
// each of its simple commands matches some rule: a wildcard allows
// arguments, never a second command chained after them.
func (s *ruleSet) allowedBy(tool string, cl *ruleCall) *compiledRule {
	own, servers := s.forTool(tool)
	for _, r := range own {
		if r.allowsWhole(cl) {
			return r
		}
	}
	for _, r := range servers {
		if strings.HasPrefix(tool, r.server) && r.allowsWhole(cl) {
			return r
		}
	}
	if cl.t.Kind != tools.TargetCommand || cl.substitutes || len(cl.segs) == 0 {
		return nil
	}
	// Server rules carry no pattern and were tried above.
	var first *compiledRule
	for _, seg := range cl.segs {
		var found *compiledRule
		for _, r := range own {
			if r.rule.HasPattern && r.matchCommand(seg) {
				found = r
				break
			}
		}
		if found == nil {
			return nil
		}
		if first == nil {
			first = found
		}
	}
	return first
}

// Reasons, for messages.
const (
	reasonPlan       = "plan mode allows inspection only"
	reasonOutside    = "the path is outside the workspace"
	reasonSandboxed  = "the sandbox confines the command (autoAllowBashIfSandboxed)"
	remedyEscalation = "Leaving the sandbox needs the user's answer each time; where nobody can answer, only a rule that runs this exact command unconfined lets it run: the command in sandbox.excludedCommands in ~/.agent/settings.json, and allowed by permissions.allow."
)

// EscalationReason says what a call that leaves the sandbox asks for.
func EscalationReason(t tools.Target) string {
	what := "network access"
	if p, ok := strings.CutPrefix(t.Escalation, "write:"); ok {
		what = "writing " + p
	}
	return fmt.Sprintf("the command asks to run outside the sandbox for %s: %s", what, t.Justification)
}

func (c *Checker) escalation(t tools.Target, v Verdict) Verdict {
	if t.Escalation != "" && c.onEscal != nil {
		c.onEscal(t, v)
	}
	return v
}

var (
	reasonPermModeRuns = [...]string{
		permDefault:     "default mode runs tools that inspect",
		permPlan:        "plan mode runs tools that inspect",
		permAcceptEdits: "acceptEdits mode runs tools that inspect or modify",
		permBypass:      "bypassPermissions mode runs every tool",
	}
	reasonAsk = [...]string{
		tools.RiskModify:  "tools that modify files need approval in this mode",
		tools.RiskExecute: "tools that execute need approval in this mode",
	}
)

// Check decides one call. See Checker for the order of the rules.
func (c *Checker) Check(spec tools.Spec, t tools.Target) Verdict {
	var buf [8]string
	cl := makeRuleCall(t, buf[:0])
	if r := c.deny.denying(spec.Name, &cl); r != nil {
		return c.escalation(t, Verdict{Decision: Deny, Rule: &r.rule, Reason: r.denyReason})
	}
	m := permMode(c.mode.Load())
	if m == permPlan && spec.Risk != tools.RiskInspect {
		return c.escalation(t, Verdict{Decision: Deny, Reason: reasonPlan})
	}
	if t.Escalation != "" {
		// Never a rule, never a mode: the user, every time.
		return c.escalation(t, Verdict{Decision: Ask, Reason: EscalationReason(t), Remedy: remedyEscalation})
	}
	if t.Sandboxed && c.autoAllow {
		return Verdict{Decision: Allow, Reason: reasonSandboxed}
	}
	outside := t.Kind == tools.TargetPath && t.OutsideWorkspace
	if !outside && permModeRuns(m, spec.Risk) {
		return Verdict{Decision: Allow, Reason: reasonPermModeRuns[m]}
	}
	if r := c.allow.Load().allowedBy(spec.Name, &cl); r != nil {
		return Verdict{Decision: Allow, Rule: &r.rule, Reason: r.allowReason}
	}
	v := Verdict{Decision: Ask, Suggest: c.suggest(spec, cl.t)}
	switch {
	case outside && (m == permPlan || m == permBypass):
		v.Decision, v.Reason = Deny, reasonOutside+" and no allow rule matches it"
	case outside:
		v.Reason = reasonOutside
	case spec.Risk == tools.RiskModify || spec.Risk == tools.RiskExecute:
		v.Reason = reasonAsk[spec.Risk]
	default:
		v.Reason = "this call needs approval"
	}
	return v
}

func permModeRuns(m permMode, r tools.Risk) bool {
	switch m {
	case permBypass:
		return true
	case permAcceptEdits:
		return r == tools.RiskInspect || r == tools.RiskModify
	}
	return r == tools.RiskInspect
}

func describeRule(r config.Rule) string {
	if r.File != "" {
		return fmt.Sprintf("%q in %s", quote.V(r.String()), r.File)
	}
	return fmt.Sprintf("%q", quote.V(r.String()))
}

// DeniedTool reports whether a deny rule without a pattern names the tool
// (or its server, `server__*`): such a tool is not offered to the model at
// all (docs/reference/runtime.md, "Permission modes and rules").
func (c *Checker) DeniedTool(name string) bool {
	return c.deny.each(name, func(r *compiledRule) bool { return !r.rule.HasPattern }) != nil
}

// SuggestRule returns the narrowest allow rule that covers the call: the
// exact command for Bash, the path for a file tool (relative when inside
// the workspace, "~/" when in the home, wildcard characters escaped), the
// host for WebFetch, and the tool's name when there is no target. A
// command containing '*' is suggested as written; the wildcard then also
// matches other arguments in that position, since commands have no escape.
func (c *Checker) SuggestRule(spec tools.Spec, t tools.Target) string {
	var buf [8]string
	cl := makeRuleCall(t, buf[:0])
	return c.suggest(spec, cl.t)
}

func (c *Checker) suggest(spec tools.Spec, t tools.Target) string {
	if t.Value == "" {
		return spec.Name
	}
	switch t.Kind {
	case tools.TargetCommand:
		return spec.Name + "(" + t.Value + ")"
	case tools.TargetHost:
		return spec.Name + "(" + strings.ToLower(t.Value) + ")"
	case tools.TargetPath:
		return spec.Name + "(" + c.pathPattern(t.Value) + ")"
	}
	return spec.Name
}

func (c *Checker) pathPattern(p string) string {
	switch {
	case c.ws != "" && tools.WithinDir(p, c.ws):
		rel, err := filepath.Rel(c.ws, p)
		if err == nil {
			rel = escapeMeta(rel)
			if strings.HasPrefix(rel, "~") {
				rel = "./" + rel // not the home
			}
			return rel
		}
	case c.home != "" && c.home != "/" && tools.WithinDir(p, c.home):
		return "~" + escapeMeta(strings.TrimPrefix(p, c.home))
	}
	return escapeMeta(p)
}

func escapeMeta(p string) string {
	if !strings.ContainsAny(p, "*?[\\") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if strings.IndexByte("*?[\\", p[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// DeniedMessage is the tool result for a call that was denied, or that
// needed an answer nobody could give (print mode, mcp serve, a background
// session): it names the tool, says it was denied, and names the rule that
// would allow it (docs/reference/runtime.md, "Permission prompts"). The
// turn goes on with it.
func DeniedMessage(toolName string, v Verdict) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Permission denied: the %s call was not run", toolName)
	switch {
	case v.Decision == Deny && v.Rule != nil:
		fmt.Fprintf(&b, "; it is %s. A deny rule wins over every allow rule; only removing it from permissions.deny would allow this call.", v.Reason)
		return b.String()
	case v.Decision == Ask:
		b.WriteString(" because it needs approval")
		if v.Reason != "" {
			b.WriteString(" (" + v.Reason + ")")
		}
		b.WriteString(" and nobody could answer.")
	default:
		if v.Reason != "" {
			b.WriteString(" because " + v.Reason)
		}
		b.WriteString(".")
	}
	if v.Suggest != "" {
		fmt.Fprintf(&b, " To allow it, add %s to permissions.allow in .agent/settings.json or .agent/settings.local.json.", config.QuoteJSON(v.Suggest))
	} else if v.Remedy != "" {
		b.WriteString(" " + v.Remedy)
	} else if v.Reason == reasonPlan {
		b.WriteString(" Switch out of plan mode to let it run.")
	}
	return b.String()
}
