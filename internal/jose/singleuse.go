package jose

import (
	"container/heap"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"sync"
	"time"
)

// Errors of SingleUse.Use. Callers choose the status: a reused token is the
// client's fault (401); a full store is the server's (503), or 401 if the
// caller prefers not to tell.
var (
	ErrReused    = errors.New("token already used")
	ErrStoreFull = errors.New("single-use store full")
)

// DefaultMaxEntries bounds a SingleUse whose options leave it at zero.
const DefaultMaxEntries = 100_000

// SingleUseOptions configures a SingleUse. The zero value is the default.
type SingleUseOptions struct {
	MaxEntries int              // tokens remembered at once; 0 means DefaultMaxEntries
	Leeway     time.Duration    // kept past exp; 0 means DefaultLeeway, negative none. Use the Verifier's.
	Now        func() time.Time // nil means time.Now
}

// SingleUse remembers (issuer, jti) pairs so that each token is accepted
// once (docs/reference/events.md, "Tokens and single use"). A pair is kept
// until its token's exp plus the leeway, after which the Verifier refuses
// the token anyway. When full, the store refuses new tokens rather than
// forget live ones. It is safe for concurrent use: of two copies of a token
// presented at once, exactly one is accepted.
type SingleUse struct {
	max    int
	leeway time.Duration
	now    func() time.Time

	mu      sync.Mutex
	entries map[[32]byte]time.Time // pair digest → forget after
	order   expiryHeap             // the same entries, soonest first
}

// NewSingleUse makes an empty store.
func NewSingleUse(opts SingleUseOptions) *SingleUse {
	s := &SingleUse{max: opts.MaxEntries, leeway: opts.Leeway, now: opts.Now, entries: map[[32]byte]time.Time{}}
	if s.max <= 0 {
		s.max = DefaultMaxEntries
	}
	switch {
	case s.leeway == 0:
		s.leeway = DefaultLeeway
	case s.leeway < 0:
		s.leeway = 0
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Use records the token of verified claims c. It returns nil the first
// time, ErrReused after, ErrStoreFull when the store has no room, and an
// *Error for claims without jti (Malformed) or already expired (Expired).
func (s *SingleUse) Use(c *Claims) error {
	if c.ID == "" {
		return refuse(Malformed, "jti missing")
	}
	// A fixed-size digest keeps memory per entry bounded whatever the
	// lengths of iss and jti. The issuer goes in length-prefixed: a
	// separator byte alone would let ("a\x00b", "c") and ("a", "b\x00c")
	// collide, since a JSON string may hold U+0000.
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(c.Issuer)))
	h.Write(n[:])
	h.Write([]byte(c.Issuer))
	h.Write([]byte(c.ID))
	var k [32]byte
	h.Sum(k[:0])
	until := c.Expiry.Add(s.leeway)

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for len(s.order) > 0 && !now.Before(s.order[0].until) {
		e := heap.Pop(&s.order).(expiry)
		delete(s.entries, e.key)
	}
	if _, used := s.entries[k]; used {
		return ErrReused
	}
	if !now.Before(until) {
		// Past exp plus leeway the Verifier refuses the token; remembering
		// it would only be forgotten at once.
		return refuse(Expired, "")
	}
	if len(s.entries) >= s.max {
		return ErrStoreFull
	}
	s.entries[k] = until
	heap.Push(&s.order, expiry{until, k})
	return nil
}

// Len returns the number of tokens remembered, expired ones included until
// the next Use prunes them.
func (s *SingleUse) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

type expiry struct {
	until time.Time
	key   [32]byte
}

type expiryHeap []expiry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].until.Before(h[j].until) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
