package tools

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// Previews (docs/reference/runtime.md, "Permission prompts"): what a call
// will do, worked out without doing it, so that the permission prompt
// shows the new file or the diff of a Write, the diff of an Edit, the
// command of a Bash call with its description, the URL of a WebFetch.

// PreviewKind says how a preview's text is shown.
type PreviewKind string

// Preview kinds.
const (
	PreviewDiff    PreviewKind = "diff"    // Text is a unified diff
	PreviewFile    PreviewKind = "file"    // Text is a new file's content
	PreviewCommand PreviewKind = "command" // Text is a shell command
	PreviewURL     PreviewKind = "url"     // Text is a URL
)

// maxPreviewFile bounds the content of a new file a preview shows.
const maxPreviewFile = 64 << 10

// Preview is what a call will do. Text is outside text (the model's), to
// be sanitised where it is shown.
type Preview struct {
	Kind PreviewKind
	// Title names what is changed or run: a path relative to the
	// workspace, "(new file)" added for a file Write creates.
	Title string
	Text  string
	// Note is Bash's description, or why the call will fail.
	Note string
	// Lang is the language of the code in Text ("go", "sh"), for syntax
	// colours; "" when unknown.
	Lang string
}

// Previewer is a tool that can say what a call will do before it runs.
// Preview changes nothing; its arguments have passed the schema.
type Previewer interface {
	Preview(args json.RawMessage) (Preview, bool)
}

// LangOf is the language of a file for syntax colours: its extension
// without the dot ("go", "py"), "" without one.
func LangOf(path string) string {
	return strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
}

func (t *writeTool) Preview(args json.RawMessage) (Preview, bool) {
	w, fail := t.plan(args)
	if fail != nil {
		return Preview{Kind: PreviewFile, Note: "This call will fail: " + fail.Content}, true
	}
	name := t.ps.displayName(w.real)
	p := Preview{Kind: PreviewDiff, Title: name, Lang: LangOf(w.real), Note: w.note}
	switch {
	case !w.existed:
		p.Kind, p.Title, p.Text = PreviewFile, name+" (new file)", truncateOutput(w.content, maxPreviewFile)
	case w.note == "":
		p.Text = unifiedDiff(name, w.old, w.content)
		if p.Text == "" {
			p.Note = "(the content is the same as the file's)"
		}
	}
	return p, true
}

func (t *editTool) Preview(args json.RawMessage) (Preview, bool) {
	e, fail := t.plan(args)
	if fail != nil {
		return Preview{Kind: PreviewDiff, Note: "This call will fail: " + fail.Content}, true
	}
	name := t.ps.displayName(e.real)
	return Preview{Kind: PreviewDiff, Title: name, Text: unifiedDiff(name, e.text, e.updated), Lang: LangOf(e.real)}, true
}

func (t *bashTool) Preview(args json.RawMessage) (Preview, bool) {
	var a bashArgs
	if decodeToolArgs(args, &a) != nil {
		return Preview{}, false
	}
	return Preview{Kind: PreviewCommand, Text: a.Command, Note: strings.TrimSpace(a.Description), Lang: "sh"}, true
}

func (t *webFetchTool) Preview(args json.RawMessage) (Preview, bool) {
	var a webFetchArgs
	if decodeToolArgs(args, &a) != nil {
		return Preview{}, false
	}
	return Preview{Kind: PreviewURL, Text: strings.TrimSpace(a.URL)}, true
}

// UnifiedDiff is the diff Write and Edit show: from a to b, three lines
// of context, labelled with name, at most 64 KiB.
func UnifiedDiff(name, a, b string) string { return unifiedDiff(name, a, b) }

// DiffCounts counts the added and removed lines of a unified diff's
// hunks.
func DiffCounts(diff string) (added, removed int) {
	inHunk := false
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "@@"):
			inHunk = true
		case !inHunk:
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return added, removed
}
