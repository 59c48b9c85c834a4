package search

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"agent/internal/ignore"
	"agent/internal/securefile"
)

// Env is what the ignore rules need from the environment: where the
// user's git configuration lives (git-config(1), "FILES").
type Env struct {
	Home            string // $HOME
	XDGConfigHome   string // $XDG_CONFIG_HOME
	GitConfigGlobal string // $GIT_CONFIG_GLOBAL: when set, the only global file
}

// maxIgnoreFile bounds one ignore or configuration file read.
const maxIgnoreFile = 8 << 20

// maxIncludeDepth bounds include.path chains, as git does (10).
const maxIncludeDepth = 10

// rulesLoader reads the ignore files of a walk and remembers the user's
// excludes file, which every repository of the walk shares.
type rulesLoader struct {
	env    Env
	report *Report

	globalOnce sync.Once
	userFile   string // core.excludesFile of the user's configuration ("" unset)
	userSet    bool
	globalMu   sync.Mutex
	globals    map[string]*ignore.List // excludes files by path
}

// readIgnore parses one ignore file; a missing file is no rule. In a
// working tree a symbolic link is not followed, as git does not.
func (l *rulesLoader) readIgnore(path string, follow bool) *ignore.List {
	flag := syscall.O_NOFOLLOW
	if follow {
		flag = 0
	}
	f, fi, err := securefile.Open(path, flag)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ELOOP) && !errors.Is(err, syscall.ENOTDIR) {
			l.report.problem(path, "could not be read ("+reason(err)+"); its rules were not applied")
		}
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreFile+1))
	if err != nil {
		l.report.problem(path, "could not be read ("+reason(err)+"); its rules were not applied")
		return nil
	}
	if len(data) > maxIgnoreFile || fi.Size() > maxIgnoreFile {
		l.report.problem(path, fmt.Sprintf("is larger than %d bytes; its rules were not applied", maxIgnoreFile))
		return nil
	}
	list, probs := ignore.Parse(data)
	for _, p := range probs {
		l.report.problem(fmt.Sprintf("%s:%d", path, p.Line), fmt.Sprintf("pattern %q is ignored: %s", p.Pattern, p.Reason))
	}
	return list
}

// repoRules returns the rules of a repository's root folder dir (which
// holds .git): its info/exclude and the excludes file its configuration
// names.
func (l *rulesLoader) repoRules(dir string) (exclude, global *ignore.List) {
	common := gitCommonDir(dir)
	if common != "" {
		exclude = l.readIgnore(filepath.Join(common, "info", "exclude"), true)
	}
	l.globalOnce.Do(func() { l.userFile, l.userSet = l.userExcludesFile() })
	file, set := l.userFile, l.userSet
	if common != "" {
		if f, ok := l.configExcludes(filepath.Join(common, "config"), 0, dir); ok {
			file, set = f, true
		}
	}
	if !set {
		file = l.xdg("ignore")
	}
	if file == "" {
		return exclude, nil
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(dir, file)
	}
	l.globalMu.Lock()
	defer l.globalMu.Unlock()
	if g, ok := l.globals[file]; ok {
		return exclude, g
	}
	g := l.readIgnore(file, true)
	if l.globals == nil {
		l.globals = map[string]*ignore.List{}
	}
	l.globals[file] = g
	return exclude, g
}

// gitCommonDir finds the folder that holds a repository's info/ and
// config: dir/.git, or for a linked worktree or a submodule (a .git file
// saying "gitdir: PATH") that folder's commondir.
func gitCommonDir(dir string) string {
	gitdir := filepath.Join(dir, ".git")
	fi, err := os.Lstat(gitdir)
	if err != nil {
		return ""
	}
	if !fi.IsDir() {
		data, err := securefile.ReadFile(gitdir, 64<<10)
		if err != nil {
			return ""
		}
		s, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
		if !ok {
			return ""
		}
		gitdir = strings.TrimSpace(s)
		if !filepath.IsAbs(gitdir) {
			gitdir = filepath.Join(dir, gitdir)
		}
	}
	if data, err := securefile.ReadFile(filepath.Join(gitdir, "commondir"), 64<<10); err == nil {
		c := strings.TrimSpace(string(data))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitdir, c)
		}
		return c
	}
	return gitdir
}

// xdg returns $XDG_CONFIG_HOME/git/NAME, or ~/.config/git/NAME.
func (l *rulesLoader) xdg(name string) string {
	switch {
	case l.env.XDGConfigHome != "":
		return filepath.Join(l.env.XDGConfigHome, "git", name)
	case l.env.Home != "":
		return filepath.Join(l.env.Home, ".config", "git", name)
	}
	return ""
}

// userExcludesFile reads core.excludesFile from the user's global
// configuration: $GIT_CONFIG_GLOBAL alone when set, else the XDG file and
// then ~/.gitconfig, the later winning.
func (l *rulesLoader) userExcludesFile() (string, bool) {
	var files []string
	if l.env.GitConfigGlobal != "" {
		files = []string{l.env.GitConfigGlobal}
	} else {
		files = []string{l.xdg("config")}
		if l.env.Home != "" {
			files = append(files, filepath.Join(l.env.Home, ".gitconfig"))
		}
	}
	value, set := "", false
	for _, f := range files {
		if f == "" {
			continue
		}
		if v, ok := l.configExcludes(f, 0, ""); ok {
			value, set = v, true
		}
	}
	return value, set
}

// configExcludes returns the last core.excludesFile of a configuration
// file and the files it includes (include.path; includeIf is not
// followed). A file git would refuse is reported and not used.
func (l *rulesLoader) configExcludes(path string, depth int, repo string) (string, bool) {
	data, err := securefile.ReadFile(path, maxIgnoreFile)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			l.report.problem(path, "could not be read ("+reason(err)+"); its core.excludesFile was not used")
		}
		return "", false
	}
	entries, err := ignore.ParseConfig(data)
	if err != nil {
		l.report.problem(path, "is not a valid git configuration ("+err.Error()+"); its core.excludesFile was not used")
		return "", false
	}
	value, set := "", false
	for _, e := range entries {
		switch {
		case e.Section == "core" && e.Subsection == "" && e.Key == "excludesfile" && !e.NoValue:
			value, set = l.expand(e.Value), true
		case e.Section == "include" && e.Subsection == "" && e.Key == "path" && !e.NoValue && depth < maxIncludeDepth:
			inc := l.expand(e.Value)
			if !filepath.IsAbs(inc) {
				inc = filepath.Join(filepath.Dir(path), inc)
			}
			if v, ok := l.configExcludes(inc, depth+1, repo); ok {
				value, set = v, true
			}
		}
	}
	return value, set
}

// expand replaces a leading "~/" with the home folder, as git does for
// path settings.
func (l *rulesLoader) expand(p string) string {
	if l.env.Home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return l.env.Home + p[1:]
	}
	return p
}

// ancestorRules builds the rules of the folders above root: .ignore files
// up to the file system's root, and, inside the repository that holds
// root, the .gitignore files from the repository's root down, its
// info/exclude and the user's excludes file. The root's own files are
// read when the walk lists it.
func (l *rulesLoader) ancestorRules(root string) *ignore.Dir {
	var chain []string // "/" ... parent of root
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		if d == root {
			break
		}
		chain = append(chain, d)
		if d == "/" || d == "." {
			break
		}
	}
	repoTop := ""
	if _, err := os.Lstat(filepath.Join(root, ".git")); err != nil {
		for _, d := range chain {
			if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
				repoTop = d
				break
			}
		}
	}
	var rules *ignore.Dir
	inRepo := false
	for i := len(chain) - 1; i >= 0; i-- {
		d := chain[i]
		var r ignore.Rules
		r.Ignore = l.readIgnore(filepath.Join(d, ".ignore"), false)
		if d == repoTop {
			inRepo = true
			r.Repo = true
			r.Exclude, r.Global = l.repoRules(d)
		}
		if inRepo {
			r.Gitignore = l.readIgnore(filepath.Join(d, ".gitignore"), false)
		}
		rules = rules.Child(prefixLen(d), r)
	}
	return rules
}

// prefixLen is the length of a folder's path with its '/', the prefix of
// its entries' paths.
func prefixLen(dir string) int {
	if dir == "/" {
		return 1
	}
	return len(dir) + 1
}

func join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// reason is an error's cause without the path that the notice names.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
