package oauth

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestCallbackRefusesWithoutWaitingForABody: a stray request to the
// sign-in listener that declares a body it never sends is answered at once
// (internal/httpguard), and a flood of idle connections leaves room for
// the browser's redirect.
func TestCallbackRefusesWithoutWaitingForABody(t *testing.T) {
	cs, err := listenCallback(0, "the-state")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.close()
	addr := cs.ln.Addr().String()
	ask := func(req string) int {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second)) // below the listener's 10 s read timeout
		io.WriteString(c, req)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("no answer to %q: %v", req, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := ask("POST /callback HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"); got != 404 {
		t.Fatalf("POST with an unsent body: %d", got)
	}
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range 100 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	if got := ask("GET /callback?code=c&state=the-state HTTP/1.1\r\nHost: x\r\n\r\n"); got != 200 {
		t.Fatalf("the redirect after a flood: %d", got)
	}
}
