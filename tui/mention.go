package tui

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"agent/internal/search"
)

// @path completion (docs/reference/runtime.md, "Shell commands and
// mentions"): while the word at the cursor starts with '@', the
// autocomplete menu offers the workspace's files whose path holds what
// follows, walked as Glob and Grep walk them (what git ignores is left
// out). The list is read off the loop once and again after 30 s.

// Bounds of the completion.
const (
	mentionFiles   = 100000 // files kept from one walk
	mentionEntries = 200000 // folder entries one walk visits
	mentionShown   = 8
	mentionMaxAge  = 30 * time.Second
)

// fileIndex is the workspace's files for completion.
type fileIndex struct {
	files   []string // relative, sorted
	at      time.Time
	loading bool
}

// mentionWord is the '@' word that ends at the cursor: its start (the
// '@'), and what follows the '@' up to the cursor.
func (c *composer) mentionWord() (start int, query string, ok bool) {
	i := c.cur
	for i > 0 && !unicode.IsSpace(c.buf[i-1]) {
		i--
	}
	if i >= c.cur || c.buf[i] != '@' {
		return 0, "", false
	}
	q := string(c.buf[i+1 : c.cur])
	if strings.ContainsAny(q, `"`) {
		return 0, "", false
	}
	return i, q, true
}

// fileMenu is the menu of files for the '@' word at the cursor, or nil.
func (s *state) fileMenu(prev *autocomplete) *autocomplete {
	start, q, ok := s.comp.mentionWord()
	if !ok || s.hooks.Workspace == "" {
		return nil
	}
	key := "@\x00" + q
	if prev != nil && prev.pick != nil && prev.typed == key {
		return prev
	}
	idx := s.daily.files
	if idx == nil || (!idx.loading && s.now().Sub(idx.at) > mentionMaxAge) {
		s.loadFiles()
	}
	if idx == nil {
		return nil
	}
	matches := matchFiles(idx.files, q, mentionShown)
	if len(matches) == 0 {
		return nil
	}
	ac := &autocomplete{typed: key}
	for _, m := range matches {
		ac.matches = append(ac.matches, slashCommand{text: "@" + m})
	}
	ac.pick = func(s *state, c slashCommand) {
		path := strings.TrimPrefix(c.text, "@")
		if strings.ContainsAny(path, " \t") {
			path = `"` + path + `"`
		}
		s.comp.replace(start, s.comp.cur, "@"+path+" ")
		s.composerChanged()
	}
	return ac
}

// replace puts text in place of the runes from start to end and moves the
// cursor after it.
func (c *composer) replace(start, end int, text string) {
	rs := []rune(text)
	c.buf = append(c.buf[:start], append(rs, c.buf[end:]...)...)
	c.cur = start + len(rs)
}

// loadFiles walks the workspace off the loop; the menu opens when the
// list arrives, if the '@' word is still there.
func (s *state) loadFiles() {
	if s.daily.files == nil {
		s.daily.files = &fileIndex{}
	}
	if s.daily.files.loading || s.spawn == nil {
		return
	}
	s.daily.files.loading = true
	root := s.hooks.Workspace
	s.async(func(ctx context.Context) func() {
		files := walkFiles(ctx, root)
		return func() {
			s.daily.files = &fileIndex{files: files, at: s.now()}
			s.composerChanged()
		}
	})
}

// walkFiles lists the files below root as the search tools see them.
func walkFiles(ctx context.Context, root string) []string {
	home, _ := os.UserHomeDir()
	env := search.Env{Home: home, XDGConfigHome: os.Getenv("XDG_CONFIG_HOME"), GitConfigGlobal: os.Getenv("GIT_CONFIG_GLOBAL")}
	var mu sync.Mutex
	var files []string
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	search.Walk(wctx, search.WalkOptions{Root: filepath.Clean(root), Env: env, MaxEntries: mentionEntries,
		Visit: func(_ int, e search.Entry) {
			if e.Type != search.TypeFile {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if len(files) < mentionFiles {
				files = append(files, filepath.ToSlash(e.Rel))
			} else {
				cancel()
			}
		}})
	sort.Strings(files)
	return files
}

// matchFiles returns at most n paths that hold q (ignoring case): those
// whose name starts with it first, then those whose path does, then the
// rest, each group in path order.
func matchFiles(files []string, q string, n int) []string {
	q = strings.ToLower(q)
	var groups [3][]string
	for _, f := range files {
		lf := strings.ToLower(f)
		if !strings.Contains(lf, q) {
			continue
		}
		g := 2
		switch {
		case strings.HasPrefix(strings.ToLower(filepath.Base(f)), q):
			g = 0
		case strings.HasPrefix(lf, q):
			g = 1
		}
		if len(groups[g]) < n {
			groups[g] = append(groups[g], f)
		}
		if len(groups[0]) >= n {
			break
		}
	}
	out := append(append(groups[0], groups[1]...), groups[2]...)
	return out[:min(len(out), n)]
}
