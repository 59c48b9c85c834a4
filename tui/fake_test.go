package tui

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"agent/agent"
	"agent/tui/screen"
)

// fakeTerm is an in-memory terminal: input is fed by the test, output is
// interpreted by a small VT emulator (the sequences the renderer writes),
// so tests see what a real terminal would show.
type fakeTerm struct {
	mu       sync.Mutex
	in       []byte
	inc      chan struct{} // poked when input or the deadline changes
	deadline time.Time
	closed   bool
	w, h     int

	written  int // bytes written
	writes   int // Write calls
	raw      strings.Builder
	grid     [][]string
	cx, cy   int
	cursorOn bool
	inSync   bool
}

func newFakeTerm(w, h int) *fakeTerm {
	t := &fakeTerm{inc: make(chan struct{}, 1), w: w, h: h}
	t.clear()
	return t
}

func (t *fakeTerm) poke() {
	select {
	case t.inc <- struct{}{}:
	default:
	}
}

func (t *fakeTerm) feed(s string) {
	t.mu.Lock()
	t.in = append(t.in, s...)
	t.mu.Unlock()
	t.poke()
}

func (t *fakeTerm) Read(p []byte) (int, error) {
	for {
		t.mu.Lock()
		if len(t.in) > 0 {
			n := copy(p, t.in)
			t.in = t.in[n:]
			t.mu.Unlock()
			return n, nil
		}
		if t.closed {
			t.mu.Unlock()
			return 0, os.ErrClosed
		}
		d := t.deadline
		t.mu.Unlock()
		var tc <-chan time.Time
		if !d.IsZero() {
			wait := time.Until(d)
			if wait <= 0 {
				return 0, os.ErrDeadlineExceeded
			}
			timer := time.NewTimer(wait)
			defer timer.Stop()
			tc = timer.C
		}
		select {
		case <-t.inc:
		case <-tc:
			return 0, os.ErrDeadlineExceeded
		}
	}
}

func (t *fakeTerm) SetReadDeadline(d time.Time) error {
	t.mu.Lock()
	t.deadline = d
	t.mu.Unlock()
	t.poke()
	return nil
}

func (t *fakeTerm) Size() (int, int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.w, t.h, nil
}

func (t *fakeTerm) resize(w, h int) {
	t.mu.Lock()
	t.w, t.h = w, h
	t.mu.Unlock()
}

func (t *fakeTerm) Close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.poke()
}

func (t *fakeTerm) clear() {
	t.grid = make([][]string, t.h)
	for y := range t.grid {
		t.grid[y] = make([]string, t.w)
		for x := range t.grid[y] {
			t.grid[y][x] = " "
		}
	}
}

// Write interprets CSI sequences: cursor position (H), erase line (K),
// erase screen (2J), SGR (m, ignored), private modes (h/l).
func (t *fakeTerm) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.written += len(p)
	t.writes++
	t.raw.Write(p)
	if len(t.grid) != t.h || (t.h > 0 && len(t.grid[0]) != t.w) {
		t.clear()
	}
	s := string(p)
	for len(s) > 0 {
		if s[0] == 0x1b && len(s) > 1 && s[1] == '[' {
			i := 2
			for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
				i++
			}
			if i >= len(s) {
				break
			}
			t.csi(s[2:i], s[i])
			s = s[i+1:]
			continue
		}
		r, size := utf8.DecodeRuneInString(s)
		rs := s[:size]
		s = s[size:]
		w := screen.RuneWidth(r)
		if w == 0 {
			if t.cx > 0 && t.cy < t.h {
				t.grid[t.cy][t.cx-1] += rs
			}
			continue
		}
		if t.cy < t.h && t.cx < t.w {
			t.grid[t.cy][t.cx] = rs
			if w == 2 && t.cx+1 < t.w {
				t.grid[t.cy][t.cx+1] = ""
			}
		}
		t.cx += w
	}
	return len(p), nil
}

func (t *fakeTerm) csi(params string, final byte) {
	switch final {
	case 'H':
		row, col := 1, 1
		if a, b, ok := strings.Cut(params, ";"); ok {
			row, _ = strconv.Atoi(a)
			col, _ = strconv.Atoi(b)
		}
		t.cy, t.cx = row-1, col-1
	case 'K':
		if t.cy < t.h {
			for x := t.cx; x < t.w; x++ {
				t.grid[t.cy][x] = " "
			}
		}
	case 'J':
		if params == "2" {
			t.clear()
		}
	case 'h', 'l':
		switch params {
		case "?25":
			t.cursorOn = final == 'h'
		case "?2026":
			t.inSync = final == 'h'
		}
	}
}

// screen returns the emulated screen, one row per line, trailing blanks
// removed.
func (t *fakeTerm) screen() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	for _, row := range t.grid {
		b.WriteString(strings.TrimRight(strings.Join(row, ""), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// fakeSession records what the UI asks and lets the test play events.
type fakeSession struct {
	mu        sync.Mutex
	obs       func(agent.Event)
	submitted []string
	aborts    int
	cancelled []string
	n         int
}

func (f *fakeSession) Submit(p string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	f.submitted = append(f.submitted, p)
	return "s/" + strconv.Itoa(f.n), nil
}

func (f *fakeSession) Abort() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.aborts++
	return true
}

func (f *fakeSession) CancelQueued(id string) bool {
	f.mu.Lock()
	f.cancelled = append(f.cancelled, id)
	obs := f.obs
	f.mu.Unlock()
	obs(agent.Event{Kind: agent.EventCancelled, Turn: id})
	return true
}

func (f *fakeSession) Subscribe(fn func(agent.Event)) func() {
	f.mu.Lock()
	f.obs = fn
	f.mu.Unlock()
	return func() {}
}

func (f *fakeSession) emit(evs ...agent.Event) {
	f.mu.Lock()
	obs := f.obs
	f.mu.Unlock()
	for _, ev := range evs {
		obs(ev)
	}
}

func (f *fakeSession) get() (submitted []string, aborts int, cancelled []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.submitted...), f.aborts, append([]string(nil), f.cancelled...)
}
