package ignore

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

var configCases = []struct {
	name string
	in   string
	want string // section.subsection.key=value entries, "|"-separated
	err  string
}{
	{name: "plain", in: "[core]\n\texcludesFile = ~/.gitignore_global\n", want: "core..excludesfile=~/.gitignore_global"},
	{name: "section and key without case", in: "[CoRe]\nExcludesFile=x\n", want: "core..excludesfile=x"},
	{name: "subsection", in: "[remote \"Origin\"]\nurl = u\n", want: "remote.Origin.url=u"},
	{name: "subsection escapes", in: "[a \"x\\\"y\\\\z\"]\nk=v\n", want: "a.x\"y\\z.k=v"},
	{name: "old dotted subsection", in: "[Branch.Main]\nk=v\n", want: "branch.main.k=v"},
	{name: "comments", in: "# top\n; also\n[core] ; after a header\nk = v # after a value\n", want: "core..k=v"},
	{name: "quotes keep comment characters and spaces", in: "[core]\nk = \" a # b ; c \"\n", want: "core..k= a # b ; c "},
	{name: "inner spaces kept, outer cut", in: "[core]\nk =   a  b   \n", want: "core..k=a  b"},
	{name: "escapes", in: "[core]\nk = a\\tb\\nc\\\\d\\\"e\n", want: "core..k=a\tb\nc\\d\"e"},
	{name: "continuation", in: "[core]\nk = a\\\nb\nj = c\n", want: "core..k=ab|core..j=c"},
	{name: "key without value", in: "[core]\nbare\n", want: "core..bare"},
	{name: "variable on the header line", in: "[core] k = v\n", want: "core..k=v"},
	{name: "later wins is the caller's choice", in: "[core]\nk=1\n[core]\nk=2\n", want: "core..k=1|core..k=2"},
	{name: "CRLF", in: "[core]\r\nk = v\r\n", want: "core..k=v"},
	{name: "no final newline", in: "[core]\nk = v", want: "core..k=v"},
	{name: "byte order mark", in: "\xef\xbb\xbf[core]\nk=v\n", want: "core..k=v"},
	{name: "unknown escape", in: "[core]\nk = a\\qb\n", err: "line 2: an unknown escape \\q"},
	{name: "unclosed quote", in: "[core]\nk = \"a\n", err: "line 2: an unclosed quote"},
	{name: "variable before a section", in: "k = v\n", err: "line 1: a variable before any [section]"},
	{name: "unclosed header", in: "[core\nk=v\n", err: "line 1: a section header without ']'"},
	{name: "entries before an error are kept", in: "[core]\na=1\n=2\n", want: "core..a=1", err: "line 3: unexpected '='"},
}

func TestParseConfig(t *testing.T) {
	for _, tc := range configCases {
		t.Run(tc.name, func(t *testing.T) {
			es, err := ParseConfig([]byte(tc.in))
			var got []string
			for _, e := range es {
				s := e.Section + "." + e.Subsection + "." + e.Key
				if !e.NoValue {
					s += "=" + e.Value
				}
				got = append(got, s)
			}
			if strings.Join(got, "|") != tc.want {
				t.Errorf("entries %q, want %q", strings.Join(got, "|"), tc.want)
			}
			var ce *ConfigError
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.err != "" && (!errors.As(err, &ce) || err.Error() != tc.err):
				t.Errorf("error %v, want %s", err, tc.err)
			}
		})
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, tc := range configCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := ParseConfig(data)
		lines := strings.Count(string(data), "\n") + 1
		for _, e := range es {
			if e.Line < 1 || e.Line > lines || e.Section == "" || e.Section != strings.ToLower(e.Section) {
				t.Errorf("entry %+v", e)
			}
		}
		var ce *ConfigError
		if err != nil && (!errors.As(err, &ce) || ce.Line < 1 || ce.Line > lines) {
			t.Errorf("error %v (%d lines)", err, lines)
		}
		_ = fmt.Sprint(es)
	})
}
