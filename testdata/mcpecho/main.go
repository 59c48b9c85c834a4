// Command mcpecho is a small stdio MCP server for end-to-end tests: tools
// "echo" (returns its text), "slow" (waits ms milliseconds, then returns
// its text) and "fail" (a tool error). It speaks the session-based
// revisions and answers server/discover with "method not found", as a
// server of those revisions does. With MCPECHO_LOG set it appends each
// method it receives to that file.
//
// With MCPECHO_FEATURES=1 it is a fuller server (features.go): resources,
// a resource template, a prompt, logging, list_changed, and tools that ask
// the client things (elicitation, roots) or report progress.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

type msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
}

var out = struct {
	sync.Mutex
	w *bufio.Writer
}{w: bufio.NewWriter(os.Stdout)}

func send(v any) {
	b, _ := json.Marshal(v)
	out.Lock()
	out.w.Write(append(b, '\n'))
	out.w.Flush()
	out.Unlock()
}

func reply(id json.RawMessage, result any) {
	send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func fail(id json.RawMessage, code int, text string) {
	send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": text}})
}

const schema = `{"type":"object","properties":{"text":{"type":"string"},"ms":{"type":"integer"}},"required":["text"]}`

func main() {
	var logf *os.File
	if p := os.Getenv("MCPECHO_LOG"); p != "" {
		logf, _ = os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var m msg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			continue
		}
		if logf != nil {
			fmt.Fprintln(logf, m.Method)
		}
		if m.ID == nil {
			continue // notifications
		}
		if m.Method == "" {
			answered(m.ID, sc.Bytes()) // a response to one of our requests
			continue
		}
		if features && feature(m) {
			continue
		}
		switch m.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			json.Unmarshal(m.Params, &p)
			v := p.ProtocolVersion
			if v != "2025-06-18" && v != "2025-11-25" {
				v = "2025-11-25"
			}
			caps := map[string]any{"tools": map[string]any{}}
			if features {
				caps = map[string]any{"tools": map[string]any{"listChanged": true}, "resources": map[string]any{"listChanged": true},
					"prompts": map[string]any{"listChanged": true}, "logging": map[string]any{}}
			}
			res := map[string]any{"protocolVersion": v, "capabilities": caps,
				"serverInfo": map[string]any{"name": "mcpecho", "version": "1"}}
			if text := os.Getenv("MCPECHO_INSTRUCTIONS"); text != "" {
				res["instructions"] = text
			}
			reply(m.ID, res)
		case "ping":
			reply(m.ID, map[string]any{})
		case "tools/list":
			tools := []map[string]any{}
			for _, n := range append([]string{"echo", "slow", "fail"}, featureTools()...) {
				tools = append(tools, map[string]any{"name": n, "description": n + " tool", "inputSchema": json.RawMessage(schema)})
			}
			reply(m.ID, map[string]any{"tools": tools})
		case "tools/call":
			var p struct {
				Name      string `json:"name"`
				Arguments struct {
					Text string `json:"text"`
					MS   int    `json:"ms"`
				} `json:"arguments"`
			}
			json.Unmarshal(m.Params, &p)
			id := m.ID
			go func() {
				switch p.Name {
				case "slow":
					time.Sleep(time.Duration(p.Arguments.MS) * time.Millisecond)
					fallthrough
				case "echo":
					reply(id, map[string]any{"content": []map[string]any{{"type": "text", "text": "echo: " + p.Arguments.Text}}})
				case "fail":
					reply(id, map[string]any{"content": []map[string]any{{"type": "text", "text": "it failed"}}, "isError": true})
				default:
					fail(id, -32602, "unknown tool "+p.Name)
				}
			}()
		default:
			fail(m.ID, -32601, "method not found")
		}
	}
}
