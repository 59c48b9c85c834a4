package mcp

import (
	"context"
	"encoding/json"
	"sync"
)

// Progress of a served tools/call (MCP basic/utilities/progress): when the
// request's _meta carries a progressToken, the target may report what the
// call is doing (for agent_submit: the turn's tool calls), and each report
// goes to the client as notifications/progress on the request's own
// stream (stdio, or the SSE answer over HTTP). Reports never block the
// caller: a slow client loses reports, not time.

// notifier sends one notification on the stream of the request in ctx.
type notifier func(method string, params any)

type notifierKey struct{}

// withNotifier is how a transport lets a request's handler send
// notifications on that request's stream.
func withNotifier(ctx context.Context, n notifier) context.Context {
	return context.WithValue(ctx, notifierKey{}, n)
}

type progressKey struct{}

// progress is one call's reporting: a bounded queue drained in order by
// one goroutine, which ends with the call.
type progress struct {
	token json.RawMessage
	ch    chan string
	done  chan struct{}
	once  sync.Once
}

// maxProgressQueue bounds the reports waiting for a slow client.
const maxProgressQueue = 64

// startProgress sets up reporting for a call whose params name a
// progressToken, on a transport that can notify; stop ends it. withMessage
// says whether the revision has the message field of a progress
// notification (2025-03-26 and later); without it, only the count goes
// out.
func startProgress(ctx context.Context, params json.RawMessage, withMessage bool) (context.Context, func()) {
	n, _ := ctx.Value(notifierKey{}).(notifier)
	if n == nil {
		return ctx, func() {}
	}
	var p struct {
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ctx, func() {}
	}
	tok := p.Meta.ProgressToken
	if len(tok) == 0 || (tok[0] != '"' && (tok[0] < '0' || tok[0] > '9') && tok[0] != '-') {
		return ctx, func() {} // a token is a string or a number
	}
	pr := &progress{token: tok, ch: make(chan string, maxProgressQueue), done: make(chan struct{})}
	go func() {
		defer close(pr.done)
		step := 0
		for msg := range pr.ch {
			step++
			p := map[string]any{"progressToken": pr.token, "progress": step}
			if withMessage {
				p["message"] = msg
			}
			n("notifications/progress", p)
		}
	}()
	stop := func() {
		pr.once.Do(func() { close(pr.ch) })
		<-pr.done
	}
	return context.WithValue(ctx, progressKey{}, pr), stop
}

// ReportProgress tells the client of the tools/call in ctx what the call
// is doing, when it asked for progress; otherwise it does nothing. It
// never blocks. Safe for concurrent use until the call returns.
func ReportProgress(ctx context.Context, message string) {
	pr, _ := ctx.Value(progressKey{}).(*progress)
	if pr == nil {
		return
	}
	defer func() { recover() }() //nolint:errcheck // a report after the call ended is dropped
	select {
	case pr.ch <- message:
	default:
	}
}
