package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"agent/agent/tools"
	"agent/internal/elicit"
	"agent/internal/quote"
	"agent/mcp"
)

// MCP server tools in a session (docs/reference/mcp.md, "Tool naming" and
// "Tool calls"; docs/reference/runtime.md, "MCP tools and background
// tasks"): each is offered under its <server>__<tool> name, is of the
// execute class (what a server does is unknown; its annotations are hints
// from outside), and follows the same permission rules as every other tool.
// A call that runs longer than mcp.autoBackgroundMs becomes a background
// task: the turn goes on and the result arrives as a background event; no
// call outlives mcp.callTimeoutMs.

// MCPToolOptions configure the tools built from a manager.
type MCPToolOptions struct {
	// AutoBackground hands a call to a background task after this long; 0
	// never hands off (print mode; docs/reference/settings.md, "mcp").
	AutoBackground time.Duration
	// CallTimeout bounds one call; 0 means config.DefaultCallTimeout.
	CallTimeout time.Duration
	// Report receives a finished background task's result (normally
	// Session.ReportBackground).
	Report func(text string)
	// Tasks records handed-off calls for the background list
	// (agent/tasks.go); nil records nothing.
	Tasks *Tasks
	// Life bounds background tasks: they are cancelled when it ends (the
	// session's end).
	Life context.Context
}

// maxMCPResult bounds the text a tool result gives the model.
const maxMCPResult = 100 << 10

// mcpTools builds the session's tools from the manager's current list.
type mcpTools struct {
	m     *mcp.Manager
	opts  MCPToolOptions
	tasks atomic.Int64
	wg    sync.WaitGroup
	// elicit asks the user the URL elicitations a server requires before
	// a call (URLElicitationRequiredError).
	elicit func(ctx context.Context, req elicit.Request) (elicit.Result, error)
}

func (mt *mcpTools) list() []tools.Tool {
	st := mt.m.Tools()
	out := make([]tools.Tool, 0, len(st)+1)
	for _, t := range st {
		out = append(out, &mcpTool{mt: mt, st: t})
	}
	return out
}

type mcpTool struct {
	mt *mcpTools
	st mcp.ServerTool
}

func (t *mcpTool) Spec() tools.Spec {
	schema := t.st.Tool.InputSchema
	if len(schema) == 0 || string(schema) == "null" {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	desc := t.st.Tool.Description
	if len(desc) > 4096 {
		desc = desc[:4096]
	}
	return tools.Spec{Name: t.st.Name, Description: fmt.Sprintf("[MCP server %s] %s", t.st.Server, desc), Schema: schema, Risk: tools.RiskExecute}
}

func (t *mcpTool) Target(json.RawMessage) (tools.Target, error) {
	return tools.Target{Kind: tools.TargetNone}, nil
}

type mcpOutcome struct {
	res *mcp.CallToolResult
	err error
}

func (t *mcpTool) Run(ctx context.Context, args json.RawMessage) tools.Result {
	o := t.mt.opts
	limit := o.CallTimeout
	if limit <= 0 {
		limit = 600 * time.Second
	}
	life := o.Life
	if life == nil {
		life = context.Background()
	}
	// The call lives with the session, not the turn, so that a handed-off
	// call survives the turn; until the handoff, the turn's end (an
	// abort) cancels it.
	cctx, cancel := context.WithTimeout(life, limit)
	stopTurn := context.AfterFunc(ctx, cancel)
	done := make(chan mcpOutcome, 1)
	go func() {
		r, err := t.mt.m.Call(cctx, t.st.Name, args, mcp.CallOptions{Progress: func(p mcp.Progress) {
			ReportProgress(ctx, progressText(p))
		}})
		if err != nil && t.mt.elicit != nil {
			err = t.mt.urlElicitations(cctx, t.st, err)
		}
		done <- mcpOutcome{r, err}
	}()
	var handoff <-chan time.Time
	if o.AutoBackground > 0 && o.AutoBackground < limit {
		timer := time.NewTimer(o.AutoBackground)
		defer timer.Stop()
		handoff = timer.C
	}
	select {
	case out := <-done:
		stopTurn()
		cancel()
		return mcpResult(t.st.Name, out, limit)
	case <-handoff:
		if !stopTurn() {
			// The turn ended at the same moment: the call is cancelled.
			out := <-done
			cancel()
			return mcpResult(t.st.Name, out, limit)
		}
		n := t.mt.tasks.Add(1)
		var tid int
		if o.Tasks != nil {
			tid = o.Tasks.Start(t.st.Name)
		}
		t.mt.wg.Add(1)
		go func() {
			defer t.mt.wg.Done()
			out := <-done
			cancel()
			r := mcpResult(t.st.Name, out, limit)
			status := "finished"
			if r.IsError {
				status = "failed"
			}
			if o.Tasks != nil {
				o.Tasks.Finish(tid, r.IsError, r.Content)
			}
			if o.Report != nil {
				o.Report(fmt.Sprintf("[background task %d: the call to %s %s]\n%s", n, t.st.Name, status, r.Content))
			}
		}()
		return tools.Result{Content: fmt.Sprintf("The call to %s is still running after %s and continues as background task %d. Its result will be reported when it finishes; carry on with the task meanwhile.",
			t.st.Name, o.AutoBackground, n)}
	}
}

// progressText is a progress report as the tool's block shows it: "3/10
// message", "3 message" without a total.
func progressText(p mcp.Progress) string {
	n := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		n += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	if p.Message != "" {
		n += " " + p.Message
	}
	return n
}

// maxURLElicitations bounds the browser steps one refused call may ask.
const maxURLElicitations = 3

// urlElicitations handles a call refused with URLElicitationRequiredError
// (2025-11-25 client/elicitation): each URL the server names is put to the
// user (shown in full, opened only if they agree), and the model is told
// to call again once the step is done. Any other error is returned as it
// is.
func (mt *mcpTools) urlElicitations(ctx context.Context, st mcp.ServerTool, err error) error {
	var pe *mcp.ProtocolError
	if !errors.As(err, &pe) || pe.Code != mcp.CodeURLElicitationRequired {
		return err
	}
	var data struct {
		Elicitations []struct {
			Mode          string `json:"mode"`
			Message       string `json:"message"`
			URL           string `json:"url"`
			ElicitationID string `json:"elicitationId"`
		} `json:"elicitations"`
	}
	if json.Unmarshal(pe.Data, &data) != nil || len(data.Elicitations) == 0 {
		return err
	}
	var said []string
	for i, e := range data.Elicitations {
		u, perr := url.Parse(e.URL)
		if i == maxURLElicitations || e.Mode != string(elicit.ModeURL) || perr != nil || u.Scheme == "" || u.Host == "" {
			break
		}
		res, aerr := mt.elicit(ctx, elicit.Request{Server: st.Server, Mode: elicit.ModeURL, Message: e.Message, URL: e.URL, ID: e.ElicitationID})
		answer := "did not answer"
		if aerr == nil {
			answer = map[elicit.Action]string{elicit.Accept: "agreed to open it", elicit.Decline: "declined", elicit.Cancel: "dismissed it"}[res.Action]
		}
		said = append(said, fmt.Sprintf("%s (%s): the user %s", e.URL, oneLine(e.Message, 200), answer))
	}
	return fmt.Errorf("MCP server %s needs the user to complete a step in a browser before this call can run: %s. Call the tool again once they have completed it", st.Server, strings.Join(said, "; "))
}

// mcpResult turns a tools/call answer into the model's tool result.
func mcpResult(name string, out mcpOutcome, limit time.Duration) tools.Result {
	if out.err != nil {
		msg := out.err.Error()
		if strings.Contains(msg, context.DeadlineExceeded.Error()) {
			msg = fmt.Sprintf("the call did not finish within %s (mcp.callTimeoutMs)", limit)
		}
		return tools.Result{IsError: true, Content: fmt.Sprintf("%s failed: %s", name, msg)}
	}
	var b strings.Builder
	for i, c := range out.res.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch c.Type {
		case "text":
			b.WriteString(c.Text)
		case "image", "audio":
			fmt.Fprintf(&b, "[%s %s, %d bytes base64]", c.Type, c.MimeType, len(c.Data))
		case "resource_link":
			fmt.Fprintf(&b, "[resource link %s]", c.URI)
		case "resource":
			var r struct {
				URI  string `json:"uri"`
				Text string `json:"text"`
			}
			json.Unmarshal(c.Resource, &r)
			fmt.Fprintf(&b, "[resource %s]\n%s", r.URI, r.Text)
		default:
			fmt.Fprintf(&b, "[%s content]", c.Type)
		}
	}
	if len(out.res.Content) == 0 && len(out.res.StructuredContent) > 0 {
		b.Write(out.res.StructuredContent)
	}
	text := b.String()
	if len(text) > maxMCPResult {
		text = quote.PrefixN(text, maxMCPResult) + fmt.Sprintf("\n[output truncated at %d bytes]", maxMCPResult)
	}
	return tools.Result{Content: text, IsError: out.res.IsError}
}

// mcpStatusTool is the read-only /mcp status the model may run
// (docs/reference/mcp.md, "Status lines"). It has no way to approve,
// reject, revoke, sign in or out: those are user commands
// (docs/reference/mcp.md, "Approval").
type mcpStatusTool struct{ m *mcp.Manager }

// MCPStatusToolName is the built-in tool that shows /mcp status.
const MCPStatusToolName = "MCPStatus"

func (t mcpStatusTool) Spec() tools.Spec {
	return tools.Spec{Name: MCPStatusToolName, Risk: tools.RiskInspect,
		Description: "Shows the status of the MCP servers defined in the settings, as /mcp status prints it: name, approval state, scope, type, reason and sign-in state. Read-only: approving, rejecting, revoking, signing in and out are user commands (suggest them to the user).",
		Schema:      json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}
}

func (t mcpStatusTool) Target(json.RawMessage) (tools.Target, error) {
	return tools.Target{Kind: tools.TargetNone}, nil
}

func (t mcpStatusTool) Run(ctx context.Context, _ json.RawMessage) tools.Result {
	lines := t.m.Status()
	if len(lines) == 0 {
		return tools.Result{Content: "No MCP servers are defined."}
	}
	return tools.Result{Content: "NAME\tSTATE\tSCOPE\tTYPE\tREASON\tSIGN-IN\n" + mcp.StatusText(lines)}
}
