package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// renameFile is os.Rename; tests replace it to make a write fail at the
// last step.
var renameFile = os.Rename

// writeAtomic replaces path with data so that readers see the old content
// or the new, never a mix: a temporary file in the same folder is written,
// synced and renamed over the target, then the folder is synced. Unlike
// securefile.WriteFile (which forces 0600 for secrets) an existing file
// keeps its permission bits, since these are the user's files; newPerm is
// the mode of a new file. On any error the target is untouched and the
// temporary file is removed. The rename makes the current user the owner
// and replaces hard links with a new file, as every atomic editor does.
func writeAtomic(path string, data []byte, newPerm fs.FileMode) error {
	perm := newPerm
	switch fi, err := os.Stat(path); {
	case err == nil:
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", path)
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
	if err := renameFile(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	done = true
	if d, err := os.Open(dir); err == nil {
		// Makes the rename durable; some file systems refuse, and the data
		// itself is synced already.
		d.Sync()
		d.Close()
	}
	return nil
}
