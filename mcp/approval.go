package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"agent/config"
)

// State is a server's approval state (docs/reference/mcp.md, "Approval").
type State string

// The approval states, plus "refused" for a definition with problems
// (docs/reference/mcp.md, "Status lines").
const (
	Pending   State = "pending"
	Approved  State = "approved"
	Rejected  State = "rejected"
	Revoked   State = "revoked"
	Stale     State = "stale"
	Untrusted State = "untrusted"
	Refused   State = "refused"
)

// Record is one stored decision.
type Record struct {
	State       State  `json:"state"`
	Fingerprint string `json:"fingerprint"` // of the definition when decided
}

// ApprovalStore keeps decisions beyond the process, for embedders
// (docs/reference/mcp.md, "What connects and when", rule 3).
// Implementations must be safe for concurrent use. The executable itself
// uses none: approvals live in memory, in the session that made them (rule
// 1).
type ApprovalStore interface {
	Load(name string) (Record, bool, error)
	Save(name string, r Record) error
}

// ErrNotDecidable is returned for approve/reject/revoke on a server whose
// state does not allow it (untrusted or refused definitions, or revoke
// without an approval).
var ErrNotDecidable = errors.New("not decidable")

// Approvals is the approval state machine of docs/reference/mcp.md,
// "Approval". Decisions are keyed by server name and carry the definition's
// fingerprint: a decision made for another fingerprint reads as stale
// (approved) or does not apply. Approvals is safe for concurrent use.
type Approvals struct {
	mu        sync.Mutex
	workspace string
	mem       map[string]Record
	store     ApprovalStore // nil: memory only
}

// NewApprovals returns the state machine for a workspace (its real path,
// part of every fingerprint). store may be nil.
func NewApprovals(workspace string, store ApprovalStore) *Approvals {
	return &Approvals{workspace: workspace, mem: map[string]Record{}, store: store}
}

// Fingerprint hashes what a decision is about (docs/reference/mcp.md,
// "Fingerprint"): the type, command, args, cwd and url as written
// (templates unexpanded, so a rotated credential does not make an approval
// stale), the names but not the values of env and headers, the header
// helper, the oauth object, a stdio server's sandbox profile (so that a
// wider profile needs a new approval; docs/sandbox.md, "Profiles"), the
// file and scope it came from, and the workspace's real path.
func Fingerprint(d *config.ServerDef, workspace string) string {
	type fp struct {
		Type      string                 `json:"type"`
		Command   string                 `json:"command"`
		Args      []string               `json:"args"`
		Cwd       string                 `json:"cwd"`
		URL       string                 `json:"url"`
		Env       []string               `json:"env"`
		Headers   []string               `json:"headers"`
		Helper    *config.HeaderHelper   `json:"helper"`
		OAuth     *config.OAuth          `json:"oauth"`
		Sandbox   *config.SandboxProfile `json:"sandbox,omitempty"`
		File      string                 `json:"file"`
		Scope     string                 `json:"scope"`
		Workspace string                 `json:"workspace"`
	}
	v := fp{Type: d.Type, Command: d.Command.Raw, Cwd: d.Cwd.Raw, URL: d.URL.Raw,
		Helper: d.HeadersHelper, OAuth: d.OAuth, Sandbox: d.Sandbox, File: d.File, Scope: d.Scope.String(), Workspace: workspace}
	for _, a := range d.Args {
		v.Args = append(v.Args, a.Raw)
	}
	for _, e := range d.Env {
		v.Env = append(v.Env, e.Name)
	}
	for _, h := range d.Headers {
		v.Headers = append(v.Headers, h.Name)
	}
	sort.Strings(v.Env)
	sort.Strings(v.Headers)
	b, _ := json.Marshal(v) // cannot fail: plain strings and structs
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (a *Approvals) load(name string) (Record, bool, error) {
	if r, ok := a.mem[name]; ok {
		return r, true, nil
	}
	if a.store != nil {
		r, ok, err := a.store.Load(name)
		if err != nil {
			return Record{}, false, fmt.Errorf("approval store: %w", err)
		}
		if ok {
			a.mem[name] = r
		}
		return r, ok, nil
	}
	return Record{}, false, nil
}

// State returns the current state of a definition.
func (a *Approvals) State(d *config.ServerDef) State {
	if d.Untrusted {
		return Untrusted
	}
	if d.Refused() {
		return Refused
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok, err := a.load(d.Name)
	if err != nil || !ok {
		return Pending
	}
	if r.Fingerprint != Fingerprint(d, a.workspace) {
		if r.State == Approved {
			return Stale
		}
		// A rejection or revocation of another definition says nothing
		// about this one.
		return Pending
	}
	return r.State
}

// decide applies a user's decision (docs/reference/mcp.md, "Approval").
// Project and local files cannot approve: only these calls, made on the
// user's command, do.
func (a *Approvals) decide(d *config.ServerDef, to State) error {
	switch cur := a.State(d); {
	case cur == Untrusted:
		return fmt.Errorf("%w: %s is defined in %s settings of an untrusted workspace (run: agent trust --yes)", ErrNotDecidable, d.Name, d.Scope)
	case cur == Refused:
		return fmt.Errorf("%w: the definition of %s has problems (see the diagnostics)", ErrNotDecidable, d.Name)
	case to == Revoked && cur != Approved:
		return fmt.Errorf("%w: %s is %s, not approved", ErrNotDecidable, d.Name, cur)
	}
	r := Record{State: to, Fingerprint: Fingerprint(d, a.workspace)}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mem[d.Name] = r
	if a.store != nil {
		if err := a.store.Save(d.Name, r); err != nil {
			return fmt.Errorf("approval store: %w", err)
		}
	}
	return nil
}

// Approve approves a server (/mcp approve). It does not connect it
// (docs/reference/mcp.md, "What connects and when", rule 2).
func (a *Approvals) Approve(d *config.ServerDef) error { return a.decide(d, Approved) }

// Reject refuses a server (/mcp reject).
func (a *Approvals) Reject(d *config.ServerDef) error { return a.decide(d, Rejected) }

// Revoke withdraws an approval (/mcp revoke).
func (a *Approvals) Revoke(d *config.ServerDef) error { return a.decide(d, Revoked) }
