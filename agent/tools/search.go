package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"agent/internal/pathglob"
	"agent/internal/securefile"
)

const (
	globSchema = `{"type":"object","properties":{` +
		`"pattern":{"type":"string","minLength":1,"description":"Glob pattern such as **/*.go or src/*.{ts,tsx}: * and ? stay within a folder, ** crosses folders, [abc] is a class, {a,b} alternatives"},` +
		`"path":{"type":"string","description":"The folder to search in; the workspace when omitted"}},` +
		`"required":["pattern"],"additionalProperties":false}`
	grepSchema = `{"type":"object","properties":{` +
		`"pattern":{"type":"string","minLength":1,"description":"Regular expression (RE2 syntax) matched against each line"},` +
		`"path":{"type":"string","description":"File or folder to search; the workspace when omitted"},` +
		`"glob":{"type":"string","description":"Only search files whose name (or, with a /, whose path below the folder) matches this glob, e.g. *.go or src/**/*.{ts,tsx}"},` +
		`"output_mode":{"type":"string","enum":["content","files_with_matches","count"],"description":"content: matching lines; files_with_matches (default): file paths; count: matches per file"},` +
		`"-i":{"type":"boolean","description":"Case-insensitive"},` +
		`"-n":{"type":"boolean","description":"Show line numbers (content mode; default true)"},` +
		`"-A":{"type":"integer","minimum":0,"maximum":100,"description":"Lines of context after each match (content mode)"},` +
		`"-B":{"type":"integer","minimum":0,"maximum":100,"description":"Lines of context before each match (content mode)"},` +
		`"-C":{"type":"integer","minimum":0,"maximum":100,"description":"Lines of context before and after each match (content mode)"},` +
		`"head_limit":{"type":"integer","minimum":1,"description":"Return at most this many lines or files"}},` +
		`"required":["pattern"],"additionalProperties":false}`
)

// maxBraceExpansions bounds the patterns one {a,b} glob expands to.
const maxBraceExpansions = 64

// expandBraces expands {a,b} alternatives, nested ones too. A brace
// without a comma, or unclosed, is literal.
func expandBraces(p string) []string {
	var out []string
	var rec func(s string)
	rec = func(s string) {
		if len(out) >= maxBraceExpansions {
			return
		}
		open, end, commas := findBrace(s)
		if open < 0 {
			out = append(out, s)
			return
		}
		pre, post := s[:open], s[end+1:]
		last := open + 1
		for _, c := range append(commas, end) {
			rec(pre + s[last:c] + post)
			last = c + 1
		}
	}
	rec(p)
	return out
}

// findBrace finds the first brace group with a comma at its own level.
func findBrace(s string) (open, end int, commas []int) {
	for start := 0; start < len(s); start++ {
		if s[start] == '\\' {
			start++
			continue
		}
		if s[start] != '{' {
			continue
		}
		depth := 0
		commas = commas[:0]
		for i := start; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '{':
				depth++
			case ',':
				if depth == 1 {
					commas = append(commas, i)
				}
			case '}':
				if depth--; depth == 0 {
					if len(commas) > 0 {
						return start, i, commas
					}
					i = len(s) // a group without commas is literal
				}
			}
		}
	}
	return -1, -1, nil
}

// globMeta reports whether a segment of a Glob pattern has a wildcard.
func globMeta(seg string) bool { return strings.ContainsAny(seg, "*?[{\\") }

// compileGlob expands and splits a relative glob into segment lists, and
// says how deep a match can lie (-1: any depth, because of **).
func compileGlob(rel string) (pats [][]string, depth int) {
	for _, p := range expandBraces(rel) {
		segs := pathglob.Split(filepath.Clean("/" + p))
		pats = append(pats, segs)
		d := len(segs)
		for _, s := range segs {
			if s == "**" {
				d = -1
			}
		}
		if depth >= 0 && (d < 0 || d > depth) {
			depth = d
		}
	}
	return pats, depth
}

func matchAny(pats [][]string, rel string) bool {
	for _, p := range pats {
		if pathglob.Match(p, "/"+rel) {
			return true
		}
	}
	return false
}

// errWalkLimit ends a walk that visited WalkEntries entries; errOutputFull
// ends a search whose output is complete.
var (
	errWalkLimit  = errors.New("walk limit")
	errOutputFull = errors.New("output full")
)

// walkTree visits root's tree in lexical order, skipping .git folders and not
// following symbolic links, so a search never leaves the folder it was
// allowed to read. fn gets the path relative to root.
func walkTree(ctx context.Context, root string, limit, maxDepth int, fn func(rel string, d fs.DirEntry) error) (truncated bool, err error) {
	n := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // an unreadable folder is skipped
		}
		if p == root {
			return nil
		}
		if n++; n > limit {
			return errWalkLimit
		}
		if n%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel := p[len(root)+1:]
		if root == "/" {
			rel = p[1:]
		}
		if d.IsDir() && maxDepth >= 0 && strings.Count(rel, "/")+1 >= maxDepth {
			if err := fn(rel, d); err != nil {
				return err
			}
			return filepath.SkipDir
		}
		return fn(rel, d)
	})
	if errors.Is(err, errWalkLimit) {
		return true, nil
	}
	return false, err
}

type globTool struct {
	ps  toolPaths
	lim Limits
}

type globArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

func (t *globTool) Spec() Spec {
	return Spec{
		Name: "Glob",
		Description: "Find files by name pattern (e.g. **/*.go). Returns absolute paths sorted by name; " +
			".git folders are skipped and symbolic links to folders are not followed.",
		Schema: json.RawMessage(globSchema),
		Risk:   RiskInspect,
	}
}

// split works out the folder a Glob call searches (the literal folders
// before the first wildcard, which is what permissions judge) and the
// pattern below it. An absolute pattern, or one climbing with "..", moves
// the folder accordingly.
func (t *globTool) split(a globArgs) (root Target, rest string, err error) {
	if a.Pattern == "" {
		return Target{}, "", badArgs("the pattern is empty")
	}
	dir := t.ps.ws
	if a.Path != "" {
		if dir, err = t.ps.abs(a.Path); err != nil {
			return Target{}, "", err
		}
	}
	full := a.Pattern
	if t.ps.home != "" && (full == "~" || strings.HasPrefix(full, "~/")) {
		full = t.ps.home + full[1:]
	}
	if !filepath.IsAbs(full) {
		full = dir + "/" + full
	}
	segs := pathglob.Split(filepath.Clean(full))
	k := 0
	for k < len(segs) && !globMeta(segs[k]) {
		k++
	}
	if k == len(segs) && k > 0 {
		k-- // a literal path: search its folder for its name
	}
	root, err = t.ps.target("/" + strings.Join(segs[:k], "/"))
	return root, strings.Join(segs[k:], "/"), err
}

func (t *globTool) Target(args json.RawMessage) (Target, error) {
	var a globArgs
	if err := decodeToolArgs(args, &a); err != nil {
		return Target{}, err
	}
	root, _, err := t.split(a)
	return root, err
}

func (t *globTool) Run(ctx context.Context, args json.RawMessage) Result {
	var a globArgs
	if err := decodeToolArgs(args, &a); err != nil {
		return errorResult("%v", err)
	}
	root, rest, err := t.split(a)
	if err != nil {
		return errorResult("%v", err)
	}
	if fi, err := os.Stat(root.Value); err != nil || !fi.IsDir() {
		return Result{Content: "No files found (" + root.Value + " is not a folder)"}
	}
	pats, depth := compileGlob(rest)
	var found []string
	truncated, err := walkTree(ctx, root.Value, t.lim.WalkEntries, depth, func(rel string, d fs.DirEntry) error {
		if !d.IsDir() && matchAny(pats, rel) {
			found = append(found, filepath.Join(root.Value, rel))
		}
		return nil
	})
	if err != nil {
		return errorResult("searching %s: %v", root.Value, err)
	}
	sort.Strings(found)
	if len(found) == 0 {
		msg := "No files found"
		if truncated {
			msg += fmt.Sprintf(" [the search stopped after %d entries; narrow the pattern or the path]", t.lim.WalkEntries)
		}
		return Result{Content: msg}
	}
	var out strings.Builder
	for i, f := range found {
		if out.Len()+len(f) > t.lim.Output {
			fmt.Fprintf(&out, "[%d more files not shown; narrow the pattern]\n", len(found)-i)
			break
		}
		out.WriteString(f)
		out.WriteByte('\n')
	}
	if truncated {
		fmt.Fprintf(&out, "[the search stopped after %d entries; narrow the pattern or the path]\n", t.lim.WalkEntries)
	}
	return Result{Content: out.String()}
}

type grepTool struct {
	ps  toolPaths
	lim Limits
}

type grepArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	OutputMode string `json:"output_mode"`
	IgnoreCase bool   `json:"-i"`
	LineNums   *bool  `json:"-n"`
	After      int    `json:"-A"`
	Before     int    `json:"-B"`
	Context    int    `json:"-C"`
	HeadLimit  int    `json:"head_limit"`
}

func (t *grepTool) Spec() Spec {
	return Spec{
		Name: "Grep",
		Description: "Search file contents with a regular expression (RE2 syntax), line by line. Binary files, " +
			".git folders and symbolic links are skipped; results are in path order.",
		Schema: json.RawMessage(grepSchema),
		Risk:   RiskInspect,
	}
}

func (t *grepTool) Target(args json.RawMessage) (Target, error) {
	var a grepArgs
	if err := decodeToolArgs(args, &a); err != nil {
		return Target{}, err
	}
	return t.ps.target(orDefault(a.Path, "."))
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// grepOut collects output within the limits and notes what was cut.
type grepOut struct {
	b         strings.Builder
	lines     int
	headLimit int
	maxBytes  int
	full      bool
}

func (g *grepOut) line(s string) bool {
	if g.full {
		return false
	}
	if (g.headLimit > 0 && g.lines >= g.headLimit) || g.b.Len()+len(s) > g.maxBytes {
		g.full = true
		return false
	}
	g.b.WriteString(s)
	g.b.WriteByte('\n')
	g.lines++
	return true
}

func (t *grepTool) Run(ctx context.Context, args json.RawMessage) Result {
	var a grepArgs
	if err := decodeToolArgs(args, &a); err != nil {
		return errorResult("%v", err)
	}
	expr := a.Pattern
	if a.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return errorResult("invalid regular expression (RE2 syntax): %v", err)
	}
	if a.Pattern == "" {
		return errorResult("pattern is required")
	}
	mode := orDefault(a.OutputMode, "files_with_matches")
	if mode != "content" && mode != "files_with_matches" && mode != "count" {
		return errorResult("output_mode must be content, files_with_matches or count")
	}
	before, after := max(a.Before, a.Context, 0), max(a.After, a.Context, 0)
	before, after = min(before, 100), min(after, 100)
	numbers := a.LineNums == nil || *a.LineNums
	root, err := t.ps.target(orDefault(a.Path, "."))
	if err != nil {
		return errorResult("%v", err)
	}
	fi, err := os.Stat(root.Value)
	if err != nil {
		return errorResult("%s does not exist", root.Value)
	}
	var filter [][]string
	nameOnly := false
	if a.Glob != "" {
		filter, _ = compileGlob(a.Glob)
		nameOnly = !strings.Contains(a.Glob, "/")
	}
	out := &grepOut{headLimit: a.HeadLimit, maxBytes: t.lim.Output}
	tooBig, matchedFiles := 0, 0
	search := func(p string) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		data, err := securefile.ReadFile(p, t.lim.FileBytes)
		if errors.Is(err, securefile.ErrTooLarge) {
			tooBig++
			return nil
		}
		if err != nil || isBinary(data) {
			return nil
		}
		if t.grepFile(p, data, re, mode, numbers, before, after, out) {
			matchedFiles++
		}
		if out.full {
			return errOutputFull
		}
		return nil
	}
	truncated := false
	if fi.Mode().IsRegular() {
		err = search(root.Value)
	} else if fi.IsDir() {
		truncated, err = walkTree(ctx, root.Value, t.lim.WalkEntries, -1, func(rel string, d fs.DirEntry) error {
			if !d.Type().IsRegular() {
				return nil // folders are walked; links and devices are not read
			}
			if filter != nil {
				if nameOnly && !matchAnySegment(filter, d.Name()) || !nameOnly && !matchAny(filter, rel) {
					return nil
				}
			}
			return search(filepath.Join(root.Value, rel))
		})
	} else {
		return errorResult("%s is not a file or folder", root.Value)
	}
	if err != nil && !errors.Is(err, errOutputFull) {
		if ctx.Err() != nil {
			return errorResult("interrupted")
		}
		return errorResult("searching %s: %v", root.Value, err)
	}
	res := out.b.String()
	if matchedFiles == 0 {
		res = "No matches found\n"
	}
	if out.full {
		res += "[more results not shown: the output limit was reached; narrow the search or use head_limit]\n"
	}
	if truncated {
		res += fmt.Sprintf("[the search stopped after %d entries; narrow the path or the glob]\n", t.lim.WalkEntries)
	}
	if tooBig > 0 {
		res += fmt.Sprintf("[%d files larger than %d bytes were not searched]\n", tooBig, t.lim.FileBytes)
	}
	return Result{Content: res}
}

func matchAnySegment(pats [][]string, name string) bool {
	for _, p := range pats {
		if len(p) == 1 && pathglob.MatchSegment(p[0], name) {
			return true
		}
	}
	return false
}

// grepFile searches one file's lines and writes its results; it reports
// whether anything matched.
func (t *grepTool) grepFile(p string, data []byte, re *regexp.Regexp, mode string, numbers bool, before, after int, out *grepOut) bool {
	var starts []int // line start offsets, kept for context lines
	var matches []int
	for off, n := 0, 0; off < len(data); n++ {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += off
		}
		starts = append(starts, off)
		if re.Match(trimCR(data[off:end])) {
			matches = append(matches, n)
			if mode == "files_with_matches" {
				break
			}
		}
		off = end + 1
	}
	if len(matches) == 0 {
		return false
	}
	switch mode {
	case "files_with_matches":
		out.line(p)
		return true
	case "count":
		out.line(fmt.Sprintf("%s:%d", p, len(matches)))
		return true
	}
	line := func(n int) string {
		end := len(data)
		if n+1 < len(starts) {
			end = starts[n+1] - 1
		}
		return cutLine(textOf(trimCR(bytes.TrimSuffix(data[starts[n]:end], []byte("\n")))), t.lim.LineLength)
	}
	isMatch := make(map[int]bool, len(matches))
	for _, m := range matches {
		isMatch[m] = true
	}
	last := -1 // the last line printed
	for _, m := range matches {
		from, to := max(m-before, last+1, 0), min(m+after, len(starts)-1)
		if last >= 0 && from > last+1 && (before > 0 || after > 0) {
			if !out.line("--") {
				return true
			}
		}
		for n := from; n <= to; n++ {
			sep := "-"
			if isMatch[n] {
				sep = ":"
			}
			s := p + sep + line(n)
			if numbers {
				s = fmt.Sprintf("%s%s%d%s%s", p, sep, n+1, sep, line(n))
			}
			if !out.line(s) {
				return true
			}
			last = n
		}
	}
	return true
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}
