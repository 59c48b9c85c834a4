package providertest

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"agent/providers"
)

// Plumbing holds the options every provider passes to providers.Sender:
// executor, logger, payloadLogger and timeout (docs/providers.md, "Options
// shared by every chat provider").
type Plumbing struct {
	Executor      providers.Executor
	Logger        *slog.Logger
	PayloadLogger providers.PayloadLogger
	Timeout       time.Duration
}

// Payloads is a PayloadLogger that keeps every summary.
type Payloads struct {
	mu   sync.Mutex
	sums []providers.PayloadSummary
}

// LogPayload implements providers.PayloadLogger.
func (p *Payloads) LogPayload(_ context.Context, s providers.PayloadSummary) {
	p.mu.Lock()
	p.sums = append(p.sums, s)
	p.mu.Unlock()
}

// Summaries returns the summaries received so far.
func (p *Payloads) Summaries() []providers.PayloadSummary {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]providers.PayloadSummary(nil), p.sums...)
}

// CheckPlumbing checks that a provider's constructor hands its executor,
// logger, payload logger and timeout to the shared plumbing: requests go
// through the executor, the logger gets the debug record of each request
// (and never the key), the payload logger a summary naming provider, and
// a stream that stalls after its first events ends with ErrTimeout exactly
// the timeout after the last event, without a retry. stall is a recorded
// stream and cut the byte offset where the server stops sending (after at
// least one event). It runs in a synctest bubble.
func CheckPlumbing(t *testing.T, provider, key string, build func(t testing.TB, o Plumbing) providers.Provider, req func() *providers.Request, stall []byte, cut int) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		var pl Payloads
		ex := NewReplay(Response{Body: stall, Stall: true, StallAfter: cut})
		p := build(t, Plumbing{
			Executor:      ex,
			Logger:        slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			PayloadLogger: &pl,
			Timeout:       7 * time.Second,
		})
		s, err := p.Chat(context.Background(), req())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Next(); err != nil {
			t.Fatalf("first event: %v", err)
		}
		var last time.Time
		for err == nil {
			last = time.Now()
			_, err = s.Next()
		}
		var pe *providers.Error
		if !errors.As(err, &pe) || !errors.Is(err, providers.ErrTimeout) || pe.Provider != provider {
			t.Errorf("stalled stream: %v", err)
		}
		if d := time.Since(last); d != 7*time.Second {
			t.Errorf("the watchdog fired after %v, want the 7 s timeout", d)
		}
		if ex.Requests() != 1 {
			t.Errorf("%d requests through the executor, want 1", ex.Requests())
		}
		if sums := pl.Summaries(); len(sums) != 1 || sums[0].Provider != provider || sums[0].Attempt != 1 || sums[0].Bytes != len(ex.Body(0)) {
			t.Errorf("payload summaries %+v", sums)
		}
		if l := logs.String(); !strings.Contains(l, `msg="provider request"`) || !strings.Contains(l, "provider="+provider) || key != "" && strings.Contains(l, key) {
			t.Errorf("logs:\n%s", l)
		}
	})
}
