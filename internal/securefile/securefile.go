// Package securefile writes and reads the files that hold state and secrets
// under ~/.agent: atomic writes (temporary file, fsync, rename, fsync of the
// directory) with mode 0600, directories with mode 0700, exclusive creation
// for files that must not already exist, and reads that refuse a secret
// other users could read (architecture.md, house style 7).
//
// Imports: standard library only.
package securefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrInsecure is wrapped by errors for files or directories whose mode or
// owner would expose a secret.
var ErrInsecure = errors.New("insecure permissions")

// ErrTooLarge is wrapped when a file exceeds the caller's size limit.
var ErrTooLarge = errors.New("file too large")

// EnsureDir creates dir and its missing parents with mode 0700. An existing
// directory that group or others can access is tightened to 0700 when the
// current user owns it, and refused otherwise.
func EnsureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if !ownedByMe(fi) {
			return fmt.Errorf("%s: %w: mode %04o and owned by another user", dir, ErrInsecure, fi.Mode().Perm())
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("tightening %s to 0700: %w", dir, err)
		}
	}
	return nil
}

// WriteFile atomically replaces path with data, mode 0600. Readers see the
// old content or the new, never a partial file; on any error the old file
// is left as it was and the temporary file is removed. The parent directory
// must exist (see EnsureDir).
func WriteFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	// CreateTemp uses 0600 already; Chmod guards against an unusual umask
	// handling and documents the intent.
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	ok = true
	syncDir(dir)
	return nil
}

// CreateExclusive creates path with data and mode 0600, failing with an
// error that wraps fs.ErrExist when anything already exists there (a file,
// a directory or a symbolic link, which is not followed).
func CreateExclusive(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

// ReadSecret reads a regular file of at most max bytes that only its owner,
// the current user, can access. A group- or world-accessible file, a file
// owned by someone else, or anything but a regular file is refused with an
// error wrapping ErrInsecure; symbolic links are not followed.
func ReadSecret(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file", path, ErrInsecure)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: %w: mode %04o, want 0600 (run: chmod 600 %s)", path, ErrInsecure, fi.Mode().Perm(), path)
	}
	if !ownedByMe(fi) {
		return nil, fmt.Errorf("%s: %w: owned by another user", path, ErrInsecure)
	}
	return readLimited(f, path, fi.Size(), max)
}

// ReadFile reads a regular file of at most max bytes without permission
// checks (for public configuration such as settings and grant files).
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	return readLimited(f, path, fi.Size(), max)
}

func readLimited(f *os.File, path string, size, max int64) ([]byte, error) {
	if size > max {
		return nil, fmt.Errorf("%s: %w: %d bytes, limit %d", path, ErrTooLarge, size, max)
	}
	// The file may grow between Stat and Read: read one byte past the limit.
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: %w: over %d bytes", path, ErrTooLarge, max)
	}
	return data, nil
}

func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	return int(st.Uid) == os.Geteuid()
}

// syncDir makes a rename or creation durable. Errors are ignored: some file
// systems do not support fsync on directories, and the data itself is
// already synced.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
