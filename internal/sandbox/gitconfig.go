package sandbox

import (
	"errors"
	"fmt"
	"strings"

	"agent/internal/ignore"
)

// The git configurations are read by internal/ignore's reader (the one
// the search tools use, compared with git itself); this file turns its
// entries into keys and judges which make git run a program
// (docs/sandbox.md, "Protected paths").

// gitKV is one variable: Key is section[.subsection].name with the
// section and name lower-cased, as git compares them.
type gitKV struct {
	Key, Value string
}

// maxGitConfig bounds what the reader takes (git's own config files are
// small; a huge one is suspicious and is treated as unreadable).
const maxGitConfig = 4 << 20

var errGitConfig = errors.New("git config")

// parseGitConfig reads a configuration; a file git would refuse is an
// error here too.
func parseGitConfig(data []byte) ([]gitKV, error) {
	if len(data) > maxGitConfig {
		return nil, fmt.Errorf("%w: over %d bytes", errGitConfig, maxGitConfig)
	}
	es, err := ignore.ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errGitConfig, err)
	}
	var out []gitKV
	for _, e := range es {
		key := e.Section
		if e.Subsection != "" {
			key += "." + e.Subsection
		}
		value := e.Value
		if e.NoValue {
			value = "true"
		}
		out = append(out, gitKV{Key: key + "." + e.Key, Value: value})
	}
	return out, nil
}

// splitGitKey splits a key into its lower-cased section, its subsection
// and its lower-cased name.
func splitGitKey(key string) (section, sub, name string) {
	first := strings.IndexByte(key, '.')
	last := strings.LastIndexByte(key, '.')
	if first < 0 {
		return key, "", ""
	}
	section, name = key[:first], key[last+1:]
	if last > first {
		sub = key[first+1 : last]
	}
	return section, sub, name
}

// runsProgram reports whether a configuration variable can make git run a
// program (or read more configuration that could): the keys a confined
// command may not set (docs/sandbox.md, "Protected paths").
func runsProgram(kv gitKV) bool {
	section, sub, name := splitGitKey(kv.Key)
	in := func(names ...string) bool {
		for _, n := range names {
			if name == n {
				return true
			}
		}
		return false
	}
	switch section {
	case "core":
		return in("hookspath", "fsmonitor", "sshcommand", "pager", "editor", "askpass", "gitproxy", "alternaterefscommand")
	case "credential", "include", "includeif", "filter", "pager", "protocol":
		return true
	case "diff":
		return sub != "" && in("textconv", "command") || sub == "" && name == "external"
	case "merge":
		return sub != "" && name == "driver"
	case "alias":
		return strings.HasPrefix(strings.TrimSpace(kv.Value), "!")
	case "submodule":
		return name == "update" && strings.HasPrefix(strings.TrimSpace(kv.Value), "!")
	case "sequence":
		return name == "editor"
	case "gpg":
		return name == "program"
	case "uploadpack":
		return name == "packobjectshook"
	case "remote":
		return in("uploadpack", "receivepack", "vcs")
	case "url":
		return in("insteadof", "pushinsteadof")
	case "difftool", "mergetool", "guitool", "man", "browser":
		return in("cmd", "path")
	case "interactive":
		return name == "difffilter"
	case "web":
		return name == "browser"
	case "trailer":
		return in("command", "cmd")
	case "sendemail":
		return in("smtpserver", "tocmd", "cccmd")
	case "imap":
		return name == "tunnel"
	}
	return false
}

// programKeys lists the variables of a configuration that run programs,
// in file order, as "key=value".
func programKeys(kvs []gitKV) []string {
	var out []string
	for _, kv := range kvs {
		if runsProgram(kv) {
			out = append(out, kv.Key+"="+kv.Value)
		}
	}
	return out
}
