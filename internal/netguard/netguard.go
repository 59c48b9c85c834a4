// Package netguard is the outbound address policy for connections to places
// named by settings or by a model: MCP server URLs, OAuth endpoints found
// by discovery, and WebFetch (docs/reference/mcp.md, "Address policy").
//
// The address is checked when the socket is dialled, after name
// resolution, so a name that resolves to a public address at check time
// and a private one at connect time (DNS rebinding) is still refused.
// IPv4-mapped, IPv4-compatible and NAT64 IPv6 addresses are judged by the
// IPv4 address they carry. Clients built here use no proxy and never
// follow redirects.
//
// The names `localhost` and `*.localhost` are loopback by definition
// (RFC 6761 §6.3), so they are refused by name, before any lookup
// (docs/reference/mcp.md, "Address policy"): in CheckHost, which `agent mcp
// list` and WebFetch use before connecting, and in the dialer, so no
// connection made here ever asks a resolver about them. The comparison
// ignores case and trailing dots ("LOCALHOST.", "foo.localhost."). When the
// user's mcpAllowedNetworks contain a loopback address (127.0.0.1 or ::1,
// e.g. "127.0.0.0/8"), these names are let through as well: a user who
// allows loopback means the machine itself, and RFC 6761 names nothing
// else. The addresses such a name resolves to are still checked when
// dialled, so "127.0.0.0/8" alone does not open ::1.
//
// Imports: the standard library and agent/internal/quote.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"time"

	"agent/internal/quote"
)

// Class is why an address is refused.
type Class int

// The refused classes. Public is not refused.
const (
	Public Class = iota
	Loopback
	Private // RFC 1918, IPv6 site-local
	CGNAT   // RFC 6598 shared address space
	LinkLocal
	UniqueLocal // fc00::/7
	Unspecified
	Multicast
	Metadata // cloud instance metadata endpoints
	Reserved // documentation, benchmarking, broadcast, "this network", future use
)

func (c Class) String() string {
	switch c {
	case Public:
		return "public"
	case Loopback:
		return "loopback"
	case Private:
		return "private network"
	case CGNAT:
		return "shared address space"
	case LinkLocal:
		return "link-local"
	case UniqueLocal:
		return "unique-local network"
	case Unspecified:
		return "unspecified address"
	case Multicast:
		return "multicast"
	case Metadata:
		return "cloud metadata"
	case Reserved:
		return "reserved address"
	}
	return "unknown"
}

// RefusedError is returned for an address the policy refuses. A host name
// refused by name, before any lookup, has Host set and no Addr.
type RefusedError struct {
	Addr  netip.Addr
	Host  string
	Class Class
}

func (e *RefusedError) Error() string {
	if e.Host != "" {
		return fmt.Sprintf("address refused: %s (%q is a loopback name, RFC 6761)", e.Class, quote.V(e.Host))
	}
	return fmt.Sprintf("address refused: %s (%s)", e.Class, e.Addr)
}

// ErrRedirect is wrapped by the error for a redirect response: redirects
// are never followed.
var ErrRedirect = errors.New("redirect not followed")

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// addrTables are the addresses and prefixes Classify compares with,
// parsed on first use rather than when the package initialises (every
// command pays for that; docs/performance.md, "Startup").
var addrTables = sync.OnceValue(func() *addrTable {
	t := &addrTable{}
	t.metadata = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"), // most clouds
		netip.MustParseAddr("169.254.170.2"),   // container credential endpoints
		netip.MustParseAddr("100.100.100.200"),
		netip.MustParseAddr("fd00:ec2::254"),
	}
	t.classes = []classPrefix{
		{pfx("0.0.0.0/32"), Unspecified},
		{pfx("0.0.0.0/8"), Reserved},
		{pfx("127.0.0.0/8"), Loopback},
		{pfx("10.0.0.0/8"), Private},
		{pfx("172.16.0.0/12"), Private},
		{pfx("192.168.0.0/16"), Private},
		{pfx("100.64.0.0/10"), CGNAT},
		{pfx("169.254.0.0/16"), LinkLocal},
		{pfx("192.0.0.0/24"), Reserved},
		{pfx("192.0.2.0/24"), Reserved},
		{pfx("198.18.0.0/15"), Reserved},
		{pfx("198.51.100.0/24"), Reserved},
		{pfx("203.0.113.0/24"), Reserved},
		{pfx("224.0.0.0/4"), Multicast},
		{pfx("240.0.0.0/4"), Reserved}, // includes 255.255.255.255
		{pfx("::/128"), Unspecified},
		{pfx("::1/128"), Loopback},
		{pfx("fe80::/10"), LinkLocal},
		{pfx("fec0::/10"), Private},
		{pfx("fc00::/7"), UniqueLocal},
		{pfx("ff00::/8"), Multicast},
		{pfx("100::/64"), Reserved},
		{pfx("2001:db8::/32"), Reserved},
	}
	t.nat64 = pfx("64:ff9b::/96")
	return t
})

type addrTable struct {
	metadata []netip.Addr
	classes  []classPrefix
	nat64    netip.Prefix
}

type classPrefix struct {
	p netip.Prefix
	c Class
}

// unwrap returns the IPv4 address an IPv6 address carries, if any:
// IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and the NAT64
// well-known prefix (RFC 6052), which a gateway would translate.
func unwrap(a netip.Addr) netip.Addr {
	a = a.WithZone("")
	if a.Is4In6() {
		return a.Unmap()
	}
	if a.Is6() {
		b := a.As16()
		compat := true
		for _, x := range b[:12] {
			if x != 0 {
				compat = false
				break
			}
		}
		if (compat && !(b[12] == 0 && b[13] == 0 && b[14] == 0 && b[15] <= 1)) || addrTables().nat64.Contains(a) {
			return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		}
	}
	return a
}

// Classify says which refused class an address falls in, or Public.
func Classify(a netip.Addr) Class {
	a = unwrap(a)
	t := addrTables()
	for _, m := range t.metadata {
		if a == m {
			return Metadata
		}
	}
	for _, c := range t.classes {
		if c.p.Contains(a) {
			return c.c
		}
	}
	return Public
}

// Policy decides which addresses may be dialled. The zero value refuses
// every non-public address.
type Policy struct {
	// Allowed networks from the user's mcpAllowedNetworks: addresses in
	// them are allowed even when not public, except cloud metadata
	// addresses, which are always refused.
	Allowed []netip.Prefix
}

// Check returns nil for an allowed address and a *RefusedError otherwise.
func (p Policy) Check(a netip.Addr) error {
	if !a.IsValid() {
		return &RefusedError{Addr: a, Class: Unspecified}
	}
	c := Classify(a)
	if c == Metadata {
		return &RefusedError{Addr: a, Class: c}
	}
	u := unwrap(a)
	for _, n := range p.Allowed {
		if n.Contains(u) || n.Contains(a.WithZone("")) {
			return nil
		}
	}
	if c != Public {
		return &RefusedError{Addr: a, Class: c}
	}
	return nil
}

// IsLocalhostName reports whether host is `localhost` or a name under it,
// which RFC 6761 §6.3 reserves for loopback. Case and trailing dots do not
// matter.
func IsLocalhostName(host string) bool {
	h := strings.ToLower(strings.TrimRight(host, "."))
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// loopbackAllowed reports whether the allowed networks let the machine
// itself through: one of them holds 127.0.0.1 or ::1.
func (p Policy) loopbackAllowed() bool {
	for _, n := range p.Allowed {
		if n.Contains(netip.AddrFrom4([4]byte{127, 0, 0, 1})) || n.Contains(netip.IPv6Loopback()) {
			return true
		}
	}
	return false
}

// CheckName refuses a host name that is loopback by definition (see the
// package comment); every other name is judged when dialled.
func (p Policy) CheckName(host string) error {
	if IsLocalhostName(host) && !p.loopbackAllowed() {
		return &RefusedError{Host: host, Class: Loopback}
	}
	return nil
}

// Control is a net.Dialer Control function that applies the policy to the
// resolved address of every connection attempt.
func (p Policy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("address refused: cannot parse %q: %w", quote.V(address), err)
	}
	return p.Check(ap.Addr())
}

// Dialer returns a dialer that applies the policy to every resolved
// address. It never sees the name asked for: DialContext and Transport
// add the check of localhost names before the lookup.
func (p Policy) Dialer(timeout time.Duration) *net.Dialer {
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	return &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: p.Control}
}

// dialContext checks the name first, so a refused name never reaches a
// resolver, then dials through d, whose Control checks every resolved
// address.
func (p Policy) dialContext(d *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			host = address
		}
		if err := p.CheckName(host); err != nil {
			return nil, err
		}
		return d.DialContext(ctx, network, address)
	}
}

// ClientOptions configure HTTPClient. The zero value is usable.
type ClientOptions struct {
	DialTimeout time.Duration // default 30 s
	// Timeout bounds a whole request including reading the body; 0 means
	// none (streams are bounded by their own watchdogs).
	Timeout time.Duration
}

// Transport returns an http.Transport that dials through the policy and
// uses no proxy.
func (p Policy) Transport(opts ClientOptions) *http.Transport {
	d := p.Dialer(opts.DialTimeout)
	return &http.Transport{
		Proxy:                 nil, // never a proxy: the policy judges the real peer
		DialContext:           p.dialContext(d),
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 0,
	}
}

// HTTPClient returns a client that dials through the policy, uses no
// proxy and never follows redirects.
func (p Policy) HTTPClient(opts ClientOptions) *http.Client {
	return &http.Client{
		Transport:     p.Transport(opts),
		CheckRedirect: NoRedirects,
		Timeout:       opts.Timeout,
	}
}

// NoRedirects is an http.Client CheckRedirect that refuses every redirect.
func NoRedirects(req *http.Request, _ []*http.Request) error {
	return fmt.Errorf("%w: the server redirected to %s", ErrRedirect, req.URL.Redacted())
}

// CheckHost applies the policy to a URL host before any connection: an
// IP literal is judged by its address, a localhost name by its name (see
// CheckName); other host names are judged at dial time. It reports whether
// host was a literal.
func (p Policy) CheckHost(host string) (bool, error) {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false, p.CheckName(host)
	}
	return true, p.Check(a)
}

// DialContext dials through the policy (for non-HTTP transports).
func (p Policy) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return p.dialContext(p.Dialer(0))(ctx, network, address)
}
