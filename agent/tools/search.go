package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"agent/internal/pathglob"
	"agent/internal/search"
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

// problemsSeen remembers the ignore-file problems already told to the
// model in this session, so each is said once (docs/reference/runtime.md,
// "What the search tools skip").
type problemsSeen struct {
	mu   sync.Mutex
	seen map[string]bool
}

// maxProblemsSeen bounds the memory of problems said.
const maxProblemsSeen = 1000

// fresh returns the problems not said before and remembers them.
func (p *problemsSeen) fresh(all []string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, s := range all {
		if p.seen[s] {
			continue
		}
		if p.seen == nil {
			p.seen = map[string]bool{}
		}
		if len(p.seen) < maxProblemsSeen {
			p.seen[s] = true
		}
		out = append(out, s)
	}
	return out
}

// searchShared is what Glob and Grep share: the environment that locates
// the user's git configuration, and the problems already said.
type searchShared struct {
	env    search.Env
	said   *problemsSeen
	budget int // workers; 0: GOMAXPROCS
}

// notices formats what a walk skipped, for the end of a result.
func (sh *searchShared) notices(rep *search.Report) string {
	if rep == nil {
		return ""
	}
	var b strings.Builder
	for _, n := range rep.Notices() {
		fmt.Fprintf(&b, "[%s]\n", n)
	}
	for _, p := range sh.said.fresh(rep.Problems()) {
		fmt.Fprintf(&b, "[ignore rules: %s]\n", p)
	}
	return b.String()
}

type globTool struct {
	ps  toolPaths
	lim Limits
	sh  *searchShared
}

type globArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

func (t *globTool) Spec() Spec {
	return Spec{
		Name: "Glob",
		Description: "Find files by name pattern (e.g. **/*.go). Returns absolute paths, most recently modified first; " +
			"what git ignores (.gitignore, .ignore, .git/info/exclude, the user's excludes file) and .git folders are skipped, " +
			"hidden files are included, and symbolic links to folders are not followed. A path named literally is found even when ignored.",
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

// globFound is one file Glob found.
type globFound struct {
	path  string
	mtime int64
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
	var found []globFound
	var rep *search.Report
	truncated := false
	if !globMeta(rest) && !strings.ContainsAny(rest, "{") {
		// A literal path is named explicitly: found even when ignored.
		p := filepath.Join(root.Value, rest)
		if fi, err := os.Lstat(p); err == nil && !fi.IsDir() {
			found = append(found, globFound{p, fi.ModTime().UnixNano()})
		}
	} else {
		pats, depth := compileGlob(rest)
		workers := t.sh.workers()
		per := make([][]globFound, workers)
		rep, err = search.Walk(ctx, search.WalkOptions{
			Root:       root.Value,
			Env:        t.sh.env,
			Workers:    workers,
			MaxEntries: t.lim.WalkEntries,
			Descend: func(rel string, d int) bool {
				return (depth < 0 || d < depth) && couldHold(pats, rel)
			},
			Visit: func(id int, e search.Entry) {
				if !matchAny(pats, e.Rel) {
					return
				}
				var mtime int64
				if fi, err := os.Lstat(e.Path); err == nil {
					mtime = fi.ModTime().UnixNano()
				}
				per[id] = append(per[id], globFound{e.Path, mtime})
			},
		})
		if err != nil {
			if ctx.Err() != nil {
				return errorResult("interrupted")
			}
			return errorResult("searching %s: %v", root.Value, err)
		}
		for _, f := range per {
			found = append(found, f...)
		}
		truncated = rep.Truncated
	}
	sort.Slice(found, func(i, j int) bool {
		if found[i].mtime != found[j].mtime {
			return found[i].mtime > found[j].mtime
		}
		return found[i].path < found[j].path
	})
	var out strings.Builder
	if len(found) == 0 {
		out.WriteString("No files found")
	}
	for i, f := range found {
		if out.Len()+len(f.path) > t.lim.Output {
			fmt.Fprintf(&out, "[%d more files not shown; narrow the pattern]\n", len(found)-i)
			break
		}
		out.WriteString(f.path)
		out.WriteByte('\n')
	}
	notes := ""
	if truncated {
		notes += fmt.Sprintf("[the search stopped after %d entries; narrow the pattern or the path]\n", t.lim.WalkEntries)
	}
	notes += t.sh.notices(rep)
	if notes != "" && len(found) == 0 {
		out.WriteByte('\n')
	}
	return Result{Content: out.String() + notes}
}

// couldHold reports whether a folder (its path below the search root) can
// hold a match of one of the patterns, so the walk need not enter
// folders no pattern reaches.
func couldHold(pats [][]string, rel string) bool {
	segs := strings.Split(rel, "/")
next:
	for _, p := range pats {
		for i, s := range segs {
			if i >= len(p) || p[i] == "**" {
				if i < len(p) {
					return true
				}
				continue next
			}
			if i == len(p)-1 || !pathglob.MatchSegment(p[i], s) {
				continue next
			}
		}
		return true
	}
	return false
}

func (sh *searchShared) workers() int {
	if sh.budget > 0 {
		return sh.budget
	}
	return runtime.GOMAXPROCS(0)
}

type grepTool struct {
	ps  toolPaths
	lim Limits
	sh  *searchShared
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
		Description: "Search file contents with a regular expression (RE2 syntax), line by line. What git ignores " +
			"(.gitignore, .ignore, .git/info/exclude, the user's excludes file), .git folders, binary files and symbolic links are skipped; " +
			"hidden files are searched, and a file or folder named as path is searched even when ignored. Results are in path order.",
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

func (t *grepTool) Run(ctx context.Context, args json.RawMessage) Result {
	var a grepArgs
	if err := decodeToolArgs(args, &a); err != nil {
		return errorResult("%v", err)
	}
	m, err := search.Compile(a.Pattern, a.IgnoreCase)
	if err != nil {
		return errorResult("invalid regular expression (RE2 syntax): %v", err)
	}
	if a.Pattern == "" {
		return errorResult("pattern is required")
	}
	modes := map[string]search.Mode{"files_with_matches": search.FilesWithMatches, "count": search.Count, "content": search.Content}
	mode, ok := modes[orDefault(a.OutputMode, "files_with_matches")]
	if !ok {
		return errorResult("output_mode must be content, files_with_matches or count")
	}
	before, after := max(a.Before, a.Context, 0), max(a.After, a.Context, 0)
	before, after = min(before, 100), min(after, 100)
	root, err := t.ps.target(orDefault(a.Path, "."))
	if err != nil {
		return errorResult("%v", err)
	}
	fi, err := os.Stat(root.Value)
	if err != nil {
		return errorResult("%s does not exist", root.Value)
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		return errorResult("%s is not a file or folder", root.Value)
	}
	o := search.GrepOptions{
		Walk:         search.WalkOptions{Root: root.Value, Env: t.sh.env, Workers: t.sh.workers(), MaxEntries: t.lim.WalkEntries},
		File:         fi.Mode().IsRegular(),
		Matcher:      m,
		Mode:         mode,
		Before:       before,
		After:        after,
		LineNumbers:  a.LineNums == nil || *a.LineNums,
		HeadLimit:    a.HeadLimit,
		MaxBytes:     t.lim.Output,
		MaxFileBytes: t.lim.FileBytes,
		Text:         func(line []byte) string { return cutLine(textOf(line), t.lim.LineLength) },
	}
	if a.Glob != "" {
		filter, _ := compileGlob(a.Glob)
		nameOnly := !strings.Contains(a.Glob, "/")
		o.Filter = func(e search.Entry) bool {
			if nameOnly {
				return matchAnySegment(filter, e.Name)
			}
			return matchAny(filter, e.Rel)
		}
	}
	res, err := search.Grep(ctx, o)
	if err != nil {
		if ctx.Err() != nil {
			return errorResult("interrupted")
		}
		return errorResult("searching %s: %v", root.Value, err)
	}
	out := res.Output
	if res.Files == 0 {
		out = "No matches found\n"
	}
	if res.Full {
		out += "[more results not shown: the output limit was reached; narrow the search or use head_limit]\n"
	}
	if res.Report != nil && res.Report.Truncated {
		out += fmt.Sprintf("[the search stopped after %d entries; narrow the path or the glob]\n", t.lim.WalkEntries)
	}
	if res.TooBig > 0 {
		out += fmt.Sprintf("[%d files larger than %d bytes were not searched]\n", res.TooBig, t.lim.FileBytes)
	}
	if res.NGrew > 0 {
		out += fmt.Sprintf("[%d files grew while they were searched; what they held when opened was searched: %s]\n", res.NGrew, strings.Join(res.Grew, ", "))
	}
	return Result{Content: out + t.sh.notices(res.Report)}
}

func matchAnySegment(pats [][]string, name string) bool {
	for _, p := range pats {
		if len(p) == 1 && pathglob.MatchSegment(p[0], name) {
			return true
		}
	}
	return false
}
