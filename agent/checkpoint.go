package agent

// Checkpoints and rewinding (docs/reference/runtime.md, "Checkpoints and
// /rewind"): every user prompt opens a checkpoint; before Write or Edit
// first changes a file in that turn, its content (or its absence) is saved
// under the session's folder, named by its SHA-256 (0600), and the
// transcript records the path, the hash before and after, and the lines
// added and removed. Restoring code writes a saved content back only over
// a file that still has the hash the session last left it with; anything
// else is a conflict and is never overwritten. Restoring the conversation
// forks the transcript (checkpoint_fork.go).

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"agent/agent/tools"
	"agent/internal/securefile"
)

// Bounds of checkpoints.
const (
	MaxCheckpoints   = 100
	MaxSavedFileSize = 8 << 20 // a larger file's content is not saved
)

// Checkpoint is the state before one user prompt: what the following
// turn's Write and Edit calls changed.
type Checkpoint struct {
	Turn   int          `json:"n"` // the turn's number: what `agent session rewind` takes
	TurnID string       `json:"turn"`
	Prompt string       `json:"prompt"` // as the user typed it
	Time   time.Time    `json:"time"`
	Files  []FileChange `json:"files,omitempty"` // in the order of their first change
}

// FileChange is one file's change within a checkpoint's turn.
type FileChange struct {
	Path string `json:"path"` // the real path
	// Before is the SHA-256 (hex) of the content saved before the turn's
	// first change; Existed is false when there was no file.
	Before  string `json:"before,omitempty"`
	Existed bool   `json:"existed"`
	// NotSaved says why the content before was not saved (over 8 MiB, not
	// readable); such a file cannot be restored.
	NotSaved string `json:"notSaved,omitempty"`
	// After is the hash after the turn's last change.
	After   string `json:"after"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
}

// checkpointIndex is what the transcript knows of a session's
// checkpoints: the newest 100, and the hash each file was last left with
// by the session ("" for a file it removed by restoring), which a restore
// compares with the file's content to find conflicts.
type checkpointIndex struct {
	Checkpoints []Checkpoint      `json:"checkpoints,omitempty"`
	Last        map[string]string `json:"last,omitempty"`
}

func (x *checkpointIndex) clone() checkpointIndex {
	c := checkpointIndex{Checkpoints: make([]Checkpoint, len(x.Checkpoints)), Last: make(map[string]string, len(x.Last))}
	for i, cp := range x.Checkpoints {
		cp.Files = append([]FileChange(nil), cp.Files...)
		c.Checkpoints[i] = cp
	}
	for k, v := range x.Last {
		c.Last[k] = v
	}
	return c
}

// open adds a checkpoint, dropping the oldest beyond 100; it reports
// whether one was dropped.
func (x *checkpointIndex) open(cp Checkpoint) bool {
	x.Checkpoints = append(x.Checkpoints, cp)
	if len(x.Checkpoints) > MaxCheckpoints {
		x.Checkpoints = append(x.Checkpoints[:0:0], x.Checkpoints[len(x.Checkpoints)-MaxCheckpoints:]...)
		return true
	}
	return false
}

// change records a file change of the checkpoint turnID.
func (x *checkpointIndex) change(turnID string, fc FileChange) {
	if x.Last == nil {
		x.Last = map[string]string{}
	}
	x.Last[fc.Path] = fc.After
	for i := len(x.Checkpoints) - 1; i >= 0; i-- {
		cp := &x.Checkpoints[i]
		if cp.TurnID != turnID {
			continue
		}
		for j := range cp.Files {
			if cp.Files[j].Path == fc.Path {
				cp.Files[j] = fc
				return
			}
		}
		cp.Files = append(cp.Files, fc)
		return
	}
}

// find returns the checkpoint of turn number n.
func (x *checkpointIndex) find(n int) (int, bool) {
	for i, cp := range x.Checkpoints {
		if cp.Turn == n {
			return i, true
		}
	}
	return 0, false
}

// saved are the hashes of every content the checkpoints need.
func (x *checkpointIndex) saved() map[string]bool {
	m := map[string]bool{}
	for _, cp := range x.Checkpoints {
		for _, f := range cp.Files {
			if f.Before != "" {
				m[f.Before] = true
			}
		}
	}
	return m
}

// Records of checkpoints in the transcript.
type checkpointRecord struct {
	Type   string    `json:"type"` // "checkpoint"
	Turn   string    `json:"turn"`
	Time   time.Time `json:"time"`
	Prompt string    `json:"prompt"`
}

type fileRecord struct {
	Type string `json:"type"` // "file"
	Turn string `json:"turn"`
	FileChange
}

type restoreRecord struct {
	Type  string            `json:"type"` // "restore"
	At    int               `json:"checkpoint"`
	Files map[string]string `json:"files"` // path → the hash it was restored to ("" removed)
}

// checkpoints is a session's checkpoint state.
type checkpoints struct {
	mu  sync.Mutex
	dir string // the session's folder of saved contents; "" without a transcript
	idx checkpointIndex
	// cur is the checkpoint of the running turn; pending are the contents
	// saved before a change that has not succeeded yet.
	cur     string
	pending map[string]FileChange
}

// SessionDir is the folder of a session's saved files (beside its
// transcript).
func SessionDir(home, id string) string { return filepath.Join(SessionsDir(home), id) }

// savedPath is where a content with this hash is kept.
func savedPath(dir, hash string) string { return filepath.Join(dir, "files", hash) }

// openCheckpoint opens the checkpoint of a user prompt's turn.
func (s *Session) openCheckpoint(t *Turn) {
	if t.Req.From != "" || t.Req.Compact || s.opts.Parent != nil {
		return // not the user's prompt; a subagent's task is its parent's turn
	}
	n, _ := turnNumber(t.ID)
	cp := Checkpoint{Turn: n, TurnID: t.ID, Prompt: t.Req.display(), Time: time.Now().UTC()}
	if t.Req.Shell {
		cp.Prompt = "!" + t.Req.Prompt
	}
	s.cp.mu.Lock()
	dropped := s.cp.idx.open(cp)
	s.cp.cur, s.cp.pending = t.ID, nil
	var keep map[string]bool
	if dropped {
		keep = s.cp.idx.saved()
	}
	dir := s.cp.dir
	s.cp.mu.Unlock()
	if s.opts.Transcript != nil {
		if err := s.opts.Transcript.write(checkpointRecord{Type: "checkpoint", Turn: t.ID, Time: cp.Time, Prompt: cp.Prompt}); err != nil {
			s.log.Warn("transcript", "err", err)
		}
	}
	if dropped && dir != "" {
		pruneSaved(dir, keep)
	}
}

// pruneSaved deletes the saved contents no checkpoint needs any more.
func pruneSaved(dir string, keep map[string]bool) {
	ents, err := os.ReadDir(filepath.Join(dir, "files"))
	if err != nil {
		return
	}
	for _, e := range ents {
		if !keep[e.Name()] && !strings.HasPrefix(e.Name(), ".") {
			os.Remove(filepath.Join(dir, "files", e.Name()))
		}
	}
}

// checkpointOwner is the session whose checkpoint a call of turn t
// joins, and that checkpoint's turn: this session's and t's, or for a
// subagent its parent's running turn.
func (s *Session) checkpointOwner(t *Turn) (*Session, string) {
	if p := s.opts.Parent; p != nil {
		p.cp.mu.Lock()
		defer p.cp.mu.Unlock()
		return p, p.cp.cur
	}
	return s, t.ID
}

// beforeChange saves a file's content before a Write or Edit of the
// running user turn changes it for the first time in that turn.
func (s *Session) beforeChange(t *Turn, spec tools.Spec, target tools.Target) {
	if t == nil || spec.Risk != tools.RiskModify || target.Kind != tools.TargetPath {
		return
	}
	o, turn := s.checkpointOwner(t)
	o.cp.mu.Lock()
	defer o.cp.mu.Unlock()
	if o.cp.cur != turn || o.cp.dir == "" {
		return
	}
	if _, ok := o.cp.pending[target.Value]; ok {
		return
	}
	if _, ok := o.cp.idx.changed(turn, target.Value); ok {
		return
	}
	fc := saveContent(o.cp.dir, target.Value)
	if o.cp.pending == nil {
		o.cp.pending = map[string]FileChange{}
	}
	o.cp.pending[target.Value] = fc
}

// changed returns the change of path recorded in turnID's checkpoint.
func (x *checkpointIndex) changed(turnID, path string) (FileChange, bool) {
	for i := len(x.Checkpoints) - 1; i >= 0; i-- {
		if x.Checkpoints[i].TurnID != turnID {
			continue
		}
		for _, f := range x.Checkpoints[i].Files {
			if f.Path == path {
				return f, true
			}
		}
	}
	return FileChange{}, false
}

// afterChange records a successful Write or Edit: the hash after it and
// the lines it added and removed.
func (s *Session) afterChange(t *Turn, spec tools.Spec, target tools.Target, r tools.Result) {
	if t == nil || spec.Risk != tools.RiskModify || target.Kind != tools.TargetPath {
		return
	}
	o, turn := s.checkpointOwner(t)
	o.cp.mu.Lock()
	if o.cp.cur != turn || o.cp.dir == "" {
		o.cp.mu.Unlock()
		return
	}
	fc, ok := o.cp.idx.changed(turn, target.Value)
	if p, pending := o.cp.pending[target.Value]; pending {
		fc, ok = p, true
		delete(o.cp.pending, target.Value)
	}
	if !ok || r.IsError {
		o.cp.mu.Unlock()
		return // nothing changed: a later try saves the content again
	}
	fc.After = hashFile(target.Value)
	a, d := tools.DiffCounts(r.Display)
	fc.Added += a
	fc.Removed += d
	o.cp.idx.change(turn, fc)
	o.cp.mu.Unlock()
	if o.opts.Transcript != nil {
		if err := o.opts.Transcript.write(fileRecord{Type: "file", Turn: turn, FileChange: fc}); err != nil {
			o.log.Warn("transcript", "err", err)
		}
	}
}

// saveContent saves path's content under dir by its hash and describes
// it as a change's "before".
func saveContent(dir, path string) FileChange {
	fc := FileChange{Path: path}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fc // absent: restoring removes it
	case err != nil:
		fc.Existed, fc.NotSaved = true, "not readable: "+err.Error()
		return fc
	}
	fc.Existed = true
	if fi.Mode().IsRegular() && fi.Size() > MaxSavedFileSize {
		fc.NotSaved = "over 8 MiB, not saved"
		return fc
	}
	data, err := securefile.ReadFile(path, MaxSavedFileSize)
	if err != nil {
		if errors.Is(err, securefile.ErrTooLarge) {
			fc.NotSaved = "over 8 MiB, not saved"
		} else {
			fc.NotSaved = "not readable: " + err.Error()
		}
		return fc
	}
	sum := sha256.Sum256(data)
	fc.Before = hex.EncodeToString(sum[:])
	if err := storeSaved(dir, fc.Before, data); err != nil {
		fc.Before, fc.NotSaved = "", "could not be saved: "+err.Error()
	}
	return fc
}

// storeSaved writes a content under its hash (0600 in 0700 folders); an
// existing copy is kept.
func storeSaved(dir, hash string, data []byte) error {
	if err := securefile.EnsureDir(filepath.Join(dir, "files")); err != nil {
		return err
	}
	err := securefile.CreateExclusive(savedPath(dir, hash), data)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	return err
}

// hashFile is the SHA-256 of a file's content, "" when there is no file
// (or it cannot be read, which no recorded hash matches).
func hashFile(path string) string {
	f, _, err := securefile.Open(path, syscall.O_NOFOLLOW)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ""
		}
		return "unreadable"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unreadable"
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Checkpoints are the session's checkpoints, oldest first.
func (s *Session) Checkpoints() []Checkpoint {
	s.cp.mu.Lock()
	defer s.cp.mu.Unlock()
	return s.cp.idx.clone().Checkpoints
}

// ErrNoCheckpoint: the session has no checkpoint of that number.
var ErrNoCheckpoint = errors.New("no such checkpoint")

// RestoreReport says what restoring code did, file by file.
type RestoreReport struct {
	Restored []string // written back
	Removed  []string // created after the checkpoint, removed
	// Conflicts were changed since the session last changed them (by
	// Bash, the user or an editor): never overwritten.
	Conflicts []Conflict
	// Unrestorable could not be restored: the content was not saved, or
	// its saved copy is missing or damaged.
	Unrestorable []Unrestorable
	// Unchanged were already as at the checkpoint.
	Unchanged []string
}

// Conflict is a file a restore left alone; Diff is from the content the
// restore would write to the file as it is.
type Conflict struct{ Path, Diff string }

// Unrestorable is a file whose content before the checkpoint is not
// available, and why.
type Unrestorable struct{ Path, Why string }

// OK reports whether every file was restored.
func (r RestoreReport) OK() bool { return len(r.Conflicts) == 0 && len(r.Unrestorable) == 0 }

// Text is the report as lines for the user.
func (r RestoreReport) Text() string {
	var b strings.Builder
	for _, p := range r.Restored {
		fmt.Fprintf(&b, "restored %s\n", p)
	}
	for _, p := range r.Removed {
		fmt.Fprintf(&b, "removed %s (it did not exist at the checkpoint)\n", p)
	}
	for _, u := range r.Unrestorable {
		fmt.Fprintf(&b, "not restored %s: %s\n", u.Path, u.Why)
	}
	for _, c := range r.Conflicts {
		fmt.Fprintf(&b, "conflict %s: changed since the session last changed it (by Bash, you or an editor); not overwritten\n", c.Path)
		if c.Diff != "" {
			b.WriteString(c.Diff)
			if !strings.HasSuffix(c.Diff, "\n") {
				b.WriteByte('\n')
			}
		}
	}
	switch {
	case b.Len() > 0:
	case len(r.Unchanged) > 0:
		b.WriteString("The files are already as they were at the checkpoint.\n")
	default:
		b.WriteString("No file was changed by Write or Edit since the checkpoint.\n")
	}
	return b.String()
}

// restorePlan is, for each file the session changed at or after a
// checkpoint, the change that holds its content at the checkpoint.
func (x *checkpointIndex) restorePlan(n int) ([]FileChange, error) {
	i, ok := x.find(n)
	if !ok {
		return nil, fmt.Errorf("%w %d", ErrNoCheckpoint, n)
	}
	seen := map[string]bool{}
	var out []FileChange
	for _, cp := range x.Checkpoints[i:] {
		for _, f := range cp.Files {
			if !seen[f.Path] {
				seen[f.Path] = true
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// restoreCode writes back the content each file had at checkpoint n,
// where the file still has the hash the session last left it with. It
// returns what it did and the new hashes of the files it wrote.
func restoreCode(dir, ws string, x *checkpointIndex, n int) (RestoreReport, map[string]string, error) {
	plan, err := x.restorePlan(n)
	if err != nil {
		return RestoreReport{}, nil, err
	}
	var rep RestoreReport
	done := map[string]string{}
	for _, f := range plan {
		name := displayPath(ws, f.Path)
		want, known := x.Last[f.Path]
		if !known {
			want = f.After
		}
		content, why := savedContent(dir, f)
		cur := hashFile(f.Path)
		if f.Existed && f.Before != "" && cur == f.Before || !f.Existed && cur == "" {
			rep.Unchanged = append(rep.Unchanged, name)
			continue
		}
		if cur != want {
			c := Conflict{Path: name}
			if why == "" {
				now, _ := securefile.ReadFile(f.Path, MaxSavedFileSize)
				c.Diff = tools.UnifiedDiff(name, string(content), string(now))
			}
			rep.Conflicts = append(rep.Conflicts, c)
			continue
		}
		switch {
		case why != "":
			rep.Unrestorable = append(rep.Unrestorable, Unrestorable{Path: name, Why: why})
		case !f.Existed:
			if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				rep.Unrestorable = append(rep.Unrestorable, Unrestorable{Path: name, Why: "could not remove it: " + err.Error()})
				continue
			}
			rep.Removed = append(rep.Removed, name)
			done[f.Path] = ""
		default:
			if err := securefile.ReplaceFile(f.Path, content, 0o644); err != nil {
				rep.Unrestorable = append(rep.Unrestorable, Unrestorable{Path: name, Why: "could not write it: " + err.Error()})
				continue
			}
			rep.Restored = append(rep.Restored, name)
			done[f.Path] = f.Before
		}
	}
	return rep, done, nil
}

// savedContent reads the content a change saved; why says what is wrong
// when it cannot (a file created after the checkpoint has no content and
// no problem).
func savedContent(dir string, f FileChange) ([]byte, string) {
	switch {
	case f.NotSaved != "":
		return nil, f.NotSaved
	case !f.Existed:
		return nil, ""
	}
	data, err := securefile.ReadFile(savedPath(dir, f.Before), MaxSavedFileSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, "its saved copy is missing"
	case err != nil:
		return nil, "its saved copy cannot be read: " + err.Error()
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != f.Before {
		return nil, "its saved copy is damaged (the content does not match its hash)"
	}
	return data, ""
}

// displayPath is a path relative to the workspace when inside it.
func displayPath(ws, p string) string {
	if ws != "" && tools.WithinDir(p, ws) && p != ws {
		if rel, err := filepath.Rel(ws, p); err == nil {
			return rel
		}
	}
	return p
}

// RestoreCode restores the files the session changed since checkpoint n
// (docs/reference/runtime.md, "Checkpoints and /rewind"): each file whose
// content still has the hash the session left it with gets its content
// at the checkpoint back; the others are conflicts, never overwritten.
// The restore is recorded, so that a later rewind compares with the
// restored contents.
func (s *Session) RestoreCode(n int) (RestoreReport, error) {
	if s.Busy() {
		return RestoreReport{}, errors.New("a turn is running: wait for it to end, or abort it, before restoring")
	}
	s.cp.mu.Lock()
	defer s.cp.mu.Unlock()
	if s.cp.dir == "" {
		return RestoreReport{}, errors.New("this session keeps no checkpoints (it has no transcript)")
	}
	rep, done, err := restoreCode(s.cp.dir, s.opts.Workspace, &s.cp.idx, n)
	if err != nil {
		return rep, err
	}
	s.noteRestore(n, done)
	return rep, nil
}

// noteRestore records restored files as the hashes the session last left
// them with; the caller holds s.cp.mu.
func (s *Session) noteRestore(n int, done map[string]string) {
	if len(done) == 0 {
		return
	}
	if s.cp.idx.Last == nil {
		s.cp.idx.Last = map[string]string{}
	}
	for p, h := range done {
		s.cp.idx.Last[p] = h
	}
	if s.opts.Transcript != nil {
		if err := s.opts.Transcript.write(restoreRecord{Type: "restore", At: n, Files: done}); err != nil {
			s.log.Warn("transcript", "err", err)
		}
	}
}
