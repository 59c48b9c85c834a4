package events

import (
	"net/http"
	"net/netip"
	"sort"
	"strings"
	"time"

	"agent/internal/throttle"
)

// window counts the admitted turns of one grant against its rate windows
// (docs/reference/events.md, "Rate windows": only admitted turns count, in
// the trailing windowMs). It keeps the time of each admitted turn that some
// window can still see, at most the largest maxTurns of them, oldest first.
// Times are offsets from an epoch, so that comparisons use the monotonic
// clock.
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

// The failure throttle (internal/throttle, shared with `mcp serve`): after
// ThrottleFailures refused requests from one client within ThrottleWindow,
// its further failing requests are answered 429 with Retry-After until the
// window has room (docs/reference/events.md, "Throttle").
const (
	ThrottleFailures       = throttle.DefaultMaxFailures
	ThrottleWindow         = throttle.DefaultWindow
	DefaultMaxThrottleAddr = throttle.DefaultMaxAddrs
)

// clientAddr is the address a request came from: the peer, or, when the
// peer is a trusted proxy, the nearest address in X-Forwarded-For that is
// not itself a trusted proxy (docs/reference/events.md, "Throttle").
// Entries are read from the right: each proxy appends the address it
// received from, so only the right-hand entries were written by proxies the
// operator trusts, and everything to the left of the first untrusted one is
// the client's own claim.
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
