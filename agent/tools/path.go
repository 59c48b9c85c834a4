package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrBadArguments is wrapped by the errors of Tool.Target and by argument
// problems found while a tool runs: the model sent something unusable.
var ErrBadArguments = errors.New("bad tool arguments")

func badArgs(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadArguments, fmt.Sprintf(format, args...))
}

// maxLinks bounds the symbolic links followed while resolving one path, as
// the kernel's ELOOP limit does.
const maxLinks = 40

// RealPath resolves the symbolic links of an absolute, clean path the way
// opening it would, so containment is judged on what is really reached: a
// link inside the workspace that points outside resolves outside
// (docs/reference/runtime.md, "Paths"). Where a component does not exist (a
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

// WithinDir reports whether the real path p is dir or below it.
func WithinDir(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// toolPaths turns the file paths a model sends into real paths.
type toolPaths struct {
	ws   string // the workspace's real path
	home string
}

// abs makes a path from the model absolute and clean: relative to the
// workspace, "~" and "~/..." in the home when one is known.
func (ps toolPaths) abs(p string) (string, error) {
	if p == "" {
		return "", badArgs("the path is empty")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", badArgs("the path contains a NUL byte")
	}
	if ps.home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		p = ps.home + p[1:]
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(ps.ws, p)
	}
	return filepath.Clean(p), nil
}

// resolve returns the real path a file tool would touch and whether it
// lies outside the workspace.
func (ps toolPaths) resolve(p string) (real string, outside bool, err error) {
	a, err := ps.abs(p)
	if err != nil {
		return "", false, err
	}
	real, err = RealPath(ps.ws, a)
	if err != nil {
		return "", false, fmt.Errorf("resolving %s: %w", a, err)
	}
	return real, !WithinDir(real, ps.ws), nil
}

func (ps toolPaths) target(p string) (Target, error) {
	real, outside, err := ps.resolve(p)
	if err != nil {
		return Target{}, err
	}
	return Target{Kind: TargetPath, Value: real, OutsideWorkspace: outside}, nil
}
