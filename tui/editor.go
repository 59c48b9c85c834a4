package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"agent/tui/keys"
)

// Ctrl+G opens the prompt in the user's editor, $VISUAL or else $EDITOR
// (docs/reference/keybindings.md, "Which context handles a key": a fixed
// key like Home and End): the UI stops reading the terminal and gives it
// to the editor, then takes the edited text as the prompt. An editor that
// is unset or fails is said, and the prompt is kept as it was.

// editorKey is Ctrl+G.
var editorKey = keys.Stroke{Key: 'g', Mod: keys.ModCtrl}

// maxEditedPrompt bounds what is read back from the editor.
const maxEditedPrompt = maxComposer

// editorCommand is the editor to run: $VISUAL, else $EDITOR.
func editorCommand() string {
	for _, name := range []string{"VISUAL", "EDITOR"} {
		if v := strings.TrimSpace(os.Getenv(name)); v != "" {
			return v
		}
	}
	return ""
}

// openEditor starts editing the composer's text in the editor.
func (s *state) openEditor() {
	if s.daily.editing {
		return
	}
	cmd := editorCommand()
	switch {
	case cmd == "":
		s.notice("No editor is set: set $VISUAL or $EDITOR to edit the prompt with Ctrl+G. The prompt is kept.")
		return
	case s.editPrompt == nil:
		s.notice("The editor cannot be opened here. The prompt is kept.")
		return
	}
	s.daily.editing = true
	s.ac = nil
	s.editPrompt(cmd, s.comp.text())
}

// editDone takes the editor's text, or says why there is none.
func (s *state) editDone(text string, err error) {
	s.daily.editing = false
	s.dirty = true
	if err != nil {
		s.notice("The editor failed: " + err.Error() + ". The prompt is kept.")
		return
	}
	s.comp.set(strings.TrimRight(text, "\n"))
	s.composerChanged()
}

// editPrompt runs the editor on a temporary file holding text: input
// reading pauses (so that the keys go to the editor), the terminal is
// handed over by Options.Editor, and when the editor ends the screen is
// drawn again whole.
func (a *App) editPrompt(command, text string) {
	a.cmdWG.Add(1)
	go func() {
		defer a.cmdWG.Done()
		edited, err := a.runEditor(command, text)
		a.post(func() {
			a.resumeInput()
			a.renderer.Invalidate()
			if a.st.kitty && a.opts.EnableKitty != nil {
				a.opts.EnableKitty(1) // the terminal was given back without it
			}
			a.st.editDone(edited, err)
		})
	}()
}

func (a *App) runEditor(command, text string) (string, error) {
	f, err := os.CreateTemp("", "agent-prompt-*.md")
	if err != nil {
		return "", err
	}
	path := f.Name()
	defer os.Remove(path)
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	a.pauseInput()
	// The command may hold arguments ("code --wait"): the shell splits it,
	// and the file is its last argument.
	cmd := exec.CommandContext(a.cmdCtx, "/bin/sh", "-c", command+` "$1"`, "editor", path)
	run := a.opts.Editor
	if run == nil {
		run = func(_ context.Context, c *exec.Cmd) error { return c.Run() }
	}
	if err := run(a.cmdCtx, cmd); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("%s exited with status %d", command, ee.ExitCode())
		}
		return "", fmt.Errorf("%s: %w", command, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if len(b) > maxEditedPrompt {
		return "", fmt.Errorf("the edited prompt is over %d bytes", maxEditedPrompt)
	}
	return string(b), nil
}

// pauseInput stops the input goroutine before its next read and waits
// until it has (at most a second: a reader that ended does not answer).
func (a *App) pauseInput() {
	a.inPaused.Store(true)
	a.opts.Terminal.SetReadDeadline(time.Unix(1, 0))
	select {
	case <-a.inParked:
	case <-time.After(time.Second):
	case <-a.cmdCtx.Done():
	}
}

// resumeInput lets the input goroutine read again.
func (a *App) resumeInput() {
	if a.inPaused.CompareAndSwap(true, false) {
		select {
		case a.inResume <- struct{}{}:
		default:
		}
	}
}

// inputPaused parks the input goroutine while the editor has the
// terminal; it reports whether it parked.
func (a *App) inputPaused() bool {
	if !a.inPaused.Load() {
		return false
	}
	select {
	case a.inParked <- struct{}{}:
	default:
	}
	for a.inPaused.Load() {
		select {
		case <-a.inResume:
		case <-a.cmdCtx.Done():
			return true
		case <-time.After(100 * time.Millisecond):
		}
	}
	return true
}
