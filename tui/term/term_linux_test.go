package term

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPTY opens a pseudo-terminal pair with the standard library only:
// /dev/ptmx, unlock, and the slave's number.
func openPTY(t *testing.T) (master *os.File, slave string) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	var unlock int32
	if err := ioctl(m, syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	var n uint32
	if err := ioctl(m, syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); err != nil {
		t.Skipf("ptsname: %v", err)
	}
	return m, "/dev/pts/" + strconv.Itoa(int(n))
}

func ioctl(f *os.File, req uint, arg uintptr) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	sc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(req), arg)
	})
	if errno != 0 {
		return errno
	}
	return nil
}

func termios(t *testing.T, path string) syscall.Termios {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tio syscall.Termios
	if err := ioctl(f, syscall.TCGETS, uintptr(unsafe.Pointer(&tio))); err != nil {
		t.Fatal(err)
	}
	return tio
}

// drain collects what the TTY writes, as the terminal would receive it.
func drain(m *os.File) *bytes.Buffer {
	var b bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			m.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			n, err := m.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	<-done
	return &b
}

func TestTTYRawRestoreSizeDeadline(t *testing.T) {
	m, slave := openPTY(t)
	ws := struct{ row, col, x, y uint16 }{row: 33, col: 101}
	if err := ioctl(m, syscall.TIOCSWINSZ, uintptr(unsafe.Pointer(&ws))); err != nil {
		t.Fatal(err)
	}
	tty, err := OpenPath(slave)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	before := termios(t, slave)
	if before.Lflag&syscall.ECHO == 0 {
		t.Fatal("the pty starts without echo")
	}
	if err := tty.Raw(); err != nil {
		t.Fatal(err)
	}
	raw := termios(t, slave)
	if raw.Lflag&(syscall.ECHO|syscall.ICANON|syscall.ISIG) != 0 {
		t.Fatalf("not raw: lflag %#x", raw.Lflag)
	}
	if w, h, err := tty.Size(); err != nil || w != 101 || h != 33 {
		t.Fatalf("size %d×%d %v", w, h, err)
	}

	// A read with a deadline returns when nothing comes: the file stayed
	// in the poller (Fd was never called).
	tty.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := tty.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read without input: %v", err)
	}
	// Input arrives byte for byte in raw mode (no line buffering).
	m.Write([]byte("\x1b[A\x03"))
	tty.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 16)
	n, err := io.ReadAtLeast(tty, buf, 4)
	if err != nil || string(buf[:n]) != "\x1b[A\x03" {
		t.Fatalf("read %q %v", buf[:n], err)
	}

	tty.Enter()
	tty.EnableKitty(KittyDisambiguate)
	if err := tty.Restore(); err != nil {
		t.Fatal(err)
	}
	if err := tty.Restore(); err != nil { // idempotent
		t.Fatal(err)
	}
	after := termios(t, slave)
	if after.Lflag != before.Lflag || after.Iflag != before.Iflag || after.Oflag != before.Oflag {
		t.Fatalf("not restored: %+v vs %+v", after, before)
	}
	out := drain(m).String()
	// Modes on, then off in reverse order, exactly once.
	want := altScreenOn + pasteOn + "\x1b[>1u" + syncOff + sgrReset + cursorShow + kittyPop + pasteOff + altScreenOff
	if out != want {
		t.Fatalf("terminal received\n%q\nwant\n%q", out, want)
	}
	if err := tty.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tty.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tty.Raw(); !errors.Is(err, ErrClosed) {
		t.Fatalf("raw after close: %v", err)
	}
}

func TestCloseUnblocksReader(t *testing.T) {
	_, slave := openPTY(t)
	tty, err := OpenPath(slave)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := tty.Read(make([]byte, 1))
		done <- err
	}()
	tty.Close()
	if err := <-done; err == nil {
		t.Fatal("read after close succeeded")
	}
}

func TestResizeSignal(t *testing.T) {
	m, slave := openPTY(t)
	tty, err := OpenPath(slave)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	_ = m
	syscall.Kill(os.Getpid(), syscall.SIGWINCH)
	<-tty.Resize()
}

func TestOpenNotATerminal(t *testing.T) {
	if _, err := OpenPath("/dev/null"); err == nil {
		t.Fatal("/dev/null opened as a terminal")
	}
}
