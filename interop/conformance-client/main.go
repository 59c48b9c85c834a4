// Command conformance-client is the MCP client that the official MCP
// conformance suite drives (interop/README.md, "The conformance client"):
// the suite starts it as `conformance-client SERVER_URL` with the scenario
// name in MCP_CONFORMANCE_SCENARIO, and judges what the client does against
// the scenario's server. It is built on the project's own client (package
// mcp) with nothing added but a user who accepts pre-filled forms:
// whatever the suite observes is what the agent does.
//
// Plain http is accepted only for loopback servers (the suite's servers
// listen on localhost); the agent itself leaves address policy to its
// caller. Exit status 0 means the scenario's steps all succeeded; the
// suite's checks decide conformance. See interop/README.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"time"

	"agent/internal/elicit"
	"agent/mcp"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Stderr))
}

func run(args []string, scenario string, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: conformance-client SERVER_URL (scenario in MCP_CONFORMANCE_SCENARIO)")
		return 2
	}
	serverURL := args[len(args)-1]
	if err := checkURL(serverURL); err != nil {
		fmt.Fprintln(stderr, "conformance-client:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := runScenario(ctx, serverURL, scenario, stderr); err != nil {
		fmt.Fprintf(stderr, "conformance-client: scenario %q: %v\n", scenario, err)
		return 1
	}
	return 0
}

// checkURL admits https anywhere and http on loopback only.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("the server URL does not parse")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if host == "localhost" {
			return nil
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			return nil
		}
		return errors.New("plain http is allowed for loopback servers only")
	}
	return errors.New("the server URL must be http or https")
}

func runScenario(ctx context.Context, serverURL, scenario string, stderr io.Writer) error {
	tr, err := mcp.NewHTTPTransport(mcp.HTTPOptions{URL: serverURL})
	if err != nil {
		return err
	}
	c, err := mcp.Connect(ctx, tr, mcp.ClientOptions{
		ClientInfo:   mcp.Implementation{Name: "agent-conformance-client", Version: "1.0.0"},
		Timeout:      20 * time.Second,
		OnDiagnostic: func(err error) { fmt.Fprintln(stderr, "conformance-client: note:", err) },
		Elicit:       acceptPrefilled(stderr),
	})
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer c.Close()
	fmt.Fprintf(stderr, "conformance-client: connected with protocol %s\n", c.ProtocolVersion())
	tools, err := c.ListTools(ctx)
	if err != nil {
		return err
	}
	if calls, err := contextCalls(os.Getenv("MCP_CONFORMANCE_CONTEXT")); err != nil {
		return err
	} else if calls != nil {
		// The scenario names the calls and their arguments (for example
		// http-custom-headers, whose arguments the client mirrors into
		// Mcp-Param headers).
		for _, call := range calls {
			if err := callTool(ctx, c, call.Name, call.Arguments, stderr); err != nil {
				return err
			}
		}
		return nil
	}
	switch scenario {
	case "initialize", "json-schema-ref-no-deref":
		// Connecting and listing the tools is the whole scenario (the
		// second checks that listing never fetches a schema's network
		// $ref).
		return nil
	case "tools_call":
		return callTool(ctx, c, "add_numbers", map[string]any{"a": 5, "b": 3}, stderr)
	case "json-schema-2020-12-preservation":
		// The scenario asks for the focal tool's inputSchema back,
		// verbatim, through its echo tool: what the client kept of it.
		for _, t := range tools {
			if t.Name == schemaTool {
				return callTool(ctx, c, schemaEcho, map[string]any{"schema": t.InputSchema}, stderr)
			}
		}
		return fmt.Errorf("the server offers no tool %s", schemaTool)
	default:
		// sse-retry, elicitation-sep1034-client-defaults and any other
		// scenario: call every tool the server offers with empty
		// arguments, as a client driven by a model would.
		for _, t := range tools {
			if err := callTool(ctx, c, t.Name, map[string]any{}, stderr); err != nil {
				return err
			}
		}
		return nil
	}
}

// The tools of the scenario json-schema-2020-12-preservation.
const (
	schemaTool = "json_schema_2020_12_tool"
	schemaEcho = "json_schema_echo"
)

// toolCall is one call a scenario asks for in MCP_CONFORMANCE_CONTEXT.
type toolCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// contextCalls reads the tool calls of MCP_CONFORMANCE_CONTEXT
// ({"toolCalls": [{"name": ..., "arguments": {...}}]}); nil when the
// scenario names none.
func contextCalls(raw string) ([]toolCall, error) {
	if raw == "" {
		return nil, nil
	}
	var cc struct {
		ToolCalls []toolCall `json:"toolCalls"`
	}
	if err := json.Unmarshal([]byte(raw), &cc); err != nil {
		return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
	}
	return cc.ToolCalls, nil
}

func callTool(ctx context.Context, c *mcp.Client, name string, args map[string]any, stderr io.Writer) error {
	res, err := c.CallTool(ctx, name, args, mcp.CallOptions{})
	if err != nil {
		return err
	}
	out, _ := json.Marshal(res.Content)
	fmt.Fprintf(stderr, "conformance-client: %s -> isError=%v %s\n", name, res.IsError, out)
	if res.IsError {
		return fmt.Errorf("tool %s reported an error", name)
	}
	return nil
}

// acceptPrefilled answers a server's question as a user who accepts the
// form as the terminal UI pre-fills it, with the schema's defaults
// (elicitation-sep1034-client-defaults checks that they are applied), and
// agrees to open a URL. A form those values do not complete is declined.
func acceptPrefilled(stderr io.Writer) func(context.Context, elicit.Request) (elicit.Result, error) {
	return func(_ context.Context, req elicit.Request) (elicit.Result, error) {
		if req.Mode == elicit.ModeURL {
			fmt.Fprintf(stderr, "conformance-client: asked to open %s: accepted\n", req.URL)
			return elicit.Result{Action: elicit.Accept}, nil
		}
		content := req.Form.Defaults()
		if err := req.Form.Validate(content); err != nil {
			fmt.Fprintf(stderr, "conformance-client: the pre-filled form is incomplete (%v): declined\n", err)
			return elicit.Result{Action: elicit.Decline}, nil
		}
		fmt.Fprintf(stderr, "conformance-client: %q answered with the defaults %v\n", req.Message, content)
		return elicit.Result{Action: elicit.Accept, Content: content}, nil
	}
}
