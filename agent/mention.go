package agent

// @path mentions (docs/reference/runtime.md, "Shell commands and
// mentions"): a prompt typed in the composer may name files as @path (or
// @"path with spaces"); each text file's content goes to the model with
// the prompt, in a part of its own. A mention that names no file, a
// folder, a binary file or one over 256 KiB is said and not attached.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"agent/internal/securefile"
	"agent/providers"
)

// Bounds of mentions.
const (
	maxMentionFile  = 256 << 10 // one attached file
	maxMentionTotal = 1 << 20   // all of one prompt's
	maxFileMentions = 20
)

// MentionLead opens each attached file's part; replays and the prompt
// history leave such parts out.
const MentionLead = "[Attached by the user's @ mention: "

// IsAttachment reports whether a user message's text part is an attached
// file rather than what the user typed.
func IsAttachment(text string) bool { return strings.HasPrefix(text, MentionLead) }

// Mention is one @path of a prompt: the path as typed, and where it ends.
type Mention struct {
	Path       string
	Start, End int // byte offsets of the whole token in the prompt
}

// Mentions finds the @path tokens of a prompt: an '@' at the start or
// after white space, then a quoted path or the text up to the next white
// space.
func Mentions(prompt string) []Mention {
	var out []Mention
	for i := 0; i < len(prompt); i++ {
		if prompt[i] != '@' || i > 0 && !isSpaceBefore(prompt, i) {
			continue
		}
		start := i
		j := i + 1
		var path string
		if j < len(prompt) && prompt[j] == '"' {
			k := strings.IndexByte(prompt[j+1:], '"')
			if k < 0 {
				continue
			}
			path = prompt[j+1 : j+1+k]
			j += k + 2
		} else {
			for j < len(prompt) {
				r, size := utf8.DecodeRuneInString(prompt[j:])
				if unicode.IsSpace(r) {
					break
				}
				j += size
			}
			path = prompt[i+1 : j]
		}
		if path != "" {
			out = append(out, Mention{Path: path, Start: start, End: j})
		}
		i = j - 1
	}
	return out
}

func isSpaceBefore(s string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return unicode.IsSpace(r)
}

// attachMentions adds the files a user's prompt mentions to its message
// and says what it could not attach.
func (s *Session) attachMentions(t *Turn, um *providers.Message) {
	parts, notes := expandMentions(s.opts.Workspace, homeDir(), t.Req.Prompt)
	um.Content = append(um.Content, parts...)
	for _, n := range notes {
		s.emit(Event{Kind: EventNotice, Turn: t.ID, Text: n})
	}
}

func homeDir() string {
	h, _ := os.UserHomeDir()
	return h
}

// expandMentions reads the mentioned files: a part per file attached, a
// note per mention that was not.
func expandMentions(ws, home, prompt string) (parts []providers.Part, notes []string) {
	seen := map[string]bool{}
	total := 0
	for _, m := range Mentions(prompt) {
		path, ok := mentionPath(ws, home, m.Path)
		if !ok {
			continue // not a path (an MCP resource, server:uri, is another kind of mention)
		}
		if seen[path] {
			continue
		}
		seen[path] = true
		if len(parts) == maxFileMentions {
			notes = append(notes, fmt.Sprintf("@%s: not attached: at most %d files are attached to one prompt.", m.Path, maxFileMentions))
			continue
		}
		data, why := readMention(path)
		if why == "" && total+len(data) > maxMentionTotal {
			why = "the files attached to this prompt would exceed 1 MiB (ask the model to Read it)"
		}
		if why != "" {
			notes = append(notes, fmt.Sprintf("@%s: not attached: %s.", m.Path, why))
			continue
		}
		total += len(data)
		text := strings.ToValidUTF8(string(data), "\uFFFD")
		parts = append(parts, providers.Text{Text: MentionLead + displayPath(ws, path) + "]\n" + text})
	}
	return parts, notes
}

// mentionPath is the file a mention names: relative to the workspace,
// "~/" in the home, or absolute. A token shaped like server:uri that
// names no file is not a path.
func mentionPath(ws, home, p string) (string, bool) {
	p = strings.TrimRight(p, ",.;:!?)]}'\"")
	if p == "" {
		return "", false
	}
	var abs string
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return "", false
		}
		abs = filepath.Join(home, p[1:])
	case filepath.IsAbs(p):
		abs = filepath.Clean(p)
	default:
		abs = filepath.Join(ws, p)
	}
	if i := strings.IndexByte(p, ':'); i > 0 && !strings.ContainsAny(p[:i], "/.") {
		if _, err := os.Lstat(abs); err != nil {
			return "", false
		}
	}
	return abs, true
}

// readMention reads a mentioned file, or says why it is not attached.
func readMention(path string) ([]byte, string) {
	f, fi, err := securefile.Open(path, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, "no such file"
	case fi != nil && fi.IsDir():
		return nil, "it is a folder (mention the files in it)"
	case err != nil:
		return nil, "it cannot be read: " + err.Error()
	}
	defer f.Close()
	if fi.Size() > maxMentionFile {
		return nil, fmt.Sprintf("it is %s, over the 256 KiB an @ mention attaches (ask the model to Read it)", sizeText(fi.Size()))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxMentionFile+1))
	switch {
	case err != nil:
		return nil, "it cannot be read: " + err.Error()
	case len(data) > maxMentionFile:
		return nil, "it grew past the 256 KiB an @ mention attaches"
	}
	if bytes.IndexByte(data[:min(len(data), 8<<10)], 0) >= 0 {
		return nil, "it is a binary file"
	}
	return data, ""
}

func sizeText(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
