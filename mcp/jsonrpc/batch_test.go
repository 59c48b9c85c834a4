package jsonrpc

import (
	"bufio"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// batchCases is shared by the table test and the fuzz seeds. kinds lists
// each element's outcome: a message kind, or "err:ID" for an element
// refused with that id.
var batchCases = []struct {
	name  string
	in    string
	err   error // of the whole batch
	kinds []string
}{
	{"requests and a notification", `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":"x","method":"b","params":{}}]`, nil,
		[]string{"request:1", "notification:null", `request:"x"`}},
	{"one request", `[{"jsonrpc":"2.0","id":1,"method":"a"}]`, nil, []string{"request:1"}},
	{"responses", `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m"}}]`, nil,
		[]string{"response:1", "response:2"}},
	{"white space", " [ {\"jsonrpc\":\"2.0\",\"method\":\"n\"} ,\n{\"jsonrpc\":\"2.0\",\"method\":\"m\"} ] ", nil,
		[]string{"notification:null", "notification:null"}},
	{"invalid element with an id", `[{"jsonrpc":"1.0","id":4,"method":"a"},{"jsonrpc":"2.0","id":5,"method":"b"}]`, nil,
		[]string{"err:4", "request:5"}},
	{"element not an object", `[1,{"jsonrpc":"2.0","method":"n"}]`, nil, []string{"err:null", "notification:null"}},
	{"nested batch", `[[{"jsonrpc":"2.0","method":"n"}]]`, nil, []string{"err:null"}},
	{"empty batch", `[]`, ErrInvalid, nil},
	{"not an array", `{"jsonrpc":"2.0","method":"n"}`, ErrInvalid, nil},
	{"malformed", `[{"jsonrpc":"2.0","method":"n"},`, ErrParse, nil},
	{"trailing data", `[{"jsonrpc":"2.0","method":"n"}] []`, ErrParse, nil},
	{"duplicate key in an element", `[{"jsonrpc":"2.0","method":"n","method":"m"}]`, ErrParse, nil},
}

func TestDecodeBatch(t *testing.T) {
	for _, c := range batchCases {
		t.Run(c.name, func(t *testing.T) {
			items, err := DecodeBatch([]byte(c.in), DecodeOptions{})
			if c.err != nil {
				var de *DecodeError
				if !errors.Is(err, c.err) || !errors.As(err, &de) {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, it := range items {
				var de *DecodeError
				switch {
				case it.Err != nil && errors.As(it.Err, &de):
					got = append(got, "err:"+de.ID.String())
				case it.Err != nil:
					t.Fatalf("element error %T", it.Err)
				default:
					got = append(got, it.Msg.Kind().String()+":"+it.Msg.ID.String())
				}
			}
			if !slices.Equal(got, c.kinds) {
				t.Errorf("elements %q, want %q", got, c.kinds)
			}
		})
	}
	// A batch is refused by Decode with the array attached, for the
	// receiver to split when its revision allows batches.
	in := []byte(batchCases[0].in)
	_, err := Decode(in)
	var de *DecodeError
	if !errors.As(err, &de) || !errors.Is(err, ErrBatch) || string(de.Batch) != string(in) {
		t.Fatalf("Decode of a batch: %v", err)
	}
	if _, err := DecodeBatch([]byte(`[`+strings.Repeat(" ", 100)+`]`), DecodeOptions{MaxMessage: 50}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized batch: %v", err)
	}
}

func FuzzDecodeBatch(f *testing.F) {
	for _, c := range batchCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		items, err := DecodeBatch(data, DecodeOptions{MaxMessage: 1 << 16, MaxDepth: 32})
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError", err)
			}
			return
		}
		if len(items) == 0 {
			t.Fatal("an accepted batch without elements")
		}
		var ms []*Message
		for _, it := range items {
			if (it.Msg == nil) == (it.Err == nil) {
				t.Fatalf("element with message %v and error %v", it.Msg, it.Err)
			}
			if it.Msg != nil {
				ms = append(ms, it.Msg)
			}
		}
		if len(ms) == 0 {
			return
		}
		// The valid elements re-encode to a batch that splits the same way.
		enc, err := AppendBatch(nil, ms)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeBatch(enc, DecodeOptions{})
		if err != nil || len(again) != len(ms) {
			t.Fatalf("own batch %q: %d elements, %v", enc, len(again), err)
		}
		for i := range ms {
			if again[i].Err != nil || !sameMessage(ms[i], again[i].Msg) {
				t.Fatalf("element %d changed: %q", i, enc)
			}
		}
	})
}

// batchPeer is the far end of a stream under test: it writes lines and
// reads what comes back, one line at a time.
type batchPeer struct {
	w     io.Writer
	lines *bufio.Scanner
}

func newBatchPair(allow *atomic.Bool) (Stream, *batchPeer) {
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	st := NewBatchStream(NewStream(ar, aw, ReaderOptions{}), BatchOptions{Allow: allow.Load})
	return st, &batchPeer{w: bw, lines: bufio.NewScanner(br)}
}

func (p *batchPeer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.w, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (p *batchPeer) next(t *testing.T) string {
	t.Helper()
	if !p.lines.Scan() {
		t.Fatal("the stream wrote nothing more")
	}
	return p.lines.Text()
}

// TestBatchStreamAnswersABatchWithOneArray: with batches allowed, the
// messages of a batch are read one at a time, and the responses to its
// requests go out together as one array once the last is written; bad
// elements and reused ids are answered in that array; a batch of
// notifications gets no answer.
func TestBatchStreamAnswersABatchWithOneArray(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var allow atomic.Bool
		allow.Store(true)
		st, peer := newBatchPair(&allow)
		conn := NewConn(st, ConnOptions{Handler: echoHandler()})
		defer conn.Close()

		peer.send(t, `[{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}},{"jsonrpc":"2.0","method":"note"},{"jsonrpc":"2.0","id":2,"method":"fail"},{"jsonrpc":"1.0","id":3,"method":"echo"},{"jsonrpc":"2.0","id":1,"method":"echo"}]`)
		got := peer.next(t)
		items, err := DecodeBatch([]byte(got), DecodeOptions{})
		if err != nil {
			t.Fatalf("answer %q is not a batch: %v", got, err)
		}
		byID := map[string]*Message{}
		for _, it := range items {
			if it.Err != nil || it.Msg.Kind() != KindResponse {
				t.Fatalf("answer element %+v", it)
			}
			byID[it.Msg.ID.String()] = it.Msg
		}
		if len(items) != 4 || byID["2"].Error.Message != "failed" || byID["3"].Error.Code != CodeInvalidRequest {
			t.Fatalf("answer %s", got)
		}
		// Request 1 is answered once with its result; its reused id in the
		// same batch gets an error (the order within the array is free).
		var results, dups int
		for _, it := range items {
			if it.Msg.ID.String() == "1" {
				if it.Msg.Error != nil && it.Msg.Error.Code == CodeInvalidRequest {
					dups++
				} else if string(it.Msg.Result) == `{"a":1}` {
					results++
				}
			}
		}
		if results != 1 || dups != 1 {
			t.Fatalf("answers to id 1 in %s", got)
		}

		// Notifications only: nothing comes back; the next request is
		// answered alone, as a plain message.
		peer.send(t, `[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]`)
		peer.send(t, `{"jsonrpc":"2.0","id":9,"method":"echo","params":{}}`)
		if got := peer.next(t); got != `{"jsonrpc":"2.0","id":9,"result":{}}` {
			t.Fatalf("after a batch of notifications: %s", got)
		}
		// A batch of only invalid elements is answered at once.
		peer.send(t, `[1,2]`)
		if got := peer.next(t); got != `[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"jsonrpc: invalid message: a message must be a JSON object"}},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"jsonrpc: invalid message: a message must be a JSON object"}}]` {
			t.Fatalf("invalid elements: %s", got)
		}
	})
}

// TestBatchStreamRefusesBatchesWhenNotAllowed: without the revision that
// has batches, Read returns the batch as ErrBatch, and the connection
// answers nothing for it (its elements are never run).
func TestBatchStreamRefusesBatchesWhenNotAllowed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var allow atomic.Bool
		st, peer := newBatchPair(&allow)
		var refused []error
		var ran []string
		conn := NewConn(st, ConnOptions{
			Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
				ran = append(ran, m.ID.String())
				return struct{}{}, nil
			}),
			OnError: func(err error) { refused = append(refused, err) },
		})
		defer conn.Close()
		peer.send(t, `[{"jsonrpc":"2.0","id":1,"method":"echo"}]`)
		peer.send(t, `{"jsonrpc":"2.0","id":2,"method":"echo"}`)
		if got := peer.next(t); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
			t.Fatalf("got %s", got)
		}
		synctest.Wait()
		if len(refused) != 1 || !errors.Is(refused[0], ErrBatch) || !slices.Equal(ran, []string{"2"}) {
			t.Fatalf("refused %v, ran %v", refused, ran)
		}
	})
}
