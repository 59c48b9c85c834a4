// Package search is the file search under the Glob and Grep tools
// (docs/reference/runtime.md, "Glob", "Grep" and "What the search tools
// skip"): a parallel walk that skips what git ignores (the rules of
// internal/ignore, read from the tree and the user's git configuration),
// and a line searcher that reads files in bounded chunks and finds
// literals with byte search before any regular expression runs.
//
// Imports: the standard library and internal/* (CONTRIBUTING.md, "Import
// direction").
package search

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"agent/internal/ignore"
)

// EntryType is the kind of a folder entry, as listed (links are not
// followed).
type EntryType uint8

// Entry types.
const (
	TypeUnknown EntryType = iota
	TypeFile
	TypeDir
	TypeSymlink
	TypeOther // FIFO, socket, device
)

// Entry is one entry of a walk that is not a folder and is not ignored.
type Entry struct {
	Path string // absolute
	Rel  string // below the walk's root
	Name string
	Type EntryType
}

// WalkOptions configure a walk.
type WalkOptions struct {
	Root    string // the real, absolute path of the folder walked
	Env     Env
	Workers int // 0: runtime.GOMAXPROCS
	// MaxEntries ends the walk after that many folder entries (0: no
	// limit); the report says so.
	MaxEntries int
	// Descend, when set, says whether to enter a folder (its path below
	// the root, and its depth: 1 for the root's folders).
	Descend func(rel string, depth int) bool
	// Visit is called for every entry that is not a folder and not
	// ignored, with the number of the worker calling (0 to Workers-1).
	// One worker's calls never overlap; different workers' do.
	Visit func(worker int, e Entry)

	report *Report // when set, the report to fill
}

// Report says what a walk skipped besides ignored paths. It is safe for
// concurrent use.
type Report struct {
	Truncated bool // the entry limit ended the walk

	mu          sync.Mutex
	problems    map[string]string // rule files and settings that did not fully apply
	unreadable  []string          // paths and reasons, the first few
	nUnreadable int
	badNames    int
	badDirs     []string
}

const maxNamed = 5 // paths a notice names before it only counts

func (r *Report) problem(where, what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.problems == nil {
		r.problems = map[string]string{}
	}
	r.problems[where] = what
}

func (r *Report) unreadablePath(path string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nUnreadable++
	if len(r.unreadable) < maxNamed {
		r.unreadable = append(r.unreadable, path+" ("+reason(err)+")")
	}
}

func (r *Report) badName(dir string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.badNames++
	if len(r.badDirs) < maxNamed && (len(r.badDirs) == 0 || r.badDirs[len(r.badDirs)-1] != dir) {
		r.badDirs = append(r.badDirs, dir)
	}
}

// Problems returns the ignore files and git settings that did not fully
// apply (invalid patterns, unreadable files), one sentence each, sorted.
// Each names its file (and line), so a caller can say each once.
func (r *Report) Problems() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.problems))
	for where, what := range r.problems {
		out = append(out, where+": "+what)
	}
	sort.Strings(out)
	return out
}

// Notices returns what the walk skipped, one sentence each: unreadable
// folders and files, and names that are not UTF-8.
func (r *Report) Notices() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	if r.nUnreadable > 0 {
		s := fmt.Sprintf("%d unreadable folders or files were skipped: %s", r.nUnreadable, joinNamed(r.unreadable, r.nUnreadable))
		out = append(out, s)
	}
	if r.badNames > 0 {
		out = append(out, fmt.Sprintf("%d entries whose names are not valid UTF-8 were skipped, in %s", r.badNames, joinNamed(r.badDirs, len(r.badDirs))))
	}
	return out
}

func joinNamed(named []string, total int) string {
	s := ""
	for i, n := range named {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	if total > len(named) {
		s += fmt.Sprintf(" and %d more", total-len(named))
	}
	return s
}

// dirJob is a folder to list; fileJob a batch of its entries to visit.
type dirJob struct {
	path  string
	depth int
	rules *ignore.Dir
	rel   string
}

type job struct {
	dir   *dirJob
	files []Entry // when set: entries to visit
}

// fileBatch is how many entries of one folder one job visits, so that a
// folder of thousands of files is shared among the workers.
const fileBatch = 32

// walker is one walk's shared state: a stack of jobs (depth first keeps
// the set of open folders small) and the count of jobs not yet done.
type walker struct {
	o       WalkOptions
	report  *Report
	loader  *rulesLoader
	mu      sync.Mutex
	cond    *sync.Cond
	stack   []job
	pending int
	stop    atomic.Bool
	entries atomic.Int64
	ctx     context.Context
}

// stopped reports whether the walk should end: the entry limit, or ctx
// (also checked here, not only when its AfterFunc gets to run).
func (w *walker) stopped() bool {
	if w.stop.Load() {
		return true
	}
	if w.ctx.Err() != nil {
		w.stop.Store(true)
		return true
	}
	return false
}

// Walk walks the tree below o.Root in parallel and calls o.Visit for each
// entry that is neither a folder nor ignored. Folders named .git are
// skipped; hidden files are not; symbolic links are visited as entries and
// never followed. It returns ctx's error when ctx ends first, or an error
// when the root itself cannot be listed.
func Walk(ctx context.Context, o WalkOptions) (*Report, error) {
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	w := &walker{o: o, report: o.report, ctx: ctx}
	if w.report == nil {
		w.report = &Report{}
	}
	w.cond = sync.NewCond(&w.mu)
	w.loader = &rulesLoader{env: o.Env, report: w.report}
	top := w.loader.ancestorRules(o.Root)

	// The root is listed first, here, so that its failure is the walk's.
	var scratch []byte
	var rootEnts []dirent
	if err := readDir(o.Root, &scratch, func(name string, t EntryType) {
		rootEnts = append(rootEnts, dirent{name, t})
	}); err != nil {
		return w.report, err
	}
	stopCtx := context.AfterFunc(ctx, func() {
		w.stop.Store(true)
		w.mu.Lock()
		w.cond.Broadcast()
		w.mu.Unlock()
	})
	defer stopCtx()

	first := w.expand(0, &dirJob{path: o.Root, rules: top}, rootEnts)
	var wg sync.WaitGroup
	for i := 1; i < o.Workers; i++ {
		wg.Go(func() { w.work(i, nil) })
	}
	w.work(0, first)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return w.report, err
	}
	return w.report, nil
}

type dirent struct {
	name string
	typ  EntryType
}

// work runs jobs until none is left; first, when set, is visited before.
func (w *walker) work(id int, first []Entry) {
	var scratch []byte
	var ents []dirent
	for _, e := range first {
		if w.stopped() {
			break
		}
		w.o.Visit(id, e)
	}
	for {
		j, ok := w.pop()
		if !ok {
			return
		}
		if !w.stopped() {
			if j.dir != nil {
				ents = ents[:0]
				if err := readDir(j.dir.path, &scratch, func(name string, t EntryType) {
					ents = append(ents, dirent{name, t})
				}); err != nil {
					w.report.unreadablePath(j.dir.path, err)
				} else {
					for _, e := range w.expand(id, j.dir, ents) {
						if w.stopped() {
							break
						}
						w.o.Visit(id, e)
					}
				}
			} else {
				for _, e := range j.files {
					if w.stopped() {
						break
					}
					w.o.Visit(id, e)
				}
			}
		}
		w.done()
	}
}

// expand applies a listed folder's rules to its entries: it queues its
// folders and all but the first batch of its other entries, and returns
// that batch for the caller to visit.
func (w *walker) expand(id int, d *dirJob, ents []dirent) []Entry {
	if w.o.MaxEntries > 0 && w.entries.Add(int64(len(ents))) > int64(w.o.MaxEntries) {
		w.mu.Lock()
		w.report.Truncated = true
		w.mu.Unlock()
		w.stop.Store(true)
		return nil
	}
	var r ignore.Rules
	for _, e := range ents {
		switch e.name {
		case ".git":
			r.Repo = true
		case ".gitignore":
			r.Gitignore = w.loader.readIgnore(join(d.path, e.name), false)
		case ".ignore":
			r.Ignore = w.loader.readIgnore(join(d.path, e.name), false)
		}
	}
	if r.Repo {
		r.Exclude, r.Global = w.loader.repoRules(d.path)
	}
	rules := d.rules.Child(prefixLen(d.path), r)
	slices.SortFunc(ents, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	var dirs []job
	var files []Entry
	for _, e := range ents {
		if e.name == ".git" {
			continue
		}
		if !utf8.ValidString(e.name) {
			w.report.badName(d.path)
			continue
		}
		p := join(d.path, e.name)
		t := e.typ
		if t == TypeUnknown {
			t = lstatType(p)
		}
		if rules.Ignored(p, t == TypeDir) {
			continue
		}
		rel := e.name
		if d.rel != "" {
			rel = d.rel + "/" + e.name
		}
		if t == TypeDir {
			if w.o.Descend == nil || w.o.Descend(rel, d.depth+1) {
				dirs = append(dirs, job{dir: &dirJob{path: p, depth: d.depth + 1, rules: rules, rel: rel}})
			}
			continue
		}
		files = append(files, Entry{Path: p, Rel: rel, Name: e.name, Type: t})
	}
	var own []Entry
	if len(files) > 0 {
		own = files[:min(fileBatch, len(files))]
		for i := fileBatch; i < len(files); i += fileBatch {
			dirs = append(dirs, job{files: files[i:min(i+fileBatch, len(files))]})
		}
	}
	// The stack pops the last job first: push in reverse, so that the walk
	// goes roughly in path order and a search whose output fills up early
	// can pass over what sorts after it (Grep's cutoff).
	slices.Reverse(dirs)
	w.push(dirs)
	return own
}

func lstatType(p string) EntryType {
	fi, err := os.Lstat(p)
	if err != nil {
		return TypeOther
	}
	return typeOf(fi.Mode())
}

func typeOf(m fs.FileMode) EntryType {
	switch {
	case m.IsDir():
		return TypeDir
	case m.IsRegular():
		return TypeFile
	case m&fs.ModeSymlink != 0:
		return TypeSymlink
	}
	return TypeOther
}

func (w *walker) push(jobs []job) {
	if len(jobs) == 0 {
		return
	}
	w.mu.Lock()
	w.stack = append(w.stack, jobs...)
	w.pending += len(jobs)
	w.mu.Unlock()
	if len(jobs) == 1 {
		w.cond.Signal()
	} else {
		w.cond.Broadcast()
	}
}

func (w *walker) pop() (job, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.stack) == 0 {
		if w.pending == 0 || w.stop.Load() {
			return job{}, false
		}
		w.cond.Wait()
	}
	j := w.stack[len(w.stack)-1]
	w.stack[len(w.stack)-1] = job{}
	w.stack = w.stack[:len(w.stack)-1]
	return j, true
}

func (w *walker) done() {
	w.mu.Lock()
	w.pending--
	last := w.pending == 0
	w.mu.Unlock()
	if last {
		w.cond.Broadcast()
	}
}
