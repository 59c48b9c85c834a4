package jsonrpc

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
)

func TestOversizedID(t *testing.T) {
	big := strings.Repeat("x", 3*oversizeWindow)
	tests := []struct {
		name     string
		line     string
		want     ID
		response bool
	}{
		{name: "id first", line: `{"jsonrpc":"2.0","id":7,"result":{"text":"` + big + `"}}`, want: Int64ID(7), response: true},
		{name: "result first, id last", line: `{"result":{"contents":[{"text":"` + big + `"}]},"jsonrpc":"2.0","id":"r-1"}`, want: StringID("r-1"), response: true},
		{name: "id last after a nested id", line: `{"result":{"id":5,"t":"` + big + `","n":{"id":6}},"jsonrpc":"2.0","id":9}`, want: Int64ID(9), response: true},
		{name: "escaped id in a string is no key", line: `{"result":{"t":"` + big + `\",\"id\":4}"}}`, want: ID{}, response: true},
		{name: "request", line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"a":"` + big + `"}}`, want: Int64ID(3), response: false},
		{name: "error response", line: `{"jsonrpc":"2.0","error":{"code":1,"message":"` + big + `"},"id":2}`, want: Int64ID(2), response: true},
		{name: "not an object", line: `[` + big + `]`, want: ID{}},
		{name: "white space around", line: ` { "result" : "` + big + `" , "id" : 11 } `, want: Int64ID(11), response: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			de := tooLarge(len(tc.line)-1, []byte(tc.line), []byte(tc.line))
			if de.ID != tc.want {
				t.Fatalf("id = %v, want %v", de.ID, tc.want)
			}
			if tc.want.IsValid() && de.Response != tc.response {
				t.Fatalf("response = %v, want %v", de.Response, tc.response)
			}
		})
	}
}

// TestReaderOversizedKeepsID: a line over the bound, read in pieces
// through the accumulator and the skip, still yields its trailing id.
func TestReaderOversizedKeepsID(t *testing.T) {
	line := `{"result":{"text":"` + strings.Repeat("a", 300<<10) + `"},"jsonrpc":"2.0","id":12}` + "\n" + `{"jsonrpc":"2.0","id":13,"result":{}}` + "\n"
	r := NewReader(bufio.NewReaderSize(strings.NewReader(line), 4096), ReaderOptions{MaxMessage: 100 << 10})
	_, err := r.Read()
	var de *DecodeError
	if !errors.As(err, &de) || !errors.Is(err, ErrTooLarge) || de.ID != Int64ID(12) || !de.Response {
		t.Fatalf("first read: %#v", err)
	}
	m, err := r.Read()
	if err != nil || m.ID != Int64ID(13) {
		t.Fatalf("next message: %v, %v", m, err)
	}
}

// TestConnOversizedResponseFailsOneCall: the call a too-large response
// answered fails with ErrTooLarge; the connection stays up for the next.
func TestConnOversizedResponseFailsOneCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ar, bw := io.Pipe()
		br, aw := io.Pipe()
		client := NewConn(NewStream(ar, aw, ReaderOptions{MaxMessage: 64 << 10}), ConnOptions{})
		server := NewConn(NewStream(br, bw, ReaderOptions{}), ConnOptions{Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
			if m.Method == "big" {
				return map[string]string{"text": strings.Repeat("b", 1<<20)}, nil
			}
			return map[string]int{"ok": 1}, nil
		})})
		defer server.Close()
		defer client.Close()
		_, err := client.Call(context.Background(), "big", nil)
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("big: %v", err)
		}
		res, err := client.Call(context.Background(), "small", nil)
		if err != nil || string(res) != `{"ok":1}` {
			t.Fatalf("after the oversized answer: %s, %v", res, err)
		}
	})
}

// FuzzOversizedID: any line's ends give an id or none, never a panic; an
// id found in a line that decodes is that message's id.
func FuzzOversizedID(f *testing.F) {
	f.Add([]byte(`{"result":{},"jsonrpc":"2.0","id":1}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","method":"x"}`))
	f.Add([]byte(`{"a":"\"id\":3}"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		de := tooLarge(len(line), line, line)
		if m, err := Decode(line); err == nil && de.ID.IsValid() && m.ID.IsValid() && m.ID != de.ID {
			t.Fatalf("id %v from the ends of a message whose id is %v", de.ID, m.ID)
		}
	})
}
