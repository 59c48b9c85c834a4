package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"agent/internal/securefile"
)

// The guard of the protected paths (docs/sandbox.md, "Protected paths"):
// Landlock cannot refuse a write below a writable folder, so the paths a
// command must not change inside the workspace are checked after every
// command instead. A change is undone: the saved state comes back and
// what the command left is moved to ~/.agent/quarantine/, and the report
// tells the model and the user. The check compares file status (type,
// mode, size, times, inode), which a command cannot forge without
// changing the inode's change time, and reads content only where the
// status changed; a git configuration counts as changed only when its
// program-running keys did, so that ordinary git work (commit, branch,
// push -u) goes on.

// Bounds of what the guard saves to restore.
const (
	guardFileLimit  = 4 << 20
	guardTotalLimit = 32 << 20
	guardMaxEntries = 20000
)

// GuardOptions configure a Guard.
type GuardOptions struct {
	Workspace string // real path
	Home      string // for ~/.agent/quarantine
	ID        string // names the quarantine folders
	// Extra are protected besides the defaults (absolute).
	Extra []string
	// Skip are folders that are never protected (the sandbox's own
	// private folders, when the workspace holds them).
	Skip []string
}

// Guard watches the protected paths of one workspace. Safe for concurrent
// use.
type Guard struct {
	opts   GuardOptions
	mu     sync.Mutex
	saved  map[string]*fstate
	total  int64
	active int // confined spawns running that may write here
	seq    int
}

// NewGuard returns a guard; nothing is read until the first Before.
func NewGuard(opts GuardOptions) *Guard {
	return &Guard{opts: opts, saved: map[string]*fstate{}}
}

type targetKind int

const (
	tree      targetKind = iota // a folder and everything below, or a file
	gitConfig                   // a git configuration: only its program keys count
)

type target struct {
	path string
	kind targetKind
}

// fstate is one path's saved or current state.
type fstate struct {
	kind              targetKind
	mode              fs.FileMode
	size, mtime, ctim int64
	ino, dev          uint64
	data              []byte // regular files up to the limits
	hasData           bool
	link              string
	keys              []string // a git configuration's program keys
	badConfig         bool     // a git configuration that does not parse
}

func (a *fstate) same(b *fstate) bool {
	if a.mode.Type() != b.mode.Type() || a.mode.Perm() != b.mode.Perm() {
		return false
	}
	if a.mode.IsDir() {
		return true // entries below are compared on their own
	}
	return a.size == b.size && a.mtime == b.mtime && a.ctim == b.ctim && a.ino == b.ino && a.dev == b.dev
}

// Restore is one change the guard undid.
type Restore struct {
	Path        string // as shown: relative to the workspace when inside
	What        string // "a new file", "changed", "removed", "set core.hookspath=…"
	Quarantined string // where the command's version went ("" when nothing was moved)
	Failed      string // why the saved state could not come back ("" on success)
}

func (r Restore) String() string {
	s := r.Path + " (" + r.What
	if r.Quarantined != "" {
		s += "; moved to " + r.Quarantined
	}
	if r.Failed != "" {
		s += "; not restored: " + r.Failed
	}
	return s + ")"
}

// Protected is what a guard protects at one moment (Guard.Look): its
// targets, and the workspace's git folders they were found from. A spawn
// looks once and uses the look for the guard's snapshot (BeforeLook), the
// namespace tier's read-only binds (ProtectedNow) and the git folders it
// may write (docs/performance.md, "Sandbox").
type Protected struct {
	targets        []target
	GitDir, Common string // GitDirs of the workspace
}

// Look lists what is protected now.
func (g *Guard) Look() Protected {
	var p Protected
	p.GitDir, p.Common = GitDirs(g.opts.Workspace)
	p.targets = g.targetsIn(p.GitDir, p.Common)
	return p
}

// targets lists what is protected now.
func (g *Guard) targets() []target { return g.Look().targets }

// targetsIn lists the targets: the git folder's hooks and configurations
// (where git keeps them, which for a worktree or a subfolder of a
// repository is outside the workspace), the hooks folder a configuration
// names, the submodules' hooks and configurations, and the workspace's own
// protected paths.
func (g *Guard) targetsIn(gitDir, common string) []target {
	ws := g.opts.Workspace
	var ts []target
	if common != "" {
		ts = append(ts, target{filepath.Join(common, "hooks"), tree}, target{filepath.Join(common, "config"), gitConfig},
			target{filepath.Join(common, "config.worktree"), gitConfig})
		if gitDir != common {
			ts = append(ts, target{filepath.Join(gitDir, "config.worktree"), gitConfig})
		}
		if ents, err := os.ReadDir(filepath.Join(common, "modules")); err == nil {
			for _, e := range ents {
				if e.IsDir() {
					m := filepath.Join(common, "modules", e.Name())
					ts = append(ts, target{filepath.Join(m, "hooks"), tree}, target{filepath.Join(m, "config"), gitConfig})
				}
			}
		}
		if data, err := os.ReadFile(filepath.Join(common, "config")); err == nil {
			if kvs, err := parseGitConfig(data); err == nil {
				for _, kv := range kvs {
					if kv.Key == "core.hookspath" && kv.Value != "" {
						ts = append(ts, target{ExpandPath(kv.Value, g.opts.Home, ws), tree})
					}
				}
			}
		}
	}
	for _, p := range DefaultProtected {
		ts = append(ts, target{filepath.Join(ws, p), tree})
	}
	for _, p := range g.opts.Extra {
		ts = append(ts, target{filepath.Clean(p), tree})
	}
	return ts
}

// GitDirs finds the git folder of a workspace the way git does (a .git
// folder, or a .git file naming one, in the workspace or a folder above
// it) and its common folder (a worktree's shared one); "" when there is
// none.
func GitDirs(ws string) (gitDir, common string) {
	for dir := ws; ; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, ".git")
		if fi, err := os.Lstat(p); err == nil {
			switch {
			case fi.IsDir():
				gitDir = p
			case fi.Mode().IsRegular() && fi.Size() < 4096:
				b, _ := os.ReadFile(p)
				if v, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); ok {
					gitDir = ExpandPath(strings.TrimSpace(v), "", dir)
				}
			}
			if gitDir != "" {
				break
			}
		}
		if dir == "/" || dir == "." {
			return "", ""
		}
	}
	common = gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common = ExpandPath(strings.TrimSpace(string(b)), "", gitDir)
	}
	if real, err := filepath.EvalSymlinks(common); err == nil {
		common = real
	}
	if real, err := filepath.EvalSymlinks(gitDir); err == nil {
		gitDir = real
	}
	return gitDir, common
}

// ProtectedNow lists the protected paths of the look that exist now and
// are not symbolic links: what the namespace tier binds read-only. The git
// configurations are left out (git writes them in ordinary work).
func (g *Guard) ProtectedNow(look Protected) []string {
	var out []string
	for _, t := range look.targets {
		if t.kind != tree || g.skipped(t.path) {
			continue
		}
		if fi, err := os.Lstat(t.path); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			out = append(out, t.path)
		}
	}
	return out
}

func (g *Guard) skipped(p string) bool { return withinAny(p, g.opts.Skip) }

// scan reads the status of every protected path of ts that exists.
func (g *Guard) scan(ts []target) map[string]*fstate {
	cur := map[string]*fstate{}
	n := 0
	for _, t := range ts {
		if g.skipped(t.path) {
			continue
		}
		if t.kind == gitConfig {
			if fi, err := os.Lstat(t.path); err == nil {
				cur[t.path] = stateOf(fi, gitConfig)
			}
			continue
		}
		filepath.WalkDir(t.path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if n >= guardMaxEntries {
				return fs.SkipAll
			}
			if p != t.path && g.skipped(p) {
				return fs.SkipDir
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			if _, seen := cur[p]; !seen {
				n++
				cur[p] = stateOf(fi, tree)
			}
			return nil
		})
	}
	return cur
}

func stateOf(fi fs.FileInfo, kind targetKind) *fstate {
	s := &fstate{kind: kind, mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	s.ctim, s.ino, s.dev = statIDs(fi)
	return s
}

// fill reads what restoring needs: a file's content (within the limits),
// a link's target, a git configuration's program keys.
func (g *Guard) fill(p string, s *fstate) {
	switch {
	case s.mode&fs.ModeSymlink != 0:
		s.link, _ = os.Readlink(p)
	case s.mode.IsRegular():
		if s.size > guardFileLimit || g.total+s.size > guardTotalLimit {
			break
		}
		f, _, err := securefile.Open(p, os.O_RDONLY)
		if err != nil {
			break
		}
		data, err := io.ReadAll(io.LimitReader(f, guardFileLimit+1))
		f.Close()
		if err == nil && int64(len(data)) <= guardFileLimit {
			s.data, s.hasData = data, true
			g.total += int64(len(data))
		}
	}
	if s.kind == gitConfig {
		kvs, err := parseGitConfig(s.data)
		s.badConfig = err != nil || s.size > 0 && !s.hasData
		s.keys = programKeys(kvs)
	}
}

func (g *Guard) forget(s *fstate) {
	if s != nil && s.hasData {
		g.total -= int64(len(s.data))
	}
}

// Before takes the protected paths as they are now as the state to keep,
// unless another confined command is running (whose changes must not
// become the saved state). Pair it with After.
func (g *Guard) Before() { g.BeforeLook(g.Look()) }

// BeforeLook is Before with a look just taken.
func (g *Guard) BeforeLook(look Protected) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.active++
	if g.active > 1 {
		return
	}
	cur := g.scan(look.targets)
	for p, c := range cur {
		if s := g.saved[p]; s != nil && s.same(c) {
			continue
		}
		g.forget(g.saved[p])
		g.fill(p, c)
		g.saved[p] = c
	}
	for p, s := range g.saved {
		if cur[p] == nil {
			g.forget(s)
			delete(g.saved, p)
		}
	}
}

// After finds what changed since Before and undoes it.
func (g *Guard) After() []Restore {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.active > 0 {
		g.active--
	}
	return g.check()
}

// Check finds and undoes changes since the last Before (tests; a
// second look after After).
func (g *Guard) Check() []Restore {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.check()
}

func (g *Guard) check() []Restore {
	cur := g.scan(g.targets())
	paths := make([]string, 0, len(cur)+len(g.saved))
	for p := range cur {
		paths = append(paths, p)
	}
	for p := range g.saved {
		if cur[p] == nil {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var out []Restore
	for _, p := range paths {
		s, c := g.saved[p], cur[p]
		switch {
		case s == nil:
			if g.acceptNew(p, c) {
				g.saved[p] = c
				continue
			}
			out = append(out, g.restoreOne(p, nil, "a new "+kindName(c)))
		case c == nil:
			out = append(out, g.restoreOne(p, s, "removed"))
		case s.same(c):
		case s.kind == gitConfig:
			g.fill(p, c)
			if !c.badConfig && equalStrings(s.keys, c.keys) {
				g.forget(s)
				g.saved[p] = c // ordinary git work: the new state is kept
				continue
			}
			g.forget(c)
			what := "a configuration git cannot read"
			if !c.badConfig {
				what = "set " + strings.Join(addedKeys(s.keys, c.keys), ", ")
			}
			out = append(out, g.restoreOne(p, s, what))
		case s.mode.IsDir() && c.mode.IsDir():
			// Only the folder's own mode changed.
			r := Restore{Path: g.show(p), What: "mode changed"}
			if err := os.Chmod(p, s.mode.Perm()); err != nil {
				r.Failed = err.Error()
			}
			g.rescan(p, s)
			out = append(out, r)
		default:
			out = append(out, g.restoreOne(p, s, "changed"))
		}
	}
	return out
}

// acceptNew reports whether a new entry is harmless, so that creating a
// repository (git init) in the workspace goes on: a folder, a hook
// sample (git never runs those), a git configuration without program
// keys. New entries are filled in passing.
func (g *Guard) acceptNew(p string, c *fstate) bool {
	switch {
	case c.mode.IsDir():
		return true
	case c.kind == gitConfig:
		g.fill(p, c)
		return !c.badConfig && len(c.keys) == 0
	case c.mode.IsRegular() && strings.HasSuffix(p, ".sample") && filepath.Base(filepath.Dir(p)) == "hooks":
		g.fill(p, c)
		return true
	}
	return false
}

func kindName(s *fstate) string {
	switch {
	case s.mode.IsDir():
		return "folder"
	case s.mode&fs.ModeSymlink != 0:
		return "link"
	}
	return "file"
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// addedKeys names the program keys of after that before lacks (or, when
// only some were removed, those).
func addedKeys(before, after []string) []string {
	have := map[string]bool{}
	for _, k := range before {
		have[k] = true
	}
	var out []string
	for _, k := range after {
		if !have[k] {
			out = append(out, cutValue(k))
		}
	}
	if len(out) == 0 {
		return []string{"(program keys removed or reordered)"}
	}
	return out
}

// cutValue shortens "key=value" for a message: the value is the
// command's, so it is cut.
func cutValue(kv string) string {
	if len(kv) > 80 {
		return kv[:77] + "..."
	}
	return kv
}

// restoreOne moves what the command left at p (if anything) to the
// quarantine and puts the saved state s back (if any).
func (g *Guard) restoreOne(p string, s *fstate, what string) Restore {
	r := Restore{Path: g.show(p), What: what}
	if _, err := os.Lstat(p); err == nil {
		q, err := g.quarantine(p)
		if err != nil {
			r.Failed = "could not move it away: " + err.Error()
			return r
		}
		r.Quarantined = q
	}
	if s == nil {
		return r
	}
	if _, err := os.Lstat(filepath.Dir(p)); err != nil {
		r.Failed = "its folder is gone"
		return r
	}
	var err error
	switch {
	case s.mode.IsDir():
		err = os.Mkdir(p, s.mode.Perm())
	case s.mode&fs.ModeSymlink != 0:
		err = os.Symlink(s.link, p)
	case s.mode.IsRegular() && s.hasData:
		err = writeAtomic(p, s.data, s.mode.Perm())
	case s.mode.IsRegular():
		err = fmt.Errorf("it was larger than %d MiB when saved", guardFileLimit>>20)
	default:
		err = errors.New("it was not a file, folder or link")
	}
	if err != nil {
		r.Failed = err.Error()
		return r
	}
	g.rescan(p, s)
	return r
}

// rescan takes the status of a restored path as its saved state (the
// inode and times changed), keeping the saved content.
func (g *Guard) rescan(p string, s *fstate) {
	fi, err := os.Lstat(p)
	if err != nil {
		return
	}
	n := stateOf(fi, s.kind)
	n.data, n.hasData, n.link, n.keys, n.badConfig = s.data, s.hasData, s.link, s.keys, s.badConfig
	g.saved[p] = n
}

func (g *Guard) show(p string) string {
	if rel, err := filepath.Rel(g.opts.Workspace, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// quarantine moves p into ~/.agent/quarantine/<id>-<time>-<n>/<p>, with
// no permission to run or be read by others.
func (g *Guard) quarantine(p string) (string, error) {
	g.seq++
	dir := filepath.Join(g.opts.Home, ".agent", "quarantine",
		fmt.Sprintf("%s-%s-%d", g.opts.ID, time.Now().UTC().Format("20060102T150405Z"), g.seq))
	dest := filepath.Join(dir, strings.TrimPrefix(p, "/"))
	if err := securefile.EnsureDir(filepath.Join(g.opts.Home, ".agent", "quarantine")); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return "", err
	}
	if err := os.Rename(p, dest); err != nil {
		if !errors.Is(err, syscall.EXDEV) {
			return "", err
		}
		if err := copyTree(p, dest); err != nil {
			return "", err
		}
		if err := os.RemoveAll(p); err != nil {
			return "", err
		}
	}
	filepath.WalkDir(dest, func(q string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		if d.IsDir() {
			os.Chmod(q, 0o700)
		} else {
			os.Chmod(q, 0o600)
		}
		return nil
	})
	return dest, nil
}

// copyTree copies a file, link or folder (across file systems).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o700)
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, to)
		case d.Type().IsRegular():
			f, _, err := securefile.Open(p, os.O_RDONLY)
			if err != nil {
				return err
			}
			defer f.Close()
			var b bytes.Buffer
			if _, err := io.Copy(&b, f); err != nil {
				return err
			}
			return os.WriteFile(to, b.Bytes(), 0o600)
		}
		return nil // sockets, FIFOs, devices: removed, not kept
	})
}

// writeAtomic writes data to path through a temporary file in its folder.
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".agent-restore-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
