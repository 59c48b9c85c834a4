// Package securefile writes and reads the files that hold state and secrets
// under ~/.agent: atomic writes (temporary file, fsync, rename, fsync of
// the directory) with mode 0600, directories with mode 0700, exclusive
// creation for files that must not already exist, reads that refuse a
// secret other users could read (docs/reference/cli.md, "Files";
// docs/reference/mcp.md, "Credentials"), and Open, the one way to open a
// file named from outside: a FIFO, a device or a folder is refused at once,
// never waited on.
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

// ErrNotRegular is wrapped when a path names something other than a
// regular file: a FIFO, a device, a socket or a directory.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading only if it is a regular file, and never waits
// doing so. A plain open(2) of a FIFO blocks until a writer appears
// (forever, for a FIFO planted in a workspace or named as a settings or
// grant file), and the blocked system call holds an OS thread that no
// context can cancel; O_NONBLOCK makes that open return at once, and
// O_NOCTTY keeps a terminal device from becoming the controlling one. The
// type is then checked on the open descriptor (no race with a rename). The
// descriptor's non-blocking flag changes nothing for a regular file. Extra
// flags (such as syscall.O_NOFOLLOW) are added to O_RDONLY. Every reader of
// a file named from outside uses this (docs/reference/cli.md, "Files").
func Open(path string, flag int) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|flag, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fi, &fs.PathError{Op: "open", Path: path, Err: notRegular(Kind(fi.Mode()))}
	}
	return f, fi, nil
}

// notRegular is the reason of Open's refusal: "not a regular file (a
// FIFO)". It matches ErrNotRegular with errors.Is.
type notRegular string

func (k notRegular) Error() string        { return "not a regular file (" + string(k) + ")" }
func (k notRegular) Is(target error) bool { return target == ErrNotRegular }

// Kind names a file mode's type for messages: "a FIFO", "a folder", ...
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

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
		if !OwnedByMe(fi) {
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

// rename is os.Rename; tests replace it to make a write fail at the last
// step.
var rename = os.Rename

// ReplaceFile replaces path with data so that readers see the old content
// or the new, never a mix: a temporary file in the same folder is written,
// synced and renamed over the target, then the folder is synced. Unlike
// WriteFile (which forces 0600 for secrets) an existing file keeps its
// permission bits, since these are the user's files (settings, files a
// tool edits); newPerm is the mode of a new file. On any error the target
// is untouched and the temporary file is removed. The rename makes the
// current user the owner and replaces hard links with a new file, as every
// atomic editor does.
func ReplaceFile(path string, data []byte, newPerm fs.FileMode) error {
	perm := newPerm
	switch fi, err := os.Stat(path); {
	case err == nil:
		if !fi.Mode().IsRegular() {
			return &fs.PathError{Op: "write", Path: path, Err: notRegular(Kind(fi.Mode()))}
		}
		perm = fi.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	done = true
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
	f, fi, err := Open(path, syscall.O_NOFOLLOW)
	if errors.Is(err, ErrNotRegular) {
		return nil, fmt.Errorf("%w: %w", err, ErrInsecure)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: %w: mode %04o, want 0600 (run: chmod 600 %s)", path, ErrInsecure, fi.Mode().Perm(), path)
	}
	if !OwnedByMe(fi) {
		return nil, fmt.Errorf("%s: %w: owned by another user", path, ErrInsecure)
	}
	return readLimited(f, path, fi.Size(), max)
}

// ReadFile reads a regular file of at most max bytes without permission
// checks (for public configuration such as settings and grant files).
func ReadFile(path string, max int64) ([]byte, error) {
	f, fi, err := Open(path, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
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

// OwnedByMe reports whether this process's effective user owns the file
// (true where the system does not say).
func OwnedByMe(fi fs.FileInfo) bool {
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
