//go:build !unix

package search

import (
	"errors"
	"io"
	"os"

	"agent/internal/securefile"
)

// rfile is a file opened for searching.
type rfile struct{ f *os.File }

var errNotRegular = errors.New("not a regular file")

// openRegular opens a regular file without waiting on anything else and
// returns its size.
func openRegular(path string) (rfile, int64, error) {
	f, fi, err := securefile.Open(path, 0)
	if errors.Is(err, securefile.ErrNotRegular) {
		return rfile{}, 0, errNotRegular
	}
	if err != nil {
		return rfile{}, 0, err
	}
	return rfile{f}, fi.Size(), nil
}

func (f rfile) read(b []byte) (int, error) {
	n, err := f.f.Read(b)
	if err == io.EOF {
		err = nil
	}
	return n, err
}

func (f rfile) close() { f.f.Close() }
