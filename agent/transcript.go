package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"agent/agent/compact"
	"agent/agent/tools"
	"agent/config"
	"agent/internal/quote"
	"agent/internal/securefile"
	"agent/providers"
)

// Transcripts are append-only JSON lines under ~/.agent/sessions/ (0700
// directory, 0600 files), one file per session, so a session can be
// resumed (issue: session runtime). Each line is one record:
//
//	{"type":"session", "version":1, "id", "created", "workspace", "provider", "model"}
//	{"type":"message", "turn", "role", "parts":[...], "from", "claimedName", "usage"}
//	{"type":"turn", "turn", "status", "stopReason", "error", "usage"}
//	{"type":"compact", "trigger", "tokensBefore", "tokensAfter", "durationMs", "turns", "usage", "messages":[...]}
//	{"type":"clear", "trigger", "tokensBefore", "tokensAfter", "durationMs", "ids":[...]}
//	{"type":"todos", "todos":[...]}
//	{"type":"checkpoint", "turn", "time", "prompt"}
//	{"type":"file", "turn", "path", "before", "existed", "notSaved", "after", "added", "removed"}
//	{"type":"restore", "checkpoint", "files":{...}}
//	{"type":"usage", "turn", "agent", "provider", "model", "usage"}
//
// A message is written as soon as it is complete, so a crash loses at most
// the message being streamed.

// SessionsDir is ~/.agent/sessions.
func SessionsDir(home string) string { return filepath.Join(config.UserDir(home), "sessions") }

// maxTranscriptLine bounds one record when reading back.
const maxTranscriptLine = 64 << 20

// Header is a transcript's first record.
type Header struct {
	Type      string    `json:"type"`
	Version   int       `json:"version"`
	ID        string    `json:"id"`
	Created   time.Time `json:"created"`
	Workspace string    `json:"workspace"`
	Provider  string    `json:"provider,omitempty"`
	Model     string    `json:"model,omitempty"`
	// ForkedFrom and ForkedAt name the session and checkpoint a rewound
	// conversation was forked from (docs/reference/runtime.md,
	// "Checkpoints and /rewind").
	ForkedFrom string `json:"forkedFrom,omitempty"`
	ForkedAt   int    `json:"forkedAt,omitempty"`
}

type partRecord struct {
	Type      string          `json:"type"` // text, image, reasoning, tool_call, tool_result
	Text      string          `json:"text,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
	Data      []byte          `json:"data,omitempty"`
	URL       string          `json:"url,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Redacted  string          `json:"redacted,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	CallID    string          `json:"callId,omitempty"`
	IsError   bool            `json:"isError,omitempty"`
	Content   []partRecord    `json:"content,omitempty"`
}

type record struct {
	Type        string       `json:"type"`
	Turn        string       `json:"turn,omitempty"`
	Role        string       `json:"role,omitempty"`
	Parts       []partRecord `json:"parts,omitempty"`
	From        string       `json:"from,omitempty"`
	ClaimedName string       `json:"claimedName,omitempty"`
	Status      string       `json:"status,omitempty"`
	Usage       *usageRecord `json:"usage,omitempty"`
	StopReason  string       `json:"stopReason,omitempty"`
	Error       string       `json:"error,omitempty"`
	IDs         []string     `json:"ids,omitempty"` // a "clear" record's calls
	// A turn's record: the provider and model it ran with (/cost).
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
}

// usageRecord is a model call's usage (an answer's record) or a turn's
// (its end record), in the transcript (docs/reference/runtime.md, "Context
// management").
type usageRecord struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead,omitempty"`
	CacheWrite int `json:"cacheWrite,omitempty"`
	Reasoning  int `json:"reasoning,omitempty"`
}

func (u *usageRecord) usage() providers.Usage {
	return providers.Usage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite, ReasoningTokens: u.Reasoning}
}

func newUsageRecord(u providers.Usage) *usageRecord {
	if u == (providers.Usage{}) {
		return nil
	}
	return &usageRecord{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadTokens, CacheWrite: u.CacheWriteTokens, Reasoning: u.ReasoningTokens}
}

func encodeParts(ps []providers.Part) []partRecord {
	out := make([]partRecord, 0, len(ps))
	for _, p := range ps {
		switch v := p.(type) {
		case providers.Text:
			out = append(out, partRecord{Type: "text", Text: v.Text})
		case providers.Image:
			out = append(out, partRecord{Type: "image", MediaType: v.MediaType, Data: v.Data, URL: v.URL})
		case providers.Reasoning:
			out = append(out, partRecord{Type: "reasoning", Text: v.Text, Signature: v.Signature, Redacted: v.Redacted})
		case providers.ToolCall:
			out = append(out, partRecord{Type: "tool_call", ID: v.ID, Name: v.Name, Arguments: v.Arguments})
		case providers.ToolResult:
			out = append(out, partRecord{Type: "tool_result", CallID: v.CallID, IsError: v.IsError, Content: encodeParts(v.Content)})
		}
	}
	return out
}

func decodeParts(rs []partRecord) ([]providers.Part, error) {
	out := make([]providers.Part, 0, len(rs))
	for _, r := range rs {
		switch r.Type {
		case "text":
			out = append(out, providers.Text{Text: r.Text})
		case "image":
			out = append(out, providers.Image{MediaType: r.MediaType, Data: r.Data, URL: r.URL})
		case "reasoning":
			out = append(out, providers.Reasoning{Text: r.Text, Signature: r.Signature, Redacted: r.Redacted})
		case "tool_call":
			out = append(out, providers.ToolCall{ID: r.ID, Name: r.Name, Arguments: r.Arguments})
		case "tool_result":
			c, err := decodeParts(r.Content)
			if err != nil {
				return nil, err
			}
			out = append(out, providers.ToolResult{CallID: r.CallID, IsError: r.IsError, Content: c})
		default:
			return nil, fmt.Errorf("unknown part type %q", quote.V(r.Type))
		}
	}
	return out, nil
}

// Transcript appends a session's records. Safe for concurrent use.
type Transcript struct {
	mu   sync.Mutex
	f    *os.File
	path string
	err  error // the first write error; later writes are skipped
}

// TranscriptPath is the file of a session.
func TranscriptPath(home, id string) string {
	return filepath.Join(SessionsDir(home), id+".jsonl")
}

// CreateTranscript starts a new transcript; it never overwrites one.
func CreateTranscript(home string, h Header) (*Transcript, error) {
	return CreateTranscriptIn(SessionsDir(home), h)
}

// CreateTranscriptIn starts a new transcript in dir (a subagent's, beside
// its parent's).
func CreateTranscriptIn(dir string, h Header) (*Transcript, error) {
	if strings.ContainsAny(h.ID, "/\\\x00") || h.ID == "" || h.ID[0] == '.' {
		return nil, fmt.Errorf("invalid session id %q", quote.V(h.ID))
	}
	if err := securefile.EnsureDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, h.ID+".jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating transcript: %w", err)
	}
	t := &Transcript{f: f, path: path}
	h.Type, h.Version = "session", 1
	if h.Created.IsZero() {
		h.Created = time.Now().UTC()
	}
	if err := t.write(h); err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

// OpenTranscript reopens a stored transcript to append the turns of a
// resumed session. A torn last line (a crash mid-write) is ended first so
// the next record starts on its own line.
func OpenTranscript(home, id string) (*Transcript, error) {
	if strings.ContainsAny(id, "/\\\x00") || id == "" || id[0] == '.' {
		return nil, fmt.Errorf("invalid session id %q", quote.V(id))
	}
	path := TranscriptPath(home, id)
	// O_NONBLOCK: never wait on a FIFO in the transcript's place (it is
	// refused just below).
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("opening transcript: %w", err)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("opening transcript %s: not a regular file", path)
	}
	t := &Transcript{f: f, path: path}
	if n := fi.Size(); n > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, n-1); err != nil {
			f.Close()
			return nil, fmt.Errorf("reading transcript %s: %w", path, err)
		}
		if last[0] != '\n' {
			if _, err := f.Write([]byte{'\n'}); err != nil {
				f.Close()
				return nil, fmt.Errorf("writing transcript %s: %w", path, err)
			}
		}
	}
	return t, nil
}

// Path is the transcript's file.
func (t *Transcript) Path() string { return t.path }

func (t *Transcript) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return t.err
	}
	if _, err := t.f.Write(append(b, '\n')); err != nil {
		t.err = fmt.Errorf("writing transcript %s: %w", t.path, err)
		return t.err
	}
	return nil
}

// Close syncs and closes the file; idempotent.
func (t *Transcript) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f == nil {
		return nil
	}
	t.f.Sync()
	err := t.f.Close()
	t.f = nil
	if t.err == nil {
		t.err = os.ErrClosed
	}
	return err
}

func (s *Session) record(t *Turn, m providers.Message, req TurnRequest) {
	s.recordUsage(t, m, req, providers.Usage{})
}

// recordUsage records a message with the usage of the call that produced
// it.
func (s *Session) recordUsage(t *Turn, m providers.Message, req TurnRequest, u providers.Usage) {
	if s.opts.Transcript == nil {
		return
	}
	if err := s.opts.Transcript.write(record{Type: "message", Turn: t.ID, Role: string(m.Role), Parts: encodeParts(m.Content), From: req.From, ClaimedName: req.ClaimedName, Usage: newUsageRecord(u)}); err != nil {
		s.log.Warn("transcript", "err", err)
	}
}

func (s *Session) recordEnd(t *Turn, res TurnResult) {
	if s.opts.Transcript == nil {
		return
	}
	provider, model := s.Model()
	r := record{Type: "turn", Turn: t.ID, Status: string(res.Status), StopReason: res.StopReason, Usage: newUsageRecord(res.Usage),
		Provider: provider, Model: model}
	if res.Err != nil {
		r.Error = res.Err.Error()
	}
	s.addCost(TurnCost{Turn: t.ID, Provider: provider, Model: model, Usage: res.Usage})
	s.opts.Transcript.write(r)
	s.opts.Transcript.mu.Lock()
	if s.opts.Transcript.f != nil {
		s.opts.Transcript.f.Sync()
	}
	s.opts.Transcript.mu.Unlock()
}

// Loaded is a transcript read back for resuming.
type Loaded struct {
	Header   Header
	History  []providers.Message // the conversation, failed turns left out
	Messages []LoadedMessage     // every message with its turn and sender, for display
	// Turns is the highest turn number recorded: a resumed session
	// numbers its turns after it so ids stay unique in the file.
	Turns int
	// Boundary is the compaction the history starts from; nil when the
	// history is the whole transcript.
	Boundary *Boundary
	// Notes say what reading passed over (a damaged compaction record).
	Notes []string
	// Todos is the todo list as last recorded.
	Todos []tools.Todo

	daily dailyLoaded // checkpoints and usage (daily.go)
}

// LoadedMessage is one message with where it came from.
type LoadedMessage struct {
	Turn        string
	Message     providers.Message
	From        string
	ClaimedName string
	Status      Status // the turn's status ("" if it never ended)
}

// readTranscript reads records: the whole file when start is nil, else
// the records after a compaction boundary, with start's header and
// rebuilt history first.
func readTranscript(r io.Reader, path string, start *boundaryStart) (*Loaded, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxTranscriptLine)
	l := &Loaded{}
	status := map[string]Status{}
	line := 0
	if start != nil {
		if err := json.Unmarshal(start.header, &l.Header); err != nil || l.Header.Type != "session" || l.Header.Version != 1 {
			return nil, fmt.Errorf("%s: line 1: not a session transcript header", path)
		}
		l.Messages = append(l.Messages, start.history...)
		l.Turns = start.turns
		l.startDaily(start.daily)
		line = 1 // the header is read; lines count from the boundary on
	}
	for sc.Scan() {
		line++
		if line == 1 {
			if err := json.Unmarshal(sc.Bytes(), &l.Header); err != nil || l.Header.Type != "session" || l.Header.Version != 1 {
				return nil, fmt.Errorf("%s: line 1: not a session transcript header", path)
			}
			continue
		}
		if start == nil && bytes.HasPrefix(sc.Bytes(), boundaryPrefix) {
			// A damaged boundary (the backward search passed over it):
			// the records before it stay.
			continue
		}
		var rec record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			// A torn line (a crash mid-write) is skipped: a resumed
			// session appends after it (OpenTranscript).
			continue
		}
		if k, ok := turnNumber(rec.Turn); ok && k > l.Turns {
			l.Turns = k
		}
		switch rec.Type {
		case "message":
			parts, err := decodeParts(rec.Parts)
			if err != nil {
				return nil, fmt.Errorf("%s: line %d: %w", path, line, err)
			}
			l.Messages = append(l.Messages, LoadedMessage{Turn: rec.Turn, Message: providers.Message{Role: providers.Role(rec.Role), Content: parts}, From: rec.From, ClaimedName: rec.ClaimedName})
		case "turn":
			status[rec.Turn] = Status(rec.Status)
			if u := rec.Usage; u != nil {
				l.daily.costs.add(TurnCost{Turn: rec.Turn, Provider: rec.Provider, Model: rec.Model, Usage: u.usage()})
			}
		case "clear":
			clearLoaded(l.Messages, rec.IDs)
		default:
			l.readDaily(rec.Type, sc.Bytes())
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	for i := range l.Messages {
		if l.Messages[i].Turn != "" {
			l.Messages[i].Status = status[l.Messages[i].Turn]
		}
	}
	for _, m := range l.Messages {
		if m.Status == StatusError {
			continue
		}
		l.History = append(l.History, m.Message)
	}
	l.History = wellFormed(l.History)
	return l, nil
}

// clearLoaded applies a cheap pass's record to the messages read so far.
func clearLoaded(ms []LoadedMessage, ids []string) {
	msgs := make([]providers.Message, len(ms))
	for i := range ms {
		msgs[i] = ms[i].Message
	}
	cleared, freed := compact.ClearResults(msgs, ids)
	if freed == 0 {
		return
	}
	for i := range ms {
		ms[i].Message = cleared[i]
	}
}

// wellFormed drops tool calls that have no result (a crash between the
// answer and its tool results) so the conversation can be sent again.
func wellFormed(h []providers.Message) []providers.Message {
	answered := map[string]bool{}
	for _, m := range h {
		for _, p := range m.Content {
			if r, ok := p.(providers.ToolResult); ok {
				answered[r.CallID] = true
			}
		}
	}
	out := h[:0:0]
	for _, m := range h {
		if m.Role == providers.RoleAssistant {
			kept := providers.Message{Role: m.Role}
			for _, p := range m.Content {
				if c, ok := p.(providers.ToolCall); ok && !answered[c.ID] {
					continue
				}
				kept.Content = append(kept.Content, p)
			}
			if len(kept.Content) == 0 {
				continue
			}
			m = kept
		}
		out = append(out, m)
	}
	return out
}

// SessionInfo summarises a stored transcript for a picker.
type SessionInfo struct {
	ID        string
	Created   time.Time
	Workspace string
	Modified  time.Time
}

// ListTranscripts lists stored sessions, newest first.
func ListTranscripts(home string) ([]SessionInfo, error) {
	ents, err := os.ReadDir(SessionsDir(home))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []SessionInfo
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || e.IsDir() {
			continue
		}
		f, _, err := securefile.Open(filepath.Join(SessionsDir(home), e.Name()), syscall.O_NOFOLLOW)
		if err != nil {
			continue // a FIFO or a link in the folder is not a session
		}
		var h Header
		line, _ := bufio.NewReader(io.LimitReader(f, 64<<10)).ReadBytes('\n')
		f.Close()
		if json.Unmarshal(line, &h) != nil || h.Type != "session" {
			continue
		}
		info := SessionInfo{ID: id, Created: h.Created, Workspace: h.Workspace}
		if fi, err := e.Info(); err == nil {
			info.Modified = fi.ModTime()
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Modified.After(out[j].Modified) })
	return out, nil
}
