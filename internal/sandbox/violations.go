package sandbox

import (
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
		p := refusedPath(line, low, v.home)
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
		case strings.HasPrefix(p, "/proc/"):
			add("reading " + p + " (another process)")
		}
	}
	return found
}

// refusedPath finds the path a refusal names: the last one before the
// words of the error ("cat: /x: Permission denied", "sh: 1: cannot
// create /x: Permission denied"), else the first after them
// ("PermissionError: [Errno 13] Permission denied: '/x'").
func refusedPath(line, low, home string) string {
	at := len(line)
	for _, m := range []string{"permission denied", "operation not permitted", "read-only file system"} {
		if i := strings.Index(low, m); i >= 0 && i < at {
			at = i
		}
	}
	before := ""
	for rest, off := line[:at], 0; ; {
		p, end := pathIn(rest[off:], home)
		if p == "" {
			break
		}
		before, off = p, off+end
	}
	if before != "" {
		return before
	}
	p, _ := pathIn(line[at:], home)
	return p
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
