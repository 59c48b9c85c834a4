package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"agent/internal/quote"
	"agent/internal/securefile"
	"agent/tui/keymap"
	"agent/tui/keys"
)

// keybindingsCheckCommand validates a keybindings overrides file
// (docs/reference/cli.md, "Keybindings check";
// docs/reference/keybindings.md).
func keybindingsCheckCommand() *command {
	return &command{
		path:     "keybindings check",
		synopsis: "[FILE]",
		summary:  "validate a keybindings file (default ~/.agent/keybindings.json)",
		help: `Checks every rule of the keybindings overrides file and prints "ok: FILE" when
it is valid. Otherwise prints one line per problem on stderr, as
"FILE: JSONPATH: message", and exits 1. Warnings print as
"FILE: JSONPATH: warning: message" and do not change the exit code.
Without FILE, a missing ~/.agent/keybindings.json means the defaults are in use.`,
		build: func(f *flagSet) func(context.Context, *env, []string) error {
			return func(_ context.Context, e *env, args []string) error {
				if len(args) > 1 {
					return usagef("keybindings check", "unexpected argument %q (at most one FILE)", quote.V(args[1]))
				}
				name, explicit := keymap.Path(e.home), len(args) == 1
				if explicit {
					name = args[0]
				}
				path := name
				if !filepath.IsAbs(path) {
					path = filepath.Join(e.cwd, path)
				}
				data, err := securefile.ReadFile(path, keys.MaxFileSize)
				switch {
				case errors.Is(err, fs.ErrNotExist) && !explicit:
					fmt.Fprintln(e.out, "ok: no overrides (defaults in use)")
					return nil
				case errors.Is(err, fs.ErrNotExist):
					return fmt.Errorf("%s: no such file", quote.Cut(name))
				case errors.Is(err, securefile.ErrTooLarge):
					return fmt.Errorf("%s: larger than %d bytes: not a keybindings file", quote.Cut(name), keys.MaxFileSize)
				case err != nil:
					// Name the file as the user gave it, once.
					msg := err.Error()
					var pe *fs.PathError
					if errors.As(err, &pe) {
						msg = pe.Err.Error()
					}
					return fmt.Errorf("cannot read %s: %s", quote.Cut(name), quote.Cut(strings.TrimPrefix(msg, path+": ")))
				}
				_, problems := keys.ParseFile(data)
				for _, p := range problems {
					fmt.Fprintln(e.err, p.Format(name))
				}
				if keys.HasErrors(problems) {
					return &exitError{code: 1}
				}
				fmt.Fprintf(e.out, "ok: %s\n", name)
				return nil
			}
		},
	}
}
