package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// pipePair returns two connected Streams over io.Pipe (in-memory stdio).
func pipePair() (a, b Stream) {
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	return NewStream(ar, aw, ReaderOptions{}), NewStream(br, bw, ReaderOptions{})
}

func echoHandler() Handler {
	return HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
		switch m.Method {
		case "echo":
			return m.Params, nil
		case "fail":
			return nil, &Error{Code: 42, Message: "failed", Data: json.RawMessage(`{"x":1}`)}
		case "panicky":
			return nil, errors.New("secret internal detail")
		case "array":
			return []int{1}, nil
		case "block":
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return nil, &Error{Code: CodeMethodNotFound, Message: "no"}
	})
}

func TestConnCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := pipePair()
		client := NewConn(a, ConnOptions{})
		server := NewConn(b, ConnOptions{Handler: echoHandler()})
		defer server.Close()
		defer client.Close()
		ctx := context.Background()

		res, err := client.Call(ctx, "echo", map[string]int{"n": 7})
		if err != nil || string(res) != `{"n":7}` {
			t.Fatalf("echo = %s, %v", res, err)
		}
		_, err = client.Call(ctx, "fail", nil)
		var e *Error
		if !errors.As(err, &e) || e.Code != 42 || string(e.Data) != `{"x":1}` {
			t.Fatalf("fail: err = %v", err)
		}
		_, err = client.Call(ctx, "panicky", nil)
		if !errors.As(err, &e) || e.Code != CodeInternalError || strings.Contains(e.Message, "secret") {
			t.Fatalf("internal error leaked or wrong: %v", err)
		}
		_, err = client.Call(ctx, "array", nil)
		if !errors.As(err, &e) || e.Code != CodeInternalError {
			t.Fatalf("non-object result: %v", err)
		}
		// The client has no handler: requests to it get "method not found".
		_, err = server.Call(ctx, "anything", nil)
		if !errors.As(err, &e) || e.Code != CodeMethodNotFound {
			t.Fatalf("no handler: %v", err)
		}
	})
}

func TestConnConcurrentCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := pipePair()
		client := NewConn(a, ConnOptions{})
		server := NewConn(b, ConnOptions{Handler: echoHandler(), MaxConcurrent: 3})
		defer server.Close()
		defer client.Close()
		var wg sync.WaitGroup
		for i := 0; i < 40; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				res, err := client.Call(context.Background(), "echo", map[string]int{"i": i})
				var got map[string]int
				if err != nil || json.Unmarshal(res, &got) != nil || got["i"] != i {
					t.Errorf("call %d: %s, %v", i, res, err)
				}
			}(i)
		}
		wg.Wait()
	})
}

func TestConnNotificationsInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := pipePair()
		var mu sync.Mutex
		var seen []string
		done := make(chan struct{})
		client := NewConn(a, ConnOptions{Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
			mu.Lock()
			seen = append(seen, string(m.Params))
			if len(seen) == 20 {
				close(done)
			}
			mu.Unlock()
			return nil, nil
		})})
		server := NewConn(b, ConnOptions{})
		defer server.Close()
		defer client.Close()
		for i := 0; i < 20; i++ {
			if err := server.Notify(context.Background(), "n", map[string]int{"i": i}); err != nil {
				t.Fatal(err)
			}
		}
		<-done
		for i, s := range seen {
			if want, _ := json.Marshal(map[string]int{"i": i}); s != string(want) {
				t.Fatalf("notification %d = %s", i, s)
			}
		}
	})
}

func TestConnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := pipePair()
		var cancelled atomic.Value
		client := NewConn(a, ConnOptions{OnCancel: func(id ID, method string) { cancelled.Store(id.String() + " " + method) }})
		server := NewConn(b, ConnOptions{Handler: echoHandler()})
		defer server.Close()
		defer client.Close()

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		_, err := client.Call(ctx, "block", nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("returned after %v", d)
		}
		if got := cancelled.Load(); got != "1 block" {
			t.Errorf("OnCancel got %v", got)
		}
		// Cause is preserved for callers that tell their own timeout apart.
		cause := errors.New("my timeout")
		ctx2, cancel2 := context.WithTimeoutCause(context.Background(), time.Second, cause)
		defer cancel2()
		if _, err := client.Call(ctx2, "block", nil); !errors.Is(err, cause) {
			t.Fatalf("err = %v, want the cause", err)
		}
	})
}

func TestConnPeerGoneFailsPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := pipePair()
		client := NewConn(a, ConnOptions{})
		server := NewConn(b, ConnOptions{Handler: echoHandler()})
		errc := make(chan error, 1)
		go func() {
			_, err := client.Call(context.Background(), "block", nil)
			errc <- err
		}()
		synctest.Wait()
		server.Close()
		err := <-errc
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("err = %v, want ErrClosed", err)
		}
		<-client.Done()
		if !errors.Is(client.Err(), ErrClosed) {
			t.Fatalf("Err = %v", client.Err())
		}
		if _, err := client.Call(context.Background(), "echo", nil); !errors.Is(err, ErrClosed) {
			t.Fatalf("call after close: %v", err)
		}
		if err := client.Notify(context.Background(), "n", nil); !errors.Is(err, ErrClosed) {
			t.Fatalf("notify after close: %v", err)
		}
		client.Close()
		client.Close() // idempotent
	})
}

func TestConnCloseUnblocksCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := pipePair()
		client := NewConn(a, ConnOptions{})
		server := NewConn(b, ConnOptions{Handler: echoHandler()})
		defer server.Close()
		errc := make(chan error, 1)
		go func() {
			_, err := client.Call(context.Background(), "block", nil)
			errc <- err
		}()
		synctest.Wait()
		client.Close()
		if err := <-errc; !errors.Is(err, ErrClosed) {
			t.Fatalf("err = %v", err)
		}
	})
}

// rawPeer gives a test the far end of a Conn as raw lines.
type rawPeer struct {
	r *Reader
	w io.WriteCloser
}

func newRawPeer() (Stream, *rawPeer) {
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	return NewStream(ar, aw, ReaderOptions{MaxMessage: 1000}), &rawPeer{r: NewReader(br, ReaderOptions{}), w: bw}
}

func (p *rawPeer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.w, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func TestConnRefusedMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, peer := newRawPeer()
		var errs []error
		var mu sync.Mutex
		client := NewConn(s, ConnOptions{OnError: func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }})
		defer client.Close()

		// An invalid request with a readable id is answered with an error.
		peer.send(t, `{"jsonrpc":"1.0","id":"q","method":"m"}`)
		m, err := peer.r.Read()
		if err != nil || m.Error == nil || m.Error.Code != CodeInvalidRequest || m.ID != StringID("q") {
			t.Fatalf("answer = %+v, %v", m, err)
		}
		// Noise on stdout is reported and skipped.
		peer.send(t, `hello from the server`)
		// A malformed response fails the call it answered.
		errc := make(chan error, 1)
		go func() {
			_, err := client.Call(context.Background(), "x", nil)
			errc <- err
		}()
		req, err := peer.r.Read()
		if err != nil {
			t.Fatal(err)
		}
		id, _ := req.ID.Int64()
		peer.send(t, `{"jsonrpc":"2.0","id":`+itoa(id)+`,"result":[]}`)
		if err := <-errc; !errors.Is(err, ErrInvalid) {
			t.Fatalf("call err = %v, want ErrInvalid", err)
		}
		// A response nobody waits for is reported.
		peer.send(t, `{"jsonrpc":"2.0","id":999,"result":{}}`)
		synctest.Wait()
		mu.Lock()
		n := len(errs)
		mu.Unlock()
		if n != 4 {
			t.Fatalf("OnError got %d reports: %v", n, errs)
		}
		// A line over the bound ends the connection with a clear error.
		go func() {
			_, err := client.Call(context.Background(), "y", nil)
			errc <- err
		}()
		if _, err := peer.r.Read(); err != nil {
			t.Fatal(err)
		}
		peer.send(t, strings.Repeat("x", 2000))
		if err := <-errc; !errors.Is(err, ErrTooLarge) || !errors.Is(err, ErrClosed) {
			t.Fatalf("err = %v, want ErrTooLarge and ErrClosed", err)
		}
		peer.w.Close()
	})
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestConnFail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, peer := newRawPeer()
		client := NewConn(s, ConnOptions{})
		defer client.Close()
		lost := errors.New("stream lost")
		errc := make(chan error, 1)
		go func() {
			_, err := client.Call(context.Background(), "x", nil)
			errc <- err
		}()
		req, _ := peer.r.Read()
		if !client.Fail(req.ID, lost) {
			t.Fatal("Fail found no pending call")
		}
		if err := <-errc; !errors.Is(err, lost) {
			t.Fatalf("err = %v", err)
		}
		if client.Fail(req.ID, lost) {
			t.Fatal("Fail twice")
		}
		peer.w.Close()
	})
}

func TestConnCancelRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := pipePair()
		client := NewConn(a, ConnOptions{})
		var server *Conn
		server = NewConn(b, ConnOptions{Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
			if m.Kind() == KindNotification {
				var p struct {
					RequestID ID `json:"requestId"`
				}
				json.Unmarshal(m.Params, &p) //nolint:errcheck // test
				server.CancelRequest(p.RequestID)
				return nil, nil
			}
			<-ctx.Done()
			return nil, &Error{Code: -1, Message: "stopped"}
		})})
		defer server.Close()
		defer client.Close()
		errc := make(chan error, 1)
		id := client.NextID()
		go func() {
			m, _ := NewRequest(id, "block", nil)
			_, err := client.CallMessage(context.Background(), m)
			errc <- err
		}()
		synctest.Wait()
		if server.CancelRequest(Int64ID(999)) {
			t.Error("cancelled an unknown request")
		}
		if err := client.Notify(context.Background(), "cancel", map[string]ID{"requestId": id}); err != nil {
			t.Fatal(err)
		}
		var e *Error
		if err := <-errc; !errors.As(err, &e) || e.Message != "stopped" {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestConnCancelRightBehind: a cancellation read right behind its request
// (one write, before the handler's goroutine has started) still cancels
// it: the request is registered before the next message is read.
func TestConnCancelRightBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, peer := newRawPeer()
		started := make(chan struct{})
		var server *Conn
		server = NewConn(s, ConnOptions{Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
			if m.Kind() == KindNotification {
				var p struct {
					RequestID ID `json:"requestId"`
				}
				json.Unmarshal(m.Params, &p) //nolint:errcheck // test
				if !server.CancelRequest(p.RequestID) {
					t.Error("the request was not registered when its cancellation arrived")
				}
				return nil, nil
			}
			close(started)
			<-ctx.Done()
			return nil, &Error{Code: -1, Message: "stopped"}
		})})
		defer server.Close()
		io.WriteString(peer.w, `{"jsonrpc":"2.0","id":7,"method":"block"}`+"\n"+`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`+"\n")
		<-started
		m, err := peer.r.Read()
		if err != nil || m.Error == nil || m.Error.Message != "stopped" {
			t.Fatalf("%+v %v", m, err)
		}
	})
}
