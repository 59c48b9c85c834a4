package prompt

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"agent/internal/securefile"
)

// Environment is what the environment block of the system prompt states
// (docs/reference/runtime.md, "The environment block"). The caller fills
// it from what it knows (the workspace, the model, the modes) and what
// DetectHost and TakeGitSnapshot found, so the block depends on nothing
// else.
type Environment struct {
	Workspace     string // the workspace's real path
	GitRepository bool   // whether the workspace is in a git repository
	// GitBranch is the branch (GitSnapshot.BranchText); "" when not
	// known.
	GitBranch      string
	Host           Host
	Date           time.Time // today; only the date in its location is shown
	Model          string    // the model id
	PermissionMode string
	SandboxMode    string // "": off
}

// Host is what DetectHost finds about the machine.
type Host struct {
	OS    string // "Linux 6.8.0 (Ubuntu 24.04 LTS)"; runtime.GOOS outside Linux
	Arch  string // runtime.GOARCH
	Shell string // $SHELL; "" when unset
}

// Block is the environment block: one "Name: value" line each, under a
// heading. A value that holds a control character (a workspace path with
// a line break) is quoted, so it cannot pose as another line.
func (e Environment) Block() string {
	git := "no"
	if e.GitRepository {
		git = "yes"
		if e.GitBranch != "" {
			git += ", branch " + oneLine(e.GitBranch)
		}
	}
	date := "unknown"
	if !e.Date.IsZero() {
		date = e.Date.Format("2006-01-02 (Monday)")
	}
	var b strings.Builder
	b.WriteString("# Environment\n\n")
	for _, kv := range [][2]string{
		{"Workspace", oneLine(e.Workspace)},
		{"Git repository", git},
		{"Operating system", orUnknown(e.Host.OS)},
		{"Architecture", orUnknown(e.Host.Arch)},
		{"Shell", orUnknown(e.Host.Shell)},
		{"Today's date", date},
		{"Model", orUnknown(e.Model)},
		{"Permission mode", orUnknown(e.PermissionMode)},
		{"Sandbox", orValue(e.SandboxMode, "off")},
	} {
		b.WriteString(kv[0] + ": " + kv[1] + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func orUnknown(s string) string { return orValue(s, "unknown") }

func orValue(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return oneLine(s)
}

// oneLine quotes s when it holds a control character or is not UTF-8.
func oneLine(s string) string {
	for _, r := range s {
		if r == unicode.ReplacementChar || unicode.IsControl(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// HostOptions configure DetectHost. The zero value reads the process's
// environment and the usual os-release files.
type HostOptions struct {
	LookupEnv func(string) (string, bool) // nil: os.LookupEnv
	// OSRelease are the os-release files tried in order on Linux; nil:
	// /etc/os-release, then /usr/lib/os-release.
	OSRelease []string
	// KernelRelease is the file that holds the kernel release on Linux
	// (what uname -r prints); "": /proc/sys/kernel/osrelease.
	KernelRelease string
}

// maxOSField bounds a value taken from os-release or the kernel release.
const maxOSField = 100

// DetectHost finds the operating system and its version (on Linux the
// kernel release and the distribution's PRETTY_NAME from os-release;
// elsewhere runtime.GOOS), the architecture and the shell. It never
// fails: what it cannot find is left out.
func DetectHost(opts HostOptions) Host {
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	h := Host{OS: runtime.GOOS, Arch: runtime.GOARCH}
	if sh, ok := lookup("SHELL"); ok {
		h.Shell = sh
	}
	if runtime.GOOS != "linux" {
		return h
	}
	h.OS = "Linux"
	kernel := opts.KernelRelease
	if kernel == "" {
		kernel = "/proc/sys/kernel/osrelease"
	}
	if data, err := securefile.ReadFile(kernel, 4096); err == nil {
		if v := cutField(strings.TrimSpace(string(data))); v != "" {
			h.OS += " " + v
		}
	}
	files := opts.OSRelease
	if files == nil {
		files = []string{"/etc/os-release", "/usr/lib/os-release"}
	}
	for _, f := range files {
		data, err := securefile.ReadFile(f, 64<<10)
		if err != nil {
			continue
		}
		if name := OSReleaseName(string(data)); name != "" {
			h.OS += " (" + name + ")"
		}
		break
	}
	return h
}

// OSReleaseName returns the distribution's name from an os-release file:
// PRETTY_NAME, else NAME and VERSION_ID; "" when it has neither. Values
// may be quoted with double quotes (backslash escapes) or single quotes;
// a value is cut to 100 bytes and control characters are dropped.
func OSReleaseName(data string) string {
	vals := map[string]string{}
	for _, line := range strings.Split(data, "\n") {
		line = strings.TrimSpace(line)
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		switch k {
		case "PRETTY_NAME", "NAME", "VERSION_ID":
			vals[k] = cutField(unquoteOSRelease(v))
		}
	}
	if v := vals["PRETTY_NAME"]; v != "" {
		return v
	}
	return strings.TrimSpace(vals["NAME"] + " " + vals["VERSION_ID"])
}

// unquoteOSRelease undoes the shell-like quoting of an os-release value.
func unquoteOSRelease(v string) string {
	switch {
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return v[1 : len(v)-1]
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		v = v[1 : len(v)-1]
		var b strings.Builder
		for i := 0; i < len(v); i++ {
			if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("\"\\$`", v[i+1]) >= 0 {
				i++
			}
			b.WriteByte(v[i])
		}
		return b.String()
	}
	return v
}

// cutField drops control characters and invalid UTF-8 and cuts s to
// maxOSField bytes on a character boundary.
func cutField(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	return strings.TrimSpace(cutBytes(s, maxOSField))
}

// cutBytes cuts s to at most n bytes on a character boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
