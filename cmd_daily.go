package main

import (
	"context"
	"os"
	"os/exec"

	"agent/agent"
	"agent/agent/tools"
	"agent/tui"
	"agent/tui/term"
)

// The terminal UI's hooks of the daily loop (docs/reference/runtime.md,
// "The todo list", "Checkpoints and /rewind"; docs/reference/keybindings.md:
// Ctrl+G).

// todos is the running session's todo list.
func (u *interactiveUI) todos() []tools.Todo {
	c, _ := u.live.get()
	if c == nil {
		return nil
	}
	return c.Session.Todos()
}

// checkpoints are the running session's checkpoints.
func (u *interactiveUI) checkpoints() []agent.Checkpoint {
	c, _ := u.live.get()
	if c == nil {
		return nil
	}
	return c.Session.Checkpoints()
}

// rewind restores the code, then forks the conversation and switches to
// the fork, as /rewind chose.
func (u *interactiveUI) rewind(ctx context.Context, req tui.RewindRequest) (tui.RewindResult, error) {
	c, _ := u.live.get()
	if c == nil {
		return tui.RewindResult{}, errNotStarted
	}
	var res tui.RewindResult
	if req.Code {
		rep, err := c.Session.RestoreCode(req.Checkpoint)
		if err != nil {
			return res, err
		}
		res.Report = rep.Text()
	}
	if req.Conversation {
		old := c.Session.ID()
		f, err := agent.ForkTranscript(u.e.home, old, c.Workspace, req.Checkpoint)
		if err != nil {
			return res, err
		}
		sw, err := u.replaceSession(ctx, f.ID)
		if err != nil {
			return res, err
		}
		res.Switched, res.Prompt, res.Old = &sw, f.Prompt, old
	}
	return res, nil
}

// runEditor gives the terminal to the editor of Ctrl+G: the UI's modes
// and raw mode off, the editor's stdio on the terminal, then both back.
func runEditor(tty *term.TTY, cmd *exec.Cmd) error {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	tty.Restore()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = f, f, f
	runErr := cmd.Run()
	if err := tty.Raw(); err != nil {
		return err
	}
	if err := tty.Enter(); err != nil {
		return err
	}
	return runErr
}
