package events

import (
	"fmt"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"
)

// TestRateWindows: each window counts admitted turns in its trailing
// windowMs; the tightest decides, and Retry-After says when a place frees.
func TestRateWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := testGrant()
		g.Rate = []Rate{{time.Second, 2}, {10 * time.Second, 3}}
		e := newEnv(t, func(o *Options) { o.Now = nil }, g)
		tok := func() string { return esSigner().sign(nil, claims(time.Now(), nil)) }
		admit := func() { t.Helper(); turnID(t, e.do(req{token: tok(), body: goodBody})) }
		full := func(retry string) {
			t.Helper()
			w := e.do(req{token: tok(), body: goodBody})
			wantStatus(t, w, 429)
			if got := w.Header().Get("Retry-After"); got != retry {
				t.Fatalf("Retry-After %q, want %q", got, retry)
			}
		}
		admit()
		time.Sleep(400 * time.Millisecond)
		admit()
		full("1") // the first turn leaves the 1 s window in 0.6 s
		time.Sleep(599 * time.Millisecond)
		full("1")
		time.Sleep(time.Millisecond) // exactly 1 s after the first: it is out
		admit()
		full("9") // 10 s window: three turns; the first leaves it at 10 s
		time.Sleep(9 * time.Second)
		admit()
		full("1")
		if n := e.target.count(); n != 4 {
			t.Fatalf("%d turns", n)
		}
		// A refused event is not counted: after the windows pass, two
		// fit the 1 s window again.
		time.Sleep(10 * time.Second)
		admit()
		admit()
		full("1")
	})
}

// TestWindowMemory: a window keeps no more times than its largest
// maxTurns, however many turns pass.
func TestWindowMemory(t *testing.T) {
	w := newWindow([]Rate{{time.Hour, 5}, {time.Minute, 3}})
	now := time.Duration(0)
	admitted := 0
	for range 10_000 {
		now += 10 * time.Second
		if ok, _ := w.allow(now); ok {
			w.add(now)
			admitted++
		}
		if len(w.times) > 5 {
			t.Fatalf("%d times kept", len(w.times))
		}
	}
	// Five per hour over 100 000 s.
	if want := 100_000 / 3600 * 5; admitted < want || admitted > want+5 {
		t.Fatalf("%d admitted, want about %d", admitted, want)
	}
}

// TestThrottle: more than 20 failures from one address within 60 s make its
// failing requests 429 with Retry-After, in place of their 401, 403, 404 or
// 405, until the window has room; a request whose token verifies for its
// grant is never refused by the throttle (docs/reference/events.md,
// "Throttle"); other addresses are not affected; an IPv6 /64 counts as one.
func TestThrottle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, func(o *Options) { o.Now = nil })
		good := func() string { return esSigner().sign(nil, claims(time.Now(), nil)) }
		const a = "198.51.100.1:1000"
		for i := range ThrottleFailures - 1 {
			wantStatus(t, e.do(req{remote: a, body: goodBody}), 401)
			if i == 0 {
				time.Sleep(30 * time.Second)
			}
		}
		// Nineteen so far: the 20th is still judged, and fails; the rest
		// are more than 20.
		wantStatus(t, e.do(req{remote: a, path: "/nope"}), 404)
		for _, q := range []req{
			{remote: a, body: goodBody},
			{remote: a, path: "/nope"},
			{remote: a, method: "GET"},
			{remote: a, token: esSigner().sign(nil, claims(time.Now(), map[string]any{"scope": "other"})), body: goodBody},
			{remote: "198.51.100.1:2000", token: "forged.token.here", body: goodBody},
		} {
			w := e.do(q)
			wantStatus(t, w, 429)
			// The first failure, 30 s before the rest, leaves the window
			// in 30 s.
			if got := w.Header().Get("Retry-After"); got != "30" || w.Header().Get("WWW-Authenticate") != "" {
				t.Fatalf("Retry-After %q, challenge %q", got, w.Header().Get("WWW-Authenticate"))
			}
		}
		// Valid tokens from the throttled address are admitted, from any
		// port; so is anybody else's.
		turnID(t, e.do(req{remote: a, token: good(), body: goodBody}))
		turnID(t, e.do(req{remote: "198.51.100.1:2000", token: good(), body: goodBody}))
		turnID(t, e.do(req{remote: "198.51.100.2:1000", token: good(), body: goodBody}))
		// A verified token's own failures keep their status.
		wantStatus(t, e.do(req{remote: a, token: good(), body: "{}"}), 400)
		time.Sleep(30 * time.Second)
		// One failure has left the window (the 400 above has entered it):
		// the throttle still holds, and valid tokens still pass.
		wantStatus(t, e.do(req{remote: a}), 429)
		turnID(t, e.do(req{remote: a, token: good(), body: goodBody}))
		time.Sleep(ThrottleWindow)
		wantStatus(t, e.do(req{remote: a}), 401)

		throttled := 0
		for _, r := range e.audit.all() {
			if r.Outcome == OutcomeThrottled {
				throttled++
			}
		}
		if throttled != 1 {
			t.Fatalf("%d throttled records, want one per throttled stretch (1)", throttled)
		}

		// IPv6: the /64 is the unit.
		for i := range ThrottleFailures {
			wantStatus(t, e.do(req{remote: fmt.Sprintf("[2001:db8:1:2::%x]:443", i+1)}), 401)
		}
		wantStatus(t, e.do(req{remote: "[2001:db8:1:2:ffff::1]:443", body: goodBody}), 429)
		turnID(t, e.do(req{remote: "[2001:db8:1:2:ffff::1]:443", token: good(), body: goodBody}))
		wantStatus(t, e.do(req{remote: "[2001:db8:1:3::1]:443", body: goodBody}), 401)
	})
}

// TestThrottleFailures: which statuses count as failures, and that the
// throttle never stands between a valid token and its turn.
func TestThrottleFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		q      func(e *env) req
		counts bool
	}{
		{"401", func(e *env) req { return req{body: goodBody} }, true},
		{"404", func(e *env) req { return req{path: "/x"} }, true},
		{"405", func(e *env) req { return req{method: "GET"} }, true},
		{"400", func(e *env) req { return req{token: e.token(nil), body: "{}"} }, true},
		{"403", func(e *env) req { return req{token: e.token(map[string]any{"scope": "x"})} }, true},
		{"202", func(e *env) req { return req{token: e.token(nil), body: goodBody} }, false},
		{"metadata", func(e *env) req { return req{method: "GET", path: "/.well-known/oauth-protected-resource" + testPath} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			for range ThrottleFailures + 1 {
				e.do(tc.q(e))
			}
			w := e.do(req{body: goodBody})
			if throttled := w.Code == 429; throttled != tc.counts {
				t.Fatalf("after 21 of them: %d", w.Code)
			}
			turnID(t, e.do(req{token: e.token(nil), body: goodBody}))
		})
	}
}

// TestTrustedProxy: X-Forwarded-For is believed only from a trusted proxy,
// read from the right, skipping trusted hops.
func TestTrustedProxy(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.TrustedProxies = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("2001:db8::5")}
	})
	for _, tc := range []struct {
		name   string
		remote string
		xff    []string
		want   string
	}{
		{"proxy", "127.0.0.1:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"proxy without the header", "127.0.0.1:5000", nil, "127.0.0.1"},
		{"untrusted peer", "203.0.113.9:5000", []string{"198.51.100.1"}, "203.0.113.9"},
		{"client's own claim on the left", "127.0.0.1:5000", []string{"192.0.2.66, 198.51.100.1"}, "198.51.100.1"},
		{"chain of trusted proxies", "127.0.0.1:5000", []string{"198.51.100.1, 10.0.0.2"}, "198.51.100.1"},
		{"several headers", "127.0.0.1:5000", []string{"192.0.2.66", "198.51.100.3, 10.0.0.2"}, "198.51.100.3"},
		{"all trusted", "127.0.0.1:5000", []string{"10.0.0.2"}, "127.0.0.1"},
		{"malformed entry", "127.0.0.1:5000", []string{"198.51.100.1, not-an-ip"}, "127.0.0.1"},
		{"IPv6 proxy", "[2001:db8::5]:443", []string{"2001:db8:9::1"}, "2001:db8:9::1"},
		{"IPv4-mapped peer", "[::ffff:127.0.0.1]:5000", []string{"198.51.100.4"}, "198.51.100.4"},
		{"IPv4-mapped client", "127.0.0.1:5000", []string{"::ffff:198.51.100.5"}, "198.51.100.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.do(req{remote: tc.remote, xff: tc.xff, method: "GET", path: "/.well-known/oauth-protected-resource" + testPath})
			e.do(req{remote: tc.remote, xff: tc.xff, path: "/nowhere"})
			recs := e.audit.all()
			if got := recs[len(recs)-1].Addr; got != tc.want {
				t.Fatalf("address %q, want %q", got, tc.want)
			}
		})
	}

	// Clients behind the proxy are throttled apart; the proxy itself is
	// not throttled for them.
	e = newEnv(t, func(o *Options) { o.TrustedProxies = []netip.Addr{netip.MustParseAddr("127.0.0.1")} })
	for range ThrottleFailures {
		wantStatus(t, e.do(req{remote: "127.0.0.1:1", xff: []string{"198.51.100.1"}}), 401)
	}
	wantStatus(t, e.do(req{remote: "127.0.0.1:1", xff: []string{"198.51.100.1"}}), 429)
	wantStatus(t, e.do(req{remote: "127.0.0.1:1", xff: []string{"198.51.100.2"}}), 401)
	turnID(t, e.do(req{remote: "127.0.0.1:1", xff: []string{"198.51.100.1"}, token: e.token(nil), body: goodBody}))
	// An untrusted peer cannot escape its throttle by claiming addresses.
	for i := range ThrottleFailures + 1 {
		e.do(req{remote: "203.0.113.1:1", xff: []string{fmt.Sprintf("192.0.2.%d", i)}})
	}
	wantStatus(t, e.do(req{remote: "203.0.113.1:1", xff: []string{"192.0.2.200"}}), 429)
}
