package jose

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func claimsFor(iss, jti string, exp time.Time) *Claims {
	return &Claims{Issuer: iss, ID: jti, Expiry: exp}
}

func TestSingleUse(t *testing.T) {
	now := testNow
	s := NewSingleUse(SingleUseOptions{MaxEntries: 3, Now: func() time.Time { return now }})
	exp := now.Add(time.Minute)
	if err := s.Use(claimsFor("i", "a", exp)); err != nil {
		t.Fatal(err)
	}
	if err := s.Use(claimsFor("i", "a", exp)); !errors.Is(err, ErrReused) {
		t.Fatalf("second use: %v", err)
	}
	// The pair, not the jti alone, identifies a token; the digest input is
	// unambiguous.
	for _, c := range []*Claims{claimsFor("j", "a", exp), claimsFor("ia", "", exp), claimsFor("i", "a\x00", exp)} {
		err := s.Use(c)
		if c.ID == "" {
			if !errors.Is(err, Malformed) {
				t.Errorf("no jti: %v", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("(%q, %q): %v", c.Issuer, c.ID, err)
		}
	}
	// Full: a new token is refused, a known one is still a reuse.
	if err := s.Use(claimsFor("i", "b", exp)); !errors.Is(err, ErrStoreFull) {
		t.Fatalf("when full: %v", err)
	}
	if err := s.Use(claimsFor("i", "a", exp)); !errors.Is(err, ErrReused) {
		t.Fatalf("reuse when full: %v", err)
	}
	// Kept through exp plus the leeway, forgotten after.
	now = exp.Add(DefaultLeeway - time.Nanosecond)
	if err := s.Use(claimsFor("i", "a", exp)); !errors.Is(err, ErrReused) {
		t.Fatalf("within leeway: %v", err)
	}
	now = exp.Add(DefaultLeeway)
	if err := s.Use(claimsFor("i", "b", now.Add(time.Minute))); err != nil {
		t.Fatalf("after expiry the store has room: %v", err)
	}
	if s.Len() != 1 {
		t.Errorf("Len = %d after pruning, want 1", s.Len())
	}
	// A token already past exp plus leeway is refused, not remembered.
	if err := s.Use(claimsFor("i", "old", now.Add(-DefaultLeeway))); !errors.Is(err, Expired) {
		t.Errorf("expired token: %v", err)
	}
}

// TestSingleUseKeyUnambiguous: a JSON string may hold U+0000, so no
// separator byte can split the issuer from the jti; pairs that a separator
// would join into the same bytes are still two tokens.
func TestSingleUseKeyUnambiguous(t *testing.T) {
	now := testNow
	s := NewSingleUse(SingleUseOptions{MaxEntries: 8, Now: func() time.Time { return now }})
	exp := now.Add(time.Minute)
	for _, p := range [][2]string{{"a\x00b", "c"}, {"a", "b\x00c"}, {"a\x00", "b\x00c"}, {"", "a\x00b\x00c"}, {"a\x00b\x00c", "x"}, {"a\x00b\x00", "cx"}} {
		if err := s.Use(claimsFor(p[0], p[1], exp)); err != nil {
			t.Errorf("(%q, %q): %v", p[0], p[1], err)
		}
	}
	if s.Len() != 6 {
		t.Errorf("Len = %d, want 6", s.Len())
	}
}

// TestSingleUseEntriesExpireInOrder: entries of different lifetimes are
// pruned as each expires, not all at once.
func TestSingleUseEntriesExpireInOrder(t *testing.T) {
	now := testNow
	s := NewSingleUse(SingleUseOptions{Leeway: -1, Now: func() time.Time { return now }})
	for i := 10; i > 0; i-- {
		if err := s.Use(claimsFor("i", fmt.Sprint(i), now.Add(time.Duration(i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 10; i++ {
		now = testNow.Add(time.Duration(i) * time.Minute)
		if err := s.Use(claimsFor("i", fmt.Sprint(i), now.Add(time.Hour))); err != nil {
			t.Fatalf("entry %d not forgotten at its expiry: %v", i, err)
		}
		if i < 10 {
			if err := s.Use(claimsFor("i", fmt.Sprint(i+1), now.Add(time.Hour))); !errors.Is(err, ErrReused) {
				t.Fatalf("entry %d forgotten early: %v", i+1, err)
			}
		}
	}
}

// TestSingleUseRace: copies of one token presented at once; exactly one
// is accepted. Run under -race.
func TestSingleUseRace(t *testing.T) {
	s := NewSingleUse(SingleUseOptions{})
	exp := time.Now().Add(time.Hour)
	for round := range 50 {
		var ok, reused atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 8 {
			wg.Go(func() {
				<-start
				switch err := s.Use(claimsFor("i", fmt.Sprint("t", round), exp)); {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, ErrReused):
					reused.Add(1)
				default:
					t.Error(err)
				}
			})
		}
		close(start)
		wg.Wait()
		if ok.Load() != 1 || reused.Load() != 7 {
			t.Fatalf("round %d: %d accepted, %d reused", round, ok.Load(), reused.Load())
		}
	}
}
