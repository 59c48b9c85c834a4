package securefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinks bounds the symbolic links followed while resolving one path, as
// the kernel's ELOOP limit does.
const maxLinks = 40

// RealPath resolves the symbolic links of an absolute, clean path the way
// opening it would, so containment is judged on what is really reached: a
// link inside the workspace that points outside resolves outside
// (docs/reference/runtime.md, "Paths"; the sandbox settings check a
// project's allowWrite paths with it). Where a component does not exist (a
// file about to be written) resolution stops and the rest is appended as
// written; a dangling link resolves to its target, so writing through it
// cannot escape either.
//
// base, when not empty, is a real path that prefixes p; resolution starts
// there, saving a system call per component of the workspace's own path.
func RealPath(base, p string) (string, error) {
	resolved, rest := "/", p
	if base != "" && base != "/" && strings.HasPrefix(p, base+"/") {
		resolved, rest = base, p[len(base)+1:]
	} else if base != "" && p == base {
		return p, nil
	}
	links := 0
	for rest != "" {
		var comp string
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			comp, rest = rest[:i], rest[i+1:]
		} else {
			comp, rest = rest, ""
		}
		switch comp {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, comp)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return filepath.Join(next, rest), nil
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		if rest != "" {
			target += "/" + rest
		}
		rest = target
	}
	return resolved, nil
}
