package events

import (
	"container/list"
	"net/http"
	"net/netip"
	"sort"
	"strings"
	"time"
)

// window counts the admitted turns of one grant against its rate windows
// (decisions.md §4: rate windows count admitted turns in the trailing
// windowMs). It keeps the time of each admitted turn that some window can
// still see, at most the largest maxTurns of them, oldest first. Times are
// offsets from an epoch, so that comparisons use the monotonic clock.
//
// A window is not safe for concurrent use; its grant's mutex guards it.
type window struct {
	rates   []Rate
	longest time.Duration
	keep    int             // most times any window needs
	times   []time.Duration // admitted turns, ascending; a ring would save the copy, this keeps it simple
}

func newWindow(rates []Rate) *window {
	w := &window{rates: rates}
	for _, r := range rates {
		w.longest = max(w.longest, r.Window)
		w.keep = max(w.keep, r.MaxTurns)
	}
	return w
}

// allow reports whether one more turn fits every window at now, and when
// not, how long until it would.
func (w *window) allow(now time.Duration) (bool, time.Duration) {
	if len(w.rates) == 0 {
		return true, 0
	}
	w.prune(now)
	var wait time.Duration
	for _, r := range w.rates {
		// The turns inside (now-Window, now].
		from := sort.Search(len(w.times), func(i int) bool { return w.times[i] > now-r.Window })
		n := len(w.times) - from
		if n >= r.MaxTurns {
			// The window frees a place when the turn MaxTurns back from
			// the newest leaves it.
			oldest := w.times[len(w.times)-r.MaxTurns]
			wait = max(wait, oldest+r.Window-now)
		}
	}
	return wait == 0, wait
}

// add records an admitted turn at now.
func (w *window) add(now time.Duration) {
	if len(w.rates) == 0 {
		return
	}
	if len(w.times) >= w.keep {
		// No window needs more than keep times: drop the oldest.
		n := copy(w.times, w.times[len(w.times)-w.keep+1:])
		w.times = w.times[:n]
	}
	w.times = append(w.times, now)
}

// prune forgets turns no window can see.
func (w *window) prune(now time.Duration) {
	i := sort.Search(len(w.times), func(i int) bool { return w.times[i] > now-w.longest })
	if i > 0 {
		n := copy(w.times, w.times[i:])
		w.times = w.times[:n]
	}
}

// The failure throttle: more than ThrottleFailures refused requests from
// one address within ThrottleWindow are answered 429 with Retry-After
// until the window has room again, before anything else is read
// (decisions.md §3, which the event endpoint shares with `mcp serve`).
const (
	ThrottleFailures       = 20
	ThrottleWindow         = 60 * time.Second
	DefaultMaxThrottleAddr = 10_000
)

// throttle remembers the recent failures of at most max addresses. When
// full it forgets the address that failed least recently, so a flood of
// addresses costs a bounded amount of memory; such a flood can only free
// other addresses early, never block a quiet one.
//
// A throttle is not safe for concurrent use; the Server's mutex guards it.
type throttle struct {
	max     int
	entries map[netip.Prefix]*list.Element // of *failures
	lru     list.List                      // most recent failure first
}

type failures struct {
	key   netip.Prefix
	times [ThrottleFailures + 1]time.Duration // ring of the latest failures
	n     int                                 // failures recorded, up to len(times)
	next  int                                 // ring position of the next write
	noted bool                                // this throttled stretch has been audited
}

// oldest is the earliest of the failures in the ring, valid when full.
func (f *failures) oldest() time.Duration { return f.times[f.next] }

func newThrottle(max int) *throttle {
	if max <= 0 {
		max = DefaultMaxThrottleAddr
	}
	return &throttle{max: max, entries: map[netip.Prefix]*list.Element{}}
}

// blocked reports whether key is throttled at now, for how long, and
// whether this is the first refusal of the stretch (to audit it once).
func (t *throttle) blocked(key netip.Prefix, now time.Duration) (bool, time.Duration, bool) {
	el, ok := t.entries[key]
	if !ok {
		return false, 0, false
	}
	f := el.Value.(*failures)
	if f.n < len(f.times) || f.oldest() <= now-ThrottleWindow {
		f.noted = false
		return false, 0, false
	}
	first := !f.noted
	f.noted = true
	return true, f.oldest() + ThrottleWindow - now, first
}

// fail records a refused request from key at now.
func (t *throttle) fail(key netip.Prefix, now time.Duration) {
	el, ok := t.entries[key]
	if ok {
		t.lru.MoveToFront(el)
	} else {
		if len(t.entries) >= t.max {
			last := t.lru.Back()
			delete(t.entries, last.Value.(*failures).key)
			t.lru.Remove(last)
		}
		el = t.lru.PushFront(&failures{key: key})
		t.entries[key] = el
	}
	f := el.Value.(*failures)
	f.times[f.next] = now
	f.next = (f.next + 1) % len(f.times)
	f.n = min(f.n+1, len(f.times))
}

// throttleKey is the unit the throttle counts: an IPv4 address, or the /64
// of an IPv6 address, since one IPv6 host commonly holds a whole /64.
func throttleKey(a netip.Addr) netip.Prefix {
	a = a.Unmap()
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

// clientAddr is the address a request came from: the peer, or, when the
// peer is a trusted proxy, the nearest address in X-Forwarded-For that is
// not itself a trusted proxy (seed-mcp-events.md §5.3 rule 4). Entries are
// read from the right: each proxy appends the address it received from, so
// only the right-hand entries were written by proxies the operator trusts,
// and everything to the left of the first untrusted one is the client's
// own claim.
func clientAddr(r *http.Request, trusted map[netip.Addr]bool) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.IPv4Unspecified()
	}
	peer := ap.Addr().Unmap()
	if !trusted[peer] {
		return peer
	}
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		parts := strings.Split(hops[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				// A proxy we trust wrote something that is not an
				// address: believe none of the chain.
				return peer
			}
			a = a.Unmap().WithZone("")
			if !trusted[a] {
				return a
			}
		}
	}
	return peer
}
