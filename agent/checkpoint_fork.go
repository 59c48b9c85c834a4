package agent

// Restoring a conversation to a checkpoint, and rewinding a stored session
// (docs/reference/runtime.md, "Checkpoints and /rewind"): the transcript
// is forked, never rewritten. The fork is a new session whose transcript
// holds the records before the checkpoint's turn, under a new header that
// names where it came from, with the saved contents its checkpoints need
// linked into its own folder; the old session stays as it was.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"agent/internal/quote"
	"agent/internal/securefile"
)

// Fork is a conversation restored to a checkpoint: the new session, and
// the checkpoint's prompt, which the user may send again.
type Fork struct {
	ID     string
	Prompt string
}

// ForkTranscript forks the stored session id of the workspace ws before
// checkpoint n: a new session with the conversation as it was when the
// checkpoint's prompt was typed.
func ForkTranscript(home, id, ws string, n int) (Fork, error) {
	l, err := LoadTranscript(home, id)
	if err != nil {
		return Fork{}, err
	}
	if err := sameWorkspace(l, id, ws); err != nil {
		return Fork{}, err
	}
	i, ok := l.daily.checkpoints.find(n)
	if !ok {
		return Fork{}, checkpointError(l, n)
	}
	prompt := l.daily.checkpoints.Checkpoints[i].Prompt
	f, _, err := securefile.Open(TranscriptPath(home, id), syscall.O_NOFOLLOW)
	if err != nil {
		return Fork{}, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	if _, err := readLine(br); err != nil {
		return Fork{}, fmt.Errorf("%s: line 1: not a session transcript header", TranscriptPath(home, id))
	}
	h := l.Header
	nid := NewID()
	t, err := CreateTranscript(home, Header{ID: nid, Workspace: h.Workspace, Provider: h.Provider, Model: h.Model, ForkedFrom: id, ForkedAt: n})
	if err != nil {
		return Fork{}, err
	}
	ok = false
	defer func() {
		t.Close()
		if !ok {
			os.Remove(t.Path())
			os.RemoveAll(SessionDir(home, nid))
		}
	}()
	found := false
	for {
		line, err := readLine(br)
		if err != nil {
			break // the end, or a torn last line, which is not copied
		}
		var head struct{ Turn string }
		if json.Unmarshal(line, &head) == nil {
			if k, isTurn := turnNumber(head.Turn); isTurn && k == n {
				found = true
				break
			}
		}
		if err := t.writeRaw(line); err != nil {
			return Fork{}, err
		}
	}
	if !found {
		return Fork{}, fmt.Errorf("the transcript of %s holds no record of turn %d", id, n)
	}
	if err := t.Close(); err != nil {
		return Fork{}, err
	}
	// The saved contents the fork's checkpoints need, in its own folder.
	fl, err := LoadTranscript(home, nid)
	if err != nil {
		return Fork{}, err
	}
	for hash := range fl.daily.checkpoints.saved() {
		if err := linkSaved(SessionDir(home, id), SessionDir(home, nid), hash); err != nil {
			return Fork{}, err
		}
	}
	ok = true
	return Fork{ID: nid, Prompt: prompt}, nil
}

// sameWorkspace refuses a stored session of another workspace.
func sameWorkspace(l *Loaded, id, ws string) error {
	if filepath.Clean(l.Header.Workspace) != ws {
		return fmt.Errorf("the session %s belongs to the workspace %s, not %s", id, quote.V(l.Header.Workspace), ws)
	}
	return nil
}

// checkpointError says why there is no checkpoint n.
func checkpointError(l *Loaded, n int) error {
	cps := l.daily.checkpoints.Checkpoints
	if len(cps) == 0 {
		return fmt.Errorf("%w %d: the session has no checkpoints", ErrNoCheckpoint, n)
	}
	return fmt.Errorf("%w %d: the session's checkpoints are %d to %d (the newest %d are kept)", ErrNoCheckpoint, n, cps[0].Turn, cps[len(cps)-1].Turn, MaxCheckpoints)
}

// readLine reads one whole line (at most 64 MiB) with its newline; a
// last line without one is an error (a torn write).
func readLine(br *bufio.Reader) ([]byte, error) {
	var acc []byte
	for {
		part, err := br.ReadSlice('\n')
		acc = append(acc, part...)
		switch {
		case err == nil:
			return acc, nil
		case errors.Is(err, bufio.ErrBufferFull) && len(acc) <= maxTranscriptLine:
			continue
		case err == io.EOF && len(acc) > 0:
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
}

// writeRaw appends lines read from another transcript.
func (t *Transcript) writeRaw(b []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return t.err
	}
	if _, err := t.f.Write(b); err != nil {
		t.err = fmt.Errorf("writing transcript %s: %w", t.path, err)
		return t.err
	}
	return nil
}

// linkSaved gives the session folder to a saved content of from: a hard
// link, else a copy. A content from has lost is left out (the fork lists
// it as missing when restoring).
func linkSaved(from, to, hash string) error {
	if err := securefile.EnsureDir(filepath.Join(to, "files")); err != nil {
		return err
	}
	src, dst := savedPath(from, hash), savedPath(to, hash)
	err := os.Link(src, dst)
	switch {
	case err == nil, errors.Is(err, fs.ErrExist):
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return nil
	}
	data, rerr := securefile.ReadFile(src, MaxSavedFileSize)
	if rerr != nil {
		return nil
	}
	return storeSaved(to, hash, data)
}

// StoredCheckpoints are a stored session's checkpoints, oldest first.
func StoredCheckpoints(home, id string) ([]Checkpoint, error) {
	l, err := LoadTranscript(home, id)
	if err != nil {
		return nil, err
	}
	return l.Checkpoints(), nil
}

// RestoreStoredCode restores the code of a stored session to checkpoint
// n, as /rewind does in a running one; the restore is appended to the
// session's transcript. ws is the workspace the caller runs in: the
// session must belong to it.
func RestoreStoredCode(home, id, ws string, n int) (RestoreReport, error) {
	l, err := LoadTranscript(home, id)
	if err != nil {
		return RestoreReport{}, err
	}
	if err := sameWorkspace(l, id, ws); err != nil {
		return RestoreReport{}, err
	}
	if _, ok := l.daily.checkpoints.find(n); !ok {
		return RestoreReport{}, checkpointError(l, n)
	}
	rep, done, err := restoreCode(SessionDir(home, id), ws, &l.daily.checkpoints, n)
	if err != nil || len(done) == 0 {
		return rep, err
	}
	t, err := OpenTranscript(home, id)
	if err != nil {
		return rep, fmt.Errorf("the files are restored, but the restore could not be recorded: %w", err)
	}
	defer t.Close()
	if err := t.write(restoreRecord{Type: "restore", At: n, Files: done}); err != nil {
		return rep, fmt.Errorf("the files are restored, but the restore could not be recorded: %w", err)
	}
	return rep, nil
}

// CheckpointLine describes a checkpoint on one line: its number, time,
// files with their +/- counts, and the files whose content was not saved.
func CheckpointLine(cp Checkpoint, ws string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d\t%s\t", cp.Turn, cp.Time.Local().Format(time.DateTime))
	if len(cp.Files) == 0 {
		b.WriteString("no file changes")
	}
	for i, f := range cp.Files {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s +%d -%d", displayPath(ws, f.Path), f.Added, f.Removed)
		if f.NotSaved != "" {
			fmt.Fprintf(&b, " (%s)", f.NotSaved)
		}
	}
	return b.String()
}
