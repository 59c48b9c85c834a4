package prompt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"agent/internal/quote"
	"agent/internal/securefile"
)

// Limits of the instruction files (docs/reference/runtime.md, "Limits of
// the instruction files").
const (
	// MaxFileBytes is the largest instruction or imported file read; a
	// larger one is skipped with a diagnostic.
	MaxFileBytes = 256 << 10
	// DefaultMaxBytes caps the text of the files loaded together (at the
	// start, or attached to one tool result) when LoaderOptions.MaxBytes
	// is zero; the setting instructions.maxBytes overrides it.
	DefaultMaxBytes = 64 << 10
	// MaxImportDepth is how deep imports nest: a file's imports are at
	// depth 1, theirs at 2, and an import at depth 5 is refused.
	MaxImportDepth = 4
)

// projectNames are the instruction files of one folder, in load order;
// userNames those of the home folder. Later files take precedence.
var (
	projectNames = []string{"AGENTS.md", "CLAUDE.md", ".agent/AGENTS.md", ".compat/CLAUDE.md", "AGENTS.local.md", "CLAUDE.local.md"}
	userNames    = []string{".agent/AGENTS.md", ".compat/CLAUDE.md"}
)

// Scope says where an instruction file comes from, which decides whether
// it needs a trusted workspace and where its imports may reach.
type Scope int

const (
	// ScopeUser files are in the home folder; they always load and may
	// import any file.
	ScopeUser Scope = iota + 1
	// ScopeProject files are in the repository; they load only in a
	// trusted workspace and may import only inside the repository root.
	ScopeProject
)

func (s Scope) String() string {
	switch s {
	case ScopeUser:
		return "user"
	case ScopeProject:
		return "project"
	}
	return "unknown"
}

// DiagnosticKind classifies a problem with an instruction file.
type DiagnosticKind int

const (
	// DiagUnreadable: the file exists but cannot be read (permissions, not
	// a regular file, a link loop), or the workspace could not be resolved.
	DiagUnreadable DiagnosticKind = iota + 1
	// DiagTooLarge: the file is over MaxFileBytes and was skipped.
	DiagTooLarge
	// DiagNotUTF8: the file is not valid UTF-8 and was skipped.
	DiagNotUTF8
	// DiagOutside: a project file is a link to a file outside the
	// repository root and was skipped.
	DiagOutside
	// DiagImportMissing: an imported file does not exist.
	DiagImportMissing
	// DiagImportEscape: a project file imports a file outside the
	// repository root.
	DiagImportEscape
	// DiagImportLoop: an import leads back to a file that is importing it.
	DiagImportLoop
	// DiagImportTooDeep: an import nests deeper than MaxImportDepth.
	DiagImportTooDeep
	// DiagOverLimit: a whole file was left out to keep the total under
	// the limit.
	DiagOverLimit
)

func (k DiagnosticKind) String() string {
	switch k {
	case DiagUnreadable:
		return "unreadable"
	case DiagTooLarge:
		return "too large"
	case DiagNotUTF8:
		return "not UTF-8"
	case DiagOutside:
		return "outside the repository"
	case DiagImportMissing:
		return "missing import"
	case DiagImportEscape:
		return "import outside the repository"
	case DiagImportLoop:
		return "import loop"
	case DiagImportTooDeep:
		return "import too deep"
	case DiagOverLimit:
		return "over the limit"
	}
	return "unknown"
}

// Diagnostic is a problem with an instruction file, for the user (the
// notices at start, /memory, /context, stderr in print mode). None stops
// a start.
type Diagnostic struct {
	Kind   DiagnosticKind
	Path   string // the file with the problem (for imports: the importing file)
	Line   int    // 1-based; 0 when the problem is not on one line
	Detail string
}

func (d Diagnostic) String() string {
	if d.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", d.Path, d.Line, d.Detail)
	}
	return d.Path + ": " + d.Detail
}

// Source is a file that an import brought in.
type Source struct {
	Path string // its real path
	Size int    // its size in bytes
}

// File is a loaded instruction file.
type File struct {
	Path     string // where it was found (absolute)
	RealPath string // its real path (links resolved)
	Scope    Scope
	Size     int      // the file's own size in bytes
	Text     string   // its text with the imports inlined; empty for a dropped file
	Imports  []Source // the files its imports inlined, in order
}

// Duplicate is an instruction file that was not loaded again because the
// same real path or the same content was loaded before.
type Duplicate struct {
	Path string // the file skipped
	Of   string // the file (or import) that holds the same text
}

// Set is the instruction files loaded together: at the start of a
// session, or attached to one tool result. A nil *Set is empty.
type Set struct {
	Files       []File // loaded, farthest first
	Dropped     []File // left out whole over MaxBytes (DiagOverLimit says why)
	Duplicates  []Duplicate
	Diagnostics []Diagnostic
	MaxBytes    int // the limit that applied
}

// Size is the total text of the loaded files in bytes, which MaxBytes
// caps.
func (s *Set) Size() int {
	if s == nil {
		return 0
	}
	n := 0
	for _, f := range s.Files {
		n += len(f.Text)
	}
	return n
}

// LoaderOptions configure a Loader. The zero value loads nothing from the
// home folder and no project files, in the working directory, with the
// default limit.
type LoaderOptions struct {
	Workspace string // "": the working directory
	Home      string // the user's home folder; "": no user files
	// Trusted loads the project files (the repository's and the
	// workspace's); an untrusted workspace gets the user files only.
	Trusted bool
	// MaxBytes caps the text loaded together (setting
	// instructions.maxBytes); 0 or less: DefaultMaxBytes.
	MaxBytes int
}

// Loader loads a session's instruction files (docs/reference/runtime.md,
// "Instruction files"): Load at the start (and again after a compaction),
// Attach as tools reach folders below the workspace. Within a session a
// file's text is loaded once. A Loader is safe for concurrent use.
type Loader struct {
	ws, root, home string
	hasGit         bool
	trusted        bool
	max            int
	setup          []Diagnostic // from resolving the workspace

	mu       sync.Mutex
	seen     seenState       // what the session holds
	attached map[string]bool // folders below the workspace attached so far
}

// NewLoader resolves the workspace and its repository root (the nearest
// folder at or above it with a .git folder or file; the workspace itself
// when there is none) and returns a Loader. It reads no instruction file.
func NewLoader(opts LoaderOptions) *Loader {
	l := &Loader{trusted: opts.Trusted, max: opts.MaxBytes, attached: map[string]bool{}}
	if l.max <= 0 {
		l.max = DefaultMaxBytes
	}
	ws := opts.Workspace
	if ws == "" {
		ws = "."
	}
	if abs, err := filepath.Abs(ws); err == nil {
		ws = abs
	}
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	} else {
		l.setup = append(l.setup, Diagnostic{Kind: DiagUnreadable, Path: ws, Detail: "the workspace cannot be resolved: " + reason(err)})
	}
	l.ws = ws
	l.root, l.hasGit = FindGitRoot(ws)
	if !l.hasGit {
		l.root = ws
	}
	if opts.Home != "" {
		l.home = filepath.Clean(opts.Home)
		if real, err := filepath.EvalSymlinks(l.home); err == nil {
			l.home = real
		}
	}
	return l
}

// Workspace is the workspace's real path.
func (l *Loader) Workspace() string { return l.ws }

// Root is the folder the walk starts from and project imports stay in:
// the git root containing the workspace, or the workspace when ok is
// false.
func (l *Loader) Root() (root string, ok bool) { return l.root, l.hasGit }

// FindGitRoot returns the nearest folder at or above dir that holds a .git
// folder or file (a worktree or submodule has a file), without running
// git. dir should be a real, absolute path.
func FindGitRoot(dir string) (string, bool) {
	for d := filepath.Clean(dir); ; {
		if fi, err := os.Stat(filepath.Join(d, ".git")); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
			return d, true
		}
		up := filepath.Dir(d)
		if up == d {
			return "", false
		}
		d = up
	}
}

// Load reads the instruction files from disk: the user files, then (in a
// trusted workspace) each folder's files from the repository root down to
// the workspace. It forgets what earlier loads and attachments held, so it
// is also the reload after a compaction and /memory's reload.
func (l *Loader) Load() *Set {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.newBuilder()
	b.diags = append(b.diags, l.setup...)
	var cands []rawFile
	if l.home != "" {
		cands = b.candidates(cands, l.home, ScopeUser, userNames)
	}
	if l.trusted {
		for _, d := range foldersBetween(l.root, l.ws, true) {
			cands = b.candidates(cands, d, ScopeProject, projectNames)
		}
	}
	set, seen := b.build(cands, seenState{})
	l.seen = seen
	l.attached = map[string]bool{}
	return set
}

// Attach returns the instruction files of the folders between the
// workspace (exclusive) and path (its folder, or path itself when it is a
// folder) that no earlier Attach since the last Load returned, for
// attaching to the result of the tool that read or wrote path. It returns
// nil when there is nothing new, in an untrusted workspace, and for a path
// outside the workspace. A relative path is taken from the workspace.
func (l *Loader) Attach(path string) *Set {
	if !l.trusted || path == "" {
		return nil
	}
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(l.ws, p)
	}
	dir := filepath.Clean(p)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	// The folders are judged, and their files read, by their real paths.
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil || dir == l.ws || !within(l.ws, dir) {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var fresh []string
	for _, d := range foldersBetween(l.ws, dir, false) {
		if !l.attached[d] {
			l.attached[d] = true
			fresh = append(fresh, d)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	b := l.newBuilder()
	var cands []rawFile
	for _, d := range fresh {
		cands = b.candidates(cands, d, ScopeProject, projectNames)
	}
	set, seen := b.build(cands, l.seen)
	l.seen = seen
	if len(set.Files) == 0 && len(set.Dropped) == 0 && len(set.Diagnostics) == 0 && len(set.Duplicates) == 0 {
		return nil
	}
	return set
}

// foldersBetween lists the folders from top down to bottom (bottom within
// top), farthest first; top itself only when withTop is set.
func foldersBetween(top, bottom string, withTop bool) []string {
	var up []string
	for d := bottom; d != top; {
		up = append(up, d)
		next := filepath.Dir(d)
		if next == d {
			break
		}
		d = next
	}
	if withTop {
		up = append(up, top)
	}
	out := make([]string, len(up))
	for i, d := range up {
		out[len(up)-1-i] = d
	}
	return out
}

// within reports whether p is dir or below it (both clean and absolute).
func within(dir, p string) bool {
	if p == dir {
		return true
	}
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return strings.HasPrefix(p, dir+"/")
}

// rawFile is an instruction file as read, before its imports are inlined.
type rawFile struct {
	path, real string
	scope      Scope
	text       string
}

// problem is why a file that exists was not used.
type problem struct {
	kind   DiagnosticKind
	line   int // for DiagNotUTF8: the line of the first bad byte
	detail string
}

// readResult is one file read (cached per build).
type readResult struct {
	text string
	prob *problem
}

// seenState is what a session holds, so that the same real path or the
// same text loads once: each maps to the file (or import) that holds it.
type seenState struct {
	paths    map[string]string
	contents map[string]string
}

func (s seenState) clone() seenState {
	c := seenState{paths: make(map[string]string, len(s.paths)), contents: make(map[string]string, len(s.contents))}
	for k, v := range s.paths {
		c.paths[k] = v
	}
	for k, v := range s.contents {
		c.contents[k] = v
	}
	return c
}

// holder returns the file that holds real or text already.
func (s seenState) holder(real, text string) (string, bool) {
	if p, ok := s.paths[real]; ok {
		return p, true
	}
	p, ok := s.contents[text]
	return p, ok
}

func (s seenState) add(real, text, path string) {
	s.paths[real] = path
	s.contents[text] = path
}

// builder does one Load or Attach: it reads files (each once), inlines
// imports and applies the limits, collecting diagnostics.
type builder struct {
	l        *Loader
	cache    map[string]readResult // by real path
	diags    []Diagnostic
	reported map[Diagnostic]bool
}

func (l *Loader) newBuilder() *builder {
	return &builder{l: l, cache: map[string]readResult{}, reported: map[Diagnostic]bool{}}
}

func (b *builder) diag(d Diagnostic) {
	if !b.reported[d] {
		b.reported[d] = true
		b.diags = append(b.diags, d)
	}
}

// resolve returns path's real path; missing is set when it does not
// exist (then real is path, cleaned).
func resolve(path string) (real string, missing bool, err error) {
	real, err = filepath.EvalSymlinks(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return filepath.Clean(path), true, nil
		}
		return "", false, err
	}
	return real, false, nil
}

// resolveIn is resolve for name (clean, relative) below dir, a real path:
// one Lstat per component of name, and EvalSymlinks only when one is a
// link. Most instruction file names do not exist, which then costs one
// system call.
func resolveIn(dir, name string) (real string, missing bool, err error) {
	p := dir
	for _, c := range strings.Split(name, "/") {
		p = filepath.Join(p, c)
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			return filepath.Join(dir, name), true, nil
		case err != nil:
			return "", false, err
		case fi.Mode()&fs.ModeSymlink != 0:
			return resolve(filepath.Join(dir, name))
		}
	}
	return p, false, nil
}

// read reads the file at real (a resolved path) once per build. The file
// is opened without following a link in its last component and without
// waiting on a FIFO (securefile.Open).
func (b *builder) read(real string) readResult {
	if r, ok := b.cache[real]; ok {
		return r
	}
	r := readFile(real)
	b.cache[real] = r
	return r
}

func readFile(real string) readResult {
	f, fi, err := securefile.Open(real, syscall.O_NOFOLLOW)
	if err != nil {
		return readResult{prob: &problem{kind: DiagUnreadable, detail: "cannot be read: " + reason(err)}}
	}
	defer f.Close()
	if fi.Size() > MaxFileBytes {
		return readResult{prob: tooLarge(fi.Size())}
	}
	// The file may grow after Stat: read one byte past the limit.
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxFileBytes+1)); err != nil {
		return readResult{prob: &problem{kind: DiagUnreadable, detail: "cannot be read: " + reason(err)}}
	}
	data := buf.Bytes()
	if len(data) > MaxFileBytes {
		return readResult{prob: tooLarge(int64(len(data)))}
	}
	if !utf8.Valid(data) {
		line := 1
		for i := 0; i < len(data); {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			if r == '\n' {
				line++
			}
			i += n
		}
		return readResult{prob: &problem{kind: DiagNotUTF8, line: line, detail: "skipped: not valid UTF-8"}}
	}
	return readResult{text: strings.TrimPrefix(string(data), "\uFEFF")}
}

func tooLarge(size int64) *problem {
	return &problem{kind: DiagTooLarge, detail: fmt.Sprintf("skipped: %d bytes, over the limit of %d (256 KiB) for one file", size, MaxFileBytes)}
}

// reason is an error's text without the path an *fs.PathError repeats.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// candidates appends the instruction files of folder dir (names in
// order) that exist and can be used; a problem becomes a diagnostic.
func (b *builder) candidates(out []rawFile, dir string, scope Scope, names []string) []rawFile {
	for _, name := range names {
		path := filepath.Join(dir, name)
		real, missing, err := resolveIn(dir, name)
		switch {
		case missing:
			continue
		case err != nil:
			b.diag(Diagnostic{Kind: DiagUnreadable, Path: path, Detail: "cannot be read: " + reason(err)})
			continue
		case scope == ScopeProject && !within(b.l.root, real):
			b.diag(Diagnostic{Kind: DiagOutside, Path: path, Detail: "skipped: it links to " + real + ", outside the repository root " + b.l.root})
			continue
		}
		r := b.read(real)
		if r.prob != nil {
			b.diag(Diagnostic{Kind: r.prob.kind, Path: path, Line: r.prob.line, Detail: r.prob.detail})
			continue
		}
		out = append(out, rawFile{path: path, real: real, scope: scope, text: r.text})
	}
	return out
}

// outcome is what became of one candidate in one pass.
type outcome struct {
	file  File
	dupOf string // set: a duplicate
	over  bool   // its text alone is over the limit
}

// build inlines the imports of the candidates, in order, on top of what
// the session holds (base), and applies the limit: a file whose text alone
// is over it is dropped, then whole files farthest first until the rest
// fits. Dropping changes what later files inline (an import that was
// "included above" may now be inlined), so each drop is followed by a
// fresh pass.
func (b *builder) build(cands []rawFile, base seenState) (*Set, seenState) {
	set := &Set{MaxBytes: b.l.max}
	keep := make([]bool, len(cands))
	for i := range keep {
		keep[i] = true
	}
	for {
		seen := base.clone()
		outs := make([]outcome, len(cands))
		total, anyOver := 0, false
		for i, c := range cands {
			if keep[i] {
				outs[i] = b.expandTop(c, seen)
				total += len(outs[i].file.Text)
				anyOver = anyOver || outs[i].over
			}
		}
		switch {
		case anyOver:
			for i := range cands {
				if keep[i] && outs[i].over {
					keep[i] = false
					b.drop(set, outs[i].file, fmt.Sprintf("left out: with its imports it alone is over the limit of %d bytes (instructions.maxBytes)", b.l.max))
				}
			}
			continue
		case total > b.l.max:
			for i := range cands {
				if total <= b.l.max {
					break
				}
				if keep[i] && outs[i].dupOf == "" {
					keep[i] = false
					b.drop(set, outs[i].file, fmt.Sprintf("left out (%d bytes with its imports): the instruction files came to %d bytes, over the limit of %d (instructions.maxBytes), and farther files are left out first", len(outs[i].file.Text), total, b.l.max))
					total -= len(outs[i].file.Text)
				}
			}
			continue
		}
		for i := range cands {
			switch {
			case !keep[i]:
			case outs[i].dupOf != "":
				set.Duplicates = append(set.Duplicates, Duplicate{Path: cands[i].path, Of: outs[i].dupOf})
			default:
				set.Files = append(set.Files, outs[i].file)
			}
		}
		set.Diagnostics = b.diags
		return set, seen
	}
}

func (b *builder) drop(set *Set, f File, why string) {
	f.Text = ""
	set.Dropped = append(set.Dropped, f)
	b.diag(Diagnostic{Kind: DiagOverLimit, Path: f.Path, Detail: why})
}

// expandTop inlines the imports of one instruction file, unless the
// session holds its path or text already.
func (b *builder) expandTop(c rawFile, seen seenState) outcome {
	if p, ok := seen.holder(c.real, c.text); ok {
		return outcome{dupOf: p}
	}
	seen.add(c.real, c.text, c.path)
	f := File{Path: c.path, RealPath: c.real, Scope: c.scope, Size: len(c.text)}
	var sb strings.Builder
	ok := b.expand(&sb, c, 0, []string{c.real}, seen, &f.Imports)
	f.Text = sb.String()
	return outcome{file: f, over: !ok}
}

// expand writes f's text to sb with its imports inlined. It stops, and
// returns false, once sb is over the limit: the file will be dropped
// anyway, and a file that imports many others costs no more than that.
func (b *builder) expand(sb *strings.Builder, f rawFile, depth int, stack []string, seen seenState, imports *[]Source) bool {
	last := 0
	for _, im := range ScanImports(f.text) {
		sb.WriteString(f.text[last:im.Start])
		last = im.End
		b.inline(sb, f, im, depth, stack, seen, imports)
		if sb.Len() > b.l.max {
			return false
		}
	}
	sb.WriteString(f.text[last:])
	return sb.Len() <= b.l.max
}

// inline writes one import's text in place of its line, or a note saying
// why it is not there.
func (b *builder) inline(sb *strings.Builder, f rawFile, im Import, depth int, stack []string, seen seenState, imports *[]Source) {
	refuse := func(kind DiagnosticKind, why string) {
		fmt.Fprintf(sb, "[@%s not imported: %s]", quote.Cut(im.Path), why)
		if kind != 0 {
			b.diag(Diagnostic{Kind: kind, Path: f.path, Line: im.Line, Detail: "@" + quote.Cut(im.Path) + ": " + why})
		}
	}
	if depth+1 > MaxImportDepth {
		refuse(DiagImportTooDeep, fmt.Sprintf("imports nest at most %d deep", MaxImportDepth))
		return
	}
	target, ok := b.importTarget(f.path, im.Path)
	if !ok {
		refuse(DiagImportMissing, "no home folder to resolve ~/")
		return
	}
	real, missing, err := resolve(target)
	switch {
	case err != nil:
		refuse(DiagUnreadable, "cannot be read: "+reason(err))
		return
	case f.scope == ScopeProject && !within(b.l.root, real):
		refuse(DiagImportEscape, "outside the repository root "+b.l.root+" (project files import only inside it)")
		return
	case missing:
		refuse(DiagImportMissing, "no such file")
		return
	}
	for _, s := range stack {
		if s == real {
			refuse(DiagImportLoop, "import loop (it is being imported already)")
			return
		}
	}
	r := b.read(real)
	if r.prob != nil {
		why := r.prob.detail
		if r.prob.line > 0 {
			why = fmt.Sprintf("%s (line %d)", why, r.prob.line)
		}
		refuse(r.prob.kind, why)
		return
	}
	if p, ok := seen.holder(real, r.text); ok {
		refuse(0, "included above from "+p)
		return
	}
	seen.add(real, r.text, real)
	*imports = append(*imports, Source{Path: real, Size: len(r.text)})
	b.expand(sb, rawFile{path: target, real: real, scope: f.scope, text: trimLineBreak(r.text)}, depth+1, append(stack, real), seen, imports)
}

// importTarget is the path an import names: relative to the importing
// file's folder, ~/ in the home folder, or absolute.
func (b *builder) importTarget(from, p string) (string, bool) {
	switch {
	case strings.HasPrefix(p, "~/"):
		if b.l.home == "" {
			return "", false
		}
		return filepath.Join(b.l.home, p[2:]), true
	case filepath.IsAbs(p):
		return filepath.Clean(p), true
	}
	return filepath.Join(filepath.Dir(from), p), true
}

// trimLineBreak drops one final line break: the import line keeps its own.
func trimLineBreak(s string) string {
	if t, ok := strings.CutSuffix(s, "\n"); ok {
		return strings.TrimSuffix(t, "\r")
	}
	return s
}
