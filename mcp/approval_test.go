package mcp

import (
	"errors"
	"sync"
	"testing"

	"agent/config"
)

func def(mut func(*config.ServerDef)) *config.ServerDef {
	d := &config.ServerDef{Name: "gh", Scope: config.User, File: "/h/.agent/settings.json", Type: "http",
		URL:     config.Template{Raw: "https://${HOST}/mcp", Expansion: config.Expansion{Value: "https://a.example/mcp"}},
		Headers: []config.NameValue{{Name: "Authorization", Value: config.Template{Raw: "Bearer ${TOKEN}", Expansion: config.Expansion{Value: "Bearer one"}}}},
		OAuth:   &config.OAuth{}}
	if mut != nil {
		mut(d)
	}
	return d
}

func TestFingerprint(t *testing.T) {
	base := Fingerprint(def(nil), "/ws")
	same := []func(*config.ServerDef){
		// Rotating a credential in the environment changes only expansions.
		func(d *config.ServerDef) { d.Headers[0].Value.Value = "Bearer two" },
		func(d *config.ServerDef) { d.URL.Value = "https://b.example/mcp" },
		func(d *config.ServerDef) { d.Timeout = 5 },
	}
	for i, m := range same {
		if Fingerprint(def(m), "/ws") != base {
			t.Errorf("change %d made the fingerprint differ", i)
		}
	}
	differ := map[string]func(*config.ServerDef){
		"url":         func(d *config.ServerDef) { d.URL.Raw = "https://other/mcp" },
		"type":        func(d *config.ServerDef) { d.Type = "sse" },
		"header name": func(d *config.ServerDef) { d.Headers[0].Name = "X-Token" },
		"oauth":       func(d *config.ServerDef) { d.OAuth = &config.OAuth{ClientID: "c", CallbackPort: 1} },
		"file":        func(d *config.ServerDef) { d.File = "/ws/.agent/settings.json" },
		"scope":       func(d *config.ServerDef) { d.Scope = config.Project },
		"command":     func(d *config.ServerDef) { d.Command.Raw = "x" },
		"args":        func(d *config.ServerDef) { d.Args = []config.Template{{Raw: "-v"}} },
		"cwd":         func(d *config.ServerDef) { d.Cwd.Raw = "/tmp" },
		"env name":    func(d *config.ServerDef) { d.Env = []config.NameValue{{Name: "A"}} },
		"helper":      func(d *config.ServerDef) { d.HeadersHelper = &config.HeaderHelper{Command: "/h"} },
		"sandbox":     func(d *config.ServerDef) { d.Sandbox = &config.SandboxProfile{AllowWrite: []string{"/out"}} },
	}
	for name, m := range differ {
		if Fingerprint(def(m), "/ws") == base {
			t.Errorf("a change of %s kept the fingerprint", name)
		}
	}
	if Fingerprint(def(nil), "/other-ws") == base {
		t.Error("a change of workspace kept the fingerprint")
	}
}

func TestApprovalTransitions(t *testing.T) {
	a := NewApprovals("/ws", nil)
	d := def(nil)
	if a.State(d) != Pending {
		t.Fatal("a new server starts pending")
	}
	if err := a.Revoke(d); !errors.Is(err, ErrNotDecidable) {
		t.Fatal("revoke needs an earlier approval")
	}
	for _, step := range []struct {
		do   func(*config.ServerDef) error
		want State
	}{
		{a.Approve, Approved}, {a.Revoke, Revoked}, {a.Approve, Approved}, {a.Reject, Rejected}, {a.Approve, Approved},
	} {
		if err := step.do(d); err != nil || a.State(d) != step.want {
			t.Fatalf("got %v %v, want %v", a.State(d), err, step.want)
		}
	}
	// A change of what it connects to makes the approval stale.
	changed := def(func(d *config.ServerDef) { d.URL.Raw = "https://evil.example/mcp" })
	if a.State(changed) != Stale {
		t.Fatalf("got %v, want stale", a.State(changed))
	}
	// A rotated credential does not.
	rotated := def(func(d *config.ServerDef) { d.Headers[0].Value.Value = "Bearer rotated" })
	if a.State(rotated) != Approved {
		t.Fatalf("rotation made it %v", a.State(rotated))
	}
	// Stale can be approved again.
	if err := a.Approve(changed); err != nil || a.State(changed) != Approved {
		t.Fatal("re-approve stale")
	}
	// Untrusted and refused definitions cannot be decided.
	u := def(func(d *config.ServerDef) { d.Untrusted = true })
	r := def(func(d *config.ServerDef) { d.Problems = []string{"bad"} })
	for _, x := range []*config.ServerDef{u, r} {
		if err := a.Approve(x); !errors.Is(err, ErrNotDecidable) {
			t.Errorf("approve of %v: %v", a.State(x), err)
		}
	}
	if a.State(u) != Untrusted || a.State(r) != Refused {
		t.Fatal("states of untrusted/refused")
	}
	// Approvals live in memory: a new process starts over
	// (docs/reference/mcp.md, "What connects and when", rule 1).
	if NewApprovals("/ws", nil).State(d) != Pending {
		t.Fatal("approval persisted without a store")
	}
}

type memStore struct {
	mu sync.Mutex
	m  map[string]Record
}

func (s *memStore) Load(n string) (Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.m[n]
	return r, ok, nil
}
func (s *memStore) Save(n string, r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[n] = r
	return nil
}

func TestApprovalStore(t *testing.T) {
	st := &memStore{m: map[string]Record{}}
	d := def(nil)
	if err := NewApprovals("/ws", st).Approve(d); err != nil {
		t.Fatal(err)
	}
	if NewApprovals("/ws", st).State(d) != Approved {
		t.Fatal("an embedder's store keeps approvals across starts")
	}
	if NewApprovals("/elsewhere", st).State(d) != Stale {
		t.Fatal("another workspace reads the approval as stale")
	}
}
