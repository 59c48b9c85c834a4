package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"agent/config"
	"agent/internal/securefile"
)

// Approvals are the approved project and local handlers, kept in
// ~/.agent/hook-approvals.json (0600) by the hash of each handler's
// definition and scripts.
type Approvals struct {
	Version  int                 `json:"version"`
	Approved map[string]Approval `json:"approved"`
}

// Approval says what was approved, for a person reading the file.
type Approval struct {
	File    string    `json:"file"`
	Event   string    `json:"event"`
	Matcher string    `json:"matcher,omitempty"`
	Command string    `json:"command"`
	At      time.Time `json:"at"`
}

// maxApprovals bounds the file.
const maxApprovals = 4 << 20

// ApprovalsPath is ~/.agent/hook-approvals.json.
func ApprovalsPath(home string) string {
	return filepath.Join(config.UserDir(home), "hook-approvals.json")
}

// LoadApprovals reads the approvals; a missing, unreadable or malformed
// file approves nothing (the handlers stay pending, which is safe).
func LoadApprovals(home string) *Approvals {
	a, _ := readApprovals(home)
	return a
}

func readApprovals(home string) (*Approvals, error) {
	a := &Approvals{Version: 1, Approved: map[string]Approval{}}
	if home == "" {
		return a, nil
	}
	data, err := securefile.ReadSecret(ApprovalsPath(home), maxApprovals)
	if errors.Is(err, fs.ErrNotExist) {
		return a, nil
	}
	if err != nil {
		return a, err
	}
	if err := json.Unmarshal(data, a); err != nil || a.Version != 1 {
		return &Approvals{Version: 1, Approved: map[string]Approval{}}, fmt.Errorf("%s: not a hook approvals file", ApprovalsPath(home))
	}
	if a.Approved == nil {
		a.Approved = map[string]Approval{}
	}
	return a, nil
}

// Has reports whether hash is approved.
func (a *Approvals) Has(hash string) bool {
	_, ok := a.Approved[hash]
	return ok
}

func (a *Approvals) add(h *Handler) {
	cmd := h.Command
	for _, arg := range h.Args {
		cmd += " " + arg
	}
	a.Approved[h.Hash] = Approval{File: h.File, Event: h.Event, Matcher: h.Matcher, Command: cmd, At: time.Now().UTC()}
}

// updateApprovals reads the file, applies change and writes it back
// atomically. A file that cannot be read is not overwritten: it may hold
// approvals the user wants kept.
func updateApprovals(home string, change func(*Approvals)) error {
	if home == "" {
		return errors.New("no home folder to keep hook approvals in")
	}
	a, err := readApprovals(home)
	if err != nil {
		return fmt.Errorf("reading the hook approvals: %w", err)
	}
	change(a)
	data, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return err
	}
	if err := securefile.EnsureDir(config.UserDir(home)); err != nil {
		return err
	}
	return securefile.WriteFile(ApprovalsPath(home), append(data, '\n'))
}
