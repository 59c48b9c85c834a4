package sandbox

import (
	"agent/internal/sandbox/confine"
	"path/filepath"
	"strings"

	"agent/internal/redact"
)

// What a confined command's environment loses (docs/sandbox.md, "The
// environment"): credential-shaped variables (the rule of
// docs/reference/settings.md, "Templates"), the names the caller adds
// (the providers' keys), the agent's sockets and tunnels, and the proxy
// variables; and the agent's own marks.
var scrubbed = map[string]bool{
	"SSH_AUTH_SOCK": true, "DBUS_SESSION_BUS_ADDRESS": true, "DOCKER_HOST": true,
	"HTTP_PROXY": true, "HTTPS_PROXY": true, "FTP_PROXY": true, "ALL_PROXY": true, "NO_PROXY": true,
	"GIT_ASKPASS": true, "SSH_ASKPASS": true,
	confine.EnvVar: true, "AGENT_CLEANUP_CHILD": true, "AGENT_SANDBOX_TEST_CAP": true,
}

// ScrubEnv returns env without what a confined command must not inherit;
// extra names more (matched exactly, as given).
func ScrubEnv(env, extra []string) []string {
	drop := map[string]bool{}
	for _, n := range extra {
		drop[n] = true
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || drop[name] || scrubbed[strings.ToUpper(name)] || redact.IsCredentialName(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// privateVars are the variables that point a command at the private
// folders: its temporary folder and the build caches, so that it cannot
// poison the user's shared caches.
func privateVars(tmp, cache string) []string {
	return []string{
		"TMPDIR=" + tmp,
		"GOCACHE=" + filepath.Join(cache, "go-build"),
		"XDG_CACHE_HOME=" + filepath.Join(cache, "xdg"),
		"npm_config_cache=" + filepath.Join(cache, "npm"),
		"PIP_CACHE_DIR=" + filepath.Join(cache, "pip"),
	}
}

// setVars replaces or adds KEY=VALUE entries.
func setVars(env []string, vars []string) []string {
	names := map[string]bool{}
	for _, v := range vars {
		n, _, _ := strings.Cut(v, "=")
		names[n] = true
	}
	out := make([]string, 0, len(env)+len(vars))
	for _, kv := range env {
		n, _, _ := strings.Cut(kv, "=")
		if !names[n] {
			out = append(out, kv)
		}
	}
	return append(out, vars...)
}
