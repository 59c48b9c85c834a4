package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"agent/agent"
)

// The checkpoints of a stored session, and rewinding it from the command
// line (docs/reference/cli.md, "Checkpoints"; docs/reference/runtime.md,
// "Checkpoints and /rewind"): what /rewind does in the terminal UI, for
// headless sessions.

func sessionCheckpointsCommand() *command {
	return &command{
		path:     "session checkpoints",
		synopsis: "ID",
		summary:  "list a stored session's checkpoints",
		help: `Prints one line per checkpoint of the stored session ID, oldest first: its number
(what 'agent session rewind' takes), its time, the files its turn changed with the
lines added and removed, and its prompt.`,
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) != 1 {
					return usagef("session checkpoints", "needs exactly one session ID")
				}
				cps, err := agent.StoredCheckpoints(e.home, args[0])
				if err != nil {
					return err
				}
				ws, _ := e.workspace()
				if len(cps) == 0 {
					fmt.Fprintf(e.err, "agent session checkpoints: the session %s has no checkpoints\n", args[0])
				}
				for _, cp := range cps {
					fmt.Fprintf(e.out, "%s\t%s\n", sanitizeLine(agent.CheckpointLine(cp, ws)), sanitizeLine(firstPromptLine(cp.Prompt)))
				}
				return nil
			}
		},
	}
}

func firstPromptLine(p string) string {
	first, _, more := strings.Cut(p, "\n")
	if more {
		first += " …"
	}
	return first
}

func sessionRewindCommand() *command {
	return &command{
		path:     "session rewind",
		synopsis: "ID CHECKPOINT [--code] [--conversation]",
		summary:  "restore a stored session's code or conversation to a checkpoint",
		help: `Rewinds the stored session ID to the state before CHECKPOINT's prompt (numbers
from 'agent session checkpoints ID'). --conversation (the default) forks the session:
a new session holds the conversation up to the checkpoint, and its id is printed;
the old one stays. --code writes back the files Write and Edit changed since, each
only where the file still has the content the session left; a file changed since
(by Bash, you or an editor) is a conflict, shown with a diff and never overwritten.
With both, the code is restored first. Exit 1 when a file could not be restored.`,
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			var code, conversation bool
			f.boolVar(&code, "code", "", "restore the files changed since the checkpoint")
			f.boolVar(&conversation, "conversation", "", "fork the conversation before the checkpoint (the default)")
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) != 2 {
					return usagef("session rewind", "needs a session ID and a CHECKPOINT number ('agent session checkpoints ID' lists them)")
				}
				n, err := strconv.Atoi(args[1])
				if err != nil || n < 1 {
					return usagef("session rewind", "CHECKPOINT must be a checkpoint's number, not %q", args[1])
				}
				if !code {
					conversation = true
				}
				return rewindStored(ctx, e, args[0], n, code, conversation)
			}
		},
	}
}

// rewindStored restores the code, then forks the conversation, as asked.
func rewindStored(ctx context.Context, e *env, id string, n int, code, conversation bool) error {
	ws, err := e.workspace()
	if err != nil {
		return err
	}
	failed := false
	if code {
		if err := refuseLive(ctx, e, id); err != nil {
			return err
		}
		rep, err := agent.RestoreStoredCode(e.home, id, ws, n)
		if err != nil {
			return err
		}
		fmt.Fprint(e.out, sanitizeText(rep.Text()))
		failed = !rep.OK()
	}
	if conversation {
		f, err := agent.ForkTranscript(e.home, id, ws, n)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.out, "Forked the session %s before checkpoint %d as %s; continue it with 'agent --resume %s'.\nThe checkpoint's prompt:\n%s\n",
			id, n, f.ID, f.ID, sanitizeText(f.Prompt))
	}
	if failed {
		fmt.Fprintln(e.err, "agent session rewind: some files were not restored (see above)")
		return &exitError{code: 1}
	}
	return nil
}

// refuseLive refuses to restore the code of a background session that
// runs: its next change would race the restore.
func refuseLive(ctx context.Context, e *env, id string) error {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := agent.ControlCall(cctx, agent.RunDir(e.home, os.LookupEnv), id, agent.ControlRequest{Op: "info"})
	if err != nil {
		return nil // no such background session (or none that answers): not running
	}
	return fmt.Errorf("the background session %s is running: stop it first ('agent session stop %s')", id, id)
}
