package throttle

import (
	"net/netip"
	"testing"
	"time"
)

// clock is a settable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestThrottle(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	th := New(Options{Now: c.now})
	a := netip.MustParseAddr("198.51.100.7")
	// The first failure, 30 s before the rest.
	th.Fail(a)
	c.t = c.t.Add(30 * time.Second)
	for range DefaultMaxFailures - 2 {
		th.Fail(a)
	}
	if wait, _ := th.Blocked(a); wait != 0 {
		t.Fatalf("blocked after %d failures", DefaultMaxFailures-1)
	}
	th.Fail(a) // the 20th: more than 20 are refused
	wait, first := th.Blocked(a)
	if wait != 30*time.Second || !first {
		t.Fatalf("after 20 failures: %v %v, want 30s, first", wait, first)
	}
	if _, first := th.Blocked(a); first {
		t.Fatal("the stretch was reported twice")
	}
	// Other clients are not affected; an IPv4-mapped address is the same client.
	if wait, _ := th.Blocked(netip.MustParseAddr("198.51.100.8")); wait != 0 {
		t.Fatal("another address blocked")
	}
	if wait, _ := th.Blocked(netip.MustParseAddr("::ffff:198.51.100.7")); wait == 0 {
		t.Fatal("the IPv4-mapped form escaped")
	}
	// The first failure leaves the window: one place is free again.
	c.t = c.t.Add(30 * time.Second)
	if wait, _ := th.Blocked(a); wait != 0 {
		t.Fatal("still blocked once a failure left the window")
	}
	th.Fail(a)
	if wait, first := th.Blocked(a); wait != 30*time.Second || !first { // the failures of 30 s ago leave next
		t.Fatalf("a new stretch: %v %v", wait, first)
	}
}

func TestKeyGroupsIPv6By64(t *testing.T) {
	cases := []struct {
		name string
		a, b string
		same bool
	}{
		{"one /64", "2001:db8:1:2::1", "2001:db8:1:2:ffff::9", true},
		{"another /64", "2001:db8:1:2::1", "2001:db8:1:3::1", false},
		{"IPv4-mapped and plain", "::ffff:10.0.0.1", "10.0.0.1", true},
		{"IPv4 addresses apart", "10.0.0.1", "10.0.0.2", false},
		{"a zone does not matter", "fe80::1%eth0", "fe80::2", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Key(netip.MustParseAddr(c.a)) == Key(netip.MustParseAddr(c.b)); got != c.same {
				t.Fatalf("same = %v", got)
			}
		})
	}
}

// TestMemoryIsBounded: the throttle tracks a bounded number of clients,
// forgetting the one that failed least recently, so a busy one stays.
func TestMemoryIsBounded(t *testing.T) {
	th := New(Options{MaxAddrs: 100})
	for i := range 100_000 {
		th.Fail(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}))
		if th.Len() > 100 {
			t.Fatalf("%d clients remembered", th.Len())
		}
	}
	busy := netip.MustParseAddr("192.0.2.1")
	for i := range 1000 {
		th.Fail(busy)
		th.Fail(netip.AddrFrom4([4]byte{172, 16, byte(i >> 8), byte(i)}))
	}
	if wait, _ := th.Blocked(busy); wait == 0 {
		t.Fatal("the busy client was forgotten")
	}
}
