package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"agent/internal/securefile"
)

// The argument schemas use the field names of the compatible ecosystem
// (docs/reference/runtime.md, "Built-in tools"), so models trained on them
// call these tools right.
const (
	readSchema = `{"type":"object","properties":{` +
		`"file_path":{"type":"string","minLength":1,"description":"The file to read: an absolute path, or relative to the workspace"},` +
		`"offset":{"type":"integer","minimum":0,"description":"The line number to start reading from (1 is the first line); for large files"},` +
		`"limit":{"type":"integer","minimum":1,"description":"The number of lines to read; for large files"}},` +
		`"required":["file_path"],"additionalProperties":false}`
	writeSchema = `{"type":"object","properties":{` +
		`"file_path":{"type":"string","minLength":1,"description":"The file to write: an absolute path, or relative to the workspace"},` +
		`"content":{"type":"string","description":"The complete new content of the file"}},` +
		`"required":["file_path","content"],"additionalProperties":false}`
	editSchema = `{"type":"object","properties":{` +
		`"file_path":{"type":"string","minLength":1,"description":"The file to change: an absolute path, or relative to the workspace"},` +
		`"old_string":{"type":"string","minLength":1,"description":"The exact text to replace; it must occur exactly once unless replace_all is set"},` +
		`"new_string":{"type":"string","description":"The text to put in its place (must differ from old_string)"},` +
		`"replace_all":{"type":"boolean","default":false,"description":"Replace every occurrence of old_string"}},` +
		`"required":["file_path","old_string","new_string"],"additionalProperties":false}`
)

// newFileMode is the mode of a file Write creates.
const newFileMode = 0o644

type readTool struct {
	ps  toolPaths
	lim Limits
}

type readArgs struct {
	FilePath string `json:"file_path"`
	Offset   int    `json:"offset"`
	Limit    int    `json:"limit"`
}

func (t *readTool) Spec() Spec {
	return Spec{
		Name: "Read",
		Description: "Read a text file. Lines come numbered (number, tab, text). Reads up to " +
			fmt.Sprint(t.lim.ReadLines) + " lines from the start unless offset and limit say otherwise; long lines are cut.",
		Schema: json.RawMessage(readSchema),
		Risk:   RiskInspect,
	}
}

func (t *readTool) Target(args json.RawMessage) (Target, error) {
	var a readArgs
	if err := decodeToolArgs(args, &a); err != nil {
		return Target{}, err
	}
	return t.ps.target(a.FilePath)
}

func (t *readTool) Run(ctx context.Context, args json.RawMessage) Result {
	var a readArgs
	if err := decodeToolArgs(args, &a); err != nil {
		return errorResult("%v", err)
	}
	real, _, err := t.ps.resolve(a.FilePath)
	if err != nil {
		return errorResult("%v", err)
	}
	f, err := openRegular(real)
	if err != nil {
		return errorResult("%v", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(sniffLen)
	if len(head) == 0 {
		return Result{Content: fmt.Sprintf("[%s is empty]", real)}
	}
	if isBinary(head) {
		return errorResult("%s is a binary file; Read shows text files only", real)
	}
	offset := max(a.Offset, 1)
	limit := a.Limit
	if limit <= 0 {
		limit = t.lim.ReadLines
	}
	var out strings.Builder
	lineNo, shown := 0, 0
	for {
		if lineNo%1024 == 0 && ctx.Err() != nil {
			return errorResult("interrupted")
		}
		line, cut, err := readLine(br, t.lim.LineLength)
		if err != nil && len(line) == 0 && cut == 0 {
			if err != io.EOF {
				return errorResult("reading %s: %v", real, err)
			}
			break
		}
		lineNo++
		if lineNo < offset {
			continue
		}
		if shown == limit || out.Len() >= t.lim.ReadBytes {
			fmt.Fprintf(&out, "[more lines follow: continue with offset %d]\n", lineNo)
			return Result{Content: out.String()}
		}
		text := textOf(line)
		if cut > 0 {
			text += fmt.Sprintf(" [… line cut: %d more bytes]", cut)
		}
		fmt.Fprintf(&out, "%6d\t%s\n", lineNo, text)
		shown++
		if err != nil {
			break
		}
	}
	if shown == 0 {
		return errorResult("%s has %d lines; offset %d is past the end", real, lineNo, offset)
	}
	return Result{Content: out.String()}
}

// readLine reads one line without its line ending, keeping at most max
// bytes and counting the rest, so a file with no newlines cannot fill the
// memory.
func readLine(br *bufio.Reader, max int) (line []byte, cut int, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		done := err != bufio.ErrBufferFull
		if err == nil {
			chunk = chunk[:len(chunk)-1]
			if n := len(chunk); n > 0 && chunk[n-1] == '\r' {
				chunk = chunk[:n-1]
			}
		}
		if room := max - len(line); len(chunk) > room {
			cut += len(chunk) - room
			chunk = chunk[:room]
		}
		line = append(line, chunk...)
		if done {
			if err == bufio.ErrBufferFull {
				err = nil
			}
			return line, cut, err
		}
	}
}

// openRegular opens a file for reading with messages a model can act on.
// A FIFO or device is refused without waiting (securefile.Open): a FIFO
// planted in the workspace must not hang a call that needs no prompt.
func openRegular(p string) (*os.File, error) {
	f, fi, err := securefile.Open(p, 0)
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s does not exist", p)
	case fi != nil && fi.IsDir():
		return nil, fmt.Errorf("%s is a folder; use Glob to list it", p)
	case fi != nil:
		return nil, fmt.Errorf("%s is not a regular file: it is %s", p, securefile.Kind(fi.Mode()))
	}
	return nil, err
}

// displayName is how diffs name a file: relative inside the workspace.
func (ps toolPaths) displayName(real string) string {
	if WithinDir(real, ps.ws) && real != ps.ws {
		if rel, err := filepath.Rel(ps.ws, real); err == nil {
			return rel
		}
	}
	return strings.TrimPrefix(real, "/")
}

type writeTool struct {
	ps  toolPaths
	lim Limits
}

type writeArgs struct {
	FilePath string  `json:"file_path"`
	Content  *string `json:"content"`
}

func (t *writeTool) Spec() Spec {
	return Spec{
		Name: "Write",
		Description: "Write a file with the given content, replacing it if it exists and creating missing folders. " +
			"The write is atomic. Prefer Edit for changes to an existing file.",
		Schema: json.RawMessage(writeSchema),
		Risk:   RiskModify,
	}
}

func (t *writeTool) Target(args json.RawMessage) (Target, error) {
	var a writeArgs
	if err := decodeToolArgs(args, &a); err != nil {
		return Target{}, err
	}
	return t.ps.target(a.FilePath)
}

func (t *writeTool) Run(ctx context.Context, args json.RawMessage) Result {
	w, fail := t.plan(args)
	if fail != nil {
		return *fail
	}
	if ctx.Err() != nil {
		return errorResult("interrupted")
	}
	if err := os.MkdirAll(filepath.Dir(w.real), 0o755); err != nil {
		return errorResult("creating the folder: %v", err)
	}
	if err := replaceFile(w.real, []byte(w.content), newFileMode); err != nil {
		return errorResult("%v", err)
	}
	display := w.note
	if display == "" {
		display = unifiedDiff(t.ps.displayName(w.real), w.old, w.content)
	}
	verb := "Created"
	if w.existed {
		verb = "Wrote"
	}
	return Result{Content: fmt.Sprintf("%s %s (%d bytes)", verb, w.real, len(w.content)), Display: display}
}

// writePlan is what a Write call will do: the file, its content before
// (or a note on why it cannot be shown) and after.
type writePlan struct {
	real, old, content, note string
	existed                  bool
}

// plan works out a Write call without changing anything (Run and the
// permission prompt's preview).
func (t *writeTool) plan(args json.RawMessage) (writePlan, *Result) {
	var a writeArgs
	var w writePlan
	fail := func(r Result) (writePlan, *Result) { return w, &r }
	if err := decodeToolArgs(args, &a); err != nil {
		return fail(errorResult("%v", err))
	}
	if a.Content == nil {
		return fail(errorResult("content is required"))
	}
	real, _, err := t.ps.resolve(a.FilePath)
	if err != nil {
		return fail(errorResult("%v", err))
	}
	w.real, w.content = real, *a.Content
	switch fi, err := os.Stat(real); {
	case err == nil && fi.IsDir():
		return fail(errorResult("%s is a folder", real))
	case err == nil && !fi.Mode().IsRegular():
		return fail(errorResult("%s is not a regular file", real))
	case err == nil:
		w.existed = true
		data, err := securefile.ReadFile(real, t.lim.FileBytes)
		switch {
		case err != nil:
			w.note = fmt.Sprintf("(the previous content is not shown: %v)", err)
		case isBinary(data):
			w.note = "(a binary file was replaced)"
		default:
			w.old = string(data)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fail(errorResult("%v", err))
	}
	return w, nil
}

type editTool struct {
	ps  toolPaths
	lim Limits
}

type editArgs struct {
	FilePath   string  `json:"file_path"`
	OldString  *string `json:"old_string"`
	NewString  *string `json:"new_string"`
	ReplaceAll bool    `json:"replace_all"`
}

func (t *editTool) Spec() Spec {
	return Spec{
		Name: "Edit",
		Description: "Replace exact text in an existing file. old_string must match the file exactly, including " +
			"white space, and occur exactly once unless replace_all is set; include enough surrounding lines to make it unique.",
		Schema: json.RawMessage(editSchema),
		Risk:   RiskModify,
	}
}

func (t *editTool) Target(args json.RawMessage) (Target, error) {
	var a editArgs
	if err := decodeToolArgs(args, &a); err != nil {
		return Target{}, err
	}
	return t.ps.target(a.FilePath)
}

func (t *editTool) Run(ctx context.Context, args json.RawMessage) Result {
	e, fail := t.plan(args)
	if fail != nil {
		return *fail
	}
	if ctx.Err() != nil {
		return errorResult("interrupted")
	}
	if err := replaceFile(e.real, []byte(e.updated), newFileMode); err != nil {
		return errorResult("%v", err)
	}
	word := "occurrence"
	if e.n > 1 {
		word = "occurrences"
	}
	return Result{
		Content: fmt.Sprintf("Edited %s: replaced %d %s", e.real, e.n, word),
		Display: unifiedDiff(t.ps.displayName(e.real), e.text, e.updated),
	}
}

// editPlan is what an Edit call will do: the file, its text before and
// after, and how many occurrences change.
type editPlan struct {
	real, text, updated string
	n                   int
}

// plan works out an Edit call without changing anything (Run and the
// permission prompt's preview).
func (t *editTool) plan(args json.RawMessage) (editPlan, *Result) {
	var a editArgs
	var e editPlan
	fail := func(format string, args ...any) (editPlan, *Result) {
		r := errorResult(format, args...)
		return e, &r
	}
	if err := decodeToolArgs(args, &a); err != nil {
		return fail("%v", err)
	}
	if a.OldString == nil || a.NewString == nil {
		return fail("old_string and new_string are required")
	}
	oldS, newS := *a.OldString, *a.NewString
	if oldS == "" {
		return fail("old_string is empty; use Write to create or replace a whole file")
	}
	if oldS == newS {
		return fail("old_string and new_string are the same; there is nothing to change")
	}
	real, _, err := t.ps.resolve(a.FilePath)
	if err != nil {
		return fail("%v", err)
	}
	if !lstatExists(real) {
		return fail("%s does not exist; Edit changes existing files (use Write to create one)", real)
	}
	f, err := openRegular(real)
	if err != nil {
		return fail("%v", err)
	}
	f.Close()
	data, err := securefile.ReadFile(real, t.lim.FileBytes)
	if err != nil {
		return fail("%v", err)
	}
	if isBinary(data) {
		return fail("%s is a binary file; Edit changes text files only", real)
	}
	text := string(data)
	n := strings.Count(text, oldS)
	if n == 0 && strings.Contains(text, "\r\n") && strings.Contains(oldS, "\n") && !strings.Contains(oldS, "\r\n") {
		// Models write "\n"; a file with CRLF line endings keeps its own.
		crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
		if m := strings.Count(text, crlf(oldS)); m > 0 {
			oldS, newS, n = crlf(oldS), crlf(newS), m
		}
	}
	switch {
	case n == 0:
		return fail("old_string was not found in %s; it must match exactly, including white space and indentation (Read the file to see its current text)", real)
	case n > 1 && !a.ReplaceAll:
		return fail("old_string occurs %d times in %s; include more surrounding lines to make it unique, or set replace_all to replace every occurrence", n, real)
	}
	e.real, e.text, e.n = real, text, n
	if a.ReplaceAll {
		e.updated = strings.ReplaceAll(text, oldS, newS)
	} else {
		e.updated = strings.Replace(text, oldS, newS, 1)
	}
	return e, nil
}

func lstatExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
