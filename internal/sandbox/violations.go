package sandbox

import (
	"path/filepath"
	"strconv"
	"strings"
)

// Recognising what the sandbox refused, from what a command printed
// (docs/sandbox.md, "When something is refused"): the kernel says only
// "Permission denied" or "Operation not permitted", so the lines that say
// it are read for the path they name, and the path is judged against the
// policy: a denied path was a read, a path outside the writable ones a
// write. Network failures are recognised by the messages resolvers and
// clients print. What is recognised is named in one line of the tool
// result, so that the model can say why and ask for an escalation.

// policyView is what recognition judges paths against.
type policyView struct {
	mode    Mode
	network NetMode
	write   []string
	deny    []string
	home    string
	dir     string // the command's folder, for relative paths
}

// recogniseMax bounds how much output is read and how many refusals are
// named.
const (
	recogniseBytes = 256 << 10
	recogniseMax   = 4
)

var networkMarks = []string{
	"could not resolve host", "temporary failure in name resolution", "name or service not known",
	"network is unreachable", "socket: operation not permitted", "address family not supported",
	"dial tcp", "dial udp", "getaddrinfo", "failed to establish a new connection", "no address associated with hostname",
}

func recognise(out string, v policyView) []string {
	if len(out) > recogniseBytes {
		out = out[:recogniseBytes/2] + "\n" + out[len(out)-recogniseBytes/2:]
	}
	var found []string
	add := func(s string) {
		for _, f := range found {
			if f == s {
				return
			}
		}
		if len(found) < recogniseMax {
			found = append(found, s)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		low := strings.ToLower(line)
		if v.network == NetNone {
			for _, m := range networkMarks {
				if strings.Contains(low, m) {
					add("network access (network mode none)")
					break
				}
			}
		}
		denied := strings.Contains(low, "permission denied") || strings.Contains(low, "operation not permitted")
		readOnly := strings.Contains(low, "read-only file system")
		if !denied && !readOnly {
			continue
		}
		p := refusedPath(line, low, v)
		switch {
		case p == "":
			switch {
			case strings.Contains(low, "ptrace") || strings.Contains(low, "attach"):
				add("tracing another process")
			case strings.Contains(low, "kill") || strings.Contains(low, "signal"):
				add("signalling a process outside the sandbox")
			case strings.Contains(low, "socket") || strings.Contains(low, "connect"):
				if v.network == NetNone {
					add("network access (network mode none)")
				}
			}
		case readOnly:
			add("writing " + shortHome(p, v.home) + " (protected)")
		case withinAny(p, v.deny):
			add("reading " + shortHome(p, v.home) + " (a denied path)")
		case v.mode != FullAccess && !withinAny(p, v.write) && !strings.HasPrefix(p, "/dev/") && !strings.HasPrefix(p, "/proc/"):
			add("writing " + shortHome(p, v.home) + " (outside the writable folders)")
		case strings.HasPrefix(p, "/proc/") && !strings.HasPrefix(p, "/proc/self/") && !strings.HasPrefix(p, "/proc/thread-self/"):
			add("reading " + p + " (another process)")
		}
	}
	return found
}

// refusedPath finds the path a refusal names: in the part of the line
// just before the words of the error, a quoted path or the last word
// ("cat: /x: Permission denied", "sh: 1: cannot create /x: Permission
// denied", "touch: cannot touch '/x': Permission denied"), else the first
// path after them ("PermissionError: [Errno 13] Permission denied:
// '/x'"). A relative path is the command's folder's; a symbolic link on
// the way is followed, as the kernel did.
func refusedPath(line, low string, v policyView) string {
	at := len(line)
	for _, m := range []string{"permission denied", "operation not permitted", "read-only file system"} {
		if i := strings.Index(low, m); i >= 0 && i < at {
			at = i
		}
	}
	seg := strings.TrimRight(line[:at], ": \t")
	if i := strings.LastIndex(seg, ": "); i >= 0 {
		seg = seg[i+2:]
	}
	p := lastQuoted(seg)
	if p == "" {
		if f := strings.Fields(seg); len(f) > 0 {
			p = strings.Trim(f[len(f)-1], "'\"`")
		}
	}
	switch p {
	case "socket", "connect", "bind", "sendto", "sendmsg", "ptrace", "kill", "attach":
		return "" // a call, not a path: judged by the words of the line
	}
	if !plausibleName(p) {
		p, _ = pathIn(line[at:], v.home)
	}
	switch {
	case p == "":
		return ""
	case strings.HasPrefix(p, "~/") && v.home != "":
		p = v.home + p[1:]
	case !filepath.IsAbs(p) && v.dir != "":
		p = filepath.Join(v.dir, p)
	case !filepath.IsAbs(p):
		return ""
	}
	p = filepath.Clean(p)
	if strings.HasPrefix(p, "/proc/") {
		return p // /proc/self here is not the command's
	}
	if real, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		p = filepath.Join(real, filepath.Base(p))
	}
	return p
}

// plausibleName reports whether a word can be the file a message names:
// not a number, not a call's arguments ("[Errno 13]", "ptrace(…, 1)").
func plausibleName(w string) bool {
	if w == "" || strings.ContainsAny(w, "[](){}<>") {
		return false
	}
	_, err := strconv.Atoi(w)
	return err != nil
}

// lastQuoted is the last quoted text of s ('x', "x" or `x'), or "".
func lastQuoted(s string) string {
	for _, q := range []string{"'", "\"", "`"} {
		end := strings.LastIndex(s, q)
		if end <= 0 {
			continue
		}
		start := strings.LastIndexAny(s[:end], "'\"`")
		if start >= 0 && start < end-1 {
			return s[start+1 : end]
		}
	}
	return ""
}

// pathIn finds the first absolute (or home-relative) path a message
// names, bare or in quotes as many tools print it, and where it ends.
func pathIn(line, home string) (string, int) {
	for i := 0; i < len(line); i++ {
		c := line[i]
		start := i
		switch {
		case c == '/' && (i == 0 || strings.IndexByte(" \t'\"`(:=<>", line[i-1]) >= 0):
		case c == '~' && i+1 < len(line) && line[i+1] == '/' && (i == 0 || strings.IndexByte(" \t'\"`(:=", line[i-1]) >= 0):
		default:
			continue
		}
		j := i
		for j < len(line) && strings.IndexByte(" \t'\"`:,;)<>", line[j]) < 0 {
			j++
		}
		p := strings.TrimRight(line[start:j], ".")
		if p == "/" || p == "" {
			i = j
			continue
		}
		if strings.HasPrefix(p, "~/") {
			if home == "" {
				i = j
				continue
			}
			p = home + p[1:]
		}
		return p, j
	}
	return "", len(line)
}

func shortHome(p, home string) string {
	if home != "" && home != "/" && within(p, home) {
		return "~" + strings.TrimPrefix(p, home)
	}
	return p
}
