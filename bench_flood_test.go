package main

// Floods of idle connections against the HTTP endpoints, through the
// binary: 20 000 connections that never send a request, held by helper
// processes (each process may hold at most 20 000 descriptors, the test's
// own included), then valid requests, each on a new connection, while the
// flood stays (docs/design.md, "Connection limits and refusals in front of
// every HTTP server"; docs/performance.md, "mcp serve (mcp, main)" and
// "External events (events)").
//
// Run: go test -run '^$' -bench IdleFlood -benchtime 50x .

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// floodHolderEnv makes the test binary a flood holder instead of running
// tests: "ADDR N NET" opens N connections to ADDR from the loopback
// addresses 127.NET.x.y, floodPerSource from each, prints "held N" and
// keeps them open until its stdin ends.
const floodHolderEnv = "AGENT_TEST_FLOOD_HOLDER"

const (
	floodConns     = 20_000
	floodPerHolder = 10_000
	floodPerSource = 100 // over the per-address limit (64), so both limits act
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(floodHolderEnv); spec != "" {
		os.Exit(holdFlood(spec))
	}
	code := m.Run()
	if testTemp.dir != "" {
		os.RemoveAll(testTemp.dir)
	}
	os.Exit(code)
}

func holdFlood(spec string) int {
	var addr string
	var n, netByte int
	if _, err := fmt.Sscan(spec, &addr, &n, &netByte); err != nil {
		fmt.Fprintln(os.Stderr, "flood holder:", err)
		return 2
	}
	conns := make([]net.Conn, 0, n)
	for i := range n {
		src := i / floodPerSource
		ip := netip.AddrFrom4([4]byte{127, byte(netByte), byte(src / 250), byte(src%250 + 1)})
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: ip.AsSlice()}, Timeout: 30 * time.Second}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "flood holder: after %d connections: %v\n", i, err)
			return 1
		}
		conns = append(conns, c)
	}
	fmt.Println("held", len(conns))
	io.Copy(io.Discard, os.Stdin) //nolint:errcheck // any end of stdin ends the flood
	return 0
}

// flood opens total idle connections to addr from helper processes and
// keeps them open until the benchmark ends.
func flood(b *testing.B, addr string, total int) {
	b.Helper()
	for h := 0; total > 0; h++ {
		n := min(total, floodPerHolder)
		total -= n
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d", floodHolderEnv, addr, n, 10+h))
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { stdin.Close(); cmd.Wait() })
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || line != fmt.Sprintf("held %d\n", n) {
			b.Fatalf("flood holder %d: %q %v", h, line, err)
		}
	}
}

// reportServer reports the server process's peak RSS before the flood
// (its start and one valid request) and at the end, and its open
// descriptors after the flood.
func reportServer(b *testing.B, pid int, before float64) {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	b.ReportMetric(before, "server-RSS-MiB-before")
	b.ReportMetric(peakRSS(pid), "server-peak-RSS-MiB")
	b.ReportMetric(float64(len(fds)), "server-fds")
}

// newClient opens a new connection for each request, as a new client
// would.
func newClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
}

// BenchmarkServeIdleFlood: 20 000 idle connections to loopback `mcp
// serve`, then tools/call requests, each on a new connection, while the
// flood stays. Reported: the server's peak RSS and open descriptors, and
// the time of a call under the flood.
func BenchmarkServeIdleFlood(b *testing.B) {
	url, h, pid := startBenchHTTP(b, benchServeSandbox(b))
	client := newClient()
	if err := benchHTTPCall(client, url, h, 1); err != nil {
		b.Fatal(err)
	}
	before := peakRSS(pid)
	flood(b, strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp"), floodConns)
	i := 1
	for b.Loop() {
		i++
		if err := benchHTTPCall(client, url, h, i); err != nil {
			b.Fatal(err)
		}
	}
	reportServer(b, pid, before)
}

// BenchmarkEventsIdleFlood: 20 000 idle connections to the external-event
// endpoint of a background session, then events with valid tokens, each on
// a new connection, while the flood stays; each is admitted (202).
// Reported: the session process's peak RSS and open descriptors, and the
// time of an admitted event under the flood.
func BenchmarkEventsIdleFlood(b *testing.B) {
	s, _ := printSandbox(b)
	shortRuntimeDir(b, s)
	iss, grant, resource := eventGrant(b, s)
	port := freePort(b)
	id := bgStart(b, s, "--external-event-grant", grant, "--external-event-port", fmt.Sprint(port))
	pid := control(b, s, id, `{"op":"info"}`).Info.PID
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	client := newClient()
	post := func(i int) error {
		ev := fmt.Sprintf(`{"kind": "message", "conversationId": "c", "content": "event %d"}`, i)
		req, _ := http.NewRequest("POST", "http://"+addr+"/hooks/events/ci", strings.NewReader(ev))
		req.Header.Set("Authorization", "Bearer "+iss.token(b, resource, "deploy-bot", "events:write"))
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			return fmt.Errorf("event %d: %d %s", i, resp.StatusCode, body)
		}
		return nil
	}
	if err := post(0); err != nil {
		b.Fatal(err)
	}
	before := peakRSS(pid)
	flood(b, addr, floodConns)
	i := 0
	for b.Loop() {
		i++
		if err := post(i); err != nil {
			b.Fatal(err)
		}
	}
	reportServer(b, pid, before)
}
