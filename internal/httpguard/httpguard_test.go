package httpguard

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// serve runs h behind a Guard with limits l on a loopback listener. The
// server's read timeout is an hour, so a response that waits for a body
// that never comes would hang the test rather than arrive late.
func serve(t *testing.T, h http.Handler, l Limits) (*Guard, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := New(l)
	srv := &http.Server{Handler: h, ReadTimeout: time.Hour, ReadHeaderTimeout: time.Hour}
	go g.Serve(srv, ln)
	t.Cleanup(func() { srv.Close() })
	return g, ln.Addr().String()
}

// dial connects from the loopback address src (127.0.0.X).
func dial(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip writes a raw request and reads the response head, with a hang
// guard of 10 s.
func roundTrip(t *testing.T, c net.Conn, req string) *http.Response {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func TestARefusalGoesOutWithoutWaitingForTheBody(t *testing.T) {
	refusing := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "read %d", len(b))
	})
	silent := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}) // answers 200 by returning
	cases := []struct {
		name      string
		h         http.Handler
		req       string
		status    int
		keepAlive bool
	}{
		{"a refused request declaring 100 KB that never sends it", refusing,
			"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n", 401, false},
		{"a refused chunked request that never sends a chunk", refusing,
			"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", 401, false},
		{"a handler that returns without writing or reading", silent,
			"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n", 200, false},
		{"a request whose body was read keeps its connection", refusing,
			"POST / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer good\r\nContent-Length: 3\r\n\r\nabc", 200, true},
		{"a refused request without a body keeps its connection", refusing,
			"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 401, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, addr := serve(t, c.h, Limits{})
			conn := dial(t, "127.0.0.1", addr)
			resp := roundTrip(t, conn, c.req)
			if resp.StatusCode != c.status || resp.Close == c.keepAlive {
				t.Fatalf("status %d, close %v; want %d, keep-alive %v", resp.StatusCode, resp.Close, c.status, c.keepAlive)
			}
		})
	}
}

func TestStreamingAnswersFlushThroughTheWrapper(t *testing.T) {
	next := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		<-next
		io.WriteString(w, "data: two\n\n")
	})
	_, addr := serve(t, h, Limits{})
	c := dial(t, "127.0.0.1", addr)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	close(next)
	if err != nil || line != "data: one\n" {
		t.Fatalf("first event before the handler ended: %q %v", line, err)
	}
}

// waitOpen waits until the guard counts n open connections (the server
// notices closed connections asynchronously).
func waitOpen(t *testing.T, g *Guard, n int) {
	t.Helper()
	for i := 0; i < 1000 && g.Stats().Open != n; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	if got := g.Stats().Open; got != n {
		t.Fatalf("open %d, want %d", got, n)
	}
}

func ok(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }

func TestIdleConnectionsMakeRoomForNewOnes(t *testing.T) {
	g, addr := serve(t, http.HandlerFunc(ok), Limits{MaxConns: 8, MaxPerAddr: 3})
	// Three idle connections from one address fill its share; a fourth
	// from it closes the oldest of them.
	var idle []net.Conn
	for range 3 {
		idle = append(idle, dial(t, "127.0.0.2", addr))
	}
	waitOpen(t, g, 3)
	fresh := dial(t, "127.0.0.2", addr)
	if resp := roundTrip(t, fresh, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	idle[0].SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := idle[0].Read(make([]byte, 1)); err == nil {
		t.Fatal("the oldest idle connection was not closed")
	}
	if s := g.Stats(); s.Evicted != 1 || s.Open != 3 {
		t.Fatalf("stats %+v", s)
	}
	// Other addresses fill the total; a new client still gets in by
	// taking the place of an idle connection of the busiest address.
	for i := range 5 {
		dial(t, fmt.Sprintf("127.0.0.%d", 10+i), addr)
	}
	waitOpen(t, g, 8)
	c := dial(t, "127.0.0.99", addr)
	if resp := roundTrip(t, c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if s := g.Stats(); s.Evicted != 2 || s.Open != 8 {
		t.Fatalf("stats %+v", s)
	}
}

func TestRunningRequestsAreNeverEvicted(t *testing.T) {
	release := make(chan struct{})
	var started sync.WaitGroup
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Done()
		<-release
		io.WriteString(w, "done")
	})
	g, addr := serve(t, h, Limits{MaxConns: 2, MaxPerAddr: 2})
	var conns []net.Conn
	for range 2 {
		started.Add(1)
		c := dial(t, "127.0.0.1", addr)
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		conns = append(conns, c)
	}
	started.Wait()
	// No room and nothing idle: the newcomer is closed at once.
	extra := dial(t, "127.0.0.1", addr)
	extra.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := extra.Read(make([]byte, 1)); err == nil {
		t.Fatal("a connection beyond the limit was served")
	}
	close(release)
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("a running request was cut: %v", err)
		}
	}
	if s := g.Stats(); s.Refused != 1 || s.Evicted != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestExemptPeersCountOnlyInTheTotal(t *testing.T) {
	g, addr := serve(t, http.HandlerFunc(ok), Limits{MaxConns: 6, MaxPerAddr: 2, Exempt: []netip.Addr{netip.MustParseAddr("127.0.0.3")}})
	for range 5 {
		dial(t, "127.0.0.3", addr)
	}
	waitOpen(t, g, 5)
	if s := g.Stats(); s.Evicted != 0 {
		t.Fatalf("a trusted proxy's connections were evicted: %+v", s)
	}
}

// TestAFloodOfIdleConnectionsLeavesRoomForValidClients: many more idle
// connections than the limit, and a client that sends a request is
// still served every time.
func TestAFloodOfIdleConnectionsLeavesRoomForValidClients(t *testing.T) {
	g, addr := serve(t, http.HandlerFunc(ok), Limits{MaxConns: 32, MaxPerAddr: 32})
	for round := range 5 {
		for range 100 {
			d := net.Dialer{}
			c, err := d.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
		}
		c := dial(t, "127.0.0.1", addr)
		if resp := roundTrip(t, c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != 200 {
			t.Fatalf("round %d: status %d", round, resp.StatusCode)
		}
		c.Close()
	}
	if s := g.Stats(); s.Open > 32 || s.Evicted < 400 {
		t.Fatalf("stats %+v", s)
	}
}

func TestKeyOfGroupsIPv6By64(t *testing.T) {
	cases := []struct{ name, a, b string }{
		{"IPv6 addresses in one /64 share a key", "[2001:db8::1]:1", "[2001:db8::2]:2"},
		{"an IPv4-mapped address is its IPv4 address", "[::ffff:10.0.0.1]:1", "10.0.0.1:2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ka, _ := keyOf(&net.TCPAddr{IP: net.ParseIP(strings.Trim(strings.Split(c.a, "]")[0], "["))})
			apb := netip.MustParseAddrPort(c.b)
			kb, _ := keyOf(net.TCPAddrFromAddrPort(apb))
			if ka != kb {
				t.Errorf("%s and %s: %v != %v", c.a, c.b, ka, kb)
			}
		})
	}
}

// TestARefusalReachesAClientStillSendingItsBody: a client that sends a
// large body gets the refusal, not a connection reset, though the body is
// never read.
func TestARefusalReachesAClientStillSendingItsBody(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) })
	_, addr := serve(t, h, Limits{})
	for i := range 20 {
		resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(strings.Repeat(" ", 4<<20)))
		if err != nil {
			t.Fatalf("attempt %d: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("attempt %d: %d", i, resp.StatusCode)
		}
	}
}
