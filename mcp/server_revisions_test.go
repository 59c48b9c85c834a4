package mcp

// `agent mcp serve` answering clients of every revision
// (docs/reference/mcp.md, "Protocol revisions"): initialize answered with
// the revision asked when served, the fields a revision lacks left out, and
// the batch rule: a batch is taken from a client that negotiated 2025-03-26
// (which requires a receiver to accept it) and refused with every other
// revision.

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"agent/internal/sse"
	"agent/mcp/jsonrpc"
)

// stdioClient drives ServeStdio over pipes, line by line.
type stdioClient struct {
	in    io.WriteCloser
	lines *bufio.Scanner
	done  chan error
}

func serveStdioPipes(t *testing.T, s *Server) *stdioClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioClient{in: inW, lines: bufio.NewScanner(outR), done: make(chan error, 1)}
	go func() { c.done <- s.ServeStdio(context.Background(), inR, outW) }()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR) //nolint:errcheck // whatever is left
		if err := <-c.done; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	})
	return c
}

func (c *stdioClient) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// next returns the next line the server wrote.
func (c *stdioClient) next(t *testing.T) string {
	t.Helper()
	if !c.lines.Scan() {
		t.Fatal("the server wrote nothing more")
	}
	return c.lines.Text()
}

func initializeLine(version string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
}

const (
	listLine     = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	progressLine = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agent_submit","arguments":{"prompt":"progress"},"_meta":{"progressToken":"p1"}}}`
	initedLine   = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// revisionAnswers is what a client of one revision gets: the revision
// agreed, whether tools carry a title and annotations, and whether
// progress notifications carry a message.
type revisionAnswers struct {
	agreed                      string
	title, annotations, message bool
}

func expectedAnswers(asked string) revisionAnswers {
	agreed := asked
	if !knownVersion(asked) || modern(asked) {
		agreed = Version20251125 // the newest session-based revision
	}
	return revisionAnswers{agreed: agreed, title: titles(agreed), annotations: annotations(agreed), message: annotations(agreed)}
}

// askedRevisions are the protocolVersion values clients send in the table
// tests: every revision, one the server does not know, and the stateless
// one (which has no initialize).
var askedRevisions = []string{Version20241105, Version20250326, Version20250618, Version20251125, "2024-10-07", Version20260728}

func checkAnswers(t *testing.T, want revisionAnswers, initResp, listResp string, progress []string) {
	t.Helper()
	var init struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(initResp), &init) != nil || init.Result.ProtocolVersion != want.agreed {
		t.Fatalf("initialize answered %s, want %s", initResp, want.agreed)
	}
	if got := strings.Contains(listResp, `"title":`); got != want.title {
		t.Errorf("tools/list has a title: %v, want %v: %s", got, want.title, listResp)
	}
	if got := strings.Contains(listResp, `"annotations":`); got != want.annotations {
		t.Errorf("tools/list has annotations: %v, want %v: %s", got, want.annotations, listResp)
	}
	if len(progress) != 1 || !strings.Contains(progress[0], `"progressToken":"p1"`) || strings.Contains(progress[0], `"message":"working"`) != want.message {
		t.Errorf("progress %q, want one with a message: %v", progress, want.message)
	}
}

// TestServerAnswersEachRevisionOverStdio: initialize is answered with the
// revision asked when the server speaks it, else with the newest
// session-based one, and the answers leave out what that revision lacks.
func TestServerAnswersEachRevisionOverStdio(t *testing.T) {
	for _, asked := range askedRevisions {
		t.Run("client asks "+asked, func(t *testing.T) {
			c := serveStdioPipes(t, newTestServer(t))
			c.send(t, initializeLine(asked))
			initResp := c.next(t)
			c.send(t, initedLine)
			c.send(t, listLine)
			listResp := c.next(t)
			c.send(t, progressLine)
			var progress []string
			for {
				l := c.next(t)
				if strings.Contains(l, `"id":3`) {
					break
				}
				progress = append(progress, l)
			}
			checkAnswers(t, expectedAnswers(asked), initResp, listResp, progress)
		})
	}
}

// TestServerAnswersEachRevisionOverHTTP: the same over Streamable HTTP; a
// session's requests need no MCP-Protocol-Version header (the revisions
// before 2025-06-18 have none), and one naming another revision is
// refused.
func TestServerAnswersEachRevisionOverHTTP(t *testing.T) {
	for _, asked := range askedRevisions {
		t.Run("client asks "+asked, func(t *testing.T) {
			want := expectedAnswers(asked)
			h := newTestServer(t).HTTPHandler(HTTPServeOptions{})
			w := post(h, initializeLine(asked), nil)
			sid := w.Header().Get("Mcp-Session-Id")
			if w.Code != 200 || sid == "" {
				t.Fatalf("initialize: %d %s", w.Code, w.Body)
			}
			initResp := w.Body.String()
			hdr := http.Header{"Mcp-Session-Id": {sid}}
			if w := post(h, initedLine, hdr); w.Code != http.StatusAccepted {
				t.Fatalf("initialized: %d", w.Code)
			}
			lw := post(h, listLine, hdr)
			if lw.Code != 200 {
				t.Fatalf("tools/list without the header: %d %s", lw.Code, lw.Body)
			}
			pw := post(h, progressLine, hdr)
			events := sse.NewReader(pw.Body, sse.Options{})
			var progress []string
			for {
				ev, err := events.Next()
				if err != nil {
					t.Fatalf("tools/call stream ended: %v", err)
				}
				if strings.Contains(ev.Data, `"id":3`) {
					break
				}
				progress = append(progress, ev.Data)
			}
			checkAnswers(t, want, initResp, lw.Body.String(), progress)
			if w := post(h, listLine, http.Header{"Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {want.agreed}}); w.Code != 200 {
				t.Errorf("the session's own revision in the header: %d", w.Code)
			}
			other := Version20250326
			if want.agreed == other {
				other = Version20251125
			}
			// Another session revision the server speaks is accepted (the
			// session's own decides); one it does not speak is refused.
			if w := post(h, listLine, http.Header{"Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {other}}); w.Code != 200 {
				t.Errorf("another session revision in the header: %d", w.Code)
			}
			for _, bad := range []string{Version20260728, "2099-01-01"} {
				if w := post(h, listLine, http.Header{"Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {bad}}); w.Code != http.StatusBadRequest {
					t.Errorf("revision %s in the header of a session: %d", bad, w.Code)
				}
			}
		})
	}
}

const batchLine = `[{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}},{"jsonrpc":"2.0","id":3,"method":"ping"}]`

// batchIDs returns the ids of the responses in a batch answer, or nil
// when s is not a batch of responses.
func batchIDs(s string) []string {
	items, err := jsonrpc.DecodeBatch([]byte(s), jsonrpc.DecodeOptions{})
	if err != nil {
		return nil
	}
	var ids []string
	for _, it := range items {
		if it.Err != nil || it.Msg.Kind() != jsonrpc.KindResponse {
			return nil
		}
		ids = append(ids, it.Msg.ID.String())
		if it.Msg.Error != nil {
			ids[len(ids)-1] += " error"
		}
	}
	return ids
}

// sameSet reports whether a and b hold the same strings in any order (a
// batch answer may list its responses in any order, JSON-RPC 2.0 §6).
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		seen[x]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// TestServerTakesBatchesOnlyIn20250326OverStdio: after initialize, a
// batch line gets one array line of the responses in a session of
// 2025-03-26, and a refusal (an error response with id null) in a session
// of any other revision; before initialize it is refused too.
func TestServerTakesBatchesOnlyIn20250326OverStdio(t *testing.T) {
	for _, v := range sessionRevisions {
		t.Run(v, func(t *testing.T) {
			c := serveStdioPipes(t, newTestServer(t))
			c.send(t, batchLine)
			if got := c.next(t); !strings.Contains(got, `"id":null,"error":{"code":-32600`) {
				t.Fatalf("a batch before initialize: %s", got)
			}
			c.send(t, initializeLine(v))
			c.next(t)
			c.send(t, initedLine)
			c.send(t, batchLine)
			got := c.next(t)
			if v != Version20250326 {
				if !strings.Contains(got, `"id":null,"error":{"code":-32600`) || !strings.Contains(got, "2025-03-26") {
					t.Fatalf("a batch in a session of %s: %s", v, got)
				}
				return
			}
			if ids := batchIDs(got); !sameSet(ids, []string{"2", "3"}) {
				t.Fatalf("batch answer %s", got)
			}
			// Bad elements and a reused id are answered in the array; an
			// empty batch gets a single error; the session goes on.
			c.send(t, `[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"1.0","id":5,"method":"ping"},7]`)
			if ids := batchIDs(c.next(t)); !sameSet(ids, []string{"4", "4 error", "5 error", "null error"}) {
				t.Fatalf("batch with bad elements: %v", ids)
			}
			c.send(t, `[]`)
			if got := c.next(t); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600`) {
				t.Fatalf("empty batch: %s", got)
			}
			c.send(t, `[{"jsonrpc":"2.0","method":"notifications/x"}]`)
			c.send(t, listLine)
			if got := c.next(t); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":2,"result"`) {
				t.Fatalf("after a batch of notifications: %s", got)
			}
		})
	}
}

// TestServerTakesBatchesOnlyIn20250326OverHTTP: in a session of
// 2025-03-26 a POSTed batch is answered as that revision's transport says
// (202 for notifications only; a JSON array, or an SSE stream when the
// batch holds a tools/call and the client takes one); in a session of
// any other revision, and without a session, it is refused with 400.
func TestServerTakesBatchesOnlyIn20250326OverHTTP(t *testing.T) {
	for _, v := range sessionRevisions {
		t.Run(v, func(t *testing.T) {
			h := newTestServer(t).HTTPHandler(HTTPServeOptions{})
			if w := post(h, batchLine, nil); w.Code != http.StatusBadRequest {
				t.Fatalf("a batch without a session: %d", w.Code)
			}
			w := post(h, initializeLine(v), nil)
			sid := w.Header().Get("Mcp-Session-Id")
			hdr := http.Header{"Mcp-Session-Id": {sid}}
			post(h, initedLine, hdr)
			w = post(h, batchLine, hdr)
			if v != Version20250326 {
				if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"id":null,"error":{"code":-32600`) {
					t.Fatalf("a batch in a session of %s: %d %s", v, w.Code, w.Body)
				}
				return
			}
			if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" || !sameSet(batchIDs(w.Body.String()), []string{"2", "3"}) {
				t.Fatalf("batch answer %d %s", w.Code, w.Body)
			}
			cases := []struct {
				name   string
				body   string
				hdr    http.Header
				status int
				ids    []string // of the JSON array
			}{
				{"notifications only", `[{"jsonrpc":"2.0","method":"notifications/a"},{"jsonrpc":"2.0","method":"notifications/b"}]`, nil, http.StatusAccepted, nil},
				{"responses only", `[{"jsonrpc":"2.0","id":"s1","result":{}}]`, nil, http.StatusAccepted, nil},
				{"bad elements and a reused id", `[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"1.0","id":5,"method":"ping"},7]`, nil, 200,
					[]string{"4", "4 error", "5 error", "null error"}},
				{"bad elements only", `[7,{"jsonrpc":"2.0","id":6,"method":5}]`, nil, http.StatusBadRequest, []string{"null error", "6 error"}},
				{"empty batch", `[]`, nil, http.StatusBadRequest, nil},
				{"the session's revision in the header", batchLine, http.Header{"Mcp-Protocol-Version": {Version20250326}}, 200, []string{"2", "3"}},
				{"another session revision in the header", batchLine, http.Header{"Mcp-Protocol-Version": {Version20251125}}, 200, []string{"2", "3"}},
				{"a revision the server does not speak in the header", batchLine, http.Header{"Mcp-Protocol-Version": {"2099-01-01"}}, http.StatusBadRequest, nil},
				{"unknown session", batchLine, http.Header{"Mcp-Session-Id": {"gone"}}, http.StatusNotFound, nil},
				{"JSON only accepted", `[` + progressLine + `,{"jsonrpc":"2.0","id":7,"method":"ping"}]`, http.Header{"Accept": {"application/json"}}, 200, []string{"3", "7"}},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					hh := http.Header{"Mcp-Session-Id": {sid}}
					for k, v := range tc.hdr {
						hh[k] = v
					}
					w := post(h, tc.body, hh)
					if w.Code != tc.status {
						t.Errorf("status %d, want %d: %s", w.Code, tc.status, w.Body)
						return
					}
					if tc.ids != nil && !sameSet(batchIDs(w.Body.String()), tc.ids) {
						t.Errorf("answer %s, want ids %v", w.Body, tc.ids)
					}
				})
			}
			// A batch with a tools/call, to a client that takes a stream:
			// one SSE stream with the progress and every response.
			w = post(h, `[`+progressLine+`,{"jsonrpc":"2.0","id":7,"method":"ping"},7]`, hdr)
			if w.Code != 200 || w.Header().Get("Content-Type") != "text/event-stream" {
				t.Fatalf("batch with a tools/call: %d %s", w.Code, w.Header())
			}
			var ids []string
			progress := 0
			events := sse.NewReader(w.Body, sse.Options{})
			for {
				ev, err := events.Next()
				if err != nil {
					break
				}
				m, err := jsonrpc.Decode([]byte(ev.Data))
				switch {
				case err != nil:
					t.Fatalf("event %q: %v", ev.Data, err)
				case m.Kind() == jsonrpc.KindNotification:
					progress++
				default:
					ids = append(ids, m.ID.String())
				}
			}
			if !sameSet(ids, []string{"null", "3", "7"}) || progress != 1 {
				t.Fatalf("stream: responses %v, %d progress notifications", ids, progress)
			}
		})
	}
}
