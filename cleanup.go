package main

// Last-resort removal of a token file (it is removed on every exit path;
// docs/design.md, "A token file is removed however the process ends"). The
// process removes it itself on a normal exit, on SIGINT, SIGTERM and SIGHUP
// (a closed terminal), and before it lets any other terminating signal take
// its default course (main.go). What Go cannot let a process clean up after
// (SIGKILL, a fatal runtime error, a panic in a goroutine other than
// main's) is covered by a cleanup child: a re-execution of this binary, in
// its own session, that holds the read end of a pipe whose write end only
// the parent has. When the pipe ends without the word "done", the parent
// died without removing the file, and the child removes it, if it is still
// the same file. This is the pattern runtime/debug.SetCrashOutput documents
// for crash monitors.

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
)

// cleanupChildEnv marks the cleanup child; main dispatches to it before
// anything else runs.
const cleanupChildEnv = "AGENT_CLEANUP_CHILD"

// cleanupOrder is the first line the cleanup child reads: the file and
// its identity, so that a file created later at the same path is never
// removed.
type cleanupOrder struct {
	Path string `json:"path"`
	ID   fileID `json:"id"`
}

// fileID identifies one file: device and inode, and the inode's change
// time, because a file system may give a new file the inode number of one
// just removed (tmpfs does at once).
type fileID struct {
	Dev, Ino       uint64
	Ctime, CtimeNs int64
}

// removeIfSame removes path when it is still the file id names.
func removeIfSame(path string, id fileID) {
	if fi, err := os.Lstat(path); err == nil {
		if cur, ok := idOf(fi); ok && cur == id {
			os.Remove(path)
		}
	}
}

// startCleanupChild starts the child for the file at path, whose identity
// is st. The returned function tells the child that the file has been
// dealt with (call it after removing the file); it is idempotent.
func startCleanupChild(path string, id fileID) (done func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	order, _ := json.Marshal(cleanupOrder{Path: path, ID: id})
	pr, pw, err := os.Pipe() // close-on-exec: no other child inherits the write end
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{cleanupChildEnv + "=1"}
	cmd.Dir = "/" // keep no workspace busy
	cmd.Stdin = pr
	// Its own session: a closed terminal or a Ctrl-C does not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	pr.Close()
	go cmd.Wait() //nolint:errcheck // reaps the child whenever it ends
	if _, err := pw.Write(append(order, '\n')); err != nil {
		pw.Close()
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			io.WriteString(pw, "done\n") //nolint:errcheck // a child already gone has nothing to do
			pw.Close()
		})
	}, nil
}

// runCleanupChild is the cleanup child: it waits for its parent's pipe to
// end and removes the file unless told "done". It ignores the signals of
// a terminal or a process group, so it outlives whatever ends its parent.
func runCleanupChild() int {
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGPIPE)
	in := bufio.NewReader(io.LimitReader(os.Stdin, 1<<16))
	line, err := in.ReadBytes('\n')
	var o cleanupOrder
	if err != nil || json.Unmarshal(line, &o) != nil || o.Path == "" {
		return 2
	}
	word, _ := in.ReadString('\n')
	if word == "done\n" {
		return 0
	}
	removeIfSame(o.Path, o.ID)
	return 0
}
