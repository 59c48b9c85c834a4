package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The fuller server of MCPECHO_FEATURES=1: resources (file:///notes.txt,
// and mem://big of MCPECHO_BIG bytes when set), the template
// mem://item/{id}, the prompt "review" (file required, focus optional),
// logging, list_changed, and the tools "ask" (an elicitation of a name and
// a colour), "askurl" (a URL elicitation), "progress" (three reports),
// "grow" (adds the tool "extra", announces it, logs a line) and "roots"
// (asks for the client's roots).

var features = os.Getenv("MCPECHO_FEATURES") == "1"

var state = struct {
	sync.Mutex
	grown   bool
	nextID  int
	waiting map[string]chan []byte
}{waiting: map[string]chan []byte{}}

func featureTools() []string {
	if !features {
		return nil
	}
	out := []string{"ask", "askurl", "progress", "grow", "roots"}
	state.Lock()
	defer state.Unlock()
	if state.grown {
		out = append(out, "extra")
	}
	return out
}

func notify(method string, params any) {
	send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// request sends a request to the client and waits for its response.
func request(method string, params any) map[string]any {
	state.Lock()
	state.nextID++
	id := "s" + strconv.Itoa(state.nextID)
	ch := make(chan []byte, 1)
	state.waiting[id] = ch
	state.Unlock()
	send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	select {
	case b := <-ch:
		var resp map[string]any
		json.Unmarshal(b, &resp)
		return resp
	case <-time.After(time.Minute):
		return map[string]any{"error": "no answer"}
	}
}

func answered(id json.RawMessage, line []byte) {
	var s string
	json.Unmarshal(id, &s)
	state.Lock()
	ch := state.waiting[s]
	delete(state.waiting, s)
	state.Unlock()
	if ch != nil {
		ch <- append([]byte(nil), line...)
	}
}

func text(s string) map[string]any {
	return map[string]any{"content": []map[string]any{{"type": "text", "text": s}}}
}

// feature answers the methods of the fuller server; it reports whether it
// took the message.
func feature(m msg) bool {
	var p struct {
		Name      string            `json:"name"`
		URI       string            `json:"uri"`
		Arguments map[string]string `json:"arguments"`
		Meta      struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	json.Unmarshal(m.Params, &p)
	big, _ := strconv.Atoi(os.Getenv("MCPECHO_BIG"))
	switch m.Method {
	case "resources/list":
		res := []map[string]any{{"uri": "file:///notes.txt", "name": "notes", "mimeType": "text/plain", "description": "Shopping notes"}}
		if big > 0 {
			res = append(res, map[string]any{"uri": "mem://big", "name": "big", "mimeType": "text/plain"})
		}
		reply(m.ID, map[string]any{"resources": res})
	case "resources/templates/list":
		reply(m.ID, map[string]any{"resourceTemplates": []map[string]any{{"uriTemplate": "mem://item/{id}", "name": "item"}}})
	case "resources/read":
		switch {
		case p.URI == "file:///notes.txt":
			reply(m.ID, map[string]any{"contents": []map[string]any{{"uri": p.URI, "mimeType": "text/plain", "text": "remember the milk"}}})
		case strings.HasPrefix(p.URI, "mem://item/"):
			reply(m.ID, map[string]any{"contents": []map[string]any{{"uri": p.URI, "text": "item " + strings.TrimPrefix(p.URI, "mem://item/")}}})
		case p.URI == "mem://big" && big > 0:
			reply(m.ID, map[string]any{"contents": []map[string]any{{"uri": p.URI, "text": strings.Repeat("b", big)}}})
		default:
			fail(m.ID, -32002, "Resource not found")
		}
	case "prompts/list":
		reply(m.ID, map[string]any{"prompts": []map[string]any{{"name": "review", "description": "Review a file",
			"arguments": []map[string]any{{"name": "file", "required": true}, {"name": "focus"}}}}})
	case "prompts/get":
		if p.Name != "review" || p.Arguments["file"] == "" {
			fail(m.ID, -32602, "review needs a file")
			break
		}
		reply(m.ID, map[string]any{"messages": []map[string]any{{"role": "user", "content": map[string]any{"type": "text",
			"text": "Review " + p.Arguments["file"] + " for " + p.Arguments["focus"]}}}})
	case "tools/call":
		id := m.ID
		switch p.Name {
		case "ask":
			go func() {
				resp := request("elicitation/create", map[string]any{"message": "Which colour?", "requestedSchema": map[string]any{
					"type": "object", "properties": map[string]any{
						"name":   map[string]any{"type": "string", "title": "Your name"},
						"color":  map[string]any{"type": "string", "enum": []string{"red", "blue"}, "default": "blue"},
						"secret": map[string]any{"type": "string", "format": "password"}},
					"required": []string{"name"}}})
				b, _ := json.Marshal(resp["result"])
				reply(id, text("answer: "+string(b)))
			}()
		case "askurl":
			go func() {
				resp := request("elicitation/create", map[string]any{"mode": "url", "message": "Connect your account",
					"url": "https://example.com/connect?e=1", "elicitationId": "e1"})
				b, _ := json.Marshal(resp["result"])
				reply(id, text("answer: "+string(b)))
			}()
		case "progress":
			go func() {
				if p.Meta.ProgressToken != nil {
					for i := 1; i <= 3; i++ {
						notify("notifications/progress", map[string]any{"progressToken": p.Meta.ProgressToken, "progress": i, "total": 3, "message": "step " + strconv.Itoa(i)})
						time.Sleep(150 * time.Millisecond)
					}
				}
				reply(id, text("done"))
			}()
		case "grow":
			state.Lock()
			state.grown = true
			state.Unlock()
			notify("notifications/tools/list_changed", nil)
			notify("notifications/message", map[string]any{"level": "info", "logger": "mcpecho", "data": "grew a tool"})
			reply(id, text("grown"))
		case "roots":
			go func() {
				resp := request("roots/list", nil)
				b, _ := json.Marshal(resp["result"])
				reply(id, text(string(b)))
			}()
		case "extra":
			reply(id, text("extra ran"))
		default:
			return false
		}
	default:
		return false
	}
	return true
}
