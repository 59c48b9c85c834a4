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
		addr string
		want Class
	}{
		{"8.8.8.8", Public},
		{"1.1.1.1", Public},
		{"2606:4700::1111", Public},
		{"127.0.0.1", Loopback},
		{"127.255.255.254", Loopback},
		{"::1", Loopback},
		{"10.1.2.3", Private},
		{"172.16.0.1", Private},
		{"172.31.255.255", Private},
		{"172.32.0.1", Public},
		{"192.168.1.1", Private},
		{"100.64.0.1", CGNAT},
		{"100.127.255.255", CGNAT},
		{"100.128.0.1", Public},
		{"169.254.1.1", LinkLocal},
		{"fe80::1", LinkLocal},
		{"fe80::1%eth0", LinkLocal},
		{"fc00::1", UniqueLocal},
		{"fd12:3456::1", UniqueLocal},
		{"0.0.0.0", Unspecified},
		{"::", Unspecified},
		{"0.1.2.3", Reserved},
		{"224.0.0.1", Multicast},
		{"239.255.255.250", Multicast},
		{"ff02::1", Multicast},
		{"255.255.255.255", Reserved},
		{"192.0.2.10", Reserved},
		{"2001:db8::1", Reserved},
		{"169.254.169.254", Metadata},
		{"fd00:ec2::254", Metadata},
		{"100.100.100.200", Metadata},
		// IPv6 forms that carry an IPv4 address are judged by it.
		{"::ffff:127.0.0.1", Loopback},
		{"::ffff:169.254.169.254", Metadata},
		{"::ffff:10.0.0.1", Private},
		{"::ffff:8.8.8.8", Public},
		{"::127.0.0.1", Loopback},
		{"::10.0.0.1", Private},
		{"64:ff9b::10.0.0.1", Private},
		{"64:ff9b::a9fe:a9fe", Metadata},
		{"64:ff9b::8.8.8.8", Public},
	}
	for _, c := range cases {
		if got := Classify(netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("Classify(%s) = %v, want %v", c.addr, got, c.want)
		}
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

func TestDialTimeRefusal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	// A literal loopback URL and a name that resolves to loopback are both
	// refused when the socket is dialled.
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]
	for _, u := range []string{srv.URL, "http://localhost" + port} {
		_, err := Policy{}.HTTPClient(ClientOptions{}).Get(u)
		var re *RefusedError
		if !errors.As(err, &re) || re.Class != Loopback {
			t.Errorf("GET %s: %v, want a loopback refusal", u, err)
		}
	}
	allowed := Policy{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	resp, err := allowed.HTTPClient(ClientOptions{}).Get(srv.URL)
	if err != nil {
		t.Fatalf("allowed network refused: %v", err)
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
