// Package keymap loads the keybindings overrides file for the terminal UI:
// it reads and validates ~/.agent/keybindings.json, watches it while the UI
// runs and hands over each valid change, keeps the last valid bindings when
// the file turns invalid and reports its problems once, and creates the
// sparse file for the /keybindings command (docs/reference/keybindings.md,
// "Location and loading").
//
// Validation itself is pure and lives in tui/keys (docs/design.md, "The
// keybindings file lives in `tui/keys` and `tui/keymap`, not `config`").
//
// Imports: the standard library, agent/tui/keys and agent/internal/*.
package keymap

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"agent/internal/securefile"
	"agent/tui/keys"
)

// FileName is the overrides file's name inside ~/.agent.
const FileName = "keybindings.json"

// Schema is the $schema string of the file that Create writes. The file
// format leaves $schema free (docs/reference/keybindings.md, "File
// format"); a URN names the format and version without pretending to be
// a fetchable address.
const Schema = "urn:agent:keybindings:v1"

// Template is exactly what Create writes (docs/reference/keybindings.md,
// "Location and loading").
const Template = `{"$schema": "` + Schema + `", "version": 1, "bindings": {}}`

// Path returns the overrides file under the home directory.
func Path(home string) string { return filepath.Join(home, ".agent", FileName) }

// Create creates the sparse overrides file for /keybindings when it is
// missing: exactly Template, mode 0600, in ~/.agent (created 0700). It
// never overwrites: when anything exists at the path, it leaves it alone
// and reports created false. It returns the file's path either way.
func Create(home string) (path string, created bool, err error) {
	if home == "" {
		return "", false, errors.New("no home directory: it decides where ~/.agent lives")
	}
	dir := filepath.Join(home, ".agent")
	path = filepath.Join(dir, FileName)
	if err := securefile.EnsureDir(dir); err != nil {
		return path, false, err
	}
	switch err := securefile.CreateExclusive(path, []byte(Template)); {
	case errors.Is(err, fs.ErrExist):
		return path, false, nil
	case err != nil:
		return path, false, fmt.Errorf("creating %s: %w", path, err)
	}
	return path, true, nil
}

// Update is the state of the file after a load.
type Update struct {
	// Keymap is the bindings in force: the file's when it is valid, the
	// defaults when it is missing, and the last valid bindings when it is
	// invalid or unreadable (then the pointer is the previous one).
	Keymap *keys.Keymap
	// Notices are the lines to show once, each "FILE: JSONPATH: message"
	// (problems and warnings), or "FILE: message" when the file cannot
	// be read.
	Notices []string
}

// Load reads the file once. A missing file means the defaults. prev is
// kept when the file is invalid; nil means the defaults.
func Load(path string, prev *keys.Keymap) Update {
	if prev == nil {
		prev = keys.Defaults()
	}
	data, err := securefile.ReadFile(path, keys.MaxFileSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Update{Keymap: keys.Defaults()}
	case err != nil:
		return Update{Keymap: prev, Notices: []string{readProblem(path, err)}}
	}
	u, _ := parse(path, data, prev)
	return u
}

// parse validates the file's content; valid is false when it has errors
// (then the Update carries prev).
func parse(path string, data []byte, prev *keys.Keymap) (u Update, valid bool) {
	km, problems := keys.ParseFile(data)
	u.Keymap = km
	if km == nil {
		u.Keymap = prev
	}
	for _, p := range problems {
		u.Notices = append(u.Notices, p.Format(path))
	}
	return u, km != nil
}

// readProblem formats a read error as "FILE: message" without repeating
// the path that the error may already carry.
func readProblem(path string, err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	msg := err.Error()
	if prefix := path + ": "; len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		msg = msg[len(prefix):]
	}
	return path + ": cannot read: " + msg
}

// DefaultInterval is how often the watcher looks at the file: a valid
// change applies within one interval and a problem is reported within two,
// so both stay within about 100 ms (docs/reference/keybindings.md,
// "Location and loading").
const DefaultInterval = 40 * time.Millisecond

// racyWindow: a file modified this recently may change again without its
// size or modification time changing (coarse file-system clocks), so it
// is re-read, and compared by content, on every poll until it is older.
const racyWindow = 2 * time.Second

// Options configures a Watcher. The zero value is the default.
type Options struct {
	// Interval between looks at the file when the system gives no change
	// notifications (and the second look at a suspect file); 0 means
	// DefaultInterval.
	Interval time.Duration
	// PollOnly looks every interval even where change notifications
	// (inotify) exist (tests on a fake clock).
	PollOnly bool
}

// Watcher watches the overrides file. One goroutine looks at the file
// when its directory changes (inotify, so an idle UI never wakes) or,
// where the system gives no notifications or the directory does not exist
// yet, every interval (a stat: cheap, portable, and correct for editors
// that replace the file by rename); notifications take over once the
// directory appears. It sends an Update on Updates for each change of
// content: a valid file brings its bindings, an invalid one the previous
// bindings and its problems, each reported once, a removed file the
// defaults.
type Watcher struct {
	path     string
	interval time.Duration
	pollOnly bool
	updates  chan Update
	cancel   context.CancelFunc
	done     chan struct{}
	once     sync.Once

	// notified is set while the watcher looks on change notifications
	// rather than on a timer (for tests).
	notified atomic.Bool

	// Owned by the polling goroutine after Watch returns.
	current *keys.Keymap
	fi      fs.FileInfo // last status seen; nil when the file was missing
	sum     [sha256.Size]byte
	readErr string // last read error reported, to report it once
	// suspect is the content of an invalid read not yet reported: an
	// editor that truncates and then writes in place shows an empty or
	// partial file for a moment, so a problem is reported only when the
	// next look finds the same content.
	suspect    [sha256.Size]byte
	hasSuspect bool
}

// Watch loads the file now, returns the Update for the UI's first frame,
// and watches the file until ctx ends or Close is called.
func Watch(ctx context.Context, path string, opts Options) (*Watcher, Update) {
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{
		path:     path,
		interval: opts.Interval,
		pollOnly: opts.PollOnly,
		updates:  make(chan Update),
		cancel:   cancel,
		done:     make(chan struct{}),
		current:  keys.Defaults(),
	}
	if w.interval <= 0 {
		w.interval = DefaultInterval
	}
	// Watch for changes before the first look, so that nothing written
	// after it goes unseen.
	var events <-chan struct{}
	stop := func() {}
	if !w.pollOnly {
		if ev, st, ok := dirEvents(filepath.Dir(path)); ok {
			events, stop = ev, st
		}
	}
	first, _ := w.poll(time.Now(), true)
	go w.run(ctx, events, stop)
	return w, first
}

// Updates delivers one Update per change; it is closed when the watcher
// stops. The watcher waits for the receiver, so a busy UI sees the latest
// state when it is ready rather than a backlog.
func (w *Watcher) Updates() <-chan Update { return w.updates }

// Close stops the watcher and waits for its goroutine. It is idempotent.
func (w *Watcher) Close() error {
	w.once.Do(func() {
		w.cancel()
		<-w.done
	})
	return nil
}

func (w *Watcher) run(ctx context.Context, events <-chan struct{}, stop func()) {
	defer close(w.done)
	defer close(w.updates)
	defer func() { stop() }()
	// Without change notifications, look every interval. With them, look
	// when the directory changes, and once more an interval after a look
	// that found a suspect file (a problem is reported when it stays).
	var tick <-chan time.Time
	var t *time.Ticker
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	poll := func() {
		w.notified.Store(false)
		t = time.NewTicker(w.interval)
		tick = t.C
	}
	if events == nil {
		poll()
	} else {
		w.notified.Store(true)
	}
	dir := filepath.Dir(w.path)
	var again *time.Timer
	var againC <-chan time.Time
	defer func() {
		if again != nil {
			again.Stop()
		}
	}()
	for {
		var now time.Time
		select {
		case <-ctx.Done():
			return
		case now = <-tick:
			// Polling because the directory did not exist (a first run,
			// before ~/.agent is made) or went away: once it is there,
			// change notifications take over and the ticker stops. The
			// look below follows the arming, so nothing falls between.
			if !w.pollOnly {
				if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
					if ev, st, ok := dirEvents(dir); ok {
						events, stop = ev, st
						t.Stop()
						t, tick = nil, nil
						w.notified.Store(true)
					}
				}
			}
		case now = <-againC:
			againC = nil
		case _, open := <-events:
			if !open {
				// The directory went away: poll until it is back.
				stop()
				events, stop = nil, func() {}
				poll()
			}
			now = time.Now()
		}
		u, changed := w.poll(now, false)
		if events != nil && w.hasSuspect && againC == nil {
			if again == nil {
				again = time.NewTimer(w.interval)
			} else {
				again.Reset(w.interval)
			}
			againC = again.C
		}
		if !changed {
			continue
		}
		select {
		case w.updates <- u:
		case <-ctx.Done():
			return
		}
	}
}

// poll looks at the file and returns the Update when its content (or its
// absence, or the read error) changed since the last look. initial forces
// an Update.
func (w *Watcher) poll(now time.Time, initial bool) (Update, bool) {
	fi, err := os.Stat(w.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		wasThere := w.fi != nil || w.readErr != ""
		w.fi, w.sum, w.readErr, w.hasSuspect = nil, [sha256.Size]byte{}, "", false
		if !wasThere && !initial {
			return Update{}, false
		}
		w.current = keys.Defaults()
		return Update{Keymap: w.current}, true
	case err != nil:
		return w.failed(err, initial)
	}
	if !initial && w.fi != nil && !w.hasSuspect && sameStatus(w.fi, fi) && now.Sub(fi.ModTime()) >= racyWindow {
		return Update{}, false
	}
	data, err := securefile.ReadFile(w.path, keys.MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return w.poll(now, initial) // removed between stat and read
	}
	if err != nil {
		return w.failed(err, initial)
	}
	sum := sha256.Sum256(data)
	unchanged := w.fi != nil && sum == w.sum && w.readErr == "" && !w.hasSuspect
	w.fi, w.sum, w.readErr = fi, sum, ""
	if unchanged && !initial {
		return Update{}, false
	}
	// A valid file applies at once, warnings and all; only an invalid one
	// may be an editor's half-written save.
	u, valid := parse(w.path, data, w.current)
	if !valid && !initial && !(w.hasSuspect && w.suspect == sum) {
		w.suspect, w.hasSuspect = sum, true
		return Update{}, false
	}
	w.hasSuspect = false
	w.current = u.Keymap
	return u, true
}

// failed reports a read error once (until the file changes state).
func (w *Watcher) failed(err error, initial bool) (Update, bool) {
	msg := readProblem(w.path, err)
	if msg == w.readErr && !initial {
		return Update{}, false
	}
	w.fi, w.sum, w.readErr, w.hasSuspect = nil, [sha256.Size]byte{}, msg, false
	return Update{Keymap: w.current, Notices: []string{msg}}, true
}

func sameStatus(a, b fs.FileInfo) bool {
	return a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && a.Mode() == b.Mode() && os.SameFile(a, b)
}
