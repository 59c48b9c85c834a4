// Package throttle is the failure throttle of the HTTP endpoints that
// verify tokens (remote `agent mcp serve`, the external-event endpoint;
// docs/reference/mcp.md, "Failure throttle"; docs/reference/events.md,
// "Throttle"): after MaxFailures failed requests from one client within
// Window, that client's further failing requests are answered 429 until the
// window has room again. The endpoints consult it only for a request that
// is failing anyway: a request whose token verifies is never refused
// because of failures, its own or anybody's behind the same address.
//
// A client is an IPv4 address or the /64 of an IPv6 address (one IPv6
// host commonly holds a whole /64). At most MaxAddrs clients are
// remembered; when full, the one that failed least recently is forgotten,
// so a flood of addresses costs bounded memory and can only free other
// clients early, never block a quiet one.
//
// Imports: standard library only.
package throttle

import (
	"container/list"
	"net/netip"
	"sync"
	"time"
)

// Defaults of Options.
const (
	DefaultMaxFailures = 20
	DefaultWindow      = 60 * time.Second
	DefaultMaxAddrs    = 10_000
)

// Options configure a Throttle; every zero value is the default.
type Options struct {
	MaxFailures int
	Window      time.Duration
	MaxAddrs    int
	Now         func() time.Time // nil: time.Now
}

// Throttle counts failures per client. It is safe for concurrent use.
type Throttle struct {
	max    int
	window time.Duration
	addrs  int
	now    func() time.Time

	mu      sync.Mutex
	entries map[netip.Prefix]*list.Element // of *failures
	lru     list.List                      // most recent failure first
}

type failures struct {
	key   netip.Prefix
	times []time.Time // ring of the latest MaxFailures failures
	n     int         // failures recorded, up to len(times)
	next  int         // ring position of the next write
	noted bool        // this throttled stretch has been reported once
}

// New returns a Throttle.
func New(o Options) *Throttle {
	t := &Throttle{max: o.MaxFailures, window: o.Window, addrs: o.MaxAddrs, now: o.Now, entries: map[netip.Prefix]*list.Element{}}
	if t.max <= 0 {
		t.max = DefaultMaxFailures
	}
	if t.window <= 0 {
		t.window = DefaultWindow
	}
	if t.addrs <= 0 {
		t.addrs = DefaultMaxAddrs
	}
	if t.now == nil {
		t.now = time.Now
	}
	return t
}

// Key is the unit counted for a: an IPv4 address, or the /64 of an IPv6
// address (IPv4-mapped addresses count as IPv4).
func Key(a netip.Addr) netip.Prefix {
	a = a.Unmap().WithZone("")
	bits := 32
	if a.Is6() {
		bits = 64
	}
	p, err := a.Prefix(bits)
	if err != nil {
		return netip.PrefixFrom(a, a.BitLen())
	}
	return p
}

// Blocked reports how long a's failing requests must still be refused (0:
// not blocked), and whether this is the first refusal of the stretch, for
// a caller that records a stretch once.
func (t *Throttle) Blocked(a netip.Addr) (wait time.Duration, first bool) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	el, ok := t.entries[Key(a)]
	if !ok {
		return 0, false
	}
	f := el.Value.(*failures)
	oldest := f.times[f.next] // the earliest of the ring, when full
	if f.n < t.max || now.Sub(oldest) >= t.window {
		f.noted = false
		return 0, false
	}
	first = !f.noted
	f.noted = true
	return max(oldest.Add(t.window).Sub(now), time.Nanosecond), first
}

// Fail records a failed request from a.
func (t *Throttle) Fail(a netip.Addr) {
	now := t.now()
	key := Key(a)
	t.mu.Lock()
	defer t.mu.Unlock()
	el, ok := t.entries[key]
	if ok {
		t.lru.MoveToFront(el)
	} else {
		if len(t.entries) >= t.addrs {
			last := t.lru.Back()
			delete(t.entries, last.Value.(*failures).key)
			t.lru.Remove(last)
		}
		el = t.lru.PushFront(&failures{key: key, times: make([]time.Time, t.max)})
		t.entries[key] = el
	}
	f := el.Value.(*failures)
	f.times[f.next] = now
	f.next = (f.next + 1) % len(f.times)
	f.n = min(f.n+1, len(f.times))
}

// Len is the number of clients remembered.
func (t *Throttle) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}
