package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"time"

	"agent/internal/securefile"
	"agent/internal/strictjson"
)

// The workspace trust store (docs/reference/cli.md, "Files" and "Trust"):
// ~/.agent/trusted-workspaces.json, 0600, keyed by the workspace's real
// path. Project and local settings, and headless starts, need a trusted
// workspace (docs/reference/settings.md, "Trust gating";
// docs/reference/runtime.md, "Starting a session").

const maxTrustFile = 1 << 20

type trustFile struct {
	Version    int                   `json:"version"`
	Workspaces map[string]trustEntry `json:"workspaces"`
}

type trustEntry struct {
	TrustedAt string `json:"trustedAt"`
}

// TrustStorePath is the trust store's path.
func TrustStorePath(home string) string {
	return filepath.Join(UserDir(home), "trusted-workspaces.json")
}

// RealPath resolves a workspace directory to the real path the trust store
// is keyed by: absolute, cleaned, symbolic links resolved.
func RealPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

func readTrust(home string) (*trustFile, error) {
	path := TrustStorePath(home)
	// ReadSecret: a store others could write to could trust any folder.
	data, err := securefile.ReadSecret(path, maxTrustFile)
	if errors.Is(err, fs.ErrNotExist) {
		return &trustFile{Version: 1, Workspaces: map[string]trustEntry{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trust store: %w", err)
	}
	var t trustFile
	if err := strictjson.Unmarshal(data, &t, strictjson.Options{MaxBytes: maxTrustFile}); err != nil {
		return nil, fmt.Errorf("trust store %s: %w", path, err)
	}
	if t.Version != 1 {
		return nil, fmt.Errorf("trust store %s: unsupported version %d", path, t.Version)
	}
	if t.Workspaces == nil {
		t.Workspaces = map[string]trustEntry{}
	}
	return &t, nil
}

func writeTrust(home string, t *trustFile) error {
	if err := securefile.EnsureDir(UserDir(home)); err != nil {
		return err
	}
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	return securefile.WriteFile(TrustStorePath(home), append(data, '\n'))
}

// IsTrusted reports whether the workspace (a real path) is trusted. An
// unreadable store is an error: callers treat the workspace as untrusted
// and report it.
func IsTrusted(home, workspace string) (bool, error) {
	t, err := readTrust(home)
	if err != nil {
		return false, err
	}
	_, ok := t.Workspaces[workspace]
	return ok, nil
}

// Trust marks the workspace (a real path) trusted. It reports whether it
// already was.
func Trust(home, workspace string, now time.Time) (bool, error) {
	t, err := readTrust(home)
	if err != nil {
		return false, err
	}
	if _, ok := t.Workspaces[workspace]; ok {
		return true, nil
	}
	t.Workspaces[workspace] = trustEntry{TrustedAt: now.UTC().Format(time.RFC3339)}
	return false, writeTrust(home, t)
}

// Untrust forgets the workspace. It reports whether it was trusted.
func Untrust(home, workspace string) (bool, error) {
	t, err := readTrust(home)
	if err != nil {
		return false, err
	}
	if _, ok := t.Workspaces[workspace]; !ok {
		return false, nil
	}
	delete(t.Workspaces, workspace)
	return true, writeTrust(home, t)
}

// TrustedWorkspaces lists the trusted real paths, sorted.
func TrustedWorkspaces(home string) ([]string, error) {
	t, err := readTrust(home)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(t.Workspaces))
	for k := range t.Workspaces {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}
