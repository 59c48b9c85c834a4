package tools

import "agent/internal/securefile"

// replaceFile writes a file the way every tool that changes one does:
// atomically, keeping an existing file's mode (securefile.ReplaceFile).
// Tests replace it to make a write fail.
var replaceFile = securefile.ReplaceFile
