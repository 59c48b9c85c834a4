package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"agent/internal/quote"
)

// MaxToolName is the tool-name budget: the strictest provider limit
// (docs/reference/mcp.md, "Tool naming").
const MaxToolName = 64

// sanitizeName replaces every character outside [A-Za-z0-9_-] with '_'
// (docs/reference/mcp.md, "Tool naming").
func sanitizeName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ModelToolName is the name the model sees for a server's tool:
// <server>__<tool>, each part sanitised; a name over 64 characters becomes
// head-HASH-tail of exactly 64, with the first 28 and last 26 characters
// and the first 8 hex digits of the SHA-256 of the full sanitised name
// (docs/reference/mcp.md, "Tool naming").
func ModelToolName(server, tool string) string {
	full := sanitizeName(server) + "__" + sanitizeName(tool)
	if len(full) <= MaxToolName {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	return full[:28] + "-" + hex.EncodeToString(sum[:])[:8] + "-" + full[len(full)-26:]
}

// ToolRef names one tool of one server.
type ToolRef struct {
	Server string
	Tool   string
}

// NamedTool is a tool with the name offered to the model.
type NamedTool struct {
	ToolRef
	Name string
}

// NameTools names every tool. Tools whose names still collide keep the name
// for the one whose original name ("server__tool") sorts first; the others
// are left out, each with a diagnostic (docs/reference/mcp.md, "Tool
// naming").
func NameTools(refs []ToolRef) ([]NamedTool, []string) {
	sorted := append([]ToolRef(nil), refs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		return sorted[i].Server+"__"+sorted[i].Tool < sorted[j].Server+"__"+sorted[j].Tool
	})
	taken := map[string]ToolRef{}
	var out []NamedTool
	var diags []string
	for _, r := range sorted {
		name := ModelToolName(r.Server, r.Tool)
		if first, dup := taken[name]; dup {
			diags = append(diags, fmt.Sprintf("tool %q of server %q left out: its name %s collides with tool %q of server %q",
				quote.V(r.Tool), quote.V(r.Server), name, quote.V(first.Tool), quote.V(first.Server)))
			continue
		}
		taken[name] = r
		out = append(out, NamedTool{ToolRef: r, Name: name})
	}
	return out, diags
}
