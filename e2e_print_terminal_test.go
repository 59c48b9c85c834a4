package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"agent/internal/fakemodel"
)

// hostile is model text that would drive a terminal: colours, a window
// title (OSC 0), a clipboard write (OSC 52), a cursor move, an 8-bit CSI
// (U+009B) and a bidi override.
const hostile = "plain \x1b[31mred\x1b[0m \x1b]0;owned\x07 \x1b]52;c;ZXZpbA==\x07 \x1b[2J\x1b[H \u009b31m \u202eevil"

// TestE2EPrintModeSanitisesATerminalOnly: print mode's answer reaches a
// terminal without control sequences, and a pipe byte for byte.
func TestE2EPrintModeSanitisesATerminalOnly(t *testing.T) {
	t.Run("piped", func(t *testing.T) {
		s, _ := printSandbox(t, fakemodel.Reply{Text: hostile})
		r := s.run("", "-p", "hi")
		if r.Code != 0 || r.Stdout != hostile+"\n" {
			t.Fatalf("piped output changed: %q", r.Stdout)
		}
	})
	for _, format := range []string{"text", "json", "stream-json"} {
		t.Run("terminal "+format, func(t *testing.T) {
			s, _ := printSandbox(t, fakemodel.Reply{Text: hostile})
			m, slave := openPTY(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, agentBinary(t), "-p", "--output-format", format, "hi")
			cmd.Dir = s.Work
			cmd.Env = []string{"HOME=" + s.Home, "PATH=" + os.Getenv("PATH"), "TERM=xterm"}
			cmd.Stdin = strings.NewReader("")
			cmd.Stdout = slave
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			slave.Close()
			var out bytes.Buffer
			copied := make(chan struct{})
			go func() { io.Copy(&out, m); close(copied) }()
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%v: %s", err, stderr.String())
			}
			<-copied // the master reads EIO once the last writer has gone
			got := out.String()
			for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e"} {
				if strings.Contains(got, bad) {
					t.Fatalf("%q reached the terminal: %q", bad, got)
				}
			}
			if !strings.Contains(got, "plain") || !strings.Contains(got, "red") || !strings.Contains(got, "evil") {
				t.Fatalf("the text itself is gone: %q", got)
			}
		})
	}
}

// TestE2EOutsideTextOnStderrCannotDriveTheTerminal: text from outside that
// print mode writes to stderr (a server's error message, a failed tool's
// result naming the model's arguments) keeps no control sequence and no
// bidi override, piped or not.
func TestE2EOutsideTextOnStderrCannotDriveTheTerminal(t *testing.T) {
	check := func(t *testing.T, stderr string) {
		t.Helper()
		for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e"} {
			if strings.Contains(stderr, bad) {
				t.Fatalf("%q reached stderr: %q", bad, stderr)
			}
		}
		if !strings.Contains(stderr, "plain") || !strings.Contains(stderr, "evil") {
			t.Fatalf("the text itself is gone: %q", stderr)
		}
	}
	t.Run("a server's error message", func(t *testing.T) {
		msg, _ := json.Marshal(hostile)
		base, _ := countedAPI(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error": {"message": `+string(msg)+`, "type": "invalid_request_error"}}`)
		})
		r := printLocal(t, base, 0)
		if r.Code != 1 {
			t.Fatalf("%+v", r)
		}
		check(t, r.Stderr)
	})
	t.Run("a failed tool's result", func(t *testing.T) {
		args, _ := json.Marshal(map[string]string{"file_path": "missing " + hostile})
		s, _ := printSandbox(t, call("c1", "Read", string(args)), fakemodel.Reply{Text: "done"})
		r := s.run("", "-p", "read it")
		if r.Code != 0 || r.Stdout != "done\n" {
			t.Fatalf("%+v", r)
		}
		check(t, r.Stderr)
	})
}
