package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"agent/internal/elicit"
	"agent/mcp/jsonrpc"
)

const contactSchema = `{"type":"object","properties":{"name":{"type":"string","default":"Ann"},"age":{"type":"integer","minimum":0}},"required":["name"]}`

// TestServerRequests: what a server may ask the client, per revision and
// per answer of the user.
func TestServerRequests(t *testing.T) {
	accept := func(content map[string]any) func(context.Context, elicit.Request) (elicit.Result, error) {
		return func(context.Context, elicit.Request) (elicit.Result, error) {
			return elicit.Result{Action: elicit.Accept, Content: content}, nil
		}
	}
	tests := []struct {
		name     string
		versions []string
		opts     ClientOptions
		method   string
		params   string
		want     string // the result's JSON
		code     int64  // else the error code
		diag     string // a diagnostic that must be reported
	}{
		{name: "ping", method: "ping", want: `{}`},
		{name: "roots", opts: ClientOptions{Roots: []Root{{URI: "file:///work/ws", Name: "ws"}}}, method: "roots/list",
			want: `{"roots":[{"uri":"file:///work/ws","name":"ws"}]}`},
		{name: "no roots offered", method: "roots/list", code: jsonrpc.CodeMethodNotFound},
		{name: "sampling is refused", method: "sampling/createMessage", params: `{"messages":[],"maxTokens":10}`, code: -1},
		{name: "unknown request", method: "tasks/list", code: jsonrpc.CodeMethodNotFound},
		{name: "form accepted", opts: ClientOptions{Elicit: accept(map[string]any{"name": "Bo", "age": int64(4)})}, method: "elicitation/create",
			params: `{"message":"Who?","requestedSchema":` + contactSchema + `}`, want: `{"action":"accept","content":{"age":4,"name":"Bo"}}`},
		{name: "form declined", opts: ClientOptions{Elicit: func(context.Context, elicit.Request) (elicit.Result, error) {
			return elicit.Result{Action: elicit.Decline}, nil
		}}, method: "elicitation/create", params: `{"mode":"form","message":"Who?","requestedSchema":` + contactSchema + `}`, want: `{"action":"decline"}`},
		{name: "form cancelled", opts: ClientOptions{Elicit: func(context.Context, elicit.Request) (elicit.Result, error) {
			return elicit.Result{Action: elicit.Cancel}, nil
		}}, method: "elicitation/create", params: `{"message":"Who?","requestedSchema":` + contactSchema + `}`, want: `{"action":"cancel"}`},
		{name: "an answer outside the form is declined", opts: ClientOptions{Elicit: accept(map[string]any{"age": int64(4)})}, method: "elicitation/create",
			params: `{"message":"Who?","requestedSchema":` + contactSchema + `}`, want: `{"action":"decline"}`, diag: "does not fit"},
		{name: "a schema that cannot be rendered is declined with the reason", opts: ClientOptions{Elicit: accept(nil)}, method: "elicitation/create",
			params: `{"message":"?","requestedSchema":{"type":"object","properties":{"o":{"type":"object"}}}}`, want: `{"action":"decline"}`, diag: `property "o"`},
		{name: "form without schema", opts: ClientOptions{Elicit: accept(nil)}, method: "elicitation/create", params: `{"message":"?"}`, code: jsonrpc.CodeInvalidParams},
		{name: "unknown mode", opts: ClientOptions{Elicit: accept(nil)}, method: "elicitation/create", params: `{"mode":"voice","message":"?"}`, code: jsonrpc.CodeInvalidParams},
		{name: "url accepted", opts: ClientOptions{Elicit: accept(nil)}, method: "elicitation/create",
			params: `{"mode":"url","message":"Sign in","url":"https://example.com/connect","elicitationId":"e1"}`, want: `{"action":"accept"}`},
		{name: "url without id", opts: ClientOptions{Elicit: accept(nil)}, method: "elicitation/create",
			params: `{"mode":"url","message":"Sign in","url":"https://example.com/connect"}`, code: jsonrpc.CodeInvalidParams},
		{name: "url mode needs 2025-11-25", versions: []string{Version20250618}, opts: ClientOptions{Elicit: accept(nil)}, method: "elicitation/create",
			params: `{"mode":"url","message":"Sign in","url":"https://example.com/","elicitationId":"e1"}`, code: jsonrpc.CodeInvalidParams},
		{name: "form in 2025-06-18", versions: []string{Version20250618}, opts: ClientOptions{Elicit: accept(map[string]any{"name": "Bo"})}, method: "elicitation/create",
			params: `{"message":"Who?","requestedSchema":` + contactSchema + `}`, want: `{"action":"accept","content":{"name":"Bo"}}`},
		{name: "no elicitation before 2025-06-18", versions: []string{Version20250326}, opts: ClientOptions{Elicit: accept(nil)}, method: "elicitation/create",
			params: `{"message":"Who?","requestedSchema":` + contactSchema + `}`, code: jsonrpc.CodeMethodNotFound},
		{name: "no elicitation offered", method: "elicitation/create", params: `{"message":"Who?","requestedSchema":` + contactSchema + `}`, code: jsonrpc.CodeMethodNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			versions := tc.versions
			if versions == nil {
				versions = legacyOnly
			}
			var mu sync.Mutex
			var diags []string
			opts := tc.opts
			opts.OnDiagnostic = func(err error) { mu.Lock(); diags = append(diags, err.Error()); mu.Unlock() }
			p := mustPipes(t, fakeConfig{versions: versions}, opts)
			var params any
			if tc.params != "" {
				params = json.RawMessage(tc.params)
			}
			res, err := p.srvConn.Call(context.Background(), tc.method, params)
			if tc.code != 0 {
				var pe *ProtocolError
				if !errors.As(err, &pe) || pe.Code != tc.code {
					t.Fatalf("%s = %s, %v; want code %d", tc.method, res, err, tc.code)
				}
				if tc.code == -1 && pe.Message != "User rejected sampling request" {
					t.Errorf("sampling refusal message %q", pe.Message)
				}
				return
			}
			if err != nil || string(res) != tc.want {
				t.Fatalf("%s = %s, %v; want %s", tc.method, res, err, tc.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if tc.diag != "" && !strings.Contains(strings.Join(diags, "\n"), tc.diag) {
				t.Errorf("diagnostics %q lack %q", diags, tc.diag)
			}
		})
	}
}

// TestClientCapabilities: initialize declares roots and elicitation only
// when the client can answer them, and never sampling.
func TestClientCapabilities(t *testing.T) {
	tests := []struct {
		name string
		opts ClientOptions
		want string
	}{
		{name: "nothing", want: `{}`},
		{name: "roots", opts: ClientOptions{Roots: []Root{}}, want: `{"roots":{}}`},
		{name: "both", opts: ClientOptions{Roots: []Root{}, Elicit: func(context.Context, elicit.Request) (elicit.Result, error) { return elicit.Result{}, nil }},
			want: `{"roots":{},"elicitation":{"form":{},"url":{}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{opts: tc.opts}
			b, _ := json.Marshal(c.capabilities())
			if string(b) != tc.want {
				t.Fatalf("capabilities = %s, want %s", b, tc.want)
			}
		})
	}
}

func TestElicitationCompleteOnlyForKnownIDs(t *testing.T) {
	done := make(chan string, 4)
	p := mustPipes(t, fakeConfig{versions: legacyOnly}, ClientOptions{
		Elicit: func(context.Context, elicit.Request) (elicit.Result, error) {
			return elicit.Result{Action: elicit.Accept}, nil
		},
		OnElicitationComplete: func(id string) { done <- id },
	})
	ctx := context.Background()
	if _, err := p.srvConn.Call(ctx, "elicitation/create", json.RawMessage(`{"mode":"url","message":"m","url":"https://example.com/","elicitationId":"known"}`)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"unknown", "known", "known"} {
		p.srvConn.Notify(ctx, "notifications/elicitation/complete", map[string]string{"elicitationId": id}) //nolint:errcheck // checked below
	}
	if got := <-done; got != "known" {
		t.Fatalf("completed %q", got)
	}
	p.srvConn.Notify(ctx, "ping-marker", nil) //nolint:errcheck // flushes the stream
	time.Sleep(20 * time.Millisecond)
	if len(done) != 0 {
		t.Fatalf("a completion reported twice or for an unknown id: %q", <-done)
	}
}

func TestLogMessages(t *testing.T) {
	got := make(chan LogMessage, 2)
	p := mustPipes(t, fakeConfig{versions: legacyOnly}, ClientOptions{OnLog: func(m LogMessage) { got <- m }})
	p.srvConn.Notify(context.Background(), "notifications/message", map[string]any{"level": "warning", "logger": "db", "data": map[string]int{"n": 1}}) //nolint:errcheck // checked below
	m := <-got
	if m.Level != "warning" || m.Logger != "db" || string(m.Data) != `{"n":1}` {
		t.Fatalf("log message %+v", m)
	}
}

func TestResourcesAndPrompts(t *testing.T) {
	for _, versions := range [][]string{nil, legacyOnly} {
		t.Run(strings.Join(versions, ","), func(t *testing.T) {
			var diags atomic.Int32
			p := mustPipes(t, fakeConfig{versions: versions, content: true}, ClientOptions{OnDiagnostic: func(error) { diags.Add(1) }})
			ctx := context.Background()
			caps := p.c.ServerInfo().Capabilities
			if caps.Resources == nil || caps.Prompts == nil {
				t.Fatalf("capabilities %+v", caps)
			}
			res, err := p.c.ListResources(ctx)
			if err != nil || len(res) != 2 || res[0].URI != "file:///notes.txt" || res[1].URI != "mem://logo" {
				t.Fatalf("resources = %+v, %v", res, err)
			}
			if diags.Load() != 1 {
				t.Errorf("the resource without a URI gave %d diagnostics", diags.Load())
			}
			tmpl, err := p.c.ListResourceTemplates(ctx)
			if err != nil || len(tmpl) != 1 || tmpl[0].URITemplate != "mem://item/{id}" {
				t.Fatalf("templates = %+v, %v", tmpl, err)
			}
			rr, err := p.c.ReadResource(ctx, "file:///notes.txt")
			if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text == nil || *rr.Contents[0].Text != "remember the milk" {
				t.Fatalf("read = %+v, %v", rr, err)
			}
			if _, err := p.c.ReadResource(ctx, "mem://bad"); !errors.Is(err, ErrInvalidResult) {
				t.Errorf("contents without text or blob: %v", err)
			}
			var pe *ProtocolError
			if _, err := p.c.ReadResource(ctx, "mem://none"); !errors.As(err, &pe) || pe.Code != CodeResourceNotFound {
				t.Errorf("missing resource: %v", err)
			}
			prompts, err := p.c.ListPrompts(ctx)
			if err != nil || len(prompts) != 2 || prompts[0].Name != "review" || !prompts[0].Arguments[0].Required {
				t.Fatalf("prompts = %+v, %v", prompts, err)
			}
			gp, err := p.c.GetPrompt(ctx, "review", map[string]string{"file": "a.go", "focus": "errors"})
			if err != nil || len(gp.Messages) != 1 || gp.Messages[0].Content.Text != "Review a.go for errors" {
				t.Fatalf("prompt = %+v, %v", gp, err)
			}
			if _, err := p.c.GetPrompt(ctx, "review", nil); !errors.As(err, &pe) || pe.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("missing argument: %v", err)
			}
		})
	}
}

// TestTemplatesOptional: a server with resources but no template list has
// no templates, not an error.
func TestTemplatesOptional(t *testing.T) {
	p := mustPipes(t, fakeConfig{versions: legacyOnly}, ClientOptions{})
	tmpl, err := p.c.ListResourceTemplates(context.Background())
	if err != nil || tmpl != nil {
		t.Fatalf("templates = %v, %v", tmpl, err)
	}
}

// TestListChangedCoalesced: a flood of list_changed notifications is
// fetched once, after it pauses, each announced list once; a refresh never
// follows the previous one sooner than the delay, and a flood that never
// pauses is fetched every two delays.
func TestListChangedCoalesced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var toolsN, resN, promptsN atomic.Int32
		var refreshedAt []time.Time
		var mu sync.Mutex
		note := func() { mu.Lock(); refreshedAt = append(refreshedAt, time.Now()); mu.Unlock() }
		p := mustPipes(t, fakeConfig{versions: legacyOnly, content: true, listChanged: true}, ClientOptions{
			ListChangedDelay:   time.Second,
			OnToolsChanged:     func([]Tool) { toolsN.Add(1); note() },
			OnResourcesChanged: func(r []Resource, tl []ResourceTemplate) { resN.Add(1) },
			OnPromptsChanged:   func([]Prompt) { promptsN.Add(1) },
		})
		ctx := context.Background()
		methods := []string{"notifications/tools/list_changed", "notifications/resources/list_changed", "notifications/prompts/list_changed"}
		storm := func(n int, every time.Duration) {
			for i := range n {
				if err := p.srvConn.Notify(ctx, methods[i%3], nil); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(every)
			}
		}
		start := time.Now()
		storm(3000, 300*time.Microsecond) // 0.9 s, never pausing for 100 ms
		synctest.Wait()
		if toolsN.Load() != 0 {
			t.Fatal("refreshed while the notifications kept coming")
		}
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		if toolsN.Load() != 1 || resN.Load() != 1 || promptsN.Load() != 1 {
			t.Fatalf("refreshes: tools %d, resources %d, prompts %d; want one each", toolsN.Load(), resN.Load(), promptsN.Load())
		}
		// One more right after the refresh: it waits for the delay.
		p.srvConn.Notify(ctx, methods[0], nil) //nolint:errcheck // checked below
		time.Sleep(3 * time.Second)
		synctest.Wait()
		// A flood that never pauses: fetched every two delays.
		storm(5000, time.Millisecond)
		time.Sleep(time.Second)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(refreshedAt) < 4 || refreshedAt[0].Sub(start) < 900*time.Millisecond {
			t.Fatalf("refreshed at %v after a start at %v", refreshedAt, start)
		}
		for i := 1; i < len(refreshedAt); i++ {
			if gap := refreshedAt[i].Sub(refreshedAt[i-1]); gap < time.Second {
				t.Errorf("refreshes %d and %d only %v apart", i-1, i, gap)
			}
		}
		if n := len(refreshedAt); n > 2+3 {
			t.Errorf("%d refreshes for a 5 s flood", n)
		}
		p.c.Close()
		p.srvConn.Close()
	})
}

// TestUnknownProgressTokenIgnored: progress for a token never issued is
// dropped without a diagnostic storm or a stall.
func TestUnknownProgressTokenIgnored(t *testing.T) {
	var diags atomic.Int32
	p := mustPipes(t, fakeConfig{versions: legacyOnly}, ClientOptions{OnDiagnostic: func(error) { diags.Add(1) }})
	ctx := context.Background()
	for i := range 100 {
		p.srvConn.Notify(ctx, "notifications/progress", map[string]any{"progressToken": "never-" + string(rune('a'+i%26)), "progress": i}) //nolint:errcheck // checked below
	}
	res, err := p.c.CallTool(ctx, "echo", map[string]string{"text": "still here"}, CallOptions{})
	if err != nil || res.Content[0].Text != "still here" {
		t.Fatalf("call after stray progress: %+v, %v", res, err)
	}
	if diags.Load() != 0 {
		t.Errorf("%d diagnostics for stray progress", diags.Load())
	}
}

func TestElicitRequestReachesCallback(t *testing.T) {
	got := make(chan elicit.Request, 1)
	p := mustPipes(t, fakeConfig{versions: legacyOnly}, ClientOptions{Elicit: func(_ context.Context, r elicit.Request) (elicit.Result, error) {
		got <- r
		return elicit.Result{Action: elicit.Decline}, nil
	}})
	if _, err := p.srvConn.Call(context.Background(), "elicitation/create", json.RawMessage(`{"message":"Who?","requestedSchema":`+contactSchema+`}`)); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.Mode != elicit.ModeForm || r.Message != "Who?" || len(r.Form.Fields) != 2 || !reflect.DeepEqual(r.Form.Defaults(), map[string]any{"name": "Ann"}) {
		t.Fatalf("request %+v", r)
	}
}

// TestListFailsWhole: a list whose later page fails gives no half list
// (the manager would keep it as the server's).
func TestListFailsWhole(t *testing.T) {
	p := mustPipes(t, fakeConfig{versions: legacyOnly, content: true, failPage2: true}, ClientOptions{})
	res, err := p.c.ListResources(context.Background())
	if err == nil || res != nil {
		t.Fatalf("resources = %+v, %v", res, err)
	}
}

// TestStatelessDeclaresNothing: to a stateless (2026-07-28) server the
// client declared no capabilities, so its roots/list and
// elicitation/create are refused as undeclared requests.
func TestStatelessDeclaresNothing(t *testing.T) {
	c := &Client{opts: ClientOptions{Roots: []Root{{URI: "file:///w"}}, Elicit: func(context.Context, elicit.Request) (elicit.Result, error) {
		return elicit.Result{Action: elicit.Accept}, nil
	}}}
	c.setProtocol(Version20260728, true)
	if _, err := c.listRoots(); err == nil {
		t.Error("roots/list answered to a stateless server")
	}
	if _, err := c.elicit(context.Background(), json.RawMessage(`{"message":"q","requestedSchema":{"type":"object","properties":{}}}`)); err == nil {
		t.Error("elicitation/create answered to a stateless server")
	}
	c.setProtocol(Version20251125, false)
	if _, err := c.listRoots(); err != nil {
		t.Errorf("roots/list to a session server: %v", err)
	}
}
