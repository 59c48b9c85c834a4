package agent

// Compaction boundaries in the transcript (docs/reference/runtime.md,
// "Transcripts"): the history is never rewritten; a compaction appends a
// boundary record holding the rebuilt history, and resuming starts from
// the last boundary, found by reading the file backwards, so that a long
// transcript resumes in time and memory proportional to what follows it.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"agent/internal/quote"
	"agent/internal/securefile"
	"agent/providers"
)

// Boundary is a compaction as the transcript records it.
type Boundary struct {
	Trigger                   string // auto, manual or reactive
	TokensBefore, TokensAfter int
	Duration                  time.Duration
	// History is the conversation after the compaction: the summary, the
	// turns kept, the open todo list.
	History []providers.Message
	// Pending are the messages so far of the turn that was running
	// (PendingTurn), kept whole after History: resuming gives them the
	// status the turn ends with.
	Pending     []providers.Message
	PendingTurn string
	// Usage is what the summary's model call reported.
	Usage providers.Usage
	// Turns is the highest turn number so far, so that a session resumed
	// from the boundary numbers its turns after it.
	Turns int

	// daily is the todo list, the checkpoints and the usage so far
	// (daily.go), which resuming from the boundary carries on.
	daily *dailyRecord
}

// boundaryRecord is a Boundary in the file.
type boundaryRecord struct {
	Type         string       `json:"type"` // "compact"
	Trigger      string       `json:"trigger"`
	TokensBefore int          `json:"tokensBefore"`
	TokensAfter  int          `json:"tokensAfter"`
	DurationMs   int64        `json:"durationMs"`
	Turns        int          `json:"turns"`
	Usage        *usageRecord `json:"usage,omitempty"`
	Messages     []record     `json:"messages"`
	Daily        *dailyRecord `json:"daily,omitempty"`
}

// Cleared is a cheap pass as the transcript records it: which calls'
// results were cleared. It is not a boundary: resuming reads from the last
// boundary and clears these results again as it meets the record.
type Cleared struct {
	Trigger                   string
	TokensBefore, TokensAfter int
	Duration                  time.Duration
	IDs                       []string
}

type clearedRecord struct {
	Type         string   `json:"type"` // "clear"
	Trigger      string   `json:"trigger"`
	TokensBefore int      `json:"tokensBefore"`
	TokensAfter  int      `json:"tokensAfter"`
	DurationMs   int64    `json:"durationMs"`
	IDs          []string `json:"ids"`
}

// WriteCleared appends the record of a cheap pass.
func (t *Transcript) WriteCleared(c Cleared) error {
	return t.write(clearedRecord{Type: "clear", Trigger: c.Trigger, TokensBefore: c.TokensBefore, TokensAfter: c.TokensAfter,
		DurationMs: c.Duration.Milliseconds(), IDs: c.IDs})
}

// boundaryPrefix starts every boundary line (json.Marshal writes the
// fields in order), which the backward search looks for.
var boundaryPrefix = []byte(`{"type":"compact"`)

// WriteBoundary appends a compaction boundary.
func (t *Transcript) WriteBoundary(b Boundary) error {
	r := boundaryRecord{Type: "compact", Trigger: b.Trigger, TokensBefore: b.TokensBefore, TokensAfter: b.TokensAfter,
		DurationMs: b.Duration.Milliseconds(), Turns: b.Turns}
	r.Usage = newUsageRecord(b.Usage)
	r.Daily = b.daily
	for _, m := range b.History {
		r.Messages = append(r.Messages, record{Type: "message", Role: string(m.Role), Parts: encodeParts(m.Content)})
	}
	for _, m := range b.Pending {
		r.Messages = append(r.Messages, record{Type: "message", Turn: b.PendingTurn, Role: string(m.Role), Parts: encodeParts(m.Content)})
	}
	if err := t.write(r); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f != nil {
		t.f.Sync()
	}
	return nil
}

// lastBoundary finds the last well-formed boundary of the file: its
// decoded record and the offset just after its line. ok is false when
// there is none. Damaged boundaries after it are reported in notes.
func lastBoundary(f *os.File, size int64) (rec boundaryRecord, after int64, notes []string, ok bool) {
	const block = 1 << 20
	end := size
	for end > 0 {
		start := max(end-block, 0)
		buf := make([]byte, end-start)
		if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
			return rec, 0, notes, false
		}
		// Search backwards within the block for a line that begins with the
		// boundary prefix.
		for i := len(buf); ; {
			j := bytes.LastIndex(buf[:i], boundaryPrefix)
			if j < 0 {
				break
			}
			lineStart := start + int64(j)
			if j > 0 && buf[j-1] != '\n' || j == 0 && start > 0 && !precededByNewline(f, start) {
				i = j
				continue // the prefix inside another line's text
			}
			r, next, err := readBoundaryAt(f, lineStart)
			if err == nil {
				return r, next, notes, true
			}
			notes = append(notes, fmt.Sprintf("a damaged compaction record at byte %d was skipped (%v); resuming from the one before it", lineStart, err))
			i = j
		}
		if start == 0 {
			break
		}
		// Overlap by the prefix's length, so a prefix across blocks is found.
		end = start + int64(len(boundaryPrefix)) - 1
		if end >= size || end <= 0 {
			break
		}
	}
	return rec, 0, notes, false
}

func precededByNewline(f *os.File, off int64) bool {
	b := make([]byte, 1)
	_, err := f.ReadAt(b, off-1)
	return err == nil && b[0] == '\n'
}

// readBoundaryAt decodes the boundary line starting at off and returns
// the offset after it.
func readBoundaryAt(f *os.File, off int64) (boundaryRecord, int64, error) {
	var r boundaryRecord
	br := bufio.NewReaderSize(io.NewSectionReader(f, off, 1<<62), 64<<10)
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		var acc []byte
		acc = append(acc, line...)
		for errors.Is(err, bufio.ErrBufferFull) && len(acc) <= maxTranscriptLine {
			line, err = br.ReadSlice('\n')
			acc = append(acc, line...)
		}
		line = acc
	}
	if err != nil {
		return r, 0, errors.New("the record is cut off")
	}
	if err := json.Unmarshal(line, &r); err != nil || r.Type != "compact" {
		return r, 0, errors.New("the record does not decode")
	}
	return r, off + int64(len(line)), nil
}

// LoadTranscript reads a session's transcript from its last compaction
// boundary (the whole file when there is none). Turns that ended in an
// error are left out of History (they were rolled back); a turn that
// never ended (a crash) is kept only if well-formed: its dangling tool
// calls are dropped.
func LoadTranscript(home, id string) (*Loaded, error) {
	if strings.ContainsAny(id, "/\\\x00") || id == "" || id[0] == '.' {
		return nil, fmt.Errorf("invalid session id %q", quote.V(id))
	}
	path := TranscriptPath(home, id)
	f, fi, err := securefile.Open(path, syscall.O_NOFOLLOW)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, after, notes, found := lastBoundary(f, fi.Size())
	if !found {
		l, err := readTranscript(f, path, nil)
		if l != nil {
			l.Notes = notes
		}
		return l, err
	}
	// The header, then the records after the boundary.
	hdr, err := bufio.NewReaderSize(io.NewSectionReader(f, 0, 64<<10), 64<<10).ReadSlice('\n')
	if err != nil {
		return nil, fmt.Errorf("%s: line 1: not a session transcript header", path)
	}
	start := &boundaryStart{header: hdr, turns: b.Turns, daily: b.Daily}
	for _, mr := range b.Messages {
		parts, err := decodeParts(mr.Parts)
		if err != nil {
			return nil, fmt.Errorf("%s: the compaction record: %w", path, err)
		}
		lm := LoadedMessage{Turn: mr.Turn, Message: providers.Message{Role: providers.Role(mr.Role), Content: parts}}
		if mr.Turn == "" {
			lm.Status = StatusComplete
		}
		start.history = append(start.history, lm)
	}
	l, err := readTranscript(io.NewSectionReader(f, after, fi.Size()-after), path, start)
	if l != nil {
		l.Notes = notes
		l.Boundary = &Boundary{Trigger: b.Trigger, TokensBefore: b.TokensBefore, TokensAfter: b.TokensAfter, Duration: time.Duration(b.DurationMs) * time.Millisecond, Turns: b.Turns}
	}
	return l, err
}

// boundaryStart is where reading resumes after a boundary.
type boundaryStart struct {
	header  []byte
	history []LoadedMessage
	turns   int
	daily   *dailyRecord
}

// turnNumber is the number of a turn id "<session>/<n>".
func turnNumber(turn string) (int, bool) {
	_, n, ok := strings.Cut(turn, "/")
	if !ok {
		return 0, false
	}
	k, err := strconv.Atoi(n)
	return k, err == nil
}
