package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"strings"
	"testing"

	"agent/internal/fakemodel"
)

func TestRunDir(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	if d := RunDir("/h", env(map[string]string{"XDG_RUNTIME_DIR": "/run/user/1"})); d != "/run/user/1/agent" {
		t.Fatal(d)
	}
	if d := RunDir("/h", env(nil)); d != "/h/.agent/run" {
		t.Fatal(d)
	}
	// A relative XDG_RUNTIME_DIR is ignored (the XDG base directory rule).
	if d := RunDir("/h", env(map[string]string{"XDG_RUNTIME_DIR": "rel"})); d != "/h/.agent/run" {
		t.Fatal(d)
	}
}

// TestBackgroundControl drives the control protocol: info, submit with and
// without waiting, extension ops, bad requests, an oversize line, stop,
// and Close removing the socket.
func TestBackgroundControl(t *testing.T) {
	h := newHarness(t, SessionOptions{}, fakemodel.Reply{Text: "one"}, fakemodel.Reply{Text: "two"})
	dir := t.TempDir() + "/run"
	bg, err := ServeBackground(BackgroundOptions{Dir: dir, Name: "n", Session: h.sess, Workspace: "/w",
		Handlers: map[string]ControlHandler{
			"echo": func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) { return args, nil },
			"fail": func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
				return nil, errors.New("it failed")
			},
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer bg.Close()
	ctx := context.Background()
	id := h.sess.ID()
	call := func(req ControlRequest) ControlResponse {
		t.Helper()
		resp, err := ControlCall(ctx, dir, id, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if r := call(ControlRequest{Op: "info"}); !r.OK || r.Info.ID != id || r.Info.Name != "n" || r.Info.Workspace != "/w" || r.Info.PID != os.Getpid() {
		t.Fatalf("%+v", r)
	}
	if r := call(ControlRequest{Op: "submit", Prompt: "a", Wait: true}); !r.OK || r.Text != "one" || r.Status != StatusComplete {
		t.Fatalf("%+v", r)
	}
	if r := call(ControlRequest{Op: "submit", Prompt: "  "}); r.OK {
		t.Fatalf("%+v", r)
	}
	if r := call(ControlRequest{Op: "echo", Args: json.RawMessage(`{"x":1}`)}); !r.OK || string(r.Data) != `{"x":1}` {
		t.Fatalf("%+v", r)
	}
	if r := call(ControlRequest{Op: "fail"}); r.OK || r.Error != "it failed" {
		t.Fatalf("%+v", r)
	}
	list, err := ListBackground(ctx, dir)
	if err != nil || len(list) != 1 || list[0].ID != id {
		t.Fatalf("%+v %v", list, err)
	}

	// Several requests on one connection; then an oversize line.
	c, err := net.Dial("unix", SocketPath(dir, id))
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	for i := 0; i < 3; i++ {
		c.Write([]byte(`{"op":"info"}` + "\n"))
		if line, err := r.ReadString('\n'); err != nil || !strings.Contains(line, `"ok":true`) {
			t.Fatalf("%q %v", line, err)
		}
	}
	go c.Write([]byte(strings.Repeat("x", maxControlLine+10) + "\n"))
	if line, _ := r.ReadString('\n'); !strings.Contains(line, "too large") {
		t.Fatalf("%q", line)
	}
	c.Close()

	if r := call(ControlRequest{Op: "stop"}); !r.OK {
		t.Fatalf("%+v", r)
	}
	select {
	case <-bg.Stopped():
	default:
		t.Fatal("Stopped not closed")
	}
	call(ControlRequest{Op: "stop"}) // twice is fine
	bg.Close()
	bg.Close()
	if _, err := os.Stat(SocketPath(dir, id)); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
	if _, err := ControlCall(ctx, dir, id, ControlRequest{Op: "info"}); !errors.Is(err, ErrNoBackground) {
		t.Fatalf("err = %v", err)
	}
	if _, err := ControlCall(ctx, dir, "../../etc", ControlRequest{Op: "info"}); !errors.Is(err, ErrNoBackground) {
		t.Fatalf("err = %v", err)
	}
}
