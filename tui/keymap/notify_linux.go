package keymap

import (
	"os"
	"syscall"
)

// dirEvents reports changes in dir through inotify, so an idle UI does
// not wake to poll the overrides file (issue target: no CPU while idle).
// Each read of the returned channel means "something in dir changed";
// the caller looks at the file. ok is false when inotify is not
// available or dir cannot be watched (it does not exist yet): the caller
// polls instead. stop ends the watch; the channel closes after it, and
// also when the directory goes away.
func dirEvents(dir string) (events <-chan struct{}, stop func(), ok bool) {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil, nil, false
	}
	const mask = syscall.IN_CLOSE_WRITE | syscall.IN_MODIFY | syscall.IN_MOVED_TO | syscall.IN_MOVED_FROM |
		syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_ATTRIB | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF
	if _, err := syscall.InotifyAddWatch(fd, dir, mask); err != nil {
		syscall.Close(fd)
		return nil, nil, false
	}
	// A non-blocking descriptor goes to the runtime's poller, so Close
	// wakes the reader below.
	f := os.NewFile(uintptr(fd), "inotify")
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		buf := make([]byte, 64*(syscall.SizeofInotifyEvent+syscall.NAME_MAX+1))
		for {
			n, err := f.Read(buf)
			if err != nil {
				return
			}
			gone := false
			for off := 0; off+syscall.SizeofInotifyEvent <= n; {
				ev := (*syscall.InotifyEvent)(unsafePointer(&buf[off]))
				if ev.Mask&(syscall.IN_DELETE_SELF|syscall.IN_MOVE_SELF|syscall.IN_IGNORED) != 0 {
					gone = true
				}
				off += syscall.SizeofInotifyEvent + int(ev.Len)
			}
			select {
			case ch <- struct{}{}:
			default: // one pending look covers every change
			}
			if gone {
				return
			}
		}
	}()
	return ch, func() { f.Close() }, true
}
