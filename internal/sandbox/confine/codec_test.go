package confine

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestPolicyRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		p    Policy
	}{
		{"a command", Policy{Path: "/bin/sh", Args: []string{"sh", "-c", "echo 'a=b'"}, Env: []string{"A=1", "B="}, Dir: "/w", Mode: WorkspaceWrite}},
		{"everything", Policy{Path: "x", Args: []string{"x", ""}, Env: []string{"HOME=/h"}, Dir: "/w", Mode: ReadOnly, Network: NetLoopback, ABI: 7,
			Seccomp: true, Namespaces: true, Read: []string{"/"}, Deny: []string{"/h/.ssh", "/h/a b"}, AllowRead: []string{"/h/.ssh/known_hosts"},
			Write: []string{"/w", "/t"}, Devices: []string{"/dev/null"}, Protected: []string{"/w/.git/hooks"},
			TmpDir: "/t", UnixConnect: true, AgentPid: 42, AgentPgid: -1, Probe: false}},
		{"a probe", Policy{Probe: true, Mode: WorkspaceWrite, Read: []string{"/"}}},
		{"newlines and equals signs are values", Policy{Path: "/p", Args: []string{"p", "a\nb=c"}, Dir: "/w=x"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := c.p.Encode()
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodePolicy(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, c.p) {
				t.Fatalf("got %+v\nwant %+v", *got, c.p)
			}
		})
	}
}

func TestDecodePolicyRefuses(t *testing.T) {
	cases := []struct {
		name, in, err string
	}{
		{"no command", "mode=1\x00", "names no command"},
		{"an unknown item", "path=/x\x00arg=x\x00nope=1\x00", "unknown item"},
		{"an item without its end", "path=/x", "without its end"},
		{"an item without a name", "path\x00", "without a name"},
		{"a number that is not", "path=/x\x00arg=x\x00abi=seven\x00", "not a number"},
		{"a flag that is not", "path=/x\x00arg=x\x00seccomp=yes\x00", "not a flag"},
		{"twice", "path=/x\x00path=/y\x00arg=x\x00", "given twice"},
		{"a mode that cannot be confined", "path=/x\x00arg=x\x00mode=2\x00", "cannot be confined"},
		{"too large", strings.Repeat("x", maxPolicy+1), "too large"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodePolicy([]byte(c.in))
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want %q", err, c.err)
			}
		})
	}
	if _, err := (&Policy{Path: "/x", Args: []string{"a\x00b"}}).Encode(); err == nil {
		t.Fatal("a NUL was encoded")
	}
}

func TestStatusRoundTrip(t *testing.T) {
	for _, st := range []Status{{Stage: "landlock", Errno: 22, Msg: "landlock_restrict_self: invalid argument"}, {OK: true}, {}} {
		got, err := DecodeStatus(st.Encode())
		if err != nil || got != st {
			t.Fatalf("%+v: %+v %v", st, got, err)
		}
	}
}

func FuzzDecodePolicy(f *testing.F) {
	seed, _ := (&Policy{Path: "/bin/sh", Args: []string{"sh"}, Env: []string{"A=1"}, Dir: "/w", Read: []string{"/"}, ABI: 5, Seccomp: true}).Encode()
	f.Add(seed)
	f.Add([]byte("path=/x\x00arg=x\x00"))
	f.Add([]byte("=\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodePolicy(data)
		if err != nil {
			return
		}
		b, err := p.Encode()
		if err != nil {
			t.Fatalf("a decoded policy does not encode: %v", err)
		}
		q, err := DecodePolicy(b)
		if err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip: %+v / %+v %v", p, q, err)
		}
	})
}

// chunkReader returns its data a few bytes a read, then err.
type chunkReader struct {
	data []byte
	n    int
	err  error
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, c.err
	}
	n := copy(p, c.data[:min(len(c.data), c.n)])
	c.data = c.data[n:]
	return n, nil
}

// TestReadPolicy: the policy is read whole however the pipe hands it
// over, at most one byte past maxPolicy, and a read error is returned.
func TestReadPolicy(t *testing.T) {
	big := bytes.Repeat([]byte("x"), maxPolicy+100)
	for _, tc := range []struct {
		name    string
		data    []byte
		chunk   int
		err     error
		wantLen int
		wantErr bool
	}{
		{"empty", nil, 1, io.EOF, 0, false},
		{"one read", []byte("path=/bin/true\x00"), 1 << 20, io.EOF, 15, false},
		{"a byte a read", []byte("path=/bin/true\x00"), 1, io.EOF, 15, false},
		{"larger than the first buffer", big[:40<<10], 4096, io.EOF, 40 << 10, false},
		{"exactly the bound", big[:maxPolicy], 1 << 20, io.EOF, maxPolicy, false},
		{"past the bound", big, 1 << 20, io.EOF, maxPolicy + 1, false},
		{"an error", []byte("path="), 2, errors.New("broken"), 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readPolicy(&chunkReader{data: tc.data, n: tc.chunk, err: tc.err})
			if (err != nil) != tc.wantErr || len(got) != tc.wantLen {
				t.Fatalf("len %d, err %v; want len %d, error %v", len(got), err, tc.wantLen, tc.wantErr)
			}
			if err == nil && !bytes.Equal(got, tc.data[:tc.wantLen]) {
				t.Fatal("the bytes differ")
			}
		})
	}
}
