package agent

import (
	"agent/agent/tools"
	"agent/config"
)

// Narrowing a subagent's permissions, and the rules of one turn
// (docs/reference/runtime.md, "Subagents, commands and skills").

// strictness orders the modes from the most permissive.
func strictness(m permMode) int {
	switch m {
	case permBypass:
		return 0
	case permAcceptEdits:
		return 1
	case permDefault:
		return 2
	}
	return 3 // permPlan
}

// Narrow returns a checker for a subagent: the same rules (the session's
// allowed ones included) plus extra deny rules, in the stricter of this
// checker's mode and mode ("" keeps this one's). A rule the child's user
// allows for the session is allowed in the parent too: the user answered
// for the session.
func (c *Checker) Narrow(mode string, deny []config.Rule) *Checker {
	n := &Checker{ws: c.ws, home: c.home, parent: c, autoAllow: c.autoAllow, onEscal: c.onEscal}
	m := permMode(c.mode.Load())
	if mode != "" {
		if own := parsePermMode(mode); strictness(own) > strictness(m) {
			m = own
		}
	}
	n.mode.Store(int32(m))
	n.deny = c.deny.clone()
	for _, r := range deny {
		n.deny.add(n.compile(r))
	}
	n.allow.Store(c.allow.Load())
	return n
}

// TurnAllows reports whether one of rules allows the call: the rules a
// custom command's or skill's allowed-tools pre-approve for its turn. A
// deny rule or plan mode still wins: the caller asks only for a call the
// check would have asked about.
func (c *Checker) TurnAllows(rules []config.Rule, spec tools.Spec, t tools.Target) bool {
	if len(rules) == 0 {
		return false
	}
	set := &ruleSet{byTool: map[string][]*compiledRule{}}
	for _, r := range rules {
		set.add(c.compile(r))
	}
	var buf [8]string
	cl := makeRuleCall(t, buf[:0])
	return set.allowedBy(spec.Name, &cl) != nil
}
