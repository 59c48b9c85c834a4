package keymap

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"agent/tui/keys"
)

func TestCreate(t *testing.T) {
	home := t.TempDir()
	path, created, err := Create(home)
	if err != nil || !created || path != filepath.Join(home, ".agent", "keybindings.json") || path != Path(home) {
		t.Fatalf("Create = %q, %v, %v", path, created, err)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != `{"$schema": "urn:agent:keybindings:v1", "version": 1, "bindings": {}}` {
		t.Fatalf("content %q, %v", data, err)
	}
	if km, problems := keys.ParseFile(data); km == nil || len(problems) != 0 {
		t.Errorf("the created file is not a valid, quiet overrides file: %v", problems)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v (%v)", p, fi.Mode().Perm(), want, err)
		}
	}

	// Never overwrite.
	mine := `{"version": 1, "bindings": {"thinking": {"abort": null}}}`
	if err := os.WriteFile(path, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	again, created, err := Create(home)
	if err != nil || created || again != path {
		t.Fatalf("second Create = %q, %v, %v", again, created, err)
	}
	if data, _ := os.ReadFile(path); string(data) != mine {
		t.Errorf("an existing file was overwritten: %q", data)
	}
}

func TestCreateDoesNotFollowSymlinks(t *testing.T) {
	home := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	if err := os.MkdirAll(filepath.Join(home, ".agent"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, Path(home)); err != nil {
		t.Fatal(err)
	}
	if _, created, err := Create(home); err != nil || created {
		t.Fatalf("Create over a symlink: created %v, %v", created, err)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("the symlink's target was created: %v", err)
	}
	if _, _, err := Create(""); err == nil {
		t.Error("Create without a home directory")
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keybindings.json")
	if u := Load(path, nil); u.Keymap != keys.Defaults() || u.Notices != nil {
		t.Errorf("missing file: %+v", u)
	}

	write(t, path, `{"version": 1, "bindings": {"list-picker": {"select": "ctrl+shift+k"}}}`)
	valid := Load(path, nil)
	if a, _ := valid.Keymap.Lookup(keys.ListPicker, stroke(t, "ctrl+shift+k")); a != keys.ActSelect {
		t.Errorf("valid file not applied: %+v", valid)
	}
	if !slices.Equal(valid.Notices, []string{path + `: $.bindings.list-picker.select: warning: "ctrl+shift+k": many terminals cannot deliver ctrl+shift+k (ctrl+shift with a letter)`}) {
		t.Errorf("warnings: %q", valid.Notices)
	}

	write(t, path, `{"version": 2, "bindings": {"chat-input": {"submit": ""}}}`)
	invalid := Load(path, valid.Keymap)
	if invalid.Keymap != valid.Keymap {
		t.Error("an invalid file replaced the last valid bindings")
	}
	want := []string{
		path + ": $.version: unsupported version 2: the only version is 1",
		path + ": $.bindings.chat-input.submit: empty key string (to unbind the action use null)",
	}
	if !slices.Equal(invalid.Notices, want) {
		t.Errorf("notices %q, want %q", invalid.Notices, want)
	}

	notFile := filepath.Join(dir, "adir")
	if err := os.Mkdir(notFile, 0o700); err != nil {
		t.Fatal(err)
	}
	u := Load(notFile, valid.Keymap)
	if u.Keymap != valid.Keymap || len(u.Notices) != 1 || u.Notices[0] != notFile+": cannot read: not a regular file (a folder)" {
		t.Errorf("unreadable: %+v", u)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func stroke(t *testing.T, s string) keys.Stroke {
	t.Helper()
	st, err := keys.ParseStroke(s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestWatcher runs the watcher on a fake clock: each change must arrive
// within 100 ms (docs/reference/keybindings.md, "Location and loading" and
// "Differences from the specification"), and nothing may arrive twice.
func TestWatcher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "keybindings.json")
		w, first := Watch(t.Context(), path, Options{PollOnly: true})
		if first.Keymap != keys.Defaults() || first.Notices != nil {
			t.Fatalf("first update: %+v", first)
		}
		next := func(what string) Update {
			t.Helper()
			select {
			case u := <-w.Updates():
				return u
			case <-time.After(100 * time.Millisecond):
				t.Fatalf("%s: no update within 100 ms", what)
			}
			return Update{}
		}
		quiet := func(what string) {
			t.Helper()
			select {
			case u := <-w.Updates():
				t.Fatalf("%s: unexpected update %+v", what, u)
			case <-time.After(3 * time.Second):
			}
		}
		quiet("no file")

		write(t, path, `{"version": 1, "bindings": {"list-picker": {"select": "ctrl+o"}}}`)
		u := next("valid file")
		if a, _ := u.Keymap.Lookup(keys.ListPicker, stroke(t, "ctrl+o")); a != keys.ActSelect || u.Notices != nil {
			t.Fatalf("valid file: %+v", u)
		}
		good := u.Keymap
		quiet("unchanged file")

		write(t, path, `{"version": 1, "bindings": {"list-picker": {"select": "ctrl+c"}}}`)
		u = next("invalid file")
		if u.Keymap != good || len(u.Notices) != 1 || !strings.Contains(u.Notices[0], path+": $.bindings.list-picker.select: ") {
			t.Fatalf("invalid file: %+v", u)
		}
		// The same content written again is not reported again.
		write(t, path, `{"version": 1, "bindings": {"list-picker": {"select": "ctrl+c"}}}`)
		quiet("invalid file rewritten")

		write(t, path, `{"version": 1, "bindings": {"list-picker": {"selct": "x"}}}`)
		if u = next("another invalid file"); u.Keymap != good || len(u.Notices) != 1 {
			t.Fatalf("another invalid file: %+v", u)
		}

		// A rename over the file, as editors save.
		tmp := path + ".tmp"
		write(t, tmp, `{"version": 1, "bindings": {"list-picker": {"select": "ctrl+p"}}}`)
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		u = next("renamed file")
		if a, _ := u.Keymap.Lookup(keys.ListPicker, stroke(t, "ctrl+p")); a != keys.ActSelect {
			t.Fatalf("renamed file: %+v", u)
		}

		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if u = next("removed file"); u.Keymap != keys.Defaults() || u.Notices != nil {
			t.Fatalf("removed file: %+v", u)
		}
		quiet("still no file")

		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		if u = next("unreadable"); u.Keymap != keys.Defaults() || len(u.Notices) != 1 {
			t.Fatalf("unreadable: %+v", u)
		}
		quiet("still unreadable")

		w.Close()
		w.Close() // idempotent
		if _, open := <-w.Updates(); open {
			t.Error("Updates still open after Close")
		}
	})
}

// TestWatcherStopsWithContext: cancelling the context ends the goroutine
// even while an update waits for a receiver.
func TestWatcherStopsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "keybindings.json")
		ctx, cancel := context.WithCancel(t.Context())
		w, _ := Watch(ctx, path, Options{Interval: 10 * time.Millisecond, PollOnly: true})
		write(t, path, `{"version": 1, "bindings": {}}`)
		time.Sleep(50 * time.Millisecond) // the update is now waiting
		cancel()
		synctest.Wait()
		for range w.Updates() { // drains at most the waiting update, then closed
		}
		w.Close()
	})
}

// TestWatcherSkipsUnchangedStatus: an old file whose status has not changed
// is not read again (the poll costs one stat).
func TestWatcherSkipsUnchangedStatus(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keybindings.json")
	write(t, path, `{"version": 1, "bindings": {"recovery": {"retry": "r"}}}`)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	w := &Watcher{path: path, current: keys.Defaults()}
	if _, changed := w.poll(time.Now(), true); !changed {
		t.Fatal("first poll")
	}
	// Same size, same modification time: the new content goes unseen
	// until the status changes.
	write(t, path, `{"version": 1, "bindings": {"recovery": {"retry": "s"}}}`)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if _, changed := w.poll(time.Now(), false); changed {
		t.Error("re-read a file whose status did not change")
	}
	now := time.Now()
	if err := os.Chtimes(path, now, now); err != nil {
		t.Fatal(err)
	}
	if u, changed := w.poll(now, false); !changed || u.Keymap == nil {
		t.Error("missed a change of modification time")
	}
}

// TestWatcherPartialWrite: an editor that truncates and then writes in
// place leaves an empty file for a moment; a look that falls between the
// two steps reports nothing, and the finished file applies without any
// notice. A problem that stays is reported on the next look.
func TestWatcherPartialWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keybindings.json")
	w := &Watcher{path: path, current: keys.Defaults()}
	if _, changed := w.poll(time.Now(), true); !changed {
		t.Fatal("first poll")
	}
	write(t, path, "")
	if u, changed := w.poll(time.Now(), false); changed {
		t.Fatalf("mid-write look reported %+v", u)
	}
	write(t, path, `{"version": 1, "bindings": {"recovery": {"retry": "r"}}}`)
	u, changed := w.poll(time.Now(), false)
	if !changed || u.Notices != nil {
		t.Fatalf("finished write: changed=%v %+v", changed, u)
	}
	if a, _ := u.Keymap.Lookup(keys.Recovery, stroke(t, "r")); a != keys.ActRetry {
		t.Fatalf("finished write did not apply: %+v", u)
	}

	write(t, path, `{"version": 1`)
	if _, changed := w.poll(time.Now(), false); changed {
		t.Fatal("first look at a broken file reported at once")
	}
	u, changed = w.poll(time.Now(), false)
	if !changed || len(u.Notices) != 1 || !strings.Contains(u.Notices[0], path) {
		t.Fatalf("second look at a broken file: changed=%v %+v", changed, u)
	}
	if _, changed := w.poll(time.Now(), false); changed {
		t.Fatal("a broken file reported twice")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if u, changed = w.poll(time.Now(), false); !changed || u.Keymap != keys.Defaults() {
		t.Fatalf("removed: changed=%v %+v", changed, u)
	}
}

// TestWatcherNotified: with change notifications (inotify) the watcher
// looks when the directory changes rather than on a timer: a valid change
// applies, a broken file is reported once it stays, a rename over the
// file applies, and a removal restores the defaults. Real time: the
// notifications come from the kernel.
func TestWatcherNotified(t *testing.T) {
	dir := t.TempDir()
	if _, _, ok := dirEvents(dir); !ok {
		t.Skip("no change notifications on this system")
	}
	path := filepath.Join(dir, "keybindings.json")
	w, _ := Watch(t.Context(), path, Options{})
	defer w.Close()
	// until waits for the update that shows the change: a write seen half
	// done (a truncated file) may bring an update of its own first.
	until := func(what string, ok func(Update) bool) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		var seen []Update
		for {
			select {
			case u := <-w.Updates():
				if ok(u) {
					return
				}
				seen = append(seen, u)
			case <-deadline:
				t.Fatalf("%s: no such update; saw %+v", what, seen)
			}
		}
	}
	bound := func(u Update, key string) bool {
		a, _ := u.Keymap.Lookup(keys.ListPicker, stroke(t, key))
		return a == keys.ActSelect
	}
	write(t, path, `{"version": 1, "bindings": {"list-picker": {"select": "ctrl+o"}}}`)
	until("valid file", func(u Update) bool { return u.Notices == nil && bound(u, "ctrl+o") })
	write(t, path, `{"version": 1, "bindings": {"list-picker": {"select": "ctrl+c"}}}`)
	until("invalid file", func(u Update) bool {
		return len(u.Notices) == 1 && strings.Contains(u.Notices[0], "ctrl+c is reserved") && bound(u, "ctrl+o")
	})
	tmp := path + ".tmp"
	write(t, tmp, `{"version": 1, "bindings": {"list-picker": {"select": "ctrl+p"}}}`)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	until("renamed file", func(u Update) bool { return u.Notices == nil && bound(u, "ctrl+p") })
	os.Remove(path)
	until("removed file", func(u Update) bool { return u.Keymap == keys.Defaults() })
}

// TestWatcherArmsWhenDirectoryAppears: on a first run ~/.agent does not
// exist yet, so the watcher polls; once the directory is there, change
// notifications take over (an idle UI stops waking), and when it goes away
// polling resumes until it is back.
func TestWatcherArmsWhenDirectoryAppears(t *testing.T) {
	if _, _, ok := dirEvents(t.TempDir()); !ok {
		t.Skip("no change notifications on this system")
	}
	dir := filepath.Join(t.TempDir(), ".agent")
	path := filepath.Join(dir, "keybindings.json")
	w, first := Watch(t.Context(), path, Options{Interval: 5 * time.Millisecond})
	defer w.Close()
	if first.Keymap != keys.Defaults() || w.notified.Load() {
		t.Fatalf("no directory: %+v, notified %v", first, w.notified.Load())
	}
	next := func(what string) Update {
		t.Helper()
		select {
		case u := <-w.Updates():
			return u
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no update", what)
		}
		return Update{}
	}
	eventually := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal(what)
			}
		}
	}
	for round := range 2 {
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		eventually("notifications not armed once the directory exists", w.notified.Load)
		write(t, path, `{"version": 1, "bindings": {"recovery": {"retry": "r"}}}`)
		if u := next("file written"); u.Notices != nil {
			t.Fatalf("round %d: %+v", round, u)
		} else if a, _ := u.Keymap.Lookup(keys.Recovery, stroke(t, "r")); a != keys.ActRetry {
			t.Fatalf("round %d: file not applied", round)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if u := next("directory removed"); u.Keymap != keys.Defaults() {
			t.Fatalf("round %d: %+v", round, u)
		}
		eventually("still notified after the directory went away", func() bool { return !w.notified.Load() })
	}
}

// TestWatcherWarningsApplyAtOnce: a valid file with warnings is no
// half-written save; it applies on the first look, its warnings shown.
func TestWatcherWarningsApplyAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keybindings.json")
	w := &Watcher{path: path, current: keys.Defaults()}
	if _, changed := w.poll(time.Now(), true); !changed {
		t.Fatal("first poll")
	}
	write(t, path, `{"version": 1, "bindings": {"list-picker": {"select": "ctrl+K"}}}`)
	u, changed := w.poll(time.Now(), false)
	if !changed || len(u.Notices) != 1 || !strings.Contains(u.Notices[0], ": warning: ") {
		t.Fatalf("changed=%v %+v", changed, u)
	}
	if a, _ := u.Keymap.Lookup(keys.ListPicker, stroke(t, "ctrl+shift+k")); a != keys.ActSelect {
		t.Fatalf("not applied: %+v", u)
	}
	if _, changed := w.poll(time.Now(), false); changed {
		t.Error("the warnings were reported twice")
	}
}
