package mcp

import (
	"strings"
	"testing"
)

func TestModelToolName(t *testing.T) {
	cases := []struct {
		name               string
		server, tool, want string
	}{
		{"server and tool joined by a double underscore", "github", "create_issue", "github__create_issue"},
		{"spaces and dots become underscores", "my server", "do.thing", "my_server__do_thing"},
		{"a non-ASCII rune and a slash become one underscore each", "ü", "tool/x", "___tool_x"},
		{"dashes stay", "a-b", "c-d", "a-b__c-d"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ModelToolName(c.server, c.tool); got != c.want {
				t.Errorf("ModelToolName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
			}
		})
	}
	// Exactly at the budget: unchanged.
	at := ModelToolName("s", strings.Repeat("t", 61))
	if len(at) != 64 || strings.Contains(at[3:], "-") {
		t.Fatalf("at budget: %q", at)
	}
	// Over the budget: head-HASH-tail, exactly 64, stable.
	long := ModelToolName("server", strings.Repeat("x", 40)+strings.Repeat("y", 40))
	if len(long) != 64 || long[28] != '-' || long[37] != '-' || !strings.HasPrefix(long, "server__xxxx") || !strings.HasSuffix(long, strings.Repeat("y", 26)) {
		t.Fatalf("long: %q", long)
	}
	if long != ModelToolName("server", strings.Repeat("x", 40)+strings.Repeat("y", 40)) {
		t.Fatal("not stable")
	}
	// Two long names with the same head and tail differ by the hash.
	a := ModelToolName("server", strings.Repeat("x", 40)+"A"+strings.Repeat("y", 40))
	b := ModelToolName("server", strings.Repeat("x", 40)+"B"+strings.Repeat("y", 40))
	if a == b || len(a) != 64 {
		t.Fatalf("%q %q", a, b)
	}
}

func TestNameToolsCollisions(t *testing.T) {
	named, diags := NameTools([]ToolRef{
		{"srv", "a.b"}, {"srv", "a_b"}, {"srv", "a b"}, {"other", "x"},
	})
	names := map[string]ToolRef{}
	for _, n := range named {
		names[n.Name] = n.ToolRef
	}
	// "srv__a b" sorts before "srv__a.b" and "srv__a_b": it keeps the name.
	if got := names["srv__a_b"]; got.Tool != "a b" || len(named) != 2 || len(diags) != 2 {
		t.Fatalf("%+v %v", named, diags)
	}
	if !strings.Contains(diags[0], `tool "a.b" of server "srv" left out`) {
		t.Fatal(diags)
	}
}

func FuzzModelToolName(f *testing.F) {
	f.Add("github", "create_issue")
	f.Add(strings.Repeat("s", 50), strings.Repeat("é", 30))
	f.Fuzz(func(t *testing.T, server, tool string) {
		n := ModelToolName(server, tool)
		if len(n) > MaxToolName {
			t.Fatalf("%q longer than the budget", n)
		}
		for _, r := range n {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				t.Fatalf("%q holds %q", n, r)
			}
		}
	})
}
