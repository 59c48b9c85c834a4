package agent

// Subagents (docs/reference/runtime.md, "Subagents, commands and skills"):
// the Agent tool runs a child session with its own conversation and
// context window, the tools and permissions of its definition narrowed
// from the parent's, and returns its final answer with one line of
// figures. Children run at most four at a time and cannot start their
// own.

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"agent/agent/extend"
	"agent/agent/hooks"
	"agent/agent/tools"
	"agent/config"
	"agent/internal/quote"
)

// AgentToolName is the subagent tool; rules and hook matchers also accept
// its older name Task.
const AgentToolName = "Agent"

// maxChildren is how many subagents run at once.
const maxChildren = 4

// AgentInfo names a subagent in the events its parent forwards.
type AgentInfo struct {
	ID          string
	Type        string
	Description string
	// CallID is the parent's Agent call that runs it.
	CallID string
}

// subagentPrompt is the system prompt of general-purpose, and what every
// definition's own prompt is followed by.
const subagentPrompt = `You are a subagent: another agent gave you one task and reads only your final answer. Work on the task alone with the tools you have; nobody answers questions. When you are done, answer with a concise report of what you found or did: the facts, file paths with line numbers, and anything the other agent must know. Do not include your intermediate steps.`

// agentTool is the Agent tool of one workspace session.
type agentTool struct {
	c       *WorkspaceSession
	catalog *extend.Catalog
	sem     chan struct{}
	seq     atomic.Int64
}

func (a *agentTool) Spec() tools.Spec {
	var b strings.Builder
	b.WriteString("Start a subagent: a separate agent with its own conversation that does one task and returns one report. Use it for broad searches and research that would read many files (its reading does not fill your context), and for independent tasks you can run in parallel (several Agent calls in one answer run together). Give it a complete, self-contained prompt: it sees nothing of this conversation. Agent types:\n")
	for _, ag := range a.catalog.Agents {
		if ag.Usable() {
			fmt.Fprintf(&b, "- %s: %s\n", ag.Name, oneLine(ag.Description, 300))
		}
	}
	schema := `{"type":"object","properties":{` +
		`"description":{"type":"string","minLength":1,"description":"A short (3-5 word) description of the task"},` +
		`"prompt":{"type":"string","minLength":1,"description":"The task for the agent, complete and self-contained"},` +
		`"subagent_type":{"type":"string","description":"The type of agent (default general-purpose)"},` +
		`"model":{"type":"string","description":"A model for the agent; its definition's or this session's otherwise"}},` +
		`"required":["description","prompt"],"additionalProperties":false}`
	return tools.Spec{Name: AgentToolName, Description: b.String(), Schema: json.RawMessage(schema), Risk: tools.RiskInspect}
}

func (a *agentTool) Target(json.RawMessage) (tools.Target, error) { return tools.Target{}, nil }

type agentArgs struct {
	Description  string `json:"description"`
	Prompt       string `json:"prompt"`
	SubagentType string `json:"subagent_type"`
	Model        string `json:"model"`
}

func (a *agentTool) Run(ctx context.Context, raw json.RawMessage) tools.Result {
	var args agentArgs
	if err := json.Unmarshal(raw, &args); err != nil {
		return tools.Result{IsError: true, Content: "Agent: " + err.Error()}
	}
	if args.SubagentType == "" {
		args.SubagentType = "general-purpose"
	}
	def := a.catalog.Agent(args.SubagentType)
	if def == nil {
		return tools.Result{IsError: true, Content: fmt.Sprintf("There is no agent type %q. Use one of: %s.", args.SubagentType, strings.Join(a.typeNames(), ", "))}
	}
	select {
	case a.sem <- struct{}{}:
	case <-ctx.Done():
		return tools.Result{IsError: true, Content: "The user interrupted the turn before the agent started."}
	}
	defer func() { <-a.sem }()
	return a.run(ctx, def, args)
}

func (a *agentTool) typeNames() []string {
	var out []string
	for _, ag := range a.catalog.Agents {
		if ag.Usable() {
			out = append(out, ag.Name)
		}
	}
	return out
}

// childTools are the tools a child gets: the parent's without Agent, then
// the definition's list or the parent's all, less its disallowed tools.
// Tools the definition names that the parent lacks refuse the spawn.
func childTools(parent []tools.Tool, def *extend.Agent) ([]tools.Tool, error) {
	have := map[string]tools.Tool{}
	var order []string
	for _, t := range parent {
		n := t.Spec().Name
		if n == AgentToolName {
			continue
		}
		have[n] = t
		order = append(order, n)
	}
	want := order
	if def.HasTools {
		want = nil
		var missing []string
		for _, n := range def.Tools {
			if n == "Task" || n == AgentToolName {
				continue // depth 1: a child starts no agents
			}
			if _, ok := have[n]; !ok {
				if !def.Builtin {
					missing = append(missing, n)
				}
				continue // a built-in takes what the session has of its tools
			}
			want = append(want, n)
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("the agent %s asks for tools this session does not have: %s", def.Name, strings.Join(missing, ", "))
		}
	}
	deny, err := disallowRules(def)
	if err != nil {
		return nil, err
	}
	drop := map[string]bool{}
	for _, r := range deny {
		if !r.HasPattern {
			drop[r.Tool] = true // a pattern (Bash(rm:*)) only denies: startChild
		}
	}
	var out []tools.Tool
	for _, n := range want {
		if !drop[n] {
			out = append(out, have[n])
		}
	}
	return out, nil
}

// disallowRules are a definition's disallowedTools as permission rules: a
// tool's name removes the tool, a pattern (Bash(rm:*)) denies the calls it
// matches. An entry that is not a rule refuses the spawn: a restriction
// must not be dropped unsaid.
func disallowRules(def *extend.Agent) ([]config.Rule, error) {
	var out []config.Rule
	for _, n := range def.DisallowedTools {
		r, err := config.ParseRule(n)
		if err != nil {
			return nil, fmt.Errorf("the agent %s (%s): disallowedTools entry %s: %v", def.Name, def.File, quote.Q(n), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// run starts the child, runs the task as its one turn, and closes it.
func (a *agentTool) run(ctx context.Context, def *extend.Agent, args agentArgs) tools.Result {
	start := time.Now()
	parent := a.c.Session
	info := AgentInfo{ID: fmt.Sprintf("%s-a%d", parent.ID(), a.seq.Add(1)), Type: def.Name, Description: args.Description, CallID: callOf(ctx)}
	child, err := a.startChild(def, args, info)
	if err != nil {
		return tools.Result{IsError: true, Content: "Agent: " + err.Error()}
	}
	turn := turnOf(ctx)
	var calls atomic.Int64
	unsub := child.Subscribe(func(ev Event) {
		switch ev.Kind {
		case EventToolStart:
			calls.Add(1)
		case EventToolEnd, EventPermission, EventCompact, EventNotice, EventHookFailure:
		default:
			return
		}
		ev.Turn, ev.Agent = turn, &info
		parent.emit(ev)
	})
	defer unsub()
	parent.emit(Event{Kind: EventAgentStart, Turn: turn, Agent: &info, Text: args.Prompt})
	if parent.opts.Hooks.Has("SubagentStart") {
		in := parent.hookInput("SubagentStart")
		in.AgentID, in.AgentType = info.ID, info.Type
		parent.runHooks(ctx, turn, in)
	}
	t, err := child.Submit(TurnRequest{Prompt: args.Prompt})
	var res TurnResult
	if err == nil {
		select {
		case <-t.Done():
			res, _ = t.Wait(context.Background())
		case <-ctx.Done():
			child.Abort()
			res, _ = t.Wait(context.Background())
		}
	}
	child.Close()
	line := fmt.Sprintf("(agent %s: %d tool calls, %d tokens, %.1f s)", info.ID, calls.Load(), res.Usage.InputTokens+res.Usage.OutputTokens, time.Since(start).Seconds())
	end := Event{Kind: EventAgentEnd, Turn: turn, Agent: &info, Text: line, Result: &res}
	parent.emit(end)
	switch {
	case err != nil:
		return tools.Result{IsError: true, Content: "Agent: " + err.Error()}
	case res.Status == StatusInterrupted:
		return tools.Result{IsError: true, Content: strings.TrimSpace(res.Text + "\n\nThe agent was interrupted. " + line)}
	case res.Status != StatusComplete:
		msg := "the agent failed"
		if res.Err != nil {
			msg += ": " + res.Err.Error()
		}
		return tools.Result{IsError: true, Content: strings.TrimSpace(res.Text+"\n\n"+msg) + "\n" + line}
	}
	return tools.Result{Content: strings.TrimSpace(res.Text) + "\n\n" + line}
}

// startChild builds the child session: the parent's provider (the
// definition's or the call's model when named), a framing of its own
// prompt with the parent's environment block and, but for Explore, the
// parent's context message; the narrowed tools and permissions; the
// parent's prompter with questions labelled; its transcript beside the
// parent's.
func (a *agentTool) startChild(def *extend.Agent, args agentArgs, info AgentInfo) (*Session, error) {
	c := a.c
	parent := c.Session
	ts, err := childTools(parent.toolList(), def)
	if err != nil {
		return nil, err
	}
	deny, _ := disallowRules(def) // checked by childTools
	perms := c.Permissions.Narrow(def.PermissionMode, deny)
	parent.mu.Lock()
	prov, model, provID, fr := parent.provider, parent.model, parent.provID, parent.framing
	limits := parent.cm.limits
	parent.mu.Unlock()
	if m := childModel(def, args.Model, provID); m != "" {
		model = m
	}
	prompt := subagentPrompt
	own, err := def.PromptText()
	if err != nil {
		return nil, err
	}
	if own != "" {
		prompt = own + "\n\n" + subagentPrompt
	}
	framing := Framing{System: []string{prompt}, StaticSystem: 1}
	if len(fr.System) > 1 {
		framing.System = append(framing.System, fr.System[1:]...) // the environment block
	}
	if !(def.Builtin && def.Name == "Explore") {
		framing.Context = fr.Context // the built-in Explore reads no instruction files
	}
	var tr *Transcript
	if c.transcript != nil {
		tr, _ = CreateTranscriptIn(filepath.Join(SessionsDir(c.Home), parent.ID()+".agents"), Header{ID: info.ID, Workspace: c.Workspace, Provider: provID, Model: model})
	}
	var prompter Prompter
	if parent.opts.Prompter != nil {
		prompter = &labelledPrompter{inner: parent.opts.Prompter, agent: info}
	}
	return NewSession(SessionOptions{
		ID: info.ID, Provider: prov, ProviderID: provID, Model: model, Framing: framing,
		Tools: ts, Permissions: perms, Prompter: prompter, Workspace: c.Workspace,
		Transcript: tr, MaxSteps: def.MaxTurns, Hooks: parent.opts.Hooks, Guard: parent.opts.Guard,
		Attach: parent.opts.Attach, Context: ContextOptions{Limits: limits, AutoCompactAt: parent.opts.Context.AutoCompactAt, NoAutoCompact: parent.opts.Context.NoAutoCompact},
		Subagent: &info, Logger: parent.log, Parent: parent,
	})
}

// childModel is the model a child runs: the call's, else its definition's
// ("inherit" keeps the parent's); a short alias (sonnet, opus, haiku) is
// the parent provider's catalog model that names it.
func childModel(def *extend.Agent, call, provID string) string {
	m := call
	if m == "" {
		m = def.Model
	}
	if m == "" || m == "inherit" {
		return ""
	}
	if strings.ContainsAny(m, "-./:") {
		return m
	}
	return aliasModel(provID, m)
}

// labelledPrompter asks the parent's prompter, one question at a time
// (children run in parallel), with the agent named on the question.
type labelledPrompter struct {
	inner Prompter
	agent AgentInfo
}

var promptMu sync.Mutex

func (p *labelledPrompter) AskPermission(ctx context.Context, req PermissionRequest) (Answer, error) {
	promptMu.Lock()
	defer promptMu.Unlock()
	req.Agent = p.agent.Type + " (" + p.agent.Description + ")"
	return p.inner.AskPermission(ctx, req)
}

// turnKey carries the parent's turn id to the tools it runs.
type turnKey struct{}

func withTurn(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, turnKey{}, id)
}

func turnOf(ctx context.Context) string {
	id, _ := ctx.Value(turnKey{}).(string)
	return id
}

// callKey carries the id of the call a tool runs for.
type callKey struct{}

func callOf(ctx context.Context) string {
	id, _ := ctx.Value(callKey{}).(string)
	return id
}

// AgentsCommand is /agents: the definitions with where they come from and
// their problems.
func (c *WorkspaceSession) AgentsCommand() string {
	var b strings.Builder
	b.WriteString("Agents (the Agent tool's subagent_type):\n")
	for _, a := range c.Catalog.Agents {
		state := ""
		switch {
		case a.Fatal:
			state = "  (not usable)"
		case a.Shadowed != "":
			state = "  (shadowed by " + a.Shadowed + ")"
		}
		src := "built in"
		if !a.Builtin {
			src = string(a.Scope) + " " + a.File
		}
		fmt.Fprintf(&b, "  %s%s  %s\n      %s\n", a.Name, state, src, oneLine(a.Description, 100))
		for _, p := range a.Problems {
			fmt.Fprintf(&b, "      problem: %s\n", p)
		}
	}
	probs := append([]string(nil), c.Catalog.Problems...)
	sort.Strings(probs)
	for _, p := range probs {
		fmt.Fprintf(&b, "  problem: %s\n", p)
	}
	return b.String()
}

// stopEvent makes a child's Stop input SubagentStop, with its id and
// type.
func (s *Session) stopEvent(in *hooks.Input) {
	if a := s.opts.Subagent; a != nil {
		in.HookEventName, in.AgentID, in.AgentType = "SubagentStop", a.ID, a.Type
	}
}
