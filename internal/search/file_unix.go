//go:build unix

package search

import (
	"errors"
	"syscall"
)

// rfile is a file opened for searching through raw system calls: the
// runtime's file object would try to register every file with the network
// poller, one more system call per file of a large tree.
type rfile struct{ fd int }

var errNotRegular = errors.New("not a regular file")

// openRegular opens a regular file without following a link and without
// waiting (a FIFO put in place of a file after the listing is refused),
// and returns its size.
func openRegular(path string) (rfile, int64, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return rfile{}, 0, err
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			syscall.Close(fd)
			return rfile{}, 0, err
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
			syscall.Close(fd)
			return rfile{}, 0, errNotRegular
		}
		return rfile{fd}, st.Size, nil
	}
}

func (f rfile) read(b []byte) (int, error) {
	for {
		n, err := syscall.Read(f.fd, b)
		if err == syscall.EINTR {
			continue
		}
		if n < 0 {
			n = 0
		}
		return n, err
	}
}

func (f rfile) close() { syscall.Close(f.fd) }
