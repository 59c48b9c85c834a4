package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
)

// Mode is what Grep reports per file.
type Mode uint8

// Grep's output modes (docs/reference/runtime.md, "Grep").
const (
	FilesWithMatches Mode = iota // the paths of matching files
	Count                        // PATH:N, matching lines per file
	Content                      // PATH:LINE:text, with context lines
)

// GrepOptions configure a search.
type GrepOptions struct {
	// Walk gives the root, the environment, the workers and the entry
	// limit; its Visit and Descend are not used.
	Walk WalkOptions
	// File says that Walk.Root is a file, searched alone whatever the
	// ignore rules say (it was named explicitly).
	File    bool
	Matcher *Matcher
	// Filter, when set, picks the files searched (the tool's glob).
	Filter func(e Entry) bool
	Mode   Mode
	// Before and After are context lines around each match (Content).
	Before, After int
	LineNumbers   bool
	HeadLimit     int   // lines (or files) of output at most; 0: no limit
	MaxBytes      int   // bytes of output at most
	MaxFileBytes  int64 // larger files are not searched
	// Text turns a line's bytes into output text (cutting long lines,
	// mending bad UTF-8).
	Text func(line []byte) string
}

// GrepResult is a search's outcome.
type GrepResult struct {
	Output string // matching files or lines in path order, within the limits
	// Files counts the files that matched among those searched: files
	// that sort after a full output are not searched at all.
	Files  int
	Full   bool // the limits cut the output
	TooBig int  // files over MaxFileBytes, not searched
	// Grew names files that grew while they were searched (their size at
	// opening was searched); NGrew counts them all.
	Grew   []string
	NGrew  int
	Report *Report
}

// chunk is the size of a worker's read buffer: large files are searched
// through it, a part at a time.
const chunk = 128 << 10

// sniffLen is how much of a file's start decides whether it is binary
// (a NUL byte), as git and grep decide.
const sniffLen = 8 << 10

// Grep searches the files below o.Walk.Root (or the file itself) in
// parallel and returns the results sorted by path: a folder's entries in
// byte order of their names, depth first.
func Grep(ctx context.Context, o GrepOptions) (*GrepResult, error) {
	workers := o.Walk.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	g := &grepper{o: o, res: &GrepResult{}, ctx: ctx}
	ws := make([]grepWorker, workers)
	if o.File {
		g.res.Report = &Report{}
		ws = ws[:1]
		g.file(&ws[0], Entry{Path: o.Walk.Root, Rel: "", Type: TypeFile}, g.res.Report)
		if err := ctx.Err(); err != nil {
			return g.res, err
		}
	} else {
		wo := o.Walk
		wo.Workers = workers
		rep := &Report{}
		wo.report = rep
		wo.Visit = func(id int, e Entry) {
			if e.Type != TypeFile || (o.Filter != nil && !o.Filter(e)) {
				return
			}
			g.file(&ws[id], e, rep)
		}
		_, err := Walk(ctx, wo)
		g.res.Report = rep
		if err != nil {
			return g.res, err
		}
	}
	var hits []hit
	for i := range ws {
		hits = append(hits, ws[i].hits...)
	}
	g.assemble(hits)
	return g.res, nil
}

type grepper struct {
	o   GrepOptions
	res *GrepResult
	ctx context.Context
	// cutoff, once set, is a path whose results and those before it fill
	// the output: files that sort after it need not be searched.
	cutoff atomic.Pointer[string]
	// big is held by the one worker whose buffer has grown past a chunk
	// for a long line, so that such buffers are never more than one:
	// memory stays at a chunk a worker plus one file.
	big sync.Mutex

	mu sync.Mutex // guards the counters of res
}

// hit is one file's output, formatted.
type hit struct {
	rel   string
	out   []byte
	lines int
}

type grepWorker struct {
	buf  []byte
	hits []hit
	// bytes and lines held in hits, to trim them once they pass what
	// could ever be shown
	held, heldLines int
}

// keep records a file's output and, when the worker holds much more than
// the limits let through, drops the results that sort after what can be
// shown, so memory stays bounded whatever matches.
func (g *grepper) keep(w *grepWorker, h hit) {
	w.hits = append(w.hits, h)
	w.held += len(h.out)
	w.heldLines += h.lines
	if w.held <= 2*g.o.MaxBytes && (g.o.HeadLimit <= 0 || w.heldLines <= 2*g.o.HeadLimit) {
		return
	}
	sortHits(w.hits)
	n, crossed := g.shown(w.hits)
	clear(w.hits[n:])
	w.hits = w.hits[:n]
	if crossed {
		g.lowerCutoff(w.hits[n-1].rel)
	}
	w.held, w.heldLines = 0, 0
	for _, h := range w.hits {
		w.held += len(h.out)
		w.heldLines += h.lines
	}
}

// shown returns how many of the sorted hits the output can reach: all that
// fit and the first that does not, which crossed reports.
func (g *grepper) shown(hits []hit) (n int, crossed bool) {
	size, lines := 0, 0
	for i, h := range hits {
		size += len(h.out)
		lines += h.lines
		if size > g.o.MaxBytes || (g.o.HeadLimit > 0 && lines > g.o.HeadLimit) {
			return i + 1, true
		}
	}
	return len(hits), false
}

// lowerCutoff records that the results up to rel fill the output.
func (g *grepper) lowerCutoff(rel string) {
	for {
		cur := g.cutoff.Load()
		if cur != nil && !pathLess(rel, *cur) {
			return
		}
		if g.cutoff.CompareAndSwap(cur, &rel) {
			return
		}
	}
}

// pastCutoff reports whether a file sorts after what the output can show.
func (g *grepper) pastCutoff(rel string) bool {
	c := g.cutoff.Load()
	return c != nil && pathLess(*c, rel)
}

func sortHits(hits []hit) {
	sort.Slice(hits, func(i, j int) bool { return pathLess(hits[i].rel, hits[j].rel) })
}

// pathLess orders paths as a depth-first walk visits them with each
// folder's names in byte order: '/' sorts before every other byte.
func pathLess(a, b string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		if a[i] == '/' {
			return true
		}
		if b[i] == '/' {
			return false
		}
		return a[i] < b[i]
	}
	return len(a) < len(b)
}

// assemble writes the kept results in path order through the limits,
// line by line, as the output was always cut.
func (g *grepper) assemble(hits []hit) {
	sortHits(hits)
	var b bytes.Buffer
	lines := 0
	for _, h := range hits {
		if len(h.out) <= g.o.MaxBytes-b.Len() && (g.o.HeadLimit <= 0 || lines+h.lines <= g.o.HeadLimit) {
			b.Write(h.out)
			lines += h.lines
			continue
		}
		for rest := h.out; len(rest) > 0; {
			i := bytes.IndexByte(rest, '\n')
			line := rest[:i]
			if (g.o.HeadLimit > 0 && lines >= g.o.HeadLimit) || b.Len()+len(line) > g.o.MaxBytes {
				g.res.Full = true
				break
			}
			b.Write(rest[:i+1])
			lines++
			rest = rest[i+1:]
		}
		if g.res.Full {
			break
		}
	}
	g.res.Output = b.String()
}

// file searches one file and keeps its output.
func (g *grepper) file(w *grepWorker, e Entry, rep *Report) {
	if g.pastCutoff(e.Rel) {
		return
	}
	f, size, err := openRegular(e.Path)
	if err != nil {
		if !errors.Is(err, errNotRegular) && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ELOOP) {
			rep.unreadablePath(e.Path, err)
		}
		return
	}
	defer f.close()
	if size > g.o.MaxFileBytes {
		g.mu.Lock()
		g.res.TooBig++
		g.mu.Unlock()
		return
	}
	if w.buf == nil {
		w.buf = make([]byte, chunk)
	}
	s := fileSearch{g: g, w: w, f: f, path: e.Path, limit: size, lineNo: 1}
	if size == 0 {
		s.limit = g.o.MaxFileBytes // a file that does not say its size (as in /proc)
	}
	out, lines, matched := s.run()
	if s.big {
		w.buf = nil // a long line grew it: give the memory back
		g.big.Unlock()
	}
	if s.grew {
		g.mu.Lock()
		g.res.NGrew++
		if len(g.res.Grew) < maxNamed {
			g.res.Grew = append(g.res.Grew, e.Path)
		}
		g.mu.Unlock()
	}
	if s.err != nil {
		rep.unreadablePath(e.Path, s.err)
	}
	if !matched {
		return
	}
	g.mu.Lock()
	g.res.Files++
	g.mu.Unlock()
	rel := e.Rel
	g.keep(w, hit{rel: rel, out: out, lines: lines})
}

// fileSearch is the state of one file's search.
type fileSearch struct {
	g     *grepper
	w     *grepWorker
	f     rfile
	path  string
	limit int64 // bytes to read: the size at opening
	read  int64
	eof   bool
	grew  bool
	err   error
	big   bool // holds the grepper's big lock: the buffer has grown

	n      int // bytes in buf
	lineNo int // the number of the line starting at numAt
	numAt  int

	out       []byte
	lines     int
	count     int
	last      int // the last line printed (content), 0 for none
	afterLeft int
}

// fill reads into the free part of the buffer, up to the size the file
// had when opened.
func (s *fileSearch) fill() {
	for !s.eof && s.n < len(s.w.buf) {
		if err := s.g.ctx.Err(); err != nil {
			s.eof = true
			return
		}
		m, err := s.f.read(s.w.buf[s.n:])
		if err != nil {
			s.err, s.eof = err, true
			return
		}
		if m == 0 {
			s.eof = true
			return
		}
		if s.read+int64(m) > s.limit {
			m = int(s.limit - s.read)
			s.grew, s.eof = true, true
		}
		s.read += int64(m)
		s.n += m
		if s.read == s.limit && s.n < len(s.w.buf) {
			// Short of a full buffer at the size it had: that was all,
			// unless it grew, which one more read would show; the file's
			// size at opening is what is searched either way.
			s.eof = true
		}
	}
}

// run searches the file; it returns the output and whether it matched.
func (s *fileSearch) run() ([]byte, int, bool) {
	g := s.g
	s.fill()
	if s.err != nil {
		return nil, 0, false
	}
	if bytes.IndexByte(s.w.buf[:min(s.n, sniffLen)], 0) >= 0 {
		return nil, 0, false // binary
	}
	from := 0 // where the search goes on: a line start
	for {
		if g.ctx.Err() != nil {
			return nil, 0, false
		}
		buf := s.w.buf[:s.n]
		complete := s.n
		if !s.eof {
			complete = bytes.LastIndexByte(buf, '\n') + 1
		}
		if done := s.scan(buf[:complete], from); done {
			break
		}
		if s.eof {
			break
		}
		// Keep the partial last line, and the lines before-context may
		// still print.
		keep := complete
		if g.o.Mode == Content && g.o.Before > 0 {
			for k := 0; k < g.o.Before && keep > 0; k++ {
				keep = bytes.LastIndexByte(buf[:keep-1], '\n') + 1
			}
		}
		if s.numAt <= keep {
			if g.o.Mode == Content {
				s.lineNo += bytes.Count(buf[s.numAt:keep], []byte{'\n'})
			}
			s.numAt = 0
		} else {
			s.numAt -= keep
		}
		copy(s.w.buf, buf[keep:])
		s.n -= keep
		from = complete - keep
		if s.n == len(s.w.buf) {
			// One line (or the context kept) fills the buffer: grow it,
			// within the file size limit.
			if !s.big {
				g.big.Lock()
				s.big = true
			}
			nb := make([]byte, min(2*len(s.w.buf), int(g.o.MaxFileBytes)+1))
			copy(nb, s.w.buf)
			s.w.buf = nb
		}
		s.fill()
	}
	switch {
	case s.count == 0:
		return nil, 0, false
	case g.o.Mode == FilesWithMatches:
		return append([]byte(s.path), '\n'), 1, true
	case g.o.Mode == Count:
		return fmt.Appendf(nil, "%s:%d\n", s.path, s.count), 1, true
	}
	return s.out, s.lines, true
}

// scan searches whole lines buf[from:]; it reports true when the file
// needs no more reading.
func (s *fileSearch) scan(buf []byte, from int) bool {
	g := s.g
	m := g.o.Matcher
	pos := from
	for pos < len(buf) {
		if s.afterLeft > 0 {
			end := lineEnd(buf, pos)
			if m.MatchLine(buf[pos:end]) {
				s.count++
				s.emit(buf, pos, end, s.lineOf(buf, pos), true)
				s.afterLeft = g.o.After
			} else {
				s.emit(buf, pos, end, s.lineOf(buf, pos), false)
				s.afterLeft--
			}
			if s.full() {
				return true
			}
			pos = end + 1
			continue
		}
		start, end, ok := m.Next(buf, pos)
		if !ok {
			break
		}
		s.count++
		switch g.o.Mode {
		case FilesWithMatches:
			return true
		case Count:
			pos = end + 1
			continue
		}
		n := s.lineOf(buf, start)
		if g.o.Before > 0 {
			// The lines before, not printed yet (the buffer keeps them).
			first, k := start, 0
			for k < g.o.Before && first > 0 && n-k-1 > s.last {
				first = bytes.LastIndexByte(buf[:first-1], '\n') + 1
				k++
			}
			for p := first; p < start; k-- {
				e := lineEnd(buf, p)
				s.emit(buf, p, e, n-k, false)
				p = e + 1
			}
		}
		s.emit(buf, start, end, n, true)
		if s.full() {
			return true
		}
		s.afterLeft = g.o.After
		pos = end + 1
	}
	return false
}

// lineOf returns the number of the line starting at off, counting from
// the last place counted.
func (s *fileSearch) lineOf(buf []byte, off int) int {
	s.lineNo += bytes.Count(buf[s.numAt:off], []byte{'\n'})
	s.numAt = off
	return s.lineNo
}

// emit writes content line number n: PATH:N:text for a match, PATH-N-text for
// context, with "--" between groups that do not touch.
func (s *fileSearch) emit(buf []byte, start, end, n int, match bool) {
	g := s.g
	if s.last > 0 && n > s.last+1 && (g.o.Before > 0 || g.o.After > 0) {
		s.out = append(s.out, "--\n"...)
		s.lines++
	}
	sep := byte('-')
	if match {
		sep = ':'
	}
	s.out = append(s.out, s.path...)
	s.out = append(s.out, sep)
	if g.o.LineNumbers {
		s.out = strconv.AppendInt(s.out, int64(n), 10)
		s.out = append(s.out, sep)
	}
	s.out = append(s.out, g.o.Text(trimCR(buf[start:end]))...)
	s.out = append(s.out, '\n')
	s.lines++
	s.last = n
}

// full reports whether this file's output alone passes the limits, so
// the rest of it could never be shown.
func (s *fileSearch) full() bool {
	return len(s.out) > s.g.o.MaxBytes || (s.g.o.HeadLimit > 0 && s.lines > s.g.o.HeadLimit)
}
