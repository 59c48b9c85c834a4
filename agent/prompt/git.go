package prompt

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Limits of the git snapshot (docs/reference/runtime.md, "The context
// message").
const (
	// MaxStatusChars is where the snapshot cuts git status --short.
	MaxStatusChars = 2000
	// SnapshotCommits is how many commit subjects the snapshot lists.
	SnapshotCommits = 5
	// DefaultGitTimeout bounds the git commands of one snapshot.
	DefaultGitTimeout = 5 * time.Second
	// maxSubjectChars cuts one commit subject.
	maxSubjectChars = 200
	// maxGitOutput is what one git command's output is kept to; the rest
	// is only counted.
	maxGitOutput = 64 << 10
)

// GitOptions configure TakeGitSnapshot. The zero value runs "git" from
// PATH with the process's environment and DefaultGitTimeout.
type GitOptions struct {
	Git     string        // the git executable; "": git from PATH
	Env     []string      // the commands' environment; nil: the process's
	Timeout time.Duration // for the whole snapshot; 0: DefaultGitTimeout
}

// GitSnapshot is the state of the workspace's repository at the start of
// a session, for the context message.
type GitSnapshot struct {
	Branch   string // the current branch; "" on a detached HEAD
	Detached string // the short commit id of a detached HEAD
	// Status is git status --short, cut at MaxStatusChars characters on a
	// line boundary; StatusCut counts the lines not shown (in full).
	Status    string
	StatusCut int
	Commits   []string // the subjects of the last SnapshotCommits commits, newest first
}

// TakeGitSnapshot runs git in dir (the workspace): status --short, the
// branch, and the last commit subjects, without a pager or optional locks,
// with core.fsmonitor off (a repository's configuration must not start a
// program here), within the timeout. It returns nil when dir is not in a
// repository (FindGitRoot), git is missing, or git status fails: there is
// no snapshot, and nothing for the user to fix.
func TakeGitSnapshot(ctx context.Context, dir string, opts GitOptions) *GitSnapshot {
	if _, ok := FindGitRoot(dir); !ok {
		return nil
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultGitTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	run := func(args ...string) (*capture, error) {
		return runGit(ctx, dir, opts, args...)
	}

	var (
		wg               sync.WaitGroup
		status, log      *capture
		statusErr        error
		branch, detached string
	)
	wg.Add(3)
	go func() {
		defer wg.Done()
		status, statusErr = run("status", "--short")
	}()
	go func() {
		defer wg.Done()
		if out, err := run("symbolic-ref", "--short", "-q", "HEAD"); err == nil {
			branch = strings.TrimSpace(out.String())
		} else if out, err := run("rev-parse", "--short", "HEAD"); err == nil {
			detached = strings.TrimSpace(out.String())
		}
	}()
	go func() {
		defer wg.Done()
		log, _ = run("log", fmt.Sprintf("-%d", SnapshotCommits), "--format=%s")
	}()
	wg.Wait()
	if statusErr != nil {
		return nil
	}
	s := &GitSnapshot{Branch: cutRunes(branch, maxSubjectChars), Detached: cutRunes(detached, maxSubjectChars)}
	s.Status, s.StatusCut = cutStatus(status)
	if log != nil {
		for _, l := range strings.Split(strings.TrimRight(log.String(), "\n"), "\n") {
			if l != "" && len(s.Commits) < SnapshotCommits {
				s.Commits = append(s.Commits, cutRunes(l, maxSubjectChars))
			}
		}
	}
	return s
}

// runGit runs one git command in dir and returns its output.
func runGit(ctx context.Context, dir string, opts GitOptions, args ...string) (*capture, error) {
	git := opts.Git
	if git == "" {
		git = "git"
	}
	full := append([]string{"--no-pager", "--no-optional-locks", "-c", "core.fsmonitor=false", "-c", "color.ui=false"}, args...)
	cmd := exec.CommandContext(ctx, git, full...)
	cmd.Dir = dir
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env[:len(env):len(env)], "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_PAGER=cat")
	out := &capture{max: maxGitOutput}
	cmd.Stdout = out
	cmd.Stderr = io.Discard
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return nil, err
	}
	return out, nil
}

// capture keeps the first max bytes written to it and counts the lines of
// everything written.
type capture struct {
	max   int
	buf   []byte
	total int
	lines int // line breaks written
	last  byte
}

func (c *capture) Write(p []byte) (int, error) {
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	c.total += len(p)
	c.lines += strings.Count(string(p), "\n")
	if len(p) > 0 {
		c.last = p[len(p)-1]
	}
	return len(p), nil
}

func (c *capture) String() string { return string(c.buf) }

// totalLines counts the lines written, a last one without a line break
// included.
func (c *capture) totalLines() int {
	if c.total > 0 && c.last != '\n' {
		return c.lines + 1
	}
	return c.lines
}

// cutStatus cuts git status output to MaxStatusChars characters, at the
// last line break within them (or inside the first line when it alone is
// longer), and counts the lines not shown in full.
func cutStatus(c *capture) (string, int) {
	if c == nil {
		return "", 0
	}
	s := strings.ToValidUTF8(c.String(), "\uFFFD")
	if c.total == len(c.buf) && utf8.RuneCountInString(s) <= MaxStatusChars {
		return strings.TrimRight(s, "\n"), 0
	}
	cut := len(s)
	for i, n := 0, 0; i < len(s); n++ {
		if n == MaxStatusChars {
			cut = i
			break
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	kept, whole := s[:cut], 0 // whole: the lines shown in full
	if nl := strings.LastIndexByte(kept, '\n'); nl >= 0 {
		kept = kept[:nl]
		whole = strings.Count(kept, "\n") + 1
	}
	return kept, c.totalLines() - whole
}

// cutRunes cuts s to n characters, marking the cut with an ellipsis.
func cutRunes(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := 0; k < n; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + "…"
}

// BranchText names the branch for the environment block and the
// snapshot: the branch, "detached HEAD at ID", or "" when unknown. A nil
// snapshot has none.
func (s *GitSnapshot) BranchText() string {
	switch {
	case s == nil:
		return ""
	case s.Branch != "":
		return s.Branch
	case s.Detached != "":
		return "detached HEAD at " + s.Detached
	}
	return ""
}

// Text is the snapshot as the context message shows it, marked as taken
// at the start of the session; "" for a nil snapshot.
func (s *GitSnapshot) Text() string {
	if s == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Git snapshot\n\nTaken when the session started; it is not updated as the session goes on. Run git for the current state.\n\n")
	b.WriteString("Branch: " + orUnknown(s.BranchText()) + "\n")
	switch {
	case s.Status == "" && s.StatusCut == 0:
		b.WriteString("Status: clean (git status --short printed nothing)\n")
	default:
		b.WriteString("Status (git status --short):\n" + s.Status + "\n")
		if s.StatusCut > 0 {
			fmt.Fprintf(&b, "[cut at %d characters: %d more lines not shown]\n", MaxStatusChars, s.StatusCut)
		}
	}
	if len(s.Commits) == 0 {
		b.WriteString("Recent commits: none\n")
	} else {
		b.WriteString("Recent commits (newest first):\n")
		for _, c := range s.Commits {
			b.WriteString("- " + c + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}
