package netguard

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		name string
		addr string
		want Class
	}{
		{"a public IPv4 address", "8.8.8.8", Public},
		{"another public IPv4 address", "1.1.1.1", Public},
		{"a public IPv6 address", "2606:4700::1111", Public},
		{"IPv4 loopback", "127.0.0.1", Loopback},
		{"the top of 127.0.0.0/8", "127.255.255.254", Loopback},
		{"IPv6 loopback", "::1", Loopback},
		{"10.0.0.0/8 is private", "10.1.2.3", Private},
		{"the bottom of 172.16.0.0/12", "172.16.0.1", Private},
		{"the top of 172.16.0.0/12", "172.31.255.255", Private},
		{"just past 172.16.0.0/12 is public", "172.32.0.1", Public},
		{"192.168.0.0/16 is private", "192.168.1.1", Private},
		{"the bottom of the shared address space", "100.64.0.1", CGNAT},
		{"the top of the shared address space", "100.127.255.255", CGNAT},
		{"just past the shared address space is public", "100.128.0.1", Public},
		{"IPv4 link-local", "169.254.1.1", LinkLocal},
		{"IPv6 link-local", "fe80::1", LinkLocal},
		{"IPv6 link-local with a zone", "fe80::1%eth0", LinkLocal},
		{"the bottom of fc00::/7", "fc00::1", UniqueLocal},
		{"fd00::/8 is unique local", "fd12:3456::1", UniqueLocal},
		{"the IPv4 unspecified address", "0.0.0.0", Unspecified},
		{"the IPv6 unspecified address", "::", Unspecified},
		{"this network (0.0.0.0/8)", "0.1.2.3", Reserved},
		{"IPv4 multicast", "224.0.0.1", Multicast},
		{"the SSDP multicast address", "239.255.255.250", Multicast},
		{"IPv6 multicast", "ff02::1", Multicast},
		{"the broadcast address", "255.255.255.255", Reserved},
		{"an IPv4 documentation address", "192.0.2.10", Reserved},
		{"an IPv6 documentation address", "2001:db8::1", Reserved},
		{"the IPv4 metadata address", "169.254.169.254", Metadata},
		{"the IPv6 metadata address", "fd00:ec2::254", Metadata},
		{"a metadata address inside the shared address space", "100.100.100.200", Metadata},
		// IPv6 forms that carry an IPv4 address are judged by it.
		{"IPv4-mapped loopback", "::ffff:127.0.0.1", Loopback},
		{"IPv4-mapped metadata", "::ffff:169.254.169.254", Metadata},
		{"IPv4-mapped private", "::ffff:10.0.0.1", Private},
		{"IPv4-mapped public", "::ffff:8.8.8.8", Public},
		{"IPv4-compatible loopback", "::127.0.0.1", Loopback},
		{"IPv4-compatible private", "::10.0.0.1", Private},
		{"NAT64 private", "64:ff9b::10.0.0.1", Private},
		{"NAT64 metadata in hex", "64:ff9b::a9fe:a9fe", Metadata},
		{"NAT64 public", "64:ff9b::8.8.8.8", Public},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Classify(netip.MustParseAddr(c.addr)); got != c.want {
				t.Errorf("Classify(%s) = %v, want %v", c.addr, got, c.want)
			}
		})
	}
}

func TestPolicyAllowedNetworks(t *testing.T) {
	p := Policy{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("fd00::/8")}}
	for _, ok := range []string{"127.0.0.1", "::ffff:127.0.0.2", "169.254.1.1", "fd12::1", "8.8.8.8"} {
		if err := p.Check(netip.MustParseAddr(ok)); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"169.254.169.254", "fd00:ec2::254", "10.0.0.1", "::1"} {
		var re *RefusedError
		if err := p.Check(netip.MustParseAddr(bad)); !errors.As(err, &re) {
			t.Errorf("%s allowed", bad)
		}
	}
	if err := (Policy{}).Check(netip.Addr{}); err == nil {
		t.Error("invalid address allowed")
	}
}

func TestCheckHost(t *testing.T) {
	p := Policy{}
	if lit, err := p.CheckHost("example.com"); lit || err != nil {
		t.Fatal("a host name is judged at dial time")
	}
	lit, err := p.CheckHost("10.0.0.1")
	var re *RefusedError
	if !lit || !errors.As(err, &re) || re.Class != Private || !strings.Contains(err.Error(), "address refused: private network") {
		t.Fatalf("%v %v", lit, err)
	}
}

// TestLocalhostNamesRefusedByName: `localhost` and `*.localhost` are
// loopback by definition (RFC 6761 §6.3) and refused by name, before any
// lookup (docs/reference/mcp.md, "Address policy"), unless the allowed
// networks hold a loopback address.
func TestLocalhostNamesRefusedByName(t *testing.T) {
	allow4 := Policy{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	allow6 := Policy{Allowed: []netip.Prefix{netip.MustParsePrefix("::1/128")}}
	allowOther := Policy{Allowed: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.2/32")}}
	cases := []struct {
		name      string
		host      string
		policy    Policy
		localhost bool // IsLocalhostName
		refused   bool // CheckHost
	}{
		{"localhost", "localhost", Policy{}, true, true},
		{"upper case", "LOCALHOST", Policy{}, true, true},
		{"mixed case", "LocalHost", Policy{}, true, true},
		{"trailing dot", "localhost.", Policy{}, true, true},
		{"upper case with trailing dot", "LOCALHOST.", Policy{}, true, true},
		{"two trailing dots", "localhost..", Policy{}, true, true},
		{"subdomain", "foo.localhost", Policy{}, true, true},
		{"subdomain with trailing dot", "foo.localhost.", Policy{}, true, true},
		{"deep subdomain in upper case", "A.B.LOCALHOST", Policy{}, true, true},
		{"empty label before localhost", ".localhost", Policy{}, true, true},
		{"suffix without a dot", "notlocalhost", Policy{}, false, false},
		{"localhost as a label inside", "localhost.example.com", Policy{}, false, false},
		{"localhost as a prefix", "localhost-proxy.example", Policy{}, false, false},
		{"ordinary name", "example.com", Policy{}, false, false},
		{"allowed 127.0.0.0/8 lets the name through", "localhost", allow4, true, false},
		{"allowed ::1 lets a subdomain through", "foo.localhost.", allow6, true, false},
		{"allowed networks without 127.0.0.1 or ::1", "localhost", allowOther, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := IsLocalhostName(c.host); got != c.localhost {
				t.Errorf("IsLocalhostName(%q) = %v, want %v", c.host, got, c.localhost)
			}
			lit, err := c.policy.CheckHost(c.host)
			if lit {
				t.Errorf("CheckHost(%q) took a name for a literal", c.host)
			}
			var re *RefusedError
			switch {
			case c.refused && (!errors.As(err, &re) || re.Class != Loopback || re.Host != c.host || re.Addr.IsValid()):
				t.Errorf("CheckHost(%q) = %v, want a refusal by name", c.host, err)
			case c.refused && !strings.Contains(err.Error(), "address refused: loopback"):
				t.Errorf("message %q", err)
			case !c.refused && err != nil:
				t.Errorf("CheckHost(%q) = %v, want nil", c.host, err)
			}
		})
	}
}

func TestDialTimeRefusal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	// A literal loopback URL is refused when the socket is dialled.
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]
	_, err := Policy{}.HTTPClient(ClientOptions{}).Get(srv.URL)
	var re *RefusedError
	if !errors.As(err, &re) || re.Class != Loopback || !re.Addr.IsValid() {
		t.Errorf("GET %s: %v, want a loopback refusal", srv.URL, err)
	}
	// Localhost names are refused by name: the error names the host and
	// no address, because no lookup happened (foo.localhost would not
	// even resolve on most machines).
	for _, host := range []string{"localhost", "LOCALHOST.", "foo.localhost"} {
		_, err := Policy{}.HTTPClient(ClientOptions{}).Get("http://" + host + port)
		var re *RefusedError
		if !errors.As(err, &re) || re.Class != Loopback || re.Host != host || re.Addr.IsValid() {
			t.Errorf("GET %s: %v, want a refusal by name", host, err)
		}
		conn, err := Policy{}.DialContext(context.Background(), "tcp", host+port)
		if !errors.As(err, &re) || re.Host != host {
			if conn != nil {
				conn.Close()
			}
			t.Errorf("dial %s: %v, want a refusal by name", host, err)
		}
	}
	allowed := Policy{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	resp, err := allowed.HTTPClient(ClientOptions{}).Get(srv.URL)
	if err != nil {
		t.Fatalf("allowed network refused: %v", err)
	}
	resp.Body.Close()
	// With loopback allowed, the name passes and its addresses are judged
	// when dialled: 127.0.0.1 is in the allowed network.
	resp, err = allowed.HTTPClient(ClientOptions{}).Get("http://localhost" + port)
	if err != nil {
		t.Fatalf("localhost with 127.0.0.0/8 allowed: %v", err)
	}
	resp.Body.Close()
	conn, err := Policy{}.DialContext(context.Background(), "tcp", srv.Listener.Addr().String())
	if err == nil {
		conn.Close()
		t.Fatal("raw dial to loopback allowed")
	}
}

func TestNoRedirects(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/start" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		t.Error("redirect followed")
	}))
	defer srv.Close()
	c := Policy{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}.HTTPClient(ClientOptions{})
	_, err := c.Get(srv.URL + "/start")
	if !errors.Is(err, ErrRedirect) {
		t.Fatalf("got %v, want ErrRedirect", err)
	}
	if tr := c.Transport.(*http.Transport); tr.Proxy != nil {
		t.Fatal("a proxy is configured")
	}
}

func FuzzClassify(f *testing.F) {
	f.Add([]byte{127, 0, 0, 1})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		c := Classify(a)
		// An IPv6 form of an IPv4 address never classifies more leniently
		// than the IPv4 address itself.
		if a.Is4() {
			if m := Classify(netip.AddrFrom16(a.As16())); m != c {
				t.Fatalf("%s: %v, mapped %v", a, c, m)
			}
		}
	})
}
