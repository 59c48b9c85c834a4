package tools

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"agent/internal/securefile"
)

// ErrBadArguments is wrapped by the errors of Tool.Target and by argument
// problems found while a tool runs: the model sent something unusable.
var ErrBadArguments = errors.New("bad tool arguments")

func badArgs(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadArguments, fmt.Sprintf(format, args...))
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
	real, err = securefile.RealPath(ps.ws, a)
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
